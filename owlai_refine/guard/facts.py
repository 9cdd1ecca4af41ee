"""Facts in context: numbers bound to their units and neighbours, and names.

Pure code, no IO. Both functions take two *normalised* prose texts (``normalise``) and the
block's language label.

**Numbers.** The token check already keeps every number as a multiset; what it cannot see is a
number moved to another place or given another unit. Each number is read with its unit (the
word or CJK unit after it, from the ``units`` category of the word tables: ``27 hours``,
``30%``, ``3层``) and its *anchors*: the content word before and after it (for CJK text, the
character pairs just before it), not across punctuation or another number.

- ``changed unit 27 hours -> 27 minutes``: a number of both texts whose unit in the reply is one
  the block never gave it, while the block's own unit for it is gone.
- ``swapped numbers 27 <-> 512 (hours)``: two numbers traded their anchors (an anchor that in
  the block belonged to one number only stands, in the reply, next to the other and not its
  own, both ways): the words stayed and the numbers moved. A reordered sentence moves the anchors
  with their numbers and passes.

**Names.** In Latin text: words with a capital that do not start a sentence, and words with two
or more capitals or a digit (``DLSS``, ``H100``); in CJK text: every Latin word, and Katakana
runs in Japanese. A name of the block that the reply no longer has (in any case), paired with a
name the reply brought in, is ``changed name Netherlands -> Belgium``; one lost alone is ``lost
name``, one new alone ``added name``. A domain written without a scheme (``crates.io``) is a
name too.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher

from owlai_refine.guard.lexicon import Category, tables_for
from owlai_refine.guard.normalise import CJK
from owlai_refine.guard.reasons import Reason

__all__ = ["name_problems", "number_problems"]

_NUMBER = re.compile(r"(?<![0-9.,])\d+(?:[.,]\d+)*")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_DOMAIN = re.compile(
    r"(?<![\w.])[A-Za-z0-9][\w-]*(?:\.[\w-]+)*\.(?:com|org|net|io|ai|dev|rs|gov|edu|co|uk|jp|kr"
    r"|cn|de|fr|me|app|info|xyz)(?![\w])",
    re.IGNORECASE,
)
"""A domain name written without a scheme (``crates.io``): a name, which "crates." loses."""
_AFTER_NUMBER = re.compile(r"\d[ \u00a0]?\Z")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
_BREAK = re.compile(r"[.,;:!?()\[\]\"\u3001\u3002\uff1f\uff01]")
_STOP = frozenset(
    {
        "the", "a", "an", "of", "in", "on", "at", "to", "for", "by", "with", "and", "or", "from",
        "than", "as", "is", "are", "was", "were", "be", "been", "its", "their", "this", "that",
        "about", "around", "over", "under", "up", "nearly", "approximately", "roughly", "some",
        "per", "each", "every", "only", "just", "all", "more", "less", "has", "had",
        "have", "it", "into", "out", "which", "while",
    }
)  # fmt: skip
_NOT_NAMES = frozenset(
    {
        "i", "the", "a", "an", "this", "that", "these", "those", "it", "its", "in", "on", "for",
        "and", "but", "or", "if", "as", "at", "by", "to", "of", "with", "from", "we", "our",
        "they", "their", "he", "she", "his", "her", "you", "your", "my",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Number:
    key: str
    unit: str | None
    anchors: frozenset[str]
    shown: str


_CLAUSE_END = re.compile(r"[.;:!?\u3002\uff1b\uff01\uff1f]")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")


def _number_key(written: str) -> str:
    """A number compared without thousands separators (``39,812`` is ``39812``)."""
    return written.replace(",", "") if _THOUSANDS.fullmatch(written) else written


def _units(label: str) -> tuple[Category, ...]:
    return tuple(c for t in tables_for(label) for c in t.category("units"))


def _latin_anchor(text: str, before: bool) -> str | None:
    """The nearest content word before (or after) a number in ``text``, within three words,
    not across punctuation or another number (``text`` is cut at the number)."""
    words = text.split()[::-1] if before else text.split()
    for word in words[:3]:
        if not before and _BREAK.match(word):
            return None  # the number's own clause ends right after it
        w = word.strip("*_'\"()[]").lower()
        if not w or _NUMBER.fullmatch(w):
            return None
        if w.isalpha() and w not in _STOP and len(w) >= 3:
            return w[:5]
        if _BREAK.search(word):
            return None
    return None


def _cjk_anchors(left: str) -> set[str]:
    """The character pairs of the (up to) four CJK characters just before a number."""
    m = re.search(f"[{CJK}]{{1,4}}$", left)
    run = m.group() if m else ""
    return {run[i : i + 2] for i in range(len(run) - 1)}


def _numbers(text: str, units: tuple[Category, ...]) -> list[_Number]:
    out: list[_Number] = []
    for m in _NUMBER.finditer(text):
        key = _number_key(m.group())
        rest = text[m.end() : m.end() + 24]
        unit, unit_len = None, 0
        stripped = rest.lstrip(" -")
        for category in units:
            if category.pattern is None:
                continue
            u = category.pattern.match(stripped)
            if u and len(u.group()) > unit_len:
                meant = "|".join(category.values_of(u.group()))
                unit, unit_len = f"{category.name}:{meant}", len(u.group())
        anchors: set[str] = set()
        left = _CLAUSE_END.split(text[max(0, m.start() - 40) : m.start()])[-1]
        right = stripped[unit_len:] if unit else stripped
        right = re.split(r"[.,;:!?\u3001\u3002]", right)[0]
        if (a := _latin_anchor(left, before=True)) is not None:
            anchors.add(a)
        if unit is None and (a := _latin_anchor(right, before=False)) is not None:
            anchors.add(a)
        anchors |= _cjk_anchors(left)
        if unit is not None:
            anchors.add(unit)
        shown = m.group() + (rest[: len(rest) - len(stripped) + unit_len] if unit else "")
        out.append(_Number(key, unit, frozenset(anchors), shown.strip()))
    return out


def number_problems(block: str, reply: str, label: str) -> list[Reason]:
    """``changed unit`` and ``swapped numbers`` reasons (see the module docstring)."""
    units = _units(label)
    before, after = _numbers(block, units), _numbers(reply, units)
    if not before or not after:
        return []
    reasons: list[Reason] = []
    b_units: dict[str, Counter[str | None]] = defaultdict(Counter)
    r_units: dict[str, Counter[str | None]] = defaultdict(Counter)
    for n in before:
        b_units[n.key][n.unit] += 1
    for n in after:
        r_units[n.key][n.unit] += 1
    changed: dict[str, tuple[str, str]] = {}  # number -> (its unit in the block, in the reply)
    for key in sorted(b_units.keys() & r_units.keys()):
        gained = [u for u in r_units[key] if u is not None and r_units[key][u] > b_units[key][u]]
        gone = [u for u in b_units[key] if u is not None and b_units[key][u] > r_units[key][u]]
        # an ambiguous abbreviation is the same unit as any it may stand for (512 B, 512 bytes);
        # a unit the block gave another occurrence of the number is still a change (12 nodes,
        # 12 GPUs -> 12 GPUs, 12 GPUs)
        spelled = [u for u in gone if any(_same_unit(u, g) for g in gained)]
        gone = [u for u in gone if u not in spelled]
        gained = [g for g in gained if not any(_same_unit(u, g) for u in spelled)]
        if gained and gone:
            changed[key] = (gone[0], gained[0])
    for key, (was, now) in changed.items():
        partner = next((k for k, pair in changed.items() if pair == (now, was)), None)
        if partner is not None:  # 512 validators, 27 hours -> 27 validators, 512 hours
            return [Reason("swapped numbers", f"{min(key, partner)} <-> {max(key, partner)}")]
        old_shown = next(n.shown for n in before if n.key == key and n.unit == was)
        new_shown = next(n.shown for n in after if n.key == key and n.unit == now)
        reasons.append(Reason("changed unit", f"{old_shown} -> {new_shown}"))
    if not reasons:
        reasons += _swaps(block, reply) or _traded_anchors(before, after)
    return reasons


def _same_unit(a: str, b: str) -> bool:
    """True if two unit keys (``unit:billion|byte``) may name the same unit."""
    (cat_a, _, values_a), (cat_b, _, values_b) = a.partition(":"), b.partition(":")
    return cat_a == cat_b and not set(values_a.split("|")).isdisjoint(values_b.split("|"))


def _traded_anchors(before: list[_Number], after: list[_Number]) -> list[Reason]:
    """``swapped numbers`` when two numbers traded their anchors: an anchor that in the block
    belonged to one number only stands, in the reply, by the other and not by its own, both
    ways ("L1 (NISQ) ... L2 (QML)" -> "L1 (QML) ... L2 (NISQ)")."""
    b_owner: dict[str, set[str]] = defaultdict(set)
    r_owner: dict[str, set[str]] = defaultdict(set)
    for n in before:
        for a in n.anchors:
            b_owner[a].add(n.key)
    for n in after:
        for a in n.anchors:
            r_owner[a].add(n.key)
    moved: dict[tuple[str, str], str] = {}  # (from number, to number) -> the anchor that moved
    for a, keys in b_owner.items():
        (key,) = keys if len(keys) == 1 else (None,)
        now = r_owner.get(a, set())
        if key is not None and now and key not in now:
            for other in now:
                moved.setdefault((key, other), a)
    for (key, other), a in sorted(moved.items()):
        if key < other and (other, key) in moved:
            return [Reason("swapped numbers", f"{key} <-> {other} ({a.split(':')[-1]})")]
    return []


_MASK = "#"
_SWAP_UNIT = re.compile(rf"\d+(?:[.,]\d+)*|[A-Za-z]+|[{CJK}]")
MIN_CONTEXT = 3
"""Aligned units around a number (itself included) before its value is compared."""


def _masked(text: str) -> tuple[list[str], list[str]]:
    """The alignment units of ``text`` with every number replaced by ``#``, and the numbers."""
    units: list[str] = []
    numbers: list[str] = []
    for m in _SWAP_UNIT.finditer(text):
        u = m.group()
        if u[0].isdigit():
            units.append(_MASK)
            numbers.append(_number_key(u))
        else:
            units.append(u.lower())
    return units, numbers


