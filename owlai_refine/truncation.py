"""When a reply counts as cut by the output cap, and by whom: the one rule for the ``truncated``
outcome (:mod:`owlai_refine.results`) and for ``refine stats``' truncation rate. No pydantic, so
that ``refine stats`` loads no result models."""

from __future__ import annotations

from typing import Literal

__all__ = ["cut_by", "is_truncated"]


def is_truncated(
    finish_reason: str | None, completion_tokens: int | None, max_tokens: int | None
) -> bool:
    """Whether a reply was cut by the output cap: ``finish_reason == "length"``, or it used
    exactly the ``max_tokens`` asked for (some servers say ``stop`` then). The one rule for the
    ``truncated`` outcome and for ``refine stats``' truncation rate."""
    return finish_reason == "length" or (
        completion_tokens is not None and completion_tokens == max_tokens
    )


def cut_by(
    finish_reason: str | None, completion_tokens: int | None, max_tokens: int | None
) -> Literal["server", "request"] | None:
    """Who cut a truncated reply (:func:`is_truncated`): ``"server"`` when it stopped short
    of the ``max_tokens`` we asked (the server's own output cap, such as vLLM's
    ``--override-generation-config`` ``max_new_tokens``, or its window filling up): the fix is
    on the server, not in the block; ``"request"`` when it used our ``max_tokens``; ``None``
    when the reply was not cut."""
    if not is_truncated(finish_reason, completion_tokens, max_tokens):
        return None
    if completion_tokens is not None and max_tokens is not None and completion_tokens < max_tokens:
        return "server"
    return "request"
