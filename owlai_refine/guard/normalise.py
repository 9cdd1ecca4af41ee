"""Normalisation before the content and meaning checks: what is not a change of wording.

Pure code, no IO. A copy edit may fold full-width forms to half-width ones (a full-width comma
or ``GPU`` in full-width letters to their ASCII forms) or the reverse, add or remove the space
between CJK and Latin text (``使用GPU`` / ``使用 GPU``), and expand or contract a negation
(``can't`` / ``cannot`` / ``can not``). :func:`normalise` maps all of these to one form, so
the checks after it compare words, never typesetting.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from owlai_refine.scripts import CJK, CJK_PUNCT
from owlai_refine.scripts import HANGUL as HANGUL_CLASS

__all__ = [
    "CJK", "CJK_STOP", "HANGUL", "HANGUL_STOP", "MAGNITUDE", "digit_numbers", "normalise",
    "numbers_as_digits", "numeral_value", "spelled_as_digits",
]  # fmt: skip

_CJK_PUNCT = CJK_PUNCT
_SPACE = re.compile(r"(?<=[^\x00-\x7f]) (?=\S)|(?<=\S) (?=[^\x00-\x7f])")
"""A space next to a non-ASCII character: the only ones :func:`_space` may drop."""
HANGUL = re.compile(f"[{HANGUL_CLASS}]")
"""One Hangul syllable."""
CJK_STOP = frozenset("的了是在和与及等也而或把被对将从这那其之于以为所中个一有就都着过们")
"""Han characters that carry grammar, not content (particles, pronouns, the commonest verbs):
the content, clause and marker checks do not count them."""
HANGUL_STOP = frozenset("은는이가을를의에와과도로서고며면다요한할하된되니습있었았였것수들")
"""Hangul syllables that are particles and endings more often than content."""
_CJK_OR_PUNCT = re.compile(f"[{CJK}{_CJK_PUNCT}]")
_CONTRACTION = re.compile(
    r"\b(?P<whole>can't|won't|shan't|cannot)\b|(?<=[a-z])n't\b", re.IGNORECASE
)  # after curly quotes were made straight
_EXPANDED = {"can't": "can not", "won't": "will not", "shan't": "shall not", "cannot": "can not"}
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _expand(m: re.Match[str]) -> str:
    whole = m.group("whole")
    return _EXPANDED[whole.lower()] if whole else " not"


@lru_cache(maxsize=4096)  # pure, and asked of the same text by several checks
def normalise(text: str) -> str:
    """``text`` in one canonical typesetting: NFKC (full-width letters, digits and punctuation
    folded: the full-width comma and brackets to ASCII ones), curly quotes made straight, negative
    contractions expanded, runs of whitespace made one space, and no space between a CJK
    character (or CJK punctuation) and what stands next to it, except the space between two
    Hangul words and after ``.``, ``!`` or ``?``. Idempotent."""
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    if "'" in text or "annot" in text:
        text = _CONTRACTION.sub(_expand, text)
    text = " ".join(text.split())
    return _SPACE.sub(lambda m: _space(m.string, m.start()), text)


def _space(text: str, at: int) -> str:
    """The space at ``text[at]`` kept (``" "``) or dropped (``""``): dropped next to a CJK
    character or CJK punctuation, except between two Hangul words (Korean spaces words) and
    after a sentence's full stop, question or exclamation mark."""
    before, after = text[at - 1], text[at + 1]
    if before in ".!?" or (HANGUL.match(before) and HANGUL.match(after)):
        return " "  # a sentence ends here; or Korean words, which spaces separate
    if _CJK_OR_PUNCT.match(before) or _CJK_OR_PUNCT.match(after):
        return ""
    return " "


