"""The adaptive cap: a polite tenant's share of a self-hosted vLLM server.

A refine shares its vLLM server with people's chat turns. With ``max_num_seqs`` slots all held
by refine requests, a chat turn that arrives waits until one of them finishes. The adaptive cap
watches the server and keeps this client's in-flight limit below the slots the others leave
free, and grows it back to the configured cap when the server is ours alone.

Control law: AIMD on an explicit signal
    Every ``interval_s`` (about 1 s) the controller reads ``/metrics``: the server's
    ``vllm:num_requests_running`` and ``vllm:num_requests_waiting`` (summed over engines, for
    our model) and the TTFT histogram. ``others = running + waiting - ours`` (``ours``: this
    client's requests in flight; with the Redis limiter, every worker's). Then:

    - others present: **decrease at once** to ``max(1, cap - others - headroom)`` (never
      upwards on this path): their requests keep their slots, and ``headroom`` (1) slot stays
      free for the next chat turn, which otherwise waits for a refine block to finish;
    - no others for ``quiet_s`` (3 s): **increase by one** slot per reading, up to ``cap``.

    This is additive-increase / multiplicative-decrease (TCP's law, and Netflix
    concurrency-limits' ``AIMDLimit``) with the decrease sized by the signal instead of a fixed
    factor. The gradient limiters (Netflix's ``Gradient2Limit``, Envoy's adaptive concurrency
    filter) infer queueing from latency because a proxy cannot see the server's queue; vLLM
    tells us its queue directly, so there is nothing to infer, and latency here is a poor
    signal: a block's TTFT grows with its prompt (hundreds to thousands of tokens) whatever the
    load. The TTFT histogram is read for the log (``adaptive.tick``'s ``ttft_mean_s``: the mean
    TTFT of the requests whose first token came in the last interval) but does not steer.

Never above the configured cap. Requests already in flight are never cut: a lower limit only
holds back new ones. A server without a usable ``/metrics`` keeps the fixed cap, with one
WARNING ``refine.adaptive_unavailable``.

:class:`AdaptiveCap` (the state machine) and :func:`read_load` (the parser) are pure;
:func:`run_adaptive` is the loop that reads the server and sets the limiter.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import anyio
import httpx2
import structlog
from anyio.abc import TaskGroup

from owlai_refine.config import Backend, RefineConfig, redact_url
from owlai_refine.limits.limiter import SlotLimiter
from owlai_refine.serve.metrics import RUNNING, TTFT, WAITING, parse_metrics
from owlai_refine.serve.routing import EndpointPool
from owlai_refine.serve.server import metrics_text, metrics_url

__all__ = [
    "AdaptiveCap",
    "ServerLoad",
    "read_load",
    "run_adaptive",
    "set_limit",
    "start_adaptive",
]

_log = structlog.get_logger("owlai_refine")


@dataclass(frozen=True, slots=True)
class ServerLoad:
    """One reading of ``/metrics``: requests ``running`` and ``waiting`` on the server (all
    clients), and the TTFT histogram's cumulative ``ttft_count`` (requests) and ``ttft_sum``
    (seconds)."""

    running: int
    waiting: int
    ttft_count: float = 0.0
    ttft_sum: float = 0.0


def read_load(text: str, model: str | None = None) -> ServerLoad:
    """Parse vLLM's Prometheus text into a :class:`ServerLoad`
    (:func:`~owlai_refine.serve.metrics.parse_metrics`).

    Series are summed over engines; with ``model`` given, only series whose ``model_name``
    label is ``model`` (or that carry none) count. Raises ``ValueError`` if the text is not
    Prometheus text or holds neither ``vllm:num_requests_running`` nor ``..._waiting`` (not
    a vLLM server).
    """
    wanted = (RUNNING, WAITING, TTFT + "_count", TTFT + "_sum")
    totals: dict[str, float] = {}
    for sample in parse_metrics(text).samples:
        if sample.name not in wanted:
            continue
        totals.setdefault(sample.name, 0.0)  # seen, whichever model it counts
        if model is not None and sample.labels.get("model_name", model) != model:
            continue
        totals[sample.name] += sample.value
    if RUNNING not in totals or WAITING not in totals:
        raise ValueError(f"no {RUNNING} / {WAITING} in /metrics: not a vLLM server")
    return ServerLoad(
        running=round(totals[RUNNING]),
        waiting=round(totals[WAITING]),
        ttft_count=totals.get(TTFT + "_count", 0.0),
        ttft_sum=totals.get(TTFT + "_sum", 0.0),
    )


@dataclass(slots=True)
class AdaptiveCap:
    """The control law as a state machine (pure: time is passed in, seconds, monotonic).

    ``cap``: the configured limit, never exceeded (the server's ``max_num_seqs``).
    ``headroom``: slots left free while others are active. ``quiet_s``: seconds without others
    before growing. ``limit`` starts at ``cap``. Raises ``ValueError`` if ``cap < 1``.
    """

    cap: int
    headroom: int = 1
    quiet_s: float = 3.0
    limit: int = 0
    others: int = 0
    """Others' requests (running or waiting) at the last update."""
    _quiet_since: float | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError(f"the adaptive cap needs a cap of at least 1, got {self.cap}")
        self.limit = self.cap if self.limit <= 0 else min(self.limit, self.cap)

    def update(self, load: ServerLoad, ours: int, now: float) -> int:
        """Take one reading (``ours``: our requests in flight now) and return the new limit."""
        self.others = max(0, load.running + load.waiting - ours)
        if self.others > 0:
            self._quiet_since = None
            room = max(1, self.cap - self.others - self.headroom)
            self.limit = min(self.limit, room)
            return self.limit
        if self._quiet_since is None:
            self._quiet_since = now
        if now - self._quiet_since >= self.quiet_s and self.limit < self.cap:
            self.limit += 1
        return self.limit


def set_limit(limiter: SlotLimiter, slots: int) -> bool:
    """Set ``limiter``'s slot count: an ``anyio.CapacityLimiter`` (``total_tokens``) or a
    limiter with ``set_slots`` (the Redis one: the shared cap shrinks for every worker).
    Returns ``False`` if the limiter cannot be resized."""
    setter: Callable[[int], None] | None = getattr(limiter, "set_slots", None)
    if setter is not None:
        setter(slots)
        return True
    if isinstance(limiter, anyio.CapacityLimiter):
        limiter.total_tokens = slots
        return True
    return False


async def _in_flight(limiter: SlotLimiter) -> int:
    """Our requests in flight on ``limiter``: every worker's for the Redis limiter."""
    if isinstance(limiter, anyio.CapacityLimiter):
        return int(limiter.borrowed_tokens)
    snapshot = getattr(limiter, "snapshot", None)
    if snapshot is not None:
        return int((await snapshot()).held)
    return 0


async def run_adaptive(
    limiter: SlotLimiter,
    base_url: str,
    model: str,
    cap: int,
    *,
    interval_s: float = 1.0,
    transport: httpx2.AsyncBaseTransport | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Steer ``limiter`` from ``base_url``'s ``/metrics`` until cancelled; the cap is set back
    to ``cap`` on the way out. Never raises for a server problem: without a usable
    ``/metrics`` on the first reading it logs WARNING ``refine.adaptive_unavailable`` once and
    returns (the fixed cap stays); a later failed reading keeps the current limit.

    Logs ``refine.adaptive_limit`` (INFO) on every change of the limit and
    ``refine.adaptive_tick`` (DEBUG) on every reading.
    """
    url = metrics_url(base_url)
    where = redact_url(url)
    if not set_limit(limiter, cap):
        _log.warning("refine.adaptive_unavailable", url=where, reason="limiter cannot resize")
        return
    steering = _Steering(limiter, AdaptiveCap(cap), clock, redact_url(base_url))
    async with httpx2.AsyncClient(timeout=max(2.0, interval_s), transport=transport) as http:
        try:
            while True:
                try:
                    load = await _read_metrics(http, url, model)
                except (httpx2.HTTPError, ValueError) as exc:
                    if steering.last is None:
                        _log.warning(
                            "refine.adaptive_unavailable",
                            url=where,
                            reason=f"{type(exc).__name__}: {exc}"[:200],
                            note=f"the cap stays fixed at {cap}",
                        )
                        return
                    _log.debug("refine.adaptive_read_failed", url=where, error=str(exc)[:200])
                else:
                    await steering.take(load)
                await anyio.sleep(interval_s)
        finally:
            set_limit(limiter, cap)


async def _read_metrics(http: httpx2.AsyncClient, url: str, model: str) -> ServerLoad:
    """One reading of ``url`` (a ``/metrics``) for ``model``. Raises ``httpx2.HTTPError`` (no
    answer, or an HTTP error status) or ``ValueError`` (not a vLLM server's metrics)."""
    return read_load(await metrics_text(http, url), model)


@dataclass(slots=True)
class _Steering:
    """What :func:`run_adaptive` keeps between two readings: the ``law`` that sets
    ``limiter``, the ``clock`` it reads, the endpoint (``base_url``, redacted, for the log) and
    the ``last`` reading (``None`` before the first)."""

    limiter: SlotLimiter
    law: AdaptiveCap
    clock: Callable[[], float]
    base_url: str | None
    last: ServerLoad | None = None

    async def take(self, load: ServerLoad) -> None:
        """Take one reading: the law's new limit with our requests in flight now, logged
        (DEBUG ``refine.adaptive_tick``), and set on the limiter when it moved (INFO
        ``refine.adaptive_limit``)."""
        ours = await _in_flight(self.limiter)
        before = self.law.limit
        limit = self.law.update(load, ours, self.clock())
        ttft = _interval_ttft(self.last, load)
        self.last = load
        _log.debug(
            "refine.adaptive_tick",
            running=load.running,
            waiting=load.waiting,
            ours=ours,
            others=self.law.others,
            limit=limit,
            ttft_mean_s=ttft,
        )
        if limit != before:
            set_limit(self.limiter, limit)
            _log.info(
                "refine.adaptive_limit",
                base_url=self.base_url,
                limit=limit,
                previous=before,
                cap=self.law.cap,
                others=self.law.others,
                ours=ours,
            )


def _interval_ttft(last: ServerLoad | None, now: ServerLoad) -> float | None:
    """Mean TTFT (s) of the requests whose first token came between two readings."""
    if last is None or now.ttft_count <= last.ttft_count:
        return None
    return round((now.ttft_sum - last.ttft_sum) / (now.ttft_count - last.ttft_count), 4)


def start_adaptive(
    tg: TaskGroup,
    pool: EndpointPool,
    config: RefineConfig,
    transport: httpx2.AsyncBaseTransport | None = None,
) -> None:
    """Start :func:`run_adaptive` for every endpoint of ``pool`` in ``tg`` (cancel ``tg``'s scope
    to stop them) when ``config.adaptive`` is set. Cloud endpoints keep their fixed cap (WARNING
    ``refine.adaptive_unavailable``); a replay transport (no server) starts nothing."""
    if not config.adaptive or getattr(transport, "offline", False):
        return
    if config.backend is not Backend.SELF_HOSTED:
        _log.warning("refine.adaptive_unavailable", reason="adaptive is for self-hosted servers")
        return
    for endpoint in pool.endpoints:
        tg.start_soon(
            partial(
                run_adaptive,
                endpoint.limiter,
                endpoint.base_url,
                endpoint.model,
                int(endpoint.limiter.total_tokens),
                interval_s=config.adaptive_interval_s,
            )
        )
