"""What a run reports as it goes: one event per call, per settled block, and at its start and end.

The orchestrator emits events to *sinks*, plain callables ``sink(event) -> None`` given to
:class:`~owlai_refine.pipeline.refiner.Refiner` (``sinks=``). The default sink, :func:`log_event`,
writes the JSON log's lines through ``structlog.get_logger("owlai_refine")`` and configures nothing
(the application, e.g. the CLI, configures structlog). A pipeline that wants the usage ledger
in memory adds its own sink::

    calls: list[CallFinished] = []
    def keep_calls(event: RefineEvent) -> None:
        if isinstance(event, CallFinished):
            calls.append(event)
    async with Refiner(config, sinks=[log_event, keep_calls]) as refiner: ...

Sinks run in the event loop, in the task that emits (keep them quick; never block). An
exception from a sink is not caught: it ends the run as a bug would.

    event              when                                               log line
    RunStarted         the plan is made and the endpoints are known       refine.start
    CallStarted        a request goes out (it holds a slot until it ends)  (none)
    CallFinished       one request ended (reply or error): the ledger     refine.call
    BlockSettled       a sent block's outcome is known                    refine.block_*
    RunAborted         an error ends the run (AuthError, CassetteMiss)    refine.aborted
    SpliceCheckFailed  the splice changed a line or a block's endings     refine.splice_check_*
    RunFinished        the result, before ``refine`` returns it           refine.done
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields

import structlog

from owlai_refine.results import BlockOutcome, OutcomeStatus, RefineResult, cut_by
from owlai_refine.usage import NO_USAGE, Usage, UsageFields

__all__ = [
    "SERVER_CAP_HINT",
    "BlockSettled",
    "CallFinished",
    "CallStarted",
    "EventSink",
    "RefineEvent",
    "RunAborted",
    "RunFinished",
    "RunStarted",
    "SpliceCheckFailed",
    "log_event",
]

_log = structlog.get_logger("owlai_refine")


@dataclass(frozen=True, slots=True)
class RunStarted:
    """A run's plan: ``blocks`` in the report, ``to_send`` of them to the model, ``skipped``."""

    report_id: str
    blocks: int
    to_send: int
    skipped: int
    model: str
    backend: str
    base_url: str
    """The endpoints' base URLs, credentials removed, comma-separated."""
    concurrency: int
    """Requests in flight allowed over all endpoints (shared with the Refiner's other runs)."""
    stream: bool


@dataclass(frozen=True, slots=True)
class CallStarted:
    """A request goes out for ``block_id`` (``attempt`` 1-based); a :class:`CallFinished`
    follows. For a live display's requests-in-flight count; it writes no log line."""

    report_id: str
    block_id: int
    attempt: int


@dataclass(frozen=True, slots=True)
class CallFinished(UsageFields):
    """One request, answered or failed: the usage ledger's record. ``usage`` holds the server's
    token counts (``None`` if it sent none, or the request failed) and our times in seconds;
    its fields read flat too (``event.prompt_tokens``), as the log line writes them."""

    report_id: str
    block_id: int
    request_id: str
    """Our ``X-Request-Id`` (vLLM uses it as its own request id)."""
    attempt: int
    """1-based, per block."""
    model: str
    backend: str
    base_url: str
    max_tokens: int
    prompt_tokens_est: int
    """Our estimate of the prompt's tokens (a stream closed early gets no server count)."""
    server_request_id: str | None = None
    usage: Usage = NO_USAGE
    """The reply's :class:`~owlai_refine.usage.Usage`; all ``None`` for a failed request."""
    watchdog_reason: str | None = None
    """Why we closed the stream early (e.g. ``"repetition"``), if we did."""
    status_code: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BlockSettled:
    """A sent block's outcome (``refined``, ``unchanged``, ``truncated``, ``rejected`` or
    ``failed``); skipped blocks are in :class:`RunStarted`'s count and the result."""

    report_id: str
    outcome: BlockOutcome


@dataclass(frozen=True, slots=True)
class RunAborted:
    """An error ends the run: ``error`` (its message) of class ``kind`` is raised next;
    ``done`` blocks had settled out of ``to_send``."""

    report_id: str
    error: str
    kind: str
    done: int
    to_send: int


