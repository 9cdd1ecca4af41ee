"""Wrapper removal rules on data-driven cases (``fixtures/guard/unwrap.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.guard.wrappers import PREAMBLE_PATTERNS, tidy_lines, unwrap

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "guard"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "unwrap.json").read_text("utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    text, removed = unwrap(case["reply"], case["block"], list_item=case.get("list_item", False))
    assert text == case["text"]
    assert list(removed) == case["removed"]


@pytest.mark.parametrize(
    "line",
    [
        "Here is the refined paragraph:",
        "Here's the improved version:",
        "Sure! Here is a revised version of the text:",
        "Certainly, here is the polished list item:",
        "Refined text:",
        "Revised paragraph:",
        "The improved version of the paragraph:",
        "Output:",
        "以下是润色后的段落\uff1a",
        "以下は推敲した段落です\uff1a",
        "다음은 수정된 문단입니다:",
    ],
)
def test_preamble_patterns_match_their_examples(line: str) -> None:
    assert any(p.fullmatch(line) for p in PREAMBLE_PATTERNS)


@pytest.mark.parametrize(
    "line",
    [
        "Here are three reasons:",
        "Here, the market grew:",
        "The result was clear:",
        "Note:",
        "The following table lists the results:",
    ],
)
def test_preamble_patterns_leave_ordinary_lines(line: str) -> None:
    assert not any(p.fullmatch(line) for p in PREAMBLE_PATTERNS)


def test_tidy_lines() -> None:
    assert tidy_lines("\n\n  a  \r\n\tb\r\rc  \n\n") == "a\nb\n\nc"
    assert tidy_lines("line with hard break  \nnext") == "line with hard break\nnext"
