"""One model call: send a block's messages, read the reply, classify any failure.

The only module that talks to the network (through the injected ``openai.AsyncOpenAI``, built
with ``max_retries=0``: retries belong to the refiner, which waits outside the slot limiter).
"""

from __future__ import annotations

import email.utils
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypedDict, TypeVar

import httpx2
import openai

from owlai_refine.errors import AuthError, FatalCallError, RetryableCallError

__all__ = ["Reply", "Watchdog", "call_model", "parse_retry_after"]

_T = TypeVar("_T")

Watchdog = Callable[[str], str | None]
"""Called with the reply text received so far while streaming; returning a reason (for example
``"repetition"``) closes the stream at once, which frees the server's slot."""


class _Attempt(TypedDict):
    """Which request failed: what every block error is built with."""

    request_id: str
    attempt: int


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back for one request. Token counts come from the server's ``usage`` (``None``
    if it sent none); times are seconds from just before the request was sent."""

    content: str
    finish_reason: str | None
    """``"stop"``, ``"length"`` (cut by ``max_tokens`` or the server's cap), or ``None`` if we
    closed the stream early."""
    prompt_tokens: int | None
    completion_tokens: int | None
    cached_tokens: int | None
    """Prompt tokens served from the server's prefix cache, if it reports them."""
    latency_s: float
    ttft_s: float | None
    """Time to the first content token (streaming only)."""
    server_request_id: str | None
    """The ``x-request-id`` response header, if the server echoed one (vLLM does with
    ``--enable-request-id-headers``)."""
    watchdog_reason: str | None = None
    """The watchdog's reason (e.g. ``"repetition"``) if we closed the stream before the server
    finished; ``None`` when the server finished the reply."""
    chunks_after_stop: int = 0
    """Content chunks (about one token each) received after the watchdog first fired."""


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``retry-after-ms``, or ``Retry-After`` header given in seconds or
    as an HTTP date; ``None`` if absent or unreadable. Negative values become 0."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _classify(exc: openai.APIError, where: _Attempt) -> Exception:
    """Turn an openai error into ours: retryable, fatal for the block, or fatal for the run;
    a block error carries ``where``'s request id and attempt number."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
        cause = f" ({type(exc.__cause__).__name__})" if exc.__cause__ else ""
        return RetryableCallError(f"{kind}{cause}", connection=True, **where)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = parse_retry_after(exc.response.headers)
        body = exc.body.get("message") if isinstance(exc.body, dict) else None
        detail = (
            body if isinstance(body, str) else exc.message.removeprefix(f"Error code: {status} - ")
        )
        message = f"HTTP {status}: {_short(detail)}"
        if status in (401, 403):
            return AuthError(
                f"the server refused our credentials (HTTP {status}); check OPENAI_API_KEY",
                status=status,
            )
        if status in (408, 409, 429) or status >= 500:
            return RetryableCallError(message, status=status, retry_after_s=retry_after, **where)
        return FatalCallError(message, status=status, **where)
    if isinstance(exc, openai.APIResponseValidationError):
        return RetryableCallError(f"malformed reply: {_short(str(exc))}", **where)
    return RetryableCallError(f"{type(exc).__name__}: {_short(str(exc))}", **where)


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


async def call_model(
    client: openai.AsyncOpenAI,
    *,
    model: str,
    messages: list[dict[str, str]],
    max_tokens: int,
    temperature: float,
    request_id: str,
    attempt: int = 1,
    stream: bool,
    extra_body: Mapping[str, Any] | None = None,
    watchdog: Watchdog | None = None,
) -> Reply:
    """Send one chat-completion request and return its :class:`Reply`.

    Sends ``max_tokens`` explicitly and an ``X-Request-Id: request_id`` header. With
    ``stream=True`` the reply is streamed with ``stream_options.include_usage`` (for TTFT and
    token counts) and ``watchdog`` may stop it early.

    Raises :class:`RetryableCallError` (connection failure, timeout, 408/409/429/5xx, malformed
    or empty reply) or :class:`FatalCallError` (other 4xx: context too long, unknown model),
    each carrying ``request_id`` and ``attempt`` (the caller's count, 1-based), or
    :class:`AuthError` (401/403). ``CassetteMissError`` from a replay transport passes through.
    """
    # The messages travel in extra_body, which the openai client merges into the JSON as it is:
    # passed as ``messages=``, its per-call type transform walked every message against the
    # union of message types (a no-op for our plain strings) for ~0.3 ms of CPU per call. The
    # body sent is the same (``messages=[]`` is overwritten by the merge); a caller's
    # ``extra_body`` still wins over ours, as before.
    body: dict[str, Any] = {"messages": messages, **(extra_body or {})}
    headers = {"X-Request-Id": request_id}
    where = _Attempt(request_id=request_id, attempt=attempt)
    started = time.perf_counter()
    try:
        if stream:
            return await _streamed(
                client,
                model=model,
                max_tokens=max_tokens,
                temperature=temperature,
                headers=headers,
                body=body,
                started=started,
                watchdog=watchdog,
                where=where,
            )
        raw = await client.chat.completions.with_raw_response.create(
            model=model,
            messages=[],  # sent in extra_body (see above)
            max_tokens=max_tokens,
            temperature=temperature,
            extra_headers=headers,
            extra_body=body,
        )
        completion = raw.parse()
    except openai.APIError as exc:
        raise _classify(exc, where) from exc
    except (json.JSONDecodeError, httpx2.DecodingError) as exc:
        raise RetryableCallError(f"malformed reply: {_short(str(exc))}", **where) from exc
    if not completion.choices:
        raise RetryableCallError("malformed reply: empty choices list", **where)
    choice = completion.choices[0]
    usage = completion.usage
    details = usage.prompt_tokens_details if usage else None
    return Reply(
        content=choice.message.content or "",
        finish_reason=choice.finish_reason,
        prompt_tokens=usage.prompt_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        cached_tokens=details.cached_tokens if details else None,
        latency_s=time.perf_counter() - started,
        ttft_s=None,
        server_request_id=raw.headers.get("x-request-id"),
    )


async def _reconnecting(create: Callable[[], Awaitable[_T]]) -> _T:
    """``await create()``, once more at once if the connection closed before any response.

    That is a kept-alive connection that the server closed as we reused it: llama.cpp's server
    closes the connection after every streamed reply although it announces keep-alive, so the
    next request on it can race the close. The request never reached the server: it is sent
    again on a fresh connection (as urllib3 and aiohttp do) instead of counting a connection
    failure and backing off. Only for streamed requests, where ``create`` returns at the
    response headers (a whole reply cut mid-body is a real failure, retried as one).
    """
    try:
        return await create()
    except openai.APIConnectionError as exc:
        if not isinstance(exc.__cause__, httpx2.RemoteProtocolError):
            raise
    return await create()


async def _streamed(
    client: openai.AsyncOpenAI,
    *,
    model: str,
    max_tokens: int,
    temperature: float,
    headers: dict[str, str],
    body: dict[str, Any],
    started: float,
    watchdog: Watchdog | None,
    where: _Attempt,
) -> Reply:
    create = partial(
        client.chat.completions.with_raw_response.create,
        model=model,
        messages=[],  # sent in extra_body (see call_model)
        max_tokens=max_tokens,
        temperature=temperature,
        stream=True,
        stream_options={"include_usage": True},
        extra_headers=headers,
        extra_body=body,
    )
    raw = await _reconnecting(create)
    server_request_id = raw.headers.get("x-request-id")
    response = raw.http_response
    parts: list[str] = []
    ttft: float | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    stopped: str | None = None
    after_stop = 0
    saw_choice = False
    # openai's own stream reader (SSE framing, error events, timeouts and transport errors
    # mapped to openai's errors, the body drained after [DONE] for connection reuse), asked for
    # plain dicts: a typed chunk object per token cost ~4 ms of CPU per 40-token reply.
    events = openai.AsyncStream(cast_to=object, response=response, client=client)
    try:
        async for chunk in events:
            if not isinstance(chunk, dict):
                continue
            if chunk.get("usage") is not None:
                usage = chunk["usage"]
            choices = chunk.get("choices")
            if not choices:
                continue
            saw_choice = True
            choice = choices[0]
            delta = (choice.get("delta") or {}).get("content")
            if delta:
                if ttft is None:
                    ttft = time.perf_counter() - started
                parts.append(delta)
                if stopped is not None:
                    after_stop += 1
                elif watchdog is not None:
                    stopped = watchdog("".join(parts))
                    if stopped is not None:
                        break
            if choice.get("finish_reason") is not None:
                finish_reason = choice["finish_reason"]
    finally:
        # on an early stop this drops the connection: the server sees it and frees the slot
        await events.close()
    if not saw_choice and stopped is None:
        raise RetryableCallError("malformed reply: the stream held no choices", **where)
    details = (usage or {}).get("prompt_tokens_details") or {}
    return Reply(
        content="".join(parts),
        finish_reason=None if stopped else finish_reason,
        prompt_tokens=usage.get("prompt_tokens") if usage is not None else None,
        completion_tokens=(
            usage.get("completion_tokens")
            if usage is not None
            else (len(parts) if stopped else None)
        ),
        cached_tokens=details.get("cached_tokens"),
        latency_s=time.perf_counter() - started,
        ttft_s=ttft,
        server_request_id=server_request_id,
        watchdog_reason=stopped,
        chunks_after_stop=after_stop,
    )
