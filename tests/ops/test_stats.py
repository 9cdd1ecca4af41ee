"""``refine stats`` on the sample ledger: figures computed by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from owlai_refine.ops import run_stats
from owlai_refine.ops.ledger import parse_ledger_lines, read_ledgers
from owlai_refine.ops.stats.figures import format_stats, ledger_stats

from .conftest import FIXTURES

SAMPLE = FIXTURES / "ledger-sample.log"


def test_ledger_reader_counts_what_it_skips() -> None:
    read = read_ledgers([SAMPLE])
    assert len(read.calls) == 8  # refine.call lines, the failed attempt included
    assert read.other_events == 3  # refine.start, refine.block_truncated, refine.done
    assert read.skipped_lines == 2  # a text line and a JSON array; the blank line is not counted
    failed = [c for c in read.calls if c.error]
    assert len(failed) == 1
    assert failed[0].prompt_tokens is None


def test_group_figures_by_hand() -> None:
    stats = ledger_stats(read_ledgers([SAMPLE]), files=1)
    assert [(g.model, g.backend) for g in stats.groups] == [
        ("gpt-x", "cloud"),
        ("smollm2", "self-hosted"),
    ]
    g = stats.groups[1]
    assert (g.calls, g.failed, g.cached_tokens_total) == (6, 1, 512)
    # prompts sorted [1000, 2000, 3000, 9000, 40000]: type 7, h = 4p
    p = g.prompt_tokens
    assert p is not None
    assert (p.p10, p.p50, p.p90, p.p99, p.max) == pytest.approx((1400, 3000, 27600, 38760, 40000))
    assert (p.n, p.total) == (5, 55000)
    # 8K = 8,192: 9000 and 40000 above; 32K = 32,768: 40000; 128K: none
    assert g.share_above == {"8K": 0.4, "32K": 0.2, "128K": 0.0}
    # completions sorted [48, 100, 200, 250, 300]
    c = g.completion_tokens
    assert c is not None
    assert (c.p10, c.p50, c.p90, c.p99, c.max) == pytest.approx((68.8, 200, 280, 298, 300))
    assert c.mean == pytest.approx(179.6)
    assert g.finish_reasons == {"stop": 3, "length": 2}
    assert g.truncation_rate == pytest.approx(0.4)

    cloud = stats.groups[0]
    assert cloud.prompt_tokens is not None
    assert cloud.prompt_tokens.p10 == pytest.approx(14450)  # 500 + 0.1 * 139500
    assert cloud.share_above == {"8K": 0.5, "32K": 0.5, "128K": 0.5}  # 140000 > 131072
    assert cloud.truncation_rate == 0.0
    assert cloud.finish_reasons == {"content_filter": 1, "stop": 1}


def test_group_without_usage_has_no_quantiles() -> None:
    line = json.dumps({"event": "refine.call", "model": "m", "backend": "cloud", "error": "x"})
    stats = ledger_stats(parse_ledger_lines([line]), files=1)
    g = stats.groups[0]
    assert g.prompt_tokens is None
    assert g.truncation_rate is None


def test_cli_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stats([str(SAMPLE)]) == 0
    out = capsys.readouterr().out
    assert "model smollm2 | backend self-hosted | 6 call(s), 1 failed, 5 with usage" in out
    assert "p10 1,400  p50 3,000  p90 27,600  p99 38,760  max 40,000" in out
    # block 3: 48 tokens of the 600 asked, the recorded server's 48-token override
    assert "truncation rate    40.0% (2 of 5; 1 cut by the server's own output cap" in out
    assert "2 non-JSON line(s) skipped, 3 other event(s) ignored" in out


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stats([str(SAMPLE), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["call_lines"] == 8
    assert data["groups"][1]["prompt_tokens"]["p90"] == pytest.approx(27600)


def test_cli_missing_file_is_one_line_exit_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stats(["/nonexistent/ledger.log"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("refine stats: error: cannot read ledger /nonexistent/ledger.log")


def test_cli_file_without_call_lines_is_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that is not a usage ledger (here a report) is an input error, not empty figures."""
    report = tmp_path / "report.md"
    report.write_text("# Title\n\nA paragraph.\n", encoding="utf-8")
    assert run_stats([str(report)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "no refine.call lines in" in err
    assert "2 non-JSON line(s)" in err  # the blank line is not counted


def test_cli_usage_error_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stats(["--tabel"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "refine stats: error:" in err


def test_no_argument_reads_the_default_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``refine stats`` alone reads the ledger the runs write, as the README's "Operator tools"
    says."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    ledger = tmp_path / "owlai-refine" / "ledger.jsonl"
    ledger.parent.mkdir()
    ledger.write_bytes(SAMPLE.read_bytes())
    assert run_stats([str(SAMPLE)]) == 0
    named = capsys.readouterr().out
    assert run_stats([]) == 0
    assert capsys.readouterr().out == named and "refine.call" not in named


def test_no_argument_and_no_ledger_is_one_line_naming_it_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert run_stats([]) == 3
    err = capsys.readouterr().err
    ledger = tmp_path / "owlai-refine" / "ledger.jsonl"
    assert err == (
        f"refine stats: error: no ledger at {ledger}: a refine run at a terminal writes it; "
        "or name LOG files (a run's --log-file)\n"
    )


def test_cli_help_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_stats(["--help"]) == 0
    assert "usage: refine stats" in capsys.readouterr().out


def test_a_reply_that_used_exactly_max_tokens_counts_as_truncated() -> None:
    """The refine's own rule (``results.is_truncated``): a server may say ``stop`` at the cap."""
    base = {"event": "refine.call", "model": "m", "backend": "cloud", "max_tokens": 64}
    lines = [
        json.dumps({**base, "finish_reason": "stop", "completion_tokens": 64}),
        json.dumps({**base, "finish_reason": "stop", "completion_tokens": 20}),
        json.dumps({**base, "finish_reason": "length", "completion_tokens": 64}),
        json.dumps({**base, "finish_reason": "stop", "completion_tokens": 10}),
    ]
    g = ledger_stats(parse_ledger_lines(lines), files=1).groups[0]
    assert g.truncated == 2
    assert g.truncation_rate == pytest.approx(0.5)


def test_cached_tokens_never_reported_print_unknown(tmp_path: Path) -> None:
    # vLLM without --enable-prompt-tokens-details: cached_tokens is null on every call line
    line = {"event": "refine.call", "model": "m", "backend": "self-hosted", "prompt_tokens": 9}
    log = tmp_path / "run.log"
    log.write_text(json.dumps({**line, "cached_tokens": None}) + "\n")
    stats = ledger_stats(read_ledgers([log]), files=1)
    assert stats.groups[0].cached_tokens_total is None
    text = format_stats(stats)
    assert "cached tokens      unknown" in text and "--enable-prompt-tokens-details" in text
    log.write_text(
        json.dumps({**line, "cached_tokens": None})
        + "\n"
        + json.dumps({**line, "cached_tokens": 4})
    )
    stats = ledger_stats(read_ledgers([log]), files=1)
    assert "total 4 (reported by 1 of 2 calls)" in format_stats(stats)


def test_replies_cut_by_the_server_cap_are_counted_apart(tmp_path: Path) -> None:
    base = {"event": "refine.call", "model": "m", "backend": "self-hosted", "prompt_tokens": 9}
    calls = [
        {**base, "finish_reason": "length", "completion_tokens": 48, "max_tokens": 400},
        {**base, "finish_reason": "length", "completion_tokens": 400, "max_tokens": 400},
        {**base, "finish_reason": "stop", "completion_tokens": 20, "max_tokens": 400},
    ]
    log = tmp_path / "run.log"
    log.write_text("\n".join(json.dumps(c) for c in calls) + "\n")
    g = ledger_stats(read_ledgers([log]), files=1).groups[0]
    assert (g.truncated, g.truncated_by_server) == (2, 1)
    assert "(2 of 3; 1 cut by the server's own output cap" in format_stats(
        ledger_stats(read_ledgers([log]), files=1)
    )
