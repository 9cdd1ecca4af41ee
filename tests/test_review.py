"""The review page and ``--diff``: the word diff itself, the page's escaping, and the CLI
writing both (model calls to the loopback server, testsupport/fake_openai.py). The page as a
browser shows it is tested in tests/test_review_browser.py."""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.cli import Exit, main
from owlai_refine.config import RetryPolicy
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.refiner import refine
from owlai_refine.results import BlockOutcome, OutcomeStatus, RefineResult, TokenTotals
from owlai_refine.review import review_page, word_diff
from owlai_refine.review.terminal import diff_text
from owlai_refine.review.worddiff import tokens
from testsupport.fake_openai import FakeOpenAI, Fault

LONG = " ".join(f"word{i}" for i in range(600))
REPORT = f"""# Review fixture

The team says the plan works [1].

This paragraph is already fine and stays as it is.

The budget grew by 42 percent in 2024, as the board says.

- an item that says <script>alert("x")</script> & "quotes" 'single'
- \u0645\u0631\u062d\u0628\u0627 and an override \u202egnp.exe\u202c that says so
- See [the source](https://example.com/source) for what it says.

A very long line that says {LONG}.
"""


def edit(text: str) -> str:
    """The model the loopback server plays: a number changed (the guard refuses it), a fine
    paragraph returned as it was, every other block's "says" made "states"."""
    if "42 percent" in text:
        return text.replace("42", "24")
    return text.replace("says", "states")


def counts_logged(log: Path) -> dict[str, int]:
    """The statuses the run's ``refine.done`` line counted (the JSON log, not the page)."""
    for line in log.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "refine.done":
            return {k: event[k] for k in ("refined", "unchanged", "rejected", "skipped")}
    raise AssertionError("no refine.done line")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OWLAI_REFINE_BASE_URL", "OWLAI_REFINE_MODEL", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)


def write_review(tmp_path: Path, *more: str) -> tuple[int, Path, Path]:
    """Refine :data:`REPORT` with ``--review``: ``(exit code, page, JSON log)``."""
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    page, log = tmp_path / "review.html", tmp_path / "log.jsonl"
    with FakeOpenAI(reply=edit) as server:
        args = [str(report), "-o", str(tmp_path / "out.md"), "--review", str(page), *more]
        code = main([*args, "--base-url", server.base_url, "--log-file", str(log)])
    return code, page, log


# ---------------------------------------------------------------- the word diff


def marked(old: str, new: str, language: str | None = None) -> str:
    return "".join(
        f"[-{c.text}-]" if c.op == "delete" else f"{{+{c.text}+}}" if c.op == "insert" else c.text
        for c in word_diff(old, new, language)
    )


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "The results was good and the team were happy [1].",
            "The results were good, and the team was happy [1].",
            "The results [-was-]{+were+} good{+,+} and the team [-were-]{+was+} happy [1].",
        ),
        ("a b c d", "a x y d", "a [-b c-]{+x y+} d"),  # the space between two edits is in both
        ("a b c", "a c", "a[- b-] c"),  # a deletion alone carries the space before it
        ("b c", "c", "[-b -]c"),  # or, first in the text, the one after
        ("a c", "a b c", "a {+b+} c"),
        ("grew 12.5% in 2024", "grew 12.6% in 2024", "grew [-12.5-]{+12.6+}% in 2024"),
        ("one\ntwo three", "one two\nthree", "one two\nthree"),  # a reflow is no edit
        ("the long-term plan", "the short-term plan", "the [-long-term-]{+short-term+} plan"),
        (
            "東京都に住んでいます。",
            "東京に住んでいました。",
            "東京[-都-]に住んでい[-ます-]{+ました+}。",
        ),
        ("我们今天去北京大学学习", "我们明天去北京大学学习", "我们[-今天-]{+明天+}去北京大学学习"),
        ("학교에서 공부했다.", "학교에서 공부한다.", "학교에서 [-공부했다-]{+공부한다+}."),
    ],
)
def test_the_word_diff_marks_words_as_git_word_diff_does(old: str, new: str, expected: str) -> None:
    assert marked(old, new) == expected


def test_cjk_runs_are_cut_into_the_analysers_words() -> None:
    assert tokens("東京都に住んでいます", "ja") == ["東京", "都", "に", "住ん", "で", "い", "ます"]
    assert tokens("我们今天去北京大学学习", "zh") == ["我们", "今天", "去", "北京大学", "学习"]
    assert tokens("한국어 문장", "ko") == ["한국어", " ", "문장"]
    assert tokens("漢字", "latin") == ["漢", "字"]  # no analyser for the label: characters


