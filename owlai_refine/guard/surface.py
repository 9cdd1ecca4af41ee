"""Words as written: a reason's quotes mapped back from the checks' forms to the texts' own.

Pure code, no IO. The checks compare derived forms of the texts: prose normalised (NFKC widths,
straight quotes, spacing), Latin words lower-cased and cut to six letters (``clauses``: "their
platfo suppor"), CJK text split into characters (``repetition``: "日 本 語"). A reason's quotes
are for a person, who must find them in the report, so :func:`as_written` replaces each quoted
fragment of a reason's detail by the span of the block (or of the reply) it was read from,
exactly as that text writes it (runs of whitespace shown as one space): the fragment's units are
looked for in order, a Latin unit as the start of a word (any case), anything that is not a
letter or digit between them. A quote already in either text, or one found in neither (a label
such as ``"past"``), is left as it is.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from owlai_refine.guard.reasons import Reason
from owlai_refine.markers import CITATION, FOOTNOTE_REF
from owlai_refine.scripts import CJK

__all__ = ["as_written", "locate"]

_QUOTE = re.compile(r'(?<![^\s(>:])"([^"]+)"(?=$|[\s,)])')
"""A quoted fragment of a detail: ``"..."`` after a space, ``(`` or the start, before a space,
``,``, ``)`` or the end (so ``"8", "9"`` is two fragments, not ``", "``)."""
_UNIT = re.compile(rf"[{CJK}]|[^\W_]+?(?=[{CJK}]|[\W_]|$)")
_LATIN = re.compile(rf"[^\W_{CJK}]")
_ELLIPSIS = "\u2026"
_MATH = r"\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)"  # dollar math as the prose reads it (guard._md)
_SKIPPED = rf"`[^`]*`|{_MATH}|\]\([^)\s]*\)|{CITATION.pattern}|{FOOTNOTE_REF.pattern}"
_SKIPPED_RE = re.compile(_SKIPPED)
_GAP = rf"(?:{_SKIPPED}|[\W_]"
"""What may stand between two units: anything but a letter or digit; a code span, a link's
destination, inline math, a citation or footnote marker (the prose they read leaves them
out); closed by :func:`_pattern` after the letters the checks do not read (below). Only a
fragment that the masked text cannot serve needs it: in the masked text (:func:`_folded`) every
one of these is made marks, so the gap there is ``[\\W_]*?``, which ``re`` compiles in
microseconds."""
_UNREAD = re.compile(rf"[^\W\x00-\x7f{CJK}]")
"""A letter or digit the checks do not read: not ASCII, not CJK (the ``é`` of "célebre")."""
_UNREAD_MARK = "\x01"
"""What such a letter (and each character of a skipped span) is searched as, in the text masked
by :func:`_folded`: a mark, so it is a gap with no class of its own. The gap that names them
(``[^\\x00-\\x7f`` and every CJK range) costs ``re`` 2 ms to compile, once for each of a
pattern's gaps (44 ms for a 20-character Chinese sentence); only a fragment that has such a
letter ("geschäftskennzahl") needs it."""
_LIMIT = 60


@lru_cache(maxsize=512)
def _folded(text: str) -> tuple[str, str, tuple[int, ...]]:
    """``text`` folded character by character (NFKC, curly quotes straight) for searching, the
    same with each letter the checks do not read and each code span, link destination and
    marker masked as ``_UNREAD_MARK`` (one mark a character), and for each folded character the
    index of the character of ``text`` it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch).translate(_QUOTES)
        out.append(folded)
        where.extend([i] * len(folded))
    folded = "".join(out)
    masked = _SKIPPED_RE.sub(lambda m: _UNREAD_MARK * len(m.group()), folded)
    return folded, _UNREAD.sub(_UNREAD_MARK, masked), tuple(where)


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


