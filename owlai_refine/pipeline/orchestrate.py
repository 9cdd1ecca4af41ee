"""One report's run, as named steps: plan, dispatch, assemble.

    plan      which blocks to send (longest first) and the outcomes of those never sent
              (:mod:`owlai_refine.pipeline.plan`)
    dispatch  one task per block: send (retries, one slot per attempt), judge the reply,
              re-wrap an accepted one at the block's own width (:mod:`owlai_refine.pipeline.rewrap`)
    assemble  splice the accepted replies in document order, check the splice, sum the tokens

:func:`refine_document` runs them against an open :class:`~owlai_refine.serve.routing.EndpointPool`;
:class:`~owlai_refine.pipeline.refiner.Refiner` owns the pool and calls it once per report. Every
call, settled block and the run's start and end go to the run's event sinks
(:mod:`owlai_refine.events`); nothing here logs except the block text at debug level.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import anyio
import structlog

from owlai_refine.blocks import Block, Document
from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.errors import (
    AuthError,
    BlockCallError,
    CassetteError,
    CassetteMissError,
    FatalCallError,
    LimiterError,
    OutputError,
    RefineError,
    RetryableCallError,
)
from owlai_refine.events import (
    BlockSettled,
    CallFinished,
    CallStarted,
    EventSink,
    RefineEvent,
    RunAborted,
    RunFinished,
    RunStarted,
    SpliceCheckFailed,
)
from owlai_refine.guard import Reason, check_reply, watchdog_for
from owlai_refine.pipeline.plan import _outcome, _Tuning, describe, plan
from owlai_refine.pipeline.prompt import (
    build_messages,
    estimate_tokens,
    max_tokens_for,
    report_context,
)
from owlai_refine.pipeline.rewrap import rewrap
from owlai_refine.pipeline.splice import splice
from owlai_refine.pipeline.verify import splice_faults
from owlai_refine.results import (
    BlockOutcome,
    OutcomeStatus,
    RefineResult,
    TokenTotals,
    is_truncated,
)
from owlai_refine.serve.call import Limits, Reply, call_model
from owlai_refine.serve.endpoints import Endpoint
from owlai_refine.serve.prediction import PredictionPolicy
from owlai_refine.serve.priority import PriorityPolicy
from owlai_refine.serve.retry import Breaker, RetryClock, retrying
from owlai_refine.serve.routing import EndpointPool

__all__ = ["refine_document", "workers_for"]

_log = structlog.get_logger("owlai_refine")

_DEFAULT_TUNING = _Tuning()


def workers_for(slots: int) -> int:
    """Block tasks one run keeps going for a pool of ``slots`` slots: enough that a slot freed
    while blocks wait out retry back-offs is taken at once."""
    return 4 * slots + 8


class _RunStopped(Exception):
    """Raised inside a block task when the run has stopped sending (server gone, limiter)."""


@dataclass(frozen=True, slots=True)
class _Request:
    """What every attempt for one block sends: its messages and ``max_tokens``, and our
    estimate of the prompt's tokens."""

    block: Block
    messages: list[dict[str, str]]
    max_tokens: int
    prompt_est: int


@dataclass(frozen=True, slots=True)
class _Sent:
    """A block's accepted attempt: the reply, its request id, attempts made, ``max_tokens``."""

    reply: Reply
    request_id: str
    attempts: int
    max_tokens: int