_TEXT = st.text(alphabet=st.sampled_from("ab c.\n\t東京都にはカ한글,1'-\u202e"), max_size=40)


@given(_TEXT, _TEXT)
def test_the_new_side_of_a_diff_is_the_new_text_and_the_old_side_the_old_words(
    old: str, new: str
) -> None:
    chunks = word_diff(old, new)
    assert "".join(c.text for c in chunks if c.op != "delete") == new
    old_side = "".join(c.text for c in chunks if c.op != "insert")
    assert old_side.split() == old.split() or re.sub(r"\s+", "", old_side) == re.sub(
        r"\s+", "", old
    )
    assert all(c.text for c in chunks)
    assert all(a.op != b.op for a, b in itertools.pairwise(chunks))


# ---------------------------------------------------------------- the page, pure


def result_for(source: str, **by_block: dict[str, Any]) -> RefineResult:
    doc = parse(source)
    outcomes = tuple(
        BlockOutcome(
            block_id=b.id,
            kind=b.kind.value,
            line_span=b.line_span,
            **by_block.get(f"b{b.id}", {"status": OutcomeStatus.UNCHANGED}),
        )
        for b in doc.blocks
    )
    return RefineResult(
        report_id="r", text=source, outcomes=outcomes, tokens=TokenTotals(), elapsed_s=0.5
    )


def test_the_page_escapes_every_text_and_shows_controls_as_marks() -> None:
    source = 'Plain <script>alert(1)</script> "q" & \u202eevil\u202c [1].\n\nSecond one.\n'
    hostile = '<img src="https://evil.example/x.png" onerror="alert(2)"> \x1b[2J'
    result = result_for(
        source,
        b0={
            "status": OutcomeStatus.REFINED,
            "text": source.split("\n", maxsplit=1)[0] + " " + hostile,
        },
        b1={
            "status": OutcomeStatus.REJECTED,
            "reply": "</div><script>alert(3)</script>",
            "reasons": ('lost sentence "Second one."',),
            "reason_groups": ("lost sentence",),
        },
    )
    page = review_page(parse(source), result, name='<u>"x".md')
    body = page.split("</style>", 1)[1].rsplit("<script nonce=", 1)[0]
    assert "<script" not in body and "<img" not in body and "<u>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;/div&gt;&lt;script&gt;alert(3)" in body
    assert "&quot;q&quot; &amp;" in body and "&lt;u&gt;&quot;x&quot;.md" in body
    assert "\u202e" not in page and "\x1b" not in page
    assert body.count('<span class="ctl">&lt;U+202E&gt;</span>') == 1  # the block, not the diff
    assert '<span class="ctl">&lt;U+001B&gt;</span>' in body
    assert re.findall(r'(?:src|href)="([^"#][^"]*)"', page) == []  # only #fragments
    nonce = re.search(r"script-src 'nonce-([^']+)'", page)
    assert nonce and page.count(f'nonce="{nonce[1]}"') == 2  # the style and the script
    assert "default-src 'none'" in page


def test_a_result_of_another_report_is_refused() -> None:
    result = result_for("One.\n\nTwo.\n")
    with pytest.raises(ValueError, match=r"blocks \[1\]"):
        review_page(parse("One.\n"), result, name="r.md")


# ---------------------------------------------------------------- the CLI


def test_review_writes_one_page_with_every_block_its_status_and_the_reasons(
    tmp_path: Path,
) -> None:
    code, page, log = write_review(tmp_path)
    assert code == Exit.OK
    html = page.read_text(encoding="utf-8")
    counts = counts_logged(log)
    assert counts["refined"] >= 2 and counts["unchanged"] >= 1 and counts["rejected"] == 1
    for status, n in counts.items():
        assert f'data-status="{status}" href="#{status}">{status} <b>{n}</b>' in html
    sections = re.findall(r'<section class="block" id="block-(\d+)" data-status="(\w+)"', html)
    assert [int(i) for i, _ in sections] == list(range(len(parse(REPORT).blocks)))
    assert [s for _, s in sections].count("rejected") == 1
    assert "<del>says</del><ins>states</ins>" in html
    rejected = html.split('data-status="rejected"><div')[1].split("</section>")[0]
    assert '<span class="lines">line 7</span>' in rejected
    assert '<span class="group">changed number</span>' in rejected
    assert "<del>42</del><ins>24</ins>" in rejected and "(not applied)" in rejected
    assert not list(tmp_path.glob(".review.html.*"))  # written atomically: no temporary left


