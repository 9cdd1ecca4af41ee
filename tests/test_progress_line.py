"""The progress line at any width, Ctrl-C at a real terminal, and the summary's rejection counts.
Frames are drawn by rich on a ``Console`` of a fixed width; the Ctrl-C run is the
real CLI on a pseudo-terminal, against a real HTTP server on loopback."""

from __future__ import annotations

import fcntl
import io
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from owlai_refine.cli.progress import _ECHO_ROOM, LiveProgress, RunTracker, fitted_line, summary
from owlai_refine.events import BlockSettled, CallStarted, RunStarted
from owlai_refine.results import (
    MORE_REASONS,
    BlockOutcome,
    OutcomeStatus,
    RefineResult,
    TokenTotals,
)
from tests.test_cli import KEY, REPO, TEXT, write
from testsupport.fake_openai import FakeOpenAI

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
NAME = "inference-memory-report.md"


def _outcome(status: OutcomeStatus, *groups: str, block: int = 0) -> BlockOutcome:
    return BlockOutcome(
        block_id=block, kind="paragraph", line_span=(block, block + 1), status=status,
        reasons=tuple(f"{g} x" for g in groups), reason_groups=groups,
    )  # fmt: skip


def _frame(width: int) -> str:
    """The line a person sees at ``width`` columns, 41 blocks to send, 12 done, 4 in flight."""
    tracker = RunTracker()
    with LiveProgress(
        Console(file=io.StringIO(), force_terminal=True, width=width), tracker, NAME
    ) as live:
        tracker.sink(RunStarted("r", 45, 41, 4, "m", "self-hosted", "http://x/v1", 4, True))
        for block in range(12):
            status = OutcomeStatus.REJECTED if block % 4 == 0 else OutcomeStatus.REFINED
            tracker.sink(BlockSettled("r", _outcome(status, "lost clause", block=block)))
        for block in range(12, 16):
            tracker.sink(CallStarted("r", block, 1))
        shown = io.StringIO()
        Console(file=shown, force_terminal=True, width=width).print(live.progress.get_renderable())
    return ANSI.sub("", shown.getvalue()).replace("\r", "")


@pytest.mark.parametrize("width", [40, 80, 120])
def test_the_line_keeps_done_of_total_and_the_eta_at_any_width(width: int) -> None:
    frame = _frame(width)
    (line,) = frame.splitlines()  # one line, never wrapped
    assert cell_len(line) <= width - _ECHO_ROOM
    assert "12/41" in line and "eta " in line and "━" in line  # the count, the ETA, the bar
    if width == 120:  # room for all: the name cut, every status
        assert "9 refined · 0 unchanged · 3 rejected · 0 truncated · 0 failed · 4 in flight" in line
    elif width == 80:  # the name goes first, then the statuses that have none
        assert "infer" not in line and "9 refined · 3 rejected · 4 in flight" in line
        assert "unchanged" not in line
    else:  # then the counts
        assert "refined" not in line and "in flight" not in line


def test_what_goes_first_is_the_name_then_the_counts_then_the_bar() -> None:
    counts = (
        "2 refined · 0 unchanged · 1 rejected · 4 in flight",
        "2 refined · 1 rejected · 4 in flight",
    )
    args = {
        "name": NAME,
        "done": 3,
        "total": 41,
        "counts": counts,
        "elapsed_s": 75.0,
        "eta_s": 30.0,
    }
    name, bar, rest = fitted_line(200, **args)  # type: ignore[arg-type]
    assert (name, bar) == (NAME, 24) and rest == f"3/41 · {counts[0]} · 0:01:15 · eta 0:00:30"
    name, bar, rest = fitted_line(120, **args)  # type: ignore[arg-type]
    assert name.endswith("…") and NAME.startswith(name[:-1]) and bar == 24 and counts[0] in rest
    assert fitted_line(100, **args)[0] == ""  # type: ignore[arg-type]
    assert counts[1] in fitted_line(70, **args)[2]  # type: ignore[arg-type]
    name, bar, rest = fitted_line(40, **args)  # type: ignore[arg-type]
    assert (name, bar, rest) == ("", 11, "3/41 · 0:01:15 · eta 0:00:30")
    assert fitted_line(20, **args) == ("", 0, "3/41 · eta 0:00:30")  # type: ignore[arg-type]
    assert fitted_line(12, **args)[2] == "3/41 eta 0:00:30"  # type: ignore[arg-type]


