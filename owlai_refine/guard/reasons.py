"""Why a reply may not replace its block: :class:`Reason`, a group and a detail.

Pure code. A reason's :attr:`~Reason.group` is one of a closed set of stable names (listed in
``owlai_refine.guard``'s docstring: ``"lost citation"``, ``"changed degree"``, ``"swapped
words"``, ...) that logs and summaries count; its :attr:`~Reason.detail` quotes the words as the
texts wrote them. ``str(reason)`` is the one-line form logs, the terminal and the review page
show: ``changed degree: intensifier "significantly" -> ∅``. No code reads a reason's text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["EMPTY", "Reason", "quoted"]

EMPTY = "\u2205"
"""Shown for a side that has none of the words (``"not" -> ∅``)."""


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason a reply was refused.

    ``group``: stable, for counting (``"lost citation"``); ``detail``: the words as written,
    for reading (``"[3]"``; may be empty); ``sep``: what stands between them in
    ``str(reason)`` (``" "``, or ``": "`` for ``structure: heading``); ``lost`` and ``added``:
    the words themselves, for code (neither is compared nor shown).
    """

    group: str
    detail: str = ""
    sep: str = " "
    lost: tuple[str, ...] = field(default=(), compare=False)
    """The words of the block the reason is about, as written (``changed number word``: the
    forms lost; may be empty): what a later rule reads instead of :attr:`detail`."""
    added: tuple[str, ...] = field(default=(), compare=False)
    """The words of the reply the reason is about (``added clause``: the run inserted)."""

    def __str__(self) -> str:
        return f"{self.group}{self.sep}{self.detail}" if self.detail else self.group


def quoted(words: Iterable[str]) -> str:
    """``"a", "b"`` for the words, ``∅`` for none; a word said more than once shows ``x2``."""
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    if not counts:
        return EMPTY
    return ", ".join(f'"{w}"' + (f" x{n}" if n > 1 else "") for w, n in counts.items())
