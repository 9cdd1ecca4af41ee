"""The reply guard: checks a model's reply before it may replace its block.

Pure code, no IO. :func:`check_reply` removes known wrappers, then rejects a reply that would
change the report's structure or is empty; a rejected reply leaves the block's original text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from owlai_refine.blocks import Block, BlockKind
from owlai_refine.config import GuardConfig
from owlai_refine.parse import markdown_parser

__all__ = ["Verdict", "check_reply", "normalise_ws", "watchdog_for"]

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's decision: ``text`` is the cleaned reply to splice (``None`` if rejected),
    ``reasons`` why it was rejected, ``unchanged`` whether it equals the block."""

    text: str | None
    reasons: tuple[str, ...] = ()
    unchanged: bool = False


def normalise_ws(text: str) -> str:
    """``text`` with every run of whitespace turned into one space, and stripped."""
    return " ".join(text.split())


def check_reply(block: Block, reply: str, config: GuardConfig) -> Verdict:
    """Clean ``reply`` and decide whether it may replace ``block``."""
    del config
    text = _THINK.sub("", reply).strip()
    if not text:
        return Verdict(None, ("empty",))
    if block.kind is BlockKind.LIST_ITEM:
        text = re.sub(r"^(?:[-*+]|\d{1,9}[.)])[ \t]+", "", text)
    lines = [line.strip() for line in text.splitlines()]
    if any(not line for line in lines):
        return Verdict(None, ("structure: blank line",))
    text = "\n".join(lines)
    tokens = markdown_parser().parse(text)
    kinds = [t.type for t in tokens if t.nesting == 1]
    if kinds != ["paragraph_open"]:
        return Verdict(None, (f"structure: {', '.join(kinds) or 'nothing'}",))
    if normalise_ws(text) == normalise_ws(block.text):
        return Verdict(text, unchanged=True)
    return Verdict(text)


def watchdog_for(block: Block, config: GuardConfig) -> Callable[[str], str | None] | None:
    """A streaming watchdog for ``block``'s reply, or ``None`` for no early stop."""
    del block, config
    return None
