"""Hypothesis properties of parse + splice: echo in, same bytes out; new text lands in place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from owlai_refine.blocks import Document
from owlai_refine.pipeline.parse import parse, split_lines
from owlai_refine.pipeline.splice import splice
from testsupport.checks import skeleton_changes
from testsupport.reports import shared_reports

FIXTURE_MARKDOWN = sorted(Path(__file__).resolve().parents[1].joinpath("fixtures").glob("*/*.md"))

WORDS = ["alpha", "beta", "gamma", "delta", "Report", "data", "x", "GPU", "한국어", "日本語"]
EOLS = st.sampled_from(["\n", "\r\n", "\r"])


def _echo_holds(doc: Document) -> None:
    assert splice(doc, {}) == doc.source
    assert splice(doc, {b.id: b.text for b in doc.blocks}) == doc.source


@st.composite
def inline_text(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from([*WORDS, "`code`", "[1]", "*em*", "$x$"]), min_size=1))
    return " ".join(words)


@st.composite
def markdown_doc(draw: st.DrawFn, depth: int = 0) -> list[str]:
    """A list of lines (without endings) mixing the constructs a splicer must survive."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(
            st.sampled_from(
                ["para", "list", "olist", "quote", "fence", "table", "heading", "indented"]
                if depth < 2
                else ["para", "fence", "heading"]
            )
        )
        if kind == "para":
            for _ in range(draw(st.integers(1, 3))):
                trail = draw(st.sampled_from(["", "", " ", "\t"]))
                lines.append(draw(inline_text()) + trail)
        elif kind in ("list", "olist"):
            for n in range(draw(st.integers(1, 3))):
                marker = (
                    draw(st.sampled_from(["-", "*", "+"]))
                    if kind == "list"
                    else f"{n + 1}{draw(st.sampled_from(['.', ')']))}"
                )
                gap = draw(st.sampled_from([" ", "  ", "   ", "\t"]))
                indent = " " * (len(marker) + (len(gap) if gap != "\t" else 4 - len(marker) % 4))
                lines.append(f"{marker}{gap}{draw(inline_text())}")
                if draw(st.booleans()):
                    lazy = draw(st.booleans())
                    lines.append(("" if lazy else indent) + draw(inline_text()))
                if draw(st.booleans()):
                    if draw(st.booleans()):
                        lines.append("")
                    inner = draw(markdown_doc(depth + 1))
                    lines.extend(indent + line if line else "" for line in inner)
            if draw(st.booleans()):
                lines.append("")
        elif kind == "quote":
            inner = draw(markdown_doc(depth + 1))
            mark = draw(st.sampled_from(["> ", ">", "> > "]))
            lines.extend(mark + line for line in inner)
        elif kind == "fence":
            lines += ["```py", draw(inline_text()), "- not a list", "```"]
        elif kind == "table":
            lines += ["| a | b |", "|---|:-:|", f"| {draw(inline_text())} | 1 |"]
        elif kind == "heading":
            lines.append("#" * draw(st.integers(1, 4)) + " " + draw(inline_text()))
        else:
            lines += ["", "    indented code", ""]
        lines.append("")
    return lines


@st.composite
def markdown_source(draw: st.DrawFn) -> str:
    lines = draw(markdown_doc())
    eol = draw(EOLS)
    mixed = draw(st.booleans())
    parts = [line + (draw(EOLS) if mixed else eol) for line in lines]
    text = "".join(parts)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")  # no final newline
    if draw(st.booleans()):
        text = "\ufeff" + text
    return text


@given(st.text())
@example("\ufeff- a\n\tb\r\n")
@example("> > a\n> b\rc\u2028d\n\n- x\n\n  y\n  - z\n")
@example("a  \nb\\\nc")
@example("- \n  foo\n\n1.     code\n   para")
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_echo_any_text(text: str) -> None:
    _echo_holds(parse(text))


@given(markdown_source())
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_echo_generated_markdown(text: str) -> None:
    _echo_holds(parse(text))


@given(markdown_source(), st.integers(1, 3), st.data())
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_new_text_lands_in_its_block(text: str, n_lines: int, data: st.DataObject) -> None:
    """Replace every sent block with text of another line count: the result parses back to the
    same blocks, each holding the new text, and every line outside the blocks is unchanged."""
    doc = parse(text)
    new = {
        b.id: "\n".join(
            " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
            for _ in range(n_lines)
        )
        for b in doc.sendable
    }
    out = splice(doc, new)
    again = parse(out)
    assert [(b.kind, b.skip is None) for b in again.blocks] == [
        (b.kind, b.skip is None) for b in doc.blocks
    ]
    for before, after in zip(doc.blocks, again.blocks, strict=True):
        expected = new.get(before.id, before.text)
        assert [s.strip() for s in after.text.split("\n")] == [
            s.strip() for s in expected.split("\n")
        ]
    outside = [
        line
        for i, line in enumerate(doc.lines)
        if not any(b.start <= i < b.end for b in doc.blocks if b.id in new)
    ]
    outside_after = [
        line
        for i, line in enumerate(split_lines(out[len(doc.bom) :]))
        if not any(b.start <= i < b.end for b in again.blocks if b.id in new)
    ]
    assert outside == outside_after  # text and line ending alike
    # The independent oracle (markdown-it-py read directly, no product code): every line
    # outside the paragraphs is kept, ending included, and no new kind of line ending appears.
    assert skeleton_changes(text, out) == []
    endings = {m for m in re.findall(r"\r\n|\r|\n", text)} or {"\n"}
    assert set(re.findall(r"\r\n|\r|\n", out)) <= endings
    assert out.startswith(doc.bom)


@pytest.mark.parametrize("path", shared_reports() + FIXTURE_MARKDOWN, ids=lambda p: p.name)
def test_echo_real_reports(path: Path) -> None:
    source = path.read_bytes().decode("utf-8")
    doc = parse(source)
    _echo_holds(doc)
    assert splice(doc, {b.id: b.text for b in doc.sendable}).encode() == path.read_bytes()
