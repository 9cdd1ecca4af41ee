"""A copy edit costs what it changes: the "no change needed" marker and predicted
outputs, end to end against the loopback server."""

from __future__ import annotations

import json
from typing import Any

import pydantic
import pytest
from structlog.testing import capture_logs

from owlai_refine import Backend, OutcomeStatus, RefineConfig, refine
from owlai_refine.events import CallFinished, RefineEvent, log_event
from owlai_refine.ops.ledger import parse_ledger_lines
from owlai_refine.ops.stats.figures import format_stats, ledger_stats
from owlai_refine.pipeline.prompt import UNCHANGED_MARKER
from tests.test_refine import config, polish, report
from testsupport.fake_openai import FakeOpenAI, Fault, block_text

pytestmark = pytest.mark.anyio


def fine_or_polish(text: str) -> str:
    """A model that answers the marker for a block it would not change, an edit otherwise."""
    return polish(text) if "says" in text else UNCHANGED_MARKER


async def test_the_marker_keeps_a_fine_block_for_one_token() -> None:
    with FakeOpenAI(reply=fine_or_polish) as server:
        result = await refine(report(4), config(server))
    statuses = {o.block_id: o.status for o in result.outcomes if o.request_id}
    assert set(statuses.values()) == {OutcomeStatus.REFINED, OutcomeStatus.UNCHANGED}
    for o in result.outcomes:
        if o.status is OutcomeStatus.UNCHANGED:
            assert o.completion_tokens == 1 and o.text is None
        if o.status is OutcomeStatus.REFINED:
            assert o.text is not None and "states" in o.text
    assert UNCHANGED_MARKER not in result.text
    system = {s.body["messages"][0]["content"] for s in server.seen}
    assert len(system) == 1 and UNCHANGED_MARKER in system.pop()  # on by default, one prefix


async def test_the_marker_beside_an_edit_is_refused_and_the_block_kept() -> None:
    both = FakeOpenAI(reply=lambda text: f"{UNCHANGED_MARKER} {polish(text)}")
    with both as server, capture_logs() as logs:
        result = await refine(report(2), config(server))
    sent = [o for o in result.outcomes if o.request_id]
    assert {o.status for o in sent} == {OutcomeStatus.REJECTED}
    assert all(o.reason_groups == ("marker",) for o in sent)
    assert result.text == report(2)
    warned = [e for e in logs if e["event"] == "refine.block_rejected"]
    assert len(warned) == len(sent) and all(e["reason_groups"] == ["marker"] for e in warned)


async def test_without_the_marker_the_prompt_does_not_offer_it() -> None:
    with FakeOpenAI(reply=lambda text: UNCHANGED_MARKER) as server:
        result = await refine(report(2), config(server, unchanged_marker=False))
    messages = [m["content"] for s in server.seen for m in s.body["messages"]]
    assert all(UNCHANGED_MARKER not in m for m in messages)
    assert len(server.seen[0].body["messages"]) == 4
    # a model that says it anyway is still read as unchanged: the marker means one thing
    assert {o.status for o in result.outcomes if o.request_id} == {OutcomeStatus.UNCHANGED}


@pytest.mark.parametrize(
    ("fields", "sent"),
    [
        ({"backend": Backend.CLOUD}, True),
        ({"backend": Backend.SELF_HOSTED}, False),
        ({"backend": Backend.CLOUD, "predicted_outputs": False}, False),
        ({"backend": Backend.SELF_HOSTED, "predicted_outputs": True}, True),
        ({"backend": Backend.CLOUD, "presence_penalty": 0.5}, False),  # refused beside it
        ({"backend": Backend.CLOUD, "frequency_penalty": None}, True),
        ({"backend": Backend.CLOUD, "extra_body": {"logprobs": True}}, False),
        ({"backend": Backend.CLOUD, "extra_body": {"n": 1}}, True),
    ],
)
async def test_the_block_goes_as_the_prediction_on_cloud_endpoints(
    fields: dict[str, Any], sent: bool
) -> None:
    with FakeOpenAI(reply=polish) as server:
        await refine(report(3), config(server, **fields))
    assert server.seen
    for seen in server.seen:
        if sent:
            assert seen.body["prediction"] == {"type": "content", "content": block_text(seen.body)}
        else:
            assert "prediction" not in seen.body


