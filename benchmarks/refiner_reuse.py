"""One long-lived ``Refiner`` against one ``refine()`` call per report.

usage: python -m benchmarks.refiner_reuse [--reports 50] [--server loopback|embedded]
       [--max-chars N] [--scale S]

Refines the same reports (the sample reports, cycled to ``--reports``) twice in one process,
one report after another: through one ``async with Refiner(config)`` and through one one-shot
``refine(text, config)`` per report. The config names no model, as a pipeline's usually does,
so each way asks ``/v1/models`` as it must. Counted on the client side, for both servers alike:

- TCP connections opened (every ``socket.connect`` of the process, health checks included),
- ``/v1/models`` requests (every request through httpx2's transport whose path ends so),
- embedded-server start-ups (calls of ``owlai_refine.serve.local.local_server``),
- wall time, and peak Python memory (``tracemalloc``, traced in a second pass of each way so
  that tracing does not slow the timed pass).

``--server loopback`` is ``benchmarks._server`` in its own process (latency model scaled by
``--scale``); ``--server embedded`` is the embedded llama.cpp server (SmolLM2 on this CPU:
give fewer reports and ``--max-chars`` to keep each report short, and outputs are capped at 16
tokens: this measures the refiner's overheads, not the model).
"""

from __future__ import annotations

import argparse
import socket
import time
import tracemalloc
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2

import owlai_refine.serve.local
from benchmarks._common import print_table, quiet_json_logging, read_report, report_paths
from benchmarks._server import ServerProcess
from owlai_refine import OutputBudget, RefineConfig, Refiner, refine

COUNTS: Counter[str] = Counter()


def _install_counters() -> None:
    """Count connects, /models requests and embedded-server start-ups, process-wide."""
    connect = socket.socket.connect

    def counting_connect(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            COUNTS["tcp_connections"] += 1
        connect(self, address)

    socket.socket.connect = counting_connect  # type: ignore[method-assign,assignment]
    handle = httpx2.AsyncHTTPTransport.handle_async_request

    async def counting_handle(
        self: httpx2.AsyncHTTPTransport, request: httpx2.Request
    ) -> httpx2.Response:
        if request.url.path.endswith("/models"):
            COUNTS["models_requests"] += 1
        return await handle(self, request)

    httpx2.AsyncHTTPTransport.handle_async_request = counting_handle  # type: ignore[method-assign]
    start = owlai_refine.serve.local.local_server

    @asynccontextmanager
    async def counting_server(*args: Any, **kwargs: Any) -> AsyncIterator[str]:
        COUNTS["embedded_starts"] += 1
        async with start(*args, **kwargs) as url:
            yield url

    owlai_refine.serve.local.local_server = counting_server


async def one_refiner(texts: list[str], config: RefineConfig) -> int:
    async with Refiner(config) as refiner:
        return sum([(await refiner.refine(t)).counts["failed"] for t in texts])


async def one_shot_each(texts: list[str], config: RefineConfig) -> int:
    return sum([(await refine(t, config)).counts["failed"] for t in texts])


WAYS: dict[str, Callable[[list[str], RefineConfig], Awaitable[int]]] = {
    "one Refiner": one_refiner,
    "refine() per report": one_shot_each,
}


def measure(texts: list[str], config: RefineConfig) -> dict[str, dict[str, float]]:
    """Each way once untimed on the first report (imports, first connections), then timed and
    counted, then again under ``tracemalloc`` for its peak."""
    for way in WAYS.values():
        anyio.run(way, texts[:1], config)
    figures: dict[str, dict[str, float]] = {}
    for name, way in WAYS.items():
        COUNTS.clear()
        started = time.perf_counter()
        failed = anyio.run(way, texts, config)
        wall = time.perf_counter() - started
        row: dict[str, float] = {"wall_s": wall, "failed_blocks": failed, **COUNTS}
        tracemalloc.start()
        anyio.run(way, texts, config)
        row["peak_mib"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        figures[name] = row
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reports", type=int, default=50)
    p.add_argument("--server", choices=["loopback", "embedded"], default="loopback")
    p.add_argument("--max-chars", type=int, default=0, help="cut each report (0: whole)")
    p.add_argument("--scale", type=float, default=0.01, help="loopback latency-model scale")
    args = p.parse_args()
    quiet_json_logging()
    _install_counters()
    paths = report_paths()
    texts = [read_report(paths[i % len(paths)]) for i in range(args.reports)]
    if args.max_chars:
        texts = [t[: args.max_chars] for t in texts]
    if args.server == "loopback":
        with ServerProcess() as server:
            server.control(mode="latency", prefill_s_per_token=0.0002, decode_s_per_token=0.02,
                           scale=args.scale)  # fmt: skip
            config = RefineConfig(base_url=server.base_url)
            figures = measure(texts, config)
    else:
        config = RefineConfig(output=OutputBudget(max_tokens=16))
        figures = measure(texts, config)
    keys = ["wall_s", "tcp_connections", "models_requests", "embedded_starts", "peak_mib"]
    rows = [[name, *(f.get(k, 0) for k in keys), f["failed_blocks"]] for name, f in figures.items()]
    a, b = figures["one Refiner"], figures["refine() per report"]
    ratios = ["per-report / Refiner"]
    for k in keys:
        ratios.append(f"{b.get(k, 0) / a[k]:.2f}x" if a.get(k) else f"{b.get(k, 0)} vs 0")
    print(f"{args.reports} reports, {args.server} server, one after another")
    print_table(["way", *keys, "failed"], [*rows, [*ratios, ""]])


if __name__ == "__main__":
    main()
