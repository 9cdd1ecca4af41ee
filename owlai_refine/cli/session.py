"""Where one ``refine`` run's output for people and for machines goes (the CLI's session)."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from owlai_refine.cli.progress import LiveProgress, RunTracker, stderr_is_terminal
from owlai_refine.errors import OutputError
from owlai_refine.shell.files import default_ledger_path, home

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Session"]


class _LogFile:
    """The JSON log's file: a write that fails (a full disk) raises :class:`OutputError` once,
    which ends the run before anything is written (exit 4); later lines are dropped."""

    def __init__(self, inner: TextIO, path: Path) -> None:
        self._inner, self._path, self.failed = inner, path, False

    def write(self, text: str) -> int:
        if self.failed:
            return len(text)
        try:
            return self._inner.write(text)
        except OSError as exc:
            self.failed = True
            raise OutputError(f"{self._path}: cannot write the log ({exc.strerror})") from exc

    def flush(self) -> None:
        if not self.failed:
            try:
                self._inner.flush()
            except OSError as exc:
                self.failed = True
                raise OutputError(f"{self._path}: cannot write the log ({exc.strerror})") from exc

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._inner.close()

    def isatty(self) -> bool:
        return False


class Session:
    """Where this run's output for people and for machines goes: at a terminal, a progress
    display and summary on stderr and the JSON log in a file (``--log-file`` or the default
    ledger); elsewhere the JSON log on stderr (or ``--log-file``) as before."""

    def __init__(self, args: argparse.Namespace, err: TextIO) -> None:
        self.err = err
        self.tracker = RunTracker()
        self.console: Console | None = None
        self.ledger = args.log_file or ""
        self.log_stream: TextIO = err
        if stderr_is_terminal(err) and not args.dry_run:
            from rich.console import Console  # noqa: PLC0415 - only at a terminal

            self.console = Console(file=err, force_terminal=True, highlight=False)
            self.ledger = args.log_file or home(default_ledger_path())
            path = Path(args.log_file) if args.log_file else default_ledger_path()
            if not args.log_file:
                with contextlib.suppress(OSError):
                    path.parent.mkdir(parents=True, exist_ok=True)
            self.log_stream = self._open(path)
        elif args.log_file:
            self.log_stream = self._open(Path(args.log_file))

    @staticmethod
    def _open(path: Path) -> TextIO:
        try:
            return cast(TextIO, _LogFile(path.open("a", encoding="utf-8", buffering=1), path))
        except OSError as exc:
            raise OutputError(f"{path}: cannot open log file ({exc.strerror})") from exc

    def live(self, name: str) -> contextlib.AbstractContextManager[object]:
        """The live display while the run goes (nothing when stderr is not a terminal)."""
        if self.console is None:
            return contextlib.nullcontext()
        label = "stdin" if name == "-" else Path(name).name
        return LiveProgress(self.console, self.tracker, label)

    def close(self) -> None:
        if self.log_stream is not self.err:
            self.log_stream.close()
