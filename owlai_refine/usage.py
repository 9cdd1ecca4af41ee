"""What one request cost and how it ended: the :class:`Usage` value.

Written once here, held as ``usage`` by the reply (:class:`~owlai_refine.serve.call.Reply`), the
ledger's event (:class:`~owlai_refine.events.CallFinished`), a block's outcome
(:class:`~owlai_refine.results.BlockOutcome`: its last attempt's) and the ledger reader's record
(:class:`~owlai_refine.ops.ledger.CallRecord`). Each of those also reads the fields under their
own flat names (:class:`UsageFields`: ``outcome.prompt_tokens``), which are the keys of the
JSON log's ``refine.call`` line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

__all__ = ["NO_USAGE", "USAGE_FIELDS", "Usage", "UsageFields"]


class Usage(BaseModel):
    """The server's token counts for one request (its ``usage`` object) and the times our
    client measured. Each is ``None`` when unknown: the server sent no such count, the request
    failed, or (times) it was never measured. Unknown is not zero."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int | None = None
    """Tokens in the prompt, as the server counted them (``usage.prompt_tokens``)."""
    completion_tokens: int | None = None
    """Tokens in the reply (``usage.completion_tokens``). For a stream we closed early without
    a count from the server: the content chunks received (about one token each)."""
    cached_tokens: int | None = None
    """Tokens of the prompt served from the server's prefix cache
    (``usage.prompt_tokens_details.cached_tokens``; vLLM sends it only when started with
    ``--enable-prompt-tokens-details``)."""
    finish_reason: str | None = None
    """The server's reason for ending the reply: ``"stop"``, ``"length"`` (cut by
    ``max_tokens`` or the server's own cap), or another it gives (``"content_filter"``).
    ``None``: no reply, or a stream we closed early."""
    latency_s: float | None = None
    """Seconds from just before the request was sent to the end of the reply."""
    ttft_s: float | None = None
    """Seconds from just before the request was sent to the first content token (streamed
    replies only)."""
    accepted_prediction_tokens: int | None = None
    """Predicted outputs: tokens of the prediction (the block) that the reply used
    (``usage.completion_tokens_details``); ``None`` without predicted outputs."""
    rejected_prediction_tokens: int | None = None
    """Predicted outputs: tokens of the prediction the reply did not use (billed as output)."""


NO_USAGE = Usage()
"""Nothing known: the usage of a request that got no reply (every field ``None``)."""

USAGE_FIELDS: tuple[str, ...] = tuple(Usage.model_fields)
"""The names of :class:`Usage`'s fields, in order: also the flat names its holders read them
under, and keys of the JSON log's ``refine.call`` line."""


class UsageFields:
    """The fields of :class:`Usage` as read-only attributes of a class that holds one as
    ``usage``: ``outcome.prompt_tokens`` is ``outcome.usage.prompt_tokens``."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def usage(self) -> Usage: ...

    @property
    def prompt_tokens(self) -> int | None:
        """:attr:`Usage.prompt_tokens`."""
        return self.usage.prompt_tokens

    @property
    def completion_tokens(self) -> int | None:
        """:attr:`Usage.completion_tokens`."""
        return self.usage.completion_tokens

    @property
    def cached_tokens(self) -> int | None:
        """:attr:`Usage.cached_tokens`."""
        return self.usage.cached_tokens

    @property
    def finish_reason(self) -> str | None:
        """:attr:`Usage.finish_reason`."""
        return self.usage.finish_reason

    @property
    def latency_s(self) -> float | None:
        """:attr:`Usage.latency_s`."""
        return self.usage.latency_s

    @property
    def ttft_s(self) -> float | None:
        """:attr:`Usage.ttft_s`."""
        return self.usage.ttft_s

    @property
    def accepted_prediction_tokens(self) -> int | None:
        """:attr:`Usage.accepted_prediction_tokens`."""
        return self.usage.accepted_prediction_tokens

    @property
    def rejected_prediction_tokens(self) -> int | None:
        """:attr:`Usage.rejected_prediction_tokens`."""
        return self.usage.rejected_prediction_tokens
