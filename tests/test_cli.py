"""The ``refine`` command: files, flags, environment, exit codes, cassettes, and what it never
leaks. Model calls go to a real HTTP server on loopback (testsupport/fake_openai.py)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from owlai_refine import __version__
from owlai_refine.cli import Exit, main, split_command
from owlai_refine.config import RetryPolicy
from owlai_refine.pipeline.refiner import refine
from owlai_refine.serve.preflight import check_servers
from testsupport.fake_openai import FakeOpenAI, Fault

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-PLANTED-never-log-me-0123456789"
TEXT = (
    "# Notes\r\n\r\nThe team says the plan works [1].\r\n\r\n- first item says yes\r\n- second\r\n"
)


def polish(text: str) -> str:
    return text.replace("says", "states")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OWLAI_REFINE_BASE_URL", "OWLAI_REFINE_MODEL", "OWLAI_REFINE_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.fixture
def server() -> Any:
    with FakeOpenAI(reply=polish) as s:
        yield s


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m owlai_refine`` as a user would, in a child process."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "owlai_refine", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=REPO,
        timeout=120,
        check=False,
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_refines_to_stdout_with_settings_from_the_environment(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, capfdbinary: Any
) -> None:
    monkeypatch.setenv("OWLAI_REFINE_BASE_URL", server.base_url)
    monkeypatch.setenv("OWLAI_REFINE_BACKEND", "cloud")
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report), "--log-file", str(tmp_path / "log.jsonl")]) == Exit.OK
    out = capfdbinary.readouterr().out
    assert out == TEXT.replace("says", "states").encode()
    lines = [json.loads(x) for x in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert lines[0]["event"] == "refine.start" and lines[0]["backend"] == "cloud"
    assert lines[0]["model"] == "fake-model"  # the server's only model, asked for
    assert lines[-1]["event"] == "refine.done" and lines[-1]["refined"] == 2
    assert report.read_bytes() == TEXT.encode()  # the input is never touched


def test_output_file_is_written_and_the_input_is_kept(tmp_path: Path, server: FakeOpenAI) -> None:
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    code = main([str(report), "-o", str(out), "--base-url", server.base_url])
    assert code == Exit.OK
    assert out.read_bytes() == TEXT.replace("says", "states").encode()
    assert report.read_bytes() == TEXT.encode()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_refuses_to_overwrite_the_input_without_in_place(
    tmp_path: Path, server: FakeOpenAI
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report), "-o", str(report), "--base-url", server.base_url]) == Exit.OUTPUT
    assert report.read_bytes() == TEXT.encode() and server.seen == []
    assert main([str(report), "--in-place", "--base-url", server.base_url]) == Exit.OK
    assert report.read_bytes() == TEXT.replace("says", "states").encode()
    assert (tmp_path / "r.md.~1~").read_bytes() == TEXT.encode()


def test_dry_run_lists_blocks_and_calls_nothing(
    tmp_path: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "# T\n\nProse to polish.\n\n[1] https://example.com\n\n## References\n\n- A ref.\n"
    report = write(tmp_path, "r.md", text)
    assert main([str(report), "--dry-run", "--base-url", server.base_url]) == Exit.OK
    out = capsys.readouterr().out
    assert "send (max_tokens" in out
    assert "skip: nothing_to_refine" in out and "skip: references_section" in out
    assert "1 of 3 blocks would be sent" in out
    assert server.seen == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x00\x01binary", "NUL byte at offset 0: this looks like a binary file"),
        (b"caf\xe9 au lait\n", "not UTF-8 (invalid byte 0xe9 at offset 3)"),
    ],
)
def test_bad_input_is_refused_before_any_call(
    tmp_path: Path, server: FakeOpenAI, data: bytes, message: str
) -> None:
    report = write(tmp_path, "r.md", data)
    done = run_cli(str(report), "--base-url", server.base_url)
    assert done.returncode == Exit.INPUT
    assert done.stderr.strip().splitlines() == [f"refine: {report}: {message}"]
    assert server.seen == []


def test_missing_file_directory_and_size_limit(tmp_path: Path) -> None:
    assert run_cli(str(tmp_path / "nope.md")).returncode == Exit.INPUT
    done = run_cli(str(tmp_path))
    assert done.returncode == Exit.INPUT and "is a directory" in done.stderr
    big = write(tmp_path, "big.md", "word " * 300)
    done = run_cli(str(big), "--max-bytes", "1000")
    assert done.returncode == Exit.INPUT and "over the 1,000-byte limit" in done.stderr
    assert "Traceback" not in done.stderr
    huge = tmp_path / "huge.md"
    with huge.open("wb") as fh:  # a 50 MB report: refused by size before it is read
        fh.truncate(50 * 1024 * 1024)
    done = run_cli(str(huge))
    assert done.returncode == Exit.INPUT and "52,428,800 bytes is over" in done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\ufeffBOM first says hi.\r\n",
        "lone CR says\ronly a few words\r\rend says",  # re-wrapped at its width: room for "states"
        "line sep\u2028inside says it\n",
        "```\nonly code says\n```\n| a |\n|---|\n| says |\n",
    ],
    ids=["empty", "bom-crlf", "lone-cr", "u2028", "no-prose"],
)
def test_odd_but_valid_inputs_keep_every_byte_outside_blocks(
    tmp_path: Path, server: FakeOpenAI, text: str
) -> None:
    report = write(tmp_path, "r.md", text)
    out = tmp_path / "out.md"
    assert main([str(report), "-o", str(out), "--base-url", server.base_url]) == Exit.OK
    assert out.read_bytes() == text.replace("says", "states").encode() or "```" in text
    if "```" in text:
        assert out.read_bytes() == text.encode()


def test_unwritable_output_is_refused_before_any_call(tmp_path: Path, server: FakeOpenAI) -> None:
    report = write(tmp_path, "r.md", TEXT)
    target = tmp_path / "no-such-dir" / "out.md"
    done = run_cli(str(report), "-o", str(target), "--base-url", server.base_url)
    assert done.returncode == Exit.OUTPUT and "does not exist" in done.stderr
    assert server.seen == []


def test_a_failed_block_gives_the_partial_exit_code(tmp_path: Path) -> None:
    def fault(n: int, body: dict[str, Any]) -> Fault | None:
        return Fault(status=400) if "first item" in body["messages"][-1]["content"] else None

    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    with FakeOpenAI(reply=polish, fault=fault) as s:
        code = main([str(report), "-o", str(out), "--base-url", s.base_url])
    assert code == Exit.PARTIAL
    assert out.read_bytes() == TEXT.replace("team says", "team states").encode()


def test_refused_credentials_are_one_line_and_the_config_code(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    with FakeOpenAI(fault=lambda n, body: Fault(status=401)) as s:
        done = run_cli(str(report), "--base-url", s.base_url, "--model", "fake-model")
    assert done.returncode == Exit.CONFIG
    human = [line for line in done.stderr.splitlines() if not line.startswith("{")]
    assert len(human) == 1 and "HTTP 401" in human[0] and "Traceback" not in done.stderr
    assert KEY not in done.stderr and done.stdout == ""


def test_record_then_replay_offline(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    tape = tmp_path / "tape.jsonl"
    with FakeOpenAI(reply=polish) as s:
        args = [str(report), "--base-url", s.base_url, "--model", "fake-model"]
        assert main([*args, "-o", str(tmp_path / "a.md"), "--record", str(tape)]) == Exit.OK
        url = s.base_url
    # the server is gone: replay needs no network
    args = [str(report), "--base-url", url, "--model", "fake-model"]
    assert main([*args, "-o", str(tmp_path / "b.md"), "--replay", str(tape)]) == Exit.OK
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()
    assert KEY not in tape.read_text() and "uthorization" not in tape.read_text()


def test_replay_names_the_block_it_has_no_reply_for(tmp_path: Path) -> None:
    tape = write(tmp_path, "tape.jsonl", "")
    report = write(tmp_path, "r.md", TEXT)
    done = run_cli(str(report), "--replay", str(tape), "--model", "m")
    assert done.returncode == Exit.CASSETTE
    assert "no recorded reply" in done.stderr and "(line" in done.stderr


def test_the_cli_parses_each_report_once_and_the_library_checks_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 22: the pre-flight moved into the library (a ``Refiner`` checks its endpoints when
    it opens), and the CLI hands it the report it parsed, so one run parses it once."""
    from owlai_refine.pipeline import parse as parser  # noqa: PLC0415 - the module counted

    calls: list[int] = []
    real = parser.parse

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    for where in ("owlai_refine.cli.run.parse", "owlai_refine.pipeline.refiner.parse"):
        monkeypatch.setattr(where, counted)
    report = write(tmp_path, "r.md", TEXT)
    with FakeOpenAI(reply=polish) as s:
        args = [str(report), "-o", str(tmp_path / "o.md"), "--base-url", s.base_url]
        assert main(args) == Exit.OK
        assert s.model_lists == 1  # checked once, by the library, through the run's client
    assert len(calls) == 1
    assert (tmp_path / "o.md").read_bytes() == polish(TEXT).encode()


