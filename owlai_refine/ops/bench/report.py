"""Turn raw benchmark steps into figures, the knee, and the table ``refine bench`` prints.

Pure: no network, no files. Per repeat of a step (:class:`StepStats`): output tokens/s and total
(prompt + output) tokens/s over the step's wall time; TTFT, TPOT and end-to-end latency p50/p90
(type-7 quantiles over its requests, seconds). Across repeats (:class:`Point`): the median of
each figure and its spread, ``(max - min) / median``.

The knee (:func:`find_knee`): the smallest concurrency whose median output tokens/s is within
``margin`` (default 5%) of the best concurrency's; its cost is the change to the next swept
concurrency, in throughput, TTFT p50 and per-request decode speed (1 / TPOT p50). Steps the
server queued (:func:`queued_steps`: beyond its ``max_num_seqs``, or requests seen waiting in
``vllm:num_requests_waiting`` while fewer than the step's concurrency ran) are never the knee:
their throughput is the server's cap, bought with queueing time in TTFT.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from owlai_refine.ops.bench.step import StepRaw
from owlai_refine.ops.quantiles import quantile

__all__ = [
    "Knee",
    "Point",
    "Spread",
    "StepStats",
    "find_knee",
    "format_table",
    "learn_max_num_seqs",
    "points",
    "queued_steps",
    "step_stats",
]


class StepStats(BaseModel):
    """Figures of one repeat of one step. Throughputs in tokens/s, times in seconds; latency
    figures are ``None`` when no request succeeded; metric deltas ``None`` without /metrics."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int
    concurrency: int
    repeat: int
    requests: int
    errors: int
    wall_s: float
    prompt_tokens_mean: float | None
    output_tokens_per_s: float
    total_tokens_per_s: float
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    tpot_p50_s: float | None
    tpot_p90_s: float | None
    e2e_p50_s: float | None
    e2e_p90_s: float | None
    preemptions: float | None
    prefix_cache_hits: float | None
    prefix_cache_queries: float | None
    kv_cache_peak: float | None
    running_peak: float | None = None
    waiting_peak: float | None = None


class Spread(BaseModel):
    """Median, min and max of one figure across repeats; ``spread = (max - min) / median``."""

    model_config = ConfigDict(frozen=True)

    median: float
    min: float
    max: float

    @property
    def spread(self) -> float:
        """``(max - min) / median`` (0 when the median is 0)."""
        return (self.max - self.min) / self.median if self.median else 0.0