def _swaps(block: str, reply: str) -> list[Reason]:
    """``swapped numbers`` when, in the words the two texts share in the same order, a number
    stands where the block had another number of the block: the words stayed and the numbers
    moved. A changed digit is the token check's (the new number is not one of the block's)."""
    a, a_nums = _masked(block)
    b, b_nums = _masked(reply)
    if len(a_nums) < 2:
        return []
    a_idx = [i for i, u in enumerate(a) if u == _MASK]
    b_idx = [j for j, u in enumerate(b) if u == _MASK]
    a_pos = {i: n for n, i in enumerate(a_idx)}
    b_pos = {j: n for n, j in enumerate(b_idx)}
    known = set(a_nums)
    for block_i, reply_j, size in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        if size < MIN_CONTEXT:
            continue
        for k in range(size):
            if a[block_i + k] != _MASK or k == size - 1:
                continue  # a number at the edge of the shared words may have moved with its own
            old, new = a_nums[a_pos[block_i + k]], b_nums[b_pos[reply_j + k]]
            if old != new and new in known:
                return [Reason("swapped numbers", f"{old} -> {new}")]
    return []


def _sentence_start(text: str, at: int) -> bool:
    """True if the word at ``text[at]`` starts a sentence (or a label after a colon)."""
    left = text[:at].rstrip(" *_\"'([")
    return not left or left[-1] in ".!?:;\u3002\uff01\uff1f\n-\u2014|" or left.endswith("**")


