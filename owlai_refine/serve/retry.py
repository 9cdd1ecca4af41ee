"""Retry policy and the run's circuit breaker.

Tenacity owns retries; this module builds its policy from :class:`RetryPolicy` and keeps the
:class:`Breaker` the block tasks of one run share: consecutive connection failures (which stop
a run whose server has gone) and the reason the run stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)
from tenacity.stop import stop_base

from owlai_refine.config import RetryPolicy
from owlai_refine.errors import BlockCallError, RetryableCallError

__all__ = ["Breaker", "RetryClock", "StopCause", "retrying"]


StopCause = Literal["connection_failures", "limiter"]
"""Why a run stopped sending: its breaker tripped, or the shared limiter failed."""


@dataclass
class Breaker:
    """One run's circuit breaker and its stop signal, shared by the run's block tasks.

    Counts consecutive connection failures (no HTTP answer at all); at
    ``max_connection_failures`` in a row the server looks gone and the run stops sending. The
    run also stops when its shared limiter fails (:meth:`trip`). Retry back-off waits
    (:meth:`sleep`) end early once it has stopped.
    """

    max_connection_failures: int
    consecutive_connection_failures: int = 0
    reason: str | None = None
    """Set once the run stops sending; blocks not yet sent then fail with this reason."""
    cause: StopCause | None = None
    """What stopped it, when ``reason`` is set."""
    stopped: anyio.Event = field(default_factory=anyio.Event)

    def note(self, error: BlockCallError | None) -> None:
        """Count a finished attempt: a connection failure (no HTTP answer) adds to the breaker,
        anything else resets it. Trips the breaker at ``max_connection_failures`` in a row."""
        if error is not None and error.connection:
            self.consecutive_connection_failures += 1
            if self.consecutive_connection_failures >= self.max_connection_failures:
                self.trip(
                    f"{self.consecutive_connection_failures} consecutive connection failures: "
                    f"the server looks gone (last: {error})",
                    cause="connection_failures",
                )
        else:
            self.consecutive_connection_failures = 0

    def trip(self, reason: str, *, cause: StopCause) -> None:
        """Stop sending; the first reason given is kept."""
        if self.reason is None:
            self.reason = reason
            self.cause = cause
            self.stopped.set()

    async def sleep(self, seconds: float) -> None:
        """A retry back-off wait (seconds) that ends early if the run stops."""
        with anyio.move_on_after(seconds):
            await self.stopped.wait()


def _wait(policy: RetryPolicy) -> Callable[[RetryCallState], float]:
    jitter = wait_random_exponential(multiplier=policy.initial_wait_s, max=policy.max_wait_s)

    def wait(state: RetryCallState) -> float:
        seconds = jitter(state)
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, BlockCallError) and exc.retry_after_s is not None:
            seconds = max(seconds, exc.retry_after_s)  # the server knows when it will have room
        return seconds * policy.wait_scale

    return wait


@dataclass
class RetryClock:
    """When a block's first request went out (``time.monotonic()``), so that the total-time
    bound counts from there, not from when the block started queueing for a slot."""

    first_sent: float | None = None

    def mark(self) -> None:
        """Note that a request is going out now (only the first call counts)."""
        if self.first_sent is None:
            self.first_sent = time.monotonic()


class _StopAfterTotal(stop_base):
    """Stop before an attempt that would start ``max_total_s`` seconds or more after the
    block's first request went out."""

    def __init__(self, max_total_s: float, clock: RetryClock) -> None:
        self.max_total_s = max_total_s
        self.clock = clock

    def __call__(self, retry_state: RetryCallState) -> bool:
        if self.clock.first_sent is None:
            return False
        upcoming = retry_state.upcoming_sleep or 0.0
        return time.monotonic() - self.clock.first_sent + upcoming >= self.max_total_s


def retrying(policy: RetryPolicy, breaker: Breaker, clock: RetryClock) -> AsyncRetrying:
    """Tenacity's retry loop for one block: retries :class:`RetryableCallError` with full-jitter
    exponential back-off (at least the server's ``Retry-After``), at most ``max_attempts``
    attempts, and no attempt starting more than ``max_total_s`` seconds after the block's first
    request went out (``clock``; time queued for a slot does not count); waits end early if the
    run stops (``breaker``); the last error is re-raised."""
    return AsyncRetrying(
        retry=retry_if_exception_type(RetryableCallError),
        stop=stop_after_attempt(policy.max_attempts) | _StopAfterTotal(policy.max_total_s, clock),
        wait=_wait(policy),
        sleep=breaker.sleep,
        reraise=True,
    )
