"""Put new block text back into the source: splice, never re-render.

Pure code, no IO. Only the lines of a replaced block change; every other byte (headings, code,
tables, HTML, blank lines, line endings, a missing final newline, a BOM) comes out as it went in.
"""

from __future__ import annotations

from collections.abc import Mapping

from owlai_refine.blocks import Block, Document
from owlai_refine.pipeline.parse import text_lines

__all__ = ["splice", "spliced_lines"]


def _dominant_ending(doc: Document) -> str:
    """The most common line ending in the document (``"\\n"`` if it has none)."""
    counts: dict[str, int] = {}
    for line in doc.lines:
        if line.ending:
            counts[line.ending] = counts.get(line.ending, 0) + 1
    return max(counts, key=lambda e: counts[e]) if counts else "\n"


def spliced_lines(doc: Document, block: Block, new_text: str, *, eol: str | None = None) -> str:
    """The source text (line endings included) that replaces ``block``'s lines for ``new_text``.

    ``new_text`` is the block's new text without container prefixes; its line breaks may be any
    of ``\\r\\n``, ``\\r``, ``\\n``. With as many lines as the original, each line gets the original
    line's own prefix and ending (so a block's own text gives its source lines back exactly).
    Otherwise the first line gets the first prefix, the others ``block.continuation_prefix``;
    the last line keeps the original last ending (``""`` at the end of a file without a final
    newline) and inner lines use the block's first ending, or ``eol`` (default: the document's
    most common ending) for a one-line block.

    Raises ``ValueError`` if ``new_text`` is empty or only whitespace (a block cannot vanish).
    """
    if not new_text.strip(" \t\r\n"):
        raise ValueError(f"block {block.id}: new text is empty")
    new_lines = text_lines(new_text)
    originals = doc.lines[block.start : block.end]
    if len(new_lines) == len(originals):
        return "".join(
            prefix + text + line.ending
            for prefix, text, line in zip(block.prefixes, new_lines, originals, strict=True)
        )
    inner = originals[0].ending if len(originals) > 1 else (eol or _dominant_ending(doc))
    last = len(new_lines) - 1
    out: list[str] = []
    for i, text in enumerate(new_lines):
        prefix = block.prefixes[0] if i == 0 else block.continuation_prefix
        out.append(prefix + text + (originals[-1].ending if i == last else inner))
    return "".join(out)


def splice(doc: Document, replacements: Mapping[int, str]) -> str:
    """Return ``doc.source`` with each block ``id`` in ``replacements`` given its new text.

    ``replacements`` maps block ids to new text (prefix-free, as in ``Block.text``). The result
    keeps the BOM, every line outside the replaced blocks, and the line endings. Properties:
    ``splice(doc, {}) == doc.source`` and ``splice(doc, {b.id: b.text for b in doc.blocks}) ==
    doc.source`` for every document.

    Raises ``KeyError`` for an unknown block id and ``ValueError`` for empty new text.
    """
    if not replacements:
        return doc.source
    by_start: dict[int, tuple[Block, str]] = {}
    for block_id, text in replacements.items():
        if not 0 <= block_id < len(doc.blocks):
            raise KeyError(f"no block {block_id} (the document has {len(doc.blocks)})")
        block = doc.blocks[block_id]
        by_start[block.start] = (block, text)
    eol = _dominant_ending(doc)
    out: list[str] = [doc.bom]
    i = 0
    n = len(doc.lines)
    while i < n:
        hit = by_start.get(i)
        if hit is None:
            line = doc.lines[i]
            out.append(line.text)
            out.append(line.ending)
            i += 1
        else:
            block, text = hit
            out.append(spliced_lines(doc, block, text, eol=eol))
            i = block.end
    return "".join(out)
