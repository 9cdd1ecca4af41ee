"""People's chat turns on a vLLM server while a report is refined: chat TTFT and refine wall time
per mode (the polite tenant: docs/serving.md, "A polite tenant").

A chat workload sends one short streamed chat turn every ``--chat-every`` seconds (priority 0,
the default of any chat client; each turn is sent on time whether or not the last one ended) and
records its time to first token. Modes, back to back on the same server:

- ``idle``: the chat workload alone, for ``--idle-s`` seconds;
- ``alone``: the refine alone (no chat), fixed cap;
- ``fixed``: refine with the fixed cap (``--concurrency``, default 4) + chat;
- ``priority``: refine at priority 10 + chat (needs ``--scheduling-policy priority``);
- ``adaptive``: refine with ``adaptive=True`` + chat;
- ``both``: priority 10 and adaptive + chat.

Prints one Markdown table: chat TTFT p50/p90 (s) and the ratio of p90 to idle's, the refine's
wall time (s) and its ratio to ``alone``'s, and the lowest adaptive limit seen.

    python -m benchmarks.polite_tenant --base-url http://127.0.0.1:18920/v1 \\
        [--report fixtures/reports/inference-market.md] [--lines 60] [--chat-every 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import anyio
import openai
import structlog

from benchmarks._common import REPO, print_table
from owlai_refine import RefineConfig, refine

MODES = ("idle", "alone", "fixed", "priority", "adaptive", "both")
CHAT = [
    "Hi! Can you suggest a name for my grey cat?",
    "What is a good breakfast before a long run?",
    "Give me one tip for writing clearer emails.",
    "How do I say thank you in Korean?",
]


def quantile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


async def chat_turn(client: openai.AsyncOpenAI, model: str, n: int, ttfts: list[float]) -> None:
    """One streamed chat turn; its TTFT (s) is appended to ``ttfts`` (failures are printed)."""
    started = time.perf_counter()
    try:
        stream = await client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": CHAT[n % len(CHAT)]}],
            max_tokens=24,
            temperature=0.2,
            stream=True,
        )
        first: float | None = None
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
        if first is not None:
            ttfts.append(first)
    except openai.APIError as exc:
        print(f"chat turn {n} failed: {exc}")


async def chat_workload(
    client: openai.AsyncOpenAI, model: str, every_s: float, stop: anyio.Event
) -> list[float]:
    """Send a chat turn every ``every_s`` seconds until ``stop`` is set; wait for the last."""
    ttfts: list[float] = []
    async with anyio.create_task_group() as tg:
        n = 0
        while not stop.is_set():
            tg.start_soon(chat_turn, client, model, n, ttfts)
            n += 1
            with anyio.move_on_after(every_s):
                await stop.wait()
    return ttfts


class _LimitWatch:
    """A structlog processor noting the lowest ``refine.adaptive_limit`` seen."""

    def __init__(self) -> None:
        self.lowest: int | None = None
        self.changes = 0

    def __call__(self, _: Any, __: str, event: MutableMapping[str, Any]) -> Any:
        if event.get("event") == "refine.adaptive_limit":
            self.changes += 1
            limit = int(event["limit"])
            self.lowest = limit if self.lowest is None else min(self.lowest, limit)
        raise structlog.DropEvent


async def run_mode(
    mode: str, source: str, args: argparse.Namespace, client: openai.AsyncOpenAI
) -> dict[str, Any]:
    """One mode: ``{"ttfts": [...], "wall_s": float | None, "lowest": int | None}``."""
    watch = _LimitWatch()
    structlog.configure(processors=[watch])
    config = RefineConfig(
        base_url=args.base_url,
        model=args.model,
        concurrency=args.concurrency,
        priority=10 if mode in ("priority", "both") else 0,
        adaptive=mode in ("adaptive", "both"),
        read_timeout_s=600,
    )
    stop = anyio.Event()
    ttfts: list[float] = []
    wall: float | None = None

    async def chat() -> None:
        nonlocal ttfts
        ttfts = await chat_workload(client, args.model, args.chat_every, stop)

    async with anyio.create_task_group() as tg:
        if mode != "alone":
            tg.start_soon(chat)
        if mode == "idle":
            await anyio.sleep(args.idle_s)
        else:
            started = time.perf_counter()
            result = await refine(source, config)
            wall = time.perf_counter() - started
            print(f"{mode}: {result.counts} in {wall:.1f} s", flush=True)
        stop.set()
    return {"ttfts": ttfts, "wall_s": wall, "lowest": watch.lowest, "changes": watch.changes}


async def main_async(args: argparse.Namespace) -> None:
    source = "".join(Path(args.report).read_text("utf-8").splitlines(keepends=True)[: args.lines])
    client = openai.AsyncOpenAI(base_url=args.base_url, api_key="EMPTY", max_retries=0)
    results: dict[str, dict[str, Any]] = {}
    for mode in args.modes:
        results[mode] = await run_mode(mode, source, args, client)
        await anyio.sleep(args.pause_s)  # let the server drain between modes
    idle_p90 = quantile(results["idle"]["ttfts"], 0.9) if "idle" in results else None
    alone = results.get("alone", {}).get("wall_s")
    rows = []
    for mode, r in results.items():
        p90 = quantile(r["ttfts"], 0.9)
        rows.append(
            [
                mode,
                len(r["ttfts"]),
                quantile(r["ttfts"], 0.5),
                p90,
                p90 / idle_p90 if idle_p90 and r["ttfts"] else "",
                r["wall_s"] if r["wall_s"] is not None else "",
                r["wall_s"] / alone if alone and r["wall_s"] else "",
                "" if r["lowest"] is None else f"{r['lowest']} ({r['changes']} changes)",
            ]
        )
    print_table(
        [
            "mode",
            "chat turns",
            "TTFT p50 s",
            "TTFT p90 s",
            "p90 / idle",
            "refine wall s",
            "wall / alone",
            "lowest adaptive limit",
        ],
        rows,
    )


def main() -> None:
    """Parse the arguments and run the modes in order."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", required=True, help="the vLLM server (priority scheduling on)")
    p.add_argument("--model", default="smollm2")
    p.add_argument("--report", default=str(REPO / "fixtures/reports/inference-market.md"))
    p.add_argument("--lines", type=int, default=60, help="refine the report's first N lines")
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--chat-every", type=float, default=3.0, help="seconds between chat turns")
    p.add_argument("--idle-s", type=float, default=45.0, help="length of the idle mode")
    p.add_argument("--pause-s", type=float, default=3.0, help="pause between modes")
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    anyio.run(main_async, p.parse_args())


if __name__ == "__main__":
    main()
