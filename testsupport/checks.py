"""Assertions shared by tests: what may and may not change between a report and its refinement.

An oracle independent of the product: it shares no code with ``owlai_refine`` (not ``parse``,
not ``split_lines``, not ``verify``), only markdown-it-py read directly. A refinement may change
the lines of paragraphs (list items' text is a paragraph too) and nothing else, so the lines
outside every paragraph, with their line endings, must come out byte for byte and in order, as
many paragraphs as before, each ending its last line as before.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from owlai_refine.blocks import Document
from owlai_refine.results import RefineResult

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_MD = MarkdownIt("commonmark").enable("table")


def lines_with_endings(text: str) -> list[str]:
    """``text`` cut after each ``\\r\\n``, ``\\r`` or ``\\n`` (each line keeps its ending; a
    last line without one is kept too). Only these three end a line, as in CommonMark."""
    return _LINE.findall(text)


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The ``[first, end)`` line spans (0-based) of the paragraphs of ``text``, as markdown-it-py
    maps them (``paragraph_open.map``)."""
    return [
        (token.map[0], token.map[1])
        for token in _MD.parse(text)
        if token.type == "paragraph_open" and token.map is not None
    ]


def skeleton(text: str) -> list[tuple[int, str]]:
    """What a refinement must keep of ``text``, as ``(source line number, bytes)``: each line
    outside every paragraph with its ending, and for each paragraph one entry standing for it
    with its last line's ending (a block rewritten onto other lines keeps that). A leading BOM
    counts as part of line 0."""
    body = text.removeprefix("\ufeff")
    lines = lines_with_endings(body)
    if text.startswith("\ufeff") and lines:
        lines[0] = "\ufeff" + lines[0]
    spans = {first: end for first, end in paragraphs(body)}
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        end = spans.get(i)
        if end is None:
            out.append((i, lines[i]))
            i += 1
        else:
            last = lines[end - 1]
            out.append((i, "<paragraph>" + last[len(last.rstrip("\r\n")) :]))
            i = end
    return out


def skeleton_changes(source: str, output: str) -> list[int]:
    """Source line numbers (0-based) whose entry in the :func:`skeleton` of ``source`` is not
    the matching entry of ``output``'s; ``[]`` when only the inside of paragraphs changed. A
    missing or extra entry at the end is reported as the number of source lines."""
    before, after = skeleton(source), skeleton(output)
    bad = [i for (i, a), (_, b) in zip(before, after, strict=False) if a != b]
    if len(before) != len(after):
        bad.append(len(lines_with_endings(source)))
    return bad


def changed_outside_blocks(doc: Document, result: RefineResult) -> list[int]:
    """Source line numbers whose bytes outside the paragraphs (or whose paragraph's last line
    ending) differ in ``result.text``, by :func:`skeleton_changes`; empty means the refinement
    touched nothing else. ``doc`` is used for its source only."""
    return skeleton_changes(doc.source, result.text)
