"""Slot limiters: the cap on requests in flight to one endpoint.

A *slot* is one request in flight. The refiner holds a slot only while a request is on the wire;
retry back-off waits happen outside it. Every limiter is an async context manager::

    async with limiter:      # waits for a free slot
        await send_request()

The default is one ``anyio.CapacityLimiter`` per endpoint, owned by the
:class:`~owlai_refine.pipeline.refiner.Refiner` that opened it: every report refined through that
``Refiner`` shares it, so two reports refined at once against one vLLM server still send at
most ``max_num_seqs`` requests. There is no process-wide registry: to share a cap, share the
``Refiner`` or pass the same limiter (the Redis one shares it across processes and hosts).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType
from typing import Protocol, runtime_checkable

import anyio
import structlog

from owlai_refine.errors import ConfigError

__all__ = ["SlotLimiter", "open_limiter"]

_log = structlog.get_logger("owlai_refine")


@runtime_checkable
class SlotLimiter(Protocol):
    """What the refiner needs of a limiter: ``async with`` takes one slot, ``total_tokens`` is
    the number of slots. ``anyio.CapacityLimiter`` satisfies it, and so does the Redis limiter."""

    @property
    def total_tokens(self) -> float:
        """The number of slots (requests in flight at once)."""
        ...

    async def __aenter__(self) -> object:
        """Wait for and take one slot."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        """Give the slot back."""
        ...


def open_limiter(
    url: str | None, endpoint_key: str, slots: int, *, lease_s: float, stack: AsyncExitStack
) -> SlotLimiter:
    """A new limiter for one endpoint: an ``anyio.CapacityLimiter(slots)`` (``url=None``), or a
    :class:`~owlai_refine.limits.redis.RedisLimiter` shared through ``url``
    (``redis://HOST:PORT/DB``) with ``lease_s`` seconds leases, closed when ``stack`` closes.

    Raises :class:`~owlai_refine.errors.ConfigError` if the ``redis`` extra is missing or the
    URL is unusable.
    """
    if slots < 1:
        raise ValueError(f"a limiter needs at least 1 slot, got {slots}")
    if url is None:
        return anyio.CapacityLimiter(slots)
    try:
        from owlai_refine.limits.redis import RedisLimiter  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise ConfigError(
            "a Redis limiter needs the redis extra: pip install 'owlai-refine[redis]'"
        ) from exc
    limiter = RedisLimiter(url, endpoint_key, slots, lease_s=lease_s)
    stack.push_async_callback(limiter.aclose)
    return limiter
