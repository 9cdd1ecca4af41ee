"""Protected inline tokens (``fixtures/guard/tokens.json``) and how their differences are named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.guard.tokens import compare_tokens, protected_tokens

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "guard"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "tokens.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_tokens(case: dict[str, Any]) -> None:
    found = protected_tokens(case["text"])
    tokens = sorted([kind, form] for (kind, _key), forms in found.shown.items() for form in forms)
    assert tokens == case["tokens"]
    escaped = sorted([kind, written] for (kind, _key), written in found.escaped.items())
    assert escaped == case.get("escaped", [])


def _diff(block: str, reply: str) -> list[str]:
    return [str(r) for r in compare_tokens(protected_tokens(block), protected_tokens(reply))]


@pytest.mark.parametrize(
    ("block", "reply"),
    [
        ("Prices [1, 2] and [3-5].", "Prices [1,2] and [3\u20135]."),
        ("It needs 22.7GiB (39812 tokens).", "It needs 22.7 GiB, or 39,812 tokens."),
        ("See [NIST](https://www.nist.gov/pqc).", "See [the NIST site](https://www.nist.gov/pqc)."),
        ("See [NIST](https://www.nist.gov/pqc).", "See https://www.nist.gov/pqc (NIST)."),
        ("Costs $749.99 and $1,999.99.", "It costs $749.99 and $1,999.99."),
    ],
)
def test_formatting_is_not_a_difference(block: str, reply: str) -> None:
    assert _diff(block, reply) == []


def test_changes_are_paired_in_order_and_counted() -> None:
    assert _diff("A [1] B [2] C [3].", "A [4] B [5] C [3] D [9] [9].") == [
        "changed citation [1] -> [4]",
        "changed citation [2] -> [5]",
        "added citation [9] x2",
    ]


def test_the_lost_occurrence_is_named() -> None:
    assert _diff("**A:** x and **B** y.", "**A:** x and B y.") == ["lost bold **B**"]
    assert _diff("Costs 5% then 7%.", "Costs 7%.") == ["lost number 5%"]


def test_escaped_markers_are_named_as_escaped() -> None:
    assert _diff("RSA[^2] and ECC [3].", "RSA\\[^2\\] and ECC \\[3\\].") == [
        "escaped citation \\[3\\]",
        "escaped footnote \\[^2\\]",
    ]


def test_long_tokens_are_shortened_in_reasons() -> None:
    url = "https://example.org/" + "a" * 200
    (reason,) = _diff(f"See {url} now.", "See it now.")
    assert reason.startswith("lost url https://example.org/aaa")
    assert reason.endswith("\u2026")
    assert len(reason) == len("lost url ") + 120


def test_names_are_kept_in_any_case_and_number() -> None:
    block = "DLSS and AI upscaling on NVIDIA GPUs; see GroqCloud and the RTX 5090."
    assert (
        _diff(block, "Nvidia GPU upscaling with DLSS and AI; see Groqcloud and the RTX 5090.") == []
    )
    assert _diff(block, "AI upscaling on NVIDIA GPUs; see GroqCloud and the RTX 5090.") == [
        "lost name DLSS"
    ]
    assert _diff("Prices in 2024.", "NIST prices in 2024.") == []  # new names are not reported


def test_units_and_urls_are_not_names() -> None:
    found = protected_tokens("It needs 22.7 GiB, see https://NIST.gov/PQC and `ML-KEM`.")
    assert found.names == {}
