"""Tail latency: a report's makespan divided by its lower bound, by dispatch order and slots.

    python -m benchmarks.tail_latency [--sum-s 16] [--repeats 2] [--slots 4 12]
        [--dispatch longest-first document] [--edited] [REPORT ...]

Each real report is refined against the benchmark server (``benchmarks._server``, its own
process) whose latency per request follows :class:`benchmarks._common.LatencyModel`: time to
first token proportional to the prompt's tokens, then a fixed time per output token (the reply
echoes the block, so output tokens = the block's token estimate; with ``--edited`` it changes
one word of it, so that the guard judges every reply in full as it does a real copy edit). The
model's proportions are a GPU server's (prefill 5,000 tokens/s, decode 50 tokens/s per
sequence); for each report, time is compressed (``scale``) so that the block latencies add up
to ``--sum-s`` seconds.

The lower bound for ``m`` slots is ``max(sum of block latencies / m, longest block latency)``,
from the same model and the same prompts the refiner sends. The makespan is the wall time of
a one-shot ``Refiner`` (client start to last reply, all client overhead included), the minimum over
``--repeats`` runs. ``sim`` is the same dispatch order scheduled with zero overhead (list
scheduling on ``m`` slots in queue order): what the order alone costs.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio

from benchmarks._common import (
    LatencyModel,
    makespan_bound,
    print_table,
    prompt_tokens,
    quiet_json_logging,
    read_report,
    refine_doc,
    report_paths,
)
from benchmarks._server import MODEL, ServerProcess
from owlai_refine import RefineConfig, parse
from owlai_refine.blocks import Document
from owlai_refine.pipeline.plan import _Tuning
from owlai_refine.pipeline.plan import plan as plan_blocks
from owlai_refine.pipeline.prompt import build_messages, estimate_tokens, report_context

Dispatch = Literal["longest-first", "document"]
DISPATCHES: tuple[Dispatch, ...] = ("longest-first", "document")


@dataclass(frozen=True)
class Plan:
    """One report's blocks in each dispatch order, with their modelled latencies (seconds)."""

    name: str
    doc: Document
    model: LatencyModel
    latencies: dict[str, list[float]]  # dispatch -> latencies in queue order

    @property
    def total(self) -> float:
        return sum(self.latencies["document"])

    @property
    def longest(self) -> float:
        return max(self.latencies["document"], default=0.0)

    def bound(self, slots: int) -> float:
        return makespan_bound(self.latencies["document"], slots)

    def simulated(self, dispatch: str, slots: int) -> float:
        """List scheduling in queue order on ``slots`` slots, with no overhead."""
        free = [0.0] * slots
        end = 0.0
        for latency in self.latencies[dispatch]:
            start = heapq.heappop(free)
            heapq.heappush(free, start + latency)
            end = max(end, start + latency)
        return end


def plan(path: Path, base: RefineConfig, sum_s: float) -> Plan:
    doc = parse(read_report(path))
    context = report_context(doc, base.report_context_chars)
    unit = LatencyModel()
    latencies: dict[str, list[float]] = {}
    scale = 1.0
    for dispatch in DISPATCHES:
        to_send, _ = plan_blocks(doc, base, _tuning=_Tuning(dispatch=dispatch))  # the real plan
        raw = [
            unit.latency(
                prompt_tokens(build_messages(b, context, marker=base.unchanged_marker)),
                estimate_tokens(b.text),
            )
            for b in to_send
        ]
        scale = sum_s / sum(raw) if raw else 1.0
        latencies[dispatch] = [x * scale for x in raw]
    model = LatencyModel(unit.prefill_s_per_token, unit.decode_s_per_token, scale)
    return Plan(path.stem, doc, model, latencies)


@dataclass(frozen=True)
class Run:
    """One refine: its wall time, and where the time beyond the modelled latencies went."""

    makespan: float
    server_span: float
    """First request's arrival to last reply's end, at the server."""
    overhead_ms: float
    """Mean per request of (time the server held it - its modelled latency)."""
    refill_ms: float
    """Mean per request (past the first ``slots``) of the wait between a slot being freed at the
    server and the next request arriving there (FIFO matching of frees to arrivals)."""


def explain(records: list[dict[str, float]], slots: int, makespan: float) -> Run:
    starts = sorted(r["started"] for r in records)
    finishes = sorted(r["finished"] for r in records)
    overhead = [r["finished"] - r["started"] - r["modelled_s"] for r in records]
    refill = [s - f for s, f in zip(starts[slots:], finishes, strict=False)]
    return Run(
        makespan,
        finishes[-1] - starts[0],
        1000 * sum(overhead) / len(overhead),
        1000 * sum(refill) / len(refill) if refill else 0.0,
    )


