"""``refine plan``: the arithmetic checked against vLLM for CPU and the reference setup."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.ops import run_plan
from owlai_refine.ops.plan.command import EXAMPLES
from owlai_refine.ops.plan.kvcache import PlanInput, kv_layout, stage_layers
from owlai_refine.ops.plan.modelarch import arch_from_config

from .conftest import FIXTURES

SMOLLM2 = FIXTURES / "smollm2-135m-config.json"  # the real config.json vLLM for CPU loaded
QWEN35 = FIXTURES / "qwen3.5-35b-a3b-config.json"


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    assert run_plan(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("dtype", "tokens", "concurrency"),
    [("float32", 23296, "5.69"), ("bfloat16", 46592, "11.38")],
)
def test_vllm_cpu_startup_line_exactly(
    capsys: pytest.CaptureFixture[str], dtype: str, tokens: int, concurrency: str
) -> None:
    # vLLM 0.32 for CPU, VLLM_CPU_KVCACHE_SPACE=1: "CPU KV cache size: 23,296 tokens,
    # Maximum concurrency for 4,096 tokens per request: 5.69x" (fixtures/vllm/startup-*.log)
    argv = ["--config", str(SMOLLM2), "--kv-cache-gib", "1", "--max-model-len", "4096"]
    argv += ["--dtype", dtype, "--max-num-seqs", "4", "--json"]
    out = _json(capsys, argv)
    assert isinstance(out, dict)
    assert out["kv_cache_tokens"] == tokens
    assert f"{out['max_concurrency']:.2f}" == concurrency


def test_reference_setup_int4_over_fp8(capsys: pytest.CaptureFixture[str]) -> None:
    # Two 24 GB cards, TP 2, Qwen3.5-35B-A3B, 262,144-token window, fp8 KV cache, prefix
    # caching: Int4 weights leave 10.0 GiB a card = 1,000 blocks of 2,096 tokens; a window
    # takes 126 of them plus 2 for each of the 3 state groups, so 1000 / 132 = 7.58 windows.
    argv = ["--config", str(QWEN35), "--gpus", "2", "--gpu-memory-gib", "rtx3090"]
    argv += ["--gpu-memory-utilization", "0.95", "--max-model-len", "262144"]
    argv += ["--max-num-seqs", "4", "--kv-cache-dtype", "fp8", "--weights-gib", "22.7"]
    argv += ["--label", "Int4", "--variant", "FP8:weights-gib=34.9"]
    argv += ["--variant", "Int4 32k:max-num-batched-tokens=32768", "--json"]
    int4, fp8, batched = _json(capsys, argv)
    assert int4["num_blocks"] == 1000 and int4["block_size"] == 2096
    assert f"{int4['max_concurrency']:.2f}" == "7.58" and int4["seqs_fit"]
    assert fp8["max_concurrency"] < 4 and not fp8["seqs_fit"]
    assert "would be preempted" in fp8["verdict"]
    shrink = 1 - batched["kv_cache_gib"] / int4["kv_cache_gib"]  # the issue: 9.7 -> 8.1, -17%
    assert 0.13 < shrink < 0.2


def test_table_puts_variants_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--config", str(SMOLLM2), "--kv-cache-gib", "1", "--max-model-len", "4096"]
    argv += ["--dtype", "float32", "--max-num-seqs", "8", "--variant", "bf16:dtype=bfloat16"]
    assert run_plan(argv) == 0
    out = capsys.readouterr().out
    assert "23,296" in out and "46,592" in out
    assert "5.69 windows < 8 slots" in out and "11.38 windows >= 8 slots" in out


def test_hybrid_layout_follows_vllm() -> None:
    arch = arch_from_config(json.loads(QWEN35.read_text()), "q")
    assert arch.count("full") == 10 and arch.count("state") == 30
    lay = kv_layout(PlanInput(arch, 262144, tensor_parallel_size=2, kv_cache_dtype="fp8"))
    # one GDN layer's state on a rank: conv 4096 x 3 bf16 + 16 x 128 x 128 float32
    assert lay.page_bytes == 4096 * 3 * 2 + 16 * 128 * 128 * 4 == 2096 * 512
    assert (lay.groups, lay.group_size, lay.blocks_per_request) == (4, 10, 126 + 3 * 2)


def test_sliding_window_and_mla_and_pipeline_stages() -> None:
    gemma2 = arch_from_config(
        {"model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 64}
        | {"num_attention_heads": 4, "num_key_value_heads": 2, "sliding_window": 4096}
    )
    assert gemma2.layers == ("sliding", "full", "sliding", "full")
    lay = kv_layout(PlanInput(gemma2, 32768, max_num_batched_tokens=8192))
    assert lay.blocks_per_request == 2048 + (-(-(4095 + 8192) // 16) + 1)
    mla = arch_from_config(
        {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}
        | {"kv_lora_rank": 512, "qk_rope_head_dim": 64}
    )
    assert kv_layout(PlanInput(mla, 1024, tensor_parallel_size=8)).bytes_per_token == 2 * 576 * 2
    assert stage_layers(27, 2) == [14, 13] and stage_layers(10, 4) == [2, 3, 3, 2]


def test_no_memory_given_is_a_usage_error_naming_the_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 22: the error names the flags to give, never the Python fields behind them."""
    assert run_plan(["--config", str(SMOLLM2), "--max-model-len", "4096"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("refine plan: error: no memory to plan: give --kv-cache-gib GIB")
    assert "--gpu-memory-gib" in err and "--weights-gib" in err and err.count("\n") == 1
    assert "kv_cache_gib" not in err and "weights_gib" not in err and "gpu_memory" not in err
    assert run_plan(["--config", str(SMOLLM2), "--gpu-memory-gib", "8"]) == 2
    err = capsys.readouterr().err
    assert "--gpu-memory-gib needs the weights' size: give --weights-gib GIB" in err
    assert f"({SMOLLM2} is a file, not a model folder)" in err and "_gib" not in err
    assert run_plan(["--config", str(SMOLLM2), "--weights-gib", "0.3"]) == 2
    assert "--weights-gib needs --gpu-memory-gib (GiB per card" in capsys.readouterr().err
    argv = ["--config", str(SMOLLM2), "--kv-cache-gib", "1", "--variant", "x:kv_cache=2"]
    assert run_plan(argv) == 2
    assert "unknown flag --kv-cache" in capsys.readouterr().err


def test_the_column_is_labelled_with_the_model_not_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22: ``--config fixtures/vllm/smollm2-135m-config.json`` was labelled ``vllm``."""
    base = ["--kv-cache-gib", "1", "--max-model-len", "4096", "--json"]
    assert _json(capsys, ["--config", str(SMOLLM2), *base])["label"] == "smollm2-135m"
    folder = tmp_path / "SmolLM2-135M-Instruct"
    folder.mkdir()
    (folder / "config.json").write_text(SMOLLM2.read_text())
    assert _json(capsys, ["--config", str(folder), *base])["label"] == "SmolLM2-135M-Instruct"
    assert _json(capsys, ["--config", str(folder / "config.json"), *base])["model"] == (
        "SmolLM2-135M-Instruct"
    )
    named = json.loads(SMOLLM2.read_text()) | {"_name_or_path": "HuggingFaceTB/SmolLM2-135M"}
    loose = tmp_path / "cfg.json"
    loose.write_text(json.dumps(named))
    assert _json(capsys, ["--config", str(loose), *base])["label"] == "SmolLM2-135M"
    assert run_plan(["--config", str(SMOLLM2), *base[:-1]]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.split() == ["smollm2-135m"] and "vllm" not in header


def test_every_help_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``refine plan --help`` ends with examples; each runs (paths swapped for fixtures)."""
    assert run_plan(["--help"]) == 0
    help_text = capsys.readouterr().out
    assert help_text.rstrip().endswith(EXAMPLES.rstrip())
    folder = tmp_path / "Qwen3-32B"
    folder.mkdir()
    (folder / "config.json").write_text(SMOLLM2.read_text())
    (folder / "model.safetensors").write_bytes(b"\0" * 4096)
    swap = {
        "~/models/Qwen3-32B": str(folder),
        "config.json": str(SMOLLM2),
        "ledger.jsonl": str(FIXTURES / "ledger-sample.log"),
    }
    lines = EXAMPLES.replace("\\\n", " ").splitlines()[1:]
    assert len(lines) == 3
    for line in lines:
        argv = [swap.get(word, word) for word in shlex.split(line)]
        assert argv[:2] == ["refine", "plan"]
        assert run_plan(argv[2:]) == 0, capsys.readouterr().err
        assert "window" in capsys.readouterr().out


def test_unreadable_config_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_plan(["--config", str(tmp_path / "nope.json"), "--kv-cache-gib", "1"]) == 3
    bad = tmp_path / "config.json"
    bad.write_text('{"hidden_size": 8}')
    assert run_plan(["--config", str(tmp_path), "--kv-cache-gib", "1"]) == 3
    assert "num_hidden_layers" in capsys.readouterr().err


def test_weights_from_the_model_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_text(SMOLLM2.read_text())
    (tmp_path / "model.safetensors").write_bytes(b"\0" * 1024)
    out = _json(
        capsys,
        ["--config", str(tmp_path), "--gpu-memory-gib", "8", "--max-model-len", "4096", "--json"],
    )
    assert isinstance(out, dict) and out["memory_gib"]["weights"] == 0.0
