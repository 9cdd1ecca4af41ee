"""``refine bench``: a client-side concurrency sweep against one running server.

The server's ``max_num_seqs`` is left large; the client varies how many requests are in flight
(``--concurrency``), which draws the same curve as restarting the server for each value.
Steps: read ``/v1/models`` and ``/metrics``; choose input lengths (``--input-tokens`` or ledger
quantiles); pre-check concurrency x (input + output) tokens against the KV capacity; size one
prompt body per length in real tokens (:mod:`.prompts`); one warm-up request; then for each
length, ``repeats`` passes over the concurrency list (:mod:`.step`); medians, the knee
(:mod:`.report`); optionally ``vllm bench serve`` (:mod:`.crosscheck`) and a PNG.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from pydantic import BaseModel, ConfigDict

from owlai_refine.config import redact_url
from owlai_refine.errors import ConfigError
from owlai_refine.ops.bench.crosscheck import (
    CrossCheck,
    ForeignStats,
    compare,
    median_stats,
    parse_vllm_result,
    run_vllm_bench,
    vllm_bench_argv,
)
from owlai_refine.ops.bench.lengths import (
    TokenCounterClient,
    cap_lengths,
    kv_precheck,
    ledger_lengths,
)
from owlai_refine.ops.bench.prompts import Messages, fit_body, make_messages, new_prefix
from owlai_refine.ops.bench.report import (
    Knee,
    Point,
    StepStats,
    find_knee,
    learn_max_num_seqs,
    points,
    queued_steps,
    step_stats,
)
from owlai_refine.ops.bench.step import RequestSpec, delta_of, run_request, run_step
from owlai_refine.ops.serverlog import ServerLog
from owlai_refine.serve.metrics import PREFIX_HITS
from owlai_refine.serve.server import ServerError, fetch_metrics, fetch_models, server_urls

__all__ = [
    "BenchOptions",
    "BenchResult",
    "LengthFit",
    "run_bench_async",
]

Progress = Callable[[str], None]


@dataclass(slots=True)
class BenchOptions:
    """Settings of one sweep (tokens, seconds). ``input_tokens`` or ``ledger`` (+
    ``quantiles``, fractions) gives the lengths; ``vllm_bench`` (path of the ``vllm`` command)
    turns on the cross-check at ``cross_check_concurrency`` (all swept values if empty)."""

    base_url: str
    model: str
    api_key: str = "EMPTY"
    input_tokens: list[int] = field(default_factory=list)
    ledger: list[str] = field(default_factory=list)
    quantiles: list[float] = field(default_factory=lambda: [0.5, 0.9])
    output_tokens: int = 256
    concurrency: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16])
    repeats: int = 3
    rounds: int = 2
    margin: float = 0.05
    server_log: ServerLog | None = None
    metrics_interval_s: float = 1.0
    timeout_s: float = 600.0
    force_length: bool = True
    vllm_bench: str | None = None
    tokenizer: str | None = None
    cross_check_concurrency: list[int] = field(default_factory=list)
    cross_check_tolerance: float = 0.10
    cross_check_repeats: int = 1
    cross_check_timeout_s: float = 1800.0


class LengthFit(BaseModel):
    """One input length: the ``target`` (tokens), the templated prompt's ``measured`` tokens,
    and where the count came from (``/tokenize`` or ``usage.prompt_tokens``)."""

    model_config = ConfigDict(frozen=True)

    target: int
    measured: int
    counted_by: str


class BenchResult(BaseModel):
    """Everything ``refine bench --json`` prints. Times in seconds, throughput in tokens/s."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    model: str
    max_model_len: int | None
    kv_capacity_tokens: int | None
    kv_capacity_source: str | None
    max_num_seqs: int | None = None
    max_num_seqs_source: str | None = None
    queued_concurrency: list[int] = []
    settings: dict[str, Any]
    lengths: list[LengthFit]
    warnings: list[str]
    steps: list[StepStats]
    points: list[Point]
    knees: list[Knee]
    cross_check: list[CrossCheck]
    durations_s: dict[str, float]


def _fresh(body: str) -> Callable[[], Messages]:
    """A maker of ``body``'s messages behind a new unique prefix each call."""
    return lambda: make_messages(new_prefix(), body)


