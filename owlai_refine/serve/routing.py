"""Route each request to an endpoint with a free slot: one or several servers behind a backend.

With one endpoint, a request simply holds a slot of that endpoint's limiter. With several (for
example one vLLM server per GPU group), requests wait in one FIFO queue (so longest-first order
holds across servers) and each endpoint's dispatcher hands its next free slot to the head of the
queue: a request goes to whichever endpoint frees a slot first. The slot is taken and held by a
task of the endpoint's own (``async with limiter``), so any ``SlotLimiter`` works, the Redis one
included, and the cap per endpoint holds across every worker sharing it.

An endpoint whose request fails without any HTTP answer (refused, reset, timed out) is set aside
for ``set_aside_s`` seconds while a probe (``GET /models``) checks it every ``probe_interval_s``;
its waiting requests go to the others. If every endpoint is set aside, they are all used again
(so the run's circuit breaker, not an endless wait, decides when the servers are gone).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
import openai
import structlog
from anyio.abc import TaskGroup

from owlai_refine.config import redact_url
from owlai_refine.serve.server import model_names

if TYPE_CHECKING:  # endpoints builds the pool: a run-time import would be a cycle
    from owlai_refine.serve.endpoints import Endpoint

__all__ = ["EndpointPool"]

_log = structlog.get_logger("owlai_refine")


@dataclass(eq=False)
class _Waiter:
    granted: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    endpoint: Endpoint | None = None
    error: BaseException | None = None


class EndpointPool:
    """The endpoints of one :class:`~owlai_refine.pipeline.refiner.Refiner` and the routing of
    requests to their slots, shared by every report refined through it (the FIFO queue included).

    ``set_aside_s`` and ``probe_interval_s`` are in seconds. Use :meth:`slot` around each
    request; with several endpoints, :meth:`start` must run the dispatchers in a task group
    that outlives the requests (the ``Refiner``'s own).
    """

    def __init__(
        self,
        endpoints: Sequence[Endpoint],
        *,
        set_aside_s: float = 30.0,
        probe_interval_s: float = 2.0,
    ) -> None:
        if not endpoints:
            raise ValueError("an endpoint pool needs at least one endpoint")
        self.endpoints = list(endpoints)
        self.set_aside_s = set_aside_s
        self.probe_interval_s = probe_interval_s
        self._waiters: deque[_Waiter] = deque()
        self._changed = anyio.Event()
        self._tg: TaskGroup | None = None

    @property
    def slots(self) -> int:
        """Requests in flight allowed over all endpoints."""
        return sum(int(e.limiter.total_tokens) for e in self.endpoints)

    def start(self, tg: TaskGroup) -> None:
        """Start one dispatcher per endpoint in ``tg`` (needed only with several endpoints)."""
        self._tg = tg
        if len(self.endpoints) > 1:
            for endpoint in self.endpoints:
                tg.start_soon(self._dispatch, endpoint)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Endpoint]:
        """Wait for a free slot on some endpoint; hold it while the ``async with`` body runs.

        Raises whatever the limiter raises while taking the slot (e.g. ``LimiterError``).
        """
        if len(self.endpoints) == 1:
            endpoint = self.endpoints[0]
            async with endpoint.limiter:
                yield endpoint
            return
        waiter = _Waiter()
        self._waiters.append(waiter)
        self._notify()
        try:
            await waiter.granted.wait()
        except BaseException:
            if waiter in self._waiters:
                self._waiters.remove(waiter)
            waiter.done.set()  # if a slot was granted meanwhile, give it back
            raise
        if waiter.error is not None:
            raise waiter.error
        assert waiter.endpoint is not None
        try:
            yield waiter.endpoint
        finally:
            waiter.done.set()

    def set_aside(self, endpoint: Endpoint, error: BaseException) -> None:
        """Send no new request to ``endpoint`` for ``set_aside_s`` seconds, and probe it.

        A no-op with a single endpoint (there is nowhere else to go)."""
        if len(self.endpoints) == 1 or not endpoint.available:
            return
        endpoint.set_aside_until = time.monotonic() + self.set_aside_s
        endpoint.restored = anyio.Event()
        _log.warning(
            "refine.endpoint_set_aside",
            base_url=redact_url(endpoint.base_url),
            seconds=self.set_aside_s,
            error=str(error),
        )
        if self._tg is not None:
            self._tg.start_soon(self._probe, endpoint)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _usable(self, endpoint: Endpoint) -> bool:
        return endpoint.available or not any(e.available for e in self.endpoints)

    async def _dispatch(self, endpoint: Endpoint) -> None:
        """Hand ``endpoint``'s free slots, one at a time, to the head of the queue."""
        while True:
            while not self._waiters:
                await self._changed.wait()
            if not self._usable(endpoint):  # look again at least once a second
                with anyio.move_on_after(min(1.0, endpoint.set_aside_until - time.monotonic())):
                    await endpoint.restored.wait()
                continue
            holding = anyio.Event()
            assert self._tg is not None
            self._tg.start_soon(self._hold, endpoint, holding)
            await holding.wait()

    async def _hold(self, endpoint: Endpoint, holding: anyio.Event) -> None:
        """Take one slot of ``endpoint`` (in this task, as limiters require) and lend it to the
        next waiter until its request ends; give it straight back if nobody waits any more."""
        try:
            async with endpoint.limiter:
                holding.set()
                if not self._waiters:
                    return
                waiter = self._waiters.popleft()
                waiter.endpoint = endpoint
                waiter.granted.set()
                await waiter.done.wait()
        except Exception as exc:  # the limiter failed: no slot; fail every waiter, closed
            holding.set()
            while self._waiters:
                waiter = self._waiters.popleft()
                waiter.error = exc
                waiter.granted.set()

    async def _probe(self, endpoint: Endpoint) -> None:
        """Check a set-aside endpoint until it answers ``GET /models``, then restore it."""
        while not endpoint.available:
            await anyio.sleep(self.probe_interval_s)
            try:
                await model_names(endpoint.client, self.probe_interval_s)
            except openai.APIError:
                continue
            endpoint.set_aside_until = 0.0
            endpoint.restored.set()
            _log.info("refine.endpoint_restored", base_url=redact_url(endpoint.base_url))
            self._notify()
            return
