"""Runaway replies: tokens a looping model sends after its loop begins, until we hang up.

    python -m benchmarks.runaway [--token-s 0.002] [--normal 40]

The benchmark server (``benchmarks._server``, its own process) plays a model that streams a
block's first ``--normal`` token pieces (about one token each: a word, or a CJK character), then
loops on one phrase until ``max_tokens`` or the client disconnects, one piece every
``--token-s`` seconds. The server counts the pieces it wrote after the loop began, up to the
write that found the connection closed (pieces still in socket buffers count as sent), and the
token estimate of that text (3.5 ASCII characters or 0.4 CJK characters per token).

Each case refines a one-block report (a real paragraph) with the default config (streaming on,
the guard's ``watchdog_for`` watching), then checks at the server that the request ended by
disconnect and that nothing is in flight. A last run sends two looping blocks through one slot:
the second request starts only once the first one's stream is closed, so the slot was freed.
``no watchdog`` rows are the same case with the watchdog replaced by ``None``: the loop then
runs to ``max_tokens`` (the server's cap, 32,768 on vLLM, when no ``max_tokens`` is sent).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from structlog.testing import capture_logs

from benchmarks._common import print_table, read_report, report_paths, token_pieces
from benchmarks._server import MODEL, ServerProcess
from owlai_refine import RefineConfig, RefineResult, parse, refine

# the module, not the function that the package exports under the same name
refine_module = importlib.import_module("owlai_refine.pipeline.orchestrate")


def _paragraph(report_prefix: str, min_chars: int) -> str:
    """The first sendable one-line paragraph of at least ``min_chars`` characters."""
    path = next(p for p in report_paths() if p.name.startswith(report_prefix))
    for block in parse(read_report(path)).sendable:
        if len(block.text) >= min_chars and "\n" not in block.text and block.kind == "paragraph":
            return block.text
    raise SystemExit(f"no paragraph of {min_chars}+ characters in {path.name}")


def cases() -> list[tuple[str, str, str]]:
    """``(name, block text, looping phrase)``: loops of growing period, in three languages.

    The longer loops repeat a stretch of the block that the reply has not reached yet (past the
    normal pieces), so that the detector must see the loop itself come round, not the block's
    opening again (a model restarting its paragraph is caught sooner: the "restart" row)."""
    en = _paragraph("05-", 1000)  # 161 words
    words = en.split(" ")
    zh = _paragraph("11-", 150)
    ko = _paragraph("15-", 200)
    return [
        ("en, 6-word phrase", en, " and the market continues to grow"),
        ("en, 24-word stretch", en, " " + " ".join(words[50:74])),
        ("en, 60-word stretch", en, " " + " ".join(words[50:110])),
        ("en, 100-word stretch", en, " " + " ".join(words[50:150])),
        ("en, restart (the first 60 words)", en, " " + " ".join(words[:60])),
        ("zh, phrase (8 chars)", zh, "市场规模持续增长\uff0c"),
        ("zh, 40-char stretch", zh, zh[50:90]),
        ("ko, phrase (5 words)", ko, " 이는 매우 중요한 변화입니다."),
    ]


@contextmanager
def no_watchdog() -> Iterator[None]:
    """The refiner with the streaming watchdog switched off (for the baseline rows)."""
    saved = refine_module.watchdog_for
    refine_module.watchdog_for = lambda block, config: None  # type: ignore[attr-defined]
    try:
        yield
    finally:
        refine_module.watchdog_for = saved  # type: ignore[attr-defined]


async def one(
    server: ServerProcess, text: str, phrase: str, args: argparse.Namespace, slots: int = 4
) -> tuple[RefineResult, list[dict[str, Any]], dict[str, Any], float]:
    """Refine ``text`` once against the looping server: the result, the call log lines, the
    server's stats once nothing is in flight, and seconds from our return to that moment."""
    server.control(
        mode="loop", normal_tokens=args.normal, phrase=phrase, token_s=args.token_s, cap=32768
    )
    config = RefineConfig(base_url=server.base_url, model=MODEL, concurrency=slots)
    with capture_logs() as logs:
        result = await refine(text, config)
    returned = time.monotonic()
    stats = server.stats()
    while stats["in_flight"]:
        await anyio.sleep(0.005)
        stats = server.stats()
    freed = max(0.0, max(float(r["finished"]) for r in stats["records"]) - returned)
    calls = [dict(e) for e in logs if e["event"] == "refine.call"]
    return result, calls, stats, freed


