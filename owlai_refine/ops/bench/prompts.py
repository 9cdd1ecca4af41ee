"""Benchmark prompts of a chosen length in real tokens, each behind a unique prefix.

A prompt is two chat messages, shaped like a refine call (instructions, then text)::

    system: "[bench <32 hex digits>] Rewrite the user's text ..."   <- unique per request
    user:   <body: deterministic filler words, sized to the target>

The unique prefix comes first so that no KV-cache block is shared between requests (vLLM's
prefix cache matches whole blocks from the start, 16 tokens on GPU and 128 on CPU; only the
chat template's few opening tokens precede it). Lengths are real: :func:`fit_body` measures the
templated prompt with a token counter (vLLM's ``/tokenize``, or ``usage.prompt_tokens`` of a
one-token request) and adjusts the body until the count is within tolerance of the target.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from openai.types.chat import ChatCompletionMessageParam

__all__ = ["FittedPrompt", "TokenCounter", "fit_body", "make_body", "make_messages", "new_prefix"]

Messages = list[ChatCompletionMessageParam]
TokenCounter = Callable[[Messages], Awaitable[int]]
"""An async function returning the prompt tokens of a message list, chat template applied."""

_INSTRUCTION = (
    "Rewrite the user's text for clarity. Keep its meaning, facts and numbers. "
    "Return only the rewritten text."
)
_WORD_TEXT = (
    "the report finds that demand grew across regions while costs fell during the period "
    "analysts expect further gains as supply chains recover and new capacity comes online "
    "however risks remain including rates energy prices trade policy and weather events "
    "survey data show households spending more on services than goods for a third year "
    "firms plan to invest in automation software training and cleaner production methods"
)
_WORDS = tuple(_WORD_TEXT.split())


def new_prefix() -> str:
    """A fresh unique prefix, always 41 characters: ``"[bench <32 hex digits>] "``."""
    return f"[bench {uuid.uuid4().hex}] "


def make_body(n_words: int, seed: int = 0) -> str:
    """``n_words`` filler words drawn deterministically from a fixed pool (same seed, same
    text), with a full stop every 12 words. Raises ``ValueError`` if ``n_words < 1``."""
    if n_words < 1:
        raise ValueError(f"a body needs at least one word, got {n_words}")
    rng = random.Random(seed)
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    for i in range(11, n_words, 12):
        words[i] += "."
    return " ".join(words)


def make_messages(prefix: str, body: str) -> Messages:
    """The chat messages of one benchmark request: unique ``prefix`` first, then ``body``."""
    return [
        {"role": "system", "content": prefix + _INSTRUCTION},
        {"role": "user", "content": body},
    ]


@dataclass(frozen=True, slots=True)
class FittedPrompt:
    """A body sized to ``target`` tokens: ``measured`` is the templated prompt's real count
    (tokens, with a sample prefix), ``body`` the text to put behind each request's prefix."""

    target: int
    measured: int
    body: str


async def fit_body(
    count: TokenCounter,
    target: int,
    *,
    tolerance: float = 0.01,
    max_rounds: int = 8,
    seed: int = 0,
) -> FittedPrompt:
    """Find a body whose templated prompt is within ``max(2, tolerance * target)`` tokens of
    ``target`` (or the closest seen after ``max_rounds`` measurements).

    Each round measures a candidate and rescales the word count by the observed tokens per
    word. Raises ``ValueError`` if ``target`` is smaller than the prompt with a one-word body.
    """
    prefix = new_prefix()
    floor = await count(make_messages(prefix, make_body(1, seed)))
    if target < floor:
        raise ValueError(f"target {target} tokens is below the minimal prompt ({floor} tokens)")
    slack = max(2, int(tolerance * target))
    words = max(1, round((target - floor) / 1.3) + 1)
    body = make_body(words, seed)
    measured = await count(make_messages(prefix, body))
    best = FittedPrompt(target=target, measured=measured, body=body)
    for _ in range(max_rounds - 1):
        if abs(measured - target) <= slack:
            break
        per_word = max((measured - floor) / max(words - 1, 1), 0.1)
        step = round((target - measured) / per_word)
        words = max(1, words + (step if step else (1 if target > measured else -1)))
        body = make_body(words, seed)
        measured = await count(make_messages(prefix, body))
        if abs(measured - target) < abs(best.measured - target):
            best = FittedPrompt(target=target, measured=measured, body=body)
    return best
