"""The refiner against a real HTTP server on loopback (testsupport/fake_openai.py).

The server counts requests in flight itself, so the cap is measured where it matters.
"""

from __future__ import annotations

import importlib
import socket
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from owlai_refine import (
    AuthError,
    Backend,
    ConfigError,
    OutcomeStatus,
    RefineConfig,
    Refiner,
    RetryPolicy,
    SyncRefiner,
    parse,
    refine,
    refine_sync,
)
from owlai_refine.events import CallFinished, RefineEvent
from owlai_refine.serve.cassette import RecordingTransport, ReplayTransport
from testsupport.checks import changed_outside_blocks
from testsupport.fake_openai import FakeOpenAI, Fault

pytestmark = pytest.mark.anyio

NO_WAIT = RetryPolicy(max_attempts=4, wait_scale=0)


def report(n: int, *, crlf: bool = False, tag: str = "") -> str:
    """A report with ``n`` paragraphs and list items of growing length, plus things to keep;
    ``tag`` goes into every block (to tell reports apart at the server)."""
    parts = ["# Title", "", f"Intro paragraph {tag} with a citation [1].", ""]
    for i in range(n):
        words = " ".join(f"{tag}word{i}x{k}" for k in range(1 + (i * 7) % 40))
        parts += [f"- item {i} {words}", "", f"Paragraph {i} says {words}.", ""]
    parts += ["```python", "code = 'kept'", "```", "", "| a | b |", "|---|---|", "| 1 | 2 |", ""]
    text = "\n".join(parts)
    return text.replace("\n", "\r\n") if crlf else text


def config(server: FakeOpenAI, **more: Any) -> RefineConfig:
    fields: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "fake-model",
        "retry": NO_WAIT,
        "read_timeout_s": 5.0,
    }
    fields.update(more)
    return RefineConfig(**fields)


def polish(text: str) -> str:
    return text.replace("says", "states")


@pytest.mark.parametrize(
    ("backend", "concurrency", "expected"),
    [(Backend.SELF_HOSTED, None, 4), (Backend.CLOUD, None, 12), (Backend.CLOUD, 6, 6)],
)
async def test_in_flight_reaches_and_never_exceeds_the_cap(
    backend: Backend, concurrency: int | None, expected: int
) -> None:
    with FakeOpenAI(reply=polish, latency_s=lambda body: 0.05) as server:
        result = await refine(report(30), config(server, backend=backend, concurrency=concurrency))
    assert server.max_in_flight == expected
    assert result.counts["failed"] == 0


async def test_two_reports_at_once_through_one_refiner_share_one_cap() -> None:
    with FakeOpenAI(latency_s=lambda body: 0.05) as server:
        async with Refiner(config(server)) as refiner, anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(refiner.refine, report(15))
    assert server.max_in_flight == 4
    assert len(server.seen) == 2 * len(parse(report(15)).sendable)


async def test_one_shot_refines_share_a_cap_only_through_a_limiter_passed_in() -> None:
    with FakeOpenAI(latency_s=lambda body: 0.05) as server:
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(refine, report(15), config(server))
        assert server.max_in_flight == 8  # no hidden registry: each one-shot has its own
        server.max_in_flight = 0
        shared = anyio.CapacityLimiter(3)
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(partial(refine, report(15), config(server), limiter=shared))
    assert server.max_in_flight == 3


async def test_a_refiner_asks_for_the_model_once_and_reuses_its_connections() -> None:
    with FakeOpenAI(reply=polish) as server:
        cfg = config(server, model=None, stream=False)  # this server closes after a stream
        async with Refiner(cfg) as refiner:
            results = [await refiner.refine(report(6, tag=f"r{i}")) for i in range(5)]
        assert server.model_lists == 1
        assert server.connections <= cfg.slots  # kept alive across reports
        assert all(r.counts["refined"] for r in results)
        for i in range(2):
            await refine(report(6, tag=f"s{i}"), cfg)
        assert server.model_lists == 3  # each one-shot asks again


def test_the_blocking_twin_refines_from_several_threads_under_one_cap() -> None:
    with FakeOpenAI(reply=polish, latency_s=lambda body: 0.05) as server:
        with SyncRefiner(config(server)) as refiner, ThreadPoolExecutor(3) as pool:
            texts = [report(8, tag=f"t{i}") for i in range(3)]
            results = list(pool.map(refiner.refine, texts))
        assert server.max_in_flight == 4
    assert [r.text for r in results] == [polish(t) for t in texts]


