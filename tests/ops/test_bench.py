"""``refine bench`` end to end against the loopback stub (instant replies: no timing asserts)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.ops import run_bench
from owlai_refine.ops.bench.lengths import kv_precheck

from .conftest import FIXTURES, Stub


def _bench(stub: Stub, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    argv = ["--base-url", stub.url, "--model", "smollm2", "--output-tokens", "8",
            "--concurrency", "1,2", "--repeats", "2", "--metrics-interval", "0.05", "--json",
            *extra]  # fmt: skip
    assert run_bench(argv) == 0, capsys.readouterr().err
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_sweep_shape_and_requests(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    data = _bench(stub, capsys, "--input-tokens", "60,120")
    assert [(f["target"], f["counted_by"]) for f in data["lengths"]] == [
        (60, "/tokenize"),
        (120, "/tokenize"),
    ]
    assert all(abs(f["measured"] - f["target"]) <= 2 for f in data["lengths"])
    # 2 lengths x 2 repeats x concurrency (1, 2)
    assert len(data["steps"]) == 8
    assert [s["requests"] for s in data["steps"][:2]] == [2, 4]  # conc x rounds (2)
    assert len(data["points"]) == 4
    assert [k["input_tokens"] for k in data["knees"]] == [60, 120]
    assert data["kv_capacity_tokens"] == 23296
    assert data["cross_check"] == []
    chats = [r for r in stub.state.requests if r.get("stream")]
    assert len(chats) == 1 + 8 * 3 // 2 * 2  # warm-up + (2 + 4) requests x 4 passes
    assert all(r["min_tokens"] == 8 and r["ignore_eos"] is True for r in chats)
    assert all(r["stream_options"] == {"include_usage": True} for r in chats)
    systems = [r["messages"][0]["content"] for r in chats]
    assert len(set(systems)) == len(systems)  # a unique prefix per request
    assert all(s.startswith("[bench ") for s in systems)
    step = data["steps"][0]
    assert step["prompt_tokens_mean"] == pytest.approx(data["lengths"][0]["measured"], abs=1)
    assert step["preemptions"] == 0.0
    assert step["prefix_cache_hits"] == 0.0


def test_prefix_cache_hits_warn(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    stub.state.prefix_hit_tokens = 16
    data = _bench(stub, capsys, "--input-tokens", "60")
    assert any("vllm:prefix_cache_hits_total rose" in w for w in data["warnings"])


def test_no_force_length_and_no_metrics(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    stub.state.metrics_file = None
    data = _bench(stub, capsys, "--input-tokens", "60", "--no-force-length")
    assert "min_tokens" not in stub.state.requests[-1]
    assert data["kv_capacity_tokens"] is None
    assert any("no /metrics" in w for w in data["warnings"])
    assert data["steps"][0]["preemptions"] is None


def test_without_tokenize_counts_by_usage(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    stub.state.tokenize = False
    data = _bench(stub, capsys, "--input-tokens", "60")
    assert data["lengths"][0]["counted_by"] == "usage.prompt_tokens"


def test_ledger_lengths_and_cap(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = str(FIXTURES / "ledger-sample.log")
    data = _bench(stub, capsys, "--ledger", ledger, "--quantiles", "0.1,0.99", "--repeats", "1")
    # smollm2 calls: p10 1,400; p99 38,760 capped at max_model_len 4,096 - 8 output tokens
    assert [f["target"] for f in data["lengths"]] == [1400, 4088]
    assert any("capped at 4,088" in w for w in data["warnings"])


def test_text_report_and_plot(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "bench.png"
    argv = ["--base-url", stub.url, "--model", "smollm2", "--input-tokens", "60",
            "--output-tokens", "4", "--concurrency", "1,2,4", "--repeats", "1",
            "--plot", str(png)]  # fmt: skip
    assert run_bench(argv) == 0
    out = capsys.readouterr().out
    assert "knee for 60 input tokens: concurrency" in out
    assert out.splitlines()[4].split()[:2] == ["input", "conc"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_an_unwritable_plot_is_refused_before_the_sweep(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "missing-dir" / "bench.png"
    argv = ["--base-url", stub.url, "--model", "smollm2", "--input-tokens", "60",
            "--output-tokens", "4", "--concurrency", "1", "--repeats", "1",
            "--plot", str(png)]  # fmt: skip
    assert run_bench(argv) == 4  # Exit.OUTPUT, as for refine -o
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist" in err
    assert stub.state.requests == []  # no chat request was sent


def test_cross_check_with_a_fake_vllm(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    fake = tmp_path / "vllm"
    fake.write_text(
        f"#!{sys.executable}\nimport shutil, sys\na = sys.argv\n"
        "out = a[a.index('--result-dir') + 1] + '/' + a[a.index('--result-filename') + 1]\n"
        f"shutil.copy({str(FIXTURES / 'vllm-bench-serve-result.json')!r}, out)\n",
        encoding="utf-8",
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    data = _bench(stub, capsys, "--input-tokens", "60", "--vllm-bench", str(fake),
                  "--cross-check-concurrency", "2")  # fmt: skip
    (row,) = data["cross_check"]
    assert row["concurrency"] == 2
    assert row["theirs_ttft_p50_s"] == pytest.approx(0.45428555)
    # random input length = our templated length minus the template's lone-user-message cost
    overhead = data["settings"]["chat_template_user_overhead_tokens"]
    assert (
        row["random_input_len"]
        == round(data["points"][1]["figures"]["prompt_tokens_mean"]["median"]) - overhead
    )


def test_kv_precheck_warns_past_capacity() -> None:
    (text,) = kv_precheck([3000, 500], [1, 4, 8], 32, 23296)
    assert text.startswith("input 3,000: concurrency 8 x (3,000 + 32) = 24,256 tokens > KV")
    assert kv_precheck([500], [8], 32, None)[0].startswith("KV cache capacity unknown")


def test_unknown_model_exit_2(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--base-url", stub.url, "--model", "nope", "--input-tokens", "60"]
    assert run_bench(argv) == 2
    assert capsys.readouterr().err == (
        "refine bench: error: model 'nope' is not served (serves: smollm2)\n"
    )


def test_unreachable_exit_3(dead_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(["--base-url", dead_url, "--model", "m", "--input-tokens", "60"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("refine bench: error: cannot reach ")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    "extra",
    [
        [],  # neither --input-tokens nor --ledger
        ["--input-tokens", "60", "--ledger", "x"],
        ["--input-tokens", "6O"],
        ["--input-tokens", "60", "--quantiles", "50"],
        ["--input-tokens", "60", "--repeats", "0"],
        ["--input-tokens", "60", "--margin", "1.5"],
    ],
)
def test_usage_errors_exit_2(extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run_bench(["--base-url", "http://127.0.0.1:1/v1", "--model", "m", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refine bench: error: ")
    assert err.count("\n") == 1


def test_credentials_in_the_url_are_not_shown(
    dead_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    secret_url = dead_url.replace("http://", "http://user:s3cret@")
    assert run_bench(["--base-url", secret_url, "--model", "m", "--input-tokens", "60"]) == 3
    err = capsys.readouterr().err
    assert "cannot reach" in err and "s3cret" not in err and "user" not in err
