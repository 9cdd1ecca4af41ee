"""What every operator tool's command line shares: an argparse that raises instead of exiting,
its lines on stdout and stderr, the API key, and doctor's exit code for a failed check.

Each tool's ``command`` module (:mod:`owlai_refine.ops.stats.command`, ...) builds its parser
with :class:`Parser` and prints with :func:`out`; :mod:`owlai_refine.ops` runs it under the
guard that scrubs what is printed and turns every error into one line and an exit code.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from owlai_refine.errors import ConfigError

__all__ = ["EXIT_CHECK_FAILED", "Parser", "api_key", "err", "out"]

EXIT_CHECK_FAILED = 4


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting on a bad command line."""

    def error(self, message: str) -> NoReturn:
        raise ConfigError(message)


def out(text: str) -> None:
    """Print ``text`` and a newline on stdout."""
    sys.stdout.write(text + "\n")


def err(text: str) -> None:
    """Print ``text`` and a newline on stderr, flushed at once."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def api_key() -> str:
    """``$OPENAI_API_KEY``, else a placeholder; never a flag (flags show in ``ps``)."""
    return os.environ.get("OPENAI_API_KEY") or "EMPTY"
