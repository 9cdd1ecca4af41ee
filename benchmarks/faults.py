"""Every fault in ``SCENARIOS`` (429s, 5xx, resets, timeouts, malformed replies, 4xx, a server
that goes away) over every real report: what the run did, and that it lost nothing.

usage: python -m benchmarks.faults [--reports DIR] [--scenario NAME ...]

For each scenario, each report is refined (cloud backend: 12 slots) against a real
OpenAI-compatible HTTP server on loopback that injects the fault (``testsupport/fake_openai``:
a model that returns each block unchanged, one token per word). Retry waits are shortened
(initial 0.05 s, at most 0.5 s) so the table takes minutes; ``Retry-After`` is honoured as sent.
Per scenario it prints, summed over the reports: blocks answered (refined or unchanged) and
failed, lines changed outside refined blocks (must be 0), the most requests in flight at the
server, the requests sent, and the exit codes ``refine`` would give (``Exit.for_result`` /
``Exit.for_error``).
"""

from __future__ import annotations

import argparse
import email.utils
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import structlog

from owlai_refine import Backend, RefineConfig, RefineError, RetryPolicy, parse, refine
from owlai_refine.exit_codes import Exit
from owlai_refine.pipeline.verify import changed_outside_blocks
from owlai_refine.results import OutcomeStatus
from testsupport.fake_openai import FakeOpenAI, Fault

REPO = Path(__file__).resolve().parents[1]
FaultFn = Callable[[int, dict[str, Any]], Fault | None]


def every(n: int, fault: Fault) -> FaultFn:
    return lambda number, body: fault if number % n == n - 1 else None


def http_date(seconds: float) -> str:
    return email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=seconds), usegmt=True)


def storm(seconds: float) -> FaultFn:
    state: dict[str, float] = {}

    def fault(number: int, body: dict[str, Any]) -> Fault | None:
        start = state.setdefault("start", time.monotonic())
        if time.monotonic() - start < seconds:
            return Fault(status=429, headers={"Retry-After": "1"})
        return None

    return fault


def going_away(server_box: list[FakeOpenAI], after: int) -> FaultFn:
    def fault(number: int, body: dict[str, Any]) -> Fault | None:
        if number == after:
            server_box[0].stop()
        return None

    return fault


SCENARIOS: dict[str, Callable[[list[FakeOpenAI]], FaultFn]] = {
    "none": lambda box: lambda n, b: None,
    "429 Retry-After seconds (1 in 5)": lambda box: every(
        5, Fault(status=429, headers={"Retry-After": "0.2"})
    ),
    "429 Retry-After HTTP-date (1 in 5)": lambda box: (
        lambda n, b: (
            Fault(status=429, headers={"Retry-After": http_date(1)}) if n % 5 == 4 else None
        )
    ),
    "429 without Retry-After (1 in 5)": lambda box: every(5, Fault(status=429)),
    "500 (1 in 4)": lambda box: every(4, Fault(status=500)),
    "502 (1 in 4)": lambda box: every(4, Fault(status=502)),
    "503 (1 in 4)": lambda box: every(4, Fault(status=503)),
    "connection reset mid-response (1 in 5)": lambda box: every(5, Fault(reset=True)),
    "read timeout (1 in 7)": lambda box: every(7, Fault(hang_s=1.5)),
    "malformed JSON (1 in 6)": lambda box: every(6, Fault(body='{"choices": [')),
    "empty choices (1 in 6)": lambda box: every(6, Fault(empty_choices=True)),
    "400 context too long (1 in 10)": lambda box: every(10, Fault(status=400)),
    "404 unknown model (1 in 10)": lambda box: every(10, Fault(status=404)),
    "every request 503 (retries exhausted)": lambda box: lambda n, b: Fault(status=503),
    "401 unauthorised": lambda box: lambda n, b: Fault(status=401),
    "server goes away after 10 requests": lambda box: going_away(box, 10),
    "429 storm (every request for 2 s)": lambda box: storm(2.0),
}


async def one(path: Path, name: str) -> dict[str, Any]:
    source = path.read_bytes().decode("utf-8")
    doc = parse(source)
    box: list[FakeOpenAI] = []
    server = FakeOpenAI()
    box.append(server)
    server.fault = SCENARIOS[name](box)
    config = RefineConfig(
        model="fake-model",
        backend=Backend.CLOUD,
        read_timeout_s=0.5,
        retry=RetryPolicy(max_attempts=6, initial_wait_s=0.05, max_wait_s=0.5, max_total_s=60),
        max_consecutive_connection_failures=8,
    )
    with server:
        config = config.model_copy(update={"base_url": server.base_url})
        try:
            result = await refine(source, config, report_id=path.stem)
        except RefineError as exc:
            return {"answered": 0, "failed": 0, "outside": 0, "max_in_flight": server.max_in_flight,
                    "requests": len(server.seen), "exit": int(Exit.for_error(exc))}  # fmt: skip
    refined = {o.block_id: o.text for o in result.outcomes if o.text is not None}
    answered = sum(
        o.status in (OutcomeStatus.REFINED, OutcomeStatus.UNCHANGED) for o in result.outcomes
    )
    return {
        "answered": answered,
        "failed": result.counts["failed"],
        "outside": len(changed_outside_blocks(doc, refined, result.text)),
        "max_in_flight": server.max_in_flight,
        "requests": len(server.seen),
        "exit": int(Exit.for_result(result)),
    }


async def main_async(reports: list[Path], names: list[str]) -> None:
    print("| fault | blocks answered | blocks failed | lines changed outside blocks | "
          "max in flight | requests | exit codes | wall s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        started = time.perf_counter()
        rows = [await one(path, name) for path in reports]
        exits = Counter(r["exit"] for r in rows)
        print(
            f"| {name} | {sum(r['answered'] for r in rows):,} | {sum(r['failed'] for r in rows):,} "
            f"| {sum(r['outside'] for r in rows)} | {max(r['max_in_flight'] for r in rows)} "
            f"| {sum(r['requests'] for r in rows):,} "
            f"| {', '.join(f'{c} x{n}' for c, n in sorted(exits.items()))} "
            f"| {time.perf_counter() - started:.0f} |",
            flush=True,
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.faults")
    parser.add_argument("--reports", default=str(REPO.parent / "shared" / "reports"))
    parser.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    args = parser.parse_args(argv)
    reports = sorted(p for p in Path(args.reports).glob("*.md") if p.name != "SOURCES.md")
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # the table is the output
    anyio.run(main_async, reports, args.scenario or list(SCENARIOS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