def test_resume_sends_only_blocks_without_a_recorded_reply(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    tape = tmp_path / "tape.jsonl"
    with FakeOpenAI(reply=polish) as s:
        args = [str(report), "--base-url", s.base_url, "--model", "fake-model"]
        assert main([*args, "-o", str(tmp_path / "a.md"), "--record", str(tape)]) == Exit.OK
        first = len(s.seen)
        lines = tape.read_text().splitlines()  # the pre-flight's listing, then the 3 replies
        assert json.loads(lines[0])["path"] == "/v1/models"
        tape.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])  # a crash
        assert main([*args, "-o", str(tmp_path / "b.md"), "--record", str(tape), "--resume"]) == 0
        resent = len(s.seen) - first
    assert first == 3 and resent == 2
    assert (tmp_path / "a.md").read_bytes() == (tmp_path / "b.md").read_bytes()


def test_the_api_key_appears_in_no_artefact(tmp_path: Path) -> None:
    report = write(tmp_path, "r.md", TEXT)
    log = tmp_path / "log.jsonl"
    tape = tmp_path / "tape.jsonl"
    with FakeOpenAI(reply=polish) as s:
        done = run_cli(
            str(report), "--base-url", s.base_url, "--log-file", str(log), "--log-level", "debug",
            "--record", str(tape),
        )  # fmt: skip
        dry = run_cli(str(report), "--base-url", s.base_url, "--dry-run")
        bad = run_cli(str(report), "--base-url", "ftp://nowhere")
        assert all(x.authorization == f"Bearer {KEY}" for x in s.seen)
    assert done.returncode == 0 and dry.returncode == 0 and bad.returncode == Exit.CONFIG
    artefacts = [done.stdout, done.stderr, dry.stdout, dry.stderr, bad.stdout, bad.stderr]
    artefacts += [log.read_text(), tape.read_text()]
    assert all(KEY not in a for a in artefacts)
    assert '"event": "refine.block_text"' in log.read_text()  # debug level did log text
    info_log = tmp_path / "info.jsonl"
    with FakeOpenAI(reply=polish) as s:
        run_cli(str(report), "--base-url", s.base_url, "--log-file", str(info_log))
    assert "the plan works" not in info_log.read_text()  # block text only at debug level


