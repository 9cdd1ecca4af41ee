"""The inline markers a report's facts hang on, as the one set of patterns shared by the parser
(a block holding nothing else is not sent) and the guard (a reply must keep them all); and the
two marks the prompt writes and the guard reads back in a reply (:data:`UNCHANGED_MARKER`,
:data:`SECTION_LABEL`).

Pure data, no IO (tested in ``tests/test_parse_skips.py`` and ``tests/guard/``). Each pattern
matches the marker as written in Markdown source; a marker escaped with a backslash
(``\\[1\\]``) is not one.
"""

from __future__ import annotations

import re

from owlai_refine.scripts import CJK, CJK_PUNCT

__all__ = ["BARE_URL", "CITATION", "FOOTNOTE_REF", "SECTION_LABEL", "UNCHANGED_MARKER"]

CITATION = re.compile(
    r"(?<!\\)\[\s*\d+(?:\s*[,\u2013\u2014-]\s*\d+)*\s*\]"
    r"|\u3010\d+(?::\d+)?(?:\u2020[^\u3011\n]{0,40})?\u3011"
)
"""A numeric citation: ``[3]``, ``[1, 2]``, ``[1-3]`` (hyphen, en or em dash), or a tool
citation ``【4†source】`` / ``【4:1†source】``."""

FOOTNOTE_REF = re.compile(r"(?<!\\)\[\^[^\]\s]+\]")
"""A footnote reference: ``[^2]``, ``[^note]``."""

BARE_URL = re.compile(
    rf"(?:(?:https?|ftp)://|www\.)[^\s<>\"'{CJK_PUNCT}{CJK}]+",
    re.IGNORECASE,
)
"""A URL written out in the text (``https://``, ``ftp://`` or ``www.``), up to whitespace, a
quote, an angle bracket, CJK punctuation or a CJK letter (a Korean particle glued to a URL,
``...)의``, is no part of it); the guard trims trailing sentence punctuation."""

UNCHANGED_MARKER = "<unchanged/>"
"""The whole reply for a block that needs no change (``marker=True``): a few tokens instead of
the block again. Offered by the prompt (:mod:`owlai_refine.pipeline.prompt`), read by the guard
(``owlai_refine.guard.marker``)."""

SECTION_LABEL = "Section:"
"""Starts the per-block message's first line (the block's heading path). The guard drops this
line if a model echoes it before its answer."""
