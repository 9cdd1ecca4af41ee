"""Mutation score of the core: how many small planted bugs the fast tests catch, per module.

    python -m benchmarks.mutation                  # one mutant in 10 (579 of 5,776): 25-50 min
    python -m benchmarks.mutation --sample 1       # every mutant: hours on 2 cores
    python -m benchmarks.mutation --group splice   # one group of modules (repeatable)
    python -m benchmarks.mutation --rerun-survivors  # the last run's survivors, after new tests
    python -m benchmarks.mutation --rerun-survivors --match guard.facts  # some of them
    python -m benchmarks.mutation --report --diffs   # the last run's figures and survivors' diffs

It runs mutmut (the ``mutation`` extra; its settings are ``[tool.mutmut]`` in pyproject.toml:
which modules, which tests) in ``mutants/``, a copy of the checkout. mutmut first runs the fast
tests once with every function instrumented, then runs, for each mutant, only the tests that
reached the mutated function, so a mutant of ``splice.splice`` is judged by the splice tests and
not by the CLI's. A mutant is *killed* when a test fails (or times out), *survived* when they all
pass, and *no tests* when no fast test reaches its function (counted as survived here: a bug
there would ship). Mutants of functions that the tests never reach are listed as such.

Prints a line per module, the surviving mutants (``mutmut show NAME`` prints one's diff), and,
last, ``mutants killed K/N (P%)``. Benchmark-style: too slow for every CI run; run it after
changing the core or its tests (see docs/development.md, "How good the tests are").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
OUT = ROOT / "benchmarks" / "out" / "mutation.json"
KILLED = {"killed", "timeout", "caught by type check", "segfault"}
DIFFS: dict[str, str] = {}
"""Each surviving mutant's diff (``mutmut show``), kept in the saved figures."""
_MODULE = re.compile(r"^(?P<module>[\w.]+?)\.x[_\u01c1]")

GROUPS: dict[str, tuple[list[str], list[str]]] = {
    # name: (modules to mutate, the fast tests that judge them; missing files are left out)
    "splice": (
        ["owlai_refine/pipeline/splice.py", "owlai_refine/pipeline/verify.py"],
        ["tests/test_splice_properties.py", "tests/test_verify.py", "tests/test_endings.py"],
    ),
    "parse": (
        [
            "owlai_refine/pipeline/parse.py",
            "owlai_refine/pipeline/skips.py",
            "owlai_refine/markdown.py",
        ],
        [
            "tests/test_parse_skips.py",
            "tests/test_parse_alerts.py",
            "tests/test_parse_layout.py",
            "tests/test_splice_properties.py",
            "tests/test_verify.py",
            "tests/test_endings.py",
            "tests/test_barriers.py",
            "tests/test_prompt.py",
            "tests/guard/test_reports.py",
        ],
    ),
    "outcome": (
        [
            "owlai_refine/pipeline/plan.py",
            "owlai_refine/pipeline/orchestrate.py",
            "owlai_refine/results.py",
            "owlai_refine/limits/limiter.py",
        ],
        [
            "tests/test_refine.py",
            "tests/test_faults.py",
            "tests/test_barriers.py",
            "tests/test_routing.py",
            "tests/test_replay.py",
            "tests/test_call_stream.py",
        ],
    ),
    "cli": (
        ["owlai_refine/shell/files.py", "owlai_refine/cli/__init__.py"],
        [
            "tests/test_cli.py",
            "tests/test_cli_flags.py",
            "tests/test_cli_help.py",
            "tests/test_cli_terminal.py",
            "tests/test_files.py",
            "tests/test_faults.py",
        ],
    ),
    "guard": (
        ["owlai_refine/guard/*"],
        ["tests/guard/", "tests/test_barriers.py"],
    ),
}

# Runs mutmut with this group's modules and tests in place of pyproject.toml's (mutmut reads
# its settings once, from one file; the workers it forks inherit them).
_BOOT = """
import dataclasses, json, sys
import mutmut.configuration as c
only, tests = json.loads(sys.argv[1])
c._config = dataclasses.replace(
    c._load_config(), only_mutate=only, pytest_add_cli_args_test_selection=tests
)
from mutmut.__main__ import cli
sys.argv = ["mutmut", *sys.argv[2:]]
cli()
"""


def _group_of(mutant: str) -> str:
    """The group whose modules hold ``mutant``."""
    path = module_of(mutant).replace(".", "/")
    files = {f"{path}.py", f"{path}/__init__.py"}
    for name, (only, _) in GROUPS.items():
        for p in only:
            if p in files or (p.endswith("*") and any(f.startswith(p[:-1]) for f in files)):
                return name
    raise KeyError(mutant)


def module_of(mutant: str) -> str:
    """``owlai_refine.pipeline.splice.x_splice__mutmut_3`` -> ``owlai_refine.pipeline.splice``."""
    m = _MODULE.match(mutant)
    return m.group("module") if m else mutant.rsplit(".", 1)[0]