def test_missing_local_extra_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util  # noqa: PLC0415

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xllamacpp" else real(name)
    )
    report = write(tmp_path, "r.md", TEXT)
    assert main([str(report)]) == Exit.CONFIG
    err = capsys.readouterr().err
    assert "pip install 'owlai-refine[local]'" in err and "--base-url" in err


@pytest.mark.parametrize("spelling", [["./stats"], ["--", "stats"]])
def test_a_report_named_like_a_command_is_refined(
    tmp_path: Path,
    server: FakeOpenAI,
    spelling: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write(tmp_path, "stats", TEXT)
    monkeypatch.chdir(tmp_path)
    # options first: after ``--`` everything is the report, as with git
    assert main(["--base-url", server.base_url, "-o", "out.md", *spelling]) == Exit.OK
    assert (tmp_path / "out.md").read_bytes() == polish(TEXT).encode()


def test_the_command_word_runs_the_command(tmp_path: Path) -> None:
    log = write(tmp_path, "run.jsonl", "")
    assert split_command(["stats", str(log), "--json"]) == ("stats", [str(log), "--json"])
    assert split_command(["--", "stats"]) == (None, ["--", "stats"])
    assert split_command(["./stats"]) == (None, ["./stats"])
    assert main(["stats", str(log)]) == Exit.INPUT  # a ledger with no refine.call line


# In the test process (what a person sees when refine refuses, and what the ledger carries).


@pytest.mark.parametrize(
    ("setup", "code", "message"),
    [
        (
            (lambda d: (d / "r.md").mkdir(), []),
            Exit.INPUT,
            "{r}: is a directory, not a Markdown file",
        ),
        (
            (lambda d: (d / "r.md").write_text("12345"), ["--max-bytes", "4"]),
            Exit.INPUT,
            "{r}: 5 bytes is over the 4-byte limit (raise it with --max-bytes)",
        ),
        (
            (lambda d: (d / "r.md").write_text(TEXT), ["--in-place", "-o", "out.md"]),
            Exit.CONFIG,
            "--in-place replaces REPORT itself: leave out -o",
        ),
    ],
    ids=["directory", "too-large", "in-place-and-o"],
)
def test_a_refusal_is_one_line_saying_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: Any, code: Exit, message: str
) -> None:
    make, flags = setup
    make(tmp_path)
    report = tmp_path / "r.md"
    assert main([str(report), *flags]) == code
    assert capsys.readouterr().err.splitlines() == [f"refine: {message.format(r=report)}"]
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # nothing written beside it