async def test_events_reach_every_sink_and_the_ledger_sums_them() -> None:
    seen: list[RefineEvent] = []
    with FakeOpenAI(reply=polish) as server:
        async with Refiner(config(server), sinks=[seen.append]) as refiner:
            with capture_logs() as logs:
                result = await refiner.refine(report(4), report_id="ev")
    assert logs == []  # the structlog sink was replaced, not added to
    kinds = [type(e).__name__ for e in seen]
    assert kinds[0] == "RunStarted" and kinds[-1] == "RunFinished"
    calls = [e for e in seen if isinstance(e, CallFinished)]
    assert len(calls) == result.tokens.requests
    assert sum(c.completion_tokens or 0 for c in calls) == result.tokens.completion_tokens
    assert kinds.count("BlockSettled") == len(parse(report(4)).sendable)
    assert {e.report_id for e in seen} == {"ev"}


async def test_longest_blocks_are_sent_first() -> None:
    text = report(12)
    with FakeOpenAI() as server:
        await refine(text, config(server, concurrency=1))
    sent = [s.body["messages"][-1]["content"] for s in server.seen]
    doc = parse(text)
    by_length = sorted(doc.sendable, key=lambda b: (-len(b.text), b.id))
    assert [b.text in msg for b, msg in zip(by_length, sent, strict=True)] == [True] * len(sent)


async def test_refined_blocks_are_spliced_and_nothing_else_changes() -> None:
    text = report(10, crlf=True)
    with FakeOpenAI(reply=polish) as server:
        result = await refine(text, config(server))
    doc = parse(text)
    assert changed_outside_blocks(doc, result) == []
    assert "states" in result.text
    assert "\r\n" in result.text and "\n" not in result.text.replace("\r\n", "")
    assert result.counts["refined"] == sum("says" in b.text for b in doc.sendable)
    assert result.counts["unchanged"] == len(doc.sendable) - result.counts["refined"]


async def test_every_request_has_its_own_id_and_an_explicit_max_tokens() -> None:
    with FakeOpenAI() as server, capture_logs() as logs:
        result = await refine(report(8), config(server))
    ids = [s.request_id for s in server.seen]
    assert None not in ids and len(set(ids)) == len(ids)
    assert all(isinstance(s.body.get("max_tokens"), int) for s in server.seen)
    calls = [e for e in logs if e["event"] == "refine.call"]
    assert {c["request_id"] for c in calls} == set(ids)
    assert all(c["server_request_id"] == c["request_id"] for c in calls)
    assert result.tokens.requests == len(ids)


async def test_call_lines_are_the_usage_ledger() -> None:
    with FakeOpenAI() as server, capture_logs() as logs:
        await refine(report(3), config(server), report_id="r1")
    calls = [e for e in logs if e["event"] == "refine.call"]
    fields = {
        "report_id", "block_id", "request_id", "attempt", "model", "backend", "prompt_tokens",
        "completion_tokens", "cached_tokens", "finish_reason", "latency_s", "ttft_s", "max_tokens",
    }  # fmt: skip
    assert calls and all(fields <= set(c) for c in calls)
    assert all(c["report_id"] == "r1" and c["backend"] == "self-hosted" for c in calls)
    assert all(c["prompt_tokens"] > 0 and c["ttft_s"] is not None for c in calls)
    events = [e["event"] for e in logs]
    assert events[0] == "refine.start" and events[-1] == "refine.done"


@pytest.mark.parametrize("stream", [True, False])
async def test_truncated_replies_keep_the_original_and_warn_with_the_request_id(
    stream: bool,
) -> None:
    text = report(10)
    with FakeOpenAI(reply=polish, output_cap=6) as server, capture_logs() as logs:
        result = await refine(text, config(server, stream=stream))
    truncated = [o for o in result.outcomes if o.status is OutcomeStatus.TRUNCATED]
    warnings = [e for e in logs if e["event"] == "refine.block_truncated"]
    assert truncated and len(warnings) == len(truncated)
    seen_ids = {s.request_id for s in server.seen}
    for warning, outcome in zip(
        sorted(warnings, key=lambda w: w["block_id"]), truncated, strict=True
    ):
        assert warning["log_level"] == "warning"
        assert warning["request_id"] == outcome.request_id and warning["request_id"] in seen_ids
        assert warning["line_span"] == list(outcome.line_span)
        assert warning["completion_tokens"] == 6 and warning["max_tokens"] > 6
        assert warning["cut_by"] == "server" and "override-generation-config" in warning["hint"]
    calls = [e for e in logs if e["event"] == "refine.call" and e["finish_reason"] == "length"]
    assert calls and {e["cut_by"] for e in calls} == {"server"}
    doc = parse(text)
    for outcome in truncated:
        assert doc.blocks[outcome.block_id].text in result.text


