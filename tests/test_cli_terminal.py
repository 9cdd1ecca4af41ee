"""``refine`` for a person at a terminal: progress and a summary instead of JSON,
every mistake caught before the first call, and no way to lose the original.

Model calls go to a real HTTP server on loopback (testsupport/fake_openai.py). A terminal is
simulated with ``TTY_COMPATIBLE=1`` (the variable rich reads) in a child process, or with a
rich ``Console(force_terminal=True)`` writing to a string.
"""

from __future__ import annotations

import io
import json
import re
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from rich.console import Console

from owlai_refine.cli import Exit, main
from owlai_refine.config import RefineConfig
from owlai_refine.errors import ConfigError
from owlai_refine.events import BlockSettled, CallFinished, CallStarted, RunStarted
from owlai_refine.pipeline.refiner import refine
from owlai_refine.results import BlockOutcome, OutcomeStatus
from tests.test_cli import KEY, TEXT, polish, run_cli, write
from testsupport.fake_openai import FakeOpenAI

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OWLAI_REFINE_BASE_URL", "OWLAI_REFINE_MODEL", "OWLAI_REFINE_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("TTY_COMPATIBLE", "0")  # the test runner's stderr may be a terminal


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(reply=polish) as s:
        yield s


def plain(text: str) -> str:
    """The text a person reads: colour and cursor codes removed, each redraw on its own line."""
    return ANSI.sub("", text).replace("\r", "\n")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# 1. --in-place never loses the original


