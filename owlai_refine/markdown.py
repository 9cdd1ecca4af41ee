"""The markdown-it-py parser, configured once: the parser cuts blocks with it and the guard reads
a reply's structure with it, so both see the same Markdown.

Pure: no IO; the parser is built on first use and kept.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

__all__ = ["markdown_parser"]


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """The markdown-it-py parser every module uses: CommonMark, GFM tables and strikethrough,
    front matter, footnotes, and dollar math with pandoc's rules (``$1 and $2`` is not math)."""
    return (
        MarkdownIt("commonmark")
        .enable(["table", "strikethrough"])
        .use(front_matter_plugin)
        .use(footnote_plugin)
        .use(dollarmath_plugin, allow_space=False, allow_digits=False)
    )