def test_the_summary_counts_each_rejected_block_once_under_its_first_reason() -> None:
    outcomes = (
        _outcome(OutcomeStatus.REJECTED, "lost clause", "lost name", MORE_REASONS, block=0),
        _outcome(OutcomeStatus.REJECTED, "lost clause", block=1),
        _outcome(OutcomeStatus.REJECTED, "language", "lost clause", block=2),
        *(_outcome(OutcomeStatus.REJECTED, f"group {n}", block=3 + n) for n in range(5)),
        _outcome(OutcomeStatus.REFINED, block=9),
    )
    tracker = RunTracker()
    for o in outcomes:
        tracker.sink(BlockSettled("r", o))
    result = RefineResult(
        report_id="r", text="", outcomes=outcomes, tokens=TokenTotals(), elapsed_s=1.0
    )
    lines = summary(result, tracker, wrote="out.md", ledger="ledger.jsonl")
    assert "8 rejected" in lines[0]
    assert lines[-1] == (
        "  rejected by the guard, original kept: 8 blocks, by first reason: 2 lost clause, "
        "1 language, 1 group 0, 1 group 1, 1 group 2, 2 other"
    )
    assert MORE_REASONS not in " ".join(lines)


def _pty_run(tmp_path: Path, url: str, width: int) -> bytes:
    """``refine`` on a pseudo-terminal of ``width`` columns, Ctrl-C typed once the line shows;
    all it wrote to the terminal."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 12, width, 0, 0))
    report = write(tmp_path, NAME, TEXT)  # a long name: at 120 columns it fills the line
    # the child opens the terminal after setsid, so it becomes its controlling terminal: the
    # ^C typed goes to it as SIGINT, as at a person's terminal
    boot = (
        "import os, sys; os.setsid(); fd = os.open(sys.argv[1], os.O_RDWR); "
        "[os.dup2(fd, i) for i in (0, 1, 2)]; "
        "os.execv(sys.executable, [sys.executable, '-m', 'owlai_refine', *sys.argv[2:]])"
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY, "XDG_STATE_HOME": str(tmp_path), "TERM": "xterm"}
    for name in ("TTY_COMPATIBLE", "COLUMNS", "OWLAI_REFINE_BASE_URL", "OWLAI_REFINE_MODEL"):
        env.pop(name, None)
    quiet = subprocess.DEVNULL
    child = subprocess.Popen(
        [sys.executable, "-c", boot, os.ttyname(slave), str(report), "-o", str(tmp_path / "o.md"),
         "--base-url", url],
        env=env, cwd=REPO, stdin=quiet, stdout=quiet, stderr=quiet,
    )  # fmt: skip
    out = b""
    typed = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the parent keeps ``slave`` open: no EOF, no EIO
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            out += os.read(master, 65536)
        elif child.poll() is not None:
            break
        if not typed and b"0/3" in out:  # the run has started: its blocks are in flight
            os.write(master, b"\x03")
            typed = True
    child.wait(timeout=30)
    os.close(master)
    os.close(slave)
    assert typed and child.returncode == 130
    return out


@pytest.mark.parametrize("width", [40, 80, 120])
def test_ctrl_c_at_a_terminal_leaves_the_line_once(tmp_path: Path, width: int) -> None:
    with FakeOpenAI(latency_s=lambda body: 30.0) as server:
        out = _pty_run(tmp_path, server.base_url, width).decode()
    *redraws, last = out.split("refine: interrupted")[0].split("\r\x1b[2K")
    for frame in [*redraws[1:], last]:  # each redraw: one line, short of the width
        text = ANSI.sub("", frame)
        assert "\n" not in text.rstrip("\r\n") and cell_len(text.strip()) < width
    # the terminal echoed ^C after the line, and it still fitted: no wrap, no second line
    (echoed,) = [ANSI.sub("", f) for f in redraws if "^C" in f]
    assert cell_len(echoed.strip()) < width
    final = ANSI.sub("", last)
    assert final.count("\n") == 1 and "0/3" in final and "eta" in final and "^C" not in final
    assert "interrupted; no output was written" in out
