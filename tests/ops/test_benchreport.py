"""Step figures, medians across repeats, and the knee rule on hand-made numbers."""

from __future__ import annotations

import pytest

from owlai_refine.ops.bench.report import (
    Point,
    Spread,
    find_knee,
    format_table,
    learn_max_num_seqs,
    points,
    queued_steps,
    step_stats,
)
from owlai_refine.ops.bench.step import RequestResult, StepRaw
from owlai_refine.ops.bench.sweep import BenchResult

from .conftest import fixture_text


def _point(conc: int, tps: float, ttft: float, tpot: float, **more: float) -> Point:
    figs = {"output_tokens_per_s": tps, "ttft_p50_s": ttft, "tpot_p50_s": tpot, **more}
    return Point(
        input_tokens=1100,
        concurrency=conc,
        repeats=3,
        figures={k: Spread(median=v, min=v, max=v) for k, v in figs.items()},
    )


SWEEP = [
    _point(1, 10.0, 1.0, 0.050),
    _point(2, 18.0, 1.2, 0.060),
    _point(4, 25.0, 2.0, 0.088),
    _point(8, 26.0, 3.3, 0.200),
]


def test_knee_sentence() -> None:
    knee = find_knee(SWEEP)
    # best 26 at 8; 4 gives 25 >= 0.95 * 26 = 24.7, 2 gives 18 < 24.7
    assert (knee.concurrency, knee.best_concurrency, knee.next_concurrency) == (4, 8, 8)
    assert knee.throughput_change == pytest.approx(0.04)  # 26 / 25 - 1
    assert knee.ttft_change == pytest.approx(0.65)  # 3.3 / 2.0 - 1
    assert knee.decode_speed_change == pytest.approx(-0.56)  # (1/0.2) / (1/0.088) - 1
    assert knee.sentence == "4 -> 8: +4% throughput, +65% TTFT, -56% per-request decode speed"


def test_knee_margin_zero_is_the_best() -> None:
    assert find_knee(SWEEP, margin=0.0).concurrency == 8


def test_knee_at_the_largest_concurrency_says_sweep_higher() -> None:
    knee = find_knee(SWEEP[:3])
    assert knee.concurrency == 4
    assert knee.next_concurrency is None
    assert "sweep higher" in knee.sentence


def test_knee_tiny_change_reads_plus_zero() -> None:
    flat = [_point(1, 10.0, 1.0, 0.05), _point(2, 9.98, 2.0, 0.1)]
    assert find_knee(flat).sentence.startswith("1 -> 2: +0% throughput, +100% TTFT, -50%")


def test_knee_needs_throughput() -> None:
    with pytest.raises(ValueError, match="no step"):
        find_knee([])


def test_step_stats_by_hand() -> None:
    ok = [
        RequestResult(
            prompt_tokens=100, completion_tokens=10, ttft_s=1.0, latency_s=2.8, tpot_s=0.2
        ),
        RequestResult(
            prompt_tokens=102, completion_tokens=10, ttft_s=2.0, latency_s=3.8, tpot_s=0.2
        ),
        RequestResult(
            prompt_tokens=98, completion_tokens=10, ttft_s=3.0, latency_s=3.9, tpot_s=0.1
        ),
    ]
    raw = StepRaw(
        concurrency=3,
        wall_s=5.0,
        results=[*ok, RequestResult(error="boom")],
        preemptions=0.0,
        prefix_hits=0.0,
        prefix_queries=300.0,
        kv_peak=0.25,
    )
    s = step_stats(raw, input_tokens=100, repeat=1)
    assert (s.requests, s.errors) == (4, 1)
    assert s.prompt_tokens_mean == 100.0
    assert s.output_tokens_per_s == 6.0  # 30 tokens / 5 s
    assert s.total_tokens_per_s == 66.0  # (300 + 30) / 5 s
    assert s.ttft_p50_s == 2.0
    assert s.ttft_p90_s == pytest.approx(2.8)  # h = 1.8: 2 + 0.8 * 1
    assert s.tpot_p50_s == 0.2
    assert s.e2e_p90_s == pytest.approx(3.88)  # sorted 2.8, 3.8, 3.9; h = 1.8
    assert s.kv_cache_peak == 0.25


