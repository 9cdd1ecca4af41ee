"""One barrier at a time: each test here fails if that barrier alone is removed, with every
other one still in place (each a bug that, planted alone, the suite once let through).

- truncation: a cut-off reply that the guard would accept is still never spliced in;
- every skip reason the README lists, and the server never sees a skipped block;
- names with two capitals are protected; the CJK lost-words rule;
- a limiter passed in is the cap, whatever a later request asks for;
- ``describe`` numbers lines from 1, as editors do.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from owlai_refine import OutcomeStatus, RefineConfig, RetryPolicy, parse, refine
from owlai_refine.blocks import SkipReason
from owlai_refine.config import GuardConfig, OutputBudget
from owlai_refine.errors import CassetteMissError
from owlai_refine.events import CallStarted
from owlai_refine.guard import check_reply
from owlai_refine.guard.content import lost_words
from owlai_refine.guard.tokens import protected_tokens
from owlai_refine.limits.limiter import open_limiter
from owlai_refine.pipeline.plan import describe, plan
from owlai_refine.pipeline.splice import splice, spliced_lines
from owlai_refine.serve.cassette import ReplayTransport
from testsupport.fake_openai import FakeOpenAI, block_text

NO_WAIT = RetryPolicy(max_attempts=2, wait_scale=0)


def config(server: FakeOpenAI, **more: Any) -> RefineConfig:
    return RefineConfig(
        base_url=server.base_url, model="fake-model", retry=NO_WAIT, read_timeout_s=5.0, **more
    )


def polish(text: str) -> str:
    return text.replace("says", "states")


# ---------------------------------------------------------------- truncation before the guard
CUT_ITEM = "# Growth\n\n- Growth came from sales and new customers\n"


@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_a_cut_reply_the_guard_would_accept_is_still_not_spliced(stream: bool) -> None:
    block = parse(CUT_ITEM).blocks[0]
    # The server's own output cap stops the reply at 6 words: "...sales and new".
    cut = "Growth came from sales and new"
    assert check_reply(block, cut, GuardConfig()).text == cut  # the guard alone would take it
    with FakeOpenAI(output_cap=6) as server, capture_logs() as logs:
        result = await refine(CUT_ITEM, config(server, stream=stream))
    (outcome,) = result.outcomes
    assert outcome.status is OutcomeStatus.TRUNCATED and outcome.reason == "length"
    assert outcome.text is None and outcome.completion_tokens == 6
    assert result.text == CUT_ITEM
    assert [e["block_id"] for e in logs if e["event"] == "refine.block_truncated"] == [0]


EXACT = "The team says the plan works well in practice.\n"
"""Nine words: the fake server's reply (``says`` -> ``states``) is nine tokens."""


@pytest.mark.anyio
@pytest.mark.parametrize(("cap", "status"), [(9, "truncated"), (10, "refined")])
async def test_a_reply_using_exactly_max_tokens_with_stop_counts_as_truncated(
    cap: int, status: str
) -> None:
    reply = polish(EXACT.strip())
    assert check_reply(parse(EXACT).blocks[0], reply, GuardConfig()).text == reply
    output = OutputBudget(max_tokens=cap)
    with FakeOpenAI(reply=polish) as server:
        result = await refine(EXACT, config(server, output=output, stream=False))
    (outcome,) = result.outcomes
    # The server says "stop" in both cases (the reply fits); only the count tells them apart.
    assert outcome.finish_reason == "stop" and outcome.completion_tokens == 9
    assert outcome.max_tokens == cap and server.seen[0].body["max_tokens"] == cap
    assert outcome.status.value == status
    assert result.text == (EXACT if status == "truncated" else reply + "\n")


# ---------------------------------------------------------------- every skip reason
SKIPS = [
    ("# T\n\nLine one  \nline two.\n", SkipReason.HARD_BREAK),
    ("# T\n\nLine one\\\nline two.\n", SkipReason.HARD_BREAK),
    ("# T\n\nText here[^1].\n\n[^1]: The note text here.\n", SkipReason.FOOTNOTE),
    ("# T\n\n::: warning\nBe careful here.\n:::\n", SkipReason.DIRECTIVE),
    ("# T\n\n[[toc]]\n", SkipReason.DIRECTIVE),
    ("# T\n\n> [!NOTE]\n> Useful information.\n>\n> > nested\n", None),
    ("# References\n\nSmith, J. (2024). A study of things.\n", SkipReason.REFERENCES),
    ("# T\n\n[3] https://example.com/a\n", SkipReason.NOTHING_TO_REFINE),
    ("# T\n\n**Key Principles:**\n", SkipReason.LABEL),
    ("# T\n\n- License: MIT\n", SkipReason.METADATA),
]


