"""One model call: send a block's messages, read the reply, classify any failure.

The only module that talks to the network (through the injected ``openai.AsyncOpenAI``, built
with ``max_retries=0``: retries belong to the refiner, which waits outside the slot limiter).
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import Any, TypedDict, TypeVar

import anyio
import httpx2
import openai

from owlai_refine.errors import AuthError, FatalCallError, RetryableCallError
from owlai_refine.scrub import scrub_text
from owlai_refine.usage import Usage, UsageFields

__all__ = ["Limits", "Reply", "Watchdog", "call_model", "max_reply_chars", "parse_retry_after"]

_T = TypeVar("_T")

Watchdog = Callable[[str], str | None]
"""Called with the reply text received so far while streaming; returning a reason (for example
``"repetition"``) closes the stream at once, which frees the server's slot."""


CHARS_PER_TOKEN = 16
"""More characters than any tokenizer packs into one token on average (English ~4, CJK ~1):
a reply longer than ``CHARS_PER_TOKEN * max_tokens`` characters came from a server that
ignored ``max_tokens``."""

OVER_MAX_TOKENS = "reply past max_tokens"
"""The reason a reply is cut when the server does not stop at ``max_tokens``."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def max_reply_chars(max_tokens: int) -> int:
    """The longest reply read for a request of ``max_tokens`` (see :data:`CHARS_PER_TOKEN`)."""
    return CHARS_PER_TOKEN * max_tokens + 64


@dataclass(frozen=True, slots=True)
class Limits:
    """How long one request may take, in seconds: ``deadline_s`` in all, from just before it
    is sent, and ``token_gap_s`` between the response headers and the first token and between
    two tokens of a stream (SSE comments and stray bytes are no tokens). ``None``: no limit
    beyond the HTTP client's read timeout."""

    deadline_s: float | None = None
    token_gap_s: float | None = None


class _Attempt(TypedDict):
    """Which request failed: what every block error is built with."""

    request_id: str
    attempt: int


@dataclass(frozen=True, slots=True)
class Reply(UsageFields):
    """What came back for one request: its text, and what it cost (:class:`Usage`: the
    server's token counts, ``None`` if it sent none, and times in seconds from just before the
    request was sent), whose fields read flat too (``reply.finish_reason``)."""

    content: str
    usage: Usage
    """``finish_reason`` is ``None`` if we closed the stream early; ``ttft_s`` is measured for
    streamed replies only."""
    server_request_id: str | None = None
    """The ``x-request-id`` response header, if the server echoed one (vLLM does with
    ``--enable-request-id-headers``)."""
    watchdog_reason: str | None = None
    """The watchdog's reason (e.g. ``"repetition"``) if we closed the stream before the server
    finished; ``None`` when the server finished the reply."""


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


def _classify(exc: openai.APIError, where: _Attempt, secret: str) -> Exception:
    """Turn an openai error into ours: retryable, fatal for the block, or fatal for the run;
    a block error carries ``where``'s request id and attempt number. ``secret`` (the API key)
    is removed from any text the server sent back (a body may echo our headers)."""
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
        message = f"HTTP {status}: {_short(detail, secret)}"
        if status in (401, 403):
            return AuthError(
                f"the server refused our credentials (HTTP {status}); check OPENAI_API_KEY",
                status=status,
            )
        if status in (408, 409, 429) or status >= 500:
            return RetryableCallError(message, status=status, retry_after_s=retry_after, **where)
        return FatalCallError(message, status=status, **where)
    if isinstance(exc, openai.APIResponseValidationError):
        return RetryableCallError(f"malformed reply: {_short(str(exc), secret)}", **where)
    return RetryableCallError(f"{type(exc).__name__}: {_short(str(exc), secret)}", **where)


