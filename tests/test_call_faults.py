"""Replies that are not what the API promises: cut streams, streams that never end,
replies past ``max_tokens``, bodies of the wrong shape, text no encoder can write. In every case
the block keeps its text, the run ends within its deadline, and the reason is on record."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from structlog.testing import capture_logs

from owlai_refine import OutcomeStatus, refine
from tests.test_refine import config
from testsupport.fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.anyio

TEXT = "The team says the plan works well.\n"


def sse(obj: Any) -> bytes:
    return b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"


def delta(text: str | None, finish: str | None = None) -> bytes:
    d = {} if text is None else {"content": text}
    return sse({"id": "c", "choices": [{"index": 0, "delta": d, "finish_reason": finish}]})


# A reply the guard accepts: only the missing end tells it from a complete one.
WORDS = [delta(w) for w in ("The", " team", " states", " the", " plan", " works", " well.")]
USAGE = sse({"id": "c", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 5}})
DONE = sse(b"[DONE]")


def always(fault: Fault) -> Any:
    return lambda n, body: fault


async def outcome_of(fault: Fault, *, kept: bool = True, **more: Any) -> Any:
    with FakeOpenAI(fault=always(fault)) as server:
        result = await refine(TEXT, config(server, **more))
    assert (result.text == TEXT) is kept
    return result.outcomes[0]


@pytest.mark.parametrize(
    "chunks",
    [
        (*WORDS,),  # no finish_reason, no [DONE]
        (*WORDS, delta(None, "stop"), USAGE),  # finish_reason but no [DONE]
        (*WORDS, USAGE, DONE),  # [DONE] but no finish_reason
    ],
    ids=["no-finish-no-done", "no-done", "no-finish"],
)
async def test_a_stream_that_ends_early_is_never_spliced(chunks: tuple[bytes, ...]) -> None:
    out = await outcome_of(Fault(chunks=chunks))
    assert out.status is OutcomeStatus.FAILED
    assert "incomplete" in (out.reason or "")


async def test_a_whole_reply_without_finish_reason_is_never_spliced() -> None:
    message = {"role": "assistant", "content": "The team states the plan works well."}
    body = {"choices": [{"index": 0, "message": message}]}
    out = await outcome_of(Fault(body=json.dumps(body)), stream=False)
    assert out.status is OutcomeStatus.FAILED and "incomplete" in (out.reason or "")


async def test_a_finish_reason_other_than_stop_is_never_spliced() -> None:
    out = await outcome_of(Fault(chunks=(*WORDS, delta(None, "content_filter"), USAGE, DONE)))
    assert out.status is OutcomeStatus.REJECTED and "content_filter" in (out.reason or "")


async def test_a_complete_stream_is_spliced() -> None:
    out = await outcome_of(Fault(chunks=(*WORDS, delta(None, "stop"), USAGE, DONE)), kept=False)
    assert out.status is OutcomeStatus.REFINED, out.reason


@pytest.mark.parametrize(
    "fault",
    [
        Fault(chunks=(delta("The"), *[b": ping\n\n"] * 200), gap_s=0.05),  # comments, no token
        Fault(chunks=tuple(bytes([b]) for b in delta("The team says")), gap_s=0.15),  # trickle
    ],
    ids=["sse-comments", "one-byte-at-a-time"],
)
async def test_a_stream_that_never_ends_is_cut_at_its_deadline(fault: Fault) -> None:
    started = time.monotonic()
    out = await outcome_of(
        fault, token_timeout_s=0.5, request_deadline_s=1.0, deadline_per_token_s=0.0
    )
    elapsed = time.monotonic() - started
    assert out.status is OutcomeStatus.FAILED and "timed out" in (out.reason or "")
    assert out.attempts == 4  # cut, retried, then given up
    assert elapsed < 4 * 1.0 + 3  # each attempt ends at its deadline


async def test_a_reply_past_max_tokens_is_cut_and_the_block_kept() -> None:
    flood = tuple(delta(f" w{i}") for i in range(5000))  # a server that ignores max_tokens
    with capture_logs() as logs:
        out = await outcome_of(Fault(chunks=(*flood, delta(None, "stop"), USAGE, DONE)))
    assert out.status is OutcomeStatus.REJECTED and "max_tokens" in (out.reason or "")
    call = next(e for e in logs if e["event"] == "refine.call")
    assert call["stopped_early"] == "reply past max_tokens"
    assert call["completion_tokens"] <= out.max_tokens + 1  # read no further


async def test_a_whole_reply_past_max_tokens_is_refused() -> None:
    message = {"role": "assistant", "content": " word" * 20000}
    body = {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    out = await outcome_of(Fault(body=json.dumps(body)), stream=False)
    assert out.status is OutcomeStatus.REJECTED and "max_tokens" in (out.reason or "")


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize(
    "fault",
    [
        Fault(body="<html><body>502 Bad Gateway</body></html>", content_type="text/html"),
        Fault(body='{"object": "error"}'),
        Fault(body='{"choices": [{"message": "not a message"}]}'),
        Fault(body='{"choices": [{"message": {"content": 7}, "finish_reason": "stop"}]}'),
        Fault(chunks=(b"data: {not json\n\n",)),
        Fault(chunks=(sse({"choices": "nope"}), DONE)),
    ],
    ids=["html", "no-choices", "message-not-object", "content-not-text", "sse-bad", "sse-shape"],
)
async def test_a_reply_not_in_the_api_shape_is_a_failed_request(fault: Fault, stream: bool) -> None:
    with capture_logs() as logs:
        out = await outcome_of(fault, stream=stream)
    assert out.status is OutcomeStatus.FAILED and "malformed reply" in (out.reason or "")
    calls = [e for e in logs if e["event"] == "refine.call"]
    assert calls and all(c["status_code"] == 200 for c in calls)  # the server did answer


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
async def test_a_lone_surrogate_never_reaches_the_text(stream: bool) -> None:
    content = "The team says \\ud800 the plan works well."
    if stream:
        raw = b'{"choices": [{"index": 0, "delta": {"content": "' + content.encode() + b'"}}]}'
        fault = Fault(chunks=(sse(raw), delta(None, "stop"), USAGE, DONE))
    else:
        fault = Fault(
            body='{"choices": [{"index": 0, "message": {"role": "assistant", "content": "'
            + content
            + '"}, "finish_reason": "stop"}]}'
        )
    out = await outcome_of(fault, stream=stream, log_text=True)
    assert out.status is OutcomeStatus.FAILED and "surrogate" in (out.reason or "")
    out.reason.encode("utf-8")  # the reason itself can be written
