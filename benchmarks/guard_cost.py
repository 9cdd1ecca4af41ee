"""Guard cost: CPU time per block of the streaming watchdog and of ``check_reply``.

    python -m benchmarks.guard_cost [--blocks 2000] [--repeats 5]

The same 2,000 real blocks and replies as ``benchmarks.client_overhead`` (each reply the block
with its first letter's case changed, cut into token pieces as a server streams it). ``watchdog``
builds ``watchdog_for(block)`` and feeds it the reply so far after every piece, as the client
does; ``check_reply`` judges the whole reply. CPU seconds (``time.process_time``), the minimum of
``--repeats`` runs, divided by the blocks. The guard's share of a block call, without the noise
of the HTTP client around it.
"""

from __future__ import annotations

import argparse
import sys
import time

from benchmarks._common import print_table, token_pieces
from benchmarks.client_overhead import build_report, edited
from owlai_refine import parse
from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply, watchdog_for


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.guard_cost")
    parser.add_argument("--blocks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    doc = parse(build_report(args.blocks))
    config = GuardConfig()
    work = [(b, token_pieces(edited(b.text))) for b in doc.blocks]
    best: dict[str, float] = {}
    for _ in range(args.repeats):
        started = time.process_time()
        for block, pieces in work:
            watchdog = watchdog_for(block, config)
            parts: list[str] = []
            for piece in pieces:
                parts.append(piece)
                watchdog("".join(parts))
        best["watchdog (per piece)"] = min(
            best.get("watchdog (per piece)", 1e9), time.process_time() - started
        )
        started = time.process_time()
        for block, pieces in work:
            check_reply(block, "".join(pieces), config)
        best["check_reply"] = min(best.get("check_reply", 1e9), time.process_time() - started)
    n = len(work)
    print(f"{n} blocks, CPU time per block, min of {args.repeats} runs")
    print_table(
        ["part", "ms per block"],
        [*([k, 1000 * v / n] for k, v in best.items()), ["total", 1000 * sum(best.values()) / n]],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
