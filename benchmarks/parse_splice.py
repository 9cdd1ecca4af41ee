"""Parse and splice: our ``parse`` + ``splice`` time over markdown-it-py's own ``parse`` time.

    python -m benchmarks.parse_splice [--rounds 30] [REPORT]

On the largest real report (default; by bytes), each round times, back to back and in
alternating order, ``markdown_parser().parse(text)`` (markdown-it-py with our plugins: the
floor, since our parse runs it once) and ``splice(parse(text), replacements)`` where every
sendable block is replaced by its own text with its first letter's case changed (so every block
goes through the splicer's replacement path). Wall time with ``time.perf_counter``; the figure
is the minimum over the rounds of each side (the machine is shared: the minimum is the run least
disturbed). ``splice`` of a block's own text is checked to give the source back byte for byte.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._common import print_table, read_report, report_paths
from owlai_refine import parse, splice
from owlai_refine.markdown import markdown_parser


def _edit(text: str) -> str:
    return text[0].swapcase() + text[1:] if text else text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.parse_splice")
    parser.add_argument("report", nargs="?", help="default: the largest real report")
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    path = Path(args.report) if args.report else max(report_paths(), key=lambda p: p.stat().st_size)
    text = read_report(path)
    md = markdown_parser()
    doc = parse(text)
    if splice(doc, {b.id: b.text for b in doc.blocks}) != text:
        raise SystemExit("splice of every block's own text did not give the source back")
    replacements = {b.id: _edit(b.text) for b in doc.sendable}

    def markdown_it() -> object:
        return md.parse(text)

    def ours() -> object:
        d = parse(text)
        return splice(d, replacements)

    def ours_parse() -> object:
        return parse(text)

    def ours_splice() -> object:
        return splice(doc, replacements)

    timings: dict[str, list[float]] = {}
    sides: list[tuple[str, Callable[[], object]]] = [
        ("markdown-it-py parse", markdown_it),
        ("our parse + splice", ours),
        ("  our parse", ours_parse),
        ("  our splice", ours_splice),
    ]
    for _ in range(3):  # warm up: caches, the parser's lazy set-up
        for _, fn in sides:
            fn()
    gc.collect()
    for r in range(args.rounds):
        order = sides if r % 2 == 0 else sides[::-1]
        for name, fn in order:
            started = time.perf_counter()
            fn()
            timings.setdefault(name, []).append(time.perf_counter() - started)
    floor = min(timings["markdown-it-py parse"])
    print(
        f"{path.name}: {len(text.encode()):,} bytes, {len(doc.lines):,} lines, "
        f"{len(doc.blocks)} blocks ({len(replacements)} replaced); min of {args.rounds} "
        "interleaved rounds"
    )
    print_table(
        ["step", "min ms", "median ms", "/ markdown-it parse"],
        [
            [name, 1000 * min(t), 1000 * sorted(t)[len(t) // 2], min(t) / floor]
            for name, t in timings.items()
        ],
    )
    ratio = min(timings["our parse + splice"]) / floor
    print(f"(parse + splice) / markdown-it-py parse = {ratio:.3f}   (target: <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
