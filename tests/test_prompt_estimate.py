"""The token estimate: its definition, on any text (Hypothesis), and on fixed examples."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.pipeline.prompt import estimate_tokens


def by_definition(text: str) -> int:
    """3.5 ASCII characters per token, 2.5 tokens per other character, rounded up."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return math.ceil(ascii_chars / 3.5 + (len(text) - ascii_chars) * 2.5)


@given(st.text())
def test_the_estimate_follows_its_definition_on_any_text(text: str) -> None:
    assert estimate_tokens(text) == by_definition(text)


def test_fixed_examples() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdefg") == 2  # 7 ASCII characters
    assert estimate_tokens("市场") == 5  # 2 CJK characters
    assert estimate_tokens("a\ud800\x7f\x80") == 6  # lone surrogate and U+0080 are not ASCII
