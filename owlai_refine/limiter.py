"""Slot limiters: the cap on requests in flight to one endpoint.

A *slot* is one request in flight. The refiner holds a slot only while a request is on the wire;
retry back-off waits happen outside it. Every limiter is an async context manager::

    async with limiter:      # waits for a free slot
        await send_request()

The default is one ``anyio.CapacityLimiter`` per endpoint (base URL + model) and per event loop,
kept in a process-wide registry so that every refine running in the process shares it: two
reports refined at once against one vLLM server still send at most ``max_num_seqs`` requests.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from types import TracebackType
from typing import Protocol, runtime_checkable

import anyio
import structlog
from anyio.lowlevel import RunVar

from owlai_refine.errors import ConfigError

__all__ = ["SlotLimiter", "limiter_for", "open_limiter", "reset_limiters"]

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


# endpoint key -> limiter, one dict per event loop: an anyio limiter belongs to the loop that
# created it, and the sync wrapper starts a fresh loop per call (RunVar: a per-loop variable).
_limiters: RunVar[dict[str, anyio.CapacityLimiter]] = RunVar("owlai_refine_limiters")
_generation = 0  # bumped by reset_limiters(); a loop's dict from an older generation is dropped
_generations: RunVar[int] = RunVar("owlai_refine_limiters_generation")


def limiter_for(endpoint_key: str, slots: int) -> anyio.CapacityLimiter:
    """Return the process-wide limiter for ``endpoint_key`` in the running event loop.

    ``endpoint_key`` identifies the endpoint (base URL and model). The first call creates a
    limiter with ``slots`` slots; later calls return the same object. If a later call asks for
    a different size, the existing size is kept (a cap only ever protects the server) and a
    WARNING ``refine.limiter_conflict`` is logged.

    Must be called inside a running event loop. Raises ``ValueError`` if ``slots < 1``.
    """
    if slots < 1:
        raise ValueError(f"a limiter needs at least 1 slot, got {slots}")
    try:
        per_loop = _limiters.get()
        if _generations.get() != _generation:
            raise LookupError
    except LookupError:
        per_loop = {}
        _limiters.set(per_loop)
        _generations.set(_generation)
    limiter = per_loop.get(endpoint_key)
    if limiter is None:
        limiter = per_loop[endpoint_key] = anyio.CapacityLimiter(slots)
    elif limiter.total_tokens != slots:
        _log.warning(
            "refine.limiter_conflict",
            endpoint=endpoint_key,
            slots=int(limiter.total_tokens),
            requested_slots=slots,
        )
    return limiter


def reset_limiters() -> None:
    """Forget every registered limiter (for tests that change a cap between runs)."""
    global _generation  # noqa: PLW0603 - the registry is the one documented module-level state
    _generation += 1


def open_limiter(
    url: str | None, endpoint_key: str, slots: int, *, lease_s: float, stack: AsyncExitStack
) -> SlotLimiter:
    """The limiter for one endpoint: the process-wide in-process one (``url=None``), or a
    :class:`~owlai_refine.redis_limiter.RedisLimiter` shared through ``url``
    (``redis://HOST:PORT/DB``) with ``lease_s`` seconds leases, closed when ``stack`` closes.

    Raises :class:`~owlai_refine.errors.ConfigError` if the ``redis`` extra is missing or the
    URL is unusable.
    """
    if url is None:
        return limiter_for(endpoint_key, slots)
    try:
        from owlai_refine.redis_limiter import RedisLimiter  # noqa: PLC0415 - optional extra
    except ImportError as exc:
        raise ConfigError(
            "a Redis limiter needs the redis extra: pip install 'owlai-refine[redis]'"
        ) from exc
    limiter = RedisLimiter(url, endpoint_key, slots, lease_s=lease_s)
    stack.push_async_callback(limiter.aclose)
    return limiter
