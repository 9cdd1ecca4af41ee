"""Runaway replies on a real model: SmolLM2-135M on llama.cpp, loops cut by the watchdog.

    MODEL=$(python -c 'from owlai_refine.serve.local import ensure_model; print(ensure_model())')
    python -m owlai_refine.serve.local.child "$MODEL" 18400 4 4096 1 smollm2 \
        >server-18400.log 2>&1 &
    python -m benchmarks.runaway_llamacpp --base-url http://127.0.0.1:18400/v1 \
        --log server-18400.log [--blocks 60]       # once http://127.0.0.1:18400/health answers
    kill %1

Short real blocks (the model loops most on those) are refined one at a time (one slot, so that
each llama.cpp task in the server's log is one of our requests) with greedy decoding
(``temperature=0``, where a small model loops most) and the default guard. For every call that
the watchdog stopped:

- *loop start*: the earlier of where the received text becomes periodic (the earliest start of
  a repeating tail of at least two periods, in words or CJK characters) and the first
  occurrence of the phrase the watchdog names (a loop need not be exact to the end);
- *client tokens after loop*: llama.cpp's own ``/tokenize`` count of the received text from the
  loop start;
- *server tokens after loop*: what the server generated for the request (``n_tokens`` in its
  ``release`` log line, minus the prompt's tokens, from a ``max_tokens=1`` request with the same
  messages) minus the tokens before the loop start;
- *freed*: the log says ``cancel task`` for it and ``/slots`` shows no slot processing.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import structlog
from structlog.testing import capture_logs

from benchmarks._common import print_table, read_report, report_paths
from owlai_refine import RefineConfig, parse, refine
from owlai_refine.guard.repetition import _PUNCT as GUARD_PUNCT
from owlai_refine.guard.repetition import _UNIT as GUARD_UNIT
from owlai_refine.pipeline.prompt import build_messages, estimate_tokens, report_context

_UNIT = re.compile(
    r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]|[^\s\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]+"
)
_RELEASE = re.compile(r"release: .*task (\d+) \| stop processing: n_tokens = (\d+)")
_CANCEL = re.compile(r"cancel task, id_task = (\d+)")


def loop_start(text: str) -> tuple[int, int] | None:
    """``(character offset where the loop begins, period in units)`` of the longest periodic
    tail of ``text`` covering at least two periods and 8 units; ``None`` if there is none."""
    spans = [(m.start(), m.group().lower().strip(".,;:!?\"'()")) for m in _UNIT.finditer(text)]
    units = [u for _, u in spans]
    n = len(units)
    best: tuple[int, int] | None = None
    for p in range(1, n // 2 + 1):
        s = n - p
        while s > 0 and units[s - 1] == units[s - 1 + p]:
            s -= 1
        if n - s >= max(2 * p, 8) and (best is None or s < best[0]):
            best = (s, p)
    return None if best is None else (spans[best[0]][0], best[1])


def phrase_start(text: str, reason: str) -> int | None:
    """Character offset of the first occurrence, in ``text``, of the phrase the watchdog names
    in ``reason`` (``repetition: phrase xN "..."``, in the guard's units); ``None`` if absent."""
    m = re.search(r'"(.*)"', reason)
    if m is None:
        return None
    phrase = m.group(1)
    words = phrase.rstrip("\u2026").split(" ")
    if phrase.endswith("\u2026"):
        words = words[:-1]  # cut short by the guard: the last word may be partial
    spans = [
        (u.start(), u.group().lower().strip(GUARD_PUNCT) or u.group())
        for u in GUARD_UNIT.finditer(text)
    ]
    units = [u for _, u in spans]
    for i in range(len(units) - len(words) + 1):
        if units[i : i + len(words)] == words:
            return spans[i][0]
    return None


def short_blocks(limit: int, max_tokens: int) -> list[str]:
    """Up to ``limit`` short sendable blocks (at most ``max_tokens`` estimated), across reports."""
    found: list[str] = []
    for path in report_paths():
        for block in parse(read_report(path)).sendable:
            if 12 <= estimate_tokens(block.text) <= max_tokens and block.text not in found:
                found.append(block.text)
    step = max(1, len(found) // limit)
    return found[::step][:limit]


def log_lines(path: Path, start: int) -> tuple[list[str], int]:
    data = path.read_bytes()
    return data[start:].decode("utf-8", "replace").splitlines(), len(data)


async def run(args: argparse.Namespace) -> int:
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
        processors=[structlog.processors.JSONRenderer()],
        logger_factory=structlog.ReturnLoggerFactory(),
    )
    log_path = Path(args.log).expanduser()
    http = httpx2.AsyncClient(timeout=120)
    config = RefineConfig(
        base_url=args.base_url, model="smollm2", concurrency=1, temperature=0, log_text=True
    )
    rows: list[list[object]] = []
    totals = {"blocks": 0, "stopped": 0, "truncated": 0, "rejected other": 0}
    worst_client = worst_server = 0
    for text in short_blocks(args.blocks, args.max_block_tokens):
        _, offset = log_lines(log_path, 0)
        stopped = await _refine_one(text, config, totals)
        if stopped is None:
            continue
        call, reply = stopped
        row, client_after, server_after = await _measure_stop(
            http,
            args.base_url,
            log_path=log_path,
            offset=offset,
            text=text,
            config=config,
            call=call,
            reply=reply,
        )
        worst_client = max(worst_client, client_after)
        worst_server = max(worst_server, server_after)
        rows.append([len(rows) + 1, *row])
    await http.aclose()
    _print_report(totals, rows, worst_client, worst_server)
    return 0


async def _refine_one(
    text: str, config: RefineConfig, totals: dict[str, int]
) -> tuple[dict[str, Any], str] | None:
    """Refine ``text`` alone and count it in ``totals``; ``(its refine.call event, the reply
    received)`` if the watchdog stopped it, else ``None``."""
    with capture_logs() as logs:
        result = await refine(text, config)
    totals["blocks"] += 1
    outcome = result.outcomes[0]
    call = next(e for e in logs if e["event"] == "refine.call")
    totals["truncated"] += outcome.status.value == "truncated"
    if not call.get("stopped_early"):
        totals["rejected other"] += outcome.status.value == "rejected"
        return None
    totals["stopped"] += 1
    reply = next(e for e in logs if e["event"] == "refine.block_text")["reply"]
    return dict(call), reply


async def _measure_stop(
    http: httpx2.AsyncClient,
    base_url: str,
    *,
    log_path: Path,
    offset: int,
    text: str,
    config: RefineConfig,
    call: dict[str, Any],
    reply: str,
) -> tuple[list[object], int, int]:
    """One stopped call measured against the server (its log from byte ``offset``, ``/slots``,
    ``/tokenize``): ``(the table's row after ``#``, client tokens after the loop, server tokens
    after the loop)``."""
    root = base_url.removesuffix("/v1")
    idle_after = await _wait_idle(http, root)
    lines, _ = log_lines(log_path, offset)
    released = [int(m.group(2)) for m in map(_RELEASE.search, lines) if m]
    cancelled = sum(1 for line in lines if _CANCEL.search(line))
    doc = parse(text)
    context = report_context(doc, config.report_context_chars)
    messages = build_messages(doc.blocks[0], context, marker=config.unchanged_marker)
    prompt = await _prompt_tokens(http, base_url, messages)
    periodic = loop_start(reply)
    named = phrase_start(reply, call["stopped_early"])
    offsets = [x for x in (periodic[0] if periodic else None, named) if x is not None]
    cut = min(offsets, default=len(reply))  # the earlier: more tokens count as "after"
    before = reply[:cut]
    client_after = await _count(http, root, reply[cut:])
    server_generated = released[-1] - prompt if released else -1
    server_after = server_generated - await _count(http, root, before)
    row: list[object] = [
        estimate_tokens(text),
        call["max_tokens"],
        call["completion_tokens"],
        periodic[1] if periodic else "-",
        client_after,
        server_generated,
        server_after,
        "yes" if cancelled else "no",
        f"{1000 * idle_after:.0f}",
        repr(reply[len(before) :][:40]),
    ]
    return row, client_after, server_after


def _print_report(
    totals: dict[str, int], rows: list[list[object]], worst_client: int, worst_server: int
) -> None:
    print(
        f"{totals['blocks']} short blocks, one at a time, temperature 0: {totals['stopped']} "
        f"loops stopped by the watchdog; {totals['truncated']} truncated at max_tokens; "
        f"{totals['rejected other']} rejected for other reasons"
    )
    print_table(
        [
            "#",
            "block tok",
            "max_tokens",
            "received",
            "period",
            "client after loop",
            "server generated",
            "server after loop",
            "cancel logged",
            "slots idle ms",
            "loop",
        ],
        rows,
    )
    print(
        f"worst tokens after the loop began: client {worst_client}, server {worst_server} "
        "(target: <= 256)"
    )


async def _wait_idle(http: httpx2.AsyncClient, root: str) -> float:
    started = time.monotonic()
    while True:
        slots = (await http.get(f"{root}/slots")).json()
        if not any(s.get("is_processing") for s in slots):
            return time.monotonic() - started
        await anyio.sleep(0.01)


async def _count(http: httpx2.AsyncClient, root: str, text: str) -> int:
    if not text:
        return 0
    tokens: list[Any] = (await http.post(f"{root}/tokenize", json={"content": text})).json()[
        "tokens"
    ]
    return len(tokens)


async def _prompt_tokens(
    http: httpx2.AsyncClient, base_url: str, messages: list[dict[str, str]]
) -> int:
    body = {"model": "smollm2", "messages": messages, "max_tokens": 1, "temperature": 0}
    reply = (await http.post(f"{base_url}/chat/completions", json=body)).json()
    return int(reply["usage"]["prompt_tokens"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.runaway_llamacpp")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--log", required=True, help="the llama.cpp server's log file")
    parser.add_argument("--blocks", type=int, default=60)
    parser.add_argument("--max-block-tokens", type=int, default=60)
    args = parser.parse_args(argv)
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
