"""Which blocks the parser marks as never sent, and why (``blocks.SkipReason``)."""

from __future__ import annotations

import pytest

from owlai_refine.blocks import SkipReason
from owlai_refine.parser import parse


@pytest.mark.parametrize(
    "paragraph",
    [
        "[3]",
        "[1, 2] [4-6] [7\u20148]",
        "\u30104\u2020source\u3011",
        "\u30104:1\u2020source\u3011",
        "[^2]",
        "https://example.com/a",
        "ftp://x.y/z",
        "WWW.EXAMPLE.COM",
        "[Reuters](https://www.reuters.com/x) [1]",
        "`ML-KEM` $x^2$ <br>",
    ],
)
def test_a_paragraph_of_markers_only_is_not_sent(paragraph: str) -> None:
    doc = parse(f"# Title\n\n{paragraph}\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.NOTHING_TO_REFINE]


@pytest.mark.parametrize(
    "paragraph",
    [
        "See [3].",
        "\u30104\u2020source\u3011 says so",
        "Prices at https://example.com/a rose.",
        "\u4ef7\u683c [1]",
    ],
)
def test_a_paragraph_with_prose_is_sent(paragraph: str) -> None:
    doc = parse(f"# Title\n\n{paragraph}\n")
    assert [b.skip for b in doc.blocks] == [None]


def test_prose_under_a_references_heading_is_not_sent() -> None:
    doc = parse("# References\n\nSmith, J. (2024). A study. https://example.com/a\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.REFERENCES]
