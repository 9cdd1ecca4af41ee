"""``refine doctor``: the recorded startups told apart, and the live checks against a stub."""

from __future__ import annotations

import json

import pytest

from owlai_refine.ops import EXIT_CHECK_FAILED, run_doctor
from owlai_refine.ops.doctor import check_server_log
from owlai_refine.ops.serverlog import parse_server_log

from .conftest import FIXTURES, Stub, fixture_text

WITH_PP = FIXTURES / "startup-presence-penalty.log"
PRIORITY = FIXTURES / "startup-priority.log"  # the same recipe with --scheduling-policy priority
WITHOUT_PP = FIXTURES / "startup-no-presence-penalty.log"


def _by_name(checks: list[dict[str, str]]) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in checks}


def test_log_checks_tell_the_two_real_startups_apart() -> None:
    good = check_server_log(parse_server_log(fixture_text(WITH_PP.name)), 4096, 4)
    bad = check_server_log(parse_server_log(fixture_text(WITHOUT_PP.name)), 4096, 4)
    assert [(c.name, c.status) for c in good] == [
        ("override", "pass"),
        ("kv-concurrency", "pass"),
        ("max-num-seqs", "pass"),
        ("speculative", "pass"),
    ]
    assert [(c.name, c.status) for c in bad] == [
        ("override", "fail"),
        ("kv-concurrency", "pass"),
        ("max-num-seqs", "pass"),
        ("speculative", "pass"),
    ]
    assert "lack presence_penalty" in bad[0].detail
    assert "5.69x requests of 4,096 tokens" in good[1].detail


def test_kv_check_computes_from_cache_size_when_lengths_differ() -> None:
    log = parse_server_log(fixture_text(WITH_PP.name))
    checks = check_server_log(log, 8192, 4)  # 23,296 / 8,192 = 2.84 < 4
    assert checks[1].status == "fail"
    assert "2.84x requests of 8,192 tokens" in checks[1].detail


@pytest.mark.parametrize(("conc", "status"), [(4, "pass"), (2, "warn"), (8, "fail")])
def test_max_num_seqs_against_our_concurrency(conc: int, status: str) -> None:
    log = parse_server_log(fixture_text(WITH_PP.name))  # max_num_seqs 4
    assert check_server_log(log, 4096, conc)[2].status == status


def test_override_dropped_is_named() -> None:
    text = (
        "non-default args: {'override_generation_config': {'max_new_tokens': 48, "
        "'presence_penalty': 1.5}, 'max_num_seqs': 4}\n"
        "Default vLLM sampling parameters have been overridden by the model's "
        "`generation_config.json`: `{'max_tokens': 48}`. If this is not intended...\n"
    )
    check = check_server_log(parse_server_log(text), 4096, 4)[0]
    assert check.status == "fail"
    assert "dropped" in check.detail


def test_an_unreadable_override_line_warns_instead_of_claiming_no_line() -> None:
    text = (
        "Default vLLM sampling parameters have been overridden by the model's "
        "`generation_config.json`: `{'max_tokens': 48, 'stop': <object at 0x7f>}`. "
        "If this is not intended...\n"
    )
    log = parse_server_log(text)
    assert log.notes == ["sampling override dict is not a Python literal"]
    check = check_server_log(log, 4096, 4)[0]
    assert check.status == "warn"
    assert "no readable dict" in check.detail


def test_no_override_line_fails() -> None:
    check = check_server_log(parse_server_log("nothing here\n"), 4096, 4)[0]
    assert check.status == "fail"
    assert "no 'Default vLLM sampling parameters" in check.detail


def test_live_all_pass_exit_0(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_doctor(["--base-url", stub.url, "--server-log", str(PRIORITY), "--json"])
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert code == 0
    assert {c["status"] for c in checks.values()} == {"pass"}
    assert checks["scheduling"]["detail"] == "priority (log: --scheduling-policy priority)"
    assert checks["models"]["detail"] == "smollm2: max_model_len 4096, owned_by vllm"
    sent = stub.state.requests[0]
    assert sent["max_tokens"] == 1


def test_live_without_presence_penalty_exit_4(
    stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_doctor(["--base-url", stub.url, "--server-log", str(WITHOUT_PP)])
    out = capsys.readouterr().out
    assert code == EXIT_CHECK_FAILED == 4
    assert "FAIL  override        server defaults {'max_tokens': 48} lack presence_penalty" in out
    assert "WARN  scheduling      fcfs (log): people's chat turns wait" in out
    assert out.rstrip().endswith("5 pass, 1 warn, 1 fail")


def test_live_request_id_not_echoed_fails(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    stub.state.echo_request_id = False
    assert run_doctor(["--base-url", stub.url, "--server-log", str(WITH_PP), "--json"]) == 4
    check = _by_name(json.loads(capsys.readouterr().out))["request-id"]
    assert check["status"] == "fail"
    assert "--enable-request-id-headers" in check["detail"]


def test_live_without_log_warns_and_uses_metrics(
    stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_doctor(["--base-url", stub.url.removesuffix("/v1"), "--json"]) == 0
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert checks["override"]["status"] == "warn"
    assert checks["kv-concurrency"]["status"] == "pass"
    assert "/metrics cache_config_info: 23,296 KV tokens" in checks["kv-concurrency"]["detail"]


def test_unknown_model_fails(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_doctor(["--base-url", stub.url, "--model", "nope", "--json"]) == 4
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert "not served (serves: smollm2)" in checks["models"]["detail"]
    assert checks["request-id"]["status"] == "fail"


def test_unreachable_server_fails_every_live_check(
    dead_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_doctor(["--base-url", dead_url, "--timeout", "5", "--json"]) == 4
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert checks["models"]["status"] == "fail"
    assert "cannot reach" in checks["models"]["detail"]


def test_unreadable_log_exit_3(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_doctor(["--base-url", stub.url, "--server-log", "/nonexistent.log"]) == 3
    err = capsys.readouterr().err
    expected = "cannot read server log /nonexistent.log: No such file or directory"
    assert err == f"refine doctor: error: {expected}\n"


@pytest.mark.parametrize(
    "argv",
    [[], ["--base-url", "ftp://x"], ["--base-url", "http://x", "--concurrency", "0"]],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_doctor(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("refine doctor: error: ")
    assert err.count("\n") == 1