async def makespan(
    server: ServerProcess,
    p: Plan,
    config: RefineConfig,
    *,
    dispatch: Dispatch = "longest-first",
    edit: bool = False,
) -> Run:
    """One refine of ``p`` against the server, blocks queued in ``dispatch`` order; checks the
    server saw what the bound assumes (the same latencies, at most ``slots`` in flight, every
    request answered). ``edit``: the server changes one word of each reply (see
    ``benchmarks._server``)."""
    server.control(mode="latency", edit=edit, **p.model.to_json())
    started = time.perf_counter()
    tuning = _Tuning(dispatch=dispatch)
    result = await refine_doc(p.doc, config, base_url=server.base_url, model=MODEL, tuning=tuning)
    elapsed = time.perf_counter() - started
    stats = server.stats()
    served = sum(r["modelled_s"] for r in stats["records"])
    if abs(served - p.total) > 1e-6 * max(1.0, p.total) or result.counts["failed"]:
        raise SystemExit(f"{p.name}: server modelled {served:.4f} s, bound assumes {p.total:.4f}")
    if stats["max_in_flight"] > config.slots:
        raise SystemExit(f"{p.name}: {stats['max_in_flight']} in flight > {config.slots} slots")
    return explain(stats["records"], config.slots, elapsed)


async def run(args: argparse.Namespace) -> int:
    quiet_json_logging()
    paths = [Path(p) for p in args.reports] or report_paths()
    rows = []
    why: list[list[object]] = []
    totals: dict[tuple[str, int], list[float]] = {}
    with ServerProcess() as server:
        base = RefineConfig(base_url=server.base_url, model=MODEL, read_timeout_s=60)
        for path in paths:
            p = plan(path, base, args.sum_s)
            if not p.latencies["document"]:
                continue
            rows.append(await _measure_report(server, base, p, args, why=why, totals=totals))
            print(f"  done {p.name}", file=sys.stderr, flush=True)
    _print_results(args, rows, why, totals)
    return 0


async def _measure_report(
    server: ServerProcess,
    base: RefineConfig,
    p: Plan,
    args: argparse.Namespace,
    *,
    why: list[list[object]],
    totals: dict[tuple[str, int], list[float]],
) -> list[object]:
    """``p``'s row of the main table (every ``--slots`` x ``--dispatch`` cell); appends its rows
    of the ``--explain`` table to ``why`` and adds its makespans and bounds to ``totals``
    (``(dispatch, slots) -> [sum of makespans, sum of bounds, worst ratio]``)."""
    row: list[object] = [p.name, len(p.latencies["document"]), f"{p.model.scale:.4f}"]
    for slots in args.slots:
        bound = p.bound(slots)
        row.append(f"{bound:.2f}")
        for dispatch in args.dispatch:
            config = base.model_copy(update={"concurrency": slots})
            runs = [
                await makespan(server, p, config, dispatch=dispatch, edit=args.edited)
                for _ in range(args.repeats)
            ]
            best = min(runs, key=lambda r: r.makespan)
            measured = best.makespan
            why.append(
                [
                    p.name,
                    dispatch,
                    slots,
                    measured / bound,
                    best.server_span / bound,
                    p.simulated(dispatch, slots) / bound,
                    best.overhead_ms,
                    best.refill_ms,
                ]
            )
            row += [measured / bound, p.simulated(dispatch, slots) / bound]
            t = totals.setdefault((dispatch, slots), [0.0, 0.0, 0.0])
            t[0] += measured
            t[1] += bound
            t[2] = max(t[2], measured / bound)
    return row


def _print_results(
    args: argparse.Namespace,
    rows: list[list[object]],
    why: list[list[object]],
    totals: dict[tuple[str, int], list[float]],
) -> None:
    headers = ["report", "sent", "scale"]
    for slots in args.slots:
        headers.append(f"bound@{slots} s")
        for dispatch in args.dispatch:
            headers += [f"{'LF' if dispatch == 'longest-first' else 'doc'}@{slots}", "sim"]
    print(
        f"makespan / max(sum/slots, longest); latencies scaled to sum {args.sum_s:g} s per "
        f"report; min of {args.repeats} run(s); 'sim' = same order, zero overhead"
    )
    print_table(headers, rows)
    print()
    print("overall (sum of makespans / sum of bounds; worst report):")
    print_table(
        ["dispatch", "slots", "overall", "worst"],
        [[d, s, t[0] / t[1], t[2]] for (d, s), t in sorted(totals.items())],
    )
    if args.explain:
        print()
        print(
            "where the time beyond the bound goes: client makespan, server span (first "
            "arrival to last reply), and the zero-overhead schedule, each / bound; per request: "
            "server time beyond the model, and the wait from a freed slot to the next arrival"
        )
        print_table(
            [
                "report",
                "dispatch",
                "slots",
                "measured",
                "server span",
                "sim",
                "srv ms",
                "refill ms",
            ],
            why,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tail_latency")
    parser.add_argument("reports", nargs="*", help="report files (default: every real report)")
    parser.add_argument("--sum-s", type=float, default=16.0, help="block latencies add up to")
    parser.add_argument("--repeats", type=int, default=1, help="runs per cell; the min counts")
    parser.add_argument("--slots", type=int, nargs="+", default=[4, 12])
    parser.add_argument(
        "--dispatch", nargs="+", choices=DISPATCHES, default=list(DISPATCHES), help="orders run"
    )
    parser.add_argument(
        "--edited", action="store_true", help="replies change a word: the guard judges each"
    )
    parser.add_argument("--explain", action="store_true", help="where the excess time goes")
    args = parser.parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
