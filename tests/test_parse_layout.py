"""What the parser reads besides a block's text, where mutants of the parser once survived the
suite: block kinds, container prefixes, heading paths, the front matter title, custom reference
headings, pseudo headings and links. Each expectation is written out by hand from the Markdown."""

from __future__ import annotations

import pytest

from owlai_refine.blocks import BlockKind, SkipReason
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.splice import splice


def test_a_list_item_in_a_quote_keeps_the_quote_marker_on_new_lines() -> None:
    doc = parse("> - item one\n>   continues here\n")
    (block,) = doc.blocks
    assert block.kind is BlockKind.LIST_ITEM
    assert block.prefixes == ("> - ", ">   ") and block.continuation_prefix == ">   "
    assert splice(doc, {0: "a\nb\nc"}) == "> - a\n>   b\n>   c\n"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("> A one-line quote.\n", "> a\n> b\n"),
        ("> - a quoted item\n", "> - a\n>   b\n"),
        ("- x\n\n  > a quote in an item\n", "- x\n\n  > a\n  > b\n"),
    ],
)
def test_a_one_line_quote_keeps_its_marker_on_new_lines(source: str, expected: str) -> None:
    """Rewritten onto two lines, the new line is still written inside the quote (not left as a
    lazy continuation line)."""
    doc = parse(source)
    assert splice(doc, {len(doc.blocks) - 1: "a\nb"}) == expected


@pytest.mark.parametrize(
    ("source", "new", "expected"),
    [
        ("-\n  foo bar\n", "a\nb", "-\n  a\n  b\n"),
        ("1.\n   foo bar\n", "a\nb", "1.\n   a\n   b\n"),
        ("- x\n-\n  foo bar\n", "a\nb", "- x\n-\n  a\n  b\n"),
    ],
)
def test_an_item_whose_marker_line_is_empty(source: str, new: str, expected: str) -> None:
    doc = parse(source)
    block = doc.blocks[-1]
    assert block.kind is BlockKind.LIST_ITEM and block.skip is None
    assert block.text == "foo bar"
    assert splice(doc, {block.id: new}) == expected


def test_only_an_items_first_paragraph_is_the_list_item() -> None:
    doc = parse("- first para\n\n  second para\n- next item\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        (BlockKind.LIST_ITEM, "first para"),
        (BlockKind.PARAGRAPH, "second para"),
        (BlockKind.LIST_ITEM, "next item"),
    ]
    assert doc.blocks[1].prefixes == ("  ",)


def test_heading_paths_follow_siblings_and_parents() -> None:
    doc = parse("# A\n\n## B\n\none\n\n## C\n\ntwo\n\n### D\n\nthree\n\n# E\n\nfour\n")
    assert [b.heading_path for b in doc.blocks] == [
        ("A", "B"),
        ("A", "C"),
        ("A", "C", "D"),
        ("E",),
    ]


def test_the_front_matter_title() -> None:
    doc = parse("---\ntitle: My Report\nauthor: x\n---\n\n# H\n\nText here.\n")
    assert doc.title == "My Report"
    assert parse("# H\n\nText here.\n").title == "H"  # without front matter: the first heading


def test_custom_reference_headings_replace_the_defaults() -> None:
    text = "# Bibliograf\u00eda\n\nSmith, J. A study.\n\n# References\n\nJones, K. Another.\n"
    assert [b.skip for b in parse(text).blocks] == [None, SkipReason.REFERENCES]
    custom = parse(text, reference_headings=["1. **Bibliograf\u00eda**:"])
    assert [b.skip for b in custom.blocks] == [SkipReason.REFERENCES, None]


@pytest.mark.parametrize(
    ("label", "skip"),
    [
        ("**Sources:**", SkipReason.LABEL),
        ("**References**", SkipReason.NOTHING_TO_REFINE),
        ("**\ucc38\uace0\ubb38\ud5cc**", SkipReason.NOTHING_TO_REFINE),
        ("*Sources*", SkipReason.NOTHING_TO_REFINE),
    ],
)
def test_a_bold_or_italic_references_label_starts_the_section(label: str, skip: SkipReason) -> None:
    doc = parse(f"# R\n\nThe report says things.\n\n{label}\n\nSmith, J. (2024). A study.\n")
    assert [b.skip for b in doc.blocks] == [None, skip, SkipReason.REFERENCES]


@pytest.mark.parametrize(
    "paragraph",
    [
        "[Reuters](https://www.reuters.com/x) reports that prices rose.",
        "See [the report](https://example.com/a) and [1] for the rest of it.",
    ],
)
def test_prose_after_a_link_is_prose(paragraph: str) -> None:
    assert parse(f"# T\n\n{paragraph}\n").blocks[0].skip is None


def test_an_unsupported_layout_keeps_one_empty_prefix_per_line() -> None:
    source = "-   \n  foo bar\n  baz\n"
    doc = parse(source)
    (block,) = doc.blocks
    assert block.skip is SkipReason.LAYOUT
    assert block.prefixes == ("", "") and block.continuation_prefix == ""
    assert splice(doc, {0: block.text}) == source
