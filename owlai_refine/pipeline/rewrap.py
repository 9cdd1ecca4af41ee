"""Re-wrap an accepted reply at its block's own width, so a diff shows the edit, not a reflow.

Pure code, no IO. A model returns a hard-wrapped paragraph or list item as one long line (or
breaks it where it likes); spliced as it is, a one-word edit rewrites every line of the block in
a ``git diff``. :func:`rewrap` gives the reply the original's line breaks where its words allow:

1. Only a hard-wrapped block is re-wrapped (more than one line of text); a one-line block keeps
   the reply as it is.
2. The block's words and the reply's are aligned (:class:`difflib.SequenceMatcher`); each of the
   original's line breaks whose two neighbouring words the reply kept side by side (or replaced
   one for one: "says" -> "states" at a line's end) is kept there.
3. A line still wider than the block's own width (its longest source line, container prefix
   included, in terminal cells: ``rich.cells.cell_len``, so a CJK character counts two) is
   wrapped greedily at that width, its last words carried on to the start of the next line
   (which is wrapped in turn, up to the next kept break), so the block keeps its number of
   lines where it can; the last line may become two. A run whose break points the edit removed
   is wrapped greedily too.

A line is only ever broken at a space outside inline code, a link or image, an autolink, a bare
URL and inline math, never inside a word, never before a word that would start a block construct
on a line of its own (``-``, ``#``, ``>``, ``1.``, ...: the text would change meaning) and never
after a trailing backslash (a hard break). Text without spaces (Chinese, Japanese) is not broken
at all: a reply that breaks a line next to a CJK character keeps its own line breaks (no rule
beyond the spaces says where such text may be broken without changing it). Re-wrapping changes
only whitespace between words: a run of spaces or a line break outside the protected spans
becomes one space or one line break.
"""

from __future__ import annotations

import itertools
import re
from difflib import SequenceMatcher

from rich.cells import cell_len

from owlai_refine.blocks import Block
from owlai_refine.markers import BARE_URL
from owlai_refine.scripts import CJK, CJK_PUNCT

__all__ = ["rewrap"]

_PROTECTED = re.compile(
    r"(`+)[^`].*?\1"  # a code span, by its backtick run
    r"|!?\[[^\]\n]*\]\([^)\n]*\)"  # a link or an image, text and destination
    r"|<[a-zA-Z][a-zA-Z0-9+.-]*:[^>\s]*>"  # an autolink
    r"|\$(?=\S)[^$\n]*?(?<=\S)\$"  # inline math
    rf"|{BARE_URL.pattern}",
    re.DOTALL,
)
_WORD = re.compile(r"\S+")
_OPENS_BLOCK = re.compile(r"[-#>*+=|~`<_:]|\d{1,9}[.)]|\[\^")
"""A word that must not begin a line: it could start a list, heading, quote, fence, table,
rule, setext underline, HTML block or footnote definition there."""
_CJK_EDGE = re.compile(rf"[{CJK}{CJK_PUNCT}]\s*\n|\n\s*[{CJK}{CJK_PUNCT}]")


def _protected(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _PROTECTED.finditer(text)]


def _words(text: str) -> tuple[list[str], list[bool]]:
    """The whitespace-separated words of ``text`` and, for each gap after a word but the last,
    whether a line may break there (a space outside the protected spans)."""
    spans = [m.span() for m in _WORD.finditer(text)]
    inside = _protected(text)
    words = [text[a:b] for a, b in spans]
    breakable = []
    for (_, end), (start, _) in itertools.pairwise(spans):
        shielded = any(a < end and start < b for a, b in inside)
        breakable.append(not shielded)
    return words, breakable


def _may_break(words: list[str], breakable: list[bool], j: int) -> bool:
    """True if a line may end after word ``j`` (see the module docstring)."""
    return breakable[j] and not words[j].endswith("\\") and _OPENS_BLOCK.match(words[j + 1]) is None