def _names(text: str, label: str) -> dict[str, str]:
    """Name key (lower case, no plural s) -> first written form."""
    cjk = label in ("zh", "ja", "ko")
    names: dict[str, str] = {}
    for m in _LATIN.finditer(text):
        word = m.group().strip("'-")
        if not word or _AFTER_NUMBER.search(text, 0, m.start()):
            continue  # a unit ("22.7 GiB") is the number's, not a name
        capitals = sum(ch.isupper() for ch in word)
        strong = capitals >= 2 or any(ch.isdigit() for ch in word)
        if cjk and _compound_part(text, m.start(), m.end(), word):
            continue  # "LLM-based" -> "基于 LLM 的": an English modifier translated
        if (
            cjk
            or strong
            or (
                word[0].isupper()
                and not _sentence_start(text, m.start())
                and word.lower() not in _NOT_NAMES
            )
        ):
            names.setdefault(_key(word), word)
    if label == "ja":
        for m in _KATAKANA.finditer(text):
            names.setdefault(m.group(), m.group())
    for m in _DOMAIN.finditer(text):
        names.setdefault(m.group().lower(), m.group())
    return names


def _compound_part(text: str, start: int, end: int, word: str) -> bool:
    """True if ``word`` (at ``text[start:end]``) is a lower-case part of a hyphenated English
    compound (``LLM-based``, ``multi-agent``, ``warm-up``): in Chinese, Japanese or Korean
    text such a word is English vocabulary a faithful edit may translate, not a name."""
    if not (word.isalpha() and word.islower()):
        return False
    before = start >= 2 and text[start - 1] == "-" and text[start - 2].isascii()
    after = end + 1 < len(text) and text[end] == "-" and text[end + 1].isascii()
    return (before and text[start - 2].isalnum()) or (after and text[end + 1].isalnum())


def _key(word: str) -> str:
    lower = word.lower()
    if lower.endswith("'s"):
        lower = lower[:-2]
    return lower[:-1] if len(lower) > 3 and lower.endswith("s") else lower


def _words(text: str) -> set[str]:
    words = {_key(m.group().strip("'-")) for m in _LATIN.finditer(text)}
    return words | set(_KATAKANA.findall(text)) | {d.lower() for d in _DOMAIN.findall(text)}


def name_problems(
    block: str, reply: str, label: str, block_source: str = "", reply_source: str = ""
) -> list[Reason]:
    """``changed name``, ``lost name`` and ``added name`` reasons (see the module docstring).
    ``*_source``: the whole texts, code and URLs included: a name still there in any form (a
    code span that lost its backticks) is the token check's, not a changed name."""
    b_names, r_names = _names(block, label), _names(reply, label)
    b_words, r_words = _words(block) | _words(block_source), _words(reply) | _words(reply_source)
    lost = [form for key, form in b_names.items() if key not in r_words]
    added = [form for key, form in r_names.items() if key not in b_words]
    reasons = [
        Reason("changed name", f"{old} -> {new}") for old, new in zip(lost, added, strict=False)
    ]
    reasons += [Reason("lost name", old) for old in lost[len(added) :]]
    reasons += [Reason("added name", new) for new in added[len(lost) :]]
    return reasons