def _short(text: str, secret: str, limit: int = 200) -> str:
    """``text`` on one line, at most ``limit`` characters, without ``secret``."""
    text = " ".join(scrub_text(text, [secret]).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _malformed(why: str, where: _Attempt) -> RetryableCallError:
    """A reply the server sent with HTTP 200 that is not what the API promises."""
    return RetryableCallError(f"malformed reply: {why}", status=200, **where)


def _choice(data: object, where: _Attempt) -> dict[str, Any] | None:
    """The first choice of a completion (or chunk) ``data``, checked for the API's shape;
    ``None`` for a chunk without choices (the usage chunk). Raises a malformed-reply error."""
    if not isinstance(data, dict):
        raise _malformed(f"a {type(data).__name__}, not a JSON object", where)
    choices = data.get("choices")
    if choices is None or choices == []:
        return None
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise _malformed("'choices' is not a list of objects", where)
    choice: dict[str, Any] = choices[0]
    for name in ("message", "delta"):
        part = choice.get(name)
        if part is None:
            continue
        if not isinstance(part, dict):
            raise _malformed(f"'{name}' is not an object", where)
        content = part.get("content")
        if content is not None and not isinstance(content, str):
            raise _malformed(f"'{name}.content' is not text", where)
    reason = choice.get("finish_reason")
    if reason is not None and not isinstance(reason, str):
        raise _malformed("'finish_reason' is not text", where)
    return choice


def _usage(data: object) -> dict[str, Any] | None:
    usage = data.get("usage") if isinstance(data, dict) else None
    return usage if isinstance(usage, dict) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage_of(
    usage: dict[str, Any] | None,
    *,
    finish_reason: str | None,
    started: float,
    ttft_s: float | None = None,
    chunks: int | None = None,
) -> Usage:
    """The :class:`Usage` of a reply: the counts of the server's ``usage`` object (``None``:
    it sent none), ``finish_reason``, the latency from ``started`` to now and ``ttft_s``.
    ``chunks``, for a stream we closed early, is the completion count if the server gave none."""
    usage = usage or {}
    prompt = usage.get("prompt_tokens_details")
    output = usage.get("completion_tokens_details")
    output = output if isinstance(output, dict) else {}
    completion = _count(usage.get("completion_tokens"))
    return Usage(
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=chunks if completion is None else completion,
        cached_tokens=_count(prompt.get("cached_tokens")) if isinstance(prompt, dict) else None,
        finish_reason=finish_reason,
        latency_s=time.perf_counter() - started,
        ttft_s=ttft_s,
        accepted_prediction_tokens=_count(output.get("accepted_prediction_tokens")),
        rejected_prediction_tokens=_count(output.get("rejected_prediction_tokens")),
    )


def _checked(reply: Reply, where: _Attempt, max_tokens: int) -> Reply:
    """``reply`` as it may go on: a lone surrogate (text no encoder can write) is a malformed
    reply, and one longer than ``max_tokens`` allows is cut (:data:`OVER_MAX_TOKENS`)."""
    if _SURROGATE.search(reply.content):
        raise _malformed("a lone surrogate in the text (not Unicode text)", where)
    if reply.watchdog_reason is None and (
        len(reply.content) > max_reply_chars(max_tokens)
        or (reply.completion_tokens or 0) > max_tokens
    ):
        return replace(reply, watchdog_reason=OVER_MAX_TOKENS)
    return reply


_Create = Callable[..., Awaitable[Any]]
"""``client.chat.completions.with_raw_response.create`` with one request's arguments bound."""


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
    limits: Limits = Limits(),
) -> Reply:
    """Send one chat-completion request and return its :class:`Reply`.

    Sends ``max_tokens`` explicitly and an ``X-Request-Id: request_id`` header. With
    ``stream=True`` the reply is streamed with ``stream_options.include_usage`` (for TTFT and
    token counts) and ``watchdog`` may stop it early. A reply comes back only when it is
    complete: a ``finish_reason`` and, streamed, the ``[DONE]`` that ends the stream. One that
    runs past what ``max_tokens`` allows (a server that ignores it) is cut there and comes back
    with ``watchdog_reason`` :data:`OVER_MAX_TOKENS`. ``limits`` bound its time.

    Raises :class:`RetryableCallError` (connection failure, timeout, past ``limits``,
    408/409/429/5xx, a reply that is incomplete, empty, not the API's shape or not Unicode
    text) or :class:`FatalCallError` (other 4xx: context too long, unknown model), each
    carrying ``request_id`` and ``attempt`` (the caller's count, 1-based), or
    :class:`AuthError` (401/403). No error text holds the client's API key.
    ``CassetteMissError`` from a replay transport passes through.
    """
    create = _request(
        client,
        model=model,
        messages=messages,
        max_tokens=max_tokens,
        temperature=temperature,
        request_id=request_id,
        extra_body=extra_body,
    )
    where = _Attempt(request_id=request_id, attempt=attempt)
    started = time.perf_counter()
    deadline = math.inf if limits.deadline_s is None else anyio.current_time() + limits.deadline_s
    with anyio.CancelScope(deadline=deadline) as scope, _classified(where, client.api_key):
        if stream:
            got = _Reading(started, max_reply_chars(max_tokens), max_tokens)
            reply = await _streamed(
                client, create, got, watchdog=watchdog, where=where, scope=scope, limits=limits
            )
        else:
            reply = await _whole(create, started, where)
        return _checked(reply, where, max_tokens)
    raise _timed_out(limits, no_token=scope.deadline < deadline, where=where)


