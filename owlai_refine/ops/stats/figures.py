"""``refine stats``: input and output length figures from the usage ledger.

Everything here is computed from ``refine.call`` lines (see :mod:`owlai_refine.ops.ledger`),
grouped by ``(model, backend)``. Quantiles are type 7 (see :mod:`owlai_refine.ops.quantiles`).
"K" in the thresholds is 1024 tokens (8K = 8,192; 32K = 32,768; 128K = 131,072), the way context
windows are quoted; a call counts as "above" when its ``prompt_tokens`` is strictly greater.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from owlai_refine.ops.ledger import CallRecord, LedgerRead
from owlai_refine.ops.quantiles import quantiles
from owlai_refine.truncation import cut_by, is_truncated

__all__ = [
    "QUANTILES",
    "THRESHOLDS",
    "GroupStats",
    "LedgerStats",
    "TokenSummary",
    "format_stats",
    "ledger_stats",
]

QUANTILES: dict[str, float] = {"p10": 0.10, "p50": 0.50, "p90": 0.90, "p99": 0.99, "max": 1.0}
THRESHOLDS: dict[str, int] = {"8K": 8 * 1024, "32K": 32 * 1024, "128K": 128 * 1024}


class TokenSummary(BaseModel):
    """Quantiles of one token count over the calls that reported it (unit: tokens).

    ``n`` is how many calls had the field; ``total`` their sum; ``mean`` their average.
    """

    model_config = ConfigDict(frozen=True)

    n: int
    p10: float
    p50: float
    p90: float
    p99: float
    max: float
    mean: float
    total: int


class GroupStats(BaseModel):
    """Figures for one ``(model, backend)`` pair.

    ``calls``: call lines (attempts, failed ones included); ``failed``: lines with ``error``;
    ``share_above``: threshold name (``"8K"`` ...) -> fraction (0..1) of calls with usage whose
    ``prompt_tokens`` exceeds it; ``finish_reasons``: reason -> count (failed attempts have none);
    ``truncated``: calls cut by the output cap, by the refine's own rule
    (:func:`owlai_refine.results.is_truncated`: ``"length"``, or exactly ``max_tokens`` used);
    ``cached_tokens_total``: prompt tokens served from the prefix cache, ``None`` (unknown, not
    zero) when no call reported ``cached_tokens``; ``cached_tokens_reported``: calls that did;
    ``truncated_by_server``: of those, replies that stopped below our ``max_tokens``
    (:func:`owlai_refine.results.cut_by`: the server's own output cap);
    ``truncation_rate``: ``truncated`` over the calls with a ``finish_reason``, ``None`` when no
    call has one; the ``*_prediction_tokens`` totals: predicted outputs (cloud).
    """

    model_config = ConfigDict(frozen=True)

    model: str
    backend: str
    calls: int
    failed: int
    prompt_tokens: TokenSummary | None
    completion_tokens: TokenSummary | None
    cached_tokens_total: int | None
    cached_tokens_reported: int = 0
    share_above: dict[str, float]
    finish_reasons: dict[str, int]
    truncated: int
    truncation_rate: float | None
    truncated_by_server: int = 0
    accepted_prediction_tokens: int | None = None
    """Predicted outputs: prediction tokens the replies used, summed over the calls that
    reported the field; ``None`` when none did (no predicted outputs)."""
    rejected_prediction_tokens: int | None = None
    """Predicted outputs: prediction tokens the replies did not use (billed as output)."""
    prediction_reported: int = 0
    """Calls that reported accepted or rejected prediction tokens."""


class LedgerStats(BaseModel):
    """``refine stats`` output: one ``GroupStats`` per (model, backend), sorted by name, plus
    what was read: call lines, non-JSON lines skipped, other events ignored."""

    model_config = ConfigDict(frozen=True)

    files: int
    call_lines: int
    skipped_lines: int
    other_events: int
    groups: list[GroupStats]


def _summary(values: Sequence[int]) -> TokenSummary | None:
    if not values:
        return None
    qs = dict(zip(QUANTILES, quantiles(values, list(QUANTILES.values())), strict=True))
    return TokenSummary(n=len(values), mean=sum(values) / len(values), total=sum(values), **qs)


def _cached(calls: Sequence[CallRecord]) -> list[int]:
    return [c.cached_tokens for c in calls if c.cached_tokens is not None]


def _cached_line(g: GroupStats) -> str:
    if g.cached_tokens_total is None:
        return (
            "  cached tokens      unknown (no call reported cached_tokens: vLLM reports them "
            "only when started with --enable-prompt-tokens-details)"
        )
    with_usage = g.prompt_tokens.n if g.prompt_tokens else g.calls
    part = (
        ""
        if g.cached_tokens_reported >= with_usage
        else (f" (reported by {g.cached_tokens_reported} of {with_usage} calls)")
    )
    return f"  cached tokens      total {g.cached_tokens_total:,}{part}"


def _group(model: str, backend: str, calls: Sequence[CallRecord]) -> GroupStats:
    prompts = [c.prompt_tokens for c in calls if c.prompt_tokens is not None]
    outputs = [c.completion_tokens for c in calls if c.completion_tokens is not None]
    reasons = Counter(c.finish_reason for c in calls if c.finish_reason is not None)
    finished = sum(reasons.values())
    truncated = sum(
        c.finish_reason is not None
        and is_truncated(c.finish_reason, c.completion_tokens, c.max_tokens)
        for c in calls
    )
    share = {
        name: (sum(p > limit for p in prompts) / len(prompts) if prompts else 0.0)
        for name, limit in THRESHOLDS.items()
    }
    return GroupStats(
        model=model,
        backend=backend,
        calls=len(calls),
        failed=sum(c.error is not None for c in calls),
        prompt_tokens=_summary(prompts),
        completion_tokens=_summary(outputs),
        cached_tokens_total=sum(cached) if (cached := _cached(calls)) else None,
        cached_tokens_reported=len(cached),
        share_above=share,
        finish_reasons=dict(sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))),
        truncated=truncated,
        truncation_rate=(truncated / finished) if finished else None,
        truncated_by_server=sum(
            cut_by(c.finish_reason, c.completion_tokens, c.max_tokens) == "server" for c in calls
        ),
        accepted_prediction_tokens=_total(c.accepted_prediction_tokens for c in calls),
        rejected_prediction_tokens=_total(c.rejected_prediction_tokens for c in calls),
        prediction_reported=sum(
            c.accepted_prediction_tokens is not None or c.rejected_prediction_tokens is not None
            for c in calls
        ),
    )


def _total(values: Iterable[int | None]) -> int | None:
    """The sum of the values given, ``None`` when none is (unknown, not zero)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _prediction_line(g: GroupStats) -> str | None:
    if not g.prediction_reported:
        return None
    accepted, rejected = g.accepted_prediction_tokens or 0, g.rejected_prediction_tokens or 0
    used = accepted / (accepted + rejected) if accepted + rejected else 0.0
    return (
        f"  predicted outputs  accepted {accepted:,}, rejected {rejected:,} tokens "
        f"({used:.1%} used; {g.prediction_reported} call(s) reported them)"
    )


def ledger_stats(read: LedgerRead, files: int) -> LedgerStats:
    """Compute per-(model, backend) figures from a ``LedgerRead`` of ``files`` files."""
    by_key: dict[tuple[str, str], list[CallRecord]] = {}
    for call in read.calls:
        by_key.setdefault((call.model, call.backend), []).append(call)
    return LedgerStats(
        files=files,
        call_lines=len(read.calls),
        skipped_lines=read.skipped_lines,
        other_events=read.other_events,
        groups=[_group(m, b, calls) for (m, b), calls in sorted(by_key.items())],
    )


def _tokens_line(label: str, s: TokenSummary | None) -> str:
    if s is None:
        return f"  {label:<18} (no calls reported it)"
    cells = "  ".join(f"{k} {getattr(s, k):,.0f}" for k in QUANTILES)
    return f"  {label:<18} {cells}  (n={s.n}, mean {s.mean:,.1f}, total {s.total:,})"


def format_stats(stats: LedgerStats) -> str:
    """Render ``stats`` as the human table ``refine stats`` prints (token figures rounded)."""
    lines = [
        f"ledger: {stats.files} file(s), {stats.call_lines} call line(s), "
        f"{stats.skipped_lines} non-JSON line(s) skipped, "
        f"{stats.other_events} other event(s) ignored"
    ]
    if not stats.groups:
        lines.append("no refine.call lines found")
    for g in stats.groups:
        ok = g.prompt_tokens.n if g.prompt_tokens else 0
        lines += [
            "",
            f"model {g.model} | backend {g.backend} | {g.calls} call(s), {g.failed} failed, "
            f"{ok} with usage",
            _tokens_line("prompt tokens", g.prompt_tokens),
            "  above "
            + " / ".join(g.share_above)
            + "  "
            + " / ".join(f"{v:.1%}" for v in g.share_above.values()),
            _tokens_line("completion tokens", g.completion_tokens),
            _cached_line(g),
            "  finish_reason      "
            + (", ".join(f"{k} {v}" for k, v in g.finish_reasons.items()) or "(none)"),
        ]
        if g.truncation_rate is None:
            lines.append("  truncation rate    n/a (no finish_reason)")
        else:
            total = sum(g.finish_reasons.values())
            by_server = (
                f"; {g.truncated_by_server} cut by the server's own output cap, below our "
                "max_tokens: raise its override"
                if g.truncated_by_server
                else ""
            )
            rate = f"{g.truncation_rate:.1%} ({g.truncated} of {total}{by_server})"
            lines.append(f"  truncation rate    {rate}")
        if (predicted := _prediction_line(g)) is not None:
            lines.append(predicted)
    return "\n".join(lines)
