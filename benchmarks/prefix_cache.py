"""Prefix cache: the share of prompt tokens a real vLLM server serves from its prefix cache,
with our stable-prefix message layout and with the block first.

    .ci/vllm-server start 18450          # vLLM for CPU, 4 slots: ~1 min warm; one vLLM at a time
    python -m benchmarks.prefix_cache --base-url http://127.0.0.1:18450/v1 [--blocks 24] [REPORT]
    .ci/vllm-server stop 18450

The first ``--blocks`` sendable blocks of one report (default ``06-qxlabs-quantum-computing-math``:
a long outline, so a long shared prefix) are refined once with the ``"block-first"`` prompt layout
(``owlai_refine.pipeline.plan._Tuning``)
and then once with ``"prefix-first"`` (the default), 4 in flight, ``max_tokens`` at most 32 (vLLM
on 2 CPU cores decodes ~7 tokens/s per request: this keeps a run to a minute or two); the other
blocks are marked skipped. Around each run ``/metrics`` is read: the hit rate is
``delta vllm:prefix_cache_hits_total / delta vllm:prefix_cache_queries_total`` (both in prompt
tokens). The two layouts share no prefix beyond the chat template's first tokens, so the order of
the runs does not help the second one.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Literal

import anyio
import httpx2
from structlog.testing import capture_logs

from benchmarks._common import print_table, read_report, refine_doc, report_paths
from owlai_refine import OutputBudget, RefineConfig, parse
from owlai_refine.blocks import Document, SkipReason
from owlai_refine.pipeline.plan import _Tuning
from owlai_refine.pipeline.prompt import build_messages, estimate_tokens, report_context

_METRIC = re.compile(
    r"^(vllm:prefix_cache_(?:hits|queries)_total)(?:\{[^}]*\})? ([0-9.e+]+)$", re.M
)


async def counters(http: httpx2.AsyncClient, root: str) -> dict[str, float]:
    """``{"hits": ..., "queries": ...}`` summed over every label set of the two counters."""
    text = (await http.get(f"{root}/metrics")).text
    found = {"hits": 0.0, "queries": 0.0}
    for name, value in _METRIC.findall(text):
        found["hits" if "hits" in name else "queries"] += float(value)
    return found


def first_blocks(doc: Document, n: int) -> Document:
    """``doc`` with every sendable block after the first ``n`` marked skipped (ids unchanged)."""
    keep = {b.id for b in doc.sendable[:n]}
    blocks = tuple(
        b if b.id in keep or b.skip else replace(b, skip=SkipReason.TOO_LONG) for b in doc.blocks
    )
    return replace(doc, blocks=blocks)


async def run(args: argparse.Namespace) -> int:
    path = (
        Path(args.report)
        if args.report
        else next(p for p in report_paths() if p.name.startswith("06-"))
    )
    doc = first_blocks(parse(read_report(path)), args.blocks)
    context = report_context(doc, 2000)
    # the stable prefix as refine sends it (RefineConfig's default offers the unchanged marker)
    first = build_messages(doc.sendable[0], context, marker=RefineConfig().unchanged_marker)
    prefix = estimate_tokens(first[0]["content"])
    root = args.base_url.removesuffix("/v1")
    rows = []
    async with httpx2.AsyncClient(timeout=30) as http:
        layouts: tuple[Literal["block-first", "prefix-first"], ...] = (
            "block-first",
            "prefix-first",
        )
        for layout in layouts:
            rows.append(await _measure_layout(http, root, doc, args, layout))
    print(
        f"{path.name}: first {args.blocks} sendable blocks, 4 in flight, max_tokens <= 32; "
        f"shared prefix ~{prefix} tokens (estimate: instructions + title and outline)"
    )
    print_table(
        [
            "layout",
            "requests",
            "prompt tokens (usage)",
            "cache queries",
            "cache hits",
            "hit rate",
            "run s",
        ],
        rows,
    )
    return 0


async def _measure_layout(
    http: httpx2.AsyncClient,
    root: str,
    doc: Document,
    args: argparse.Namespace,
    layout: Literal["block-first", "prefix-first"],
) -> list[object]:
    """Refine ``doc`` once with ``layout``; its table row (the cache counters' deltas around
    the run, and the prompt tokens the replies' usage reports)."""
    config = RefineConfig(
        base_url=args.base_url,
        model=args.model,
        concurrency=4,
        output=OutputBudget(max_tokens=32),
        read_timeout_s=600,
    )
    before = await counters(http, root)
    with capture_logs() as logs:
        result = await refine_doc(
            doc,
            config,
            base_url=args.base_url,
            model=args.model,
            tuning=_Tuning(prompt_layout=layout),
        )
    after = await counters(http, root)
    hits = after["hits"] - before["hits"]
    queries = after["queries"] - before["queries"]
    calls = [e for e in logs if e["event"] == "refine.call"]
    prompt = sum(e.get("prompt_tokens") or 0 for e in calls)
    print(f"  done {layout}: {result.counts}", file=sys.stderr, flush=True)
    return [
        layout,
        len(calls),
        prompt,
        int(queries),
        int(hits),
        f"{100 * hits / queries:.1f}%" if queries else "-",
        f"{result.elapsed_s:.0f}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.prefix_cache")
    parser.add_argument("report", nargs="?", help="default: 06-qxlabs-quantum-computing-math.md")
    parser.add_argument("--base-url", required=True, help="the vLLM server, .../v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--blocks", type=int, default=24)
    args = parser.parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
