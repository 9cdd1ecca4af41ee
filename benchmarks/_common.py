"""What the benchmark scripts share: the reports, the latency model, streamed replies, tables.

Nothing here is timed; the scripts time things and print ratios measured within one run.
"""

from __future__ import annotations

import json
import os
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from owlai_refine.blocks import Document
from owlai_refine.config import RefineConfig
from owlai_refine.pipeline.plan import _Tuning
from owlai_refine.pipeline.prompt import estimate_tokens
from owlai_refine.pipeline.refiner import Refiner
from owlai_refine.results import RefineResult
from owlai_refine.shell.logs import configure_json_logging

__all__ = [
    "REPO",
    "LatencyModel",
    "block_text",
    "makespan_bound",
    "median",
    "print_table",
    "quiet_json_logging",
    "refine_doc",
    "report_paths",
    "reports_dir",
    "sse_event",
    "streamed_reply",
    "token_pieces",
]

REPO = Path(__file__).resolve().parents[1]

_BLOCK = re.compile(r"<block>\n?(.*?)\n?</block>", re.DOTALL)
# One piece per "token": a run of ASCII non-space characters, or one other character, each with
# the whitespace before it. Close to one model token per English word or CJK character.
_PIECE = re.compile(r"\s*(?:[^\s\u0080-\U0010ffff]+|\S)|\s+$")


def makespan_bound(latencies: list[float], slots: int) -> float:
    """The least a report can take on ``slots`` slots, in seconds: ``max(sum / slots,
    longest)`` of its request ``latencies`` (seconds); 0.0 for none."""
    return max(sum(latencies) / slots, max(latencies, default=0.0))


def reports_dir() -> Path:
    """The real reports: ``$OWLAI_REPORTS``, else ``../shared/reports`` beside the repository."""
    env = os.environ.get("OWLAI_REPORTS")
    return Path(env) if env else REPO.parent / "shared" / "reports"


def report_paths(directory: Path | None = None) -> list[Path]:
    """Every report in ``directory`` (default :func:`reports_dir`), sorted; ``SOURCES.md`` (the
    list of where the reports come from, not a report) is left out."""
    found = sorted((directory or reports_dir()).glob("*.md"))
    paths = [p for p in found if p.name != "SOURCES.md"]
    if not paths:
        raise SystemExit(f"no reports in {directory or reports_dir()}: set OWLAI_REPORTS")
    return paths


def read_report(path: Path) -> str:
    """A report's text exactly as stored (no newline translation)."""
    return path.read_bytes().decode("utf-8")


def quiet_json_logging() -> None:
    """Configure structlog as the CLI does (JSON lines), into ``os.devnull``: the logging cost
    stays in every measurement, the output does not."""
    configure_json_logging(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - process-long


def token_pieces(text: str) -> list[str]:
    """``text`` cut into pieces of about one token each; ``"".join(pieces) == text``."""
    return _PIECE.findall(text)


def block_text(body: dict[str, Any]) -> str:
    """The block text between ``<block>`` tags in the request's messages (``""`` if none)."""
    for message in reversed(body.get("messages", [])):
        m = _BLOCK.search(message.get("content", ""))
        if m:
            return m.group(1)
    return ""


def prompt_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """The prompt length the benchmark servers charge for: the token estimate of every
    message's content (the same estimate the refiner uses to size ``max_tokens``)."""
    return estimate_tokens("".join(str(m.get("content", "")) for m in messages))


@dataclass(frozen=True)
class LatencyModel:
    """Seconds a model server takes for one request, from its prompt and output lengths.

    ``ttft = scale * prefill_s_per_token * prompt_tokens`` and each output token then takes
    ``scale * decode_s_per_token``: ``latency = ttft + scale * decode_s_per_token * output``.
    The defaults are a self-hosted GPU server's proportions (prefill 5,000 tokens/s, decode
    50 tokens/s per sequence, so one output token costs as much as 250 prompt tokens); ``scale``
    compresses time so that a benchmark run takes seconds. Requests do not slow each other down
    (the server has as many sequences as the client has slots).
    """

    prefill_s_per_token: float = 0.0002
    decode_s_per_token: float = 0.02
    scale: float = 1.0

    def ttft(self, prompt: int) -> float:
        return self.scale * self.prefill_s_per_token * prompt

    def latency(self, prompt: int, output: int) -> float:
        return self.ttft(prompt) + self.scale * self.decode_s_per_token * output

    def to_json(self) -> dict[str, float]:
        return {
            "prefill_s_per_token": self.prefill_s_per_token,
            "decode_s_per_token": self.decode_s_per_token,
            "scale": self.scale,
        }


def sse_event(obj: dict[str, Any] | str) -> bytes:
    """One server-sent event: ``data: <json>`` (or ``data: [DONE]``) and a blank line."""
    data = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def chunk(rid: str, model: str, content: str | None, finish: str | None) -> dict[str, Any]:
    """A ``chat.completion.chunk`` carrying ``content`` and/or a ``finish_reason``."""
    delta: dict[str, Any] = {} if content is None else {"content": content}
    return {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(rid: str, model: str, prompt: int, completion: int) -> dict[str, Any]:
    """The final ``include_usage`` chunk: no choices, token counts."""
    return {
        "id": rid,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }


def model_listing(model: str) -> httpx2.Response:
    """The ``GET /v1/models`` answer of an in-process fake serving ``model``: what a
    ``Refiner``'s pre-flight reads when it opens."""
    data = [{"id": model, "object": "model", "owned_by": "benchmark"}]
    return httpx2.Response(200, json={"object": "list", "data": data})


def streamed_reply(text: str, *, rid: str, model: str, prompt: int) -> bytes:
    """A whole streamed reply as a server sends it: a role chunk, one chunk per token piece of
    ``text``, the ``finish_reason`` chunk, the usage chunk and ``[DONE]``."""
    pieces = token_pieces(text)
    role = chunk(rid, model, None, None)
    role["choices"][0]["delta"] = {"role": "assistant", "content": ""}
    events = [sse_event(role)]
    events += [sse_event(chunk(rid, model, p, None)) for p in pieces]
    events.append(sse_event(chunk(rid, model, None, "stop")))
    events.append(sse_event(usage_chunk(rid, model, prompt, len(pieces))))
    events.append(sse_event("[DONE]"))
    return b"".join(events)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Print a Markdown table (pasteable into the README)."""
    text_rows = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in text_rows)]) for i, h in enumerate(headers)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in text_rows:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
    return str(value)


async def refine_doc(
    doc: Document,
    config: RefineConfig,
    *,
    base_url: str,
    model: str,
    transport: httpx2.AsyncBaseTransport | None = None,
    tuning: _Tuning | None = None,
) -> RefineResult:
    """Refine a parsed ``doc`` against ``base_url`` serving ``model`` through a one-shot
    :class:`~owlai_refine.pipeline.refiner.Refiner` (what ``refine()`` does, minus the parse),
    with the dispatch order and prompt layout of ``tuning``
    (``owlai_refine.pipeline.plan._Tuning``)."""
    config = config.model_copy(update={"base_url": base_url, "model": model})
    async with Refiner(config, transport=transport, _tuning=tuning) as refiner:
        return await refiner.refine_document(doc)
