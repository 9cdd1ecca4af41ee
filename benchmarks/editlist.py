"""Edit-list replies against the normal rewrite: completion tokens and accepted edits.

    python -m benchmarks.editlist [--slots 2] [--base-url URL --model NAME] [REPORT ...]

Issue 23 lever 4: with structured output (``response_format`` ``json_schema``) the model
returns only the changes, ``{"edits": [{"find": exact text, "replace": new text}, ...]}``,
applied to the block by exact match, the result then judged by the guard as a rewritten block
is. It stays an option only if it beats the rewrite on tokens without losing accepted edits.

Per report (default: three of ``fixtures/reports``), in one run against one server (default:
the embedded llama.cpp server, ``owlai_refine.serve.local``, SmolLM2-135M):

- **rewrite**: the refiner as it is (``Refiner.refine``), its outcomes and completion tokens;
- **edit list**: every block the refiner sends, with the same system instructions, report
  context and block message, but the reply format asked for (and enforced by the schema) is the
  edit list. An edit whose ``find`` is not in the block exactly once is not applied (counted);
  a reply that is not the schema's JSON is ``rejected``; ``finish_reason == "length"`` is
  ``truncated``; no applicable edit is ``unchanged``; else the edited block goes through
  :func:`owlai_refine.guard.check_reply` (``refined`` / ``unchanged`` / ``rejected``).

The table shows completion tokens and the outcome counts of each mode; ``refined`` is the
accepted edits. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import openai

from benchmarks._common import REPO, print_table, quiet_json_logging, read_report
from owlai_refine import RefineConfig, parse
from owlai_refine.blocks import Block
from owlai_refine.config import Backend
from owlai_refine.guard import check_reply
from owlai_refine.pipeline.plan import plan
from owlai_refine.pipeline.prompt import (
    SYSTEM_INSTRUCTIONS,
    block_message,
    max_tokens_for,
    report_context,
)
from owlai_refine.pipeline.refiner import Refiner
from owlai_refine.serve.local import LOCAL_MODEL_NAME, local_server

REPORTS = ("inference-market.md", "gpu-market.md", "leadership-council-ko.md")

EDIT_FORMAT = """\

Reply format: do not rewrite the block. Reply with JSON only: {"edits": [{"find": "...", \
"replace": "..."}]}. Each "find" is a short exact span copied character for character from the \
block (a few words, enough to be found once); "replace" is its corrected text. List only the \
spans you change. A block that is already fine gets {"edits": []}."""

EXAMPLE_REQUEST = (
    "Section: Market overview\n<block>\nThe GPU market have grown very fast in 2024 [1].\n</block>"
)
EXAMPLE_REPLY = '{"edits": [{"find": "market have grown", "replace": "market grew"}]}'

SCHEMA: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {
        "name": "edits",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {
                "edits": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"find": {"type": "string"}, "replace": {"type": "string"}},
                        "required": ["find", "replace"],
                        "additionalProperties": False,
                    },
                }
            },
            "required": ["edits"],
            "additionalProperties": False,
        },
    },
}


def edit_messages(block: Block, context: str) -> list[dict[str, str]]:
    """The rewrite's messages with the reply format changed to the edit list."""
    system = f"{SYSTEM_INSTRUCTIONS}{EDIT_FORMAT}\n\n{context}".rstrip()
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": EXAMPLE_REQUEST},
        {"role": "assistant", "content": EXAMPLE_REPLY},
        {"role": "user", "content": block_message(block)},
    ]


def apply_edits(text: str, reply: str) -> tuple[str | None, int, int]:
    """``(edited text or None if the reply is not an edit list, edits applied, edits not
    applied)``: each ``find`` must occur exactly once in the text as it stands."""
    try:
        edits = json.loads(reply)["edits"]
        pairs = [(str(e["find"]), str(e["replace"])) for e in edits]
    except (ValueError, KeyError, TypeError):
        return None, 0, 0
    applied = missed = 0
    for find, replace in pairs:
        if find and text.count(find) == 1:
            text = text.replace(find, replace)
            applied += 1
        else:
            missed += 1
    return text, applied, missed