def test_an_error_with_a_log_file_is_one_line_on_stderr_and_a_line_in_the_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = write(tmp_path, "r.md", TEXT)
    log = tmp_path / "log.jsonl"
    assert main([str(report), "--log-file", str(log), "--concurrency", "0"]) == Exit.CONFIG
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("refine: concurrency: ")
    (event,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert event["event"] == "refine.error" and event["level"] == "error"
    assert f"refine: {event['error']}" == line
    assert event["kind"] == "ConfigError" and event["exit"] == Exit.CONFIG


def test_ctrl_c_while_the_report_is_read_is_one_line_and_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Keyboard:  # ``refine -`` waiting on a terminal's stdin when Ctrl-C comes
        class buffer:  # stands in for ``sys.stdin.buffer``
            @staticmethod
            def read(n: int = -1) -> bytes:
                raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stdin", Keyboard)
    assert main(["-"]) == Exit.INTERRUPTED
    assert capsys.readouterr().err.splitlines() == ["refine: interrupted; no output was written"]


def test_a_bug_is_one_line_asking_for_a_report_and_the_traceback_goes_to_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("planted")

    monkeypatch.setattr("owlai_refine.cli.run.print_plan", broken)
    report = write(tmp_path, "r.md", TEXT)
    log = tmp_path / "log.jsonl"
    assert main([str(report), "--dry-run", "--log-file", str(log)]) == Exit.BUG
    assert capsys.readouterr().err.splitlines() == [
        "refine: internal error: ValueError: planted (please report this)"
    ]
    (event,) = [json.loads(x) for x in log.read_text().splitlines()]
    assert event["event"] == "refine.internal_error" and "planted" in json.dumps(event["exception"])


def test_stdout_closed_early_is_exit_4_with_nothing_more_to_say(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``refine r.md | head -1``: the reader has gone; no traceback, no message, and stdout is
    pointed at /dev/null so that Python's own flush at exit cannot complain either."""
    report = write(tmp_path, "r.md", "# Only a heading\n")  # nothing to send: no server needed
    read_end, write_end = os.pipe()
    os.close(read_end)
    stdout = open(write_end, "w", encoding="utf-8")  # noqa: SIM115 - closed below
    monkeypatch.setattr(sys, "stdout", stdout)
    try:
        assert main([str(report)]) == Exit.OUTPUT
        stdout.write("more")
        stdout.flush()  # would raise BrokenPipeError had stdout not been redirected
    finally:
        stdout.close()
    err = capsys.readouterr().err.splitlines()
    assert [line for line in err if not line.startswith("{")] == []  # the JSON log only


@pytest.mark.parametrize(
    ("name", "report_id"),
    [
        ("inference-market.md", "inference-market"),
        (
            "a-very-long-report-name-about-the-inference-market-2026.md",
            "a-very-long-report-name-about-the-infere",
        ),
        ("-", "stdin"),
    ],
)
def test_every_ledger_line_carries_the_reports_name_as_report_id(
    tmp_path: Path,
    server: FakeOpenAI,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    report_id: str,
) -> None:
    if name == "-":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TEXT.encode())))
    else:
        write(tmp_path, name, TEXT)
    log = tmp_path / "log.jsonl"
    args = ["--base-url", server.base_url, "-o", str(tmp_path / "out.md"), "--log-file", str(log)]
    monkeypatch.chdir(tmp_path)
    assert main([name, *args]) == Exit.OK
    events = [json.loads(x) for x in log.read_text().splitlines()]
    assert len(events) == 5 and {e["report_id"] for e in events} == {report_id}


