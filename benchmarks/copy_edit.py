"""What a copy edit costs, per report, with the "no change needed" marker off and on.

usage: python -m benchmarks.copy_edit [--mode off on] [--slots 4] [--label embedded]
                                      [--base-url URL --model NAME] [--out DIR] [REPORT ...]
       python -m benchmarks.copy_edit --table [--label embedded]   (the table of saved runs)

Refines each report (default: three of the shared sample reports: English, Japanese and
Korean) once per mode, one report after the other, through one :class:`Refiner` per mode against
one server: the embedded llama.cpp server (SmolLM2-135M-Instruct, ``--slots`` slots) unless
``--base-url`` names one (e.g. vLLM for CPU: ``.ci/vllm-server start 18931``), always as a
self-hosted backend with the cap equal to the slots. ``off`` is the prompt without the marker
(``RefineConfig(unchanged_marker=False)``), ``on`` the default one. Per report and mode it
reports, from the run's own events (the usage ledger): completion and prompt tokens,
slot-seconds (the sum of the request latencies: the time the report held server slots), wall
time and wall / bound (the bound of ``benchmarks/tail_latency.py``, ``max(slot-seconds / slots,
longest request)``, from the run's own latencies: what the client's scheduling costs on a real
server), the median TTFT and TPOT over its calls (TPOT: ``(latency - TTFT) / (completion tokens -
1)`` per call), and the outcome counts, with how many ``unchanged`` replies were the marker alone
and how many were refused for the marker beside other text. Every reply (block, reply, outcome,
reasons) goes to ``--out/LABEL-MODE.json``; the tables are printed as Markdown.

Nothing is timed against a bar here: the same reports in both modes, one run each, under the same
load as far as a shared machine allows (the modes run one after the other, so wall-clock figures
carry the machine's drift; tokens and outcomes do not).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import structlog
from structlog.testing import capture_logs

from benchmarks._common import REPO, makespan_bound, read_report, reports_dir
from owlai_refine import Backend, RefineConfig
from owlai_refine.events import BlockSettled, CallFinished, RefineEvent
from owlai_refine.guard.marker import marker_reply
from owlai_refine.pipeline.refiner import Refiner
from owlai_refine.results import OutcomeStatus

DEFAULT_REPORTS = (
    "02-deerflow-quantum-cryptography.md",
    "14-awesome-japanese-llm-ja.md",
    "15-rust-rfc3392-leadership-council-ko.md",
)
STATUSES = ("refined", "unchanged", "rejected", "truncated", "failed")


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _row(
    name: str, wall: float, calls: list[CallFinished], blocks: list[dict[str, Any]], slots: int
) -> dict[str, Any]:
    ok = [c for c in calls if c.error is None]
    latencies = [c.latency_s or 0.0 for c in calls]
    bound = makespan_bound(latencies, slots)  # tail_latency's bound, from this run's latencies
    tpots = [
        (c.latency_s - c.ttft_s) / (n - 1)
        for c in ok
        if c.latency_s is not None and c.ttft_s is not None and (n := c.completion_tokens or 0) > 1
    ]
    counts = Counter(b["status"] for b in blocks)
    return {
        "report": name,
        "sent": len(blocks),
        **{s: counts.get(s, 0) for s in STATUSES},
        "marker_alone": sum(b["marker"] for b in blocks),
        "marker_refused": sum("marker" in b["reason_groups"] for b in blocks),
        "completion_tokens": sum(c.completion_tokens or 0 for c in ok),
        "prompt_tokens": sum(c.prompt_tokens or 0 for c in ok),
        "requests": len(calls),
        "slot_s": round(sum(c.latency_s or 0.0 for c in calls), 2),
        "wall_s": round(wall, 2),
        "bound_s": round(bound, 2),
        "wall_over_bound": round(wall / bound, 3) if bound else None,
        "ttft_p50_s": _round(_median([c.ttft_s for c in ok if c.ttft_s is not None])),
        "tpot_p50_ms": _round(_median(tpots), 1000),
        "rejected_by_group": dict(
            Counter(g for b in blocks for g in set(b["reason_groups"])).most_common()
        ),
    }


def _round(value: float | None, scale: float = 1.0) -> float | None:
    return None if value is None else round(value * scale, 4)


async def run_mode(
    mode: str, paths: list[Path], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Refine every report of ``paths`` with the marker ``mode`` ("off"/"on"); the rows, and
    every block's raw record."""
    fields: dict[str, Any] = {
        "backend": Backend.SELF_HOSTED,
        "concurrency": args.slots,
        "unchanged_marker": mode == "on",
        "log_text": True,
    }
    if args.base_url:
        fields |= {"base_url": args.base_url, "model": args.model}
    config = RefineConfig(**fields)
    events: list[RefineEvent] = []
    rows: list[dict[str, Any]] = []
    raw: list[dict[str, Any]] = []
    async with Refiner(config, sinks=[events.append]) as refiner:
        for path in paths:
            events.clear()
            with capture_logs() as logs:
                started = time.perf_counter()
                await refiner.refine(read_report(path), report_id=path.stem)
                wall = time.perf_counter() - started
            texts = {e["block_id"]: e for e in logs if e["event"] == "refine.block_text"}
            calls = [e for e in events if isinstance(e, CallFinished)]
            blocks = []
            for event in events:
                if not isinstance(event, BlockSettled):
                    continue
                o = event.outcome
                seen = texts.get(o.block_id, {})
                reply = seen.get("reply")
                blocks.append(
                    {
                        "block_id": o.block_id,
                        "status": o.status.value,
                        "marker": o.status is OutcomeStatus.UNCHANGED
                        and reply is not None
                        and marker_reply(seen.get("original", ""), reply.strip()) is True,
                        "reason_groups": list(o.reason_groups),
                        "reasons": list(o.reasons),
                        "completion_tokens": o.completion_tokens,
                        "latency_s": o.latency_s,
                        "original": seen.get("original"),
                        "reply": reply,
                        "text": o.text,
                    }
                )
            row = _row(path.name, wall, calls, blocks, args.slots)
            rows.append(row)
            raw.append({"report": path.name, "row": row, "blocks": blocks})
            print(json.dumps({"mode": mode, **row}, ensure_ascii=False), flush=True)
    return rows, raw