class _Run:
    """One sweep's state: clients, warnings, timings."""

    def __init__(
        self,
        opts: BenchOptions,
        http: httpx2.AsyncClient,
        client: openai.AsyncOpenAI,
        say: Progress,
    ) -> None:
        self.opts, self.http, self.client, self.say = opts, http, client, say
        self.ep = server_urls(opts.base_url)
        self.warnings: list[str] = []
        self.has_metrics = False
        self.spec = RequestSpec(opts.model, opts.output_tokens, opts.force_length)

    def warn(self, text: str) -> None:
        self.warnings.append(text)
        self.say("warning: " + text)

    async def server(self) -> tuple[int | None, int | None, str | None]:
        """max_model_len, KV capacity (tokens) and its source."""
        models = await fetch_models(self.http, self.ep)
        info = next((m for m in models if m.id == self.opts.model), None)
        if info is None:
            served = ", ".join(m.id for m in models) or "none"
            raise ConfigError(f"model {self.opts.model!r} is not served (serves: {served})")
        metrics = await fetch_metrics(self.http, self.ep)
        self.has_metrics = metrics is not None
        cap = metrics.kv_capacity_tokens() if metrics is not None else None
        source = "/metrics vllm:cache_config_info" if cap is not None else None
        log = self.opts.server_log
        if cap is None and log is not None and log.kv_cache_tokens:
            cap, source = log.kv_cache_tokens, "server log"
        if metrics is None:
            self.warn("no /metrics: no preemption, prefix-cache or KV usage figures")
        return info.max_model_len, cap, source

    def lengths(self, max_len: int | None, cap: int | None) -> list[int]:
        """The input lengths to sweep (``--input-tokens``, or the ledger's quantiles), capped
        to fit ``max_len``; warns where concurrency x (input + output) exceeds the KV
        capacity ``cap``. Raises ``ConfigError`` when none is left."""
        opts = self.opts
        if opts.ledger:
            lengths, note = ledger_lengths(opts.ledger, opts.quantiles, opts.model)
            self.say(note)
        else:
            lengths = list(opts.input_tokens)
        lengths = cap_lengths(lengths, opts.output_tokens, max_len, self.warn)
        if not lengths:
            raise ConfigError("no input length to bench: give --input-tokens or --ledger")
        for text in kv_precheck(lengths, opts.concurrency, opts.output_tokens, cap):
            self.warn(text)
        return lengths

    async def calibrate(self, lengths: list[int]) -> tuple[list[LengthFit], dict[int, str], int]:
        """Bodies per length, their fits, and the chat template's cost of a lone user
        message (tokens)."""
        count = TokenCounterClient(self.http, self.client, self.ep, self.opts.model)
        fits: list[LengthFit] = []
        bodies: dict[int, str] = {}
        for n in lengths:
            fit = await fit_body(count, n)
            fits.append(LengthFit(target=n, measured=fit.measured, counted_by=count.by))
            bodies[n] = fit.body
            self.say(f"input {n:,}: prompt body measured at {fit.measured:,} tokens")
        overhead = await count([{"role": "user", "content": ""}])
        return fits, bodies, overhead

    async def sweep(self, bodies: dict[int, str]) -> list[StepStats]:
        """A warm-up request, then every (length, repeat, concurrency) step."""
        warm = await run_request(self.client, self.spec, make_messages(new_prefix(), "Warm up."))
        if warm.error is not None:
            raise ServerError(f"warm-up request failed: {warm.error}", url=self.ep.v1)
        stats: list[StepStats] = []
        for n, body in sorted(bodies.items()):
            for rep in range(1, self.opts.repeats + 1):
                for conc in self.opts.concurrency:
                    raw = await run_step(
                        self.client,
                        self.spec,
                        _fresh(body),
                        conc,
                        self.opts.rounds,
                        http=self.http if self.has_metrics else None,
                        ep=self.ep,
                        metrics_interval_s=self.opts.metrics_interval_s,
                    )
                    st = step_stats(raw, n, rep)
                    stats.append(st)
                    self.report_step(st)
        return stats

    def report_step(self, st: StepStats) -> None:
        """Progress line and warnings for one finished step."""
        tag = f"input {st.input_tokens:,} conc {st.concurrency} repeat {st.repeat}"
        if st.errors == st.requests:
            raise ServerError(f"every request failed at {tag}", url=self.ep.v1)
        if st.errors:
            self.warn(f"{tag}: {st.errors} of {st.requests} requests failed")
        if st.prefix_cache_hits:
            share = st.prefix_cache_hits / (st.prefix_cache_queries or 1)
            self.warn(
                f"{tag}: vllm:prefix_cache_hits_total rose by {st.prefix_cache_hits:,.0f} tokens "
                f"({share:.1%} of queried): the prefix cache flattered this step"
            )
        ttft = "-" if st.ttft_p50_s is None else f"{st.ttft_p50_s:.2f}s"
        self.say(
            f"{tag}: {st.output_tokens_per_s:.1f} out tok/s, TTFT p50 {ttft} ({st.wall_s:.1f} s)"
        )

    def queued(self, pts: list[Point]) -> tuple[int | None, str | None, list[int]]:
        """The server's ``max_num_seqs`` (learnt from the points, else the log's) and its
        source, and the concurrencies at which the server queued requests (warned about:
        they are never the knee)."""
        log = self.opts.server_log
        seqs, seqs_source = learn_max_num_seqs(pts, log.max_num_seqs if log is not None else None)
        queued = queued_steps(pts, seqs)
        if queued:
            self.warn(
                f"the server queued requests at concurrency {', '.join(map(str, queued))} "
                f"(max_num_seqs {seqs if seqs is not None else 'unknown'}"
                f"{f' from {seqs_source}' if seqs_source else ''}): those steps measure "
                "vLLM's queue, not more parallel work, and are never the knee"
            )
        return seqs, seqs_source, queued

    async def cross_check(self, vllm: str, pts: list[Point], overhead: int) -> list[CrossCheck]:
        """``vllm bench serve`` at each wanted step, compared with our medians."""
        opts = self.opts
        rows: list[CrossCheck] = []
        wanted = set(opts.cross_check_concurrency or opts.concurrency)
        for p in [p for p in pts if p.concurrency in wanted]:
            prompt = p.median("prompt_tokens_mean") or float(p.input_tokens)
            rand_len = max(1, round(prompt) - overhead)
            self.say(
                f"cross-check: vllm bench serve, random input {rand_len}, conc {p.concurrency}"
            )
            runs: list[ForeignStats] = []
            error: str | None = None
            before = await fetch_metrics(self.http, self.ep) if self.has_metrics else None
            for _ in range(opts.cross_check_repeats):
                argv = vllm_bench_argv(
                    vllm,
                    root_url=self.ep.root,
                    model=opts.model,
                    tokenizer=opts.tokenizer,
                    input_len=rand_len,
                    output_len=opts.output_tokens,
                    concurrency=p.concurrency,
                    num_prompts=p.concurrency * opts.rounds,
                    result_dir=".",
                    result_filename="result.json",
                    seed=secrets.randbelow(2**31),
                )
                try:
                    data = await run_vllm_bench(argv, opts.cross_check_timeout_s)
                    runs.append(parse_vllm_result(data))
                except (RuntimeError, ValueError) as exc:
                    error = str(exc)
                    self.warn(f"cross-check at conc {p.concurrency} failed: {error}")
                    break
            after = await fetch_metrics(self.http, self.ep) if self.has_metrics else None
            hits = delta_of(before, after, PREFIX_HITS)
            if hits:
                self.warn(
                    f"cross-check input {p.input_tokens:,} conc {p.concurrency}: prefix cache hits "
                    f"rose by {hits:,.0f} tokens during vllm bench serve"
                )
            theirs = median_stats(runs) if runs and error is None else None
            rows.append(
                compare(
                    input_tokens=p.input_tokens,
                    concurrency=p.concurrency,
                    random_input_len=rand_len,
                    ours_ttft=p.median("ttft_p50_s"),
                    ours_tpot=p.median("tpot_p50_s"),
                    ours_tps=p.median("output_tokens_per_s"),
                    theirs=theirs,
                    tolerance=opts.cross_check_tolerance,
                    prefix_hits=hits,
                    runs=len(runs),
                    error=error,
                )
            )
        return rows


