"""Client overhead: CPU time per block call with the replay transport, against bare httpx.

    python -m benchmarks.client_overhead [--blocks 2000] [--repeats 5] [--profile]

A 2,000-block report is built from the real reports' own paragraphs and list items (each under
its own numbered section, so every request is distinct), and its replies are recorded once into
a cassette (``benchmarks/out/``): each reply streams the block back one token piece per chunk,
as a server does, with the first letter's case changed where it is an ASCII letter (so most
replies are ``refined`` and run the whole guard; the others are ``unchanged``).

Measured with ``time.process_time`` (CPU seconds of this process), interleaved, the minimum of
``--repeats`` runs each:

``ours``
    ``Refiner.refine_document`` over the whole report through ``cassette.ReplayTransport``: plan,
    prompts, the openai client, retries, the limiter, streaming parse, the guard, outcomes, the
    JSON log (rendered as the CLI does, into ``os.devnull``) and the splice.
``bare``
    An ``httpx2.AsyncClient`` on a bare ``httpx2.MockTransport`` POSTing the same JSON bodies
    (serialised in the loop) with the same number in flight, and parsing the same replies (each
    SSE event's JSON, the content joined). The transport finds each reply by the body's bytes.

``--profile`` prints cProfile's top functions for one more run of ``ours``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2

from benchmarks._common import (
    REPO,
    model_listing,
    print_table,
    quiet_json_logging,
    read_report,
    refine_doc,
    report_paths,
    streamed_reply,
)
from owlai_refine import RefineConfig, parse
from owlai_refine.blocks import Document
from owlai_refine.serve.cassette import RecordingTransport, ReplayTransport

BASE_URL = "http://replay.invalid/v1"
MODEL = "replay"
OUT = REPO / "benchmarks" / "out"


def candidate_texts() -> list[str]:
    """Block texts from the real reports that stand alone as exactly one sendable paragraph."""
    texts: list[str] = []
    for path in report_paths():
        for block in parse(read_report(path)).sendable:
            alone = parse(block.text).blocks
            if len(alone) == 1 and alone[0].sendable and alone[0].text == block.text:
                texts.append(block.text)
    return texts


def build_report(n_blocks: int) -> str:
    """A report of ``n_blocks`` sendable paragraphs, ten per section, cycling the real texts."""
    texts = candidate_texts()
    parts = ["# Benchmark report: real paragraphs", ""]
    for i in range(n_blocks):
        if i % 10 == 0:
            parts += [f"## Section {i // 10 + 1}", ""]
        parts += [texts[i % len(texts)], ""]
    return "\n".join(parts)


def edited(text: str) -> str:
    """The reply the recorded model gives: the first letter's case changed, if ASCII."""
    if text[:1].isascii() and text[:1].isalpha():
        return text[0].swapcase() + text[1:]
    return text


def _reply_for(request: httpx2.Request) -> httpx2.Response:
    if request.method == "GET":  # the pre-flight's model listing
        return model_listing(MODEL)
    body = json.loads(request.content)
    user = body["messages"][-1]["content"]
    text = user.split("<block>\n", 1)[1].rsplit("\n</block>", 1)[0]
    data = streamed_reply(edited(text), rid="chatcmpl-bench", model=MODEL, prompt=len(user) // 4)
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)


async def record(doc: Document, config: RefineConfig, tape: Path) -> None:
    tape.unlink(missing_ok=True)
    transport = RecordingTransport(tape, httpx2.MockTransport(_reply_for))
    await refine_doc(doc, config, base_url=BASE_URL, model=MODEL, transport=transport)


async def ours(doc: Document, config: RefineConfig, transport: ReplayTransport) -> float:
    started = time.process_time()
    result = await refine_doc(doc, config, base_url=BASE_URL, model=MODEL, transport=transport)
    cpu = time.process_time() - started
    if result.counts["failed"] or result.tokens.requests != len(doc.blocks):
        raise SystemExit(f"replay went wrong: {result.counts}")
    return cpu


def bare_transport(tape: Path) -> tuple[httpx2.MockTransport, list[dict[str, Any]]]:
    """A bare MockTransport answering by the request body's bytes, and the recorded bodies."""
    lines = tape.read_text(encoding="utf-8").splitlines()
    exchanges = [e for e in map(json.loads, lines) if e["method"] == "POST"]  # not the listing
    bodies = [e["request"] for e in exchanges]
    replies = {json.dumps(e["request"]).encode(): e["response"]["body"].encode() for e in exchanges}

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=replies[request.content]
        )

    return httpx2.MockTransport(answer), bodies


