"""The quotation rule: words the block sets in quotation marks are said as written.

Pure code. A phrase in quotation marks (``'리더십 대화'``, ``"four pillars"``, ``「リーダー
シップ」``) is a name or a quotation: an edit may change the marks (``'...'`` -> ``“...”``), the
spacing or the case, or drop the marks, but not the words. A quoted phrase of the block whose
words the reply does not write, in order, anywhere (spaces, case and full-width forms aside) is
``changed quotation "리더십 대화"``. A straight single quote counts as a mark only where no
letter or digit stands on its outer side (``platform's`` is an apostrophe).
"""

from __future__ import annotations

import re

from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["quotation_reasons"]

_QUOTED = re.compile(
    r"(?<![A-Za-z0-9])'([^'\n]{2,60})'(?![A-Za-z0-9])"
    r'|"([^"\n]{2,60})"'
    "|\u300c([^\u300d\n]{1,60})\u300d|\u300e([^\u300f\n]{1,60})\u300f"
)
"""A quoted phrase of the normalised prose (``Pair.block_prose``: curly quotes are straight
there and full-width forms folded, ``guard.normalise``)."""
_SPACE = re.compile(r"\s+")


def _key(text: str) -> str:
    return _SPACE.sub("", text).casefold()


def quotation_reasons(pair: Pair) -> list[Reason]:
    """``changed quotation "..."`` for the first quoted phrase of the block the reply does not
    write (see the module docstring)."""
    reply = _key(pair.reply_prose)
    for m in _QUOTED.finditer(pair.block_prose):
        phrase = next(g for g in m.groups() if g)
        key = _key(phrase)
        if len(key) >= 2 and key not in reply:
            return [Reason("changed quotation", f'"{phrase.strip()}"')]
    return []