@dataclass
class _Run:
    """One report's run: what its block tasks share."""

    doc: Document
    config: RefineConfig
    pool: EndpointPool
    report_id: str
    sinks: Sequence[EventSink]
    breaker: Breaker
    context: str
    priority: PriorityPolicy
    prediction: PredictionPolicy
    tuning: _Tuning
    totals: Counter[str] = field(default_factory=Counter)
    dispatching: anyio.CancelScope | None = None
    """The dispatch step's scope: an error that ends the run cancels it at once."""
    guard_thread: anyio.CapacityLimiter = field(default_factory=lambda: anyio.CapacityLimiter(1))
    """The guard's one worker thread (~3 ms a reply): it never takes more than one thread."""

    def emit(self, event: RefineEvent) -> None:
        """Hand ``event`` to every sink; a call also adds to the run's token totals."""
        if isinstance(event, CallFinished):
            self.totals["requests"] += 1
            for name in ("prompt_tokens", "completion_tokens"):
                self.totals[name] += getattr(event, name) or 0
            if event.cached_tokens is not None:  # never reported: unknown, not 0
                self.totals["cached_tokens"] += event.cached_tokens
        for sink in self.sinks:
            sink(event)

    # ------------------------------------------------------------------ step 2: dispatch
    async def dispatch(self, to_send: list[Block]) -> dict[int, BlockOutcome]:
        """Settle every block of ``to_send`` concurrently and return their outcomes by block id.

        A few workers per slot (:func:`workers_for`) take the blocks in ``to_send``'s order, so
        a block costs memory (its messages, its task) only from when it is next to be sent: a
        100,000-block report holds dozens of requests, not 100,000 (the pool's slots bound how
        many are in flight; the spare workers send while others wait out a retry back-off).

        An error that ends the run (``AuthError``, ``CassetteMissError``) cancels the other
        blocks, is reported as :class:`RunAborted` and raised.
        """
        settled: dict[int, BlockOutcome] = {}
        queue = iter(to_send)

        async def worker() -> None:
            for block in queue:  # shared: each block is taken by one worker, in order
                settled[block.id] = await self.settle(block)

        try:
            async with anyio.create_task_group() as tg:
                self.dispatching = tg.cancel_scope
                for _ in range(min(len(to_send), workers_for(self.pool.slots))):
                    tg.start_soon(worker)
        except BaseExceptionGroup as group:
            fatal, rest = group.split(RefineError)
            if fatal is None or rest is not None:  # a bug, or a cancellation from outside
                raise
            error = fatal.exceptions[0]
            while isinstance(error, BaseExceptionGroup):
                error = error.exceptions[0]
            self.emit(
                RunAborted(
                    self.report_id,
                    error=str(error),
                    kind=type(error).__name__,
                    done=len(settled),
                    to_send=len(to_send),
                )
            )
            raise error from None
        return settled

    async def settle(self, block: Block) -> BlockOutcome:
        """Send, judge and report one block. Returns ``failed`` for a per-block failure; raises
        ``CassetteMissError`` (naming the block) and ``AuthError``, which end the run."""
        try:
            sent = await self.send(block)
        except LimiterError as exc:  # fail closed: nothing more is sent, every block kept
            self.breaker.trip(f"limiter failed: {exc}", cause="limiter")
            outcome = self.failed(block, f"not sent: {exc}", 0, None)
        except _RunStopped as exc:
            outcome = self.failed(block, f"not sent: {exc}", 0, None)
        except (RetryableCallError, FatalCallError) as exc:
            outcome = self.failed(block, str(exc), exc.attempt, exc.request_id)
        except CassetteMissError as exc:
            raise CassetteMissError(
                f"{describe(block)}: {exc}",
                block_id=block.id,
                line_span=block.line_span,
                key=exc.key,
            ) from None
        else:
            outcome = await self.judge(block, sent)
        self.emit(BlockSettled(self.report_id, outcome))
        return outcome

    async def send(self, block: Block) -> _Sent:
        """Call the model for ``block`` until a reply comes back or the retry policy gives up
        (the last error is raised: a :class:`BlockCallError` knows its attempt and request id).
        Back-off waits hold no slot."""
        first, marker = self.tuning.prompt_layout == "block-first", self.config.unchanged_marker
        messages = build_messages(block, self.context, block_first=first, marker=marker)
        request = _Request(
            block,
            messages,
            max_tokens=max_tokens_for(block, self.config.output),
            prompt_est=estimate_tokens("".join(m["content"] for m in messages)),
        )
        clock = RetryClock()
        attempt = 0
        async for try_ in retrying(self.config.retry, self.breaker, clock):
            with try_:
                attempt += 1
                request_id = uuid.uuid4().hex
                reply = await self.attempt(request, request_id, attempt, clock.mark)
                return _Sent(reply, request_id, attempt, request.max_tokens)
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover

    async def call(
        self,
        request: _Request,
        endpoint: Endpoint,
        request_id: str,
        attempt: int,
        wd: Callable[[str], str | None] | None,
    ) -> Reply:
        """One request, with ``priority`` and ``prediction`` where the endpoint takes them; sent
        again at once without a field the server refuses (see :mod:`owlai_refine.serve.priority`,
        :mod:`owlai_refine.serve.prediction`), with the same watchdog ``wd``: the refused request
        read no reply."""
        call = partial(
            call_model,
            endpoint.client,
            model=endpoint.model,
            messages=request.messages,
            max_tokens=request.max_tokens,
            temperature=self.config.temperature,
            request_id=request_id,
            attempt=attempt,
            stream=self.config.stream,
            limits=Limits(
                deadline_s=self.config.request_deadline_s
                + self.config.deadline_per_token_s * request.max_tokens,
                token_gap_s=self.config.token_timeout_s,
            ),
        )
        block, url = request.block, endpoint.base_url
        sampling, resends = self.config.sampling_body(), 2  # a refused field is dropped each time
        while True:
            body = self.prediction.body(url, block.text, self.priority.body(url, sampling))
            try:
                return await call(extra_body=body, watchdog=wd)
            except FatalCallError as exc:
                if not resends or not (
                    self.priority.refused(url, body, exc) or self.prediction.refused(url, body, exc)
                ):
                    raise
            resends -= 1

    async def attempt(
        self, request: _Request, request_id: str, attempt: int, on_send: Callable[[], None]
    ) -> Reply:
        """One request in one slot of some endpoint (``on_send`` is called as it goes out);
        reported as a :class:`CallFinished` whether it succeeds or fails."""
        block = request.block
        if self.breaker.reason:
            raise _RunStopped(self.breaker.reason)
        # a fresh detector per attempt (a retry is a new reply), built before the slot is taken
        wd = watchdog_for(block, self.config.guard) if self.config.stream else None
        async with self.pool.slot() as endpoint:
            if self.breaker.reason:
                raise _RunStopped(self.breaker.reason)
            call = self.call_event(request, endpoint, request_id=request_id, attempt=attempt)
            on_send()
            self.emit(CallStarted(self.report_id, block.id, attempt))
            try:
                reply = await self.call(request, endpoint, request_id, attempt, wd)
            except BlockCallError as exc:
                self.breaker.note(exc)
                self.emit(call(status_code=exc.status, error=str(exc)))
                if exc.connection:
                    self.pool.set_aside(endpoint, exc)
                raise
            except (AuthError, CassetteError, OutputError):
                # ends the run: cancel every other block now, before this slot is given back
                # (a block waiting for it would otherwise send one more request)
                if self.dispatching is not None:
                    self.dispatching.cancel()
                raise
        self.breaker.note(None)
        self.emit(
            call(
                server_request_id=reply.server_request_id,
                usage=reply.usage,
                watchdog_reason=reply.watchdog_reason,
            )
        )
        if self.config.log_text:
            _log.debug(
                "refine.block_text",
                report_id=self.report_id,
                block_id=block.id,
                original=block.text,
                reply=reply.content,
            )
        return reply

    def call_event(
        self, request: _Request, endpoint: Endpoint, *, request_id: str, attempt: int
    ) -> Callable[..., CallFinished]:
        """A :class:`CallFinished` builder with the request's fields; the result's are added."""
        return partial(
            CallFinished,
            report_id=self.report_id,
            block_id=request.block.id,
            request_id=request_id,
            attempt=attempt,
            model=endpoint.model,
            backend=self.config.backend.value,
            base_url=str(redact_url(endpoint.base_url)),
            max_tokens=request.max_tokens,
            prompt_tokens_est=request.prompt_est,
        )

    async def judge(self, block: Block, sent: _Sent) -> BlockOutcome:
        """The outcome of a reply: rejected (watchdog, a ``finish_reason`` other than
        ``stop``, or the guard), truncated, unchanged or refined. The guard runs in
        :attr:`guard_thread`, off the event loop, which meanwhile sends the next block."""
        reply = sent.reply
        outcome = _outcome(
            block,
            OutcomeStatus.REFINED,
            request_id=sent.request_id,
            attempts=sent.attempts,
            max_tokens=sent.max_tokens,
            usage=reply.usage,
        )
        if reply.watchdog_reason:  # the stream was closed early: the detail says why
            reason = Reason("stopped early", reply.watchdog_reason, ": ")
            return _rejected(outcome, (reason,), reply.content)
        if is_truncated(reply.finish_reason, reply.completion_tokens, sent.max_tokens):
            cut = {"status": OutcomeStatus.TRUNCATED, "reason": "length", "reply": reply.content}
            return outcome.model_copy(update=cut)
        if reply.finish_reason != "stop":  # content_filter, tool_calls: not a finished edit
            reason = Reason("finish_reason", str(reply.finish_reason))
            return _rejected(outcome, (reason,), reply.content)
        verdict = await anyio.to_thread.run_sync(
            check_reply, block, reply.content, self.config.guard, limiter=self.guard_thread
        )
        if verdict.text is None:
            return _rejected(outcome, verdict.reasons, reply.content)
        if verdict.unchanged:
            return outcome.model_copy(update={"status": OutcomeStatus.UNCHANGED})
        # the original's line breaks where the reply's words allow: a diff shows the edit
        return outcome.model_copy(update={"text": rewrap(block, verdict.text)})

    def failed(
        self, block: Block, error: str, attempts: int, request_id: str | None
    ) -> BlockOutcome:
        """The ``failed`` outcome: no usable reply (``error`` says why)."""
        return _outcome(
            block, OutcomeStatus.FAILED, reason=error, attempts=attempts, request_id=request_id
        )

    # ------------------------------------------------------------------ step 3: assemble
    def assemble(self, outcomes: dict[int, BlockOutcome], started: float) -> RefineResult:
        """Splice the accepted replies in document order and build the result. If the splice
        changed a line outside the blocks (a splicer bug), the refinements are dropped and the
        source is returned: the report is never lost."""
        ordered = tuple(outcomes[b.id] for b in self.doc.blocks)
        replacements = {o.block_id: o.text for o in ordered if o.text is not None}
        text = splice(self.doc, replacements)
        broken = splice_faults(self.doc, replacements, text)
        if broken:
            self.emit(SpliceCheckFailed(self.report_id, tuple(broken[:20])))
            text = self.doc.source
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
        return RefineResult(
            report_id=self.report_id,
            text=text,
            outcomes=ordered,
            tokens=TokenTotals(**self.totals),
            elapsed_s=time.perf_counter() - started,
            stop_reason=self.breaker.reason,
            stopped_by=self.breaker.cause,
        )