async def edit_list_mode(
    client: openai.AsyncOpenAI, model: str, path: Path, config: RefineConfig, slots: int
) -> dict[str, Any]:
    """Every block the refiner would send, as an edit-list request; counts and tokens."""
    doc = parse(read_report(path))
    to_send, _ = plan(doc, config)
    context = report_context(doc, config.report_context_chars)
    counts: Counter[str] = Counter()
    limiter = anyio.CapacityLimiter(slots)

    async def one(block: Block) -> None:
        async with limiter:
            resp = await client.chat.completions.create(  # type: ignore[call-overload]  # plain dicts
                model=model,
                messages=edit_messages(block, context),
                max_tokens=max_tokens_for(block, config.output),
                temperature=config.temperature,
                response_format=SCHEMA,
            )
        choice = resp.choices[0]
        counts["completion_tokens"] += resp.usage.completion_tokens if resp.usage else 0
        counts["prompt_tokens"] += resp.usage.prompt_tokens if resp.usage else 0
        if choice.finish_reason == "length":
            counts["truncated"] += 1
            return
        text, applied, missed = apply_edits(block.text, choice.message.content or "")
        counts["edits_applied"] += applied
        counts["edits_not_found"] += missed
        if text is None:
            counts["rejected"] += 1
            counts["not_json"] += 1
            return
        verdict = check_reply(block, text, config.guard)
        if verdict.text is None:
            counts["rejected"] += 1
        elif verdict.unchanged:
            counts["unchanged"] += 1
        else:
            counts["refined"] += 1

    async with anyio.create_task_group() as tg:
        for block in to_send:
            tg.start_soon(one, block)
    counts["sent"] = len(to_send)
    return dict(counts)


async def rewrite_mode(path: Path, config: RefineConfig) -> dict[str, Any]:
    """The refiner as it is: outcome counts and tokens."""
    async with Refiner(config) as refiner:
        result = await refiner.refine(read_report(path))
    counts = {k: v for k, v in result.counts.items() if v}
    counts["sent"] = sum(1 for o in result.outcomes if o.status.value != "skipped")
    counts["completion_tokens"] = result.tokens.completion_tokens
    counts["prompt_tokens"] = result.tokens.prompt_tokens
    return counts


async def run(args: argparse.Namespace) -> int:
    quiet_json_logging()
    paths = [Path(p) for p in args.reports] or [REPO / "fixtures/reports" / r for r in REPORTS]
    rows: list[list[object]] = []

    async def against(base_url: str, model: str) -> None:
        config = RefineConfig(
            base_url=base_url, model=model, backend=Backend.SELF_HOSTED, concurrency=args.slots
        )
        client = openai.AsyncOpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
        try:
            for path in paths:
                for _ in range(args.repeats):
                    for mode in ("rewrite", "edit list"):
                        got = (
                            await rewrite_mode(path, config)
                            if mode == "rewrite"
                            else await edit_list_mode(client, model, path, config, args.slots)
                        )
                        rows.append(
                            [
                                path.stem,
                                mode,
                                got["sent"],
                                got["completion_tokens"],
                                got.get("refined", 0),
                                got.get("unchanged", 0),
                                got.get("rejected", 0),
                                got.get("truncated", 0),
                                got.get("edits_applied", "-"),
                                got.get("edits_not_found", "-"),
                                got.get("not_json", "-"),
                            ]
                        )
                        print(f"  {path.stem} {mode}: {got}", file=sys.stderr, flush=True)
        finally:
            await client.close()

    if args.base_url:
        await against(args.base_url, args.model)
    else:
        async with local_server(slots=args.slots) as base_url:
            await against(base_url, LOCAL_MODEL_NAME)
    print_table(
        ["report", "mode", "sent", "completion tok", "refined", "unchanged", "rejected",
         "truncated", "edits applied", "edits not found", "not JSON"],
        rows,
    )  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.editlist")
    parser.add_argument("reports", nargs="*", help="report files (default: three fixtures)")
    parser.add_argument("--slots", type=int, default=2, help="requests in flight")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each mode per report")
    parser.add_argument("--base-url", help="an OpenAI-compatible server (default: embedded)")
    parser.add_argument("--model", default=LOCAL_MODEL_NAME, help="with --base-url")
    return anyio.run(run, parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
