"""Language: a reply must be written in the block's language, judged by script proportions.

Pure code, no IO, no language model. Each letter is assigned a script (Hangul, Kana, Han, Latin,
Cyrillic, Greek, Arabic, Hebrew, Thai, Devanagari, other); Hangul, Kana and Han letters weigh
:data:`CJK_WEIGHT` each, other letters 1, as one CJK character carries about as much text as
three Latin letters. From the weighted shares a text is labelled:

``ko``  Hangul share >= 0.3.
``ja``  Kana + Han share >= 0.3 and at least one Kana letter.
``zh``  Han share >= 0.3 and no Kana at all: Chinese, or Japanese written in Kanji only (the two
        cannot be told apart by script; they are only confused when neither text has Kana).
else    the script with the largest share (``latin``, ``cyrillic``, ...), or ``none`` without
        letters.

A reply is rejected (``language <block> -> <reply>``, e.g. ``language ko -> latin``) when its
label differs from the block's and either the block's defining share fell to less than half in
the reply (a Korean block answered in English) or Kana appeared or vanished between ``ja`` and
``zh`` (a Japanese block answered in Chinese, or a Chinese block answered in Japanese). The "less
than half" margin keeps a mixed block (a Chinese sentence full of English terms, Han share 0.42)
from being rejected for a small shift. Blocks with fewer than :data:`MIN_LETTERS` letters are not
judged. Letters inside code, URLs and math are ignored (``_md.prose`` blanks them first).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from functools import lru_cache

from owlai_refine.guard._md import prose
from owlai_refine.guard.reasons import Reason

__all__ = ["CJK_WEIGHT", "MIN_LETTERS", "language_label", "language_problem", "script_shares"]

CJK_WEIGHT = 3
"""The weight of one Hangul, Kana or Han letter against one letter of an alphabet."""
MIN_LETTERS = 8
"""Blocks with fewer letters than this are too short to judge."""
_SHARE = 0.3

_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "latin"),
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0E00, 0x0E7F, "thai"),
    (0x1100, 0x11FF, "hangul"),
    (0x1E00, 0x1EFF, "latin"),
    (0x3005, 0x3007, "han"),
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7A3, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFF21, 0xFF5A, "latin"),
    (0xFF66, 0xFF9F, "kana"),
    (0x20000, 0x3134F, "han"),
)
_CJK = frozenset({"hangul", "kana", "han"})


def _script(ch: str) -> str:
    code = ord(ch)
    for low, high, name in _RANGES:
        if low <= code <= high:
            return name
    return "other"


@lru_cache(maxsize=4096)  # pure, and asked of the same text by several checks
def script_shares(text: str) -> tuple[dict[str, float], int]:
    """``(shares, letters)``: each script's weighted share of the letters of ``text`` (code
    spans, URLs, link destinations and math left out), and the number of letters counted."""
    # each distinct character is classified once (a reply has a few dozen, over hundreds of
    # letters); scripts still enter in the order of their first letter
    counts: Counter[str] = Counter()
    for ch, n in Counter(prose(text)).items():
        if unicodedata.category(ch)[0] == "L":
            counts[_script(ch)] += n
    weights = {k: v * (CJK_WEIGHT if k in _CJK else 1) for k, v in counts.items()}
    total = sum(weights.values())
    if not total:
        return {}, 0
    return {k: v / total for k, v in weights.items()}, sum(counts.values())


def _label(shares: dict[str, float]) -> str:
    if shares.get("hangul", 0.0) >= _SHARE:
        return "ko"
    cjk = shares.get("kana", 0.0) + shares.get("han", 0.0)
    if cjk >= _SHARE:
        return "ja" if shares.get("kana", 0.0) > 0 else "zh"
    if not shares:
        return "none"
    return max(sorted(shares), key=lambda k: shares[k])


def language_label(text: str) -> str:
    """The language label of ``text``: ``ko``, ``ja``, ``zh``, a script name (``latin``,
    ``cyrillic``, ...) or ``none`` (see the module docstring)."""
    return _label(script_shares(text)[0])


def _defining_share(label: str, shares: dict[str, float]) -> float:
    if label == "ko":
        return shares.get("hangul", 0.0)
    if label == "ja":
        return shares.get("kana", 0.0) + shares.get("han", 0.0)
    if label == "zh":
        return shares.get("han", 0.0)
    return shares.get(label, 0.0)


def language_problem(block_text: str, reply_text: str) -> Reason | None:
    """``"language <block> -> <reply>"`` if the reply left the block's language, else ``None``
    (also for blocks too short to judge)."""
    block_shares, letters = script_shares(block_text)
    if letters < MIN_LETTERS:
        return None
    reply_shares, _ = script_shares(reply_text)
    before, after = _label(block_shares), _label(reply_shares)
    if before == after:
        return None
    kana_flip = {before, after} == {"ja", "zh"}
    faded = _defining_share(before, reply_shares) < _defining_share(before, block_shares) / 2
    return Reason("language", f"{before} -> {after}") if kana_flip or faded else None
