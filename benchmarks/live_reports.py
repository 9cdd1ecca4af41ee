"""Refine every real report against a real llama.cpp server and check what the issues promise.

usage: python -m benchmarks.live_reports [--reports DIR] [--slots 4] [--out DIR]
                                         [--base-url URL --model NAME] [--max-output-tokens N]

Starts the embedded server (SmolLM2-135M-Instruct on llama.cpp, ``--slots`` slots, 1 thread)
unless ``--base-url`` is given, and refines each report in ``--reports`` (default: the shared
sample reports) one after the other with ``--backend self-hosted`` and the cap equal to the
slots. While it runs, a thread reads llama.cpp's own ``llamacpp:requests_processing`` gauge from
``/metrics`` every 20 ms: the requests in flight as the server counts them. Per report it prints
the blocks, outcome counts, rejections by reason group, tokens, wall time, the lines changed
outside refined blocks (must be 0) and the drift of citation markers, URLs and inline code spans
between input and output (must be none). Outputs and JSON logs go to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread

from owlai_refine import Backend, OutputBudget, RefineConfig, parse, refine
from owlai_refine.pipeline.verify import changed_outside_blocks, token_drift
from owlai_refine.results import OutcomeStatus
from owlai_refine.serve.local import LOCAL_MODEL_NAME, local_server
from owlai_refine.shell.logs import configure_json_logging
from testsupport.llamacpp_metrics import InFlightSampler

REPO = Path(__file__).resolve().parents[1]


async def run_one(path: Path, config: RefineConfig, out: Path) -> dict[str, Any]:
    source = path.read_bytes().decode("utf-8")
    doc = parse(source)
    with (out / f"{path.stem}.jsonl").open("w", encoding="utf-8") as log:
        configure_json_logging(log, "info")
        started = time.perf_counter()
        try:
            result = await refine(source, config, report_id=path.stem)
        finally:
            configure_json_logging(sys.stderr, "warning")
        wall = time.perf_counter() - started
    (out / path.name).write_bytes(result.text.encode("utf-8"))
    refined = {
        o.block_id: o.text
        for o in result.outcomes
        if o.status is OutcomeStatus.REFINED and o.text is not None
    }
    groups: Counter[str] = Counter()
    for o in result.outcomes:
        if o.status is OutcomeStatus.REJECTED:
            groups.update(set(o.reason_groups))
    return {
        "report": path.name,
        "blocks": len(doc.blocks),
        "sent": len(doc.sendable),
        **result.counts,
        "rejected_by_group": dict(groups.most_common()),
        "prompt_tokens": result.tokens.prompt_tokens,
        "completion_tokens": result.tokens.completion_tokens,
        "cached_tokens": result.tokens.cached_tokens,
        "requests": result.tokens.requests,
        "wall_s": round(wall, 1),
        "lines_changed_outside_blocks": len(changed_outside_blocks(doc, refined, result.text)),
        "token_drift": {
            k: [dict(a), dict(b)] for k, (a, b) in token_drift(source, result.text).items()
        },
    }


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    paths = sorted(p for p in Path(args.reports).glob("*.md") if p.name != "SOURCES.md")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fields: dict[str, Any] = {"backend": Backend.SELF_HOSTED, "concurrency": args.slots}
    if args.max_output_tokens:
        fields["output"] = OutputBudget(max_tokens=args.max_output_tokens)
    rows = []

    async def all_reports(base_url: str, model: str) -> None:
        config = RefineConfig(base_url=base_url, model=model, **fields)
        with InFlightSampler(base_url) as sampler:
            for path in paths:
                row = await run_one(path, config, out)
                row["max_in_flight"] = sampler.peak
                rows.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)
        print(f"server-side samples: {sampler.samples}, peak in flight {sampler.peak}")

    if args.base_url:
        await all_reports(args.base_url, args.model)
    else:
        async with local_server(slots=args.slots) as base_url:
            await all_reports(base_url, LOCAL_MODEL_NAME)
    return rows


def summary(rows: list[dict[str, Any]]) -> str:
    keys = ["blocks", "sent", "refined", "unchanged", "skipped", "truncated", "rejected", "failed"]
    keys += ["prompt_tokens", "completion_tokens", "cached_tokens", "wall_s"]
    lines = ["| report | " + " | ".join(keys) + " | outside | drift |"]
    lines.append("|---" * (len(keys) + 3) + "|")
    for row in rows:
        cells = [str(row[k]) for k in keys]
        drift = "none" if not row["token_drift"] else json.dumps(row["token_drift"])
        lines.append(
            f"| {row['report']} | "
            + " | ".join(cells)
            + f" | {row['lines_changed_outside_blocks']} | {drift} |"
        )
    total = {k: sum(r[k] for r in rows) for k in keys}
    lines.append(
        "| **all** | "
        + " | ".join(
            f"{total[k]:,}" if isinstance(total[k], int) else f"{total[k]:.0f}" for k in keys
        )
        + " | "
        + str(sum(r["lines_changed_outside_blocks"] for r in rows))
        + " | "
        + ("none" if not any(r["token_drift"] for r in rows) else "SOME")
        + " |"
    )
    groups: Counter[str] = Counter()
    for row in rows:
        groups.update(row["rejected_by_group"])
    lines.append("")
    lines.append(
        "rejected blocks by reason group: " + ", ".join(f"{g} {n}" for g, n in groups.most_common())
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.live_reports")
    shared = REPO.parent / "shared" / "reports"
    default_reports = shared if shared.is_dir() else REPO / "fixtures" / "reports"
    parser.add_argument("--reports", default=str(default_reports))
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "out" / "live_reports"))
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--base-url")
    parser.add_argument("--model", default=LOCAL_MODEL_NAME)
    parser.add_argument("--max-output-tokens", type=int)
    args = parser.parse_args(argv)
    configure_json_logging(sys.stderr, "warning")  # stdout holds only the rows and the table
    rows = anyio.run(main_async, args)
    print(summary(rows))
    (Path(args.out) / "summary.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