def _greedy(
    words: list[str], breakable: list[bool], lo: int, hi: int, *, first: int, rest: int
) -> list[int]:
    """Where to break words ``lo..hi`` (inclusive) so each line fits its room in cells
    (``first`` for the first line, ``rest`` for the others) where it can: the indices of the
    words that end a line, ``hi`` excluded."""
    cuts: list[int] = []
    room = first
    width = cell_len(words[lo])
    last_ok: int | None = None
    for j in range(lo, hi):
        nxt = cell_len(words[j + 1])
        if _may_break(words, breakable, j):
            last_ok = j
        if width + 1 + nxt > room and last_ok is not None:
            cut = last_ok
            cuts.append(cut)
            room = rest
            width = sum(cell_len(w) + 1 for w in words[cut + 1 : j + 2]) - 1
            last_ok = next((i for i in range(j, cut, -1) if _may_break(words, breakable, i)), None)
        else:
            width += 1 + nxt
    return cuts


def rewrap(block: Block, text: str) -> str:
    """``text`` (an accepted reply for ``block``, prefix-free) with line breaks where the
    block's own lines break, as far as its words allow (see the module docstring). Returns
    ``text`` itself when ``block`` is one line, when ``text`` is empty, or when ``text`` breaks
    a line next to a CJK character. Only whitespace between words changes; every word and
    every protected span is kept byte for byte."""
    lines = block.text.split("\n")
    if len(lines) < 2 or not text.strip() or _CJK_EDGE.search(text):
        return text
    width = max(cell_len(p + line) for p, line in zip(block.prefixes, lines, strict=False))
    rooms = (width - cell_len(block.prefixes[0]), width - cell_len(block.continuation_prefix))
    old: list[str] = []
    ends: dict[int, int] = {}  # an old word that ends a line -> that line's index
    for n, line in enumerate(lines[:-1]):
        old += line.split()
        if old:
            ends[len(old) - 1] = n
    old += lines[-1].split()
    words, breakable = _words(text)
    if len(words) < 2:
        return text
    kept: dict[int, int] = {}  # old word -> the reply's word in its place
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, words, autojunk=False).get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):  # kept, or one for one
            kept.update((i1 + n, j1 + n) for n in range(i2 - i1))
    anchors = sorted(
        (kept[k], n)
        for k, n in ends.items()
        if k in kept
        and kept.get(k + 1) == kept[k] + 1
        and kept[k] < len(words) - 1
        and _may_break(words, breakable, kept[k])
    )
    cuts: list[int] = []
    lo, line_no = 0, -1
    for stop, n in [*anchors, (len(words) - 1, len(lines) - 1)]:
        if stop < lo:
            continue  # passed by words carried over from the lines before
        inner = _greedy(
            words, breakable, lo, stop, first=rooms[0] if lo == 0 else rooms[1], rest=rooms[1]
        )
        lines_here = n - line_no  # the original's lines between the two breaks
        line_no = n
        if stop == len(words) - 1:
            cuts += inner
        elif len(inner) >= lines_here:  # longer than its lines: the rest goes on to the next
            cuts += inner[:lines_here]
            lo = inner[lines_here - 1] + 1
        else:
            cuts += [*inner, stop]
            lo = stop + 1
    return _joined(text, words, set(cuts))


def _joined(text: str, words: list[str], cuts: set[int]) -> str:
    """``text`` with the whitespace after each word in ``cuts`` made a line break and every
    other breakable gap (outside the protected spans) made one space; protected spans'
    whitespace kept as it is."""
    spans = [m.span() for m in _WORD.finditer(text)]
    inside = _protected(text)
    out = [text[: spans[0][0]].lstrip()]
    for j, ((a, end), (start, _)) in enumerate(itertools.pairwise(spans)):
        out.append(text[a:end])
        gap = text[end:start]
        if any(p < end and start < q for p, q in inside):
            out.append(gap)  # inside a code span, a link, a URL: as it was
        else:
            out.append("\n" if j in cuts else " ")
    out.append(text[spans[-1][0] :])
    return "".join(out)