_UNITS_WORDS = ["two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = [
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_VALUE = {
    **{w: i + 2 for i, w in enumerate(_UNITS_WORDS)},
    **{w: i + 10 for i, w in enumerate(_TEENS)},
    **{w: 10 * (i + 2) for i, w in enumerate(_TENS)},
    "one": 1,
}
_SPELLED = re.compile(
    rf"(?<![\w-])(?:(?P<tens>{'|'.join(_TENS)})(?:[- ](?P<unit>one|{'|'.join(_UNITS_WORDS)}))?"
    rf"|(?P<small>{'|'.join(_TEENS + _UNITS_WORDS)}|one(?=-[a-z])))(?!\w)",
    re.IGNORECASE,
)
_SINO_ORDINAL = re.compile(f"(?<![{HANGUL_CLASS}])([일이삼사오육칠팔구])차(?![{HANGUL_CLASS}])")
_SINO_DIGITS = (
    {c: n for n, c in enumerate("일이삼사오육칠팔구", start=1)}
    | {c: n for n, c in enumerate("一二三四五六七八九十", start=1)}
    | {"两": 2}
)


def numeral_value(word: str) -> int | None:
    """The value of a numeral of one Sino-Korean or Han character (``일`` 1, ``三`` 3, ``两``
    2, ``十`` 10); ``None`` for any other word."""
    return _SINO_DIGITS.get(word) if len(word) == 1 else None


_PERCENT = re.compile(r"(?<=\d) ?(?:percent|per cent)\b", re.IGNORECASE)
_MAGNITUDE_WORD = re.compile(r"(?<=\d) ?(thousand|million|billion|trillion|bn|mn|tn)\b", re.I)
MAGNITUDE = {
    "thousand": "K", "million": "M", "mn": "M", "billion": "B", "bn": "B", "trillion": "T",
    "tn": "T",
}  # fmt: skip
"""A magnitude word after a number and the suffix that says the same (``$5 billion``, ``$5B``)."""
_SMALL_NUMBER = re.compile(r"(?<![\d.,])\d{1,2}(?![\d]|[.,]\d)")


def _value(m: re.Match[str]) -> int:
    if m.group("small"):
        return _VALUE[m.group("small").lower()]
    unit = m.group("unit")
    return _VALUE[m.group("tens").lower()] + (_VALUE[unit.lower()] if unit else 0)


@lru_cache(maxsize=4096)  # pure, and asked of the same text by several checks
def digit_numbers(text: str) -> frozenset[int]:
    """The whole numbers below 100 that ``text`` writes in digits (``47%``, ``2 seconds``)."""
    return frozenset(int(n) for n in _SMALL_NUMBER.findall(text))


def spelled_as_digits(text: str, written: frozenset[int]) -> str:
    """``text`` with each English cardinal from two to ninety-nine written in words made digits
    where the other text writes that number in digits (``written``: :func:`digit_numbers` of
    it): ``Forty-seven`` against ``47%``, ``under two seconds`` against ``under 2 seconds``.
    Spelling a number out, or the reverse, is a style guide's choice, not a change of fact; a
    number both texts spell stays a word (the number-word check reads it), as does "one" (also a
    pronoun) unless a hyphen joins it to a word (``one-second`` against ``1-second``). A Korean
    Sino-Korean ordinal with 차 is read the same way (``일차`` against ``1차``)."""

    def digits(m: re.Match[str]) -> str:
        value = _value(m)
        return str(value) if value in written else m.group()

    def sino(m: re.Match[str]) -> str:
        value = _SINO_DIGITS[m.group(1)]
        return f"{value}차" if value in written else m.group()

    if not written:
        return text
    return _SINO_ORDINAL.sub(sino, _SPELLED.sub(digits, text))


def numbers_as_digits(text: str, written: frozenset[int]) -> str:
    """:func:`spelled_as_digits`, and ``N percent`` as ``N%`` and ``N billion`` as ``NB``
    (:data:`MAGNITUDE`): the words the content and meaning checks compare."""
    text = _MAGNITUDE_WORD.sub(
        lambda m: MAGNITUDE[m.group(1).lower()], spelled_as_digits(text, written)
    )
    return _PERCENT.sub("%", text)
