"""Cross-check ``refine bench`` against ``vllm bench serve`` from the same vLLM install.

For a step (input length, concurrency) we run, on the same server::

    vllm bench serve --backend openai-chat --endpoint /v1/chat/completions
        --dataset-name random --random-input-len L --random-output-len O
        --random-range-ratio 0 --ignore-eos --max-concurrency C --num-prompts C*rounds
        --request-rate inf --temperature 0 --save-result --save-detailed ...

with a fresh ``--seed`` per run (the random dataset is a function of the seed: a repeated
seed repeats prompts, which the prefix cache then serves). From its result JSON's per-request
``ttfts``, ``latencies`` and ``output_lens`` we compute TTFT and TPOT (``(latency - ttft) /
(output_len - 1)``) p50 with the same type-7 quantile as ours (NumPy's default, which ``vllm
bench serve`` itself uses). ``L`` is our templated prompt length minus the chat template's cost
of a lone user message, since the random dataset sizes only the user text; its ``input_lens``
are the server's ``usage.prompt_tokens`` and so come out equal to ours. Its prompts are random
token ids, ours filler words: same lengths, not the same text.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from owlai_refine.ops.quantiles import quantile

__all__ = [
    "CrossCheck",
    "ForeignStats",
    "compare",
    "median_stats",
    "parse_vllm_result",
    "run_vllm_bench",
    "vllm_bench_argv",
]


class ForeignStats(BaseModel):
    """Figures from one ``vllm bench serve`` run (seconds; tokens/s; ``input_len_mean``: mean
    prompt tokens, the server's ``usage.prompt_tokens`` when it reports usage)."""

    model_config = ConfigDict(frozen=True)

    completed: int
    failed: int
    ttft_p50_s: float
    ttft_p90_s: float
    tpot_p50_s: float | None
    tpot_p90_s: float | None
    e2e_p50_s: float
    output_tokens_per_s: float
    input_len_mean: float | None
    wall_s: float


class CrossCheck(BaseModel):
    """Ours against ``vllm bench serve`` for one step. ``*_diff`` is ours / theirs - 1;
    ``within`` is true when both TTFT and TPOT p50 differ by at most ``tolerance``; their
    figures are medians over ``theirs_runs`` runs (see :func:`median_stats`)."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int
    concurrency: int
    random_input_len: int
    ours_ttft_p50_s: float | None
    theirs_ttft_p50_s: float | None
    ttft_diff: float | None
    ours_tpot_p50_s: float | None
    theirs_tpot_p50_s: float | None
    tpot_diff: float | None
    ours_output_tokens_per_s: float | None
    theirs_output_tokens_per_s: float | None
    tolerance: float
    within: bool
    theirs_wall_s: float | None
    theirs_runs: int = 1
    theirs_prompt_tokens_mean: float | None = None
    theirs_prefix_cache_hits: float | None = None
    error: str | None = None


def vllm_bench_argv(
    vllm: str,
    *,
    root_url: str,
    model: str,
    tokenizer: str | None,
    input_len: int,
    output_len: int,
    concurrency: int,
    num_prompts: int,
    result_dir: str,
    result_filename: str,
    seed: int = 0,
) -> list[str]:
    """The ``vllm bench serve`` argument list for one step (see the module docstring)."""
    argv = [
        vllm, "bench", "serve",
        "--backend", "openai-chat", "--base-url", root_url, "--endpoint", "/v1/chat/completions",
        "--model", model,
        "--dataset-name", "random", "--random-input-len", str(input_len),
        "--random-output-len", str(output_len), "--random-range-ratio", "0",
        "--ignore-eos", "--temperature", "0",
        "--max-concurrency", str(concurrency), "--num-prompts", str(num_prompts),
        "--request-rate", "inf", "--seed", str(seed),
        "--percentile-metrics", "ttft,tpot,e2el", "--metric-percentiles", "50,90",
        "--save-result", "--save-detailed", "--result-dir", result_dir,
        "--result-filename", result_filename, "--disable-tqdm",
    ]  # fmt: skip
    if tokenizer:
        argv += ["--tokenizer", tokenizer]
    return argv


def _floats(data: dict[str, Any], key: str) -> list[float]:
    raw = data.get(key) or []
    return [float(v) for v in raw if isinstance(v, int | float)]


def parse_vllm_result(data: dict[str, Any]) -> ForeignStats:
    """Figures from a ``vllm bench serve --save-result --save-detailed`` JSON object.

    Raises ``ValueError`` when it holds no successful request.
    """
    errors = data.get("errors") or []
    ttfts_all = data.get("ttfts") or []
    lat_all = data.get("latencies") or []
    outs_all = data.get("output_lens") or []
    rows = [
        (float(t), float(lat), int(o))
        for t, lat, o, err in zip(
            ttfts_all, lat_all, outs_all, errors or [""] * len(ttfts_all), strict=False
        )
        if not err and t and lat
    ]
    if not rows:
        raise ValueError("vllm bench serve result has no successful request")
    ttfts = [t for t, _, _ in rows]
    tpots = [(lat - t) / (o - 1) for t, lat, o in rows if o > 1]
    wall = float(data.get("duration") or 0.0)
    inputs = _floats(data, "input_lens")
    return ForeignStats(
        completed=int(data.get("completed") or len(rows)),
        failed=int(data.get("failed") or 0),
        ttft_p50_s=quantile(ttfts, 0.5),
        ttft_p90_s=quantile(ttfts, 0.9),
        tpot_p50_s=quantile(tpots, 0.5) if tpots else None,
        tpot_p90_s=quantile(tpots, 0.9) if tpots else None,
        e2e_p50_s=quantile([lat for _, lat, _ in rows], 0.5),
        output_tokens_per_s=float(data.get("output_throughput") or 0.0),
        input_len_mean=sum(inputs) / len(inputs) if inputs else None,
        wall_s=wall,
    )


async def run_vllm_bench(argv: Sequence[str], timeout_s: float) -> dict[str, Any]:
    """Run ``argv`` (from :func:`vllm_bench_argv`, whose result path it rewrites to a fresh
    temporary folder) and return its result JSON. Raises ``RuntimeError`` with the tail of its
    output when it fails, times out, or writes no result."""
    args = list(argv)
    with tempfile.TemporaryDirectory(prefix="refine-bench-") as tmp:
        args[args.index("--result-dir") + 1] = tmp
        name = args[args.index("--result-filename") + 1]
        try:
            with anyio.fail_after(timeout_s):
                proc = await anyio.run_process(args, check=False, stderr=subprocess.STDOUT)
        except TimeoutError as exc:
            raise RuntimeError(f"vllm bench serve ran over {timeout_s:.0f} s") from exc
        except OSError as exc:
            raise RuntimeError(f"cannot run {args[0]}: {exc}") from exc
        tail = proc.stdout.decode(errors="replace")[-600:]
        path = Path(tmp) / name
        if proc.returncode != 0 or not path.is_file():
            raise RuntimeError(f"vllm bench serve exited {proc.returncode}: ...{tail}")
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return loaded


def median_stats(runs: Sequence[ForeignStats]) -> ForeignStats:
    """Combine several runs of one step the way ours are combined: the median across runs of
    each run's figures (counts are summed). Raises ``ValueError`` if ``runs`` is empty."""
    if not runs:
        raise ValueError("no runs to combine")

    def med(values: Sequence[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    ins = med([r.input_len_mean for r in runs])
    return ForeignStats(
        completed=sum(r.completed for r in runs),
        failed=sum(r.failed for r in runs),
        ttft_p50_s=statistics.median(r.ttft_p50_s for r in runs),
        ttft_p90_s=statistics.median(r.ttft_p90_s for r in runs),
        tpot_p50_s=med([r.tpot_p50_s for r in runs]),
        tpot_p90_s=med([r.tpot_p90_s for r in runs]),
        e2e_p50_s=statistics.median(r.e2e_p50_s for r in runs),
        output_tokens_per_s=statistics.median(r.output_tokens_per_s for r in runs),
        input_len_mean=ins,
        wall_s=sum(r.wall_s for r in runs),
    )


def _diff(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else ours / theirs - 1


def compare(
    *,
    input_tokens: int,
    concurrency: int,
    random_input_len: int,
    ours_ttft: float | None,
    ours_tpot: float | None,
    ours_tps: float | None,
    theirs: ForeignStats | None,
    tolerance: float = 0.10,
    prefix_hits: float | None = None,
    runs: int = 1,
    error: str | None = None,
) -> CrossCheck:
    """One :class:`CrossCheck` row from our medians and their figures (``None`` + ``error``
    when their run failed)."""
    ttft_d = _diff(ours_ttft, theirs.ttft_p50_s if theirs else None)
    tpot_d = _diff(ours_tpot, theirs.tpot_p50_s if theirs else None)
    within = (
        ttft_d is not None
        and tpot_d is not None
        and abs(ttft_d) <= tolerance
        and abs(tpot_d) <= tolerance
    )
    return CrossCheck(
        input_tokens=input_tokens,
        concurrency=concurrency,
        random_input_len=random_input_len,
        ours_ttft_p50_s=ours_ttft,
        theirs_ttft_p50_s=theirs.ttft_p50_s if theirs else None,
        ttft_diff=ttft_d,
        ours_tpot_p50_s=ours_tpot,
        theirs_tpot_p50_s=theirs.tpot_p50_s if theirs else None,
        tpot_diff=tpot_d,
        ours_output_tokens_per_s=ours_tps,
        theirs_output_tokens_per_s=theirs.output_tokens_per_s if theirs else None,
        tolerance=tolerance,
        within=within,
        theirs_wall_s=theirs.wall_s if theirs else None,
        theirs_prompt_tokens_mean=theirs.input_len_mean if theirs else None,
        theirs_prefix_cache_hits=prefix_hits,
        theirs_runs=runs,
        error=error,
    )