@pytest.mark.parametrize(("text", "reason"), SKIPS)
def test_every_skip_reason_is_given(text: str, reason: SkipReason | None) -> None:
    doc = parse(text)
    skips = [b.skip for b in doc.blocks if b.skip is not None]
    if reason is None:  # an alert whose marker line cannot be kept apart: see test_parse_alerts
        assert skips in ([], [SkipReason.LAYOUT])
    else:
        assert skips[-1] is reason


def test_a_sibling_or_higher_heading_ends_a_references_section() -> None:
    text = (
        "# R\n\n## References\n\n- A ref.\n\n### Web\n\nA web ref here.\n\n"
        "## Appendix\n\nProse here.\n\n# Next\n\nMore prose.\n"
    )
    assert [b.skip for b in parse(text).blocks] == [
        SkipReason.REFERENCES,
        SkipReason.REFERENCES,  # a sub-heading stays inside the section
        None,
        None,
    ]


def test_a_block_over_max_block_tokens_is_too_long() -> None:
    doc = parse("# T\n\nShort one.\n\n" + "word " * 400 + "\n")
    _, skipped = plan(doc, RefineConfig(base_url="http://127.0.0.1:9/v1", max_block_tokens=100))
    assert {i: o.reason for i, o in skipped.items()} == {1: SkipReason.TOO_LONG.value}
    _, none = plan(doc, RefineConfig(base_url="http://127.0.0.1:9/v1", max_block_tokens=4000))
    assert none == {}


@pytest.mark.anyio
async def test_the_server_never_sees_a_skipped_block() -> None:
    text = "\n".join(t for t, r in SKIPS if r) + "\n# Prose\n\nThe team says it works.\n"
    doc = parse(text)
    with FakeOpenAI(reply=polish) as server:
        result = await refine(text, config(server))
    sent = [b for b in doc.blocks if b.skip is None]
    assert len(sent) == 2  # "Text here[^1]." and the prose at the end
    assert sorted(block_text(s.body) for s in server.seen) == sorted(b.text for b in sent)
    for outcome, block in zip(result.outcomes, doc.blocks, strict=True):
        if block.skip is not None:
            assert outcome.status is OutcomeStatus.SKIPPED
            assert outcome.reason == block.skip.value
    assert result.text == text.replace("says", "states")


# ---------------------------------------------------------------- the guard's rules
def test_names_with_two_capitals_are_protected() -> None:
    names = protected_tokens("PyTorch and DeepSeek beat Python, NVIDIA and GPUs.").names
    assert set(names.values()) == {"PyTorch", "DeepSeek", "NVIDIA", "GPUs"}  # not Python
    block = parse("- We use PyTorch and DeepSeek models for the main training runs.\n").blocks[0]
    for reply, name in [
        ("We use Torch and DeepSeek models for the main training runs.", "PyTorch"),
        ("We use PyTorch and other models for the main training runs.", "DeepSeek"),
    ]:
        verdict = check_reply(block, reply, GuardConfig())
        assert verdict.text is None and any(name in str(r) for r in verdict.reasons), verdict


CJK = "研究团队发现这种新方法能够显著提高模型训练效率并降低成本。"


def test_the_cjk_lost_words_rule() -> None:
    dropped = lost_words(CJK, "研究团队发现这种新方法很好。")
    assert dropped is not None and str(dropped).startswith('lost words "能, 够, 显')
    assert lost_words(CJK, "研究团队发现\uff0c这种新方法能显著提高模型训练效率并降低成本。") is None
    # Under eight CJK tokens nothing is judged.
    assert lost_words("研究团队发现。", "好。") is None


# ---------------------------------------------------------------- the cap
@pytest.mark.anyio
async def test_a_limiter_is_sized_by_its_slots_and_refuses_none() -> None:
    async with AsyncExitStack() as stack:
        for slots in (1, 3):
            limiter = open_limiter(None, "k", slots, lease_s=30, stack=stack)
            assert limiter.total_tokens == slots
        with pytest.raises(ValueError, match="at least 1 slot, got 0"):
            open_limiter(None, "k", 0, lease_s=30, stack=stack)


@pytest.mark.anyio
async def test_a_later_larger_request_does_not_raise_a_shared_cap() -> None:
    text = "# T\n\n" + "".join(f"Paragraph {i} says hello there.\n\n" for i in range(6))
    async with AsyncExitStack() as stack:
        shared = open_limiter(None, "k", 2, lease_s=30, stack=stack)
        with FakeOpenAI(reply=polish, latency_s=lambda body: 0.2) as server:
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: refine(text, config(server, concurrency=2), limiter=shared))
                await anyio.sleep(0.1)  # the larger one comes later
                tg.start_soon(lambda: refine(text, config(server, concurrency=8), limiter=shared))
        assert shared.total_tokens == 2
    assert len(server.seen) == 12 and server.max_in_flight == 2