class Point(BaseModel):
    """One (input length, concurrency) step across its repeats: figure name -> Spread."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int
    concurrency: int
    repeats: int
    figures: dict[str, Spread]

    def median(self, name: str) -> float | None:
        """The median of figure ``name``, or ``None`` if no repeat had it."""
        s = self.figures.get(name)
        return None if s is None else s.median


class Knee(BaseModel):
    """The knee of one input length's sweep and the cost of going one step past it.

    ``next_*`` and the changes (fractions: +0.04 is +4%) are ``None`` when the knee is the
    largest concurrency swept.
    """

    model_config = ConfigDict(frozen=True)

    input_tokens: int
    margin: float
    concurrency: int
    best_concurrency: int
    best_output_tokens_per_s: float
    next_concurrency: int | None
    queued: list[int] = []
    throughput_change: float | None
    ttft_change: float | None
    decode_speed_change: float | None
    sentence: str


def _q(values: Sequence[float], p: float) -> float | None:
    return quantile(values, p) if values else None


def step_stats(raw: StepRaw, input_tokens: int, repeat: int) -> StepStats:
    """Summarise one repeat of one step."""
    ok = [r for r in raw.results if r.error is None]
    prompts = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    outs = sum(r.completion_tokens or 0 for r in ok)
    ttft = [r.ttft_s for r in ok if r.ttft_s is not None]
    tpot = [r.tpot_s for r in ok if r.tpot_s is not None]
    e2e = [r.latency_s for r in ok if r.latency_s is not None]
    wall = raw.wall_s if raw.wall_s > 0 else float("inf")
    return StepStats(
        input_tokens=input_tokens,
        concurrency=raw.concurrency,
        repeat=repeat,
        requests=len(raw.results),
        errors=len(raw.results) - len(ok),
        wall_s=raw.wall_s,
        prompt_tokens_mean=statistics.fmean(prompts) if prompts else None,
        output_tokens_per_s=outs / wall,
        total_tokens_per_s=(outs + sum(prompts)) / wall,
        ttft_p50_s=_q(ttft, 0.5),
        ttft_p90_s=_q(ttft, 0.9),
        tpot_p50_s=_q(tpot, 0.5),
        tpot_p90_s=_q(tpot, 0.9),
        e2e_p50_s=_q(e2e, 0.5),
        e2e_p90_s=_q(e2e, 0.9),
        preemptions=raw.preemptions,
        prefix_cache_hits=raw.prefix_hits,
        prefix_cache_queries=raw.prefix_queries,
        kv_cache_peak=raw.kv_peak,
        running_peak=raw.running_peak,
        waiting_peak=raw.waiting_peak,
    )


_FIGURES = [
    "prompt_tokens_mean",
    "output_tokens_per_s",
    "total_tokens_per_s",
    "ttft_p50_s",
    "ttft_p90_s",
    "tpot_p50_s",
    "tpot_p90_s",
    "e2e_p50_s",
    "e2e_p90_s",
    "preemptions",
    "prefix_cache_hits",
    "kv_cache_peak",
    "running_peak",
    "waiting_peak",
]


def points(stats: Sequence[StepStats]) -> list[Point]:
    """Group repeats by (input length, concurrency), sorted, into Points of medians/spreads."""
    groups: dict[tuple[int, int], list[StepStats]] = {}
    for s in stats:
        groups.setdefault((s.input_tokens, s.concurrency), []).append(s)
    out: list[Point] = []
    for (inp, conc), reps in sorted(groups.items()):
        figures: dict[str, Spread] = {}
        for name in _FIGURES:
            vals = [v for r in reps if (v := getattr(r, name)) is not None]
            if vals:
                figures[name] = Spread(median=statistics.median(vals), min=min(vals), max=max(vals))
        out.append(Point(input_tokens=inp, concurrency=conc, repeats=len(reps), figures=figures))
    return out


def _change(new: float | None, old: float | None) -> float | None:
    return None if new is None or old is None or old == 0 else new / old - 1


def find_knee(pts: Sequence[Point], margin: float = 0.05, queued: Sequence[int] = ()) -> Knee:
    """The knee of one input length's points (all with the same ``input_tokens``), among the
    steps whose concurrency is not in ``queued`` (see :func:`queued_steps`); when every step
    queued, the smallest concurrency, and the sentence says so.

    Raises ``ValueError`` if ``pts`` is empty or no point has a throughput.
    """
    measured = sorted(
        (p for p in pts if p.median("output_tokens_per_s") is not None),
        key=lambda p: p.concurrency,
    )
    ranked = [p for p in measured if p.concurrency not in queued] or measured[:1]
    if not ranked:
        raise ValueError("no step with a throughput")
    best = max(ranked, key=_tps)
    knee = next(p for p in ranked if _tps(p) >= (1 - margin) * _tps(best))
    later = [p for p in measured if p.concurrency > knee.concurrency]
    skipped = [p.concurrency for p in measured if p.concurrency in queued]
    all_queued = len(skipped) == len(measured)
    nxt = later[0] if later and not all_queued else None
    costs = _costs(knee, nxt)
    thr, ttft, decode = costs
    sentence = _knee_sentence(knee, nxt, costs, skipped, all_queued=all_queued)
    return Knee(
        input_tokens=knee.input_tokens,
        margin=margin,
        concurrency=knee.concurrency,
        best_concurrency=best.concurrency,
        best_output_tokens_per_s=_tps(best),
        next_concurrency=nxt.concurrency if nxt is not None else None,
        queued=skipped,
        throughput_change=thr,
        ttft_change=ttft,
        decode_speed_change=decode,
        sentence=sentence,
    )


def _tps(p: Point) -> float:
    return p.median("output_tokens_per_s") or 0.0


def _costs(knee: Point, nxt: Point | None) -> tuple[float | None, float | None, float | None]:
    """The changes (fractions) from the knee to the next step: throughput, TTFT and
    per-request decode speed; all ``None`` when there is no next step."""
    if nxt is None:
        return None, None, None
    thr = _change(_tps(nxt), _tps(knee))
    ttft = _change(nxt.median("ttft_p50_s"), knee.median("ttft_p50_s"))
    tpot_k, tpot_n = knee.median("tpot_p50_s"), nxt.median("tpot_p50_s")
    decode = None if not tpot_k or not tpot_n else tpot_k / tpot_n - 1
    return thr, ttft, decode


def _pct(x: float | None) -> str:
    if x is None:
        return "n/a"
    return "+0%" if round(x * 100) == 0 else f"{x:+.0%}"


def _knee_sentence(
    knee: Point,
    nxt: Point | None,
    costs: tuple[float | None, float | None, float | None],
    skipped: list[int],
    *,
    all_queued: bool,
) -> str:
    """The knee in words: the cost of the next step, or why there is none to state."""
    if all_queued:
        sentence = (
            f"every step queued in the server: {knee.concurrency}, the smallest swept, is "
            "already too many; sweep lower"
        )
    elif nxt is None:
        sentence = (
            f"knee at {knee.concurrency}, the largest concurrency swept: sweep higher "
            "to see the cost of the next step"
        )
    else:
        thr, ttft, decode = costs
        sentence = (
            f"{knee.concurrency} -> {nxt.concurrency}: {_pct(thr)} throughput, {_pct(ttft)} TTFT, "
            f"{_pct(decode)} per-request decode speed"
        )
    if skipped and not all_queued:
        listed = ", ".join(map(str, skipped))
        sentence += f"; not recommended: {listed} (queued in the server, see the table)"
    return sentence


def learn_max_num_seqs(pts: Sequence[Point], from_log: int | None) -> tuple[int | None, str | None]:
    """The server's ``max_num_seqs`` and where it came from: the startup log's non-default
    args when it names it, else the most requests ``vllm:num_requests_running`` showed at a
    step where requests also waited (running stops at the cap; the rest queue), else
    ``(None, None)``: no step reached the cap, or no ``/metrics``."""
    if from_log is not None:
        return from_log, "server log (non-default args)"
    capped = [
        run
        for p in pts
        if (run := p.median("running_peak")) is not None
        and (p.median("waiting_peak") or 0) >= 1
        and run < p.concurrency
    ]
    if capped:
        return round(max(capped)), "/metrics: running stopped there while requests waited"
    return None, None


def queued_steps(pts: Sequence[Point], max_num_seqs: int | None) -> list[int]:
    """Concurrencies the server queued: above ``max_num_seqs`` (when known), or with requests
    waiting (``vllm:num_requests_waiting`` >= 1) while fewer than the step's concurrency ran.
    Sorted, without repeats."""
    out = set()
    for p in pts:
        waiting = p.median("waiting_peak") or 0
        running = p.median("running_peak")
        beyond = max_num_seqs is not None and p.concurrency > max_num_seqs
        seen = waiting >= 1 and running is not None and running < p.concurrency
        if beyond or seen:
            out.add(p.concurrency)
    return sorted(out)


def _cell(p: Point, name: str, fmt: str, unit: str = "", scale: float = 1.0) -> str:
    s = p.figures.get(name)
    if s is None:
        return "-"
    text = format(s.median * scale, fmt) + unit
    return text


def _spread(p: Point, name: str) -> str:
    s = p.figures.get(name)
    return "-" if s is None or p.repeats < 2 else f"±{s.spread / 2:.0%}"


_HEAD = (
    "input", "conc", "prompt", "out tok/s", "±", "total tok/s", "TTFT p50", "±", "TTFT p90",
    "TPOT p50", "TPOT p90", "e2e p50", "preempt", "KV peak", "run/wait", "",
)  # fmt: skip


def _run_wait(p: Point) -> str:
    run, wait = p.median("running_peak"), p.median("waiting_peak")
    if run is None and wait is None:
        return "-"
    return f"{_num(run)}/{_num(wait)}"


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def format_table(pts: Sequence[Point], queued: Sequence[int] = ()) -> str:
    """The step table: medians across repeats; each ``±`` column is half the spread
    (max - min) / median of the figure to its left. Times in seconds (TPOT in milliseconds),
    KV peak in percent of capacity (``vllm:kv_cache_usage_perc``), run/wait the peaks of
    requests running and waiting in the server; steps in ``queued`` end with ``QUEUED``."""
    rows = [list(_HEAD)]
    for p in pts:
        rows.append(
            [
                f"{p.input_tokens:,}",
                str(p.concurrency),
                _cell(p, "prompt_tokens_mean", ",.0f"),
                _cell(p, "output_tokens_per_s", ".1f"),
                _spread(p, "output_tokens_per_s"),
                _cell(p, "total_tokens_per_s", ",.0f"),
                _cell(p, "ttft_p50_s", ".2f", "s"),
                _spread(p, "ttft_p50_s"),
                _cell(p, "ttft_p90_s", ".2f", "s"),
                _cell(p, "tpot_p50_s", ".0f", "ms", 1000),
                _cell(p, "tpot_p90_s", ".0f", "ms", 1000),
                _cell(p, "e2e_p50_s", ".2f", "s"),
                _cell(p, "preemptions", ".0f"),
                _cell(p, "kv_cache_peak", ".0%"),
                _run_wait(p),
                "QUEUED" if p.concurrency in queued else "",
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
