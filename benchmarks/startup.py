"""Start-up: how long ``refine`` takes to be ready, against ``python -c "import openai"``.

    python -m benchmarks.startup [--repeats 15]

Each command is a fresh process (``python -m owlai_refine ...``), timed from start to exit with
``time.perf_counter``; the commands run in turn, round after round, so that the machine's drift
falls on all of them alike, and the table shows each one's median and minimum wall time and its
median per-round ratio to ``python -c "import openai"`` (the openai package's own import, which
a refine run needs anyway) and to ``python -c pass`` (the interpreter alone). ``refine --dry-run``
stands for a refine run's start-up: it loads everything a run loads (the refiner, openai, the
settings), parses the report and lists its blocks, without a server.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence

from benchmarks._common import REPO, median, print_table

_REFINE = [sys.executable, "-m", "owlai_refine"]
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    'python -c "import openai"': [sys.executable, "-c", "import openai"],
    "refine --version": [*_REFINE, "--version"],
    "refine --help": [*_REFINE, "--help"],
    "refine stats LEDGER": [*_REFINE, "stats", str(REPO / "fixtures/vllm/ledger-sample.log")],
    "refine plan --config ...": [
        *_REFINE,
        "plan",
        "--config",
        str(REPO / "fixtures/vllm/smollm2-135m-config.json"),
        "--kv-cache-gib",
        "1",
        "--max-model-len",
        "4096",
    ],
    "refine --dry-run REPORT": [
        *_REFINE,
        "--dry-run",
        str(REPO / "fixtures/reports/gpu-market.md"),
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
    ],
}
OPENAI, BARE = 'python -c "import openai"', "python -c pass"


def _time(argv: Sequence[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, cwd=REPO, check=False)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):  # stats exits 3 on a file without call lines
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr[-500:]!r}")
    return wall


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=15, help="rounds (default 15)")
    args = p.parse_args(argv)
    for command in COMMANDS.values():  # warm the file cache and the bytecode
        _time(command)
    walls: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, command in COMMANDS.items():
            walls[name].append(_time(command))
    rows = []
    for name, times in walls.items():
        vs_openai = median([t / o for t, o in zip(times, walls[OPENAI], strict=True)])
        vs_bare = median([t / b for t, b in zip(times, walls[BARE], strict=True)])
        rows.append([name, median(times), min(times), vs_openai, vs_bare])
    print(f"{args.repeats} rounds, Python {sys.version.split()[0]}")
    print_table(["command", "median s", "min s", "/ import openai", "/ python -c pass"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
