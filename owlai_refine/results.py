"""What a refine run returns: the whole report, and what happened to each block."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from owlai_refine.truncation import cut_by, is_truncated
from owlai_refine.usage import NO_USAGE, USAGE_FIELDS, Usage, UsageFields

__all__ = [
    "BlockOutcome",
    "OutcomeStatus",
    "RefineResult",
    "TokenTotals",
    "cut_by",
    "is_truncated",
]


MORE_REASONS = "and more"
"""The group of the guard's closing reason when it had more than it lists (``and more: 3``):
a count, not a group of reasons (``owlai_refine.guard.MAX_REASONS``)."""


class OutcomeStatus(StrEnum):
    """What happened to a block. Only ``refined`` changes the report; every other status keeps
    the block's original text."""

    REFINED = "refined"
    """The model's reply passed the guard and replaced the block."""
    UNCHANGED = "unchanged"
    """The model returned the same text (after normalising whitespace)."""
    SKIPPED = "skipped"
    """Never sent; ``reason`` says why (a ``SkipReason`` value)."""
    TRUNCATED = "truncated"
    """The reply was cut by the output cap (``finish_reason == "length"``, or it used exactly
    the ``max_tokens`` asked for). Logged as a WARNING."""
    REJECTED = "rejected"
    """The guard refused the reply; ``reason`` lists why. Logged as a WARNING."""
    FAILED = "failed"
    """No usable reply after retries, or never sent because the run stopped early; ``reason``
    holds the last error. Logged as an ERROR."""


class BlockOutcome(UsageFields, BaseModel):
    """One block's fate. :attr:`usage` is the last attempt's (token counts from the server's
    ``usage``); its fields read flat too (``outcome.completion_tokens``), and may be given flat
    (``BlockOutcome(..., completion_tokens=12)``) and are dumped flat (``model_dump``)."""

    model_config = ConfigDict(frozen=True)

    block_id: int
    kind: str
    line_span: tuple[int, int]
    """Source lines, 0-based, ``[start, end)``."""
    status: OutcomeStatus
    reason: str | None = None
    """Skip reason, guard reasons (``;``-separated), or the last error."""
    reasons: tuple[str, ...] = ()
    """For a ``rejected`` block, each of the guard's reasons as text (see
    ``owlai_refine.guard``)."""
    reason_groups: tuple[str, ...] = ()
    """The stable group of each of :attr:`reasons`, in the same order (``"lost citation"``,
    ``"changed degree"``): what logs and summaries count."""
    request_id: str | None = None
    """The ``X-Request-Id`` of the last request sent for this block."""

    @property
    def groups(self) -> tuple[str, ...]:
        """The distinct groups of :attr:`reason_groups`, in order, without ``"and more"`` (the
        closing reason that counts the reasons not listed: not a group of its own). The first
        is the group the run's summary counts the block under."""
        return tuple(dict.fromkeys(g for g in self.reason_groups if g != MORE_REASONS))

    attempts: int = 0
    max_tokens: int | None = None
    usage: Usage = NO_USAGE
    """The last attempt's :class:`~owlai_refine.usage.Usage` (unknown, every field ``None``,
    for a block never answered)."""
    text: str | None = None
    """The new text (prefix-free) for a ``refined`` block; ``None`` otherwise."""
    reply: str | None = None
    """The reply that was not used, as the model sent it (``<think>`` removed): the one the
    guard refused for a ``rejected`` block, the cut one for a ``truncated`` block; ``None``
    otherwise. Kept for review (``refine --review``); never logged."""

    @model_validator(mode="before")
    @classmethod
    def _usage_given_flat(cls, data: Any) -> Any:
        """``prompt_tokens=`` and the other fields of :class:`Usage` given flat (as the model
        is dumped) go into :attr:`usage`."""
        if not isinstance(data, dict) or data.keys().isdisjoint(USAGE_FIELDS):
            return data
        data = dict(data)
        usage = data.get("usage", NO_USAGE)
        usage = usage.model_dump() if isinstance(usage, Usage) else dict(usage)
        data["usage"] = usage | {name: data.pop(name) for name in USAGE_FIELDS if name in data}
        return data

    @model_serializer(mode="wrap")
    def _usage_dumped_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The dump with :attr:`usage`'s fields in its place, flat (``"prompt_tokens": 12``)."""
        flat: dict[str, Any] = {}
        for key, value in handler(self).items():
            flat.update(value if key == "usage" else {key: value})
        return flat


class TokenTotals(BaseModel):
    """Tokens summed over every request of a run (failed attempts included when the server
    reported usage)."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    """Prompt tokens the server served from its prefix cache; ``None`` (unknown, not zero)
    when no reply reported it: vLLM sends ``usage.prompt_tokens_details.cached_tokens`` only
    when started with ``--enable-prompt-tokens-details``."""
    requests: int = 0


class RefineResult(BaseModel):
    """A finished run. ``text`` is always the whole report: refined blocks spliced in, every
    other byte as it was."""

    model_config = ConfigDict(frozen=True)

    report_id: str
    text: str
    outcomes: tuple[BlockOutcome, ...]
    """One per block, in document order."""
    tokens: TokenTotals
    elapsed_s: float
    stop_reason: str | None = None
    """Why the run stopped sending before every block was tried (e.g. the server went away);
    ``None`` when every block to send was tried."""
    stopped_by: Literal["connection_failures", "limiter"] | None = None
    """``"connection_failures"`` (the server went away) or ``"limiter"`` (the shared limiter
    failed), when ``stop_reason`` is set."""

    @property
    def counts(self) -> dict[str, int]:
        """Blocks per status, e.g. ``{"refined": 40, "skipped": 12, ...}`` (every status listed)."""
        seen = Counter(o.status.value for o in self.outcomes)
        return {s.value: seen.get(s.value, 0) for s in OutcomeStatus}

    @property
    def failed(self) -> tuple[BlockOutcome, ...]:
        """The ``failed`` outcomes: blocks that got no usable reply."""
        return tuple(o for o in self.outcomes if o.status is OutcomeStatus.FAILED)

    @property
    def ok(self) -> bool:
        """The plain verdict: True when no block ``failed`` and the run was not stopped
        (``stopped_by is None``). Every block was then sent and answered, or skipped on
        purpose; each one is ``refined``, ``unchanged``, ``skipped``, ``truncated`` or
        ``rejected`` (the last two kept their text, as :attr:`outcomes` say, and are not
        failures: the model answered and the guard judged). False means some block got no
        usable reply (see :attr:`failed` and :attr:`stop_reason`): the report is whole but
        not every block was refined."""
        return not self.failed and self.stopped_by is None

    @property
    def partial(self) -> bool:
        """True if any block failed: the report is whole, but not every block was tried."""
        return bool(self.failed)
