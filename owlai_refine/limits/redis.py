"""A slot limiter shared by many worker processes and hosts, kept in Redis.

:class:`RedisLimiter` satisfies :class:`owlai_refine.limits.limiter.SlotLimiter`: ``async with
limiter:`` waits for and holds one of ``slots`` slots for one endpoint (base URL + model),
counted across every process that uses the same Redis database and endpoint key. It needs the
optional extra ``owlai-refine[redis]`` and the asyncio event loop (``redis.asyncio``). All time
parameters are in seconds.

Slots are leases
    A slot is a lease with an expiry, kept in a Redis sorted set scored by expiry (server time,
    so worker clocks may disagree). While a request runs, one background task per limiter renews
    all of its leases every ``lease_s / 3``. A worker killed with SIGKILL stops renewing, so its
    slots come back at most ``lease_s`` after its last renewal; waiters notice at once if any
    other worker's renewal or poll sweeps the expired lease (sweeps publish a wake-up), otherwise
    at their next poll (at most ``lease_s / 3`` later). Acquisition, renewal, release and expiry
    cleanup are Lua scripts (``owlai_refine.limits._redis_scripts``), each atomic on the server.

Fairness (what is guaranteed)
    Admission is first come, first served by ticket across all limiter instances on the same
    endpoint key and Redis database: a waiter takes a ticket (a number from ``INCR``) the first
    time it reaches Redis, the ticket at queue rank ``r`` is admitted only while ``r`` is below
    the number of free slots, and so a later ticket never takes a slot that an earlier live
    ticket is waiting for. Each ``RedisLimiter`` instance keeps at most **one** ticket in the
    queue; its other waiting tasks wait in-process in arrival order (``anyio.Lock`` hands over in
    FIFO order) and take a ticket only after the one before them is admitted. Between instances
    admission is therefore round-robin: while ``k`` instances wait, each of them gets its next
    slot after at most ``k - 1`` slots go to the others, as long as slots keep coming free
    (released, or their leases expire). A worker flooding the endpoint with a 2,000-block report
    gets at most one slot for each slot a 20-block report in another worker gets while both wait,
    so the small report needs about 2 x 20 admissions, not 2,000. Fairness is per limiter
    instance (per worker process with one limiter per endpoint), not per report: reports in one
    process share its FIFO. Two exceptions, both bounded by ``lease_s``: a waiter entry whose
    process died blocks the tickets behind it until it expires (``lease_s`` after its last poll),
    and a live waiter that could not poll Redis for ``lease_s`` (a stalled event loop) loses its
    ticket and queues again at the back (WARNING ``limiter.ticket_expired``).

Waiting
    A waiting instance subscribes to the endpoint's pub/sub channel and sleeps until a slot or a
    ticket is released, then tries again; it also polls every ``lease_s / 3`` x U(0.5, 1) with
    jitter, because lease expiry publishes nothing by itself and its waiter entry must be kept
    alive. Pub/sub rather than polling alone: a freed slot is taken within one round trip instead
    of after a poll interval, without hammering Redis. Only the one waiting task per instance
    listens, so there is one subscription per waiting instance, closed when no task waits.

The cap in force
    Every worker should ask for the same ``slots``. If live instances disagree, the smallest
    count wins (a cap only ever protects the server) and WARNING ``limiter.slots_conflict`` is
    logged; a holder's count is forgotten ``lease_s`` after it last acquired or renewed.

Failure: fail closed
    A slot is granted only when the acquisition script has answered "admitted"; any Redis error
    while taking a slot (connection refused, Redis stopped, timeout after ``timeout_s``) raises
    :class:`~owlai_refine.errors.LimiterError` with a one-line message, and the request is not
    sent. Giving a slot back is best effort: if Redis is gone, WARNING ``limiter.release_failed``
    is logged and the lease simply expires. If renewal fails while a request is in flight, the
    request has already been sent and goes on (it is not cancelled); WARNING
    ``limiter.renew_failed`` is logged, and once the lease has gone unrenewed for ``lease_s`` (or
    Redis reports it gone, e.g. after a restart that lost its data) WARNING ``limiter.lease_lost``
    is logged: the slot may then be reissued, so the endpoint can briefly see more requests than
    the cap until the orphaned request ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import os
import random
import secrets
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, cast
from urllib.parse import urlsplit

import anyio
import structlog
from redis import asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import RedisError
from redis.retry import Retry

from owlai_refine.config import redact_url
from owlai_refine.errors import ConfigError, LimiterError
from owlai_refine.limits import _redis_scripts as lua

__all__ = ["LimiterSnapshot", "RedisLimiter", "key_prefix_for"]

_log = structlog.get_logger("owlai_refine")

# AsyncScript.__call__ carries no annotations; this is its shape.
_Script = Callable[..., Awaitable[Any]]

_SCHEMES = ("redis", "rediss", "unix")
_RELEASE_TIMEOUT_S = 2.0  # bound on a shielded give-back, so a dead Redis cannot hang a task


@dataclass(frozen=True)
class LimiterSnapshot:
    """What Redis holds for one endpoint at one moment (expired entries swept first).

    ``held``: slots held by all workers; ``queued``: tickets waiting; ``cap``: the slot count in
    force (smallest asked for by a live holder), or ``None`` when no holder is registered.
    """

    held: int
    queued: int
    cap: int | None


def key_prefix_for(endpoint_key: str) -> str:
    """The prefix of every Redis key and channel the limiter uses for ``endpoint_key``.

    The endpoint key (base URL + model) is hashed (SHA-256, 16 hex digits), so no URL appears
    in Redis; the braces make the digest a Redis Cluster hash tag (all keys in one slot).
    """
    digest = hashlib.sha256(endpoint_key.encode()).hexdigest()[:16]
    return f"owlai_refine:limiter:{{{digest}}}:"


def _default_holder_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


async def _close_pubsub(pubsub: PubSub) -> None:
    """Close a subscription, shielded from cancellation; errors are moot (it is going away)."""
    aclose = cast(Callable[[], Awaitable[None]], pubsub.aclose)  # redis-py leaves it unannotated
    with anyio.CancelScope(shield=True), contextlib.suppress(RedisError, OSError):
        await aclose()


class RedisLimiter:
    """A slot limiter for one endpoint, shared through Redis by every worker that uses it.

    ``url``: ``redis://HOST:PORT/DB`` (also ``rediss://`` and ``unix://``). ``endpoint_key``:
    identifies the endpoint (base URL + model); it is hashed into the Redis key names, so every
    worker must build it the same way. ``slots``: requests in flight at once, over all workers.
    ``lease_s``: seconds a slot stays held without renewal (renewed every ``lease_s / 3``); a
    killed worker's slots come back within it, and it must exceed the longest event-loop stall
    you expect. ``holder_id``: names this instance in Redis (default ``host:pid:random``); must
    be unique per instance. ``timeout_s``: socket connect/read timeout for Redis calls.

    Raises :class:`~owlai_refine.errors.ConfigError` for a bad URL or parameter (at
    construction); :class:`~owlai_refine.errors.LimiterError` when Redis fails while a slot is
    being taken (see the module docstring for fairness and failure guarantees).

    The instance is bound to the event loop it is first used in (as ``redis.asyncio`` clients
    are): keep one per endpoint per loop, and ``await aclose()`` when done.
    """

    def __init__(
        self,
        url: str,
        endpoint_key: str,
        slots: int,
        *,
        lease_s: float = 30.0,
        holder_id: str | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        if urlsplit(url).scheme not in _SCHEMES:
            raise ConfigError(f"limiter URL must look like redis://HOST:PORT/DB, got {url!r}")
        if slots < 1:
            raise ConfigError(f"a limiter needs at least 1 slot, got {slots}")
        if not 0.1 <= lease_s <= 3600:
            raise ConfigError(f"lease_s must be between 0.1 and 3600 seconds, got {lease_s}")
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s must be positive, got {timeout_s}")
        self._url = str(redact_url(url))
        self._slots = slots
        self._lease_s = lease_s
        self._lease_ms = round(lease_s * 1000)
        self._timeout_s = timeout_s
        self.holder_id = holder_id or _default_holder_id()
        self.endpoint_key = endpoint_key
        self.key_prefix = key_prefix_for(endpoint_key)
        self._keys = [self.key_prefix + suffix for suffix in lua.KEY_SUFFIXES]
        self._channel = self.key_prefix + "released"
        try:
            self._redis = aioredis.Redis.from_url(
                url,
                socket_timeout=timeout_s,
                socket_connect_timeout=timeout_s,
                # Few, quick retries: a limiter that is down should say so within seconds.
                retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), retries=2),
            )
        except ValueError as exc:
            raise ConfigError(f"bad limiter URL {self._url}: {_one_line(exc)}") from exc
        self._acquire = cast(_Script, self._redis.register_script(lua.ACQUIRE))
        self._renew = cast(_Script, self._redis.register_script(lua.RENEW))
        self._release = cast(_Script, self._redis.register_script(lua.RELEASE))
        self._snapshot = cast(_Script, self._redis.register_script(lua.SNAPSHOT))
        self._queue_lock = anyio.Lock()  # local FIFO: one ticket in Redis per instance
        self._pubsub: PubSub | None = None
        self._ids = itertools.count(1)
        self._leases: dict[str, float] = {}  # lease id -> monotonic time of its last renewal
        self._by_task: dict[int, list[str]] = {}
        self._renewer: asyncio.Task[None] | None = None
        self._cap_warned = False

    @property
    def total_tokens(self) -> float:
        """The number of slots this instance asks for (requests in flight, over all workers)."""
        return float(self._slots)

    def set_slots(self, slots: int) -> None:
        """Ask for ``slots`` from now on (the adaptive cap, :mod:`owlai_refine.serve.adaptive`).

        Registered at this instance's next acquisition or renewal; the smallest count asked for
        by a live instance is the cap in force, so a lower count shrinks the shared cap for
        every worker. Its slots_conflict WARNING is off from then on (a deliberate difference).
        Raises ``ValueError`` if ``slots < 1``.
        """
        if slots < 1:
            raise ValueError(f"a limiter needs at least 1 slot, got {slots}")
        self._slots = slots
        self._cap_warned = True

    @property
    def lease_s(self) -> float:
        """Seconds a slot stays held without renewal."""
        return self._lease_s

    def __repr__(self) -> str:
        return (
            f"RedisLimiter({self._url!r}, endpoint={self.endpoint_key!r}, slots={self._slots}, "
            f"lease_s={self._lease_s}, holder_id={self.holder_id!r})"
        )

    async def __aenter__(self) -> None:
        """Wait for and take one slot; the slot is renewed in the background until exit.

        Raises :class:`~owlai_refine.errors.LimiterError` if Redis fails meanwhile (no slot is
        held then). If cancelled while waiting, the ticket is withdrawn before re-raising.
        """
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("RedisLimiter needs the asyncio event loop") from None
        lease_id = f"{self.holder_id}#{next(self._ids)}"
        started = time.monotonic()
        try:
            async with self._queue_lock:
                granted_at = await self._take(lease_id)
        except LimiterError as exc:
            _log.error("limiter.redis_failed", endpoint=self.endpoint_key, error=str(exc))
            raise
        self._leases[lease_id] = granted_at
        self._by_task.setdefault(anyio.get_current_task().id, []).append(lease_id)
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(
                self._renew_loop(), name=f"owlai_refine.limits.redis.renew[{self.holder_id}]"
            )
        _log.debug(
            "limiter.acquired",
            endpoint=self.endpoint_key,
            lease_id=lease_id,
            waited_s=round(time.monotonic() - started, 4),
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Give the slot back. Never raises for Redis trouble: the failure is logged (WARNING
        ``limiter.release_failed``) and the lease expires by itself within ``lease_s``."""
        task_leases = self._by_task.get(anyio.get_current_task().id)
        if not task_leases:
            raise RuntimeError("this task holds no slot of this limiter")
        lease_id = task_leases.pop()
        if not task_leases:
            del self._by_task[anyio.get_current_task().id]
        self._leases.pop(lease_id, None)
        await self._give_back(lease_id, withdrawing=False)

    async def snapshot(self) -> LimiterSnapshot:
        """Sweep expired entries and report what Redis holds for this endpoint.

        Raises :class:`~owlai_refine.errors.LimiterError` if Redis cannot be reached.
        """
        held, queued, cap = await self._call(self._snapshot, [], "read the limiter state")
        return LimiterSnapshot(held=int(held), queued=int(queued), cap=None if cap < 0 else cap)

    async def aclose(self) -> None:
        """Stop renewing, close the subscription and the Redis connections.

        Leases still held (a misuse: close after the requests end) are not given back; they
        expire within ``lease_s``.
        """
        renewer, self._renewer = self._renewer, None
        if renewer is not None:
            renewer.cancel()
            await asyncio.wait({renewer})  # unlike awaiting it, never raises its CancelledError
        await self._unsubscribe()
        with contextlib.suppress(RedisError, OSError):
            await self._redis.aclose()

    # -- taking a slot ---------------------------------------------------------------------

    async def _take(self, lease_id: str) -> float:
        """Queue ``lease_id`` in Redis and wait until it is admitted (the local lock is held).

        Returns the monotonic time the admitting call was sent (the lease runs from then on).
        On any exception the ticket (or a lease granted in a reply that never arrived) is
        withdrawn, unless Redis failed before ever answering (then nothing of ours is queued,
        or a ghost entry expires by itself within ``lease_s``).
        """
        queued = False
        try:
            while True:
                sent_at = time.monotonic()
                admitted, rank, cap, held, ticket_lost = await self._call(
                    self._acquire,
                    [lease_id, self.holder_id, self._slots, self._lease_ms, int(queued)],
                    "take a slot",
                )
                self._note_cap(int(cap))
                if ticket_lost:
                    _log.warning(
                        "limiter.ticket_expired",
                        endpoint=self.endpoint_key,
                        lease_id=lease_id,
                        lease_s=self._lease_s,
                        note="this waiter did not poll Redis within the lease time; queued again",
                    )
                if admitted:
                    if self._queue_lock.statistics().tasks_waiting == 0:
                        await self._unsubscribe()
                    return sent_at
                if not queued:
                    _log.debug(
                        "limiter.waiting",
                        endpoint=self.endpoint_key,
                        lease_id=lease_id,
                        rank=int(rank),
                        held=int(held),
                    )
                queued = True
                if self._pubsub is None:
                    await self._subscribe()
                    continue  # a slot may have come free before we listened: look again now
                await self._wait_for_release(self._pubsub)
        except BaseException as exc:
            if queued or not isinstance(exc, LimiterError):
                await self._give_back(lease_id, withdrawing=True)
            raise

    async def _subscribe(self) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(self._channel)
        except (RedisError, OSError) as exc:
            await _close_pubsub(pubsub)
            raise self._error("subscribe to release notices", exc) from exc
        self._pubsub = pubsub

    async def _unsubscribe(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            await _close_pubsub(pubsub)

    async def _wait_for_release(self, pubsub: PubSub) -> None:
        """Sleep until a release notice or the poll interval (with jitter) passes."""
        timeout = self._lease_s / 3 * random.uniform(0.5, 1.0)
        try:
            message = await pubsub.get_message(timeout=timeout)
            for _ in range(100):  # drain notices that piled up; one more try covers them all
                if message is None:
                    break
                message = await pubsub.get_message(timeout=0)
        except (RedisError, OSError) as exc:
            await self._unsubscribe()
            raise self._error("wait for a free slot", exc) from exc
        except BaseException:
            await self._unsubscribe()  # a read cut short leaves the connection unusable
            raise

    def _note_cap(self, cap: int) -> None:
        if cap != self._slots and not self._cap_warned:
            self._cap_warned = True
            _log.warning(
                "limiter.slots_conflict",
                endpoint=self.endpoint_key,
                slots=self._slots,
                slots_in_force=cap,
                note="workers ask for different slot counts; the smallest wins",
            )

    # -- giving back -----------------------------------------------------------------------

    async def _give_back(self, lease_id: str, *, withdrawing: bool) -> None:
        """Release a lease or withdraw a ticket; shielded and bounded, logs instead of raising."""
        action = "withdraw a ticket" if withdrawing else "give a slot back"
        try:
            with anyio.CancelScope(shield=True), anyio.fail_after(_RELEASE_TIMEOUT_S):
                await self._call(self._release, [lease_id], action)
        except (LimiterError, TimeoutError) as exc:
            _log.warning(
                "limiter.release_failed",
                endpoint=self.endpoint_key,
                lease_id=lease_id,
                withdrawing=withdrawing,
                error=_one_line(exc),
                note=f"Redis drops the entry by itself within {self._lease_s} s",
            )
        else:
            _log.debug("limiter.released", endpoint=self.endpoint_key, lease_id=lease_id)

    # -- renewal ---------------------------------------------------------------------------

    async def _renew_loop(self) -> None:
        """Renew every held lease each ``lease_s / 3`` until none is held."""
        while self._leases:
            await anyio.sleep(self._lease_s / 3)
            if not self._leases:
                return
            try:
                await self._renew_once()
            except Exception as exc:  # a background task must not die silently
                _log.error("limiter.renewer_crashed", endpoint=self.endpoint_key, error=repr(exc))

    async def _renew_once(self) -> None:
        ids = list(self._leases)
        sent_at = time.monotonic()
        try:
            lost = await self._call(
                self._renew, [self.holder_id, self._slots, self._lease_ms, *ids], "renew leases"
            )
        except LimiterError as exc:
            _log.warning(
                "limiter.renew_failed",
                endpoint=self.endpoint_key,
                leases=len(ids),
                error=_one_line(exc),
            )
            for lease_id in ids:
                last = self._leases.get(lease_id)
                if last is not None and sent_at - last >= self._lease_s:
                    self._lose(lease_id, "not renewed within the lease time (Redis unreachable)")
            return
        lost_ids = {item.decode() if isinstance(item, bytes) else str(item) for item in lost}
        for lease_id in ids:
            if lease_id in lost_ids:
                self._lose(lease_id, "Redis no longer holds it (expired, or Redis lost its data)")
            elif lease_id in self._leases:
                self._leases[lease_id] = sent_at

    def _lose(self, lease_id: str, reason: str) -> None:
        if self._leases.pop(lease_id, None) is None:
            return
        _log.warning(
            "limiter.lease_lost",
            endpoint=self.endpoint_key,
            lease_id=lease_id,
            reason=reason,
            lease_s=self._lease_s,
            note="the request in flight goes on; its slot may be given to another request, so "
            "the endpoint can see one request over the cap until this one ends",
        )

    # -- Redis calls -----------------------------------------------------------------------

    async def _call(self, script: _Script, args: Sequence[object], action: str) -> Any:
        try:
            return await script(keys=self._keys, args=[self._channel, *args])
        except (RedisError, OSError) as exc:
            raise self._error(action, exc) from exc

    def _error(self, action: str, exc: BaseException) -> LimiterError:
        return LimiterError(f"Redis slot limiter at {self._url}: cannot {action}: {_one_line(exc)}")