async def run_bench_async(opts: BenchOptions, say: Progress) -> BenchResult:
    """Run the sweep; ``say`` receives progress lines and warnings as they happen.

    Raises ``ConfigError`` (bad settings, model not served), ``ServerError`` (server
    unreachable, warm-up failed, or every request of a step failed), ``InputError`` (ledger
    unreadable).
    """
    ep = server_urls(opts.base_url)
    t0 = time.perf_counter()
    async with httpx2.AsyncClient(timeout=30.0) as http:
        client = openai.AsyncOpenAI(
            base_url=ep.v1, api_key=opts.api_key, max_retries=0, timeout=opts.timeout_s
        )
        try:
            run = _Run(opts, http, client, say)
            max_len, cap, source = await run.server()
            lengths = run.lengths(max_len, cap)
            fits, bodies, overhead = await run.calibrate(lengths)
            t_cal = time.perf_counter()
            stats = await run.sweep(bodies)
            t_sweep = time.perf_counter()
            pts = points(stats)
            seqs, seqs_source, queued = run.queued(pts)
            knees = [
                find_knee([p for p in pts if p.input_tokens == n], opts.margin, queued)
                for n in lengths
            ]
            cross = await run.cross_check(opts.vllm_bench, pts, overhead) if opts.vllm_bench else []
        finally:
            await client.close()
    t_end = time.perf_counter()
    return BenchResult(
        base_url=str(redact_url(ep.v1)),
        model=opts.model,
        max_model_len=max_len,
        kv_capacity_tokens=cap,
        kv_capacity_source=source,
        max_num_seqs=seqs,
        max_num_seqs_source=seqs_source,
        queued_concurrency=queued,
        settings=_settings(opts, overhead),
        lengths=fits,
        warnings=run.warnings,
        steps=stats,
        points=pts,
        knees=knees,
        cross_check=cross,
        durations_s={
            "calibrate": t_cal - t0,
            "sweep": t_sweep - t_cal,
            "cross_check": t_end - t_sweep,
            "total": t_end - t0,
        },
    )


def _settings(opts: BenchOptions, overhead: int) -> dict[str, Any]:
    """The sweep's settings as ``BenchResult.settings`` states them."""
    return {
        "output_tokens": opts.output_tokens,
        "concurrency": opts.concurrency,
        "repeats": opts.repeats,
        "rounds": opts.rounds,
        "margin": opts.margin,
        "force_length": opts.force_length,
        "chat_template_user_overhead_tokens": overhead,
    }
