"""Memory: peak RSS for refining the largest report, and its growth at 1x, 4x and 16x.

    python -m benchmarks.memory [--sizes 1 4 16] [--repeats 3] [REPORT]

Each measurement is a fresh child process (``python -m benchmarks.memory --child K``) that
imports everything, reads the report, concatenates ``K`` copies of it, and refines that with
the streaming fake server in process (an ``httpx2.MockTransport`` that echoes each block back as
a streamed reply, one token piece per chunk: no network, no cassette to hold), then reports its
peak resident set size (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and, in a second child,
the peak of Python's heap as ``tracemalloc`` counts it. ``K = 0`` is the same child with
nothing to refine: the baseline of the interpreter and the imports. RSS is the median of
``--repeats`` children.

Linear growth shows as equal cost per copy: ``(peak(4x) - peak(1x)) / 3`` against
``(peak(16x) - peak(4x)) / 12``, and a least-squares line through every size.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tracemalloc
from pathlib import Path

import anyio
import httpx2

from benchmarks._common import (
    REPO,
    model_listing,
    print_table,
    read_report,
    report_paths,
    streamed_reply,
)
from owlai_refine import RefineConfig, refine
from owlai_refine.pipeline.prompt import estimate_tokens
from owlai_refine.shell.logs import configure_json_logging

BASE_URL = "http://fake.invalid/v1"


def _echo(request: httpx2.Request) -> httpx2.Response:
    if request.method == "GET":  # the pre-flight's model listing
        return model_listing("fake")
    body = json.loads(request.content)
    user = body["messages"][-1]["content"]
    text = user.split("<block>\n", 1)[1].rsplit("\n</block>", 1)[0]
    data = streamed_reply(text, rid="chatcmpl-mem", model="fake", prompt=estimate_tokens(user))
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)


def child(path: Path, copies: int, heap: bool) -> None:
    """Refine ``copies`` concatenated copies of the report; print one JSON line of figures."""
    import os  # noqa: PLC0415 - only the child needs it

    configure_json_logging(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
    if heap:
        tracemalloc.start()
    source = read_report(path) * copies
    counts: dict[str, int] = {}
    if copies:
        config = RefineConfig(base_url=BASE_URL, model="fake")
        result = anyio.run(lambda: refine(source, config, transport=httpx2.MockTransport(_echo)))
        counts = result.counts
        assert result.text == source  # echo: every block unchanged, nothing lost
    figures = {
        "copies": copies,
        "bytes": len(source.encode()),
        "counts": counts,
        "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    if heap:
        figures["heap_peak_bytes"] = tracemalloc.get_traced_memory()[1]
    print(json.dumps(figures))


def measure(path: Path, copies: int, heap: bool) -> dict[str, object]:
    cmd = [sys.executable, "-m", "benchmarks.memory", str(path), "--child", str(copies)]
    out = subprocess.run(
        [*cmd, "--heap"] if heap else cmd, cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    figures: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return figures


def fit(xs: list[float], ys: list[float]) -> tuple[float, float, float]:
    """Least squares ``y = a + b x``: ``(a, b, r_squared)``."""
    slope, intercept = statistics.linear_regression(xs, ys)
    mean = statistics.fmean(ys)
    total = sum((y - mean) ** 2 for y in ys)
    resid = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return intercept, slope, 1 - resid / total if total else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("report", nargs="?", help="default: the largest real report")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--heap", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path = Path(args.report) if args.report else max(report_paths(), key=lambda p: p.stat().st_size)
    if args.child is not None:
        child(path, args.child, args.heap)
        return 0
    sizes = [0, *args.sizes]
    rss: dict[int, float] = {}
    heap: dict[int, float] = {}
    info: dict[int, dict[str, object]] = {}
    for k in sizes:
        runs = [measure(path, k, heap=False) for _ in range(args.repeats)]
        rss[k] = statistics.median(float(str(r["maxrss_kib"])) for r in runs) / 1024
        traced = measure(path, k, heap=True)
        heap[k] = float(str(traced["heap_peak_bytes"])) / 2**20
        info[k] = runs[0]
        print(f"  done {k}x", file=sys.stderr, flush=True)
    print(
        f"{path.name} concatenated K times, refined with a streaming echo fake (no network); "
        f"peak RSS median of {args.repeats} children; MiB"
    )
    rows = []
    for k in sizes:
        counts = info[k]["counts"]
        sent = (
            sum(v for s, v in counts.items() if s != "skipped") if isinstance(counts, dict) else 0
        )
        rows.append(
            [
                f"{k}x",
                f"{int(str(info[k]['bytes'])) / 2**20:.2f}",
                sent,
                rss[k],
                rss[k] - rss[0],
                heap[k],
            ]
        )
    print_table(
        ["size", "report MiB", "blocks sent", "peak RSS", "RSS - baseline", "heap peak"], rows
    )
    ks = args.sizes
    if len(ks) >= 3:
        a, b, c = ks[:3]
        for name, series in (("peak RSS", rss), ("heap peak", heap)):
            first = (series[b] - series[a]) / (b - a)
            second = (series[c] - series[b]) / (c - b)
            intercept, slope, r2 = fit([float(k) for k in ks], [series[k] for k in ks])
            print(
                f"{name}: MiB per copy {a}x->{b}x {first:.2f}, {b}x->{c}x {second:.2f} "
                f"(ratio {second / first:.2f}); fit {intercept:.1f} + {slope:.2f} * K MiB, "
                f"R^2 = {r2:.4f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