def _shorten(reason: str | None, limit: int = 34) -> str:
    reason = reason or ""
    return reason if len(reason) <= limit else reason[: limit - 1] + "\u2026"


async def run(args: argparse.Namespace) -> int:
    rows = []
    worst = 0
    with ServerProcess() as server:
        for name, text, phrase in cases():
            for watch in (True, False):
                if not watch and not args.baseline:
                    continue
                row, after_loop = await _case_row(server, name, text, phrase, args, watch=watch)
                if watch:
                    worst = max(worst, after_loop)
                rows.append(row)
        # the slot is freed: two looping blocks through one slot
        text = cases()[0][1]
        two = f"{text}\n\n{text} Again.\n"
        result, _, stats, _ = await one(server, two, " and so on and on", args, slots=1)
        first, second = sorted(stats["records"], key=lambda r: r["started"])
    _print_cases(args, rows, worst)
    _print_one_slot(args, result, first, second)
    return 0


async def _case_row(
    server: ServerProcess,
    name: str,
    text: str,
    phrase: str,
    args: argparse.Namespace,
    *,
    watch: bool,
) -> tuple[list[object], int]:
    """One case run (with the watchdog, or without it): its table row and the pieces the server
    wrote after the loop began."""
    if watch:
        result, calls, stats, freed = await one(server, text, phrase, args)
    else:
        with no_watchdog():
            result, calls, stats, freed = await one(server, text, phrase, args)
    record = stats["records"][0]
    outcome = result.outcomes[0]
    row: list[object] = [
        name + ("" if watch else " (no watchdog)"),
        len(token_pieces(phrase)),
        record["limit"],
        record["after_loop"],
        record["after_loop_est_tokens"],
        record["ended"],
        f"{1000 * freed:.0f}",
        calls[0].get("completion_tokens"),
        f"{outcome.status.value}: {_shorten(outcome.reason)}",
    ]
    return row, record["after_loop"]


def _print_cases(args: argparse.Namespace, rows: list[list[object]], worst: int) -> None:
    print(
        f"loop after {args.normal} normal pieces, one piece per {1000 * args.token_s:g} ms; "
        "'after loop' = pieces the server wrote after the loop began, until the write that "
        "found the connection closed"
    )
    print_table(
        [
            "case",
            "period",
            "max_tokens",
            "after loop",
            "est. tokens",
            "server saw",
            "freed ms",
            "client got",
            "outcome",
        ],
        rows,
    )
    print(f"worst with the watchdog: {worst} pieces after the loop began (target: <= 256)")


def _print_one_slot(
    args: argparse.Namespace, result: RefineResult, first: dict[str, Any], second: dict[str, Any]
) -> None:
    overlap = max(0.0, first["finished"] - second["started"])
    print(
        f"one slot, two looping blocks: request 1 ended by {first['ended']} after "
        f"{first['after_loop']} pieces of loop, request 2 by {second['ended']} after "
        f"{second['after_loop']}; the server held both for {1000 * overlap:.1f} ms (request 2 "
        "arrived as our slot was freed; the server notices a closed connection at its next "
        f"write, <= {1000 * args.token_s:g} ms later); outcomes "
        f"{[o.status.value for o in result.outcomes if o.status.value != 'skipped']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.runaway")
    parser.add_argument("--token-s", type=float, default=0.002, help="seconds per piece")
    parser.add_argument("--normal", type=int, default=40, help="pieces before the loop")
    parser.add_argument(
        "--no-baseline", dest="baseline", action="store_false", help="skip 'no watchdog' rows"
    )
    args = parser.parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
