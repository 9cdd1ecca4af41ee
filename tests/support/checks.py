"""Assertions shared by tests: what may and may not change between a report and its refinement."""

from __future__ import annotations

from owlai_refine.blocks import Document
from owlai_refine.results import OutcomeStatus, RefineResult
from owlai_refine.verify import changed_outside_blocks as _changed


def changed_outside_blocks(doc: Document, result: RefineResult) -> list[int]:
    """Source line numbers outside ``result``'s refined blocks whose bytes differ in
    ``result.text``; empty means the splice touched nothing else."""
    refined = {
        o.block_id: o.text
        for o in result.outcomes
        if o.status is OutcomeStatus.REFINED and o.text is not None
    }
    return _changed(doc, refined, result.text)
