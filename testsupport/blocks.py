"""Blocks for tests: the one block a snippet of Markdown is cut into, as the parser cuts it."""

from __future__ import annotations

from owlai_refine.blocks import Block
from owlai_refine.pipeline.parse import parse

__all__ = ["one_block"]


def one_block(markdown: str) -> Block:
    """The block ``markdown`` parses into (``ValueError`` unless it is exactly one): with its
    kind, line span, prefixes and skip reason as a report would give them."""
    (block,) = parse(markdown).blocks
    return block