def test_in_place_twice_keeps_the_original_and_never_overwrites_a_backup(
    tmp_path: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second ``--in-place`` that changes nothing leaves the file and writes no backup;
    one that changes the file again gets the next number, the first kept."""
    report = write(tmp_path, "ip.md", TEXT)
    args = [str(report), "--in-place", "--base-url", server.base_url]
    assert main(args) == Exit.OK
    once = report.read_bytes()
    assert once == TEXT.replace("says", "states").encode()
    assert (tmp_path / "ip.md.~1~").read_bytes() == TEXT.encode()
    assert "kept as " + str(tmp_path / "ip.md.~1~") in capsys.readouterr().err
    inode = report.stat().st_ino
    assert main(args) == Exit.OK  # nothing left to change
    assert report.read_bytes() == once and report.stat().st_ino == inode  # not rewritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ip.md", "ip.md.~1~"]
    assert f"nothing changed; {report} was left as it was, with no backup" in (
        capsys.readouterr().err
    )
    edited = once + b"\nA new paragraph says more.\n"
    report.write_bytes(edited)
    assert main(args) == Exit.OK  # a change again: the next backup, the first untouched
    assert (tmp_path / "ip.md.~1~").read_bytes() == TEXT.encode()
    assert (tmp_path / "ip.md.~2~").read_bytes() == edited
    assert "ip.md.~2~" in capsys.readouterr().err
    assert not (tmp_path / "ip.md.bak").exists()


# 2. progress at a terminal, JSON elsewhere


def test_at_a_terminal_a_progress_display_and_summary_replace_the_json(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    state = tmp_path / "state"
    done = run_cli(
        str(report), "-o", str(out), "--base-url", server.base_url,
        env={"TTY_COMPATIBLE": "1", "XDG_STATE_HOME": str(state), "COLUMNS": "160"},
    )  # fmt: skip
    assert done.returncode == Exit.OK, done.stderr
    err = plain(done.stderr)
    assert '"event"' not in err  # no JSON on the terminal
    assert "r.md" in err and "3/3" in err and "in flight" in err and "2 refined" in err
    ledger = state / "owlai-refine" / "ledger.jsonl"
    assert "refine: 3 of 3 blocks sent" in err
    assert f"wrote {out}" in err and f"usage ledger (JSON lines, report_id r): {ledger}" in err
    events = [json.loads(line)["event"] for line in ledger.read_text().splitlines()]
    assert events[0] == "refine.start" and events.count("refine.call") == 3
    assert "refine.call_started" not in events  # the display's own event writes no line
    assert out.read_bytes() == TEXT.replace("says", "states").encode()


def test_with_a_log_file_at_a_terminal_the_ledger_goes_there(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    log = tmp_path / "log.jsonl"
    done = run_cli(
        str(report), "-o", str(tmp_path / "o.md"), "--base-url", server.base_url,
        "--log-file", str(log), env={"TTY_COMPATIBLE": "1", "COLUMNS": "160"},
    )  # fmt: skip
    assert done.returncode == Exit.OK
    assert f"usage ledger (JSON lines, report_id r): {log}" in plain(done.stderr)
    assert "refine.done" in log.read_text()


def test_not_at_a_terminal_stderr_carries_the_json_log_as_before(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    done = run_cli(
        str(report), "-o", str(tmp_path / "o.md"), "--base-url", server.base_url,
        env={"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"},  # CI's colour switch is no terminal
    )  # fmt: skip
    assert done.returncode == Exit.OK
    events = [json.loads(line)["event"] for line in done.stderr.splitlines()]
    assert events == ["refine.start", "refine.call", "refine.call", "refine.call", "refine.done"]
    assert not (tmp_path / "state").exists()  # no ledger file was made


def test_the_live_display_shows_counts_in_flight_and_time() -> None:
    from owlai_refine.cli.progress import LiveProgress, RunTracker  # noqa: PLC0415

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=160)
    tracker = RunTracker()
    start = RunStarted("r", 6, 4, 2, "m", "self-hosted", "http://x/v1", 4, True)
    call = CallFinished("r", 0, "id", 1, "m", "self-hosted", "http://x/v1", 64, 10)
    rejected = BlockOutcome(
        block_id=0, kind="paragraph", line_span=(0, 1), status=OutcomeStatus.REJECTED,
        reasons=("language ko -> latin",), reason_groups=("language",),
    )  # fmt: skip
    with LiveProgress(console, tracker, "report.md") as live:
        tracker.sink(start)
        for block in range(3):
            tracker.sink(CallStarted("r", block, 1))
        tracker.sink(call)
        tracker.sink(BlockSettled("r", rejected))
        console.print(live.progress.get_renderable())  # the frame a person sees now
    frame = plain(buffer.getvalue())
    assert "report.md" in frame and "1/4" in frame
    assert "0 refined · 0 unchanged · 1 rejected · 0 truncated · 0 failed · 2 in flight" in frame
    assert "0:00:0" in frame and "eta" in frame
    assert tracker.reached == 1 and tracker.reasons == {"language": 1}


def test_the_default_ledger_follows_xdg_state_home(monkeypatch: pytest.MonkeyPatch) -> None:
    from owlai_refine.shell.files import default_ledger_path  # noqa: PLC0415

    monkeypatch.setenv("XDG_STATE_HOME", "/x/state")
    assert default_ledger_path() == Path("/x/state/owlai-refine/ledger.jsonl")
    monkeypatch.delenv("XDG_STATE_HOME")
    assert default_ledger_path() == Path.home() / ".local/state/owlai-refine/ledger.jsonl"


# 3. a wrong model or an unreachable server: one line before the first block, nothing written


def test_a_model_the_server_does_not_serve_is_refused_before_any_block(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    with FakeOpenAI(models=("llama-3-70b", "qwen3-32b")) as s:
        done = run_cli(str(report), "-o", str(out), "--base-url", s.base_url, "--model", "gpt-4o")
        posts = [x for x in s.seen if x.body]
    assert done.returncode == Exit.CONFIG
    assert done.stderr.splitlines() == [
        f"refine: model 'gpt-4o' is not served by {s.base_url}; it serves llama-3-70b, "
        "qwen3-32b (--model, OWLAI_REFINE_MODEL)"
    ]
    assert posts == [] and not out.exists() and report.read_bytes() == TEXT.encode()


def test_an_unreachable_server_is_one_line_naming_it_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    for model in ([], ["--model", "m"]):
        done = run_cli(str(report), "-o", str(out), "--base-url", url, *model)
        assert done.returncode == Exit.CONFIG
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"refine: cannot connect to {url} (") and "nothing was sent" in line
        assert not out.exists() and report.read_bytes() == TEXT.encode()


def test_the_embedded_model_refuses_another_model_name(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    done = run_cli(str(report), "-o", str(tmp_path / "o.md"), "--model", "gpt-4o")
    assert done.returncode == Exit.CONFIG
    (line,) = done.stderr.splitlines()
    assert "'gpt-4o'" in line and "embedded model 'smollm2'" in line and "--base-url" in line
    assert not (tmp_path / "o.md").exists()

    async def library() -> None:
        await refine(TEXT, RefineConfig(model="gpt-4o"))

    with pytest.raises(ConfigError, match="embedded model"):
        anyio.run(library)


def test_a_server_that_lists_no_models_is_not_held_against_the_name(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    with FakeOpenAI(reply=polish, models=()) as s:  # an empty list: nothing to check against
        code = main([str(report), "-o", str(tmp_path / "o.md"), "--base-url", s.base_url,
                     "--model", "fake-model"])  # fmt: skip
    assert code == Exit.OK


# 4. an alert's marker cannot be moved by a reply


def test_a_reply_that_moves_an_alert_marker_cannot_break_the_alert(tmp_path: Path) -> None:
    text = "# Plan\n\n> [!IMPORTANT]\n> We will ship the release in May.\n"
    report = write(tmp_path, "r.md", text)
    out = tmp_path / "out.md"
    with FakeOpenAI(reply=lambda t: f"Notably, [!IMPORTANT] {t}") as s:
        code = main([str(report), "-o", str(out), "--base-url", s.base_url])
        sent = [x.body["messages"][-1]["content"] for x in s.seen if x.body]
    assert code == Exit.OK
    assert all("[!IMPORTANT]" not in m for m in sent)  # the marker is never sent
    assert out.read_text() == text  # the reply added a marker: rejected, the alert intact


# 6. no work that is not needed


@pytest.mark.parametrize("text", ["", "# Only\n\n## Headings\n", "**Key Principles:**\n"])
def test_a_report_with_nothing_to_send_starts_no_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    import owlai_refine.serve.local  # noqa: PLC0415

    def no_server(*args: object, **kwargs: object) -> object:
        raise AssertionError("the embedded server was started")

    monkeypatch.setattr(owlai_refine.serve.local, "local_server", no_server)
    report = write(tmp_path, "r.md", text)
    out = tmp_path / "out.md"
    assert main([str(report), "-o", str(out)]) == Exit.OK
    assert out.read_text() == text


# 7. smaller


def test_a_dry_run_writes_nothing_so_its_output_path_is_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report), "--dry-run", "-o", str(tmp_path / "nodir" / "x.md")]) == Exit.OK
    assert not (tmp_path / "nodir").exists()
    out = capsys.readouterr().out
    assert "The team says the plan works [1]." in out  # each block's opening words
    assert "first item says yes" in out


def test_in_place_with_stdin_says_what_is_wrong(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-", "--in-place"]) == Exit.CONFIG
    err = capsys.readouterr().err
    assert "not '-' (stdin)" in err and "-o" not in err


def test_help_shows_the_defaults() -> None:
    done = run_cli("--help", env={"COLUMNS": "200", "XDG_STATE_HOME": ""})
    text = " ".join(done.stdout.split())
    for default in (
        "sampling temperature (default 0.2)",
        "(default info)",
        "default: 4 self-hosted, 12 cloud",
        "(default 30)",
        "~/.local/state/owlai-refine/ledger.jsonl",
    ):
        assert default in text, default


def test_in_place_at_a_terminal_in_process(
    tmp_path: Path,
    server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same run as a person sees it, in this process: the progress line is labelled with
    the report's name, the summary names the backup, and nothing of it reaches stdout."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "160")
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report), "--in-place", "--base-url", server.base_url]) == Exit.OK
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = plain(captured.err).splitlines()
    assert not any('"event"' in line for line in lines)  # the JSON log went to the ledger
    progress = [line for line in lines if "in flight" in line]
    assert progress and all(line.startswith("r.md ") for line in progress)
    backup = tmp_path / "r.md.~1~"
    assert f"  wrote {report} (the replaced text is kept as {backup})" in lines
    assert backup.read_bytes() == TEXT.encode()
    assert main([str(report), "--in-place", "--base-url", server.base_url]) == Exit.OK
    again = plain(capsys.readouterr().err).splitlines()
    assert f"  wrote nothing ({report} is unchanged; no backup kept)" in again
    assert not (tmp_path / "r.md.~2~").exists()
    ledger = tmp_path / "state" / "owlai-refine" / "ledger.jsonl"
    assert "refine.done" in ledger.read_text()


def test_a_dry_run_at_a_terminal_prints_the_plan_and_opens_no_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report), "--dry-run"]) == Exit.OK
    captured = capsys.readouterr()
    assert "The team says the plan works [1]." in captured.out and captured.err == ""
    assert not (tmp_path / "state").exists()  # a dry run writes nothing, not even the ledger