# ---------------------------------------------------------------- describe
def test_describe_numbers_lines_from_1() -> None:
    doc = parse("# T\n\nPara one.\n\nTwo\nlines.\n")
    assert [describe(b) for b in doc.blocks] == ["block 0 (line 3)", "block 1 (lines 5-6)"]


# ---------------------------------------------------------------- the safety net after the splice
@pytest.mark.anyio
async def test_a_splice_that_changes_a_line_outside_the_blocks_returns_the_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        "owlai_refine.pipeline.orchestrate.splice",
        lambda doc, new: splice(doc, new).replace("# T\n", "# X\n"),
    )
    text = "# T\n\nThe team says it works.\n\n[1] https://example.com/a\n\nAnd it says more.\n"
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        result = await refine(text, config(server))
    assert result.text == text  # the report is never lost
    statuses = [(o.status, o.reason, o.text) for o in result.outcomes]
    assert statuses == [
        (OutcomeStatus.FAILED, "splice check failed", None),
        (OutcomeStatus.SKIPPED, "nothing_to_refine", None),
        (OutcomeStatus.FAILED, "splice check failed", None),
    ]
    (failed,) = [e for e in logs if e["event"] == "refine.splice_check_failed"]
    assert failed["lines"] == [0] and failed["log_level"] == "error"


@pytest.mark.anyio
async def test_a_splice_that_gives_a_crlf_block_lf_endings_returns_the_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The safety net checks the endings inside a replaced block too: a
    refined block spliced with LF into a CRLF report changes no line outside the blocks."""
    real = spliced_lines
    monkeypatch.setattr(
        "owlai_refine.pipeline.splice.spliced_lines",
        lambda doc, block, text, eol=None: real(doc, block, text, eol=eol).replace("\r\n", "\n"),
    )
    text = "# T\r\n\r\nThe team says it works.\r\n\r\nAnd it says more.\r\n"
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        result = await refine(text, config(server))
    assert result.text == text
    assert [o.reason for o in result.outcomes] == ["splice check failed"] * 2
    (failed,) = [e for e in logs if e["event"] == "refine.splice_check_failed"]
    assert failed["lines"] == [2, 4]  # each block's first line


# ---------------------------------------------------------------- what the run reports
@pytest.mark.anyio
@pytest.mark.parametrize("stream", [True, False])
async def test_the_log_and_events_carry_the_runs_facts(stream: bool) -> None:
    text = "# T\n\nThe team says it works.\n\nAnd it says more.\n"
    events: list[object] = []
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        result = await refine(
            text, config(server, stream=stream, concurrency=3), sinks=[events.append]
        )
    started = [e for e in events if isinstance(e, CallStarted)]
    assert sorted(e.block_id for e in started) == [0, 1] and {e.attempt for e in started} == {1}
    for outcome in result.outcomes:
        assert outcome.latency_s is not None and outcome.latency_s > 0
        assert (outcome.ttft_s is not None) is stream
    with FakeOpenAI(reply=polish) as server, capture_logs() as logs:
        await refine(text, config(server, stream=stream, concurrency=3))
    (start,) = [e for e in logs if e["event"] == "refine.start"]
    assert start["concurrency"] == 3 and start["stream"] is stream
    calls = [e for e in logs if e["event"] == "refine.call"]
    assert {c["base_url"] for c in calls} == {server.base_url}


@pytest.mark.anyio
async def test_a_replay_miss_names_the_block_and_the_key(tmp_path: Path) -> None:
    tape = tmp_path / "empty.jsonl"
    tape.write_text("")
    text = "# T\n\nThe team says it works.\n"
    cfg = RefineConfig(base_url="http://127.0.0.1:9/v1", model="m", retry=NO_WAIT)
    with pytest.raises(CassetteMissError) as info:
        await refine(text, cfg, transport=ReplayTransport(tape))
    assert str(info.value).startswith("block 0 (line 3): ")
    assert info.value.block_id == 0 and info.value.line_span == (2, 3)
    assert info.value.key and info.value.key in str(info.value)


def test_a_redis_limiter_gets_the_endpoint_and_lease() -> None:
    pytest.importorskip("redis")

    async def main() -> str:
        async with AsyncExitStack() as stack:
            limiter = open_limiter("redis://127.0.0.1:9/0", "ep-key", 3, lease_s=7.5, stack=stack)
            return repr(limiter)

    shown = anyio.run(main)
    assert "endpoint='ep-key'" in shown and "slots=3" in shown and "lease_s=7.5" in shown
