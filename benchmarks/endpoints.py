"""Wall time for one report set with one endpoint and with two.

usage: python -m benchmarks.endpoints [--scale 0.05] [--slots 4] [--repeats 2]

Every real report is refined at once (as the pipeline's workers would), through one process's
limiter, against benchmark model servers in their own processes (``benchmarks._server``, latency
mode: prefill 5,000 tokens/s and decode 50 tokens/s per sequence, time compressed by
``--scale``). Each endpoint has ``--slots`` slots. Prints the wall time with one endpoint and
with two (the same model served twice, e.g. two GPU groups), the most requests each server saw
in flight at once, and the speed-up; the median of ``--repeats`` runs, interleaved.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import anyio

from benchmarks._common import (
    LatencyModel,
    median,
    print_table,
    quiet_json_logging,
    read_report,
    report_paths,
)
from benchmarks._server import MODEL, ServerProcess
from owlai_refine import Backend, RefineConfig, refine


async def refine_all(texts: list[str], config: RefineConfig) -> float:
    started = time.perf_counter()

    async def one(text: str, report_id: str) -> None:
        await refine(text, config, report_id=report_id)

    async with anyio.create_task_group() as tg:
        for i, text in enumerate(texts):
            tg.start_soon(one, text, f"r{i}")
    return time.perf_counter() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.endpoints")
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    quiet_json_logging()
    texts = [read_report(p) for p in report_paths()]
    latency = LatencyModel(scale=args.scale)
    walls: dict[int, list[float]] = {1: [], 2: []}
    peaks: dict[int, list[int]] = {1: [], 2: []}
    with ServerProcess() as a, ServerProcess() as b:
        servers = [a, b]
        for _ in range(args.repeats):
            for n in (1, 2):
                for server in servers:
                    server.control(mode="latency", **latency.to_json())
                urls = tuple(s.base_url for s in servers[:n])
                config = RefineConfig(
                    base_url=urls if n > 1 else urls[0],
                    model=MODEL,
                    backend=Backend.SELF_HOSTED,
                    concurrency=args.slots,
                )
                walls[n].append(anyio.run(refine_all, texts, config))
                stats: list[dict[str, Any]] = [s.stats() for s in servers[:n]]
                peaks[n].append(max(int(s["max_in_flight"]) for s in stats))
    rows = [
        (f"{n} endpoint{'s' if n > 1 else ''}", f"{median(walls[n]):.1f} s", max(peaks[n]))
        for n in (1, 2)
    ]
    print(
        f"{len(texts)} reports at once, {args.slots} slots per endpoint, latency scale {args.scale}"
    )
    print_table(["endpoints", "wall (median)", "max in flight per server"], rows)
    print(f"speed-up with two endpoints: {median(walls[1]) / median(walls[2]):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
