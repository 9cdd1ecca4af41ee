"""Step 1 of a report's run: which blocks to send, in which order, and the outcomes of those
never sent. Pure: takes the parsed document and the settings, returns values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from owlai_refine.blocks import Block, Document
from owlai_refine.config import RefineConfig
from owlai_refine.pipeline.prompt import estimate_tokens, skip_reason
from owlai_refine.results import BlockOutcome, OutcomeStatus

__all__ = ["describe", "plan"]


def describe(block: Block) -> str:
    """``block 12 (line 3)`` or ``block 12 (lines 3-5)``: 1-based source lines, as editors
    number them (the JSON log's ``line_span`` is 0-based and half-open)."""
    first, last = block.start + 1, block.end
    return (
        f"block {block.id} (line {first})"
        if first == last
        else f"block {block.id} (lines {first}-{last})"
    )


def _outcome(block: Block, status: OutcomeStatus, **fields: Any) -> BlockOutcome:
    """``block``'s outcome with its id, kind and line span filled in."""
    return BlockOutcome(
        block_id=block.id, kind=block.kind.value, line_span=block.line_span, status=status, **fields
    )


@dataclass(frozen=True, slots=True)
class _Tuning:
    """What the benchmarks compare and a user has no reason to change: the private seam
    ``Refiner(config, _tuning=_Tuning(...))``, kept out of :class:`RefineConfig`.

    ``dispatch``: the order in which blocks queue for a slot. ``"longest-first"`` shortens the
    tail (the report is done when its slowest block is); ``"document"`` is the order of the
    report (``benchmarks/tail_latency.py`` compares the two).
    ``prompt_layout``: ``"prefix-first"`` puts the instructions and report context before the
    block, so that a server's prefix cache reuses them across blocks; ``"block-first"`` puts
    the block first (``benchmarks/prefix_cache.py`` measures the cache hits of each).
    """

    dispatch: Literal["longest-first", "document"] = "longest-first"
    prompt_layout: Literal["prefix-first", "block-first"] = "prefix-first"


def plan(
    doc: Document, config: RefineConfig, *, _tuning: _Tuning = _Tuning()
) -> tuple[list[Block], dict[int, BlockOutcome]]:
    """Step 1: the blocks to send (longest first) and the ``skipped`` outcomes of those never
    sent, by block id."""
    skipped: dict[int, BlockOutcome] = {}
    send: list[tuple[int, Block]] = []
    for block in doc.blocks:
        reason = skip_reason(block, config.max_block_tokens)
        if reason is not None:
            skipped[block.id] = _outcome(block, OutcomeStatus.SKIPPED, reason=reason.value)
        else:
            send.append((estimate_tokens(block.text), block))
    if _tuning.dispatch == "longest-first":  # the report is done when its slowest block is
        send.sort(key=lambda pair: (-pair[0], pair[1].id))
    return [b for _, b in send], skipped
