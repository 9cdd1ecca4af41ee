"""One benchmark step: ``concurrency`` requests in flight, ``rounds`` each, against one server.

A step is closed-loop: ``concurrency`` workers each send ``rounds`` requests back to back, so
exactly ``concurrency`` are in flight until the tail. Meanwhile ``/metrics`` is scraped every
``metrics_interval_s`` for the peaks of ``vllm:kv_cache_usage_perc``, ``vllm:num_requests_running``
and ``vllm:num_requests_waiting`` (requests the server queued); counters
(``vllm:num_preemptions_total``, ``vllm:prefix_cache_hits_total``/``queries_total``) are read
before and after the step and their deltas kept.

Per request (all times in seconds, ``time.perf_counter`` on the client), the definitions of
``vllm bench serve`` (``benchmarks/lib/endpoint_request_func.py``, openai-chat): TTFT = until the
first streamed chunk that carries a choice (vLLM sends it, with the role, at the first token);
latency = until the last chunk that carries a choice (the usage chunk and ``[DONE]`` excluded);
TPOT = (latency - TTFT) / (completion_tokens - 1). Token counts come from the server's ``usage``
(``stream_options.include_usage``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2
import openai

from owlai_refine.ops.bench.prompts import Messages
from owlai_refine.serve.metrics import (
    KV_USAGE,
    PREEMPTIONS,
    PREFIX_HITS,
    PREFIX_QUERIES,
    RUNNING,
    WAITING,
    Metrics,
)
from owlai_refine.serve.server import ServerError, ServerUrls, fetch_metrics

__all__ = ["RequestResult", "RequestSpec", "StepRaw", "delta_of", "run_request", "run_step"]


@dataclass(frozen=True, slots=True)
class RequestSpec:
    """How to send each request: ``model``, fixed ``output_tokens`` (``max_tokens``; with
    ``force_length`` also ``min_tokens`` and ``ignore_eos`` in the body, which vLLM honours)."""

    model: str
    output_tokens: int
    force_length: bool = True


@dataclass(frozen=True, slots=True)
class RequestResult:
    """One request's measurements (seconds, tokens); ``error`` set and figures ``None`` on
    failure."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    ttft_s: float | None = None
    latency_s: float | None = None
    tpot_s: float | None = None
    error: str | None = None


@dataclass(slots=True)
class StepRaw:
    """A step's raw results: ``wall_s`` from first send to last reply (seconds), per-request
    ``results``, metric deltas (``None`` without ``/metrics``), ``kv_peak`` (fraction 0..1) and
    the peaks of requests ``running`` and ``waiting`` in the server (``None`` without /metrics)."""

    concurrency: int
    wall_s: float
    results: list[RequestResult]
    preemptions: float | None = None
    prefix_hits: float | None = None
    prefix_queries: float | None = None
    kv_peak: float | None = None
    running_peak: float | None = None
    waiting_peak: float | None = None
    notes: list[str] = field(default_factory=list)


async def run_request(
    client: openai.AsyncOpenAI, spec: RequestSpec, messages: Messages
) -> RequestResult:
    """Send one streamed chat request and time it. Never raises for a server error: the
    result carries ``error`` instead."""
    extra: dict[str, Any] = {}
    if spec.force_length:
        extra = {"min_tokens": spec.output_tokens, "ignore_eos": True}
    start = time.perf_counter()
    ttft: float | None = None
    last: float | None = None
    usage: Any = None
    try:
        stream = await client.chat.completions.create(
            model=spec.model,
            messages=messages,
            max_tokens=spec.output_tokens,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
            extra_body=extra or None,
        )
        async for chunk in stream:
            if chunk.choices:
                last = time.perf_counter() - start
                if ttft is None:
                    ttft = last
            if chunk.usage is not None:
                usage = chunk.usage
    except openai.OpenAIError as exc:
        return RequestResult(error=f"{type(exc).__name__}: {exc}")
    latency = last if last is not None else time.perf_counter() - start
    if usage is None:
        return RequestResult(ttft_s=ttft, latency_s=latency, error="no usage in the stream")
    out = int(usage.completion_tokens)
    tpot = (latency - ttft) / (out - 1) if ttft is not None and out > 1 else None
    return RequestResult(
        prompt_tokens=int(usage.prompt_tokens),
        completion_tokens=out,
        ttft_s=ttft,
        latency_s=latency,
        tpot_s=tpot,
    )


async def _scrape(http: httpx2.AsyncClient | None, ep: ServerUrls) -> Metrics | None:
    if http is None:
        return None
    try:
        return await fetch_metrics(http, ep)
    except ServerError:
        return None


def delta_of(before: Metrics | None, after: Metrics | None, name: str) -> float | None:
    """``after - before`` of counter ``name``; ``None`` if a scrape or the metric is missing."""
    if before is None or after is None:
        return None
    a, b = after.total(name), before.total(name)
    return None if a is None or b is None else a - b


async def run_step(
    client: openai.AsyncOpenAI,
    spec: RequestSpec,
    make_messages: Callable[[], Messages],
    concurrency: int,
    rounds: int,
    *,
    http: httpx2.AsyncClient | None,
    ep: ServerUrls,
    metrics_interval_s: float = 1.0,
) -> StepRaw:
    """Run one step of ``concurrency x rounds`` requests; ``make_messages`` gives each request
    its (uniquely prefixed) messages. ``http=None`` skips ``/metrics``."""
    results: list[RequestResult] = []
    peaks: dict[str, list[float]] = {KV_USAGE: [], RUNNING: [], WAITING: []}

    def note(m: Metrics | None) -> None:
        for name, seen in peaks.items():
            if m is not None and (v := m.peak(name)) is not None:
                seen.append(v)

    async def worker() -> None:
        for _ in range(rounds):
            results.append(await run_request(client, spec, make_messages()))

    async def sampler(stop: anyio.Event) -> None:
        while not stop.is_set():
            note(await _scrape(http, ep))
            with anyio.move_on_after(metrics_interval_s):
                await stop.wait()

    before = await _scrape(http, ep)
    stop = anyio.Event()
    start = time.perf_counter()
    async with anyio.create_task_group() as outer:
        if http is not None and before is not None:
            outer.start_soon(sampler, stop)
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker)
        wall = time.perf_counter() - start
        stop.set()
    after = await _scrape(http, ep)
    note(after)
    return StepRaw(
        concurrency=concurrency,
        wall_s=wall,
        results=results,
        preemptions=delta_of(before, after, PREEMPTIONS),
        prefix_hits=delta_of(before, after, PREFIX_HITS),
        prefix_queries=delta_of(before, after, PREFIX_QUERIES),
        kv_peak=max(peaks[KV_USAGE], default=None),
        running_peak=max(peaks[RUNNING], default=None),
        waiting_peak=max(peaks[WAITING], default=None),
    )