@pytest.mark.parametrize(
    "conflict",
    [
        {"presence_penalty": 0.1},
        {"frequency_penalty": 1.0},
        {"extra_body": {"n": 2}},
        {"extra_body": {"top_logprobs": 3}},
        {"extra_body": {"modalities": ["text", "audio"]}},
        {"extra_body": {"max_completion_tokens": 100}},
        {"extra_body": {"tools": []}},
    ],
)
def test_asking_for_predictions_beside_a_refused_parameter_is_a_clear_error(
    conflict: dict[str, Any],
) -> None:
    with pytest.raises(pydantic.ValidationError, match="refuses prediction with"):
        RefineConfig(predicted_outputs=True, **conflict)
    assert RefineConfig(backend=Backend.CLOUD, **conflict).sends_prediction is False


async def test_a_400_naming_prediction_drops_it_for_the_run_with_one_warning() -> None:
    refusal = Fault(status=400, message="Invalid parameter: 'prediction' is not supported.")

    def fault(number: int, body: dict[str, Any]) -> Fault | None:
        return refusal if "prediction" in body else None

    with FakeOpenAI(reply=polish, fault=fault) as server, capture_logs() as logs:
        result = await refine(report(3), config(server, backend=Backend.CLOUD, concurrency=1))
    assert all(o.status is not OutcomeStatus.FAILED for o in result.outcomes)
    assert sum("prediction" in s.body for s in server.seen) == 1  # learnt from the first answer
    refused = [e for e in logs if e["event"] == "refine.prediction_refused"]
    assert len(refused) == 1 and refused[0]["log_level"] == "warning"


async def test_priority_and_prediction_both_refused_are_both_dropped() -> None:
    def fault(number: int, body: dict[str, Any]) -> Fault | None:
        if "priority" in body:
            return Fault(status=400, message="Priority scheduling is not enabled.")
        if "prediction" in body:
            return Fault(status=400, message="Predicted outputs are not supported by this model")
        return None

    with FakeOpenAI(reply=polish, fault=fault) as server, capture_logs() as logs:
        result = await refine(report(2), config(server, predicted_outputs=True, concurrency=1))
    assert all(o.status is not OutcomeStatus.FAILED for o in result.outcomes)
    assert [("priority" in s.body, "prediction" in s.body) for s in server.seen[:3]] == [
        (True, True),
        (False, True),
        (False, False),
    ]
    events = [e["event"] for e in logs if e["event"].endswith("_refused")]
    assert events == ["refine.priority_refused", "refine.prediction_refused"]


async def test_another_400_keeps_the_prediction_and_fails_the_block() -> None:
    with FakeOpenAI(fault=lambda n, body: Fault(status=400, message="context too long")) as server:
        result = await refine(report(1), config(server, backend=Backend.CLOUD))
    assert {o.status for o in result.outcomes if o.request_id} == {OutcomeStatus.FAILED}
    assert all("prediction" in s.body for s in server.seen)


async def test_prediction_tokens_go_to_the_ledger_and_refine_stats() -> None:
    events: list[RefineEvent] = []
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        await refine(
            report(3), config(server, backend=Backend.CLOUD), sinks=[log_event, events.append]
        )
    calls = [e for e in events if isinstance(e, CallFinished)]
    # polish changes "says" to "states": one word of the prediction unused in those blocks
    assert sum(c.rejected_prediction_tokens or 0 for c in calls) == sum(
        "says" in block_text(s.body) for s in server.seen
    )
    for call in calls:
        assert call.accepted_prediction_tokens is not None
        assert call.accepted_prediction_tokens + (call.rejected_prediction_tokens or 0) >= 1
    lines = [e for e in logs if e["event"] == "refine.call"]
    assert {"accepted_prediction_tokens", "rejected_prediction_tokens"} <= set(lines[0])
    read = parse_ledger_lines(json.dumps(e) for e in lines)
    group = ledger_stats(read, files=1).groups[0]
    assert group.accepted_prediction_tokens == sum(c.accepted_prediction_tokens or 0 for c in calls)
    assert group.rejected_prediction_tokens == sum(c.rejected_prediction_tokens or 0 for c in calls)
    assert group.prediction_reported == len(calls)
    text = format_stats(ledger_stats(read, files=1))
    assert f"predicted outputs  accepted {group.accepted_prediction_tokens:,}" in text


async def test_no_prediction_no_prediction_line_in_stats() -> None:
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        await refine(report(2), config(server))
    lines = [json.dumps(e) for e in logs if e["event"] == "refine.call"]
    stats = ledger_stats(parse_ledger_lines(lines), files=1)
    assert stats.groups[0].accepted_prediction_tokens is None
    assert "predicted outputs" not in format_stats(stats)