def test_points_take_median_and_spread_across_repeats() -> None:
    def raw(tokens: int) -> StepRaw:
        r = RequestResult(prompt_tokens=10, completion_tokens=tokens, ttft_s=1.0, latency_s=2.0)
        return StepRaw(concurrency=2, wall_s=1.0, results=[r])

    stats = [step_stats(raw(t), 10, i) for i, t in enumerate([10, 12, 20], start=1)]
    (p,) = points(stats)
    tps = p.figures["output_tokens_per_s"]
    assert (tps.median, tps.min, tps.max) == (12, 10, 20)
    assert tps.spread == pytest.approx(10 / 12)
    assert "preemptions" not in p.figures  # no /metrics, no figure
    table = format_table([p])
    row = table.splitlines()[1].split()
    assert row[3:5] == ["12.0", "±42%"]  # half of (20 - 10) / 12
    assert table.splitlines()[0].split()[:3] == ["input", "conc", "prompt"]


def _queued_point(conc: int, tps: float, ttft: float, run: float, wait: float) -> Point:
    return _point(conc, tps, ttft, 0.1, running_peak=run, waiting_peak=wait)


# The sweep: a server started with max_num_seqs 4, swept to 8 (TTFT 11.7 s -> 20.1 s).
CAPPED = [
    _queued_point(1, 10.0, 3.0, 1, 0),
    _queued_point(2, 17.0, 6.0, 2, 0),
    _queued_point(4, 25.0, 11.7, 4, 0),
    _queued_point(8, 30.0, 20.1, 4, 4),
]


def test_max_num_seqs_is_learned_from_running_and_waiting() -> None:
    assert learn_max_num_seqs(CAPPED, None) == (
        4,
        "/metrics: running stopped there while requests waited",
    )
    assert learn_max_num_seqs(CAPPED, 6)[0] == 6  # the startup log wins
    assert learn_max_num_seqs(CAPPED[:3], None) == (None, None)  # never reached the cap


def test_queued_steps_are_never_the_knee() -> None:
    assert find_knee(CAPPED).concurrency == 8  # throughput alone picks the queued step
    queued = queued_steps(CAPPED, 4)
    assert queued == [8]
    knee = find_knee(CAPPED, queued=queued)
    assert (knee.concurrency, knee.next_concurrency, knee.queued) == (4, 8, [8])
    assert knee.sentence.endswith("not recommended: 8 (queued in the server, see the table)")
    assert queued_steps(CAPPED, None) == [8]  # seen waiting, without the log
    assert queued_steps(CAPPED[:3], 2) == [4]  # beyond a known cap, even if unseen
    table = format_table(CAPPED, queued)
    assert table.splitlines()[-1].endswith("4/4  QUEUED")


def test_every_step_queued_keeps_the_smallest() -> None:
    knee = find_knee(CAPPED[2:], queued=[4, 8])
    assert knee.concurrency == 4 and knee.next_concurrency is None
    assert knee.sentence.startswith("every step queued in the server: 4, the smallest")


def test_recorded_sweep_of_a_max_num_seqs_4_server() -> None:
    # refine bench against vLLM for CPU started with --max-num-seqs 4, swept 1,2,4,8
    # (fixtures/vllm/bench-max-num-seqs-4-swept-to-8.json, recorded on this project's machine)
    res = BenchResult.model_validate_json(fixture_text("bench-max-num-seqs-4-swept-to-8.json"))
    pts = points(res.steps)
    assert learn_max_num_seqs(pts, None)[0] == 4
    assert queued_steps(pts, 4) == [8]
    knee = find_knee(pts, 0.05, queued_steps(pts, 4))
    assert knee.concurrency == 4 and knee.queued == [8]
    by_conc = {p.concurrency: p for p in pts}
    assert (by_conc[8].median("ttft_p50_s") or 0) > 2 * (by_conc[4].median("ttft_p50_s") or 0)
