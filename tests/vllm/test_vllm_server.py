"""Against a real vLLM server for CPU (SmolLM2-135M, ``max_num_seqs`` 4, the server's output cap
48 tokens, ``--enable-request-id-headers``, ``--scheduling-policy priority``): doctor, one short
bench step, a copy-edit bench run, a refine cut by the server's cap, priority scheduling and the
adaptive cap.

No assertion is timed: the priority test checks an order, the adaptive test what the controller
logged while another client held the server."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import anyio
import openai
import pytest
from structlog.testing import capture_logs

from owlai_refine import OutcomeStatus, RefineConfig, refine
from owlai_refine.ops import run_bench, run_doctor

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.anyio]

MODEL = "smollm2"
LONG = (
    "The committee met on Tuesday to review the quarterly figures, and after a long discussion "
    "of revenue, costs, hiring plans, office space, travel budgets and the schedule for the next "
    "product launch, it agreed to publish a summary for every team before the end of the month."
)


def test_doctor_reads_the_server_and_its_scheduling_policy(
    vllm_url: str, vllm_log: Path | None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--base-url", vllm_url, "--json"]
    if vllm_log is not None:
        argv += ["--server-log", str(vllm_log)]
    run_doctor(argv)
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)}
    assert checks["models"]["status"] == "pass"
    assert checks["request-id"]["status"] == "pass"
    if vllm_log is not None:
        assert checks["scheduling"]["status"] == "pass", checks["scheduling"]
        assert checks["max-num-seqs"]["status"] == "pass"
    else:
        assert checks["scheduling"]["status"] == "warn"


def test_one_short_bench_step(vllm_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = f"--base-url {vllm_url} --model {MODEL} --input-tokens 200 --output-tokens 8"
    argv += " --concurrency 2 --repeats 1 --rounds 1 --json"
    code = run_bench(argv.split())
    assert code == 0
    out = capsys.readouterr().out
    assert json.loads(out)  # a JSON table came back


def test_copy_edit_bench_on_a_short_report(
    vllm_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the refiner's own workload, streamed; without speculative decoding the server's /metrics
    # has no draft counters (none drafted: the run says so)
    report = tmp_path / "r.md"
    report.write_text("# Notes\n\nThe team have met twice this week.\n\n- One item here.\n")
    argv = ["--base-url", vllm_url, "--model", MODEL, "--copy-edit", str(report),
            "--repeats", "1", "--concurrency", "2", "--temperature", "0", "--json"]  # fmt: skip
    assert run_bench(argv) == 0
    data = json.loads(capsys.readouterr().out)
    (run,) = data["runs"]
    assert run["blocks_sent"] == 2 and sum(run["outcomes"].values()) == 2
    assert run["completion_tokens"] > 0 and run["slot_s"] > 0
    assert data["temperature"] == 0.0


async def test_a_block_cut_by_the_server_cap_is_kept_with_a_warning_and_the_echoed_id(
    vllm_url: str,
) -> None:
    # the block asks for ~2x its length (~600 tokens); the server's cap gives 48, and a
    # paragraph this long takes the model more than 48 tokens to rewrite (no marker: the model
    # could answer "<unchanged/>" in a few)
    config = RefineConfig(
        base_url=vllm_url, model=MODEL, read_timeout_s=300, unchanged_marker=False
    )
    text = "# Notes\n\n" + " ".join([LONG] * 4) + "\n"
    with capture_logs() as logs:
        result = await refine(text, config)
    assert result.text == text
    (outcome,) = result.outcomes
    assert outcome.status is OutcomeStatus.TRUNCATED and outcome.completion_tokens == 48
    (warning,) = [e for e in logs if e["event"] == "refine.block_truncated"]
    assert warning["log_level"] == "warning" and warning["request_id"] == outcome.request_id
    (call,) = [e for e in logs if e["event"] == "refine.call"]
    assert call["server_request_id"] == outcome.request_id  # vLLM echoed our X-Request-Id
    assert not [e for e in logs if e["event"] == "refine.priority_refused"]


async def _stream(
    client: openai.AsyncOpenAI,
    name: str,
    priority: int,
    firsts: list[str],
    max_tokens: int = 48,
    *,
    started: anyio.Event | None = None,
) -> None:
    """Stream one request; append ``name`` to ``firsts`` at its first token (and set
    ``started`` once four requests have had theirs)."""
    stream = await client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": f"{LONG} Summarise this. ({name})"}],
        max_tokens=max_tokens,
        stream=True,
        extra_body={"priority": priority},
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content and name not in firsts:
            firsts.append(name)
            if started is not None and len(firsts) >= 4:
                started.set()


async def test_priority_scheduling_serves_a_chat_turn_before_queued_refine_requests(
    vllm_url: str,
) -> None:
    client = openai.AsyncOpenAI(base_url=vllm_url, api_key="EMPTY", max_retries=0, timeout=300)
    firsts: list[str] = []
    four = anyio.Event()
    async with anyio.create_task_group() as tg:
        for i in range(4):  # fill max_num_seqs 4 with background requests
            tg.start_soon(partial(_stream, client, f"running{i}", 10, firsts, started=four))
        with anyio.fail_after(120):
            await four.wait()
        for i in range(2):  # two more background requests queue in the server
            tg.start_soon(_stream, client, f"queued{i}", 10, firsts)
        await anyio.sleep(0.5)
        tg.start_soon(_stream, client, "chat", 0, firsts, 8)  # a chat turn arrives last
    await client.close()
    later = firsts[4:]
    assert later.index("chat") < later.index("queued0"), firsts
    assert later.index("chat") < later.index("queued1"), firsts


async def test_the_adaptive_cap_leaves_room_while_another_client_is_active(
    vllm_url: str,
) -> None:
    client = openai.AsyncOpenAI(base_url=vllm_url, api_key="EMPTY", max_retries=0, timeout=300)
    config = RefineConfig(  # no marker: every block a full rewrite, the load this test needs
        base_url=vllm_url,
        model=MODEL,
        adaptive=True,
        adaptive_interval_s=0.5,
        read_timeout_s=300,
        unchanged_marker=False,
    )
    text = "\n\n".join(f"Paragraph {i}: {LONG}" for i in range(10)) + "\n"
    with capture_logs() as logs:
        async with anyio.create_task_group() as tg:

            async def others() -> None:  # two chat clients that keep talking
                while True:
                    async with anyio.create_task_group() as pair:
                        for i in range(2):
                            pair.start_soon(_stream, client, f"other{i}", 0, [], 48)

            tg.start_soon(others)
            await anyio.sleep(2)
            result = await refine(text, config)
            tg.cancel_scope.cancel()
    await client.close()
    assert len(result.outcomes) == 10 and not result.failed
    assert not [e for e in logs if e["event"] == "refine.adaptive_unavailable"]
    changes = [e for e in logs if e["event"] == "refine.adaptive_limit"]
    assert changes, "the controller never moved the limit"
    assert min(e["limit"] for e in changes) <= 2  # 4 slots - 2 others' requests - 1 free
    assert all(1 <= e["limit"] <= 4 for e in changes)
