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

__all__ = ["LiveProgress", "RunTracker", "fitted_line", "stderr_is_terminal", "summary"]

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
        """Rejected blocks by the group of their first reason (``language``, ``too short``,
        ...): each block counted once, so the counts add up to the rejected blocks."""
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
            if groups := event.outcome.groups:
                self.reasons[groups[0]] += 1
        else:
            return
        if self.on_change is not None:
            self.on_change()

    def counts_text(self, markup: bool = True, *, short: bool = False) -> str:
        """``2 refined · 1 unchanged · 0 rejected · 0 truncated · 0 failed · 3 in flight``;
        ``short``: the statuses with none left out (``2 refined · 1 unchanged · 3 in
        flight``)."""
        parts = []
        for status in _SHOWN:
            if short and not self.outcomes[status]:
                continue
            text = f"{self.outcomes[status]} {status}"
            style = _STYLE.get(status)
            shown = markup and style and self.outcomes[status]
            parts.append(f"[{style}]{text}[/]" if shown else text)
        parts.append(f"{self.in_flight} in flight")
        return " · ".join(parts)


def _clock(seconds: float | None) -> str:
    """``0:01:05``; ``-:--:--`` when not known yet."""
    if seconds is None:
        return "-:--:--"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"


_SEP = " \u00b7 "
_BAR = (24, 6, 4)
"""The bar's widest, its least beside the counts, and its least at all (in cells)."""
_ECHO_ROOM = 3
"""Cells left free at the end of the line: a terminal echoes Ctrl-C as ``^C`` where the cursor
stands (after the line); in a full line the echo would wrap, and the next redraw would leave the
old line above the new one."""
_MIN_NAME = 8
"""The fewest cells a shortened report name is shown in (``infere…``), else it is dropped."""


def fitted_line(
    width: int,
    *,
    name: str,
    done: int,
    total: int | None,
    counts: tuple[str, str] | None,
    elapsed_s: float | None,
    eta_s: float | None,
) -> tuple[str, int, str]:
    """The parts of a progress line that fit in ``width`` cells: ``(name, bar width, rest)``,
    the name possibly cut with ``…`` or empty, the bar width 0 when it is dropped, ``rest``
    the text after the bar (``12/41 · 2 refined · 4 in flight · 0:00:12 · eta 0:00:30``).

    ``counts``: the per-status counts in full and short (nonzero only) forms, rich markup
    (``None`` while starting). Done/total and the ETA are kept at any width; what does not fit
    goes first, in this order: the report name (cut, then dropped), the elapsed time, the
    counts (the short form, then none; the elapsed time comes back beside each when it fits),
    the bar (narrowed from 24 cells to 6 while counts are shown, to 4 without them, then
    dropped). Widths are measured in terminal cells
    (``rich.cells.cell_len``), markup excluded."""
    from rich.cells import cell_len, set_cell_size  # noqa: PLC0415 - only at a terminal
    from rich.text import Text  # noqa: PLC0415 - only at a terminal

    count = f"{done}/{total}" if total is not None else f"{done}/?"
    eta = f"eta {_clock(eta_s)}"
    forms: list[str | None] = [*counts, None] if counts else [None]
    for form in forms:
        for shown_elapsed in (True, False):
            rest = _SEP.join(
                p for p in (count, form, _clock(elapsed_s) if shown_elapsed else None, eta) if p
            )
            room = width - cell_len(Text.from_markup(rest).plain)
            if room < (_BAR[1] if form else _BAR[2]) + 1:
                continue
            bar = min(_BAR[0], room - 1)
            left = room - bar - 1
            if form is not forms[0] or not shown_elapsed:
                return "", bar, rest  # the name went first
            if cell_len(name) + 1 <= left:
                return name, bar, rest
            if left - 1 >= _MIN_NAME:
                return set_cell_size(name, left - 2) + "\u2026", bar, rest
            return "", bar, rest
    short = f"{count}{_SEP}{eta}"
    return "", 0, short if cell_len(short) <= width else f"{count} {eta}"


class LiveProgress:
    """The live display on a terminal: ``name ━━━━ 12/41 · counts · in flight · elapsed · eta``,
    one line fitted to the terminal's width (:func:`fitted_line`).

    ``with LiveProgress(console, tracker, name):`` draws it (four times a second, on
    ``console``, normally stderr) until the block ends; the tracker's events update it. When
    the block ends, by an error or Ctrl-C too, the line is drawn once more, whole, and the
    cursor moves below it: the line is kept :data:`_ECHO_ROOM` cells short of the width, so the
    terminal's ``^C`` never wraps it onto a second line."""

    def __init__(self, console: Console, tracker: RunTracker, name: str) -> None:
        from rich.console import ConsoleOptions, RenderResult  # noqa: PLC0415 - at a terminal
        from rich.progress import Progress  # noqa: PLC0415 - only at a terminal
        from rich.progress_bar import ProgressBar  # noqa: PLC0415 - only at a terminal
        from rich.text import Text  # noqa: PLC0415 - only at a terminal

        self.console = console
        self.tracker = tracker
        self.name = name
        live = self

        class _Line:
            def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
                task = live.progress.tasks[0]
                t = live.tracker
                counts = (
                    (t.counts_text(), t.counts_text(short=True)) if t.to_send is not None else None
                )
                name, bar, rest = fitted_line(
                    options.max_width - _ECHO_ROOM, name=live.name, done=t.done, total=t.to_send,
                    counts=counts, elapsed_s=task.elapsed, eta_s=task.time_remaining,
                )  # fmt: skip
                if name:
                    yield Text(name + " ", style="bold", end="")
                if bar:
                    yield ProgressBar(task.total, task.completed, width=bar)
                    yield Text(" ", end="")
                line = Text.from_markup(rest, end="")
                line.no_wrap, line.overflow = True, "crop"
                yield line

        class _Fitted(Progress):
            def get_renderables(self) -> list[_Line]:
                return [_Line()]

        self.progress = _Fitted(console=console, refresh_per_second=4)
        self.task: TaskID = self.progress.add_task(name, total=None)

    def update(self) -> None:
        """Redraw from the tracker's counts."""
        t = self.tracker
        self.progress.update(self.task, total=t.to_send, completed=t.done)

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
        self.update()
        self.progress.stop()


def _minutes(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds >= 60 else f"{seconds} s"


def _rejections(first: Counter[str], escape: Callable[[str], str]) -> str:
    """``rejected by the guard, original kept: 3 blocks, by first reason: 2 lost clause, 1
    language``: each block once, under the group of its first reason (its others are in the
    ledger), the five commonest named and the rest as ``N other``, so the counts add up."""
    total = sum(first.values())
    top = first.most_common(5)
    parts = [f"{n} {escape(group)}" for group, n in top]
    if rest := total - sum(n for _, n in top):
        parts.append(f"{rest} other")
    blocks = "1 block" if total == 1 else f"{total} blocks"
    return f"rejected by the guard, original kept: {blocks}, by first reason: {', '.join(parts)}"


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
        lines.append("  " + _rejections(tracker.reasons, escape))
    if result.failed:
        lines.append(f"  [red]failed[/], original kept: {escape(result.failed[0].reason or '')}")
    return lines
