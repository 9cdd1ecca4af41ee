"""``refine bench --copy-edit`` against the loopback stub, and ``--compare-tpot`` of two saved
results (instant replies: shapes and counts, no timing asserts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.ops import run_bench
from owlai_refine.ops.bench.copyedit import CopyEditResult, CopyEditRun, compare_tpot, tpot_of
from owlai_refine.results import BlockOutcome, OutcomeStatus
from owlai_refine.usage import Usage

from .conftest import Stub

REPORT = "# Title\n\nThe first paragraph has some words.\n\nA second one, with more words in it.\n"


def _copy_edit(stub: Stub, capsys: pytest.CaptureFixture[str], report: Path) -> dict[str, Any]:
    argv = ["--base-url", stub.url, "--model", "smollm2", "--copy-edit", str(report),
            "--repeats", "2", "--concurrency", "2", "--json"]  # fmt: skip
    assert run_bench(argv) == 0, capsys.readouterr().err
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_copy_edit_refines_the_report_each_repeat(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    data = _copy_edit(stub, capsys, report)
    assert (data["report"], data["model"], data["speculative"]) == ("r.md", "smollm2", None)
    assert len(data["runs"]) == 2
    chats = [r for r in stub.state.requests if r.get("stream")]
    assert len(chats) == 4  # 2 blocks x 2 repeats, streamed (TTFT is measured)
    for run in data["runs"]:
        assert run["blocks_sent"] == 2
        # the stub answers max_tokens tokens, cut at the length limit: kept as truncated
        assert run["outcomes"] == {"truncated": 2}
        assert run["completion_tokens"] == sum(r["max_tokens"] for r in chats[:2])
        assert run["tpot_s"] is not None and run["tpot_s"] >= 0
        assert run["draft_tokens"] is None  # the stub's /metrics has no spec-decode counters


def test_copy_edit_text_table(
    stub: Stub, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "r.md"
    report.write_text(REPORT)
    argv = ["--base-url", stub.url, "--model", "smollm2", "--copy-edit", str(report),
            "--repeats", "1"]  # fmt: skip
    assert run_bench(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("copy edit of r.md on ")
    assert "| 1 | " in out and "truncated 2" in out


def test_an_unreadable_report_exits_3(stub: Stub, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--base-url", stub.url, "--model", "smollm2", "--copy-edit", "/nonexistent.md"]
    assert run_bench(argv) == 3
    err = capsys.readouterr().err
    assert err.startswith("refine bench: error: /nonexistent.md: cannot read the report")
    assert err.count("\n") == 1
    assert stub.state.requests == []


def _outcome(latency: float, ttft: float, tokens: int) -> BlockOutcome:
    usage = Usage(latency_s=latency, ttft_s=ttft, completion_tokens=tokens)
    return BlockOutcome(block_id=0, kind="paragraph", line_span=(0, 1),
                        status=OutcomeStatus.REFINED, usage=usage)  # fmt: skip


def test_tpot_is_decode_time_over_tokens_after_the_first() -> None:
    # 11 tokens in 1.1 s after a 0.1 s first token: 0.1 s a token; 3 tokens in 0.5 s: 0.2
    token_weighted, median = tpot_of([_outcome(1.1, 0.1, 11), _outcome(0.5, 0.1, 3)])
    assert token_weighted == pytest.approx(1.4 / 12)
    assert median == pytest.approx(0.15)
    assert tpot_of([_outcome(0.2, 0.2, 1)]) == (None, None)  # one token: no decode step


def _result(tpot: float, tokens: int, spec: str | None, drafted: float | None) -> CopyEditResult:
    run = CopyEditRun(wall_s=10, slot_s=30, blocks_sent=5, completion_tokens=tokens,
                      prompt_tokens=900, tpot_s=tpot, tpot_p50_s=tpot, ttft_p50_s=0.2,
                      outcomes={"refined": 3, "unchanged": 2}, draft_tokens=drafted,
                      accepted_tokens=None if drafted is None else drafted / 2)  # fmt: skip
    return CopyEditResult(base_url="http://127.0.0.1:1/v1", model="m", report="r.md",
                          speculative=spec, runs=[run, run])  # fmt: skip


def test_compare_tpot_table_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    off, on = _result(0.050, 400, "off", None), _result(0.025, 420, "ngram", 800)
    table = compare_tpot(off, on)
    assert "| speculative | off | ngram |  |" in table
    assert "| TPOT, token-weighted (ms) | 50.00 | 25.00 | 0.500 |" in table
    assert "| completion tokens | 400 | 420 | 1.050 |" in table
    assert "| drafted tokens accepted | - | 50.0% of 1,600 |  |" in table
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(off.model_dump_json())
    b.write_text(on.model_dump_json())
    assert run_bench(["--compare-tpot", str(a), str(b)]) == 0
    assert capsys.readouterr().out.strip() == table


def test_compare_tpot_refuses_a_file_that_is_not_a_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(_result(0.05, 400, "off", None).model_dump_json())
    b.write_text('{"steps": []}')
    assert run_bench(["--compare-tpot", str(a), str(b)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"refine bench: error: {b}: not a `refine bench --copy-edit --json`")
    assert err.count("\n") == 1
