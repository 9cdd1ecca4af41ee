"""``refine bench --copy-edit REPORT``: decode speed on the refiner's own workload, and
``refine bench --compare-tpot A.json B.json``: two such runs side by side.

A copy edit's output is mostly its input, the case draft-free speculative decoding exists for
(vLLM's ``--speculative-config '{"method": "ngram", ...}'``, or ``suffix``): its gain shows only
on such a workload, not on the sweep's made-up prompts. So this mode refines ``REPORT``
against the server, ``repeats`` times, through one :class:`~owlai_refine.pipeline.refiner.Refiner`
(streamed, so each block's time to first token is measured), and reports per run:

- ``tpot_s``: time per output token after the first, over the run's blocks: ``sum(latency -
  ttft) / sum(completion_tokens - 1)`` (seconds per token, blocks with >= 2 tokens);
  ``tpot_p50_s`` the median of the blocks' own;
- ``completion_tokens``, ``slot_s`` (the sum of request latencies: what the run held of the
  server's slots), ``wall_s`` and the outcome counts (so a setting that decodes faster by
  refining less is seen);
- from ``/metrics`` (``vllm:spec_decode_num_draft_tokens_total`` and ``..._accepted_...``,
  present only when speculative decoding is on), the tokens drafted and accepted meanwhile.

One server is measured at a time (on a small machine two vLLM servers would share its cores):
save each run's ``--json`` and compare the two files with ``--compare-tpot``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import httpx2
from pydantic import BaseModel, ConfigDict, SecretStr

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.pipeline.refiner import Refiner
from owlai_refine.serve.server import ServerError, ServerUrls, fetch_metrics, server_urls

__all__ = [
    "ACCEPTED",
    "DRAFTED",
    "CopyEditResult",
    "CopyEditRun",
    "compare_tpot",
    "format_copy_edit",
    "run_copy_edit",
    "tpot_of",
]

DRAFTED = "vllm:spec_decode_num_draft_tokens_total"
ACCEPTED = "vllm:spec_decode_num_accepted_tokens_total"


class CopyEditRun(BaseModel):
    """One refine of the report. Times in seconds; ``tpot_s`` in seconds per token (``None``
    when no block streamed two tokens or more)."""

    model_config = ConfigDict(frozen=True)

    wall_s: float
    slot_s: float
    blocks_sent: int
    completion_tokens: int
    prompt_tokens: int
    tpot_s: float | None
    tpot_p50_s: float | None
    ttft_p50_s: float | None
    outcomes: dict[str, int]
    draft_tokens: float | None = None
    accepted_tokens: float | None = None


class CopyEditResult(BaseModel):
    """Everything ``refine bench --copy-edit ... --json`` prints: the server, the report and
    one :class:`CopyEditRun` per repeat. ``speculative``: the method from ``--server-log``
    (``"ngram"``), ``"off"`` when the log says so, ``"on"`` when only ``/metrics`` showed
    drafts, ``None`` when unknown."""

    model_config = ConfigDict(frozen=True)

    base_url: str
    model: str
    report: str
    speculative: str | None
    temperature: float | None = None
    runs: list[CopyEditRun]

    def median(self, name: str) -> float | None:
        """The median over the runs of field ``name`` (``None`` values left out)."""
        values = [v for r in self.runs if (v := getattr(r, name)) is not None]
        return statistics.median(values) if values else None


def tpot_of(outcomes: Any) -> tuple[float | None, float | None]:
    """``(token-weighted TPOT, median block TPOT)`` in seconds per token over ``outcomes``
    (``BlockOutcome`` values): blocks with a TTFT and two completion tokens or more."""
    decode, tokens, each = 0.0, 0, []
    for o in outcomes:
        if o.ttft_s is None or o.latency_s is None or (o.completion_tokens or 0) < 2:
            continue
        decode += o.latency_s - o.ttft_s
        tokens += o.completion_tokens - 1
        each.append((o.latency_s - o.ttft_s) / (o.completion_tokens - 1))
    return (decode / tokens if tokens else None), (statistics.median(each) if each else None)


async def run_copy_edit(
    *,
    base_url: str,
    model: str,
    source: str,
    report: str,
    repeats: int = 3,
    concurrency: int = 4,
    api_key: str | None = None,
    speculative: str | None = None,
    temperature: float | None = None,
) -> CopyEditResult:
    """Refine ``source`` (the text of the report named ``report``) against ``base_url``
    ``repeats`` times (``concurrency`` requests in flight) and measure each run (see the module
    docstring). ``speculative``: what the server log said, if given; ``temperature``: the
    refiner's sampling temperature (``None``: its default). A failed block is counted in
    ``outcomes``; a run where every block failed raises ``ServerError``."""
    ep = server_urls(base_url)
    config = _config(ep.v1, model, concurrency, api_key, temperature)
    runs: list[CopyEditRun] = []
    async with httpx2.AsyncClient(timeout=30.0) as http, Refiner(config) as refiner:
        for _ in range(repeats):
            runs.append(await _one_run(refiner, http, ep, source))
    if speculative is None and any(r.draft_tokens for r in runs):
        speculative = "on"
    return CopyEditResult(
        base_url=str(redact_url(ep.v1)),
        model=model,
        report=report,
        speculative=speculative,
        temperature=config.temperature,
        runs=runs,
    )


def _config(
    v1: str, model: str, concurrency: int, api_key: str | None, temperature: float | None
) -> RefineConfig:
    """The refiner's settings: streamed (for each block's TTFT), ``concurrency`` in flight,
    ``temperature`` when given (``None``: the default)."""
    config = RefineConfig(
        base_url=v1,
        model=model,
        concurrency=concurrency,
        stream=True,
        api_key=SecretStr(api_key) if api_key else None,
    )
    if temperature is not None:
        config = RefineConfig.model_validate({**config.model_dump(), "temperature": temperature})
    return config


async def _one_run(
    refiner: Refiner, http: httpx2.AsyncClient, ep: ServerUrls, source: str
) -> CopyEditRun:
    """Refine ``source`` once and measure it, ``/metrics`` read before and after; raises
    ``ServerError`` when every block sent failed."""
    before = await fetch_metrics(http, ep)
    started = time.perf_counter()
    result = await refiner.refine(source)
    wall = time.perf_counter() - started
    after = await fetch_metrics(http, ep)
    sent = [o for o in result.outcomes if o.status.value != "skipped"]
    if sent and all(o.status.value == "failed" for o in sent):
        raise ServerError(f"every block failed: {sent[0].reason}", url=ep.v1)
    spec = _spec_delta(before, after)
    tpot, tpot_p50 = tpot_of(sent)
    ttfts = [o.ttft_s for o in sent if o.ttft_s is not None]
    return CopyEditRun(
        wall_s=wall,
        slot_s=sum(o.latency_s or 0.0 for o in sent),
        blocks_sent=len(sent),
        completion_tokens=result.tokens.completion_tokens,
        prompt_tokens=result.tokens.prompt_tokens,
        tpot_s=tpot,
        tpot_p50_s=tpot_p50,
        ttft_p50_s=statistics.median(ttfts) if ttfts else None,
        outcomes={k: v for k, v in result.counts.items() if v},
        draft_tokens=spec[0],
        accepted_tokens=spec[1],
    )


def _spec_delta(before: Any, after: Any) -> tuple[float | None, float | None]:
    """Drafted and accepted tokens between two ``/metrics`` scrapes (``None``: not served)."""
    if before is None or after is None:
        return None, None
    out: list[float | None] = []
    for name in (DRAFTED, ACCEPTED):
        a, b = before.total(name), after.total(name)
        out.append(None if a is None or b is None else b - a)
    return out[0], out[1]


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def compare_tpot(a: CopyEditResult, b: CopyEditResult) -> str:
    """A Markdown table of two results (medians over their runs) and the ratios ``B / A``:
    TPOT, TTFT, completion tokens, slot-seconds, wall time, acceptance, outcomes."""
    rows: list[tuple[str, str, str, str]] = []

    def row(label: str, name: str, spec: str, scale: float = 1.0) -> None:
        x, y = a.median(name), b.median(name)
        ratio = f"{y / x:.3f}" if x and y is not None else "-"
        rows.append(
            (
                label,
                _fmt(None if x is None else x * scale, spec),
                _fmt(None if y is None else y * scale, spec),
                ratio,
            )
        )

    rows.append(("server", a.base_url, b.base_url, ""))
    rows.append(("speculative", str(a.speculative), str(b.speculative), ""))
    rows.append(("temperature", str(a.temperature), str(b.temperature), ""))
    rows.append(("runs", str(len(a.runs)), str(len(b.runs)), ""))
    row("TPOT, token-weighted (ms)", "tpot_s", ".2f", 1000)
    row("TPOT, median block (ms)", "tpot_p50_s", ".2f", 1000)
    row("TTFT, median block (ms)", "ttft_p50_s", ".1f", 1000)
    row("completion tokens", "completion_tokens", ".0f")
    row("slot-seconds", "slot_s", ".2f")
    row("wall (s)", "wall_s", ".2f")

    def accepted(r: CopyEditResult) -> str:
        drafted = sum(x.draft_tokens or 0 for x in r.runs)
        took = sum(x.accepted_tokens or 0 for x in r.runs)
        return f"{took / drafted:.1%} of {drafted:,.0f}" if drafted else "-"

    def outcomes(r: CopyEditResult) -> str:
        last = r.runs[-1].outcomes if r.runs else {}
        return ", ".join(f"{k} {v}" for k, v in sorted(last.items())) or "-"

    rows.append(("drafted tokens accepted", accepted(a), accepted(b), ""))
    rows.append(("outcomes (last run)", outcomes(a), outcomes(b), ""))
    if a.report != b.report:
        rows.append(("report (differs!)", a.report, b.report, ""))
    lines = ["| | A | B | B / A |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(r)} |" for r in rows]
    return "\n".join(lines)


def format_copy_edit(r: CopyEditResult) -> str:
    """A Markdown table of one result, a row per run (times in ms or s as labelled)."""
    lines = [
        f"copy edit of {r.report} on {r.base_url} ({r.model}); speculative: {r.speculative}; "
        f"temperature {r.temperature}",
        "",
        "| run | wall s | slot-s | sent | completion tok | TPOT ms | TPOT p50 ms | TTFT p50 ms "
        "| drafted / accepted | outcomes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, x in enumerate(r.runs, 1):
        ms = [None if v is None else 1000 * v for v in (x.tpot_s, x.tpot_p50_s, x.ttft_p50_s)]
        spec = (
            "-"
            if x.draft_tokens is None
            else f"{x.draft_tokens:,.0f} / {x.accepted_tokens or 0:,.0f}"
        )
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(x.outcomes.items()))
        lines.append(
            f"| {n} | {x.wall_s:.2f} | {x.slot_s:.2f} | {x.blocks_sent} | "
            f"{x.completion_tokens} | {_fmt(ms[0], '.2f')} | {_fmt(ms[1], '.2f')} | "
            f"{_fmt(ms[2], '.1f')} | {spec} | {outcomes} |"
        )
    return "\n".join(lines)
