"""check_reply on data-driven cases (``fixtures/guard/check_reply.json``), one rule at a time,
and the shape of its results."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.blocks import Block
from owlai_refine.config import GuardConfig
from owlai_refine.guard import MAX_REASONS, check_reply, problems

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "guard"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "check_reply.json").read_text("utf-8"))
CONFIG = GuardConfig()


def block_for(text: str, kind: str) -> Block:
    """The one block of a document holding ``text`` as a paragraph or a bullet item."""
    from owlai_refine.pipeline.parse import parse  # noqa: PLC0415 - keeps the fixtures' imports tidy

    source = "- " + text.replace("\n", "\n  ") if kind == "list_item" else text
    (block,) = parse(source).blocks
    if text.startswith("[!") and block.text == text.partition("\n")[2]:
        # the parser keeps an alert's marker line out of its block; the guard still has to
        # judge a block that holds one (a marker with a title on its line stays in the block)
        return replace(block, start=0, prefixes=("",) * (text.count("\n") + 1), text=text)
    assert block.text == text
    return block


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    verdict = check_reply(block_for(case["block"], case["kind"]), case["reply"], CONFIG)
    status = "rejected" if verdict.text is None else "unchanged" if verdict.unchanged else "refined"
    assert status == case["status"]
    assert [str(r) for r in verdict.reasons] == case.get("reasons", [])
    if status == "refined":
        assert verdict.text == case["text"]


def test_reasons_are_capped() -> None:
    block = "Figures: " + ", ".join(f"{n}%" for n in range(1, 30)) + "."
    found = problems(block, "Figures: none.", CONFIG)
    assert len(found) == MAX_REASONS
    # 31 reasons (29 lost numbers, "too short" and the negator "none" brought in): 11 shown,
    # then the count of the other 20
    assert found[-1].group == "and more"
    assert found[-1].detail == str(31 - MAX_REASONS + 1)


def test_language_check_can_be_turned_off() -> None:
    block = block_for("양자 컴퓨터는 RSA와 ECC 암호를 위협합니다.", "paragraph")
    reply = "Quantum computers threaten RSA and ECC encryption."
    assert check_reply(block, reply, CONFIG).text is None
    assert check_reply(block, reply, GuardConfig(check_language=False)).text == reply


def test_length_bounds_follow_the_config() -> None:
    block = block_for("Costs fell in 2024.", "paragraph")
    reply = "The costs fell during 2024."
    assert check_reply(block, reply, CONFIG).text == reply
    strict = GuardConfig(max_length_ratio=1.2)
    assert [str(r) for r in check_reply(block, reply, strict).reasons] == ["too long: 1.42x"]


@pytest.mark.parametrize(
    ("reply", "text", "group"),
    [
        ("Costs fell in 2024.", "lost citation [4]", "lost citation"),
        ("Costs fell in 2024 [4].\n\n# Costs", "structure: heading", "structure"),
        ("Costs fell.", "too short: 0.48x", "too short"),
        (
            "Costs fell sharply in 2024 [4].",
            'changed degree: intensifier ∅ -> "sharply"',
            "changed degree",
        ),
    ],
)
def test_a_reason_has_a_group_and_a_text(reply: str, text: str, group: str) -> None:
    reasons = check_reply(block_for("Costs fell in 2024 [4].", "paragraph"), reply, CONFIG).reasons
    assert any(str(r) == text and r.group == group for r in reasons), reasons