def _request(
    client: openai.AsyncOpenAI,
    *,
    model: str,
    messages: list[dict[str, str]],
    max_tokens: int,
    temperature: float,
    request_id: str,
    extra_body: Mapping[str, Any] | None,
) -> _Create:
    """The request :func:`call_model` sends, ready to go (streamed: with more arguments).

    The messages travel in ``extra_body``, which the openai client merges into the JSON as it
    is: passed as ``messages=``, its per-call type transform walked every message against the
    union of message types (a no-op for our plain strings) for ~0.3 ms of CPU per call. The
    body sent is the same (``messages=[]`` is overwritten by the merge); a caller's
    ``extra_body`` still wins over ours."""
    return partial(
        client.chat.completions.with_raw_response.create,
        model=model,
        messages=[],
        max_tokens=max_tokens,
        temperature=temperature,
        extra_headers={"X-Request-Id": request_id},
        extra_body={"messages": messages, **(extra_body or {})},
    )


@contextmanager
def _classified(where: _Attempt, secret: str) -> Iterator[None]:
    """Raise openai's errors, and a reply that is not JSON, as ours (:func:`_classify`)."""
    try:
        yield
    except openai.APIError as exc:
        raise _classify(exc, where, secret) from exc
    except (json.JSONDecodeError, httpx2.DecodingError) as exc:
        raise _malformed(_short(str(exc), secret), where) from exc


def _timed_out(limits: Limits, *, no_token: bool, where: _Attempt) -> RetryableCallError:
    """The error for a request cut by ``limits``: ``no_token`` when the gap between tokens
    (``token_gap_s``) ran out before the whole deadline."""
    why = (
        f"no token for {limits.token_gap_s:g} s"
        if no_token
        else f"past the request's deadline of {limits.deadline_s:g} s"
    )
    return RetryableCallError(f"timed out: {why}", **where)


