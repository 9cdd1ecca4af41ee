"""``refine`` used as a hostile user would: full disks, devices, FIFOs and symlinks
as outputs, servers that answer garbage or echo our key, kills at chosen moments. Each ends
with the documented exit code and one line on stderr, no text lost and no secret written."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.cli import Exit, main
from tests.test_cli import KEY, REPO, TEXT, polish, run_cli, write
from testsupport.fake_openai import FakeOpenAI, Fault

BIG = "# Big\n\n" + "".join(f"Paragraph {i} says the plan works.\n\n" for i in range(4000))


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OWLAI_REFINE_BASE_URL", "OWLAI_REFINE_MODEL", "OWLAI_REFINE_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("TTY_COMPATIBLE", "0")


def run_limited(*args: str, fsize: int, **kw: Any) -> subprocess.CompletedProcess[str]:
    """``refine ARGS`` in a child whose files may grow to ``fsize`` bytes (``ulimit -f``):
    a write past it fails with EFBIG, as on a full disk."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return subprocess.run(
        [sys.executable, "-m", "owlai_refine", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        preexec_fn=limit,
        timeout=120,
        check=False,
        **kw,
    )


def one_line(stderr: str) -> None:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert KEY not in stderr


# Item 3: a backup is whole or absent, and made before anything is sent


def test_a_backup_that_cannot_be_written_stops_the_run_before_any_request(
    tmp_path: Path,
) -> None:
    report = write(tmp_path, "r.md", BIG)
    with FakeOpenAI(reply=polish) as server:
        done = run_limited(
            str(report), "--in-place", "--base-url", server.base_url, fsize=len(BIG) // 2
        )
        assert done.returncode == Exit.OUTPUT, done.stderr
        assert not server.seen  # nothing sent
    one_line(done.stderr)
    assert report.read_text() == BIG
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.md"]  # no partial backup, no .tmp


# Item 4: devices, FIFOs and symlinks as outputs


def test_output_to_a_fifo_is_streamed_into_it(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with FakeOpenAI(reply=polish) as server:
        done = run_cli(str(report), "-o", str(fifo), "--base-url", server.base_url)
    reader.join(10)
    assert done.returncode == Exit.OK, done.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)  # still a FIFO
    assert got == [polish(TEXT).encode()]


