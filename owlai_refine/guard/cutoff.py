"""Two checks of a reply's extent: its length against the block's, and a cut-off ending.

Pure code. A reply cut short by a server can still claim ``finish_reason: stop``; one that
stops inside a word, a link or after an opening bracket or a comma, where the block ended a
sentence, is refused (``cut off: ends "...www.reu"``). A reply outside
``[min_length_ratio, max_length_ratio]`` of the block's length, in characters after folding
white space, is refused (``too short: 0.31x``, ``too long: 2.60x``).
"""

from __future__ import annotations

import re

from owlai_refine.config import GuardConfig
from owlai_refine.guard.reasons import Reason

__all__ = ["cut_off", "length_problem", "normalise_ws"]

_FINAL_PUNCT = tuple(".!?\u3002\uff01\uff1f")  # and the ideographic full stop, !, ?
_CUT_ENDING = re.compile(r"(?:[^\W_]|[/(\[{<,;:])\Z")  # a letter or digit (not "_"), or an opener


def normalise_ws(text: str) -> str:
    """``text`` with every run of whitespace turned into one space, and stripped."""
    return " ".join(text.split())


def length_problem(block_text: str, text: str, config: GuardConfig) -> Reason | None:
    """``too short`` / ``too long`` for a reply outside the configured length ratios."""
    ratio = len(normalise_ws(text)) / max(len(normalise_ws(block_text)), 1)
    if ratio < config.min_length_ratio:
        return Reason("too short", f"{ratio:.2f}x", ": ")
    if ratio > config.max_length_ratio:
        return Reason("too long", f"{ratio:.2f}x", ": ")
    return None


def cut_off(block_text: str, text: str) -> Reason | None:
    """``cut off`` for a reply that stops mid-word, mid-link or after an opening bracket or
    comma, where the block ended a sentence: the tell-tale of a reply cut short that still says
    ``stop``."""
    if not block_text.rstrip().endswith(_FINAL_PUNCT):
        return None
    if _CUT_ENDING.search(text):
        return Reason("cut off", f'ends "{normalise_ws(text[-24:])}"', ": ")
    return None
