"""Render a :class:`~owlai_refine.ops.bench.sweep.BenchResult` as the text ``refine bench`` prints:
header, step table, knee sentences, the cross-check table and the warnings. Pure."""

from __future__ import annotations

from owlai_refine.ops.bench.crosscheck import CrossCheck
from owlai_refine.ops.bench.report import format_table
from owlai_refine.ops.bench.sweep import BenchResult

__all__ = ["format_cross_check", "format_result"]


def _s(x: float | None, scale: float = 1.0, fmt: str = ".3f") -> str:
    return "-" if x is None else format(x * scale, fmt)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1%}"


def format_cross_check(rows: list[CrossCheck]) -> str:
    """One line per cross-checked step: TTFT p50 and TPOT p50 (ms) ours vs ``vllm bench
    serve``, the differences (ours / theirs - 1) and whether both are within tolerance."""
    head = (
        "input  conc  rand_len  TTFT ours/vllm (ms)  diff    TPOT ours/vllm (ms)  diff    "
        "out tok/s ours/vllm  within"
    )
    lines = [head]
    for r in rows:
        if r.error:
            lines.append(f"{r.input_tokens:>5,}  {r.concurrency:>4}  vllm bench failed: {r.error}")
            continue
        lines.append(
            f"{r.input_tokens:>5,}  {r.concurrency:>4}  {r.random_input_len:>8}  "
            f"{_s(r.ours_ttft_p50_s, 1000, '.0f'):>8} / {_s(r.theirs_ttft_p50_s, 1000, '.0f'):<8}"
            f"  {_pct(r.ttft_diff):>6}  "
            f"{_s(r.ours_tpot_p50_s, 1000, '.1f'):>8} / {_s(r.theirs_tpot_p50_s, 1000, '.1f'):<8}"
            f"  {_pct(r.tpot_diff):>6}  "
            f"{_s(r.ours_output_tokens_per_s, 1, '.1f'):>9} / "
            f"{_s(r.theirs_output_tokens_per_s, 1, '.1f'):<9}  "
            f"{'yes' if r.within else 'NO'} (±{r.tolerance:.0%})"
        )
    return "\n".join(lines)


def format_result(res: BenchResult) -> str:
    """The full human report of one sweep."""
    s = res.settings
    cap = "unknown" if res.kv_capacity_tokens is None else f"{res.kv_capacity_tokens:,} tokens"
    seqs = "unknown" if res.max_num_seqs is None else str(res.max_num_seqs)
    lines = [
        f"refine bench: {res.model} @ {res.base_url} (max_model_len {res.max_model_len}, "
        f"KV capacity {cap} from {res.kv_capacity_source or '-'}, max_num_seqs {seqs} from "
        f"{res.max_num_seqs_source or '-'})",
        f"output {s['output_tokens']} tokens, concurrency {s['concurrency']}, "
        f"{s['repeats']} repeat(s) x {s['rounds']} request(s) per slot per step; "
        "medians across repeats, ±half the (max-min)/median spread",
        "prompt lengths: "
        + ", ".join(
            f"{f.target:,} (measured {f.measured:,} via {f.counted_by})" for f in res.lengths
        ),
        "",
        format_table(res.points, res.queued_concurrency),
        "",
    ]
    for k in res.knees:
        lines.append(
            f"knee for {k.input_tokens:,} input tokens: concurrency {k.concurrency} (within "
            f"{k.margin:.0%} of the best, {k.best_output_tokens_per_s:.1f} out tok/s at "
            f"{k.best_concurrency}); {k.sentence}"
        )
    if res.cross_check:
        lines += ["", "cross-check against vllm bench serve (same server, same lengths):"]
        lines.append(format_cross_check(res.cross_check))
    if res.warnings:
        lines += ["", "warnings:"] + [f"  - {w}" for w in res.warnings]
    d = res.durations_s
    lines.append(
        f"\ntook {d['total']:.0f} s (calibrate {d['calibrate']:.0f} s, sweep {d['sweep']:.0f} s, "
        f"cross-check {d['cross_check']:.0f} s)"
    )
    return "\n".join(lines)
