"""The polite tenant without a server: the adaptive cap's control law and its reading of
/metrics, the priority field and a server that refuses it."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
from structlog.testing import capture_logs

from owlai_refine import Backend, OutcomeStatus, refine
from owlai_refine.serve.adaptive import AdaptiveCap, ServerLoad, read_load, run_adaptive
from owlai_refine.serve.server import metrics_url
from tests.test_refine import config, polish, report
from testsupport.fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.anyio

METRICS = """\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine="0",model_name="smollm2"}} {running}
vllm:num_requests_running{{engine="0",model_name="other"}} 7.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{engine="0",model_name="smollm2"}} {waiting}
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{{engine="0",le="1.0",model_name="smollm2"}} 2.0
vllm:time_to_first_token_seconds_bucket{{engine="0",le="+Inf",model_name="smollm2"}} 3.0
vllm:time_to_first_token_seconds_count{{engine="0",model_name="smollm2"}} 3.0
vllm:time_to_first_token_seconds_sum{{engine="0",model_name="smollm2"}} 4.5
"""


def test_read_load_sums_our_model_and_reads_the_ttft_histogram() -> None:
    load = read_load(METRICS.format(running=3.0, waiting=1.0), "smollm2")
    assert load == ServerLoad(running=3, waiting=1, ttft_count=3.0, ttft_sum=4.5)
    assert read_load(METRICS.format(running=3.0, waiting=1.0)).running == 10  # every model


def test_read_load_refuses_a_server_that_is_not_vllm() -> None:
    with pytest.raises(ValueError, match="not a vLLM server"):
        read_load("# HELP up up\n# TYPE up gauge\nup 1.0\n")


def test_metrics_url_sits_beside_the_api() -> None:
    assert metrics_url("http://gpu1:8000/v1") == "http://gpu1:8000/metrics"
    assert metrics_url("http://gpu1:8000/") == "http://gpu1:8000/metrics"


def test_others_take_slots_and_one_is_left_free() -> None:
    law = AdaptiveCap(4)
    assert law.update(ServerLoad(running=4, waiting=0), ours=4, now=0.0) == 4  # ours alone
    assert law.update(ServerLoad(running=4, waiting=1), ours=4, now=1.0) == 2  # a chat turn
    assert law.others == 1
    assert law.update(ServerLoad(running=4, waiting=2), ours=2, now=2.0) == 1  # crowded
    assert law.update(ServerLoad(running=9, waiting=9), ours=1, now=3.0) == 1  # never below 1


def test_the_limit_grows_back_one_slot_at_a_time_after_a_quiet_spell() -> None:
    law = AdaptiveCap(4, quiet_s=3.0)
    law.update(ServerLoad(running=4, waiting=2), ours=2, now=0.0)
    assert law.limit == 1
    alone = ServerLoad(running=1, waiting=0)
    assert [law.update(alone, ours=1, now=t) for t in (1.0, 2.0, 3.0, 4.0)] == [1, 1, 1, 2]
    assert [law.update(alone, ours=1, now=t) for t in (5.0, 6.0, 7.0, 8.0)] == [3, 4, 4, 4]
    assert law.update(ServerLoad(running=2, waiting=0), ours=1, now=9.0) == 2  # one came back


def test_the_limit_never_exceeds_the_configured_cap() -> None:
    law = AdaptiveCap(2, limit=9)
    assert law.limit == 2
    for t in range(20):
        assert law.update(ServerLoad(running=0, waiting=0), ours=0, now=float(t)) <= 2
    with pytest.raises(ValueError, match="at least 1"):
        AdaptiveCap(0)


def _metrics_transport(pages: list[str | int]) -> httpx2.MockTransport:
    def answer(request: httpx2.Request) -> httpx2.Response:
        page = pages.pop(0) if len(pages) > 1 else pages[0]
        if isinstance(page, int):
            return httpx2.Response(page, text="no")
        return httpx2.Response(200, text=page)

    return httpx2.MockTransport(answer)


async def test_run_adaptive_lowers_the_limiter_and_restores_it() -> None:
    limiter = anyio.CapacityLimiter(4)
    busy = METRICS.format(running=3.0, waiting=0.0)
    transport = _metrics_transport([busy])
    with capture_logs() as logs:
        with anyio.move_on_after(0.3):
            await run_adaptive(
                limiter, "http://vllm/v1", "smollm2", 4, interval_s=0.01, transport=transport
            )
        changed = [e for e in logs if e["event"] == "refine.adaptive_limit"]
    assert changed and changed[0]["limit"] == 1 and changed[0]["others"] == 3
    assert limiter.total_tokens == 4  # the configured cap is back once the run ends


async def test_run_adaptive_without_metrics_keeps_the_fixed_cap_with_one_warning() -> None:
    limiter = anyio.CapacityLimiter(4)
    with capture_logs() as logs:
        await run_adaptive(
            limiter, "http://llama/v1", "m", 4, interval_s=0.01, transport=_metrics_transport([404])
        )
    warnings = [e for e in logs if e["event"] == "refine.adaptive_unavailable"]
    assert len(warnings) == 1 and warnings[0]["log_level"] == "warning"
    assert limiter.total_tokens == 4


async def test_priority_is_sent_to_self_hosted_endpoints_only() -> None:
    with FakeOpenAI(reply=polish) as server:
        await refine(report(2), config(server))
        assert {s.body.get("priority") for s in server.seen} == {10}
        server.seen.clear()
        await refine(report(2), config(server, priority=0))
        assert all("priority" not in s.body for s in server.seen)
        server.seen.clear()
        await refine(report(2), config(server, backend=Backend.CLOUD))
        assert all("priority" not in s.body for s in server.seen)


async def test_a_server_refusing_priority_gets_the_request_again_without_it() -> None:
    refusal = Fault(status=400, message="Got priority 10 but Priority scheduling is not enabled.")

    def fault(number: int, body: dict[str, Any]) -> Fault | None:
        return refusal if "priority" in body else None

    with FakeOpenAI(reply=polish, fault=fault) as server, capture_logs() as logs:
        result = await refine(report(3), config(server, concurrency=1))
    assert all(o.status is not OutcomeStatus.FAILED for o in result.outcomes)
    assert sum("priority" in s.body for s in server.seen) == 1  # learnt from the first answer
    refused = [e for e in logs if e["event"] == "refine.priority_refused"]
    assert len(refused) == 1 and refused[0]["log_level"] == "warning"


async def test_another_400_is_not_taken_for_a_priority_refusal() -> None:
    with FakeOpenAI(fault=lambda n, body: Fault(status=400, message="context too long")) as server:
        result = await refine(report(1), config(server))
    assert {o.status for o in result.outcomes if o.request_id} == {OutcomeStatus.FAILED}
    assert all("priority" in s.body for s in server.seen)
