"""Reading a streamed reply: fixed server-sent-event bodies through ``httpx2.MockTransport``.

These pin what ``call_model(stream=True)`` makes of a stream (content, finish reason, usage,
errors, line endings, the watchdog), whatever parses the events.
"""

from __future__ import annotations

import json
from typing import Any

import httpx2
import openai
import pytest

from owlai_refine.errors import RetryableCallError
from owlai_refine.serve.call import Reply, call_model

pytestmark = pytest.mark.anyio


def event(obj: dict[str, Any] | str, eol: str = "\n", sep: str = " ") -> str:
    data = obj if isinstance(obj, str) else json.dumps(obj)
    return f"data:{sep}{data}{eol}{eol}"


def chunk(content: str | None = None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


USAGE = {
    "id": "c",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "m",
    "choices": [],
    "usage": {
        "prompt_tokens": 11,
        "completion_tokens": 3,
        "total_tokens": 14,
        "prompt_tokens_details": {"cached_tokens": 7},
    },
}


def normal_stream(eol: str = "\n", sep: str = " ") -> str:
    parts = [chunk(""), chunk("Hello"), chunk(" wide"), chunk(" world"), chunk(None, "stop"), USAGE]
    return "".join(event(p, eol, sep) for p in parts) + event("[DONE]", eol, sep)


async def streamed(body: str | bytes, watchdog: Any = None) -> Reply:
    data = body.encode() if isinstance(body, str) else body

    def answer(request: httpx2.Request) -> httpx2.Response:
        headers = {"content-type": "text/event-stream", "x-request-id": "srv-1"}
        return httpx2.Response(200, headers=headers, content=data)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = openai.AsyncOpenAI(
        base_url="http://test.invalid/v1", api_key="k", max_retries=0, http_client=http
    )
    async with client:
        return await call_model(
            client,
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=10,
            temperature=0,
            request_id="r1",
            stream=True,
            watchdog=watchdog,
        )


@pytest.mark.parametrize(("eol", "sep"), [("\n", " "), ("\r\n", " "), ("\r", " "), ("\n", "")])
async def test_a_whole_stream_gives_content_finish_reason_and_usage(eol: str, sep: str) -> None:
    reply = await streamed(normal_stream(eol, sep))
    assert reply.content == "Hello wide world"
    assert reply.finish_reason == "stop"
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cached_tokens) == (11, 3, 7)
    assert reply.server_request_id == "srv-1"
    assert reply.ttft_s is not None and reply.watchdog_reason is None


async def test_comments_other_fields_and_split_data_lines_are_read_as_events() -> None:
    body = (
        ": keep-alive\n\n"
        "event: message\nid: 1\n"
        + event(chunk("Hi"))
        # one event's JSON split over two data lines: joined with a newline, still valid JSON
        + 'data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",\n'
        + 'data: "choices": [{"index": 0, "delta": {"content": "!"}, "finish_reason": "stop"}]}\n\n'
        + event("[DONE]")
    )
    reply = await streamed(body)
    assert reply.content == "Hi!"
    assert reply.finish_reason == "stop"
    assert reply.prompt_tokens is None and reply.completion_tokens is None


async def test_events_after_done_are_ignored() -> None:
    reply = await streamed(normal_stream() + event(chunk(" more")) + "data: {not json\n\n")
    assert reply.content == "Hello wide world"


async def test_an_error_event_is_a_retryable_error_with_its_message() -> None:
    body = event(chunk("Hel")) + event({"error": {"message": "the engine is overloaded"}})
    with pytest.raises(RetryableCallError, match="the engine is overloaded"):
        await streamed(body)


async def test_a_malformed_event_is_a_retryable_malformed_reply() -> None:
    with pytest.raises(RetryableCallError, match="malformed reply"):
        await streamed(event(chunk("Hel")) + "data: {not json\n\n")


async def test_a_stream_without_choices_is_a_retryable_malformed_reply() -> None:
    with pytest.raises(RetryableCallError, match="held no choices"):
        await streamed(event(USAGE) + event("[DONE]"))


async def test_a_body_that_is_not_an_event_stream_holds_no_choices() -> None:
    with pytest.raises(RetryableCallError, match="held no choices"):
        await streamed('{"choices": [{"mess')


async def test_the_watchdog_stops_the_stream_at_the_chunk_that_fires_it() -> None:
    seen: list[str] = []

    def watchdog(text: str) -> str | None:
        seen.append(text)
        return "repetition" if "wide" in text else None

    reply = await streamed(normal_stream(), watchdog)
    assert seen == ["Hello", "Hello wide"]
    assert reply.watchdog_reason == "repetition"
    assert reply.content == "Hello wide"
    assert reply.finish_reason is None
    assert reply.completion_tokens == 2 and reply.prompt_tokens is None


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_the_request_body_is_the_chat_completion_request_and_nothing_else(
    stream: bool,
) -> None:
    """The body decides the cassette key: it must not change when the client code does."""
    seen: list[httpx2.Request] = []
    whole = {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
    }

    def answer(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if stream:
            return httpx2.Response(
                200, headers={"content-type": "text/event-stream"}, content=normal_stream().encode()
            )
        return httpx2.Response(200, json=whole)

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = openai.AsyncOpenAI(
        base_url="http://test.invalid/v1", api_key="sk-test", max_retries=0, http_client=http
    )
    messages = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "<block>\nx\n</block>"},
    ]
    async with client:
        await call_model(
            client,
            model="m",
            messages=messages,
            max_tokens=99,
            temperature=0.2,
            request_id="r1",
            stream=stream,
            extra_body={"repetition_penalty": 1.1},
        )
    (request,) = seen
    expected: dict[str, Any] = {
        "messages": messages,
        "model": "m",
        "max_tokens": 99,
        "temperature": 0.2,
        "repetition_penalty": 1.1,
    }
    if stream:
        expected |= {"stream": True, "stream_options": {"include_usage": True}}
    assert json.loads(request.content) == expected
    assert request.headers["x-request-id"] == "r1"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.url == "http://test.invalid/v1/chat/completions"


@pytest.mark.parametrize(("drops", "sent"), [(1, 2), (2, 2)])
async def test_a_connection_closed_before_any_response_is_tried_once_more_at_once(
    drops: int, sent: int
) -> None:
    """llama.cpp closes the connection after each streamed reply although it announces
    keep-alive: a request sent on it as it closes gets no response at all."""
    requests: list[httpx2.Request] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        if len(requests) <= drops:
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=normal_stream().encode()
        )

    http = httpx2.AsyncClient(transport=httpx2.MockTransport(answer))
    client = openai.AsyncOpenAI(
        base_url="http://test.invalid/v1", api_key="k", max_retries=0, http_client=http
    )
    async with client:
        call = call_model(
            client,
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            max_tokens=10,
            temperature=0,
            request_id="r1",
            stream=True,
        )
        if drops == 1:
            assert (await call).content == "Hello wide world"
        else:
            with pytest.raises(RetryableCallError, match="connection failed") as failed:
                await call
            assert failed.value.connection
    assert len(requests) == sent
    assert requests[0].content == requests[-1].content
