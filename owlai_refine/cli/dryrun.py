"""``refine --dry-run``: what would be sent, and why the rest is not. No model calls."""

from __future__ import annotations

from typing import TextIO

from owlai_refine.blocks import Document
from owlai_refine.config import RefineConfig
from owlai_refine.pipeline.prompt import estimate_tokens, max_tokens_for, skip_reason

__all__ = ["EXCERPT_CHARS", "excerpt", "print_plan"]


EXCERPT_CHARS = 40
"""How much of each block's text ``--dry-run`` shows, in characters."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The opening of ``text`` on one line: whitespace runs made one space, cut at ``limit``
    characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def print_plan(doc: Document, config: RefineConfig, out: TextIO) -> int:
    """Write one line per block to ``out``: id, kind, source lines (1-based, inclusive),
    estimated tokens, ``send (max_tokens N)`` or ``skip: REASON``, and the block's opening
    words (:func:`excerpt`); then a summary line. Returns the number of blocks that would be
    sent."""
    out.write(f"{'block':>5}  {'kind':<9}  {'lines':<11}  {'~tokens':>7}  {'action':<28}  text\n")
    sent = 0
    for block in doc.blocks:
        size = estimate_tokens(block.text)
        reason = skip_reason(block, config.max_block_tokens)
        if reason is None:
            sent += 1
            action = f"send (max_tokens {max_tokens_for(block, config.output)})"
        else:
            action = f"skip: {reason.value}"
        first, last = block.start + 1, block.end
        lines = str(first) if first == last else f"{first}-{last}"
        out.write(
            f"{block.id:>5}  {block.kind.value:<9}  {lines:<11}  {size:>7}  {action:<28}  "
            f"{excerpt(block.text)}\n"
        )
    out.write(
        f"{sent} of {len(doc.blocks)} blocks would be sent, at most {config.slots} at once "
        f"({config.backend.value} backend); no model was called.\n"
    )
    return sent
