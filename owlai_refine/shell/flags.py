"""A command line written as data: each flag one ``(names, keywords)`` pair, added in order.

Both applications write their larger parsers this way (``refine``'s in
:mod:`owlai_refine.cli`, ``refine bench``'s in :mod:`owlai_refine.ops.bench.command`): the
table reads like the ``--help`` it prints, and a group of flags that exclude each other is one
:class:`Exclusive` entry in it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Exclusive", "Flag", "add_flags"]

Flag = tuple[tuple[str, ...], dict[str, Any]]
"""One ``add_argument`` call: the flag's names (``("-o", "--output")``, or a positional's
name) and its keywords (``help``, ``default``, ``type`` ...)."""


@dataclass(frozen=True)
class Exclusive:
    """Flags of which at most one may be given (exactly one when ``required``)."""

    flags: tuple[Flag, ...]
    required: bool = False


def add_flags(parser: argparse.ArgumentParser, table: Iterable[Flag | Exclusive]) -> None:
    """Add every entry of ``table`` to ``parser``, in order (the order ``--help`` lists)."""
    for entry in table:
        if isinstance(entry, Exclusive):
            group = parser.add_mutually_exclusive_group(required=entry.required)
            for names, keywords in entry.flags:
                group.add_argument(*names, **keywords)
        else:
            names, keywords = entry
            parser.add_argument(*names, **keywords)
