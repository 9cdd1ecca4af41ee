"""``verify.changed_outside_blocks``: the splice's promise checked after the fact."""

from __future__ import annotations

from collections import Counter

import pytest

from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.splice import splice
from owlai_refine.pipeline.verify import changed_outside_blocks, token_drift

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


def test_an_unknown_block_id_is_a_key_error() -> None:
    doc = parse(SOURCE)
    with pytest.raises(KeyError, match=f"no block {len(doc.blocks)}"):
        splice(doc, {len(doc.blocks): "x"})
    with pytest.raises(KeyError):
        splice(doc, {-1: "x"})


def test_token_drift_names_what_was_lost_and_added() -> None:
    source = "See [1] and [2] at https://a.example/x with `code`.\n"
    output = "See [1] and [1] at https://b.example/y with `code`.\n"
    drift = token_drift(source, output)
    assert set(drift) == {"citation", "url"}
    lost, added = drift["citation"]
    assert lost == Counter({"[2]": 1}) and added == Counter({"[1]": 1})
    lost, added = drift["url"]
    assert sum(lost.values()) == 1 and sum(added.values()) == 1 and lost != added
    assert token_drift(source, source) == {}
    assert set(token_drift(source, output, kinds=("url",))) == {"url"}