async def bare(transport: httpx2.MockTransport, bodies: list[dict[str, Any]], slots: int) -> float:
    limiter = anyio.CapacityLimiter(slots)
    contents: list[str] = []

    async def one(client: httpx2.AsyncClient, body: dict[str, Any]) -> None:
        async with limiter:
            response = await client.post(
                "/chat/completions",
                content=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            parts = []
            for event in response.text.split("\n\n"):
                data = event.removeprefix("data: ")
                if data and data != "[DONE]":
                    for choice in json.loads(data)["choices"]:
                        parts.append(choice["delta"].get("content") or "")
            contents.append("".join(parts))

    started = time.process_time()
    async with (
        httpx2.AsyncClient(transport=transport, base_url=BASE_URL) as client,
        anyio.create_task_group() as tg,
    ):
        for body in bodies:
            tg.start_soon(one, client, body)
    cpu = time.process_time() - started
    if len(contents) != len(bodies):
        raise SystemExit("bare run lost replies")
    return cpu


# (label, file suffix, function[, caller's file suffix, caller]): where a replayed block call
# spends its CPU time; with a caller, only the time of calls from that caller
WHERE: list[tuple[str, ...]] = [
    ("openai create(): build + send the request", "completions/completions.py", "create"),
    ("  of which: param transform", "_utils/_transform.py", "async_maybe_transform"),
    ("  of which: ReplayTransport lookup", "owlai_refine/serve/cassette.py", "_answer"),
    ("read the streamed reply (openai AsyncStream)", "openai/_streaming.py", "__stream__"),
    ("guard: check_reply", "owlai_refine/guard/__init__.py", "check_reply"),
    ("guard: watchdog_for (block baseline)", "owlai_refine/guard/__init__.py", "watchdog_for"),
    (
        "guard: watchdog feeds while streaming",
        "owlai_refine/guard/repetition.py",
        "feed",
        "owlai_refine/serve/call.py",
        "_streamed",
    ),
    ("tenacity AsyncRetrying per block", "owlai_refine/serve/retry.py", "retrying"),
    ("refine.call log line", "owlai_refine/pipeline/orchestrate.py", "log_call"),
    ("splice", "owlai_refine/pipeline/splice.py", "splice"),
]


def print_breakdown(stats: pstats.Stats) -> None:
    """Each part's cumulative time as a share of the profiled run (cProfile inflates Python
    calls, so shares, not times, are the figure to read)."""
    table: dict[tuple[str, int, str], tuple[Any, ...]] = stats.stats  # type: ignore[attr-defined]
    total = sum(entry[2] for entry in table.values())
    rows = []
    for label, suffix, name, *by in WHERE:
        cum = 0.0
        for (f, _, fn), entry in table.items():
            if not (f.endswith(suffix) and fn == name):
                continue
            if not by:
                cum += entry[3]
                continue
            callers: dict[tuple[str, int, str], tuple[Any, ...]] = entry[4]
            cum += sum(
                c[3] for (cf, _, cfn), c in callers.items() if cf.endswith(by[0]) and cfn == by[1]
            )
        rows.append([label, f"{100 * cum / total:.0f}%"])
    print("where the CPU time goes (cProfile, one run of ours; share of the profiled total):")
    print_table(["part", "share"], rows)


async def run(args: argparse.Namespace) -> int:
    quiet_json_logging()
    doc = parse(build_report(args.blocks))
    if len(doc.sendable) != args.blocks or len(doc.blocks) != args.blocks:
        raise SystemExit(f"built {len(doc.sendable)} sendable of {len(doc.blocks)} blocks")
    config = RefineConfig(base_url=BASE_URL, model=MODEL)
    OUT.mkdir(parents=True, exist_ok=True)
    tape = OUT / f"client-overhead-{args.blocks}.jsonl"
    await record(doc, config, tape)
    replay = ReplayTransport(tape)
    bare_mock, bodies = bare_transport(tape)
    mine: list[float] = []
    theirs: list[float] = []
    for _ in range(args.repeats):
        mine.append(await ours(doc, config, replay))
        theirs.append(await bare(bare_mock, bodies, config.slots))
    counts = (
        await refine_doc(doc, config, base_url=BASE_URL, model=MODEL, transport=replay)
    ).counts
    n = args.blocks
    print(
        f"{n} block calls, {config.slots} in flight, CPU seconds (process_time), "
        f"min of {args.repeats} interleaved runs; outcomes {counts}"
    )
    print_table(
        ["client", "CPU s (min)", "CPU s (median)", "ms per call"],
        [
            ["ours (replay)", min(mine), sorted(mine)[len(mine) // 2], 1000 * min(mine) / n],
            ["bare httpx2", min(theirs), sorted(theirs)[len(theirs) // 2], 1000 * min(theirs) / n],
        ],
    )
    print(f"ours / bare = {min(mine) / min(theirs):.2f}x   (targets: <= 1 ms per call, <= 1.5x)")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        await refine_doc(doc, config, base_url=BASE_URL, model=MODEL, transport=replay)
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        print_breakdown(stats)
        if args.profile_lines:
            stats.sort_stats("cumulative").print_stats(args.profile_lines)
            stats.sort_stats("tottime").print_stats(args.profile_lines)
            print(out.getvalue())
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.client_overhead")
    parser.add_argument("--blocks", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print a cProfile of one run")
    parser.add_argument("--profile-lines", type=int, default=0, help="also print pstats")
    args = parser.parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
