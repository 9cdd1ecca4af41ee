"""Retry policy and the run's shared state: back-off waits and the circuit breaker.

Tenacity owns retries; this module builds its policy from :class:`RetryPolicy` and keeps what
the block tasks of one run share: consecutive connection failures (the breaker that stops a run
whose server has gone), the reason the run stopped, and token totals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_random_exponential,
)

from owlai_refine.config import RetryPolicy
from owlai_refine.errors import BlockCallError, RefineError, RetryableCallError

__all__ = ["RunState", "retrying"]


@dataclass
class RunState:
    """What the block tasks of one run share."""

    max_connection_failures: int
    consecutive_connection_failures: int = 0
    stop_reason: str | None = None
    """Set once the run stops sending; blocks not yet sent then fail with this reason."""
    stopped_by: str | None = None
    """What stopped it: ``"connection_failures"`` (the breaker), ``"limiter"`` (the shared
    limiter failed) or ``"fatal"`` (an error that ends the run)."""
    fatal: RefineError | None = None
    """An error that ends the whole run (AuthError, CassetteMissError, LimiterError)."""
    stopped: anyio.Event = field(default_factory=anyio.Event)
    totals: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("prompt_tokens", "completion_tokens", "cached_tokens", "requests"), 0
        )
    )

    def note(self, error: BlockCallError | None) -> None:
        """Count a finished attempt: a connection failure (no HTTP answer) adds to the breaker,
        anything else resets it. Trips the breaker at ``max_connection_failures`` in a row."""
        if error is not None and error.connection:
            self.consecutive_connection_failures += 1
            if self.consecutive_connection_failures >= self.max_connection_failures:
                self.stop(
                    f"{self.consecutive_connection_failures} consecutive connection failures: "
                    f"the server looks gone (last: {error})",
                    by="connection_failures",
                )
        else:
            self.consecutive_connection_failures = 0

    def stop(self, reason: str, *, by: str) -> None:
        """Stop sending; the first reason given is kept."""
        if self.stop_reason is None:
            self.stop_reason = reason
            self.stopped_by = by
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


def retrying(policy: RetryPolicy, state: RunState) -> AsyncRetrying:
    """Tenacity's retry loop for one block: retries :class:`RetryableCallError` with full-jitter
    exponential back-off (at least the server's ``Retry-After``), at most ``max_attempts``
    attempts and no attempt starting after ``max_total_s`` seconds; waits end early if the run
    stops; the last error is re-raised."""
    return AsyncRetrying(
        retry=retry_if_exception_type(RetryableCallError),
        stop=stop_after_attempt(policy.max_attempts) | stop_before_delay(policy.max_total_s),
        wait=_wait(policy),
        sleep=state.sleep,
        reraise=True,
    )