def test_review_is_written_when_the_run_stops_early(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_waits(source: str, config: Any, **kwargs: Any) -> Any:
        return refine(
            source, config.model_copy(update={"retry": RetryPolicy(wait_scale=0)}), **kwargs
        )

    monkeypatch.setattr("owlai_refine.cli.run.refine", no_waits)
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    page = tmp_path / "review.html"
    with FakeOpenAI(reply=edit, fault=lambda n, body: Fault(reset=True) if n else None) as s:
        args = [str(report), "-o", str(tmp_path / "out.md"), "--review", str(page)]
        code = main([*args, "--base-url", s.base_url, "--concurrency", "1", "--no-stream"])
    assert code == Exit.PARTIAL
    html = page.read_text(encoding="utf-8")
    assert '<p class="stopped">The run stopped early: ' in html
    assert html.count('data-status="failed"') >= 2 and "not sent: " in html


def test_review_refuses_its_own_report_dry_run_and_a_missing_folder_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text(REPORT, encoding="utf-8")
    out = tmp_path / "out.md"
    with FakeOpenAI(reply=edit) as server:
        url = ["--base-url", server.base_url]
        assert main([str(report), "-o", str(out), "--review", str(out), *url]) == Exit.OUTPUT
        assert "is the refined report's file" in capsys.readouterr().err
        assert main([str(report), "--review", str(report), *url]) == Exit.OUTPUT
        assert "is the input" in capsys.readouterr().err
        assert main([str(report), "--dry-run", "--review", "r.html", *url]) == Exit.CONFIG
        assert "--dry-run sends nothing" in capsys.readouterr().err
        missing = tmp_path / "nowhere" / "review.html"
        assert main([str(report), "-o", str(out), "--review", str(missing), *url]) == Exit.OUTPUT
        assert "does not exist" in capsys.readouterr().err
        assert server.seen == []
    assert not out.exists()


def test_diff_prints_each_refined_block_under_its_line_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, _ = write_review(tmp_path, "--diff")
    assert code == Exit.OK
    shown = capsys.readouterr().out
    assert shown.startswith("@@ line 3 @@\nThe team [-says-]{+states+} the plan works [1].\n")
    assert "42 percent" not in shown  # a rejected block is no accepted edit
    assert "<U+202E>gnp.exe<U+202C>" in shown and "\u202e" not in shown
    assert re.findall(r"^@@ .* @@$", shown, re.MULTILINE)[-1] == "@@ line 13 @@"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_diff_is_red_and_green_at_a_terminal_and_marked_under_no_color(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for no_color, expected in (("", "\x1b[31msays\x1b[0m\x1b[32mstates\x1b[0m"), ("1", "[-says-]")):
        monkeypatch.setenv("NO_COLOR", no_color)
        screen = Terminal()
        monkeypatch.setattr("sys.stdout", screen)
        code, _, _ = write_review(tmp_path, "--diff")
        assert code == Exit.OK
        assert expected in screen.getvalue()


def test_diff_goes_to_stderr_when_the_report_goes_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text("# T\n\nThe team says so.\n", encoding="utf-8")
    with FakeOpenAI(reply=edit) as server:
        log = ["--log-file", str(tmp_path / "log.jsonl")]
        assert main([str(report), "--diff", "--base-url", server.base_url, *log]) == Exit.OK
    out, err = capsys.readouterr()
    assert out == "# T\n\nThe team states so.\n"
    assert "@@ line 3 @@\nThe team [-says-]{+states+} so.\n" in err


def test_diff_text_draws_a_deletions_leading_space_outside_its_marks() -> None:
    source = "The big red house.\n"
    result = result_for(source, b0={"status": OutcomeStatus.REFINED, "text": "The red house."})
    assert diff_text(parse(source), result) == "@@ line 1 @@\nThe [-big-] red house.\n"
    page = review_page(parse(source), result, name="r.md")
    assert "The <del>big</del> red house." in page


def test_diff_text_of_a_run_with_no_edit_is_empty() -> None:
    source = "One.\n\nTwo.\n"
    assert diff_text(parse(source), result_for(source)) == ""