def test_a_server_gone_after_the_check_gets_nothing_written_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """If the server goes away after the check and not one request reaches it, nothing is
    written and the exit is 2 (the README's exit codes: "no server reachable (nothing sent,
    nothing written)"); a report with every block failed is not written."""
    report = write(tmp_path, "r.md", TEXT)
    out = tmp_path / "out.md"
    with FakeOpenAI(reply=polish) as s:

        async def check_then_stop(*args: Any) -> str:
            model = await check_servers(*args)
            s.stop()
            return model

        def refine_without_waits(source: str, config: Any, **kwargs: Any) -> Any:
            no_wait = config.model_copy(update={"retry": RetryPolicy(wait_scale=0)})
            return refine(source, no_wait, **kwargs)

        monkeypatch.setattr("owlai_refine.serve.endpoints.check_servers", check_then_stop)
        monkeypatch.setattr("owlai_refine.cli.run.refine", refine_without_waits)
        args = [str(report), "-o", str(out), "--base-url", s.base_url, "--model", "fake-model"]
        code = main(args)
    assert code == Exit.CONFIG
    (line,) = capsys.readouterr().err.splitlines()[-1:]
    assert line.startswith(f"refine: no request reached {s.base_url} (")
    assert line.endswith("; nothing was written")
    assert not out.exists()


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--priority", "high", "invalid int value: 'high'"),
        ("--concurrency", "four", "invalid int value: 'four'"),
        ("--max-output-tokens", "lots", "invalid int value: 'lots'"),
        ("--presence-penalty", "none", "'none' is neither a number nor 'server'"),
        ("--frequency-penalty", "1,5", "'1,5' is neither a number nor 'server'"),
        ("--log-level", "INFO", "invalid choice: 'INFO'"),
    ],
)
def test_a_bad_flag_value_is_refused_naming_the_flag_before_anything_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, says: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main([str(tmp_path / "absent.md"), flag, value])
    assert stop.value.code == 2
    assert (
        capsys.readouterr()
        .err.splitlines()[-1]
        .startswith(f"refine: error: argument {flag}: {says}")
    )
