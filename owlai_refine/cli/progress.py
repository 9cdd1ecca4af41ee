"""What a person at a terminal sees while ``refine`` runs: a live progress line, then a summary.

The display is fed by the run's events: :meth:`RunTracker.sink` is one of the refine's event
sinks (``owlai_refine.events``), beside the JSON log's. The tracker is used in every mode:
besides feeding the display it tells the CLI whether any request reached a server. The display
itself (``rich``) is drawn only when stderr is a terminal; elsewhere stderr carries the JSON log
exactly as before.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from owlai_refine.events import BlockSettled, CallFinished, CallStarted, RefineEvent, RunStarted
from owlai_refine.results import RefineResult

if TYPE_CHECKING:  # rich loads only when a display is drawn (at a terminal)
    from rich.console import Console
    from rich.progress import TaskID

__all__ = ["LiveProgress", "RunTracker", "stderr_is_terminal", "summary"]

_SHOWN = ("refined", "unchanged", "rejected", "truncated", "failed")
_STYLE = {"refined": "green", "rejected": "yellow", "truncated": "yellow", "failed": "red"}


def stderr_is_terminal(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (default ``sys.stderr``) is a terminal a person watches.

    ``TTY_COMPATIBLE=1`` forces yes and ``TTY_COMPATIBLE=0`` forces no (the variable ``rich``
    reads); ``FORCE_COLOR``, which CI systems set for colour, does not count, so a pipeline's
    stderr keeps its JSON log."""
    forced = os.environ.get("TTY_COMPATIBLE", "")
    if forced in ("0", "1"):
        return forced == "1"
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class RunTracker:
    """Counts of one run, from its log events: blocks to send, outcomes so far, requests in
    flight, and requests that reached a server (answered with any HTTP status)."""

    def __init__(self) -> None:
        self.to_send: int | None = None
        """Blocks the run sends (``None`` until ``refine.start``)."""
        self.skipped = 0
        self.outcomes: Counter[str] = Counter()
        """Blocks finished so far, by status."""
        self.reasons: Counter[str] = Counter()
        """Reason groups of rejected blocks (``language``, ``too short``, ...)."""
        self.in_flight = 0
        self.requests = 0
        self.reached = 0
        """Requests a server answered (any HTTP status, or a reply)."""
        self.last_error: str | None = None
        self.model: str | None = None
        self.base_url: str | None = None
        self.on_change: Callable[[], None] | None = None

    @property
    def done(self) -> int:
        """Blocks sent that have their outcome."""
        return sum(self.outcomes.values())

    def sink(self, event: RefineEvent) -> None:
        """An event sink (see ``owlai_refine.events``): take ``event`` into the counts."""
        if isinstance(event, RunStarted):
            self.to_send, self.skipped = event.to_send, event.skipped
            self.model, self.base_url = event.model, event.base_url
        elif isinstance(event, CallStarted):
            self.in_flight += 1
        elif isinstance(event, CallFinished):
            self.in_flight = max(0, self.in_flight - 1)
            self.requests += 1
            if event.status_code is not None or event.error is None:
                self.reached += 1
            if event.error:
                self.last_error = event.error
        elif isinstance(event, BlockSettled):
            self.outcomes[event.outcome.status.value] += 1
            self.reasons.update(set(event.outcome.reason_groups))
        else:
            return
        if self.on_change is not None:
            self.on_change()

    def counts_text(self, markup: bool = True) -> str:
        """``2 refined · 1 unchanged · 0 rejected · 0 truncated · 0 failed · 3 in flight``."""
        parts = []
        for status in _SHOWN:
            text = f"{self.outcomes[status]} {status}"
            style = _STYLE.get(status)
            shown = markup and style and self.outcomes[status]
            parts.append(f"[{style}]{text}[/]" if shown else text)
        parts.append(f"{self.in_flight} in flight")
        return " · ".join(parts)


class LiveProgress:
    """The live display on a terminal: ``name ━━━━ 12/41 · counts · in flight · elapsed · ETA``.

    ``with LiveProgress(console, tracker, name):`` draws it (four times a second, on
    ``console``, normally stderr) until the block ends; the tracker's events update it."""

    def __init__(self, console: Console, tracker: RunTracker, name: str) -> None:
        from rich.markup import escape  # noqa: PLC0415 - only at a terminal
        from rich.progress import (  # noqa: PLC0415 - only at a terminal
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.console = console
        self.tracker = tracker
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            refresh_per_second=4,
        )
        self.task: TaskID = self.progress.add_task(escape(name), total=None, detail="starting")

    def update(self) -> None:
        """Redraw from the tracker's counts."""
        t = self.tracker
        detail = t.counts_text() if t.to_send is not None else "starting"
        self.progress.update(self.task, total=t.to_send, completed=t.done, detail=detail)

    def __enter__(self) -> LiveProgress:
        self.tracker.on_change = self.update
        self.progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.tracker.on_change = None
        if exc_type is None:
            self.update()
        self.progress.stop()


def _minutes(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds} s"


def summary(
    result: RefineResult,
    tracker: RunTracker,
    *,
    wrote: str,
    ledger: str,
    backup: str | None = None,
) -> list[str]:
    """The closing lines for a person (rich markup): what happened to the blocks, where the
    refined report and the usage ledger went, and why blocks were rejected. Names and error
    texts are escaped: ``out[v2].md`` or an error naming ``[/v2/chat]`` print as they are."""
    from rich.markup import escape  # noqa: PLC0415 - rich loads only at a terminal

    counts = result.counts
    sent = sum(counts.get(s, 0) for s in _SHOWN)
    outcome = ", ".join(
        f"[{_STYLE[s]}]{counts[s]} {s}[/]" if s in _STYLE else f"{counts[s]} {s}"
        for s in _SHOWN
        if counts.get(s)
    )
    lines = [
        f"refine: {sent} of {len(result.outcomes)} blocks sent in {_minutes(result.elapsed_s)}"
        + (f": {outcome}" if outcome else "")
        + f"; {counts.get('skipped', 0)} skipped (nothing to edit)"
        + (f"; {result.tokens.requests} requests" if result.tokens.requests else ""),
        f"  wrote {escape(wrote)}"
        + (f" (the replaced text is kept as {escape(backup)})" if backup else ""),
        f"  usage ledger (JSON lines, report_id {escape(result.report_id)}): {escape(ledger)}",
    ]
    if tracker.reasons:
        top = ", ".join(f"{n} {escape(group)}" for group, n in tracker.reasons.most_common(5))
        lines.append(f"  rejected by the guard, original kept: {top}")
    if result.failed:
        lines.append(f"  [red]failed[/], original kept: {escape(result.failed[0].reason or '')}")
    return lines