async def _whole(create: _Create, started: float, where: _Attempt) -> Reply:
    """One request for a whole (not streamed) reply, its JSON checked for the API's shape."""
    raw = await create()
    data = raw.http_response.json()
    choice = _choice(data, where)
    if choice is None:
        raise _malformed("no choices", where)
    if choice.get("finish_reason") is None:
        raise RetryableCallError("incomplete reply: no finish_reason", status=200, **where)
    return Reply(
        content=(choice.get("message") or {}).get("content") or "",
        usage=_usage_of(_usage(data), finish_reason=choice["finish_reason"], started=started),
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


class _Events(openai.AsyncStream[object]):
    """openai's own stream reader (SSE framing, error events, timeouts and transport errors
    mapped to openai's errors, the body drained after ``[DONE]`` for connection reuse), asked
    for plain dicts (a typed chunk object per token cost ~4 ms of CPU per 40-token reply), that
    also tells whether the stream ended with ``[DONE]``: a body that just stops is cut short."""

    done = False

    async def _iter_events(self) -> AsyncIterator[Any]:
        async for sse in super()._iter_events():
            if sse.data.startswith("[DONE]"):
                self.done = True
            yield sse


async def _streamed(
    client: openai.AsyncOpenAI,
    create: _Create,
    got: _Reading,
    *,
    watchdog: Watchdog | None,
    where: _Attempt,
    scope: anyio.CancelScope,
    limits: Limits,
) -> Reply:
    """One streamed request, read into ``got``. ``scope`` (the request's deadline) is moved
    nearer while no token comes (``limits.token_gap_s``); the stream is closed at
    ``max_tokens``' worth of text, or when ``watchdog`` gives a reason."""
    raw = await _reconnecting(partial(create, stream=True, stream_options={"include_usage": True}))
    deadline, gap = scope.deadline, limits.token_gap_s
    if gap is not None:
        scope.deadline = min(deadline, anyio.current_time() + gap)
    events = _Events(cast_to=object, response=raw.http_response, client=client)
    try:
        async for chunk in events:
            if not got.take(chunk, where):
                continue
            if gap is not None:
                scope.deadline = min(deadline, anyio.current_time() + gap)
            if got.stopped is None and watchdog is not None:
                got.stopped = watchdog("".join(got.parts))
            if got.stopped is not None:
                break
    finally:
        # on an early stop this drops the connection: the server sees it and frees the slot
        with anyio.CancelScope(shield=True):
            await events.close()
    return got.reply(events.done, raw.headers.get("x-request-id"), where)


@dataclass(slots=True)
class _Reading:
    """A streamed reply as it is read: its text so far and what the chunks said."""

    started: float
    most_chars: int
    max_tokens: int
    parts: list[str] = field(default_factory=list)
    size: int = 0
    ttft: float | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    stopped: str | None = None
    saw_choice: bool = False

    def take(self, chunk: object, where: _Attempt) -> bool:
        """Take one chunk in; true if it brought text. Past ``max_tokens``' worth of text
        (more characters than it allows, or more chunks than tokens: a chunk holds at least
        one) :attr:`stopped` is set to :data:`OVER_MAX_TOKENS`."""
        self.usage = _usage(chunk) or self.usage
        choice = _choice(chunk, where)
        if choice is None:
            return False
        self.saw_choice = True
        if choice.get("finish_reason") is not None:
            self.finish_reason = choice["finish_reason"]
        delta = (choice.get("delta") or {}).get("content")
        if not delta:
            return False
        if self.ttft is None:
            self.ttft = time.perf_counter() - self.started
        self.parts.append(delta)
        self.size += len(delta)
        if self.size > self.most_chars or len(self.parts) > self.max_tokens:
            self.stopped = OVER_MAX_TOKENS
        return True

    def reply(self, done: bool, server_request_id: str | None, where: _Attempt) -> Reply:
        """The :class:`Reply`, once the stream is over; ``done``: it ended with ``[DONE]``.
        Raises a retryable error for a stream that held no choices or ended before its end."""
        if not self.saw_choice and self.stopped is None:
            raise _malformed("the stream held no choices", where)
        if self.stopped is None and (self.finish_reason is None or not done):
            missing = "finish_reason" if self.finish_reason is None else "[DONE]"
            raise RetryableCallError(
                f"incomplete reply: the stream ended without {missing}", status=200, **where
            )
        return Reply(
            content="".join(self.parts),
            usage=_usage_of(
                self.usage,
                finish_reason=None if self.stopped else self.finish_reason,
                started=self.started,
                ttft_s=self.ttft,
                chunks=len(self.parts) if self.stopped else None,
            ),
            server_request_id=server_request_id,
            watchdog_reason=self.stopped,
        )
