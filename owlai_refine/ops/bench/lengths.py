"""Planning a sweep: which input lengths, whether they fit the KV cache, how to count tokens.

Lengths come from ``--input-tokens`` or from ledger quantiles (:func:`ledger_lengths`), are
capped so input + output fits ``max_model_len`` (:func:`cap_lengths`), and are checked as
concurrency x (input + output) tokens against the KV capacity (:func:`kv_precheck`).
:class:`TokenCounterClient` measures real templated prompt lengths on the server.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx2
import openai

from owlai_refine.errors import InputError
from owlai_refine.ops.bench.prompts import Messages
from owlai_refine.ops.ledger import read_ledgers
from owlai_refine.ops.quantiles import quantiles
from owlai_refine.serve.server import ServerError, ServerUrls, tokenize_count

__all__ = ["TokenCounterClient", "cap_lengths", "kv_precheck", "ledger_lengths"]


def ledger_lengths(paths: list[str], qs: list[float], model: str) -> tuple[list[int], str]:
    """Input lengths (tokens) at quantiles ``qs`` of the ledger's ``prompt_tokens``, using the
    calls of ``model`` if any, else every call. Returns the lengths and a note saying which.
    Raises ``InputError`` when the ledger has no call with usage."""
    read = read_ledgers(paths)
    own = [c.prompt_tokens for c in read.calls if c.model == model and c.prompt_tokens]
    pool = own or [c.prompt_tokens for c in read.calls if c.prompt_tokens]
    if not pool:
        raise InputError("the ledger has no refine.call line with prompt_tokens")
    values = [round(v) for v in quantiles(pool, qs)]
    scope = f"model {model}" if own else "all models"
    qtext = ", ".join(f"p{q * 100:g}" for q in qs)
    return values, f"ledger {qtext} of {len(pool)} calls ({scope}): {values}"


class TokenCounterClient:
    """Counts templated prompt tokens; an async callable, messages -> tokens.

    Uses vLLM's ``/tokenize`` while it answers, else the ``usage.prompt_tokens`` of a one-token
    chat request; ``by`` names the method last used. Raises ``ServerError`` when neither works.
    """

    def __init__(
        self, http: httpx2.AsyncClient, client: openai.AsyncOpenAI, ep: ServerUrls, model: str
    ) -> None:
        self.http, self.client, self.ep, self.model = http, client, ep, model
        self.by = "/tokenize"

    async def __call__(self, messages: Messages) -> int:
        if self.by == "/tokenize":
            n = await tokenize_count(self.http, self.ep, self.model, messages)
            if n is not None:
                return n
            self.by = "usage.prompt_tokens"
        try:
            reply = await self.client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_tokens=1,
                temperature=0,
            )
        except openai.OpenAIError as exc:
            raise ServerError(f"token count request failed: {exc}", url=self.ep.v1) from exc
        if reply.usage is None:
            raise ServerError("the server reports no usage: cannot size prompts", url=self.ep.v1)
        return int(reply.usage.prompt_tokens)


def cap_lengths(
    lengths: list[int], output_tokens: int, max_len: int | None, warn: Callable[[str], None]
) -> list[int]:
    """``lengths`` (tokens) sorted and deduplicated, each capped at ``max_len -
    output_tokens`` (no cap when ``max_len`` is ``None``); ``warn`` hears of each cap."""
    if max_len is not None:
        cap = max_len - output_tokens
        for n in [n for n in lengths if n > cap]:
            warn(
                f"input {n:,} + output {output_tokens} exceeds max_model_len {max_len:,}: "
                f"capped at {cap:,}"
            )
        lengths = [min(n, cap) for n in lengths]
    return sorted(set(lengths))


def kv_precheck(
    lengths: list[int], concurrency: list[int], output_tokens: int, cap: int | None
) -> list[str]:
    """Warnings for each input length whose concurrency x (input + output) tokens exceeds the
    KV capacity ``cap`` (tokens; ``None``: one warning that it is unknown)."""
    if cap is None:
        return [
            "KV cache capacity unknown (no vllm:cache_config_info, no --server-log): "
            "cannot pre-check for preemption"
        ]
    out = []
    for n in lengths:
        over = [c for c in concurrency if c * (n + output_tokens) > cap]
        if over:
            need = over[0] * (n + output_tokens)
            out.append(
                f"input {n:,}: concurrency {over[0]} x ({n:,} + {output_tokens}) = {need:,} "
                f"tokens > KV capacity {cap:,}: vLLM will preempt (or hold requests waiting) "
                f"at concurrency {', '.join(map(str, over))}"
            )
    return out
