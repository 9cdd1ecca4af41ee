"""Loopback floor: the makespan the tail-latency harness allows a client that does nothing.

    python -m benchmarks.loopback_floor [--sum-s 48] [--slots 12] [--repeats 3] [REPORT]

``benchmarks.tail_latency`` measures the refiner's makespan against ``max(sum / slots,
longest)`` on the benchmark server (its own process, latencies compressed so that a report's
block latencies add up to ``--sum-s``). This sends the same requests (the refiner's own plan and
prompts, longest first, the same slots) with no refiner around them, two ways:

``httpx``
    A bare ``httpx2.AsyncClient``: POST the JSON body, read the stream's lines, nothing else.
``openai``
    ``openai.AsyncOpenAI.chat.completions.create(stream=True)`` with its typed chunks, as an
    application using the client the plain way does.

Each line: makespan / bound, the server span / bound (first arrival to last reply) and the mean
refill (a freed slot at the server to the next request's arrival). What a client that only
speaks HTTP reaches here is the floor of the harness on this machine, not of the refiner.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import openai

from benchmarks._server import MODEL, ServerProcess
from benchmarks.tail_latency import explain, plan
from owlai_refine import RefineConfig
from owlai_refine.pipeline.plan import _Tuning
from owlai_refine.pipeline.plan import plan as plan_blocks
from owlai_refine.pipeline.prompt import build_messages, report_context
from testsupport.reports import SHARED

REPORT = SHARED / "18-eip2982-serenity-phase0.md"  # 174 blocks, the skewed one
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _httpx(base_url: str, slots: int) -> Send:
    client = httpx2.AsyncClient(
        base_url=base_url, timeout=60, limits=httpx2.Limits(max_connections=slots)
    )

    async def send(body: dict[str, Any]) -> None:
        async with client.stream("POST", "/chat/completions", json=body) as response:
            async for _ in response.aiter_lines():
                pass

    return send


def _openai(base_url: str, slots: int) -> Send:
    del slots
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=0)

    async def send(body: dict[str, Any]) -> None:
        async for _ in await client.chat.completions.create(**body):
            pass

    return send


async def _run(send: Send, bodies: list[dict[str, Any]], slots: int) -> float:
    """Wall seconds to send every body, at most ``slots`` at once, in order."""
    queue = list(bodies)
    started = time.perf_counter()

    async def worker() -> None:
        while queue:
            await send(queue.pop(0))

    async with anyio.create_task_group() as tg:
        for _ in range(slots):
            tg.start_soon(worker)
    return time.perf_counter() - started


async def main_async(args: argparse.Namespace) -> int:
    with ServerProcess() as server:
        base = RefineConfig(base_url=server.base_url, model=MODEL, concurrency=args.slots)
        p = plan(Path(args.report), base, args.sum_s)
        context = report_context(p.doc, base.report_context_chars)
        blocks, _ = plan_blocks(p.doc, base, _tuning=_Tuning(dispatch="longest-first"))
        bodies = [
            {
                "model": MODEL,
                "messages": build_messages(b, context, marker=base.unchanged_marker),
                "max_tokens": 4096,
                "temperature": 0,
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            for b in blocks
        ]
        bound = p.bound(args.slots)
        print(f"{p.name}: {len(bodies)} requests, {args.slots} slots, bound {bound:.2f} s")
        for _ in range(args.repeats):
            for name, make in (("httpx", _httpx), ("openai", _openai)):
                server.control(mode="latency", **p.model.to_json())
                elapsed = await _run(make(server.base_url, args.slots), bodies, args.slots)
                run = explain(server.stats()["records"], args.slots, elapsed)
                print(
                    f"  {name:6} makespan/bound {elapsed / bound:.3f}  server span/bound "
                    f"{run.server_span / bound:.3f}  refill {run.refill_ms:.1f} ms"
                )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.loopback_floor")
    parser.add_argument("report", nargs="?", default=str(REPORT))
    parser.add_argument("--sum-s", type=float, default=48.0)
    parser.add_argument("--slots", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    return anyio.run(main_async, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
