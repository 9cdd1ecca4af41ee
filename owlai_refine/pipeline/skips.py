"""Which blocks are never sent: the parser's skip rules, read off a paragraph's tokens and text.

Pure code, no IO. :func:`paragraph_skip` gives the :class:`~owlai_refine.blocks.SkipReason` of a
paragraph the parser found (a footnote, a layout the parser cannot read safely, a hard break, a
directive line, nothing to refine, a label or a ``Key: value`` line), or ``None``; the blocks
under a references heading (:data:`DEFAULT_REFERENCE_HEADINGS`, :func:`normalise_heading`) or a
bold ``Sources:`` line (:func:`references_pseudo_heading`) are skipped by
:func:`owlai_refine.pipeline.parse.parse` as it walks the headings.
"""

from __future__ import annotations

import re
import unicodedata

from markdown_it.token import Token

from owlai_refine.blocks import SkipReason
from owlai_refine.markers import BARE_URL, CITATION, FOOTNOTE_REF
from owlai_refine.scripts import CJK

__all__ = [
    "DEFAULT_REFERENCE_HEADINGS",
    "normalise_heading",
    "paragraph_skip",
    "references_pseudo_heading",
]

DEFAULT_REFERENCE_HEADINGS: frozenset[str] = frozenset(
    {
        "references", "reference", "reference list", "sources", "source", "sources cited",
        "bibliography", "citations", "key citations", "works cited", "literature cited",
        "참고문헌", "참고 문헌", "출처", "참고 자료", "참고자료",
        "参考文献", "参考资料", "参考資料", "引用文献", "资料来源", "来源", "出典", "引用",
    }
)  # fmt: skip
"""Heading texts (normalised: lower case, no numbering, emphasis or trailing colon) that start
a references section; every block under one is skipped."""

_DIRECTIVE_LINE = re.compile(r"^\s*(?::::+|\[\[[\w-]+\]\]\s*$)")
_HEADING_NUMBERING = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)*\.?|[ivxlcdm]+\.|[a-z]\.)\s+", re.I)
_ALERT = re.compile(r"(?<!\\)\[![A-Za-z]+\]")
_LABEL = re.compile(r"([*_]{1,2})(?P<label>[^*_\n]{1,100}?)(?:[:\uff1a]\1|\1[:\uff1a])")
_METADATA = re.compile(
    r"[*_]{0,2}(?P<key>[^:\uff1a*_\n]{1,40}?)\s*[*_]{0,2}\s*[:\uff1a]\s*[*_]{0,2}"
    r"[ \t]+(?P<value>\S.*)"
)
_CJK = re.compile(f"[{CJK}]")
_PLAIN_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")


def normalise_heading(text: str) -> str:
    """``text`` as headings are compared: no emphasis, code or ``#`` marks, no trailing colon,
    no numbering (``2.``, ``iv.``, ``a.``), case-folded."""
    text = re.sub(r"[*_`~#]", "", text).strip().rstrip(":\uff1a").strip()
    return _HEADING_NUMBERING.sub("", text).strip().casefold()


def references_pseudo_heading(inline: Token, names: frozenset[str]) -> bool:
    """A paragraph that is only bold/italic text naming a references section (``**Sources:**``)."""
    # markdown-it puts an empty text token on each side of ``**...**`` (not of ``*...*``).
    kids = [
        c
        for c in inline.children or ()
        if c.type != "softbreak" and not (c.type == "text" and not c.content)
    ]
    if len(kids) < 3 or kids[0].type not in ("strong_open", "em_open"):
        return False
    inner = "".join(c.content for c in kids if c.type == "text")
    return normalise_heading(inner) in names


def paragraph_skip(
    inline: Token, text: str, in_footnote: bool, bad_layout: bool
) -> SkipReason | None:
    """Why the paragraph with ``inline`` tokens and block ``text`` is never sent (a footnote, a
    layout that cannot be read back, a hard break, a directive line, nothing to refine, a label
    or metadata line), or ``None``."""
    if in_footnote:
        return SkipReason.FOOTNOTE
    if bad_layout:
        return SkipReason.LAYOUT
    if any(c.type == "hardbreak" for c in inline.children or ()):
        return SkipReason.HARD_BREAK
    if any(_DIRECTIVE_LINE.match(line) for line in text.split("\n")):
        return SkipReason.DIRECTIVE
    if _is_nothing_to_refine(inline):
        return SkipReason.NOTHING_TO_REFINE
    return _is_label_or_metadata(text)


def _is_nothing_to_refine(inline: Token) -> bool:
    """True if the inline content has no letters outside links, images, code, math, HTML,
    citation markers and bare URLs."""
    parts: list[str] = []
    depth = 0
    for child in inline.children or ():
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        elif depth == 0 and child.type == "text":
            parts.append(child.content)
    rest = " ".join(parts)
    for marker in (BARE_URL, CITATION, FOOTNOTE_REF, _ALERT):
        rest = marker.sub(" ", rest)
    return not any(unicodedata.category(ch).startswith("L") for ch in rest)


def _words(text: str) -> float:
    """Plain words in ``text``: runs of letters alone between spaces (a token with a digit,
    ``/``, ``-``, ``.`` or ``@`` inside, such as a date, version, identifier or URL, is data, not
    a word), and half a word for each CJK character wherever it stands."""
    cjk = len(_CJK.findall(text))
    count = cjk / 2
    for token in _CJK.sub(" ", text).split():
        bare = token.strip(".,;:!?()[]{}\"'*_\u201c\u201d\u2018\u2019\uff0c\u3002\uff1b")
        if _PLAIN_WORD.fullmatch(bare):
            count += 1
    return count


def _is_label_or_metadata(text: str) -> SkipReason | None:
    """``LABEL`` for a bold/italic label ending in a colon alone (``**Key Principles:**``);
    ``METADATA`` for one ``Key: value`` line with a key of at most four words and a value of at
    most two plain words (``Start Date: 2024-09-10``, ``License: MIT``); else ``None``."""
    if "\n" in text:
        return None
    text = text.strip()
    label = _LABEL.fullmatch(text)
    if label and 0 < _words(label["label"]) <= 12:
        return SkipReason.LABEL
    meta = _METADATA.fullmatch(text)
    if meta and 0 < _words(meta["key"]) <= 4 and len(meta["key"].split()) <= 4:
        value = _ALERT.sub(" ", BARE_URL.sub(" ", meta["value"]))
        if _words(value) <= 2:
            return SkipReason.METADATA
    return None
