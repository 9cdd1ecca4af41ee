"""``verify.changed_outside_blocks``: the splice's promise checked after the fact."""

from __future__ import annotations

import pytest

from owlai_refine.parser import parse
from owlai_refine.splicer import splice
from owlai_refine.verify import changed_outside_blocks

SOURCE = "# Title\r\n\r\nFirst paragraph.\r\n\r\n- item one\r\n- item two\r\n"


@pytest.mark.parametrize(
    "new_text",
    ["Hi there.", "Hi there.\n", "Hi there.\r\n", "Two\nlines.", "Two\r\nlines\rand three."],
)
def test_a_clean_splice_changes_nothing_outside_its_block(new_text: str) -> None:
    doc = parse(SOURCE)
    first = doc.sendable[0].id
    replacements = {first: new_text}
    assert changed_outside_blocks(doc, replacements, splice(doc, replacements)) == []


def test_a_changed_line_outside_the_blocks_is_named() -> None:
    doc = parse(SOURCE)
    first = doc.sendable[0].id
    output = splice(doc, {first: "Hi there."}).replace("# Title", "# Titel")
    assert changed_outside_blocks(doc, {first: "Hi there."}, output) == [0]


def test_a_lost_bom_is_line_0() -> None:
    doc = parse("\ufeff" + SOURCE)
    assert changed_outside_blocks(doc, {}, SOURCE) == [0]