async def test_a_reply_using_exactly_max_tokens_counts_as_truncated() -> None:
    long_reply = " ".join(f"w{i}" for i in range(500))
    with FakeOpenAI(reply=lambda text: long_reply) as server, capture_logs() as logs:
        result = await refine("Some paragraph to polish.\n", config(server))
    assert result.outcomes[0].status is OutcomeStatus.TRUNCATED
    assert result.text == "Some paragraph to polish.\n"
    warning = next(e for e in logs if e["event"] == "refine.block_truncated")
    assert warning["cut_by"] == "request" and warning["hint"] is None


async def test_server_errors_are_retried_then_succeed() -> None:
    def fault(n: int, body: dict[str, Any]) -> Fault | None:
        return Fault(status=503) if n < 2 else None

    with FakeOpenAI(reply=polish, fault=fault) as server, capture_logs() as logs:
        result = await refine("Paragraph one says hi.\n", config(server))
    assert result.outcomes[0].status is OutcomeStatus.REFINED
    assert result.outcomes[0].attempts == 3
    attempts = [e for e in logs if e["event"] == "refine.call"]
    assert [a["status_code"] for a in attempts] == [503, 503, None]


async def test_bad_request_fails_one_block_and_the_others_go_on() -> None:
    text = report(6)
    target = parse(text).sendable[3].text

    def fault(n: int, body: dict[str, Any]) -> Fault | None:
        return Fault(status=400) if target in body["messages"][-1]["content"] else None

    with FakeOpenAI(reply=polish, fault=fault) as server, capture_logs() as logs:
        result = await refine(text, config(server))
    failed = result.failed
    assert len(failed) == 1 and failed[0].attempts == 1 and "HTTP 400" in (failed[0].reason or "")
    assert result.counts["refined"] > 0
    assert any(e["event"] == "refine.block_failed" and e["log_level"] == "error" for e in logs)
    assert target in result.text


async def test_unauthorised_stops_the_whole_run_at_once() -> None:
    with (
        FakeOpenAI(fault=lambda n, body: Fault(status=401)) as server,
        pytest.raises(AuthError, match="401"),
    ):
        await refine(report(40), config(server))
    assert len(server.seen) <= 4  # only what was already in flight


# The library never fails silently: the endpoints are checked when a Refiner opens.


