"""Every ``refine`` flag that shapes a request, checked where it lands: in the request the
server receives (testsupport/fake_openai.py records each one), not in ``--help``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.cli import Exit, main
from testsupport.fake_openai import FakeOpenAI

KEY = "sk-flags-test-0123456789"
TEXT = "# Notes\n\nThe team says the plan works [1].\n\n- first item says yes\n\n[2]\n"
# Six blocks of about 12 words each, for the cap on requests in flight.
MANY = "# Many\n\n" + "".join(
    f"Paragraph {i} says the plan works well for the team this year.\n\n" for i in range(6)
)


def polish(text: str) -> str:
    return text.replace("says", "states")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "OWLAI_REFINE_BASE_URL",
        "OWLAI_REFINE_MODEL",
        "OWLAI_REFINE_BACKEND",
        "OWLAI_REFINE_CONCURRENCY",
        "OWLAI_REFINE_PRIORITY",
        "OWLAI_REFINE_LIMITER",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(reply=polish, models=("small", "big")) as s:
        yield s


def run(tmp_path: Path, server: FakeOpenAI, *flags: str, text: str = TEXT) -> list[dict[str, Any]]:
    """Refine ``text`` with ``flags`` (plus the server and a model); the request bodies the
    server received, in order."""
    report = tmp_path / "r.md"
    report.write_text(text)
    args = [str(report), "-o", str(tmp_path / "out.md"), "--base-url", server.base_url]
    if "--model" not in flags:
        args += ["--model", "small"]
    assert main([*args, *flags]) == Exit.OK
    assert (tmp_path / "out.md").read_text() == polish(text)
    return [s.body for s in server.seen]


def test_the_defaults_as_the_server_sees_them(tmp_path: Path, server: FakeOpenAI) -> None:
    bodies = run(tmp_path, server)
    assert len(bodies) == 2
    for body in bodies:
        assert body["model"] == "small"
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
        assert body["temperature"] == 0.2
        assert body["presence_penalty"] == 0 and body["frequency_penalty"] == 0
        assert body["priority"] == 10  # self-hosted by default
        assert 64 < body["max_tokens"] < 4096
    assert {s.authorization for s in server.seen} == {f"Bearer {KEY}"}


def test_model(tmp_path: Path, server: FakeOpenAI) -> None:
    assert {b["model"] for b in run(tmp_path, server, "--model", "big")} == {"big"}


def test_no_stream(tmp_path: Path, server: FakeOpenAI) -> None:
    assert all(not b.get("stream") for b in run(tmp_path, server, "--no-stream"))


def test_max_output_tokens_caps_every_request(tmp_path: Path, server: FakeOpenAI) -> None:
    # 20 is above the blocks' word counts (so the replies are whole) and below what they ask.
    bodies = run(tmp_path, server, "--max-output-tokens", "20")
    assert [b["max_tokens"] for b in bodies] == [20, 20]


def test_temperature_and_penalties(tmp_path: Path, server: FakeOpenAI) -> None:
    flags = ("--temperature", "0.3", "--presence-penalty", "0.5", "--frequency-penalty", "server")
    for body in run(tmp_path, server, *flags):
        assert body["temperature"] == 0.3
        assert body["presence_penalty"] == 0.5
        assert "frequency_penalty" not in body


@pytest.mark.parametrize(
    ("flags", "expected"), [(("--priority", "3"), 3), (("--priority", "0"), None)]
)
def test_priority(
    tmp_path: Path, server: FakeOpenAI, flags: tuple[str, ...], expected: int | None
) -> None:
    assert {b.get("priority") for b in run(tmp_path, server, *flags)} == {expected}


def test_a_cloud_backend_sends_no_priority(tmp_path: Path, server: FakeOpenAI) -> None:
    assert {b.get("priority") for b in run(tmp_path, server, "--backend", "cloud")} == {None}


@pytest.mark.parametrize(("flags", "cap"), [(("--concurrency", "2"), 2), ((), 4)])
def test_concurrency_is_the_cap_the_server_sees(
    tmp_path: Path, flags: tuple[str, ...], cap: int
) -> None:
    with FakeOpenAI(reply=polish, latency_s=lambda body: 0.3, models=("small",)) as server:
        bodies = run(tmp_path, server, *flags, text=MANY)
    assert len(bodies) == 6
    assert server.max_in_flight == cap


def test_several_base_urls_each_get_requests(tmp_path: Path) -> None:
    with (
        FakeOpenAI(reply=polish, latency_s=lambda body: 0.2) as one,
        FakeOpenAI(reply=polish, latency_s=lambda body: 0.2) as two,
    ):
        report = tmp_path / "r.md"
        report.write_text(MANY)
        urls = f"{one.base_url},{two.base_url}"
        assert main([str(report), "-o", str(tmp_path / "o.md"), "--base-url", urls]) == Exit.OK
    assert one.seen and two.seen
    assert len(one.seen) + len(two.seen) == 6


def test_log_file_gets_the_ledger_and_stderr_the_summary_line(
    tmp_path: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "log.jsonl"
    run(tmp_path, server, "--log-file", str(log))
    err = capsys.readouterr().err
    assert err.splitlines()[-1].startswith("refine: 2 refined, 1 skipped in ")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    calls = [e for e in events if e["event"] == "refine.call"]
    assert len(calls) == 2 and all("text" not in e for e in calls)
    assert events[-1]["event"] == "refine.done"


def test_log_level_debug_logs_the_text(tmp_path: Path, server: FakeOpenAI) -> None:
    log = tmp_path / "log.jsonl"
    run(tmp_path, server, "--log-file", str(log), "--log-level", "debug")
    text = log.read_text()
    assert "first item says yes" in text and "first item states yes" in text


def test_model_and_concurrency_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OWLAI_REFINE_MODEL", "big")
    monkeypatch.setenv("OWLAI_REFINE_CONCURRENCY", "2")
    with FakeOpenAI(reply=polish, latency_s=lambda body: 0.3, models=("small", "big")) as server:
        report = tmp_path / "r.md"
        report.write_text(MANY)
        args = [str(report), "-o", str(tmp_path / "o.md"), "--base-url", server.base_url]
        assert main(args) == Exit.OK
    assert {s.body["model"] for s in server.seen} == {"big"}
    assert server.max_in_flight == 2


def test_a_bad_setting_is_one_line_naming_it(
    tmp_path: Path, server: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.md"
    report.write_text(TEXT)
    code = main([str(report), "--base-url", server.base_url, "--concurrency", "0"])
    assert code == Exit.CONFIG and server.seen == []
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("refine: concurrency: ") and "greater than" in line


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ((), False),
        (("--backend", "cloud"), True),
        (("--prediction", "on"), True),
        (("--backend", "cloud", "--prediction", "off"), False),
    ],
)
def test_prediction(
    tmp_path: Path, server: FakeOpenAI, flags: tuple[str, ...], expected: bool
) -> None:
    assert {"prediction" in b for b in run(tmp_path, server, *flags)} == {expected}


def test_no_marker(tmp_path: Path, server: FakeOpenAI) -> None:
    with_marker = run(tmp_path, server)
    server.seen.clear()
    without = run(tmp_path, server, "--no-marker")
    assert all("<unchanged/>" in b["messages"][0]["content"] for b in with_marker)
    assert all("<unchanged/>" not in b["messages"][0]["content"] for b in without)
