"""One shared analysis of a block and its reply, computed once and read by every rule.

Pure code apart from the analysers' one-time load (``guard.analysis``). A :class:`Pair` holds
both texts as the rules need them, each computed on first use: the Markdown source (``block``,
``reply``) and its parse, the texts with numbers spelled out made digits where the other text
has the digits (``words``), their prose normalised (``guard.normalise``: widths, CJK-Latin
spacing, contractions; code, URLs, math and markers blanked), the block's language label, each
prose's :class:`~owlai_refine.guard.analysis.Analysis` and the
:class:`~owlai_refine.guard.edits.Edit` list between them.
"""

from __future__ import annotations

import re
from functools import cached_property

from markdown_it.token import Token

from owlai_refine.guard._md import parse_tokens, prose
from owlai_refine.guard.analysis import Analysis, analyse
from owlai_refine.guard.edits import Edit, align
from owlai_refine.guard.normalise import digit_numbers, normalise, numbers_as_digits
from owlai_refine.markers import CITATION, FOOTNOTE_REF

__all__ = ["Pair", "unmarked_prose"]

_MARKERS = re.compile(f"{CITATION.pattern}|{FOOTNOTE_REF.pattern}|" + r"(?<!\\)\[![A-Za-z]+\]")


def unmarked_prose(text: str) -> str:
    """The normalised prose of ``text`` without citation, footnote and alert markers."""
    return normalise(_MARKERS.sub(" ", prose(text)))


class Pair:
    """A block's text and a reply's (both Markdown, the reply already unwrapped), with the
    block's language ``label`` (``guard.language.language_label``)."""

    def __init__(self, block: str, reply: str, label: str) -> None:
        self.block = block
        self.reply = reply
        self.label = label

    @cached_property
    def block_parse(self) -> tuple[list[Token], dict[str, object]]:
        """The block's Markdown parse (``guard._md.parse_tokens``)."""
        return parse_tokens(self.block)

    @cached_property
    def reply_parse(self) -> tuple[list[Token], dict[str, object]]:
        """The reply's Markdown parse."""
        return parse_tokens(self.reply)

    @cached_property
    def block_digits(self) -> frozenset[int]:
        """The numbers the block writes in digits."""
        return digit_numbers(self.block)

    @cached_property
    def reply_digits(self) -> frozenset[int]:
        """The numbers the reply writes in digits."""
        return digit_numbers(self.reply)

    @cached_property
    def block_words(self) -> str:
        """The block with the numbers it spells out that the reply writes in digits made
        digits (``Forty-seven percent`` -> ``47 percent`` against ``47%``)."""
        return numbers_as_digits(self.block, self.reply_digits)

    @cached_property
    def reply_words(self) -> str:
        """The reply with the numbers it spells out that the block writes in digits made
        digits."""
        return numbers_as_digits(self.reply, self.block_digits)

    @cached_property
    def block_prose(self) -> str:
        """The block's normalised prose (see :func:`unmarked_prose`)."""
        return unmarked_prose(self.block)

    @cached_property
    def reply_prose(self) -> str:
        """The reply's normalised prose."""
        return unmarked_prose(self.reply)

    @cached_property
    def old(self) -> Analysis:
        """The block's prose analysed with its language's analyser."""
        return analyse(self.block_prose, self.label)

    @cached_property
    def new(self) -> Analysis:
        """The reply's prose analysed with the block's language's analyser."""
        return analyse(self.reply_prose, self.label)

    @cached_property
    def edits(self) -> list[Edit]:
        """The edits from the block's words to the reply's (``guard.edits.align``)."""
        return align(self.old, self.new)
