"""Scale: wall time and peak RSS for a report of 1,000 / 10,000 / 100,000 list items.

    python -m benchmarks.scale [--items 1000 10000 100000] [--log FILE]

Each size runs in a fresh child process (``python -m benchmarks.scale --child N``) that builds
a report of ``N`` short list items (each a sentence to refine), refines it against a streaming
echo fake in process (``benchmarks.memory``'s ``httpx2.MockTransport``: no network, every
block answered at once) with the JSON log written to ``--log`` (default ``/dev/null``), and
prints its wall time, its peak resident set size (``ru_maxrss``) and the log's size. The cost
measured is the client's own: parse, plan, one request per block, the guard, the splice, the
result and one ledger line per call.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import anyio
import httpx2

from benchmarks._common import REPO, print_table
from benchmarks.memory import BASE_URL, _echo
from owlai_refine import RefineConfig, refine
from owlai_refine.shell.logs import configure_json_logging


def report(items: int) -> str:
    """A report of ``items`` list items under a heading, one sentence each."""
    lines = ["# Scale", ""]
    lines += [f"- Item {i} says the plan works for case {i} in the team." for i in range(items)]
    return "\n".join(lines) + "\n"


def child(items: int, log: str) -> None:
    """Refine a report of ``items`` items; print one JSON line of figures."""
    source = report(items)
    with open(log, "a", encoding="utf-8") as stream:
        configure_json_logging(stream)
        config = RefineConfig(base_url=BASE_URL, model="fake")
        started = time.perf_counter()
        result = anyio.run(lambda: refine(source, config, transport=httpx2.MockTransport(_echo)))
        wall = time.perf_counter() - started
    assert result.text == source  # echo: every block unchanged, nothing lost
    figures = {
        "items": items,
        "wall_s": wall,
        "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "counts": result.counts,
        "log_bytes": os.path.getsize(log) if log != os.devnull else None,
    }
    print(json.dumps(figures))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale")
    parser.add_argument("--items", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--log", default=os.devnull, help="where the JSON log goes")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.log)
        return 0
    rows = []
    for items in args.items:
        cmd = [sys.executable, "-m", "benchmarks.scale", "--child", str(items), "--log", args.log]
        out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True).stdout
        f = json.loads(out.strip().splitlines()[-1])
        per_block_ms = 1000 * f["wall_s"] / items
        rows.append([f"{items:,}", f["wall_s"], per_block_ms, f["maxrss_mib"], f["log_bytes"]])
        print(f"  done {items:,}", file=sys.stderr, flush=True)
    print_table(["items", "wall s", "ms per block", "peak RSS MiB", "log bytes"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
