"""One :class:`~owlai_refine.usage.Usage` value: what a request cost, written once and held by
the reply, the ledger's event, a block's outcome and the ledger reader's record, each of which
still reads (and the log and dumps still write) its fields under their flat names."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest
from structlog.testing import capture_logs

from owlai_refine import BlockOutcome, OutcomeStatus, RefineConfig, RetryPolicy, refine
from owlai_refine.events import CallFinished, RefineEvent, log_event
from owlai_refine.ops.ledger import parse_ledger_lines
from owlai_refine.usage import NO_USAGE, USAGE_FIELDS, Usage, UsageFields
from testsupport.fake_openai import FakeOpenAI

USAGE = Usage(
    prompt_tokens=120,
    completion_tokens=40,
    cached_tokens=96,
    finish_reason="stop",
    latency_s=1.234567,
    ttft_s=0.054321,
    accepted_prediction_tokens=30,
    rejected_prediction_tokens=2,
)

CALL_LINE_KEYS = {
    "report_id", "block_id", "request_id", "attempt", "model", "backend", "base_url",
    "max_tokens", "prompt_tokens_est", "server_request_id", "prompt_tokens",
    "completion_tokens", "cached_tokens", "finish_reason", "latency_s", "ttft_s", "status_code",
    "error", "accepted_prediction_tokens", "rejected_prediction_tokens", "stopped_early",
    "cut_by", "event", "log_level",
}  # fmt: skip
"""The keys of a ``refine.call`` line, as they were before ``Usage`` (ledgers and ``refine
stats`` read them)."""


def test_every_field_of_usage_reads_flat_and_nothing_else_does() -> None:
    flat = {name for name, _ in inspect.getmembers(UsageFields, inspect.isdatadescriptor)}
    assert flat - {"__weakref__"} == set(USAGE_FIELDS)
    assert USAGE_FIELDS[:3] == ("prompt_tokens", "completion_tokens", "cached_tokens")
    assert all(getattr(NO_USAGE, name) is None for name in USAGE_FIELDS)


def test_usage_is_a_frozen_value() -> None:
    with pytest.raises(ValueError, match="frozen"):
        USAGE.prompt_tokens = 1
    assert Usage(**USAGE.model_dump()) == USAGE
    assert hash(Usage(prompt_tokens=1)) == hash(Usage(prompt_tokens=1))


def test_a_call_line_keeps_its_flat_keys() -> None:
    event = CallFinished(
        "r1", 3, "id-1", 1, "m", "self-hosted", "http://x/v1", 64, 110, usage=USAGE
    )
    with capture_logs() as logs:
        log_event(event)
    (line,) = logs
    assert set(line) == CALL_LINE_KEYS
    assert {k: line[k] for k in ("prompt_tokens", "cached_tokens", "finish_reason")} == {
        "prompt_tokens": 120,
        "cached_tokens": 96,
        "finish_reason": "stop",
    }
    assert (line["latency_s"], line["ttft_s"]) == (1.2346, 0.0543)  # rounded to 0.1 ms
    assert line["stopped_early"] is None and line["cut_by"] is None
    assert event.prompt_tokens == 120 and event.finish_reason == "stop"


def test_a_failed_call_line_has_null_usage() -> None:
    event = CallFinished("r1", 3, "id-1", 2, "m", "cloud", "http://x/v1", 64, 110, error="x")
    with capture_logs() as logs:
        log_event(event)
    (line,) = logs
    assert set(line) == CALL_LINE_KEYS
    assert all(line[name] is None for name in USAGE_FIELDS)


def test_a_ledger_line_reads_back_into_the_same_usage() -> None:
    with capture_logs() as logs:
        log_event(CallFinished("r", 0, "i", 1, "m", "cloud", "http://x/v1", 64, 9, usage=USAGE))
    (record,) = parse_ledger_lines([json.dumps(logs[0])]).calls
    assert record.usage == USAGE.model_copy(update={"latency_s": 1.2346, "ttft_s": 0.0543})
    assert (record.prompt_tokens, record.max_tokens, record.error) == (120, 64, None)


def test_an_old_ledger_line_without_prediction_counts_reads_them_as_unknown() -> None:
    line = {"event": "refine.call", "model": "m", "backend": "cloud", "prompt_tokens": 9}
    (record,) = parse_ledger_lines([json.dumps(line)]).calls
    assert record.usage == Usage(prompt_tokens=9)
    assert record.accepted_prediction_tokens is None


def test_a_block_outcome_takes_and_dumps_its_usage_flat() -> None:
    fields: dict[str, Any] = {"block_id": 0, "kind": "paragraph", "line_span": (0, 1)}
    fields["status"] = OutcomeStatus.REFINED
    given_flat = BlockOutcome.model_validate({**fields, **USAGE.model_dump()})
    held = BlockOutcome(**fields, usage=USAGE)
    assert given_flat == held and held.completion_tokens == 40
    dumped = held.model_dump()
    assert "usage" not in dumped and {k: dumped[k] for k in USAGE_FIELDS} == USAGE.model_dump()
    assert BlockOutcome.model_validate_json(held.model_dump_json()) == held
    partly = BlockOutcome.model_validate({**fields, "usage": {"prompt_tokens": 5}, "ttft_s": 0.5})
    assert partly.usage == Usage(prompt_tokens=5, ttft_s=0.5)


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_block_outcome_holds_its_last_calls_usage(stream: bool) -> None:
    calls: list[CallFinished] = []

    def keep(event: RefineEvent) -> None:
        if isinstance(event, CallFinished):
            calls.append(event)

    text = "# T\n\nThe first paragraph says so.\n\n- An item that says more.\n"
    with FakeOpenAI(reply=lambda t: t.replace("says", "states"), cached_tokens=4) as server:
        config = RefineConfig(
            base_url=server.base_url,
            model="fake-model",
            stream=stream,
            retry=RetryPolicy(wait_scale=0),
        )
        result = await refine(text, config, sinks=[keep])
    sent = [o for o in result.outcomes if o.status is OutcomeStatus.REFINED]
    assert len(sent) == len(calls) == 2
    by_block = {c.block_id: c.usage for c in calls}
    for outcome in sent:
        assert outcome.usage is by_block[outcome.block_id]  # passed on, not copied
        assert outcome.usage.prompt_tokens and outcome.usage.cached_tokens == 4
        assert (outcome.ttft_s is not None) is stream
