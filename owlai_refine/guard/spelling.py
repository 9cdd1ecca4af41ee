"""Spelling: an English word the reply misspelled ("existing" -> "exisiting").

Pure code; reads pyspellchecker's English word list once per process (about 160,000 words,
2 s and 35 MB on first use, then a set lookup). A word the reply gained is a typo put in when
it is no English word, a word the block lost is one, and the two are one or two edits apart
(a letter changed, added, dropped or two swapped). Not a typo:

- a typo fixed (the block's word is unknown: ``recieve`` -> ``receive``);
- an inflection or a compound (one word begins the other: ``dataset`` -> ``datasets``);
- British for American spelling or the reverse (``color``/``colour``, ``analyze``/``analyse``,
  ``center``/``centre``, ``modeling``/``modelling``);
- a word with a capital, a digit or under four letters (names, models, acronyms: the name
  and token checks read those).

A real word for another (``loading`` -> ``loafing``) is not seen here. ``changed spelling
"existing" -> "exisiting"``.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

from owlai_refine.guard.reasons import Reason

__all__ = ["spelling_problem"]

_WORD = re.compile(r"(?<![A-Za-z0-9'])[a-z]{4,}(?![A-Za-z0-9'])")
_BRITISH = (
    ("our", "or"),
    ("ise", "ize"),
    ("yse", "yze"),
    ("re", "er"),
    ("ll", "l"),
    ("ogue", "og"),
)


@cache
def _known() -> frozenset[str]:
    """The English word list (lower case)."""
    from spellchecker import SpellChecker  # noqa: PLC0415 - 2 s to load: only when needed

    return frozenset(SpellChecker(language="en", distance=1).word_frequency.keys())


def _edits(a: str, b: str) -> int:
    """Optimal string alignment distance of ``a`` and ``b`` (adjacent swaps count one)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            cur.append(cost)
        prev2, prev = prev, cur
    return prev[-1]


def _variant(a: str, b: str) -> bool:
    """True if ``a`` and ``b`` are one word in British and American spelling."""
    for uk, us in _BRITISH:
        for x, y in ((a, b), (b, a)):
            if uk in x and x.replace(uk, us) == y:
                return True
    return False


def spelling_problem(block: str, reply: str) -> Reason | None:
    """``changed spelling "X" -> "Y"`` for the first English word the reply misspelled (see the
    module docstring), else ``None``. Both are normalised prose (``meaning``)."""
    lost = Counter(_WORD.findall(block)) - Counter(_WORD.findall(reply))
    gained = Counter(_WORD.findall(reply)) - Counter(_WORD.findall(block))
    if not lost or not gained:
        return None
    known = _known()
    for new in sorted(w for w in gained if w not in known):
        for old in sorted(w for w in lost if w in known):
            if old.startswith(new) or new.startswith(old) or _variant(old, new):
                continue
            if _edits(old, new) <= 2:
                return Reason("changed spelling", f'"{old}" -> "{new}"')
    return None
