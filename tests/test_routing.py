"""Several endpoints behind one backend: each keeps its own cap, and one that refuses
connections is set aside while the others take its blocks."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from owlai_refine import RefineConfig, RetryPolicy, parse, refine
from tests.test_refine import polish, report
from testsupport.checks import changed_outside_blocks
from testsupport.fake_openai import FakeOpenAI


@pytest.mark.anyio
async def test_two_endpoints_each_keep_their_own_cap() -> None:
    text = report(40)
    with (
        FakeOpenAI(reply=polish, latency_s=lambda body: 0.05) as a,
        FakeOpenAI(reply=polish, latency_s=lambda body: 0.05) as b,
    ):
        result = await refine(
            text, RefineConfig(base_url=(a.base_url, b.base_url), model="fake-model")
        )
    assert a.max_in_flight == 4 and b.max_in_flight == 4
    assert len(a.seen) > 10 and len(b.seen) > 10
    assert result.text == polish(text)


@pytest.mark.anyio
async def test_an_endpoint_that_refuses_connections_is_set_aside() -> None:
    text = report(20)
    with FakeOpenAI() as dead:
        dead_url = dead.base_url  # stopped on exit: its port now refuses connections
    with FakeOpenAI(reply=polish, latency_s=lambda body: 0.02) as live, capture_logs() as logs:
        config = RefineConfig(
            base_url=(dead_url, live.base_url),
            model="fake-model",
            retry=RetryPolicy(max_attempts=5, wait_scale=0),
        )
        result = await refine(text, config)
    assert result.text == polish(text) and not result.partial
    assert changed_outside_blocks(parse(text), result) == []
    set_aside = [e for e in logs if e["event"] == "refine.endpoint_set_aside"]
    assert len(set_aside) == 1 and set_aside[0]["base_url"] == dead_url
    failures = [e for e in logs if e["event"] == "refine.call" and e["error"]]
    assert 1 <= len(failures) <= 4  # what was sent before it was set aside