def _metas() -> dict[str, int | None]:
    """Mutant name -> mutmut's exit code, from ``mutants/**/*.py.meta``."""
    codes: dict[str, int | None] = {}
    for meta in sorted(MUTANTS.rglob("*.meta")):
        codes.update(json.loads(meta.read_text())["exit_code_by_key"])
    return codes


def sampled(names: list[str], every: int) -> list[str]:
    """One name in ``every``, chosen by a hash of the name (the same names each run)."""
    if every <= 1:
        return names
    return [n for n in names if int(hashlib.sha256(n.encode()).hexdigest(), 16) % every == 0]


def run_group(name: str, every: int, jobs: int, names: list[str] | None = None) -> dict[str, str]:
    """Mutate one group's modules and judge each chosen mutant by the group's tests; mutant
    name -> status (``names``: these mutants, not a sample). Survivors' diffs go to
    :data:`DIFFS`."""
    from mutmut.stats import status_by_exit_code  # noqa: PLC0415 - the mutation extra

    only, tests = GROUPS[name]
    tests = [t for t in tests if (ROOT / t).exists()]
    if MUTANTS.exists():
        shutil.rmtree(MUTANTS)
    boot = [sys.executable, "-c", _BOOT, json.dumps([only, tests])]
    # Generate the mutants and the map of which test reaches which function.
    subprocess.run(
        [*boot, "run", "none-such-mutant"],
        cwd=ROOT,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    chosen = sampled(sorted(_metas()), every) if names is None else names
    if chosen:
        subprocess.run(
            [*boot, "run", "--max-children", str(jobs), *chosen],
            cwd=ROOT,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    codes = _metas()
    found = {n: status_by_exit_code[codes.get(n)] for n in chosen}
    for n, status in found.items():  # the diff of each survivor, while mutants/ holds it
        if status not in KILLED:
            shown = subprocess.run(
                [*boot, "show", n], cwd=ROOT, capture_output=True, text=True, check=False
            )
            DIFFS[n] = shown.stdout
    return found


def report(found: dict[str, str]) -> None:
    """Print the per-module table, the survivors and the closing lines."""
    by_module: dict[str, Counter[str]] = defaultdict(Counter)
    survivors: list[tuple[str, str]] = []
    for name, status in sorted(found.items()):
        by_module[module_of(name)][status] += 1
        if status not in KILLED:
            survivors.append((name, status))
    if survivors:
        print(f"surviving mutants ({len(survivors)}; `mutmut show NAME` shows one's diff):")
        for name, status in survivors:
            print(f"  {name}  [{status}]")
        print()
    total_k = total_n = 0
    for module, counts in sorted(by_module.items()):
        n = sum(counts.values())
        k = sum(v for s, v in counts.items() if s in KILLED)
        total_k, total_n = total_k + k, total_n + n
        print(f"{module}: mutants killed {k}/{n} ({100 * k / n:.1f}%)")
    pct = 100 * total_k / total_n if total_n else 0.0
    print(f"mutants killed {total_k}/{total_n} ({pct:.1f}%)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.mutation",
        description="Mutation score of the core, per module (see the module docstring).",
    )
    parser.add_argument(
        "--sample", type=int, default=10, metavar="K", help="one mutant in K (default 10; 1: all)"
    )
    parser.add_argument(
        "--group", action="append", choices=sorted(GROUPS), help="these groups only (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="mutants at once")
    parser.add_argument("--report", action="store_true", help="print the last run's figures")
    parser.add_argument("--diffs", action="store_true", help="with --report: survivors' diffs")
    parser.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="run the last run's surviving mutants again (after adding tests); update its figures",
    )
    parser.add_argument(
        "--match",
        metavar="TEXT",
        help="with --rerun-survivors: only the survivors whose name contains TEXT",
    )
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(OUT.read_text())
        if args.diffs:
            for diff in saved.get("diffs", {}).values():
                print(diff)
        report(saved["status"])
        return 0
    found: dict[str, str] = {}
    again: dict[str, list[str]] = {}
    if args.rerun_survivors:
        saved = json.loads(OUT.read_text())
        found, args.sample = saved["status"], saved["sample"]
        DIFFS.update(saved.get("diffs", {}))
        for n, status in found.items():
            if status not in KILLED and (args.match or "") in n:
                again.setdefault(_group_of(n), []).append(n)
                DIFFS.pop(n, None)
    for name in args.group or list(again if args.rerun_survivors else GROUPS):
        started = time.monotonic()
        got = run_group(name, args.sample, args.jobs, again.get(name) if again else None)
        found.update(got)
        killed = sum(s in KILLED for s in got.values())
        print(
            f"group {name}: {killed}/{len(got)} killed in {time.monotonic() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(
            json.dumps({"sample": args.sample, "status": found, "diffs": DIFFS}, indent=1)
        )
    report(found)
    return 0


if __name__ == "__main__":
    sys.exit(main())
