"""The ``vllm bench serve`` side of the cross-check, on a recorded real result file."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from owlai_refine.ops.bench.crosscheck import (
    ForeignStats,
    compare,
    parse_vllm_result,
    run_vllm_bench,
    vllm_bench_argv,
)

from .conftest import FIXTURES

RESULT = FIXTURES / "vllm-bench-serve-result.json"


def _result() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(RESULT.read_text(encoding="utf-8"))
    return data


def test_parse_agrees_with_vllm_own_medians() -> None:
    data = _result()
    stats = parse_vllm_result(data)
    # our type-7 p50 over its per-request lists equals the medians it printed itself
    assert stats.ttft_p50_s == pytest.approx(data["median_ttft_ms"] / 1000)
    assert stats.tpot_p50_s == pytest.approx(data["median_tpot_ms"] / 1000)
    assert stats.e2e_p50_s == pytest.approx(data["median_e2el_ms"] / 1000)
    assert (stats.completed, stats.failed) == (4, 0)
    assert stats.input_len_mean == 300.0  # usage.prompt_tokens, chat template included


def test_parse_skips_failed_requests_and_rejects_all_failed() -> None:
    data = _result()
    data["errors"] = ["", "boom", "", ""]
    assert parse_vllm_result(data).ttft_p50_s == pytest.approx(0.7592465819999461)
    data["errors"] = ["x"] * 4
    with pytest.raises(ValueError, match="no successful request"):
        parse_vllm_result(data)


def test_argv_matches_the_step() -> None:
    argv = vllm_bench_argv(
        "/v/bin/vllm",
        root_url="http://127.0.0.1:1",
        model="smollm2",
        tokenizer="/tok",
        input_len=270,
        output_len=32,
        concurrency=4,
        num_prompts=8,
        result_dir="/r",
        result_filename="f.json",
        seed=7,
    )

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert argv[:3] == ["/v/bin/vllm", "bench", "serve"]
    assert value("--backend") == "openai-chat"
    assert value("--random-input-len") == "270"
    assert value("--max-concurrency") == "4"
    assert value("--num-prompts") == "8"
    assert "--ignore-eos" in argv
    assert value("--seed") == "7"
    assert argv[-2:] == ["--tokenizer", "/tok"]


def test_compare_within_and_outside() -> None:
    theirs = ForeignStats(
        completed=4, failed=0, ttft_p50_s=1.0, ttft_p90_s=1.2, tpot_p50_s=0.05,
        tpot_p90_s=0.06, e2e_p50_s=2.0, output_tokens_per_s=10.0, input_len_mean=300,
        wall_s=5.0,
    )  # fmt: skip
    kw: dict[str, Any] = {"input_tokens": 300, "concurrency": 1, "random_input_len": 270}
    near = compare(ours_ttft=1.05, ours_tpot=0.046, ours_tps=10.0, theirs=theirs, **kw)
    assert near.within
    assert near.ttft_diff == pytest.approx(0.05)
    assert near.tpot_diff == pytest.approx(-0.08)
    far = compare(ours_ttft=1.2, ours_tpot=0.05, ours_tps=10.0, theirs=theirs, **kw)
    assert not far.within
    failed = compare(ours_ttft=1.0, ours_tpot=0.05, ours_tps=1.0, theirs=None, error="x", **kw)
    assert (failed.within, failed.ttft_diff, failed.error) == (False, None, "x")


def _fake_vllm(tmp_path: Path, body: str) -> str:
    script = tmp_path / "vllm"
    script.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_run_reads_the_result_file(tmp_path: Path) -> None:
    fake = _fake_vllm(
        tmp_path,
        "import shutil, sys\n"
        "a = sys.argv\n"
        "out = a[a.index('--result-dir') + 1] + '/' + a[a.index('--result-filename') + 1]\n"
        f"shutil.copy({str(RESULT)!r}, out)\n",
    )
    argv = vllm_bench_argv(
        fake, root_url="http://x", model="m", tokenizer=None, input_len=1, output_len=2,
        concurrency=1, num_prompts=1, result_dir="ignored", result_filename="r.json",
    )  # fmt: skip
    data = anyio.run(run_vllm_bench, argv, 60.0)
    assert data["completed"] == 4


def test_run_failure_carries_the_output_tail(tmp_path: Path) -> None:
    fake = _fake_vllm(tmp_path, "import sys\nprint('no such model')\nsys.exit(3)\n")
    argv = vllm_bench_argv(
        fake, root_url="http://x", model="m", tokenizer=None, input_len=1, output_len=2,
        concurrency=1, num_prompts=1, result_dir="d", result_filename="r.json",
    )  # fmt: skip
    with pytest.raises(RuntimeError, match=r"exited 3: .*no such model"):
        anyio.run(run_vllm_bench, argv, 60.0)


def test_run_missing_command(tmp_path: Path) -> None:
    argv = vllm_bench_argv(
        str(tmp_path / "missing"), root_url="http://x", model="m", tokenizer=None,
        input_len=1, output_len=2, concurrency=1, num_prompts=1, result_dir="d",
        result_filename="r.json",
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="cannot run"):
        anyio.run(run_vllm_bench, argv, 60.0)