def nothing_listening() -> str:
    """A base URL on a loopback port that refuses connections (bound once, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


async def test_nothing_listening_is_a_config_error_before_any_block_and_no_retries() -> None:
    """Before: five retries (~9.5 s), then the text back with ``failed == 1`` and no error.
    Now: one refused connection, ``ConfigError`` naming the URL and why, no event at all."""
    url = nothing_listening()
    seen: list[RefineEvent] = []
    cfg = RefineConfig(base_url=url, model="x")  # the default retry policy: it must not run
    with capture_logs() as logs, pytest.raises(ConfigError) as info:
        await refine(report(3), cfg, sinks=[seen.append])
    assert str(info.value) == f"cannot connect to {url} (Connection refused); nothing was sent"
    assert seen == [] and logs == []  # no run started, no call, no retry scheduled
    with pytest.raises(ConfigError, match="cannot connect to"):
        async with Refiner(cfg):
            pass


def test_the_blocking_entry_points_raise_it_too() -> None:
    cfg = RefineConfig(base_url=nothing_listening(), model="x")
    with pytest.raises(ConfigError, match="cannot connect to"):
        refine_sync(report(3), cfg)
    with pytest.raises(ConfigError, match="cannot connect to"), SyncRefiner(cfg):
        pass


async def test_a_server_that_lists_other_models_is_a_config_error_naming_them() -> None:
    with FakeOpenAI(models=("llama-3-70b", "qwen3-32b")) as server:
        with pytest.raises(ConfigError) as info:
            await refine(report(3), config(server, model="gpt-4o"))
        assert server.seen == [] and server.model_lists == 1
    assert str(info.value) == (
        f"model 'gpt-4o' is not served by {server.base_url}; it serves llama-3-70b, qwen3-32b "
        "(--model, OWLAI_REFINE_MODEL)"
    )


@pytest.mark.parametrize("status", [401, 403])
async def test_a_server_that_refuses_the_listing_is_an_auth_error(status: int) -> None:
    with FakeOpenAI(models_status=status) as server:
        with pytest.raises(AuthError, match=f"HTTP {status}") as info:
            await refine(report(3), config(server))
        assert server.seen == [] and info.value.status == status


async def test_a_listing_the_server_cannot_give_is_not_held_against_a_named_model() -> None:
    """Some proxies answer ``/models`` with 404: with a model named, the run goes on."""
    with FakeOpenAI(reply=polish, models_status=404) as server:
        result = await refine(report(2), config(server))
    assert result.ok and result.counts["refined"] > 0


async def test_one_server_of_two_answering_is_enough() -> None:
    with FakeOpenAI(reply=polish) as live:
        cfg = config(live, base_url=(nothing_listening(), live.base_url))
        result = await refine(report(4), cfg)
    assert result.ok and result.text == polish(report(4))


async def test_a_reachable_server_gives_an_ok_result_and_a_failing_one_does_not() -> None:
    with FakeOpenAI(reply=polish) as server:
        good = await refine(report(3), config(server))
    assert good.ok and good.failed == () and good.stopped_by is None
    with FakeOpenAI(fault=lambda n, body: Fault(status=500)) as server:
        bad = await refine(report(3), config(server))
    assert not bad.ok and bad.failed and bad.text == report(3)  # whole, nothing refined


async def test_preflight_false_leaves_the_old_path_and_ok_tells_it() -> None:
    """``Refiner(preflight=False)`` asks nothing first: the blocks' own requests find the
    server missing, and ``ok`` is the plain verdict a pipeline reads."""
    cfg = RefineConfig(base_url=nothing_listening(), model="x", retry=NO_WAIT)
    async with Refiner(cfg, preflight=False, sinks=[]) as refiner:
        result = await refiner.refine(report(1))
    assert not result.ok and result.counts["failed"] == len(parse(report(1)).sendable)
    assert result.text == report(1)


async def test_replay_needs_no_server_and_makes_no_preflight(tmp_path: Any) -> None:
    tape = tmp_path / "tape.jsonl"
    with FakeOpenAI(reply=polish) as server:
        recorded = await refine(report(2), config(server), transport=RecordingTransport(tape))
    assert server.model_lists == 1  # the recording's pre-flight went to the server
    offline = config(server, base_url=nothing_listening())  # nothing there now
    replayed = await refine(report(2), offline, transport=ReplayTransport(tape))
    assert replayed.ok and replayed.text == recorded.text == polish(report(2))


async def test_a_report_with_nothing_to_send_asks_no_server() -> None:
    result = await refine("# Only a heading\n", RefineConfig(base_url=nothing_listening()))
    assert result.ok and result.text == "# Only a heading\n"


async def test_the_api_key_is_sent_but_never_logged() -> None:
    key = "sk-test-PLANTED-1234567890"
    with FakeOpenAI() as server, capture_logs() as logs:
        await refine(report(2), config(server, api_key=key))
    assert all(s.authorization == f"Bearer {key}" for s in server.seen)
    assert key not in repr(logs)


async def test_a_broken_splice_returns_the_source_untouched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The byte-exact check after splicing is a safety net: if the splicer ever broke a line
    outside the refined blocks, the run keeps the whole source rather than a damaged report."""
    # the package's `refine`
    refine_module = importlib.import_module("owlai_refine.pipeline.orchestrate")
    real = refine_module.splice
    monkeypatch.setattr(refine_module, "splice", lambda doc, new: real(doc, new) + "junk")
    text = report(3)
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        result = await refine(text, config(server))
    assert result.text == text
    assert result.counts["refined"] == 0 and result.counts["failed"] > 0
    assert any(e["event"] == "refine.splice_check_failed" for e in logs)


async def test_cached_tokens_unreported_are_unknown_not_zero() -> None:
    # vLLM sends usage.prompt_tokens_details only with --enable-prompt-tokens-details
    with FakeOpenAI(reply=polish, cached_tokens=None) as server, capture_logs() as logs:
        result = await refine("A block says hi.\n", config(server))
    assert result.tokens.cached_tokens is None
    done = next(e for e in logs if e["event"] == "refine.done")
    assert done["cached_tokens"] == "unknown"
    with FakeOpenAI(reply=polish, cached_tokens=3) as server, capture_logs() as logs:
        result = await refine("A block says hi.\n", config(server))
    assert result.tokens.cached_tokens == 3
