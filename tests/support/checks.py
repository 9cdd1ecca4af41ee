"""Assertions shared by tests: what may and may not change between a report and its refinement."""

from __future__ import annotations

from owlai_refine.blocks import Document
from owlai_refine.parse import parse, split_lines
from owlai_refine.results import OutcomeStatus, RefineResult


def changed_outside_blocks(doc: Document, result: RefineResult) -> list[int]:
    """Source line numbers outside refined blocks whose bytes differ in ``result.text``.

    Walks both texts line by line, skipping each refined block's lines in the source and the
    lines its new text occupies in the output. Empty means the splice touched nothing else.
    """
    refined = {o.block_id: o.text for o in result.outcomes if o.status is OutcomeStatus.REFINED}
    out_lines = split_lines(result.text[len(doc.bom) :])
    assert result.text.startswith(doc.bom)
    bad: list[int] = []
    i = j = 0
    by_start = {doc.blocks[bid].start: doc.blocks[bid] for bid in refined}
    while i < len(doc.lines):
        block = by_start.get(i)
        if block is not None:
            new_text = refined[block.id]
            assert new_text is not None
            j += new_text.count("\n") + 1
            i = block.end
            continue
        if j >= len(out_lines) or out_lines[j] != doc.lines[i]:
            bad.append(i)
        i += 1
        j += 1
    if j != len(out_lines):
        bad.append(len(doc.lines))
    return bad


def same_blocks(before: str, after: str) -> bool:
    """True if both texts parse to the same block layout (kinds, sendability, count)."""
    a, b = parse(before), parse(after)
    return [(x.kind, x.skip) for x in a.blocks] == [(y.kind, y.skip) for y in b.blocks]
