"""``refine doctor``: the recorded startups told apart, and the live checks against a stub."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from owlai_refine.ops import EXIT_CHECK_FAILED, run_doctor
from owlai_refine.ops.doctor.checks import check_log_matches, check_server_log
from owlai_refine.ops.doctor.kvplan import kv_plan_check
from owlai_refine.ops.plan.modelarch import arch_from_config
from owlai_refine.ops.serverlog import parse_server_log
from owlai_refine.serve.server import ModelInfo, server_urls

from .conftest import FIXTURES, Stub, fixture_text

WITH_PP = FIXTURES / "startup-presence-penalty.log"
PRIORITY = FIXTURES / "startup-priority.log"  # the same recipe with --scheduling-policy priority
WITHOUT_PP = FIXTURES / "startup-no-presence-penalty.log"


SMOLLM2 = FIXTURES / "smollm2-135m-config.json"


def _log_of(stub: Stub, fixture: Path, tmp_path: Path) -> str:
    """The recorded startup ``fixture`` as if the stub were that server (its port)."""
    port = stub.url.split(":")[2].split("/")[0]
    text = re.sub(r"'port': \d+", f"'port': {port}", fixture.read_text(encoding="utf-8"))
    out = tmp_path / fixture.name
    out.write_text(text, encoding="utf-8")
    return str(out)


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


def test_live_all_pass_exit_0(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = _log_of(stub, PRIORITY, tmp_path)
    argv = ["--base-url", stub.url, "--server-log", log, "--config", str(SMOLLM2), "--json"]
    code = run_doctor(argv)
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert code == 0
    warned = {n for n, c in checks.items() if c["status"] != "pass"}
    assert warned == {"log-requests", "prompt-details"}  # the recorded server ran without both
    assert "--enable-log-requests" in checks["log-requests"]["detail"]
    assert "chatcmpl-<id>" in checks["log-requests"]["detail"]
    assert "--enable-prompt-tokens-details" in checks["prompt-details"]["detail"]
    assert checks["kv-plan"]["detail"].startswith("plan 23,296 tokens, 5.69x for 4,096")
    assert checks["log-matches"]["detail"].startswith("port, model, max_model_len, KV cache size")
    assert checks["scheduling"]["detail"] == "priority (log: --scheduling-policy priority)"
    assert checks["models"]["detail"] == "smollm2: max_model_len 4096, owned_by vllm"
    sent = stub.state.requests[0]
    assert sent["max_tokens"] == 1


def test_live_without_presence_penalty_exit_4(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = _log_of(stub, WITHOUT_PP, tmp_path)
    code = run_doctor(["--base-url", stub.url, "--server-log", log, "--config", str(SMOLLM2)])
    out = capsys.readouterr().out
    assert code == EXIT_CHECK_FAILED == 4
    assert "FAIL  override        server defaults {'max_tokens': 48} lack presence_penalty" in out
    assert "WARN  scheduling      fcfs (log): people's chat turns wait" in out
    assert out.rstrip().endswith("7 pass, 3 warn, 1 fail")


def test_a_log_from_another_server_fails(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    # the recorded log says port 18200; the stub listens elsewhere (the issue: 18801 vs 18802)
    assert run_doctor(["--base-url", stub.url, "--server-log", str(WITH_PP), "--json"]) == 4
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert checks["log-matches"]["status"] == "fail"
    assert "port: log 18200, server" in checks["log-matches"]["detail"]
    assert checks["override"]["detail"] == "skipped: the log is another server's"


def test_live_request_id_not_echoed_fails(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    stub.state.echo_request_id = False
    log = _log_of(stub, WITH_PP, tmp_path)
    assert run_doctor(["--base-url", stub.url, "--server-log", log, "--json"]) == 4
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


def test_the_base_url_and_model_come_from_the_environment_as_for_refine(
    stub: Stub, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: ``refine doctor`` honours ``OWLAI_REFINE_BASE_URL`` (and the model and
    concurrency variables), as ``refine`` does."""
    monkeypatch.setenv("OWLAI_REFINE_BASE_URL", stub.url)
    monkeypatch.setenv("OWLAI_REFINE_MODEL", "nope")
    assert run_doctor(["--json"]) == 4
    checks = _by_name(json.loads(capsys.readouterr().out))
    assert "not served (serves: smollm2)" in checks["models"]["detail"]
    monkeypatch.setenv("OWLAI_REFINE_CONCURRENCY", "0")
    assert run_doctor(["--json"]) == 2
    assert capsys.readouterr().err == "refine doctor: error: --concurrency must be at least 1\n"