def _cell(before: Any, after: Any, ratio: bool = False) -> str:
    if before is None or after is None:
        return f"{before} → {after}"
    text = f"{before:,} → {after:,}" if isinstance(before, int) else f"{before:g} → {after:g}"
    if ratio and before:
        text += f" ({after / before:.2f}x)"
    return text


def table(by_mode: dict[str, list[dict[str, Any]]]) -> str:
    """The before (off) → after (on) table, one row per report and a total row."""
    off, on = by_mode["off"], by_mode["on"]
    head = (
        "| report | sent | completion tokens | slot-s | wall s | wall / bound | TTFT p50 s "
        "| TPOT p50 ms | refined | unchanged (marker) | rejected | truncated |"
    )
    lines = [head, "|---" * 12 + "|"]
    for a, b in zip(off, on, strict=True):
        lines.append(
            f"| {a['report']} | {a['sent']} "
            f"| {_cell(a['completion_tokens'], b['completion_tokens'], True)} "
            f"| {_cell(a['slot_s'], b['slot_s'], True)} | {_cell(a['wall_s'], b['wall_s'], True)} "
            f"| {_cell(a.get('wall_over_bound'), b.get('wall_over_bound'))} "
            f"| {_cell(a['ttft_p50_s'], b['ttft_p50_s'])} "
            f"| {_cell(a['tpot_p50_ms'], b['tpot_p50_ms'])} "
            f"| {_cell(a['refined'], b['refined'])} "
            f"| {a['unchanged']} → {b['unchanged']} ({b['marker_alone']}) "
            f"| {_cell(a['rejected'], b['rejected'])} | {_cell(a['truncated'], b['truncated'])} |"
        )

    def total(rows: list[dict[str, Any]], key: str) -> Any:
        values = [r[key] for r in rows]
        return round(sum(values), 2) if isinstance(values[0], float) else sum(values)

    t = {k: (total(off, k), total(on, k)) for k in ("completion_tokens", "slot_s", "wall_s")}
    s = {k: (total(off, k), total(on, k)) for k in (*STATUSES, "marker_alone", "sent")}
    lines.append(
        f"| **all** | {s['sent'][0]} | {_cell(*t['completion_tokens'], True)} "
        f"| {_cell(*t['slot_s'], True)} | {_cell(*t['wall_s'], True)} | | | "
        f"| {_cell(*s['refined'])} | {s['unchanged'][0]} → {s['unchanged'][1]} "
        f"({s['marker_alone'][1]}) | {_cell(*s['rejected'])} | {_cell(*s['truncated'])} |"
    )
    refused = sum(r["marker_refused"] for r in on)
    lines.append("")
    lines.append(f"marker refused beside other text (on): {refused} block(s)")
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    directory = Path(args.reports_dir) if args.reports_dir else reports_dir()
    paths = [directory / name for name in (args.reports or DEFAULT_REPORTS)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    by_mode: dict[str, list[dict[str, Any]]] = {}
    for mode in args.mode:
        rows, raw = await run_mode(mode, paths, args)
        by_mode[mode] = rows
        target = out / f"{args.label}-{mode}.json"
        target.write_text(json.dumps(raw, indent=1, ensure_ascii=False), encoding="utf-8")
    return by_mode


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.copy_edit")
    parser.add_argument("reports", nargs="*", help="report file names (default: four mixed)")
    parser.add_argument("--reports-dir", help="where the reports are (default: shared reports)")
    parser.add_argument("--mode", nargs="+", choices=["off", "on"], default=["off", "on"])
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--label", default="embedded", help="names the raw output files")
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "out" / "copy_edit"))
    parser.add_argument("--table", action="store_true", help="print the table of saved runs")
    args = parser.parse_args(argv)
    structlog.reset_defaults()  # capture_logs sees every event, debug included
    if args.table:  # the table of runs made before (one per mode, e.g. to stay under 10 min)
        out = Path(args.out)
        by_mode = {
            mode: [r["row"] for r in json.loads((out / f"{args.label}-{mode}.json").read_text())]
            for mode in ("off", "on")
        }
    else:
        by_mode = anyio.run(main_async, args)
    if set(by_mode) == {"off", "on"}:
        print(table(by_mode))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
