"""The exit codes of ``refine`` and its subcommands, in a module of their own.

The CLI (``owlai_refine.cli``) and the operator tools (``owlai_refine.ops``) both map errors to
these codes; keeping them here means neither has to import the other for them. The README lists
the same table.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from owlai_refine.errors import (
    CassetteError,
    ConfigError,
    InputError,
    LimiterError,
    OutputError,
    RefineError,
)

if TYPE_CHECKING:  # the results' pydantic models load only for a finished run
    from owlai_refine.results import RefineResult

__all__ = ["Exit"]


class Exit(IntEnum):
    """The exit codes of ``refine`` (also listed in the README)."""

    OK = 0
    """The report was written; every block is refined, unchanged, skipped, truncated or
    rejected (the last two keep their text and are logged as WARNINGs)."""
    BUG = 1
    """An unexpected internal error (please report it)."""
    CONFIG = 2
    """Bad flags or settings, no usable model, or credentials refused (401/403)."""
    INPUT = 3
    """The report cannot be read: missing, a directory, binary, not UTF-8, too large."""
    OUTPUT = 4
    """The output cannot be written (nothing was written; the input is untouched)."""
    PARTIAL = 5
    """The whole report was written, but some blocks failed (kept their text; see the log's
    ``refine.done`` line for each one)."""
    CASSETTE = 6
    """A cassette cannot be read or written, or replay has no reply for a block."""
    LIMITER = 7
    """The shared slot limiter (e.g. Redis) failed: nothing was sent without a slot, and the
    report was written with every unsent block unchanged."""
    INTERRUPTED = 130
    """Ctrl-C: in-flight requests were cancelled and no output was written."""
    TERMINATED = 143
    """SIGTERM: as for Ctrl-C."""

    @classmethod
    def for_result(cls, result: RefineResult) -> Exit:
        """The code for a finished run: LIMITER if the shared limiter stopped it, PARTIAL if
        any block failed, else OK."""
        if result.stopped_by == "limiter":
            return cls.LIMITER
        return cls.PARTIAL if result.partial else cls.OK

    @classmethod
    def for_error(cls, error: BaseException) -> Exit:
        """The code for an error that ended the run (BUG for anything unexpected)."""
        return next((c for t, c in _ERROR_EXITS if isinstance(error, t)), cls.BUG)


_ERROR_EXITS: list[tuple[type[RefineError], Exit]] = [
    (ConfigError, Exit.CONFIG),
    (InputError, Exit.INPUT),
    (OutputError, Exit.OUTPUT),
    (CassetteError, Exit.CASSETTE),
    (LimiterError, Exit.LIMITER),
]