@dataclass(frozen=True, slots=True)
class SpliceCheckFailed:
    """The splice changed lines outside the blocks, or ended a replaced block's lines otherwise
    than the source (a splicer bug, see ``verify.splice_faults``): the refinements are dropped
    and the source returned. ``lines`` are the first 20 such line numbers (0-based; a block's
    first line for its endings)."""

    report_id: str
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunFinished:
    """The run's result, just before ``refine`` returns it."""

    report_id: str
    result: RefineResult


RefineEvent = (
    RunStarted
    | CallStarted
    | CallFinished
    | BlockSettled
    | RunAborted
    | SpliceCheckFailed
    | RunFinished
)
EventSink = Callable[[RefineEvent], None]
"""A callable that receives every event of every run (see the module docstring)."""


def _round(value: float | None) -> float | None:
    return round(value, 4) if value is not None else None


def log_event(event: RefineEvent) -> None:
    """The default sink: one JSON-log line per event, as the README's log table lists them.

    ``refine.call`` keeps the field name ``stopped_early`` for the watchdog's reason (the log is
    a stable interface that ledgers and ``refine stats`` read). Refined, unchanged and skipped
    blocks write no line of their own; truncated and rejected ones a WARNING, failed an ERROR.
    """
    if isinstance(event, CallStarted):  # no line: the call's line comes when it ends
        return
    log = _log.bind(report_id=event.report_id)
    if isinstance(event, CallFinished):
        fields = {f.name: getattr(event, f.name) for f in dataclass_fields(event)}
        del fields["report_id"]
        fields |= fields.pop("usage").model_dump()
        fields["stopped_early"] = fields.pop("watchdog_reason")
        fields["latency_s"] = _round(event.latency_s)
        fields["ttft_s"] = _round(event.ttft_s)
        fields["cut_by"] = cut_by(event.finish_reason, event.completion_tokens, event.max_tokens)
        log.info("refine.call", **fields)
    elif isinstance(event, BlockSettled):
        _log_outcome(log, event.outcome)
    elif isinstance(event, RunStarted):
        fields = asdict(event)
        fields.pop("report_id")
        log.info("refine.start", **fields)
    elif isinstance(event, RunAborted):
        log.error(
            "refine.aborted",
            error=event.error,
            kind=event.kind,
            done=event.done,
            to_send=event.to_send,
        )
    elif isinstance(event, SpliceCheckFailed):
        log.error("refine.splice_check_failed", lines=list(event.lines))
    else:
        _log_done(log, event.result)


SERVER_CAP_HINT = (
    "the server stopped below our max_tokens: its own output cap (vLLM: the max_new_tokens / "
    "max_tokens of --override-generation-config) is too small for this block"
)
"""The ``hint`` of a ``refine.block_truncated`` line whose reply the server cut."""


def _log_outcome(log: structlog.typing.FilteringBoundLogger, o: BlockOutcome) -> None:
    where = {"block_id": o.block_id, "request_id": o.request_id, "line_span": list(o.line_span)}
    if o.status is OutcomeStatus.TRUNCATED:
        who = cut_by(o.finish_reason, o.completion_tokens, o.max_tokens)
        log.warning(
            "refine.block_truncated",
            **where,
            max_tokens=o.max_tokens,
            completion_tokens=o.completion_tokens,
            finish_reason=o.finish_reason,
            cut_by=who,
            hint=SERVER_CAP_HINT if who == "server" else None,
        )
    elif o.status is OutcomeStatus.REJECTED:
        log.warning(
            "refine.block_rejected",
            **where,
            reasons=list(o.reasons),
            reason_groups=sorted(o.groups),
        )
    elif o.status is OutcomeStatus.FAILED:
        log.error("refine.block_failed", **where, attempts=o.attempts, error=o.reason)


def _log_done(log: structlog.typing.FilteringBoundLogger, result: RefineResult) -> None:
    totals = result.tokens
    log.info(
        "refine.done",
        **result.counts,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        cached_tokens="unknown" if totals.cached_tokens is None else totals.cached_tokens,
        requests=totals.requests,
        elapsed_s=round(result.elapsed_s, 3),
        stopped_early=result.stop_reason,
        failed_blocks=[
            {"block_id": o.block_id, "line_span": list(o.line_span), "error": o.reason}
            for o in result.failed
        ],
    )