def test_output_through_a_symlink_replaces_the_file_it_names(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    target = write(tmp_path, "target.md", "old\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with FakeOpenAI(reply=polish) as server:
        done = run_cli(str(report), "-o", str(link), "--base-url", server.base_url)
    assert done.returncode == Exit.OK, done.stderr
    assert link.is_symlink() and link.resolve() == target
    assert target.read_bytes() == polish(TEXT).encode()


def test_in_place_on_a_symlink_refines_its_target(tmp_path: Path) -> None:
    target = write(tmp_path, "target.md", TEXT)
    link = tmp_path / "link.md"
    link.symlink_to(target)
    with FakeOpenAI(reply=polish) as server:
        done = run_cli(str(link), "--in-place", "--base-url", server.base_url)
    assert done.returncode == Exit.OK, done.stderr
    assert link.is_symlink() and link.resolve() == target
    assert target.read_bytes() == polish(TEXT).encode()
    assert (tmp_path / "target.md.~1~").read_bytes() == TEXT.encode()


# Items 8, 9: garbage with HTTP 200, a lone surrogate


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_garbage_with_http_200_is_a_failed_block_not_an_unreachable_server(
    tmp_path: Path, stream: bool
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    html = Fault(body="<html>502 Bad Gateway</html>", content_type="text/html")
    with FakeOpenAI(fault=lambda n, body: html) as server:
        args = [str(report), "--base-url", server.base_url, *([] if stream else ["--no-stream"])]
        done = run_cli(*args)
    assert done.returncode == Exit.PARTIAL, done.stderr
    one_line(done.stderr.splitlines()[-1])
    assert done.stdout == TEXT.replace("\r\n", "\n")  # text mode reads CRLF as LF
    assert "malformed reply" in done.stderr.splitlines()[-1]


def test_a_lone_surrogate_in_a_reply_is_never_written_or_logged(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", "The team says the plan works.\n")
    content = "The team states \\udc80 the plan works."
    body = '{"choices": [{"message": {"content": "' + content + '"}, "finish_reason": "stop"}]}'
    log = tmp_path / "log.jsonl"
    with FakeOpenAI(fault=lambda n, b: Fault(body=body)) as server:
        done = run_cli(
            str(report), "--base-url", server.base_url, "--no-stream",
            "--log-level", "debug", "--log-file", str(log),
        )  # fmt: skip
    assert done.returncode == Exit.PARTIAL, done.stderr
    one_line(done.stderr)
    assert done.stdout == "The team says the plan works.\n"
    for line in log.read_text(encoding="utf-8").splitlines():
        json.loads(line)


# Item 10: every failure its documented exit code


def test_a_log_file_on_a_full_disk_is_an_output_error(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", BIG)
    with FakeOpenAI(reply=polish) as server:
        done = run_limited(
            str(report), "--base-url", server.base_url, "--log-file", str(tmp_path / "l.jsonl"),
            fsize=4096,
        )  # fmt: skip
    assert done.returncode == Exit.OUTPUT, done.stderr[-2000:]
    one_line(done.stderr)
    assert done.stdout == ""  # nothing written


def test_a_cassette_on_a_full_disk_is_a_cassette_error(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", BIG)
    with FakeOpenAI(reply=polish) as server:
        done = run_limited(
            str(report), "--base-url", server.base_url, "--record", str(tmp_path / "c.jsonl"),
            fsize=4096,
        )  # fmt: skip
    assert done.returncode == Exit.CASSETTE, done.stderr[-2000:]
    one_line(done.stderr.splitlines()[-1])
    assert done.stdout == ""


def test_stdout_on_a_full_device_is_an_output_error(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    with FakeOpenAI(reply=polish) as server, open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "owlai_refine", str(report), "--base-url", server.base_url],
            stdout=full, stderr=subprocess.PIPE, text=True, cwd=REPO, timeout=120, check=False,
        )  # fmt: skip
    assert done.returncode == Exit.OUTPUT, done.stderr
    one_line(done.stderr)


def test_a_bad_port_in_the_limiter_url_is_a_configuration_error(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    with FakeOpenAI(reply=polish) as server:
        done = run_cli(str(report), "--base-url", server.base_url, "--limiter",
                       "redis://:hunter2-secret@127.0.0.1:99999/0")  # fmt: skip
    assert done.returncode == Exit.CONFIG, done.stderr
    one_line(done.stderr)
    assert "hunter2-secret" not in done.stderr


def test_a_cassette_entry_with_a_non_numeric_status_is_a_cassette_error(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    cassette = tmp_path / "c.jsonl"
    with FakeOpenAI(reply=polish) as server:
        recorded = run_cli(str(report), "--base-url", server.base_url, "--record", str(cassette))
    assert recorded.returncode == Exit.OK, recorded.stderr
    entries = [json.loads(line) for line in cassette.read_text().splitlines()]
    for entry in entries:
        entry["response"]["status"] = "two hundred"
    cassette.write_text("".join(json.dumps(e) + "\n" for e in entries))
    done = run_cli(str(report), "--replay", str(cassette))
    assert done.returncode == Exit.CASSETTE, done.stderr
    one_line(done.stderr)


SLOW_FSYNC = """
import os, sys, time
marker = sys.argv[1]
def slow(fd):
    open(marker, "w").close()
    time.sleep(30)
os.fsync = slow
sys.argv = ["refine", *sys.argv[2:]]
from owlai_refine.cli import main
sys.exit(main())
"""


def test_sigterm_during_the_final_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    marker = tmp_path / "writing"
    with FakeOpenAI(reply=polish) as server:
        child = subprocess.Popen(
            [sys.executable, "-c", SLOW_FSYNC, str(marker), str(report), "-o",
             str(out_dir / "o.md"), "--base-url", server.base_url],
            cwd=REPO, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=30)
    assert child.returncode == Exit.TERMINATED, stderr
    one_line(stderr)
    assert list(out_dir.iterdir()) == []


# Items 11, 12: the key never leaves


def test_an_internal_error_logs_no_locals_and_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def planted(*args: object, **kwargs: object) -> None:
        raise RuntimeError("planted bug")

    monkeypatch.setattr("owlai_refine.cli.run.read_report", planted)
    log = tmp_path / "log.jsonl"
    limiter = "redis://:hunter2-secret@127.0.0.1:6379/0"
    code = main(["r.md", "--log-file", str(log), "--limiter", limiter])
    assert code == Exit.BUG
    text = log.read_text()
    assert "planted bug" in text
    assert KEY not in text and "hunter2-secret" not in text and '"locals"' not in text
    assert KEY not in capsys.readouterr().err


@pytest.mark.parametrize("status", [400, 500])
def test_a_server_echoing_our_key_never_gets_it_printed_or_logged(
    tmp_path: Path, status: int
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    echo = Fault(status=status, message=f"bad request; headers: Authorization: Bearer {KEY}")
    log = tmp_path / "log.jsonl"
    with FakeOpenAI(fault=lambda n, body: echo) as server:
        done = run_cli(str(report), "--base-url", server.base_url, "--log-file", str(log))
    assert done.returncode == Exit.PARTIAL, done.stderr
    assert KEY not in done.stderr and KEY not in log.read_text() and KEY not in done.stdout
    assert "[redacted]" in done.stderr


# Item 14: names and errors are text, not markup


def test_the_terminal_summary_prints_names_and_errors_as_they_are(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out[v2].md"
    bad = Fault(status=400, message="no route [/v2/chat] here")
    with FakeOpenAI(fault=lambda n, body: bad) as server:
        done = run_cli(
            str(report), "-o", str(out), "--base-url", server.base_url,
            env={"TTY_COMPATIBLE": "1", "XDG_STATE_HOME": str(tmp_path / "state")},
        )  # fmt: skip
    assert done.returncode == Exit.PARTIAL, done.stderr
    assert f"wrote {out}" in done.stderr
    assert "[/v2/chat]" in done.stderr
    assert out.read_bytes() == TEXT.encode()
