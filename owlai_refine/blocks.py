"""The values the parser produces: lines, blocks and the document that holds them.

Pure data, no IO. Line numbers are 0-based and spans are half-open ``[start, end)``, as in
markdown-it-py's ``Token.map``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Block", "BlockKind", "Document", "Line", "SkipReason"]


class BlockKind(StrEnum):
    """What a block is: a paragraph, or the text of a list item (its first paragraph)."""

    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"


class SkipReason(StrEnum):
    """Why a block is never sent to the model (its text is kept as it is)."""

    REFERENCES = "references_section"
    """Under a references heading (References, Sources, 참고문헌, 参考文献, ...)."""
    NOTHING_TO_REFINE = "nothing_to_refine"
    """Only links, images, URLs, citation markers, code, math or HTML: no prose."""
    HARD_BREAK = "hard_line_break"
    """Holds a hard line break (two trailing spaces or a trailing backslash), which is meaning."""
    FOOTNOTE = "footnote_definition"
    """The text of a footnote definition (``[^1]: ...``)."""
    DIRECTIVE = "container_directive"
    """Container or macro syntax that CommonMark reads as a paragraph (``::: warning``,
    ``[[toc]]``): a model would not know to keep it."""
    LAYOUT = "unsupported_layout"
    """The block's container prefixes could not be derived safely from its source lines."""
    LABEL = "label_only"
    """Only a bold or italic label ending in a colon (``**Key Principles:**``,
    ``**核心思想**`` and a full-width colon): a heading in all but name, with nothing to edit."""
    METADATA = "metadata"
    """One ``Key: value`` line whose value is data, not prose (``Start Date: 2024-09-10``,
    ``License: MIT``, ``Stars: 19,531``): at most two plain words besides numbers, dates,
    identifiers and URLs."""
    TOO_LONG = "too_long"
    """Longer than the configured maximum block size (``RefineConfig.max_block_tokens``)."""


@dataclass(frozen=True, slots=True)
class Line:
    """One source line: ``text`` without its line ending, ``ending`` one of ``"\\r\\n"``,
    ``"\\r"``, ``"\\n"`` or ``""`` (the last line of a file with no final newline)."""

    text: str
    ending: str


@dataclass(frozen=True, slots=True)
class Block:
    """A paragraph or list item's text, cut out of the source lines ``[start, end)``.

    Every source line ``start + i`` equals ``prefixes[i] + text.split("\\n")[i]`` (plus its
    ending), so splicing a block's own text back gives the source back byte for byte.
    """

    id: int
    """Position among all blocks, in document order (0-based); stable for a given source."""
    kind: BlockKind
    start: int
    """First source line (0-based)."""
    end: int
    """One past the last source line."""
    prefixes: tuple[str, ...]
    """The container prefix of each line: blockquote markers, the list marker on an item's
    first line, continuation indentation; ``""`` for lazy continuation lines."""
    continuation_prefix: str
    """The prefix for lines a reply adds beyond the original line count: the second line's own
    prefix if it had one, else the first line's with list markers turned into spaces."""
    text: str
    """The lines with their prefixes removed, joined by ``"\\n"``."""
    heading_path: tuple[str, ...] = ()
    """The text of the headings this block sits under, outermost first."""
    skip: SkipReason | None = None
    """Why the block is never sent, or ``None`` if it is sent."""

    @property
    def line_span(self) -> tuple[int, int]:
        """``(start, end)``: the source lines the block occupies, 0-based, end exclusive."""
        return (self.start, self.end)

    @property
    def sendable(self) -> bool:
        """True if the block goes to the model."""
        return self.skip is None


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed report: its source, split lines and blocks in document order."""

    source: str
    """The text as given, BOM included."""
    bom: str
    """``"\\ufeff"`` if the source started with a UTF-8 byte order mark, else ``""``."""
    lines: tuple[Line, ...]
    """The source after the BOM, split where markdown-it-py splits (``\\r\\n``, ``\\r``,
    ``\\n``; not U+2028, U+0085 or form feed)."""
    blocks: tuple[Block, ...]
    title: str | None = None
    """The first level-1 heading, or front matter ``title:``; ``None`` if neither."""
    outline: tuple[tuple[int, str], ...] = field(default=())
    """``(level, text)`` of every heading, in order."""

    @property
    def sendable(self) -> tuple[Block, ...]:
        """The blocks that go to the model, in document order."""
        return tuple(b for b in self.blocks if b.skip is None)