def _rejected(outcome: BlockOutcome, reasons: Sequence[Reason], reply: str) -> BlockOutcome:
    texts = tuple(str(r) for r in reasons)
    return outcome.model_copy(
        update={
            "status": OutcomeStatus.REJECTED,
            "reply": reply,
            "reason": "; ".join(texts),
            "reasons": texts,
            "reason_groups": tuple(r.group for r in reasons),
        }
    )


async def refine_document(
    doc: Document,
    config: RefineConfig,
    pool: EndpointPool,
    *,
    report_id: str,
    sinks: Sequence[EventSink],
    _tuning: _Tuning = _DEFAULT_TUNING,
) -> RefineResult:
    """Refine a parsed document through ``pool`` (open, its dispatchers started): plan, dispatch,
    assemble, reporting each step's events to ``sinks`` (``_tuning``: see :class:`_Tuning`).

    Raises ``AuthError`` and ``CassetteMissError`` (after a :class:`RunAborted` event); every
    other failure is a block's ``failed`` outcome. See :meth:`Refiner.refine
    <owlai_refine.pipeline.refiner.Refiner.refine>`.
    """
    started = time.perf_counter()
    run = _Run(
        doc=doc,
        config=config,
        pool=pool,
        report_id=report_id,
        sinks=sinks,
        breaker=Breaker(config.max_consecutive_connection_failures),
        context=report_context(doc, config.report_context_chars),
        priority=PriorityPolicy(config),
        prediction=PredictionPolicy(config),
        tuning=_tuning,
    )
    to_send, outcomes = plan(doc, config, _tuning=_tuning)
    run.emit(
        RunStarted(
            report_id,
            blocks=len(doc.blocks),
            to_send=len(to_send),
            skipped=len(outcomes),
            model=pool.endpoints[0].model,
            backend=config.backend.value,
            base_url=",".join(str(redact_url(e.base_url)) for e in pool.endpoints),
            concurrency=pool.slots,
            stream=config.stream,
        )
    )
    outcomes |= await run.dispatch(to_send)
    result = run.assemble(outcomes, started)
    run.emit(RunFinished(report_id, result))
    return result
