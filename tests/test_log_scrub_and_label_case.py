"""Two barriers that a bug planted in each once got past the suite: the JSON log's scrubber
takes the API key out at any depth of an event, and a reply that changes the case of a footnote
or citation label is refused."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from owlai_refine import OutcomeStatus, refine
from owlai_refine.shell.logs import configure_json_logging
from tests.test_refine import config
from testsupport.fake_openai import FakeOpenAI

pytestmark = pytest.mark.anyio
KEY = "sk-planted-0123456789"


def test_the_log_scrubber_redacts_the_key_at_any_depth() -> None:
    stream = io.StringIO()
    configure_json_logging(stream, "info", [KEY])
    structlog.get_logger("owlai_refine").info(
        "x", top=f"Bearer {KEY}", nested={"a": [f"k={KEY}", (KEY,)]}
    )
    line = stream.getvalue()
    assert KEY not in line
    event = json.loads(line)
    assert event["top"] == "Bearer [redacted]"
    assert event["nested"] == {"a": ["k=[redacted]", ["[redacted]"]]}


@pytest.mark.parametrize(
    ("block", "reply"),
    [
        ("The team says so.[^Note]\n\n[^Note]: A note.\n", "The team states so.[^note]"),
        ("The team says so 【4†Source】.\n", "The team states so 【4†source】."),
    ],
    ids=["footnote", "citation"],
)
async def test_a_label_whose_case_changes_is_refused(block: str, reply: str) -> None:
    with FakeOpenAI(reply=lambda text: reply if "team" in text else text) as server:
        result = await refine(block, config(server), sinks=[])
    assert result.outcomes[0].status is OutcomeStatus.REJECTED, result.outcomes[0]
    assert result.text == block