@lru_cache(maxsize=256)
def _pattern(fragment: str) -> tuple[re.Pattern[str], bool] | None:
    """The units of ``fragment`` in order with anything but letters and digits between them
    (a Latin unit starts a word and may go on: a stem, or a word cut by ``…``), and whether it
    is searched in the masked text (``True`` unless the fragment has a letter the checks do
    not read, or quotes a code span, link or marker); ``None`` for a fragment of nothing but
    spaces."""
    fragment = unicodedata.normalize("NFKC", fragment)
    # the masked text has code spans, link destinations and markers made marks too: only a
    # fragment that quotes none of them (no "[", "`", "$" or "【") is searched there
    masked = _UNREAD.search(fragment) is None and not any(c in fragment for c in "[`$\u3010")
    gap = r"[\W_]*?" if masked else _GAP + rf"|[^\x00-\x7f{CJK}])*?"
    units = _UNIT.findall(fragment)
    if not units:  # marks only ("!" read from U+FF01): the marks themselves
        return (re.compile(re.escape(fragment)), masked) if fragment.strip() else None
    found = list(_UNIT.finditer(fragment))
    lead, tail = fragment[: found[0].start()].strip(), fragment[found[-1].end() :].strip()
    parts = []
    for unit in units:
        if unit[0].isdigit():
            parts.append(rf"(?<![0-9]){re.escape(unit)}")
        elif _LATIN.match(unit):  # a word's start ("platfo": "platforms"); ASCII edges only,
            # as the checks split "célebre" into "c lebre"
            parts.append(rf"(?<![A-Za-z]){re.escape(unit)}[A-Za-z']*")
        else:
            parts.append(re.escape(unit))
    body = gap.join(parts)
    # the marks the fragment starts or ends with ("[1]."), where the text has them there too
    edges = (rf"(?:{re.escape(lead)})?" if lead else "", rf"(?:{re.escape(tail)})?" if tail else "")
    return re.compile(edges[0] + body + edges[1], re.IGNORECASE), masked


def locate(fragment: str, text: str) -> str | None:
    """The span of ``text`` that ``fragment`` (a check's form of some of its words) was read
    from, as ``text`` writes it (whitespace runs made one space), or ``None`` if ``text`` has no
    such span. ``locate("their platfo suppor", "Their platforms support")`` is ``"Their
    platforms support"``."""
    found = _pattern(fragment)
    if found is None:
        return None
    pattern, masked = found
    folded, masked_text, where = _folded(text)
    m = pattern.search(masked_text if masked else folded)
    if m is None or m.end() == m.start():
        return None
    return " ".join(text[where[m.start()] : where[m.end() - 1] + 1].split())


def _flat(text: str) -> str:
    return " ".join(text.split())


def _written(fragment: str, texts: tuple[str, ...]) -> str:
    """``fragment`` as one of ``texts`` writes it (see the module docstring)."""
    cut = fragment.endswith(_ELLIPSIS)
    core = fragment.rstrip(_ELLIPSIS).rstrip(", ")
    if not core or any(core in _flat(t) for t in texts):
        return fragment
    for text in texts:
        if (found := locate(core, text)) is not None:
            if len(found) > _LIMIT:  # cut at a space where there is one
                head = found[: _LIMIT - 1]
                found, cut = (head.rsplit(" ", 1)[0] if " " in head else head), True
            return found + (_ELLIPSIS if cut else "")
    if ", " in core:  # a list of words in one quote ("lost words"): each as written
        items = [_written(item, texts) for item in core.split(", ")]
        return ", ".join(items) + (", " + _ELLIPSIS if cut else "")
    return fragment


def as_written(reason: Reason, block: str, reply: str) -> Reason:
    """``reason`` with each quoted fragment of its detail replaced by the words of ``block``
    or ``reply`` (both Markdown source) it stands for, as written there; the same reason when
    every quote already is (see the module docstring). The group is never changed."""
    if '"' not in reason.detail:
        return reason
    detail = _QUOTE.sub(lambda m: f'"{_written(m.group(1), (block, reply))}"', reason.detail)
    return reason if detail == reason.detail else Reason(reason.group, detail, reason.sep)
