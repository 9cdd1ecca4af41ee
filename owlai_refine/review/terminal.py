"""``refine --diff``: the word diff of each refined block, for a terminal or a pipe.

Pure code: :func:`diff_text` returns the diff; the CLI prints it. Each refined block is a
header with its 1-based source lines, as ``git diff`` heads a hunk (``@@ line 12 @@``,
``@@ lines 12-14 @@``), then its text with the edits marked: ``[-old-]{+new+}`` as
``git diff --word-diff`` writes them, or, with ``color``, deletions red and insertions green
(a :class:`rich.text.Text` to print). Control characters (a terminal escape, a bidirectional
override) are written as visible ``<U+001B>`` marks, never sent to the terminal.
"""

from __future__ import annotations

from rich.text import Text

from owlai_refine.blocks import Document
from owlai_refine.results import OutcomeStatus, RefineResult
from owlai_refine.review.worddiff import CONTROL, Chunk, word_diff

__all__ = ["diff_text", "refined_diffs"]


def _visible(text: str) -> str:
    return CONTROL.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def _lead(text: str) -> str:
    """The whitespace ``text`` starts with."""
    return text[: len(text) - len(text.lstrip())]


def refined_diffs(doc: Document, result: RefineResult) -> list[tuple[str, list[Chunk]]]:
    """``(header, chunks)`` for each refined block of ``result`` (a run over ``doc``), in
    document order; header ``@@ line 12 @@`` or ``@@ lines 12-14 @@`` (1-based source lines).
    Raises ``KeyError`` if an outcome names a block ``doc`` does not have."""
    blocks = {b.id: b for b in doc.blocks}
    out = []
    for o in result.outcomes:
        if o.status is OutcomeStatus.REFINED and o.text is not None:
            block = blocks[o.block_id]
            first, last = block.start + 1, block.end
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            out.append((f"@@ {where} @@", word_diff(block.text, o.text)))
    return out


def diff_text(doc: Document, result: RefineResult, *, color: bool = False) -> str | Text:
    """The diff of every refined block (see the module docstring), each block's text ending in
    a newline; ``""`` (or an empty ``Text``) when no block was refined. ``color``: a
    :class:`rich.text.Text` styled red and green (headers cyan) instead of marked text."""
    if not color:
        parts = []
        for header, chunks in refined_diffs(doc, result):
            marked = "".join(
                _lead(c.text) + f"[-{c.text.lstrip()}-]" if c.op == "delete"
                else f"{{+{c.text}+}}" if c.op == "insert"
                else c.text
                for c in chunks
            )  # fmt: skip
            parts.append(f"{header}\n{_visible(marked)}\n")
        return "".join(parts)
    text = Text()
    style = {"equal": "", "delete": "red", "insert": "green"}
    for header, chunks in refined_diffs(doc, result):
        text.append(header + "\n", style="cyan")
        for c in chunks:
            if c.op == "delete":  # its leading space is drawn outside it, as in plain text
                text.append(_lead(c.text))
            body = c.text.lstrip() if c.op == "delete" else c.text
            text.append(_visible(body), style=style[c.op])
        text.append("\n")
    return text
