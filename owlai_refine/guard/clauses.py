"""Clauses: align block and reply, and judge the runs one of them has and the other lacks.

Pure code, no IO. Both texts (normalised prose, ``normalise``) become sequences of *units*:
Latin words (lower-cased, cut to six letters: "threatens" and "threat" meet) and numbers, and
single CJK characters (Han, Kana, Hangul syllables; spaces between Hangul words are dropped, so
a spacing fix is no change). :class:`difflib.SequenceMatcher` aligns the two; each run it marks
deleted (or replaced by much less) is *dropped content* when its content units appear nowhere in
the reply (text moved elsewhere is not dropped), and the other way round for *added content*.

- ``lost clause "..."``: a run whose dropped content weighs at least :data:`MIN_CLAUSE` (a Latin
  content word of four letters or more weighs 1, a Han, Katakana or Hangul character 1/3,
  Hiragana and function words nothing), when the reply as a whole also lost that much more
  content than it brought in (a clause moved *and* reworded loses words in one place and gains
  as many in another); or a parenthesised part of the block (``(required)``, or in
  full-width brackets)
  whose content words are all gone.
- ``added clause "..."``: the same for new content inserted by the reply.

A copy edit replaces words with synonyms (a run replaced by a run of similar weight: not
judged), drops filler ("in order to" -> "to": too light) and moves clauses (found elsewhere: not
dropped). What it never does is drop or invent a clause's worth of content.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from owlai_refine.guard.normalise import CJK, CJK_STOP, HANGUL, HANGUL_STOP
from owlai_refine.guard.reasons import Reason
from owlai_refine.scripts import HIRAGANA

__all__ = [
    "MIN_CLAUSE",
    "MIN_NET",
    "MIN_PART",
    "MIN_PART_KEPT",
    "clause_problems",
    "echoed_phrase",
    "units",
]

MIN_CLAUSE = 2.0
"""The content weight of a dropped or added run that makes it a clause (two Latin content
words, six Han or Hangul characters)."""

MIN_NET = 2.0
"""The content the reply as a whole must have lost (or gained) besides, for a run to count."""

_UNIT = re.compile(rf"[{CJK}]|[A-Za-z][A-Za-z']*|\d+(?:[.,]\d+)*")
_HIRAGANA = re.compile(f"[{HIRAGANA}]")
_STOP = frozenset(
    {
        "that", "this", "with", "from", "have", "been", "were", "which", "their", "there", "these",
        "those", "they", "them", "than", "then", "into", "also", "such", "what", "when", "where",
        "while", "would", "should", "being", "each", "very", "just", "both", "does", "done",
        "make", "made", "makes", "more", "most", "only", "some", "over", "other", "well", "used",
        "using", "uses", "able", "order", "thus", "hence", "therefore", "however", "moreover",
        "furthermore", "addition", "additionally", "overall", "particular", "particularly",
        "specifically", "various", "whether", "within", "across", "through", "because", "since",
        "about", "upon", "based", "regarding", "including", "especially", "like", "many", "much",
        "same", "here", "even", "still", "already", "often", "will", "could", "might", "must",
        "shall", "your", "itself", "themselves", "among", "around", "against",
    }
)  # fmt: skip
_STOP6 = frozenset(w[:6] for w in _STOP)
_SHORT_CJK = re.compile(f"[{CJK}]{{1,4}}")
MIN_PART = 0.6
"""The least own content of a part that is judged: one Latin word, or two CJK characters
(``(번체)``, "Traditional")."""
MIN_PART_KEPT = 0.5
"""A parenthesised part or an enumerated item is lost below this share of its content kept (a
rewording of it keeps more: "(이미 상기 포함)" -> "(이미 위에 포함됨)")."""
_ITEM_STOP = r"\u3001,:;()\u3002\s"
_ENUM_ITEM = re.compile(
    rf"(?:(?<=[{_ITEM_STOP}])|^)[^{_ITEM_STOP}]{{2,12}}(?=\u3001)"
    rf"|(?<=\u3001)[^{_ITEM_STOP}]{{2,12}}(?=[{_ITEM_STOP}]|\Z)"
)
_PAREN = re.compile(r"\(([^()]{1,80})\)")


def units(text: str) -> list[str]:
    """The alignment units of a normalised text (see the module docstring)."""
    return [u.lower()[:6] if u[0].isascii() and u[0].isalpha() else u for u in _UNIT.findall(text)]


def _weight(unit: str) -> float:
    if unit[0].isascii():
        if unit[0].isdigit():
            return 0.0  # numbers are the token check's
        return 1.0 if len(unit) >= 4 and unit not in _STOP6 else 0.0
    if _HIRAGANA.match(unit) or unit in CJK_STOP or unit in HANGUL_STOP:
        return 0.0
    return 1 / 3 if HANGUL.match(unit) else 1 / 2


def _shown(text_units: list[str], i1: int, i2: int, limit: int = 48) -> str:
    cjk = all(not u[0].isascii() for u in text_units[i1:i2])
    text = ("" if cjk else " ").join(text_units[i1:i2])
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _dropped(run: list[str], other: set[str]) -> float:
    return sum(_weight(u) for u in run if u not in other)


def _lost_part(block: str, reply: set[str], label: str, reply_text: str) -> str | None:
    """A parenthesised part of ``block`` (``(required)``) or, in Chinese, an item of an
    enumeration (``数学推理、数据分析、创意写作``: the 、 that only lists) whose own content
    (the units of it the rest of the block does not have) the reply keeps less than
    :data:`MIN_PART_KEPT` of, for a part with at least :data:`MIN_PART` content of its own. A
    parenthesised part of at most four CJK characters (``(번체)``, "Traditional") must be in the
    reply as it is: a word that short is a qualifier, and "(번역)" says something else."""
    parts = [(m.group(1), m.group()) for m in _PAREN.finditer(block)]
    if label == "zh":
        parts += [(m.group(), m.group()) for m in _ENUM_ITEM.finditer(block)]
    for part, shown in parts:
        elsewhere = set(units(block.replace(shown, " ", 1)))
        own = [u for u in units(part) if u not in elsewhere and _weight(u) > 0]
        total = sum(_weight(u) for u in own)
        if shown.startswith("(") and _SHORT_CJK.fullmatch(part) and part not in reply_text:
            return shown
        if total >= MIN_PART and sum(_weight(u) for u in own if u in reply) < MIN_PART_KEPT * total:
            return shown if len(shown) <= 48 else shown[:47] + "\u2026"
    return None


_ECHO = re.compile(r"(\S.{1,23}?)(?:[\u3001,;\s]{0,2}\1){2,}")


def echoed_phrase(block: str, reply: str) -> Reason | None:
    """``repetition: phrase xN "..."`` for a short phrase the reply says three or more times in a
    row (``より見やすい形式で、より見やすい形式で、より見やすい形式で``) and the block does not:
    shorter than the repetition check's window of words, and in CJK text, where a phrase of five
    characters is a clause. ``None`` otherwise. Both texts normalised."""
    if len(reply) <= len(block):
        return None  # a looped phrase makes the reply longer
    for m in _ECHO.finditer(reply):
        phrase = m.group(1)
        if sum(_weight(u) for u in units(phrase)) < 1 or m.group() in block:
            continue
        times = len(re.findall(re.escape(phrase), m.group()))
        return Reason("repetition", f'phrase x{times} "{phrase.strip()}"', ": ")
    return None


def clause_problems(
    block: str, reply: str, block_source: str = "", reply_source: str = "", label: str = ""
) -> list[Reason]:
    """``lost clause`` and ``added clause`` reasons for two normalised prose texts, at most one
    of each (the heaviest run); empty when nothing was dropped or invented. ``*_source``: the
    whole texts, code and URLs included: a word that is there in any form (a code span that lost
    its backticks) is the token check's, not a clause. ``label``: the block's language label
    (Chinese enumerations are read in ``zh`` only)."""
    a, b = units(block), units(reply)
    a_set, b_set = set(a) | set(units(block_source)), set(b) | set(units(reply_source))
    lost: tuple[float, str] | None = None
    added: tuple[float, str, str] | None = None  # weight, shown, whole
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        gone = _dropped(a[i1:i2], b_set)
        new = _dropped(b[j1:j2], a_set)
        if gone - new >= MIN_CLAUSE and (lost is None or gone > lost[0]):
            lost = (gone, _shown(a, i1, i2))
        if new - gone >= MIN_CLAUSE and (added is None or new > added[0]):
            added = (new, _shown(b, j1, j2), _shown(b, j1, j2, limit=len(reply)))
    net = _dropped(a, b_set) - _dropped(b, a_set)  # content lost minus content brought in
    if net < MIN_NET:
        lost = None  # the run's words were reworded elsewhere (a clause moved and rephrased)
    if -net < MIN_NET:
        added = None
    reasons: list[Reason] = []
    if lost:
        reasons.append(Reason("lost clause", f'"{lost[1]}"'))
    elif part := _lost_part(block, b_set, label, reply):
        reasons.append(Reason("lost clause", f'"{part}"'))
    if added:
        reasons.append(Reason("added clause", f'"{added[1]}"', added=(added[2],)))
    return reasons
