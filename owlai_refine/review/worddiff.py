"""A word-level diff of two texts, as ``git diff --word-diff`` shows one: equal runs, deletions
and insertions, in order.

Pure code. A text is cut into tokens: runs of whitespace, words (letters, marks, digits and
``_`` of any script but the CJK ones, with an apostrophe or hyphen inside: ``don't``,
``long-term``; numbers with their decimal point or thousands comma: ``12.5``, ``1,000``),
single punctuation marks and symbols, and CJK words. Japanese and Chinese write no spaces
between words: their runs are cut with the guard's own analysers (MeCab with UniDic, jieba;
see :mod:`owlai_refine.guard.analysis`), which a run that judged such a block has loaded
already; a run the analyser cannot cut back into its own characters falls back to one token
per character. Korean separates words with spaces, so a Hangul run (an eojeol) is one word.
The words (whitespace aside) are aligned with :class:`difflib.SequenceMatcher` (no junk
heuristic), so a reflowed line is no edit and whitespace between two edits is inside them, as
git shows ``[-a b-]{+c+}`` rather than ``[-a-] [-b-]{+c+}``.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from owlai_refine.guard.analysis import analyse
from owlai_refine.guard.language import language_label
from owlai_refine.scripts import CJK, HANGUL

__all__ = ["CONTROL", "Chunk", "has_edits", "tokens", "word_diff"]

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Characters that a viewer of a diff shows as visible marks (``<U+202E>``) instead of
writing them: C0 and C1 controls but tab and newline (a terminal escape), and the
bidirectional marks, embeddings, overrides and isolates (which reorder what is shown)."""

_CJK = re.compile(rf"[{CJK}]")
_HANGUL = re.compile(rf"[{HANGUL}]+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One run of a diff: ``op`` is ``"equal"`` (in both texts), ``"delete"`` (only in the
    old one) or ``"insert"`` (only in the new one); ``text`` is the run as written (an equal
    run's whitespace as the new text writes it)."""

    op: Literal["equal", "delete", "insert"]
    text: str


def _cjk_words(run: str, language: str) -> list[str]:
    """``run`` (CJK characters only) cut into words: Hangul whole, Japanese and Chinese with
    the guard's analyser for ``language`` when its tokens give ``run`` back, else one token
    per character."""
    if _HANGUL.fullmatch(run):
        return [run]
    if language in ("ja", "zh"):
        cut = [t.text for t in analyse(run, language).tokens]
        if "".join(cut) == run:
            return cut
    return list(run)


def tokens(text: str, language: str | None = None) -> list[str]:
    """``text`` cut into tokens (see the module docstring); ``"".join(tokens(text)) == text``.
    ``language`` is a label of :func:`owlai_refine.guard.language.language_label` (``ja``,
    ``zh``, ``ko``, ``latin`` ...); ``None``: the label of ``text`` itself."""
    label = language if language is not None else language_label(text)
    kinds = [_kind(ch) for ch in text]
    for i in range(1, len(text) - 1):  # an apostrophe or hyphen inside a word: "don't"
        if text[i] in _JOINERS and kinds[i - 1] == kinds[i + 1] == "word":
            kinds[i] = "word"
        elif text[i] in ".," and text[i - 1].isdigit() and text[i + 1].isdigit():
            kinds[i] = "word"  # a number: 12.5, 1,000
    out: list[str] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or kinds[i] != kinds[start] or kinds[i] == "other":
            run = text[start:i]
            out += _cjk_words(run, label) if kinds[start] == "cjk" else [run]
            start = i
    return out


_JOINERS = frozenset("'\u2019-")


def _kind(ch: str) -> str:
    """``space``, ``cjk``, ``word`` (a letter, mark, digit or ``_``) or ``other``."""
    if ch.isspace():
        return "space"
    if _CJK.match(ch):
        return "cjk"
    if unicodedata.category(ch)[0] in "LMN" or ch == "_":
        return "word"
    return "other"


def _words(toks: list[str]) -> tuple[list[str], list[str], str]:
    """``(words, the whitespace before each, the whitespace after the last)`` of ``toks``."""
    words: list[str] = []
    before: list[str] = []
    space = ""
    for t in toks:
        if t.isspace():
            space += t
        else:
            words.append(t)
            before.append(space)
            space = ""
    return words, before, space


def word_diff(old: str, new: str, language: str | None = None) -> list[Chunk]:
    """The word diff of ``old`` against ``new``: chunks in order, adjacent ones of the same
    ``op`` merged, none empty. Equal and inserted chunks give ``new`` back exactly; equal and
    deleted chunks give ``old``'s words back in order, with whitespace between them where
    ``old`` has it (its amount may be ``new``'s). A deletion with nothing inserted in its place
    carries the whitespace before it (``"a b c"`` -> ``"a c"``: ``a``, ``[- b-]``, `` c``).
    ``language`` as for :func:`tokens` (``None``: the label of ``old``). Never raises.

    Only words are aligned (whitespace is what separates them), so the time grows with the
    product of the two texts' word counts at worst: a paragraph takes a millisecond or so."""
    label = language if language is not None else language_label(old)
    a, a_space, a_tail = _words(tokens(old, label))
    b, b_space, b_tail = _words(tokens(new, label))

    def run(words: list[str], space: list[str], lo: int, hi: int) -> str:
        return "".join(space[k] + words[k] for k in range(lo, hi))

    raw: list[Chunk] = []
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, a, b, False).get_opcodes():
        if tag == "equal":
            raw.append(Chunk("equal", run(b, b_space, b0, b1)))
        elif b1 > b0:  # the new text's space before the edit is in both
            raw.append(Chunk("equal", b_space[b0]))
            raw.append(Chunk("delete", run(a, a_space, a0, a1).lstrip()))
            raw.append(Chunk("insert", run(b, b_space, b0, b1)[len(b_space[b0]) :]))
        else:
            deleted = run(a, a_space, a0, a1)
            if not a_space[a0]:  # first in its text or line: the space after keeps words apart
                deleted += a_space[a1] if a1 < len(a) else a_tail
            raw.append(Chunk("delete", deleted))
    raw.append(Chunk("equal", b_tail))
    return _merged(raw)


def _merged(chunks: list[Chunk]) -> list[Chunk]:
    """Runs of deletions and insertions regrouped as all deletions, then all insertions, and
    neighbours of one ``op`` joined."""
    out: list[Chunk] = []
    pending: dict[str, list[str]] = {"delete": [], "insert": []}

    def flush() -> None:
        for op in ("delete", "insert"):
            if pending[op]:
                out.append(Chunk(op, "".join(pending[op])))
                pending[op] = []

    for chunk in chunks:
        if chunk.op == "equal":
            flush()
            if out and out[-1].op == "equal":
                out[-1] = Chunk("equal", out[-1].text + chunk.text)
            else:
                out.append(chunk)
        else:
            pending[chunk.op].append(chunk.text)
    flush()
    return [c for c in out if c.text]


def has_edits(chunks: list[Chunk]) -> bool:
    """True if any chunk is a deletion or an insertion."""
    return any(c.op != "equal" for c in chunks)
