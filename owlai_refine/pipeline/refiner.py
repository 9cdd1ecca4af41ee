"""The long-lived :class:`Refiner`, its blocking twin, and the one-shot :func:`refine`.

A ``Refiner`` is to refining what ``httpx.AsyncClient`` is to requests: open it once, refine any
number of reports through it (concurrently too), close it. It owns, for its lifetime:

- the HTTP clients (one ``openai.AsyncOpenAI`` per endpoint, with its connection pool),
- the endpoint pool and one slot limiter per endpoint (or the limiter you pass in), so that
  every report refined through it shares the cap: two reports at once against one vLLM server
  still send at most ``config.slots`` requests,
- the pre-flight: each endpoint asked for ``/v1/models`` once, on opening, so that a server
  that is not there or does not serve the model is a ``ConfigError`` before any block is sent
  (never a report handed back with every block ``failed``); it also tells the model when
  ``config.model`` does not name it,
- the embedded llama.cpp server when no endpoint is configured, started once.

There is no hidden registry: sharing a cap means sharing a ``Refiner`` (or passing the same
limiter, e.g. a Redis one, to several). :func:`refine` builds a ``Refiner`` for one report.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, AsyncExitStack
from functools import partial
from types import TracebackType
from typing import Any

import anyio
import anyio.from_thread
import httpx2
import structlog

from owlai_refine.blocks import Document
from owlai_refine.config import RefineConfig
from owlai_refine.errors import ConfigError
from owlai_refine.events import EventSink, log_event
from owlai_refine.limits.limiter import SlotLimiter
from owlai_refine.pipeline.orchestrate import refine_document
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.plan import _Tuning, plan
from owlai_refine.results import RefineResult
from owlai_refine.serve.adaptive import start_adaptive
from owlai_refine.serve.endpoints import open_pool
from owlai_refine.serve.routing import EndpointPool

__all__ = ["Refiner", "SyncRefiner", "refine", "refine_sync"]


class Refiner:
    """Refine reports through one set of clients, endpoints, limiters and model lookup.

    ::

        async with Refiner(config) as refiner:
            results = [await refiner.refine(text) for text in reports]

    ``config`` says where the model is (default ``RefineConfig()``: the embedded llama.cpp
    server, which needs ``owlai-refine[local]``). ``transport`` replaces the network
    (``owlai_refine.serve.cassette`` record/replay; with a replay transport no server is started).
    ``limiter`` replaces the slot limiter of a single endpoint (default: one
    ``anyio.CapacityLimiter(config.slots)`` per endpoint owned by this ``Refiner``, or
    ``config.limiter``'s Redis one). ``sinks`` receive every event of every run (default: the
    JSON log, :func:`~owlai_refine.events.log_event`; pass ``[]`` for none).

    Entering it checks the configured endpoints once
    (:func:`owlai_refine.serve.preflight.check_servers`: one ``GET /v1/models`` each, no retries):
    it passes when at least one answers and each that lists models lists ``config.model``.
    No check is made against the embedded server (this ``Refiner`` starts it), through an
    offline transport (cassette replay: no server is needed; the model, if not configured, is
    read from the cassette), or with ``preflight=False``, which leaves a missing server to be
    found by the first block's requests and their retries (each block then ends ``failed``;
    see ``RefineResult.ok``).

    Entering it may raise :class:`~owlai_refine.errors.ConfigError` (no server reachable,
    naming each URL and why; the model not served, naming what is; no model named and none
    to be told; Redis extra missing; a model other than the embedded one named with no base
    URL), :class:`~owlai_refine.errors.AuthError` (401/403 from ``/v1/models``) or
    :class:`~owlai_refine.errors.LocalModelError` (the embedded server cannot start). It must
    be entered and exited in the same task, and used only inside that block.
    """

    def __init__(
        self,
        config: RefineConfig | None = None,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        limiter: SlotLimiter | None = None,
        sinks: Sequence[EventSink] = (log_event,),
        preflight: bool = True,
        _tuning: _Tuning | None = None,
    ) -> None:
        self.config = config or RefineConfig()
        self.transport = transport
        self.limiter = limiter
        self.sinks = tuple(sinks)
        self.preflight = preflight
        self._tuning = _tuning or _Tuning()  # what the benchmarks compare (plan._Tuning)
        self._stack: AsyncExitStack | None = None
        self._pool: EndpointPool | None = None

    @property
    def pool(self) -> EndpointPool:
        """The open endpoint pool (its endpoints, clients, model and limiters).

        Raises ``RuntimeError`` outside ``async with``."""
        if self._pool is None:
            raise RuntimeError("use the Refiner inside 'async with Refiner(...) as refiner:'")
        return self._pool

    async def __aenter__(self) -> Refiner:
        if self._stack is not None:
            raise RuntimeError("a Refiner can be entered once")
        async with AsyncExitStack() as stack:
            base_urls, model = await self._endpoints(stack)
            pool = await stack.enter_async_context(
                open_pool(
                    self.config,
                    base_urls,
                    model=model,  # None: the pre-flight checks the servers and tells it
                    preflight=self.preflight and not getattr(self.transport, "offline", False),
                    transport=self.transport,
                    limiter=self.limiter,
                )
            )
            routing = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(routing.cancel_scope.cancel)  # runs first on exit: stop dispatchers
            pool.start(routing)
            start_adaptive(routing, pool, self.config, self.transport)
            self._pool, self._stack = pool, stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._stack, self._pool = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    async def _endpoints(self, stack: AsyncExitStack) -> tuple[list[str], str | None]:
        """The base URLs to use and the model if already known; starts the embedded server
        (closed with ``stack``) when the config names no endpoint."""
        if self.config.base_urls:
            return list(self.config.base_urls), None
        from owlai_refine.serve.local import LOCAL_MODEL_NAME, local_server  # noqa: PLC0415 - extra

        model = self.config.model or LOCAL_MODEL_NAME
        if self.transport is not None and getattr(self.transport, "offline", False):
            return ["http://embedded.invalid/v1"], model
        if model != LOCAL_MODEL_NAME:  # it would answer anyway, and the ledger would lie
            raise ConfigError(
                f"model {model!r}: with no base URL the embedded model {LOCAL_MODEL_NAME!r} "
                f"(SmolLM2-135M-Instruct) answers; give --base-url (RefineConfig.base_url) for "
                f"{model!r}, or leave the model unset"
            )
        base_url = await stack.enter_async_context(local_server(slots=self.config.slots))
        return [base_url], model

    async def refine(self, source: str, *, report_id: str | None = None) -> RefineResult:
        """Refine a Markdown report and return the whole report with every block's outcome.

        ``source`` is the report text (a BOM and any line endings are kept). ``report_id`` tags
        every event and log line (default: a random 12-hex id). Blocks are sent longest first,
        at most ``config.slots`` at once per endpoint across every report refined through this
        ``Refiner`` (or, with a Redis limiter, across every worker). A block whose reply is
        truncated, rejected by the guard, or fails after retries keeps its original text.

        Raises :class:`~owlai_refine.errors.AuthError` (401/403: nothing more is sent) and
        :class:`~owlai_refine.errors.CassetteMissError` (replay has no reply for a block). A
        failed shared limiter (``LimiterError``) is not raised: nothing more is sent without a
        slot, and the result comes back whole with ``stopped_by == "limiter"``.
        """
        doc = parse(source, reference_headings=self.config.reference_headings)
        return await self.refine_document(doc, report_id=report_id)

    async def refine_document(self, doc: Document, *, report_id: str | None = None) -> RefineResult:
        """:meth:`refine` for a report already parsed (``owlai_refine.parse``)."""
        report_id = report_id or uuid.uuid4().hex[:12]
        with structlog.contextvars.bound_contextvars(report_id=report_id):
            return await refine_document(
                doc,
                self.config,
                self.pool,
                report_id=report_id,
                sinks=self.sinks,
                _tuning=self._tuning,
            )


async def refine(
    source: str | Document,
    config: RefineConfig | None = None,
    *,
    report_id: str | None = None,
    transport: httpx2.AsyncBaseTransport | None = None,
    limiter: SlotLimiter | None = None,
    sinks: Sequence[EventSink] = (log_event,),
) -> RefineResult:
    """Refine one report with a :class:`Refiner` of its own (one-shot form).

    The same as ``async with Refiner(config, ...) as r: return await r.refine(source)``: the
    clients, pre-flight, limiter and embedded server (if any) live for this call only, so two
    concurrent ``refine`` calls do not share a cap unless they share ``limiter``. For many
    reports, open one :class:`Refiner`. ``source`` is the report text, or a
    :class:`~owlai_refine.blocks.Document` already parsed (``owlai_refine.parse`` with
    ``config.reference_headings``), which is not parsed again. Raises what entering a
    ``Refiner`` and :meth:`Refiner.refine` raise: an unreachable server or a model it does not
    serve is a :class:`~owlai_refine.errors.ConfigError`, raised before any block is sent.

    A report with no block to send (empty, headings only, nothing to edit) asks no server
    anything (no pre-flight) and starts no embedded server; its ``RunStarted`` event names the
    configured model, else the embedded one's name, else ``"none"``.
    """
    config = config or RefineConfig()
    doc = (
        source
        if isinstance(source, Document)
        else parse(source, reference_headings=config.reference_headings)
    )
    check = True
    if not plan(doc, config)[0]:  # nothing to send: no model lookup, no embedded server
        from owlai_refine.serve.local import LOCAL_MODEL_NAME  # noqa: PLC0415 - optional extra

        embedded = config.base_url is None
        config = config.model_copy(
            update={
                "base_url": config.base_url or "http://embedded.invalid/v1",
                "model": config.model or (LOCAL_MODEL_NAME if embedded else "none"),
            }
        )
        check = False
    async with Refiner(
        config, transport=transport, limiter=limiter, sinks=sinks, preflight=check
    ) as refiner:
        return await refiner.refine_document(doc, report_id=report_id)


def refine_sync(source: str, config: RefineConfig | None = None, **kwargs: Any) -> RefineResult:
    """Blocking :func:`refine` (same arguments): runs it in a fresh event loop with ``anyio.run``.

    Inside a running event loop (async code, Jupyter) this raises ``RuntimeError`` from anyio:
    there, ``await refine(...)`` instead. For many reports from blocking code, use
    :class:`SyncRefiner`.
    """
    return anyio.run(partial(refine, source, config, **kwargs))


class SyncRefiner:
    """The blocking twin of :class:`Refiner`: the same arguments, ``with`` instead of
    ``async with``, and ``refine`` returns the result instead of a coroutine::

        with SyncRefiner(config) as refiner:
            result = refiner.refine(text)

    The :class:`Refiner` runs in an event loop on a thread of its own (an anyio blocking
    portal) for the ``with`` block's lifetime; ``refine`` may be called from several threads at
    once, and those reports share the cap. Entering raises what entering a ``Refiner`` raises.
    """

    def __init__(self, config: RefineConfig | None = None, **kwargs: Any) -> None:
        self._refiner = Refiner(config, **kwargs)
        self._portal_cm: AbstractContextManager[anyio.from_thread.BlockingPortal] | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._inner: AbstractContextManager[Refiner] | None = None

    def __enter__(self) -> SyncRefiner:
        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._inner = self._portal.wrap_async_context_manager(self._refiner)
            self._inner.__enter__()
        except BaseException as exc:
            self._portal_cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._inner is not None:
                self._inner.__exit__(exc_type, exc, tb)
        finally:
            if self._portal_cm is not None:
                self._portal_cm.__exit__(None, None, None)
            self._inner = self._portal = self._portal_cm = None

    @property
    def config(self) -> RefineConfig:
        """The settings the refiner was built with."""
        return self._refiner.config

    def refine(self, source: str, *, report_id: str | None = None) -> RefineResult:
        """Blocking :meth:`Refiner.refine`. Raises ``RuntimeError`` outside ``with``."""
        return self._call(partial(self._refiner.refine, source, report_id=report_id))

    def refine_document(self, doc: Document, *, report_id: str | None = None) -> RefineResult:
        """Blocking :meth:`Refiner.refine_document`."""
        return self._call(partial(self._refiner.refine_document, doc, report_id=report_id))

    def _call(self, work: Callable[[], Any]) -> RefineResult:
        if self._portal is None:
            raise RuntimeError("use the SyncRefiner inside 'with SyncRefiner(...) as refiner:'")
        result: RefineResult = self._portal.call(work)
        return result
