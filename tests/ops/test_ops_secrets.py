"""``refine doctor`` and ``refine bench`` never print our API key, even when a server's error
body echoes the ``Authorization`` header back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from owlai_refine.ops import run_bench, run_doctor
from testsupport.fake_openai import FakeOpenAI, Fault

KEY = "sk-test-ops-echo-0123456789"


@pytest.fixture
def echoing(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[str]:
    """A server answering every chat request with an error body holding our key: the
    ``/v1`` base URL (the status is the test's parameter)."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    echo = Fault(status=request.param, message=f"bad request; headers: Authorization: Bearer {KEY}")
    with FakeOpenAI(fault=lambda n, body: echo, models=("m",)) as server:
        yield server.base_url


@pytest.mark.parametrize("echoing", [400, 500], indirect=True)
def test_doctor_prints_no_key(echoing: str, capsys: pytest.CaptureFixture[str]) -> None:
    run_doctor(["--base-url", echoing, "--timeout", "5"])
    out, err = capsys.readouterr()
    assert KEY not in out and KEY not in err
    assert "[redacted]" in out + err  # the body was shown, cleaned


@pytest.mark.parametrize("echoing", [400, 500], indirect=True)
def test_bench_prints_no_key(echoing: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--base-url", echoing, "--model", "m", "--input-tokens", "20", "--concurrency", "1"]
    run_bench([*argv, "--repeats", "1", "--rounds", "1", "--output-tokens", "4", "--timeout", "5"])
    out, err = capsys.readouterr()
    assert KEY not in out and KEY not in err
    assert "[redacted]" in out + err
