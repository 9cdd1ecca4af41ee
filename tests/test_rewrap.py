"""A refined block keeps the original's line breaks where its words allow: the reply,
often one long line, is re-wrapped at the block's own width before it is spliced, so a ``git
diff`` of the refined report shows the edit, not a reflow."""

from __future__ import annotations

import difflib
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.rewrap import rewrap
from owlai_refine.pipeline.splice import splice
from tests.record_cassettes import FIXTURES


def _changed_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(True), after.splitlines(True), n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _refined(source: str, start: int, edit: tuple[str, str], *, one_line: bool = True) -> str:
    """``source`` with the block starting on line ``start`` replaced by a reply that makes
    ``edit`` (old words -> new) and, as a model does, comes back as one line."""
    doc = parse(source)
    block = next(b for b in doc.blocks if b.start == start)
    reply = " ".join(block.text.split()) if one_line else block.text
    assert edit[0] in reply
    return splice(doc, {block.id: rewrap(block, reply.replace(*edit))})


def test_one_word_removed_in_the_rust_rfc_changes_only_its_line() -> None:
    source = (FIXTURES / "reports" / "cfg-checking-crlf.md").read_bytes().decode()
    out = _refined(source, 517, ("mainly be exposed", "mainly exposed"))
    assert _changed_lines(source, out) == [
        "-  complexity that will be mainly be exposed to build systems, such as Cargo.\r\n",
        "+  complexity that will be mainly exposed to build systems, such as Cargo.\r\n",
    ]  # CRLF kept, the "* " item's "  " continuation kept, line 518 untouched


PARAGRAPH = """# Notes

> The scheduler admits a request when its prompt fits in the free KV cache
> and the running sequences stay under the limit; otherwise the request waits in
> the queue, ordered by priority and arrival time.

- The refine stage sends each block once, with a `max_tokens` sized to the
  block and an id that joins our log to the server's log (see [the vLLM docs](https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)
  for the header that echoes it back).
"""


def test_a_word_changed_in_a_quote_changes_only_its_line() -> None:
    out = _refined(PARAGRAPH, 2, ("under the limit", "under the bound"))
    assert _changed_lines(PARAGRAPH, out) == [
        "-> and the running sequences stay under the limit; otherwise the request waits in\n",
        "+> and the running sequences stay under the bound; otherwise the request waits in\n",
    ]


def test_a_longer_word_carries_the_overflow_to_the_next_line_not_a_new_one() -> None:
    out = _refined(PARAGRAPH, 2, ("stay under", "remain below"))
    assert _changed_lines(PARAGRAPH, out) == [
        "-> and the running sequences stay under the limit; otherwise the request waits in\n",
        "-> the queue, ordered by priority and arrival time.\n",
        "+> and the running sequences remain below the limit; otherwise the request waits\n",
        "+> in the queue, ordered by priority and arrival time.\n",
    ]


def test_a_longer_edit_on_the_last_line_wraps_it_and_leaves_the_others() -> None:
    longer = "ordered first by their priority class and then by the time of their arrival"
    out = _refined(PARAGRAPH, 2, ("ordered by priority and arrival time", longer))
    changed = _changed_lines(PARAGRAPH, out)
    assert changed[0] == "-> the queue, ordered by priority and arrival time.\n"
    assert [c[0] for c in changed] == ["-", "+", "+"]  # one line became two, nothing else moved
    width = max(cell_len(line) for line in PARAGRAPH.splitlines()[2:5])
    assert all(cell_len(line) <= width for line in out.splitlines()[2:6])


def test_never_breaks_inside_code_a_link_or_a_url() -> None:
    doc = parse(PARAGRAPH)
    block = next(b for b in doc.blocks if b.start == 6)
    reply = " ".join(block.text.split()).replace("sends each block once", "sends every block once")
    new = rewrap(block, reply)
    assert new.split() == reply.split()  # only whitespace changed
    link = "[the vLLM docs](https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)"
    assert link in new and "`max_tokens`" in new
    assert _changed_lines(PARAGRAPH, splice(doc, {block.id: new})) == [
        "-- The refine stage sends each block once, with a `max_tokens` sized to the\n",
        "+- The refine stage sends every block once, with a `max_tokens` sized to the\n",
    ]


def test_a_line_never_starts_with_what_would_open_a_block() -> None:
    block = parse("word word word word\nword word word word\n").blocks[0]
    reply = "word word word word - word word # word 1. word > word"  # each mark would open one
    new = rewrap(block, reply)
    assert new.split() == reply.split()
    assert all(not line.startswith(("-", "#", "1.", ">")) for line in new.split("\n"))
    assert parse(new).blocks[0].text == new  # still one paragraph


def test_korean_is_measured_in_cells_and_wrapped_at_its_spaces() -> None:
    source = (
        "리더십 위원회는 프로젝트 전체의 우선순위를 정하고 팀 사이의\n"
        "조정을 맡으며 각 팀의 대표로 구성됩니다. 위원회는 공개적으로\n"
        "운영되며 결정의 근거를 기록으로 남깁니다.\n"
    )
    doc = parse(source)
    (block,) = doc.blocks
    reply = " ".join(block.text.split()).replace("남깁니다", "남겨 둡니다")
    out = splice(doc, {block.id: rewrap(block, reply)})
    assert _changed_lines(source, out) == [
        "-운영되며 결정의 근거를 기록으로 남깁니다.\n",
        "+운영되며 결정의 근거를 기록으로 남겨 둡니다.\n",
    ]
    assert max(cell_len(line) for line in out.splitlines()) <= 62  # wide characters count two


def test_text_without_spaces_keeps_the_replys_own_breaks() -> None:
    block = parse("これは日本語の段落です。二行に\n分けて書かれています。\n").blocks[0]
    reply = "これは日本語の段落です。二行に分けて\n書かれています。"
    assert rewrap(block, reply) == reply  # a break next to CJK text: left as the model wrote it
    one_line = "これは日本語の段落です。二行に分けて書かれています。"
    assert rewrap(block, one_line) == one_line  # no space to break at: one line


def test_a_one_line_block_keeps_the_reply_as_it_is() -> None:
    block = parse("A single line of text that the model may return differently.\n").blocks[0]
    reply = "A single line of text\nthat the model returned in two lines."
    assert rewrap(block, reply) == reply


_WORDS = st.sampled_from(
    ["the", "model", "`code span`", "[a link](https://x.org/a b)", "https://x.org/long/path",
     "-", "#", "1.", "word\\", "데이터", "処理", "CJK漢字", "a", "longerword", "$x + y$"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_WORDS, min_size=1, max_size=8), min_size=2, max_size=5),
    st.lists(_WORDS, min_size=1, max_size=40),
)
def test_rewrap_changes_only_whitespace_and_keeps_spans_whole(
    lines: list[list[str]], reply_words: list[str]
) -> None:
    block = parse("x\n").blocks[0]
    text = "\n".join(" ".join(["lead", *line]) for line in lines)
    block = replace(block, end=len(lines), prefixes=("",) * len(lines), text=text)
    reply = " ".join(["lead", *reply_words])
    new = rewrap(block, reply)
    assert new.split() == reply.split()  # the same words in the same order
    for span in ("`code span`", "[a link](https://x.org/a b)", "$x + y$"):
        assert new.count(span) == reply.count(span)  # never broken inside
    for line in new.split("\n")[1:]:
        assert not line.startswith(("-", "#", "1.")), new
    assert all(not line.endswith("\\") for line in new.split("\n")[:-1]), new
