"""Cut a Markdown report into blocks: paragraphs and list items, with their source lines.

Pure code, no IO. markdown-it-py finds the blocks (``Token.map`` gives their lines); the
container prefixes are then read off the raw lines, never re-rendered, so that
:func:`owlai_refine.pipeline.splice.splice` can put text back byte for byte. Facts about
markdown-it-py 4.3 that shape this module: list-item maps include trailing blank lines (we use
the paragraph's own map), lazy continuation lines carry no prefix, paragraph content is
trimmed and tab-expanded (we never take text from the token), a BOM is not stripped (we strip it),
footnote paragraphs come last in the token stream, and maps split lines at ``\\r\\n``, ``\\r``
and ``\\n`` only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from markdown_it.token import Token

from owlai_refine.blocks import Block, BlockKind, Document, Line, SkipReason
from owlai_refine.markdown import markdown_parser
from owlai_refine.pipeline.skips import (
    DEFAULT_REFERENCE_HEADINGS,
    normalise_heading,
    paragraph_skip,
    references_pseudo_heading,
)

__all__ = ["parse", "split_lines", "text_lines"]

_EOL = re.compile(r"\r\n|\r|\n")
_BQ_MARKER = re.compile(r" {0,3}>")
_LIST_MARKER = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])")
_FRONT_MATTER_TITLE = re.compile(r"^title:\s*['\"]?(.+?)['\"]?\s*$", re.MULTILINE)
_ALERT_LINE = re.compile(r"[ \t]*\[![A-Za-z]+\][ \t]*")


def text_lines(text: str) -> list[str]:
    """``text`` cut at every ``\\r\\n``, ``\\r`` and ``\\n``, endings dropped; a trailing line
    break gives a final ``""``. The lines a replacement text occupies once spliced (see
    ``splice.spliced_lines``), so ``splice`` and ``verify`` count them the same way."""
    return _EOL.split(text)


def split_lines(text: str) -> tuple[Line, ...]:
    """Split ``text`` into lines exactly where markdown-it-py does: at ``\\r\\n``, ``\\r`` and
    ``\\n`` (not at U+2028, U+0085 or form feed, which ``str.splitlines`` would split on).

    A final line without a line ending gets ``ending=""``; text ending in a line break has no
    empty last line. ``"".join(l.text + l.ending for l in split_lines(t)) == t`` always.
    """
    lines: list[Line] = []
    pos = 0
    for m in _EOL.finditer(text):
        lines.append(Line(text[pos : m.start()], m.group()))
        pos = m.end()
    if pos < len(text):
        lines.append(Line(text[pos:], ""))
    return tuple(lines)


@dataclass(slots=True)
class _Container:
    kind: str  # "bq" | "li"
    start: int  # first source line of the container
    indent: int = 0  # list item: content column minus the column where the item begins
    first_paragraph_seen: bool = False


def _width(chars: str, col: int) -> int:
    """Column after writing ``chars`` (spaces and tabs, tab stops of 4) from column ``col``."""
    for ch in chars:
        col = col + 4 - col % 4 if ch == "\t" else col + 1
    return col


def _consume(
    raw: str, line_no: int, stack: Sequence[_Container]
) -> tuple[int, list[tuple[str, str]], bool]:
    """Read the container markers off ``raw`` for each container in ``stack``.

    Returns ``(pos, segments, lazy)``: the content starts at ``raw[pos:]``; ``segments`` are
    ``(kind, text)`` pieces of the prefix (``"bq"``, ``"marker"`` or ``"indent"``); ``lazy`` is
    true if a container's marker was missing (a lazy continuation line).
    """
    pos = 0
    col = 0
    segments: list[tuple[str, str]] = []
    for c in stack:
        if c.kind == "bq":
            m = _BQ_MARKER.match(raw, pos)
            if m is None:
                return pos, segments, True
            end = m.end()
            if end < len(raw) and raw[end] in " \t":
                end += 1
            segments.append(("bq", raw[pos:end]))
            col = _width(raw[pos:end], col)
            pos = end
        elif line_no == c.start:
            m = _LIST_MARKER.match(raw, pos)
            if m is None:
                return pos, segments, True
            end = m.end()
            ws_end = end
            while ws_end < len(raw) and raw[ws_end] in " \t":
                ws_end += 1
            marker_col = _width(raw[pos:end], col)
            spaces = _width(raw[end:ws_end], marker_col) - marker_col
            if ws_end < len(raw) and spaces > 4:
                ws_end = end + 1  # 5+ spaces: one belongs to the marker, the rest is content
            start_col = col
            col = _width(raw[end:ws_end], marker_col) if ws_end > end else marker_col + 1
            c.indent = col - start_col
            segments.append(("marker", raw[pos:ws_end]))
            pos = ws_end
        else:
            start_col = col
            end = pos
            while end < len(raw) and raw[end] in " \t" and col - start_col < c.indent:
                col = _width(raw[end], col)
                end += 1
            if col - start_col < c.indent:
                return pos, segments, True
            segments.append(("indent", raw[pos:end]))
            pos = end
    return pos, segments, False


def _alert_marker_line(
    text: str, prefixes: tuple[str, ...]
) -> tuple[tuple[str, ...], str, str] | None:
    """For a block whose first line is a GitHub alert marker alone (``> [!NOTE]``): its prefixes,
    continuation prefix and text without that line, so the marker is never sent or changed.
    ``None`` if the first line is no marker, or nothing follows it in the same container
    (a lazy line, which would need the marker line to stay in the block)."""
    first, sep, rest = text.partition("\n")
    if not sep or not _ALERT_LINE.fullmatch(first):
        return None
    kept = prefixes[1:]
    depth = prefixes[0].count(">")
    if any(p.count(">") != depth for p in kept):
        return None
    continuation = kept[1] if len(kept) > 1 else kept[0]
    return kept, continuation, rest


def _block_from_lines(
    lines: Sequence[Line], start: int, end: int, stack: Sequence[_Container], inline: Token
) -> tuple[tuple[str, ...], str, str] | None:
    """``(prefixes, continuation_prefix, text)`` for lines ``[start, end)``, or ``None`` when the
    prefixes cannot be read off safely (the stripped contents disagree with the token's)."""
    expected = inline.content.split("\n")
    if len(expected) != end - start:
        return None
    prefixes: list[str] = []
    contents: list[str] = []
    segments_by_line: list[tuple[list[tuple[str, str]], bool]] = []
    for i in range(start, end):
        raw = lines[i].text
        pos, segments, lazy = _consume(raw, i, stack)
        content = raw[pos:]
        if content.replace("\0", "\ufffd").strip() != expected[i - start].strip():
            return None
        prefixes.append(raw[:pos])
        contents.append(content)
        segments_by_line.append((segments, lazy))
    first_segments, first_lazy = segments_by_line[0]
    if first_lazy:
        return None
    if len(prefixes) > 1 and not segments_by_line[1][1]:
        continuation = prefixes[1]
    else:  # the first line's prefix with each list marker turned into as many columns of spaces
        pieces: list[str] = []
        col = 0
        for kind, text in first_segments:
            new_col = _width(text, col)
            pieces.append(" " * (new_col - col) if kind == "marker" else text)
            col = new_col
        continuation = "".join(pieces)
    return tuple(prefixes), continuation, "\n".join(contents)


def _front_matter_title(tokens: Sequence[Token]) -> str | None:
    if tokens and tokens[0].type == "front_matter":
        m = _FRONT_MATTER_TITLE.search(tokens[0].content)
        if m:
            return m.group(1).strip()
    return None


@dataclass
class _Walk:
    """The state of one walk over the token stream (see :func:`parse`)."""

    lines: tuple[Line, ...]
    tokens: list[Token]
    names: frozenset[str]
    blocks: list[Block] = field(default_factory=list)
    stack: list[_Container] = field(default_factory=list)
    headings: list[tuple[int, str]] = field(default_factory=list)
    outline: list[tuple[int, str]] = field(default_factory=list)
    title: str | None = None
    refs_level: int | None = None  # level of the references heading we are under, if any
    refs_pseudo: bool = False  # under a bold "Sources:" line, until the next heading
    footnote_depth: int = 0

    def run(self) -> None:
        for idx, tok in enumerate(self.tokens):
            handler = getattr(self, f"on_{tok.type}", None)
            if handler is not None:
                handler(tok, idx)

    def on_blockquote_open(self, tok: Token, _idx: int) -> None:
        if tok.map:
            self.stack.append(_Container("bq", tok.map[0]))

    def on_list_item_open(self, tok: Token, _idx: int) -> None:
        if tok.map:
            item = _Container("li", tok.map[0])
            self.stack.append(item)
            if item.start < len(self.lines):
                _consume(self.lines[item.start].text, item.start, self.stack)  # sets item.indent

    def on_blockquote_close(self, _tok: Token, _idx: int) -> None:
        if self.stack:
            self.stack.pop()

    on_list_item_close = on_blockquote_close

    def on_footnote_block_open(self, _tok: Token, _idx: int) -> None:
        self.footnote_depth += 1
        self.stack.clear()  # footnote definitions are not in the container stack

    def on_footnote_block_close(self, _tok: Token, _idx: int) -> None:
        self.footnote_depth -= 1

    def on_heading_open(self, tok: Token, idx: int) -> None:
        level = int(tok.tag[1])
        text = self.tokens[idx + 1].content.strip()
        while self.headings and self.headings[-1][0] >= level:
            self.headings.pop()
        self.headings.append((level, text))
        self.outline.append((level, text))
        if self.title is None and level == 1:
            self.title = text
        self.refs_pseudo = False
        if self.refs_level is not None and level <= self.refs_level:
            self.refs_level = None
        if self.refs_level is None and normalise_heading(text) in self.names:
            self.refs_level = level

    def on_paragraph_open(self, tok: Token, idx: int) -> None:
        if not tok.map:
            return
        inline = self.tokens[idx + 1]
        start, end = tok.map
        kind = BlockKind.PARAGRAPH
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind == "li" and not top.first_paragraph_seen:
            top.first_paragraph_seen = True
            kind = BlockKind.LIST_ITEM
        layout = (
            None
            if self.footnote_depth
            else _block_from_lines(self.lines, start, end, self.stack, inline)
        )
        if layout is None:
            prefixes: tuple[str, ...] = ("",) * (end - start)
            continuation = ""
            text = "\n".join(line.text for line in self.lines[start:end])
        else:
            prefixes, continuation, text = layout
            if _ALERT_LINE.match(text.partition("\n")[0]) and "\n" in text:
                trimmed = _alert_marker_line(text, prefixes)
                if trimmed is None:  # the marker cannot be kept out: send nothing
                    layout = None
                else:
                    prefixes, continuation, text = trimmed
                    start += 1
        skip = paragraph_skip(inline, text, self.footnote_depth > 0, layout is None)
        if skip is None and (self.refs_level is not None or self.refs_pseudo):
            skip = SkipReason.REFERENCES
        if references_pseudo_heading(inline, self.names):
            self.refs_pseudo = True
            skip = skip or SkipReason.NOTHING_TO_REFINE
        self.blocks.append(
            Block(
                id=len(self.blocks),
                kind=kind,
                start=start,
                end=end,
                prefixes=prefixes,
                continuation_prefix=continuation,
                text=text,
                heading_path=tuple(h for _, h in self.headings),
                skip=skip,
            )
        )


def parse(source: str, *, reference_headings: Iterable[str] | None = None) -> Document:
    """Parse a Markdown report into a :class:`Document` of blocks.

    ``source`` is the whole text (a leading BOM is kept aside and restored by splicing).
    ``reference_headings`` replaces
    :data:`~owlai_refine.pipeline.skips.DEFAULT_REFERENCE_HEADINGS` (compared after lower
    casing and removing numbering, emphasis and a trailing colon).

    Every paragraph and list item becomes a :class:`Block`; those that must never be sent get a
    :class:`SkipReason`. Headings, code, tables, HTML, rules, front matter, math blocks and
    link-reference definitions are not blocks at all: they stay as they are.
    Never raises for any ``str`` input.
    """
    names = (
        DEFAULT_REFERENCE_HEADINGS
        if reference_headings is None
        else frozenset(normalise_heading(n) for n in reference_headings)
    )
    bom = "\ufeff" if source.startswith("\ufeff") else ""
    body = source[len(bom) :]
    lines = split_lines(body)
    tokens = markdown_parser().parse(body)
    walk = _Walk(lines, tokens, names, title=_front_matter_title(tokens))
    walk.run()
    blocks = sorted(walk.blocks, key=lambda b: b.start)  # footnote paragraphs come last
    blocks = [b if b.id == i else replace(b, id=i) for i, b in enumerate(blocks)]
    return Document(
        source=source,
        bom=bom,
        lines=lines,
        blocks=tuple(blocks),
        title=walk.title,
        outline=tuple(walk.outline),
    )
