"""GitHub alerts (``> [!NOTE]``): the marker line is structure, never part of a block's text, so
it is never sent, and a reply cannot move or drop it."""

from __future__ import annotations

import pytest

from owlai_refine.blocks import SkipReason
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.splice import splice

ALERTS = [
    "> [!NOTE]\n> Useful information that users should know.\n",
    "> [!IMPORTANT]\r\n> We will ship in May.\r\n> The team agrees.\r\n",
    "- item\n\n  > [!WARNING]\n  > Never do this.\n",
    "> [!tip] \n> Lower case and a trailing space.\n",
    "> > [!CAUTION]\n> > Nested quote text.\n",
]


@pytest.mark.parametrize("source", ALERTS)
def test_the_marker_line_is_not_in_the_block(source: str) -> None:
    doc = parse(source)
    (block,) = [b for b in doc.blocks if "[!" in doc.lines[max(b.start - 1, 0)].text]
    assert "[!" not in block.text and block.skip is None
    assert "[!" in doc.lines[block.start - 1].text  # the marker is the line before
    assert splice(doc, {b.id: b.text for b in doc.blocks}) == source


@pytest.mark.parametrize("source", ALERTS)
def test_a_reply_cannot_move_the_marker(source: str) -> None:
    doc = parse(source)
    (block,) = [b for b in doc.blocks if b.start > 0 and "[!" in doc.lines[b.start - 1].text]
    out = splice(doc, {block.id: "Notably, we will do it.\nOn two lines."})
    marker = next(line.text for line in doc.lines if "[!" in line.text)
    assert marker + doc.lines[block.start - 1].ending in out  # alone on its line, untouched
    assert out.count("[!") == 1


def test_a_marker_alone_in_its_paragraph_is_not_sent() -> None:
    doc = parse("> [!NOTE]\n>\n> Text after a blank line.\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.NOTHING_TO_REFINE, None]
    assert doc.blocks[1].text == "Text after a blank line."


def test_a_lazy_line_after_the_marker_keeps_the_block_whole_and_unsent() -> None:
    doc = parse("> [!NOTE]\nlazy continuation\n")
    assert [b.skip for b in doc.blocks] == [SkipReason.LAYOUT]


def test_a_marker_with_a_title_on_its_line_is_left_to_the_guard() -> None:
    doc = parse("> [!NOTE] Title here\n> body\n")
    assert doc.blocks[0].text.startswith("[!NOTE] Title here")