def test_no_server_named_anywhere_says_where_to_name_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OWLAI_REFINE_BASE_URL", raising=False)
    assert run_doctor([]) == 2
    assert capsys.readouterr().err == (
        "refine doctor: error: which server? give --base-url URL or set "
        "OWLAI_REFINE_BASE_URL (as for refine itself)\n"
    )
    monkeypatch.setenv("OWLAI_REFINE_BASE_URL", "http://a:8000/v1,http://b:8000/v1")
    assert run_doctor([]) == 2
    assert "refine doctor checks one server; " in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [[], ["--base-url", "ftp://x"], ["--base-url", "http://x", "--concurrency", "0"]],
)
def test_usage_errors_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OWLAI_REFINE_BASE_URL", raising=False)
    assert run_doctor(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("refine doctor: error: ")
    assert err.count("\n") == 1


def test_recorded_logs_of_two_real_servers_are_told_apart() -> None:
    # vLLM for CPU on 18900 (the lead's) and on 18910 (max_num_seqs 4, used for the bench)
    other = parse_server_log(fixture_text("startup-port18900.log"))
    own = parse_server_log(fixture_text("startup-port18910-seqs4.log"))
    assert (own.port, own.max_num_seqs, own.kv_cache_gib, own.max_model_len) == (
        18910,
        4,
        1.0,
        4096,
    )
    assert own.engine["dtype"] == "float32" and own.served_models == ["smollm2"]
    models = [ModelInfo(id="smollm2", max_model_len=4096, owned_by="vllm")]
    ep = server_urls("http://127.0.0.1:18910/v1")
    assert check_log_matches(own, ep, models, None).status == "pass"
    bad = check_log_matches(other, ep, models, None)
    assert bad.status == "fail" and "port: log 18900, server 18910" in bad.detail
    wider = [ModelInfo(id="other", max_model_len=8192, owned_by="vllm")]
    detail = check_log_matches(own, ep, wider, None).detail
    assert "model: log ['smollm2'], server ['other']" in detail
    assert "max_model_len: log 4096, server [8192]" in detail


def test_kv_plan_explains_a_gap() -> None:
    log = parse_server_log(fixture_text("startup-port18910-seqs4.log"))
    arch = arch_from_config(json.loads(fixture_text("smollm2-135m-config.json")))
    assert kv_plan_check(log, arch)[0] == "pass"
    fp8 = parse_server_log(
        fixture_text("startup-port18910-seqs4.log").replace(
            "kv_cache_dtype=auto", "kv_cache_dtype=fp8"
        )
    )
    status, detail = kv_plan_check(fp8, arch)
    assert status == "warn" and "(+300.1%)" in detail and "kv-cache-dtype" in detail
    assert kv_plan_check(log, None)[1].startswith("skipped: needs the model's config.json")


def test_prompt_details_pass_when_the_server_sends_them(
    stub: Stub, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.state.cached_tokens = 5  # vLLM with --enable-prompt-tokens-details
    run_doctor(["--base-url", stub.url, "--json"])
    check = _by_name(json.loads(capsys.readouterr().out))["prompt-details"]
    assert check == {
        "name": "prompt-details",
        "status": "pass",
        "detail": "usage carries cached_tokens (5)",
    }


def test_speculative_check_names_the_method_and_the_draft_acceptance() -> None:
    log = parse_server_log(fixture_text("startup-ngram-spec.log"))
    spec = check_server_log(log, 4096, 4)[-1]
    assert (spec.name, spec.status) == ("speculative", "pass")
    assert spec.detail == (
        "on: ngram, 4 tokens drafted a step; 2% of drafted tokens accepted (236 of 10,543) (log)"
    )
    off = check_server_log(parse_server_log(fixture_text(WITH_PP.name)), 4096, 4)[-1]
    assert off.detail == "not configured (log: speculative_config=None)"
