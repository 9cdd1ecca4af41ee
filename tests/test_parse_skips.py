"""Which blocks the parser marks as never sent, and why (``blocks.SkipReason``)."""

from __future__ import annotations

import pytest

from owlai_refine.blocks import SkipReason
from owlai_refine.pipeline.parse import parse


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
        "[the docs at <https://b.org> here](https://b.org/docs)",  # an autolink inside a link
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
        "[<https://b.org>](https://b.org) is the project's home page.",
    ],
)
def test_a_paragraph_with_prose_is_sent(paragraph: str) -> None:
    doc = parse(f"# Title\n\n{paragraph}\n")
    assert [b.skip for b in doc.blocks] == [None]


def test_prose_under_a_references_heading_is_not_sent() -> None:
    doc = parse("# References\n\nSmith, J. (2024). A study. https://example.com/a\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.REFERENCES]


@pytest.mark.parametrize(
    "block",
    [
        "**Key Principles:**",
        "**\u6838\u5fc3\u601d\u60f3\uff1a**",
        "- **Key Features:**\n  - Sub point one is here.",
        "*Notes:*",
        "**For Investors**:",
    ],
)
def test_a_label_alone_is_not_sent(block: str) -> None:
    doc = parse(f"# Title\n\n{block}\n")
    assert doc.blocks[0].skip is SkipReason.LABEL


@pytest.mark.parametrize(
    "item",
    [
        "- Start Date: 2024-09-10",
        "- **Research Date:** 2026-02-01",
        "- **Research Time**: 3060.61 seconds",
        "* Main Model: gpt-4o-mini",
        "- License: MIT",
        "- Stars: 19,531",
        "- AWS Case Study: https://aws.amazon.com/solutions/case-studies/x/",
        "Feature Name: N/A",
    ],
)
def test_a_metadata_item_is_not_sent(item: str) -> None:
    doc = parse(f"# Title\n\n{item}\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.METADATA]


@pytest.mark.parametrize(
    "block",
    [
        "- Enterprise tier: Custom limits with dedicated support",
        "- Note: the market grew fast in 2024.",
        "**Key point:** the market grew fast.",
        "**\u5b9a\u4e49:** \u91cf\u5b50\u667a\u80fd\u4f53\u662f\u611f\u77e5\u3001\u5904\u7406\u3001"
        "\u884c\u52a8\u8de8\u8d8a\u7ecf\u5178\u548c\u91cf\u5b50\u7ef4\u5ea6\u7684\u81ea\u4e3b\u7cfb\u7edf\u3002",
        "**Important** results were found:",
        "Start Date: 2024-09-10\nand then the work began in earnest.",
    ],
)
def test_labels_with_prose_are_sent(block: str) -> None:
    doc = parse(f"# Title\n\n{block}\n")
    assert doc.blocks[0].skip is None
