"""Orchestrate a run: parse, send blocks longest first behind the endpoint's limiter, guard each
reply, splice in document order, log every call.

The async core is :func:`refine`; :func:`refine_sync` is a thin ``anyio.run`` wrapper.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
import httpx2
import structlog

from owlai_refine.blocks import Block, Document
from owlai_refine.call import Reply, call_model
from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.endpoint import open_pool
from owlai_refine.errors import (
    BlockCallError,
    CassetteMissError,
    FatalCallError,
    LimiterError,
    RefineError,
    RetryableCallError,
)
from owlai_refine.guard import check_reply, reason_group, watchdog_for
from owlai_refine.limiter import SlotLimiter
from owlai_refine.parser import parse
from owlai_refine.prompt import (
    build_messages,
    estimate_tokens,
    max_tokens_for,
    report_context,
    skip_reason,
)
from owlai_refine.results import (
    BlockOutcome,
    OutcomeStatus,
    RefineResult,
    TokenTotals,
    is_truncated,
)
from owlai_refine.retry import RetryClock, RunState, retrying
from owlai_refine.routing import Endpoint, EndpointPool
from owlai_refine.splicer import splice
from owlai_refine.verify import changed_outside_blocks

__all__ = ["describe", "refine", "refine_document", "refine_sync"]

_log = structlog.get_logger("owlai_refine")


def describe(block: Block) -> str:
    """``block 12 (line 3)`` or ``block 12 (lines 3-5)``: 1-based source lines, as editors
    number them (the JSON log's ``line_span`` is 0-based and half-open)."""
    first, last = block.start + 1, block.end
    return (
        f"block {block.id} (line {first})"
        if first == last
        else f"block {block.id} (lines {first}-{last})"
    )


class _RunStopped(Exception):
    """Raised inside a block task when the run has stopped sending (server gone)."""


@dataclass
class _Run:
    doc: Document
    config: RefineConfig
    pool: EndpointPool
    state: RunState
    context: str
    log: Any

    def call_fields(
        self, block: Block, endpoint: Endpoint, request_id: str, attempt: int, max_tokens: int
    ) -> dict[str, Any]:
        return {
            "block_id": block.id,
            "request_id": request_id,
            "attempt": attempt,
            "model": endpoint.model,
            "backend": self.config.backend.value,
            "base_url": redact_url(endpoint.base_url),
            "max_tokens": max_tokens,
        }

    def prompt_estimate(self, messages: list[dict[str, str]]) -> int:
        """Our estimate of the prompt's tokens (logged beside the server's count, which a
        stream closed early never receives)."""
        return estimate_tokens("".join(m["content"] for m in messages))

    def log_call(
        self, fields: dict[str, Any], reply: Reply | None, error: BlockCallError | None
    ) -> None:
        if reply is not None:
            for name in ("prompt_tokens", "completion_tokens", "cached_tokens"):
                self.state.totals[name] += getattr(reply, name) or 0
        self.state.totals["requests"] += 1
        self.log.info(
            "refine.call",
            **fields,
            server_request_id=reply.server_request_id if reply else None,
            prompt_tokens=reply.prompt_tokens if reply else None,
            completion_tokens=reply.completion_tokens if reply else None,
            cached_tokens=reply.cached_tokens if reply else None,
            finish_reason=reply.finish_reason if reply else None,
            latency_s=round(reply.latency_s, 4) if reply else None,
            ttft_s=round(reply.ttft_s, 4) if reply and reply.ttft_s is not None else None,
            stopped_early=reply.stopped_early if reply else None,
            status_code=error.status if error else None,
            error=str(error) if error else None,
        )

    async def send(self, block: Block) -> tuple[Reply, str, int, int]:
        """Call the model for ``block``, retrying; ``(reply, request_id, attempts, max_tokens)``."""
        max_tokens = max_tokens_for(block, self.config.output)
        messages = build_messages(
            block, self.context, block_first=self.config.prompt_layout == "block-first"
        )
        attempt = 0
        clock = RetryClock()
        prompt_est = self.prompt_estimate(messages)
        async for try_ in retrying(self.config.retry, self.state, clock):
            with try_:
                if self.state.stop_reason:
                    raise _RunStopped(self.state.stop_reason)
                attempt += 1
                request_id = uuid.uuid4().hex
                async with self.pool.slot() as endpoint:
                    if self.state.stop_reason:
                        raise _RunStopped(self.state.stop_reason)
                    fields = self.call_fields(block, endpoint, request_id, attempt, max_tokens)
                    fields["prompt_tokens_est"] = prompt_est
                    clock.mark()
                    try:
                        reply = await call_model(
                            endpoint.client,
                            model=endpoint.model,
                            messages=messages,
                            max_tokens=max_tokens,
                            temperature=self.config.temperature,
                            request_id=request_id,
                            stream=self.config.stream,
                            extra_body=self.config.extra_body,
                            # a fresh detector per attempt: a retry starts a new reply
                            watchdog=watchdog_for(block, self.config.guard)
                            if self.config.stream
                            else None,
                        )
                    except BlockCallError as exc:
                        exc.attempts, exc.request_id = attempt, request_id
                        self.state.note(exc)
                        self.log_call(fields, None, exc)
                        if exc.connection:
                            self.pool.set_aside(endpoint, exc)
                        raise
                self.state.note(None)
                self.log_call(fields, reply, None)
                return reply, request_id, attempt, max_tokens
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover

    async def refine_block(self, block: Block) -> BlockOutcome:
        """Send, guard and classify one block. Never raises for a per-block failure; raises
        ``CassetteMissError`` (naming the block) and ``AuthError``, which stop the run."""
        try:
            reply, request_id, attempts, max_tokens = await self.send(block)
        except LimiterError as exc:  # fail closed: nothing more is sent, every block kept
            self.state.stop(f"limiter failed: {exc}", by="limiter")
            return self.failed(block, f"not sent: {exc}", 0, None)
        except _RunStopped as exc:
            return self.failed(block, f"not sent: {exc}", 0, None)
        except (RetryableCallError, FatalCallError) as exc:
            return self.failed(block, str(exc), exc.attempts, exc.request_id)
        except CassetteMissError as exc:
            raise CassetteMissError(
                f"{describe(block)}: {exc}",
                block_id=block.id,
                line_span=block.line_span,
                key=exc.key,
            ) from None
        if self.config.log_text:
            self.log.debug(
                "refine.block_text", block_id=block.id, original=block.text, reply=reply.content
            )
        sent = _outcome(
            block,
            OutcomeStatus.REFINED,
            request_id=request_id,
            attempts=attempts,
            max_tokens=max_tokens,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cached_tokens=reply.cached_tokens,
            finish_reason=reply.finish_reason,
            latency_s=reply.latency_s,
            ttft_s=reply.ttft_s,
        )
        return self.judge(block, reply, sent)

    def judge(self, block: Block, reply: Reply, sent: BlockOutcome) -> BlockOutcome:
        """The outcome of a reply: rejected, truncated, unchanged or refined."""
        if reply.stopped_early:
            return self.rejected(block, sent, (reply.stopped_early,))
        if is_truncated(reply.finish_reason, reply.completion_tokens, sent.max_tokens):
            self.log.warning(
                "refine.block_truncated",
                block_id=block.id,
                request_id=sent.request_id,
                line_span=list(block.line_span),
                max_tokens=sent.max_tokens,
                completion_tokens=reply.completion_tokens,
                finish_reason=reply.finish_reason,
            )
            return sent.model_copy(update={"status": OutcomeStatus.TRUNCATED, "reason": "length"})
        verdict = check_reply(block, reply.content, self.config.guard)
        if verdict.text is None:
            return self.rejected(block, sent, verdict.reasons)
        if verdict.unchanged:
            return sent.model_copy(update={"status": OutcomeStatus.UNCHANGED})
        return sent.model_copy(update={"text": verdict.text})

    def rejected(self, block: Block, sent: BlockOutcome, reasons: tuple[str, ...]) -> BlockOutcome:
        """Log ``refine.block_rejected`` (WARNING) and return the ``rejected`` outcome."""
        self.log.warning(
            "refine.block_rejected",
            block_id=block.id,
            request_id=sent.request_id,
            line_span=list(block.line_span),
            reasons=list(reasons),
            reason_groups=sorted({reason_group(r) for r in reasons}),
        )
        return sent.model_copy(
            update={
                "status": OutcomeStatus.REJECTED,
                "reason": "; ".join(reasons),
                "reasons": tuple(reasons),
            }
        )

    def failed(
        self, block: Block, error: str, attempts: int, request_id: str | None
    ) -> BlockOutcome:
        """Log ``refine.block_failed`` (ERROR) and return the ``failed`` outcome. Not logged
        when an error that ends the whole run stopped it (that error says it all)."""
        if self.state.stopped_by != "fatal":
            self.log.error(
                "refine.block_failed",
                block_id=block.id,
                request_id=request_id,
                line_span=list(block.line_span),
                attempts=attempts,
                error=error,
            )
        return _outcome(
            block,
            OutcomeStatus.FAILED,
            reason=error,
            attempts=attempts,
            request_id=request_id,
        )


def _outcome(block: Block, status: OutcomeStatus, **fields: Any) -> BlockOutcome:
    """``block``'s outcome with its id, kind and line span filled in."""
    return BlockOutcome(
        block_id=block.id, kind=block.kind.value, line_span=block.line_span, status=status, **fields
    )


def _plan(doc: Document, config: RefineConfig) -> tuple[list[Block], dict[int, BlockOutcome]]:
    """The blocks to send, longest first, and the outcomes of those never sent."""
    skipped: dict[int, BlockOutcome] = {}
    send: list[tuple[int, Block]] = []
    for block in doc.blocks:
        reason = skip_reason(block, config.max_block_tokens)
        if reason is not None:
            skipped[block.id] = _outcome(block, OutcomeStatus.SKIPPED, reason=reason.value)
        else:
            send.append((estimate_tokens(block.text), block))
    if config.dispatch == "longest-first":  # the report is done when its slowest block is
        send.sort(key=lambda pair: (-pair[0], pair[1].id))
    return [b for _, b in send], skipped


async def refine_document(
    doc: Document,
    config: RefineConfig,
    *,
    base_urls: Sequence[str],
    model: str | None = None,
    report_id: str | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    limiter: SlotLimiter | None = None,
) -> RefineResult:
    """Refine a parsed document against the servers at ``base_urls`` (no embedded server).

    See :func:`refine`; this is its core once the endpoints are known.
    """
    started = time.perf_counter()
    report_id = report_id or uuid.uuid4().hex[:12]
    log = _log.bind(report_id=report_id)
    to_send, outcomes = _plan(doc, config)
    state = RunState(config.max_consecutive_connection_failures)
    async with open_pool(
        config, base_urls, model=model, transport=transport, limiter=limiter
    ) as pool:
        run = _Run(
            doc=doc,
            config=config,
            pool=pool,
            state=state,
            context=report_context(doc, config.report_context_chars),
            log=log,
        )
        log.info(
            "refine.start",
            blocks=len(doc.blocks),
            to_send=len(to_send),
            skipped=len(outcomes),
            model=pool.endpoints[0].model,
            backend=config.backend.value,
            base_url=",".join(str(redact_url(e.base_url)) for e in pool.endpoints),
            concurrency=pool.slots,
            stream=config.stream,
        )

        async def one(block: Block) -> None:
            try:
                outcomes[block.id] = await run.refine_block(block)
            except RefineError as exc:  # AuthError, CassetteMissError: stop all
                if state.fatal is None:
                    state.fatal = exc
                state.stop(str(exc), by="fatal")
                tg.cancel_scope.cancel()

        async with anyio.create_task_group() as routing:
            pool.start(routing)
            async with anyio.create_task_group() as tg:
                for block in to_send:
                    tg.start_soon(one, block)
            routing.cancel_scope.cancel()
    if state.fatal is not None:
        log.error(
            "refine.aborted",
            error=str(state.fatal),
            kind=type(state.fatal).__name__,
            done=sum(1 for o in outcomes.values() if o.status is not OutcomeStatus.SKIPPED),
            to_send=len(to_send),
        )
        raise state.fatal
    ordered = tuple(outcomes[b.id] for b in doc.blocks)
    replacements = {o.block_id: o.text for o in ordered if o.text is not None}
    text = splice(doc, replacements)
    broken = changed_outside_blocks(doc, replacements, text)
    if broken:  # a splicer bug: lose the refinements, never the report
        log.error("refine.splice_check_failed", lines=broken[:20])
        text = doc.source
        ordered = tuple(
            o.model_copy(
                update={
                    "status": OutcomeStatus.FAILED,
                    "reason": "splice check failed",
                    "text": None,
                }
            )
            if o.text is not None
            else o
            for o in ordered
        )
    totals = TokenTotals(**state.totals)
    result = RefineResult(
        report_id=report_id,
        text=text,
        outcomes=ordered,
        tokens=totals,
        elapsed_s=time.perf_counter() - started,
        stopped_early=state.stop_reason,
        stopped_by=state.stopped_by,
    )
    log.info(
        "refine.done",
        **result.counts,
        prompt_tokens=totals.prompt_tokens,
        completion_tokens=totals.completion_tokens,
        cached_tokens=totals.cached_tokens,
        requests=totals.requests,
        elapsed_s=round(result.elapsed_s, 3),
        stopped_early=result.stopped_early,
        failed_blocks=[
            {"block_id": o.block_id, "line_span": list(o.line_span), "error": o.reason}
            for o in result.failed
        ],
    )
    return result


async def refine(
    source: str,
    config: RefineConfig | None = None,
    *,
    report_id: str | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    limiter: SlotLimiter | None = None,
) -> RefineResult:
    """Refine a Markdown report and return the whole report with every block's outcome.

    ``source`` is the report text (a BOM and any line endings are kept). ``config`` says where
    the model is (default: the embedded llama.cpp server, which needs ``owlai-refine[local]``
    and is started for this call and stopped after it). ``transport`` replaces the network
    (``owlai_refine.cassette`` record/replay); with a replay transport no server is started.
    ``limiter`` replaces the per-endpoint limiter of a single endpoint (default: the
    process-wide in-process one, or ``config.limiter``'s Redis one). ``report_id`` tags every
    log line (default: a random 12-hex id).

    Blocks are sent longest first, at most ``config.slots`` at once per endpoint across every
    refine running in this event loop (or, with a Redis limiter, across every worker). A block
    whose reply is truncated, rejected by the guard, or fails after retries keeps its original
    text; nothing is lost.

    Raises :class:`~owlai_refine.errors.ConfigError` (no usable model or endpoint),
    :class:`~owlai_refine.errors.AuthError` (401/403: raised at once, nothing more is sent),
    :class:`~owlai_refine.errors.CassetteMissError` (replay has no reply for a block),
    :class:`~owlai_refine.errors.LocalModelError` (the embedded server cannot start).
    A failed shared limiter (``LimiterError``) is not raised: nothing more is sent without a
    slot, and the result comes back whole with ``stopped_by == "limiter"``.
    """
    config = config or RefineConfig()
    report_id = report_id or uuid.uuid4().hex[:12]
    with structlog.contextvars.bound_contextvars(report_id=report_id):
        return await _refine(source, config, report_id, transport, limiter)


async def _refine(
    source: str,
    config: RefineConfig,
    report_id: str,
    transport: httpx2.AsyncBaseTransport | None,
    limiter: SlotLimiter | None,
) -> RefineResult:
    doc = parse(source, reference_headings=config.reference_headings)
    run = partial(
        refine_document, doc, config, report_id=report_id, transport=transport, limiter=limiter
    )
    if config.base_urls:
        return await run(base_urls=config.base_urls)
    from owlai_refine.local import LOCAL_MODEL_NAME, local_server  # noqa: PLC0415 - optional extra

    if transport is not None and getattr(transport, "offline", False):
        return await run(
            base_urls=["http://embedded.invalid/v1"], model=config.model or LOCAL_MODEL_NAME
        )
    async with local_server(slots=config.slots) as base_url:
        return await run(base_urls=[base_url], model=config.model or LOCAL_MODEL_NAME)


def refine_sync(
    source: str,
    config: RefineConfig | None = None,
    **kwargs: Any,
) -> RefineResult:
    """Blocking :func:`refine`: runs it in a fresh event loop with ``anyio.run``.

    Inside a running event loop (async code, Jupyter) this raises ``RuntimeError`` from anyio:
    there, ``await refine(...)`` instead. Limiters are per event loop, so concurrent
    ``refine_sync`` calls in several threads do not share a cap; use one loop for that.
    """
    runner: Callable[[], Awaitable[RefineResult]] = partial(refine, source, config, **kwargs)
    return anyio.run(runner)
