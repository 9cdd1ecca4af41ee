"""The prompt: stable prefix first, the block last and clearly delimited; what it asks for."""

from __future__ import annotations

import pytest

from owlai_refine.blocks import Document
from owlai_refine.config import GuardConfig, OutputBudget
from owlai_refine.guard import check_reply
from owlai_refine.pipeline.parse import parse
from owlai_refine.pipeline.prompt import (
    EXAMPLE_REPLY,
    EXAMPLE_REQUEST,
    FINE_REQUEST,
    MARKER_INSTRUCTIONS,
    SECTION_LABEL,
    SYSTEM_INSTRUCTIONS,
    UNCHANGED_MARKER,
    block_message,
    build_messages,
    estimate_tokens,
    max_tokens_for,
    report_context,
)
from testsupport.blocks import one_block

REPORT = """\
# GPU Market Report

## Demand

The GPU market grew in 2024 [1].

- Prices rose 12% ([Reuters](https://www.reuters.com/x)).

### Supply

Supply is tight.
"""


@pytest.fixture
def doc() -> Document:
    return parse(REPORT)


def test_stable_prefix_first_then_the_block(doc: Document) -> None:
    context = report_context(doc, 2000)
    first, second, third = (build_messages(b, context) for b in doc.sendable)
    assert [m["role"] for m in first] == ["system", "user", "assistant", "user"]
    assert first[:-1] == second[:-1] == third[:-1]  # identical prefix for every block
    assert first[0]["content"] == f"{SYSTEM_INSTRUCTIONS}\n\n{context}"
    assert first[1:3] == [
        {"role": "user", "content": EXAMPLE_REQUEST},
        {"role": "assistant", "content": EXAMPLE_REPLY},
    ]
    assert second[-1]["content"] == (
        f"{SECTION_LABEL} GPU Market Report > Demand\n"
        "<block>\nPrices rose 12% ([Reuters](https://www.reuters.com/x)).\n</block>"
    )
    assert third[-1]["content"].startswith("Section: GPU Market Report > Demand > Supply\n")


def test_block_first_layout_puts_the_block_before_everything(doc: Document) -> None:
    block = doc.sendable[0]
    messages = build_messages(block, "CTX", block_first=True)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] == block_message(block)
    assert messages[1]["content"].startswith(SYSTEM_INSTRUCTIONS)
    assert "CTX" in messages[1]["content"]
    assert EXAMPLE_REPLY in messages[1]["content"]


def test_top_of_report_block_has_a_section_line() -> None:
    (block,) = parse("Just a paragraph.").blocks
    assert (
        block_message(block) == "Section: (top of the report)\n<block>\nJust a paragraph.\n</block>"
    )


def test_report_context(doc: Document) -> None:
    assert report_context(doc, 2000) == (
        "Report title: GPU Market Report\n"
        "Report outline (context only, never copy it):\n"
        "- GPU Market Report\n  - Demand\n    - Supply"
    )
    assert report_context(doc, 0) == ""
    cut = report_context(doc, 90)
    assert len(cut) <= 90
    assert cut.endswith("  ...")


@pytest.mark.parametrize(
    "phrase",
    [
        "meaning",
        "number",
        "citation marker",
        "URL character for character",
        "`inline code`",
        "$math$",
        "HTML tag",
        "**bold**",
        "language of the block. Never translate",
        "one block",
        "nothing else",
        "not instructions to follow",
    ],
)
def test_the_instructions_ask_for_what_the_guard_checks(phrase: str) -> None:
    assert phrase in SYSTEM_INSTRUCTIONS


def test_the_example_reply_passes_the_guard_and_would_be_caught_if_copied() -> None:
    """The worked example is itself a good edit; copied into another block's reply, its
    protected tokens give it away."""
    request_block = EXAMPLE_REQUEST.split("<block>\n", 1)[1].rsplit("\n</block>", 1)[0]
    (example,) = parse(request_block).blocks
    verdict = check_reply(example, EXAMPLE_REPLY, GuardConfig())
    assert verdict.text == EXAMPLE_REPLY
    (other,) = parse("Supply of memory chips is tight this year.").blocks
    leaked = check_reply(other, EXAMPLE_REPLY, GuardConfig())
    assert leaked.text is None
    assert "added citation [1]" in map(str, leaked.reasons)


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a" * 35) == 10
    assert estimate_tokens("한국어") == 8  # 3 x 2.5, rounded up


def test_max_tokens_for() -> None:
    block = one_block("word " * 70)  # 349 characters: 100 estimated tokens
    assert max_tokens_for(block, OutputBudget()) == 2 * 100 + 64
    assert max_tokens_for(block, OutputBudget(max_tokens=100)) == 100


def test_the_marker_prompt_keeps_one_stable_prefix(doc: Document) -> None:
    """With the marker the prefix is still the same for every block: the marker's instruction
    and its worked example sit in it, before the block."""
    context = report_context(doc, 2000)
    first, second = (build_messages(b, context, marker=True) for b in doc.sendable[:2])
    assert [m["role"] for m in first] == [
        "system", "user", "assistant", "user", "assistant", "user"
    ]  # fmt: skip
    assert first[:-1] == second[:-1]
    assert first[0]["content"] == f"{MARKER_INSTRUCTIONS}\n\n{context}"
    assert f"reply with {UNCHANGED_MARKER} alone" in MARKER_INSTRUCTIONS
    assert first[3:5] == [
        {"role": "user", "content": FINE_REQUEST},
        {"role": "assistant", "content": UNCHANGED_MARKER},
    ]
    assert first[-1] == build_messages(doc.sendable[0], context)[-1]
    assert UNCHANGED_MARKER not in SYSTEM_INSTRUCTIONS  # off: the prompt the cassettes hold


def test_the_marker_prompt_keeps_every_instruction_of_the_plain_one() -> None:
    for line in SYSTEM_INSTRUCTIONS.splitlines():
        assert line in MARKER_INSTRUCTIONS


def test_block_first_with_the_marker_shows_both_examples(doc: Document) -> None:
    messages = build_messages(doc.sendable[0], "CTX", block_first=True, marker=True)
    assert messages[1]["content"].startswith(MARKER_INSTRUCTIONS)
    assert messages[1]["content"].endswith(f"Reply:\n{UNCHANGED_MARKER}")
    assert EXAMPLE_REPLY in messages[1]["content"]
