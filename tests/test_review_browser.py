"""The review page in a real browser: headless Chromium loads the page ``refine --review``
wrote and the test reads the DOM it rendered (after the page's own script ran), the requests
it made, and a screenshot. Skipped, with the reason, where Debian's ``chromium`` is not
installed (``.ci/run`` installs it when run as root)."""

from __future__ import annotations

import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from owlai_refine.cli import Exit, main
from tests.test_review import counts_logged, write_review
from testsupport.browser import chromium, look

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        chromium() is None, reason="no chromium on PATH (Debian: apt-get install chromium)"
    ),
]

REPO = Path(__file__).resolve().parents[1]


class Dom(HTMLParser):
    """What the tests read of a rendered page: each block section's status and whether it is
    hidden, the count links, every src/href, and the text of del, ins and reason elements."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.sections: list[tuple[str, bool]] = []
        self.counts: dict[str, str] = {}
        self.current: dict[str, bool] = {}
        self.links: list[str] = []
        self.texts: dict[str, list[str]] = {"del": [], "ins": [], "li": [], "b": []}
        self._open: list[str] = []
        self._count: str | None = None
        self.body: dict[str, str | None] = {}
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.links += [v or "" for k, v in attrs if k in ("src", "href")]
        if tag == "body":
            self.body = a
        if tag == "section" and a.get("class") == "block":
            self.sections.append((a.get("data-status") or "", "hidden" in a))
        if tag == "a" and "count" in (a.get("class") or ""):
            self._count = a.get("data-status")
            self.current[self._count or ""] = a.get("aria-current") == "true"
        if tag in self.texts:
            self._open.append(tag)
            self.texts[tag].append("")

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1] == tag:
            self._open.pop()
        if tag == "a":
            self._count = None

    def handle_data(self, data: str) -> None:
        for tag in self._open:
            self.texts[tag][-1] += data
        if self._count and self._open[-1:] == ["b"]:
            self.counts[self._count] = data


def test_the_page_renders_counts_diffs_and_reasons_and_the_fragment_filters_it(
    tmp_path: Path,
) -> None:
    code, page, log = write_review(tmp_path)
    assert code == Exit.OK
    counts = counts_logged(log)

    seen = look(page.as_uri(), tmp_path / "all")
    dom = Dom(seen.dom)
    assert dom.body.get("data-filter") == "all"  # the script ran
    assert {s: int(dom.counts[s]) for s in counts} == counts
    assert [s for s, _ in dom.sections].count("rejected") == counts["rejected"] == 1
    assert not any(hidden for _, hidden in dom.sections)
    assert "says" in dom.texts["del"] and "states" in dom.texts["ins"]
    assert "42" in dom.texts["del"] and "24" in dom.texts["ins"]  # the refused reply
    assert any(li.startswith("changed number") for li in dom.texts["li"])
    assert all(link.startswith("#") for link in dom.links)  # the report's URL is text only
    assert "https://example.com/source" in seen.dom
    assert seen.page_requests == []  # nothing fetched: no asset, no network

    dom = Dom(look(page.as_uri() + "#rejected", tmp_path / "rejected").dom)
    assert dom.body.get("data-filter") == "rejected"
    assert [s for s, hidden in dom.sections if not hidden] == ["rejected"]
    assert dom.current == {s: s == "rejected" for s in ["all", *counts, "truncated", "failed"]}

    dom = Dom(look(page.as_uri() + "#refined,unchanged", tmp_path / "two").dom)
    shown = {s for s, hidden in dom.sections if not hidden}
    assert shown == {"refined", "unchanged"} and len(dom.sections) > counts["rejected"]


def test_the_request_witness_sees_a_page_that_fetches(tmp_path: Path) -> None:
    """The control for ``page_requests``: a page with a remote image is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!doctype html><img src="https://example.invalid/x.png">', encoding="utf-8")
    assert "https://example.invalid/x.png" in look(bad.as_uri(), tmp_path / "b").page_requests


def test_a_screenshot_of_the_page_for_a_fixture_report(tmp_path: Path) -> None:
    """The page of a recorded run over a real report (replayed: no model), as a 1280x1600 PNG."""
    report = REPO / "fixtures" / "reports" / "gpu-market.md"
    tape = REPO / "fixtures" / "cassettes" / "gpu-market.jsonl"
    page = tmp_path / "review.html"
    # --no-marker: the prompt the cassette was recorded with
    args = [str(report), "--replay", str(tape), "--no-marker", "-o", str(tmp_path / "out.md")]
    log = ["--log-file", str(tmp_path / "log.jsonl")]
    assert main([*args, "--review", str(page), *log]) == Exit.OK
    png = tmp_path / "review.png"
    seen = look(page.as_uri(), tmp_path / "shot", screenshot=png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 1600)
    assert seen.page_requests == []
