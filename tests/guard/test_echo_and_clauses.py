"""Two kinds of damage the first real runs let through: the model echoing the section headings
the prompt names (a line of headings in front of or after the block), and a clause dropped from
inside a sentence that otherwise survives."""

from __future__ import annotations

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.pipeline.parse import parse

REPORT = (
    "# The AI Inference Market: Analyzing Emerging Leaders\n\n## Fireworks.ai Profile\n\n"
    "Looking ahead, Groq's pricing helps. Together.ai's extensive model support and enterprise "
    "relationships suggest continued growth in the mid-market segment, while Fireworks' "
    "optimization technology provides a strong foundation for specialized use cases. "
    "The end is near.\n"
)
BLOCK = parse(REPORT).blocks[0]
TITLE = "The AI Inference Market: Analyzing Emerging Leaders"


@pytest.mark.parametrize(
    "reply",
    [
        f"{TITLE} > Fireworks.ai Profile\n{BLOCK.text}",
        f"{TITLE}\n{BLOCK.text}",
        f"{BLOCK.text}\n{TITLE}",
        f"**{TITLE}** > Invented Subsection\n{BLOCK.text}",
    ],
    ids=["path-first", "title-first", "title-last", "title-and-invented"],
)
def test_echoed_heading_lines_are_removed(reply: str) -> None:
    verdict = check_reply(BLOCK, reply, GuardConfig())
    assert verdict.unchanged and verdict.text == BLOCK.text
    assert "heading_echo" in verdict.unwrapped


@pytest.mark.parametrize(
    "wrapped",
    [
        f"```markdown\n{BLOCK.text}\n```",
        f"Here is the refined paragraph:\n\n{BLOCK.text}",
    ],
    ids=["fence", "preamble"],
)
def test_a_heading_echo_before_another_wrapper_is_removed_with_it(wrapped: str) -> None:
    """The echo is one unwrap rule among the others, so it may come before any of them."""
    verdict = check_reply(BLOCK, f"{TITLE} > Fireworks.ai Profile\n{wrapped}", GuardConfig())
    assert verdict.unchanged and verdict.text == BLOCK.text
    assert verdict.unwrapped[0] == "heading_echo"


def test_a_block_that_itself_starts_with_its_heading_keeps_it() -> None:
    block = parse("# Summary\n\nSummary\nThe results were good and the team is happy.\n").blocks[0]
    verdict = check_reply(block, block.text, GuardConfig())
    assert verdict.unchanged and "heading_echo" not in verdict.unwrapped


def test_a_clause_dropped_from_inside_a_sentence_is_rejected() -> None:
    reply = (
        "Looking ahead, Groq's pricing helps. Together.ai's extensive model support and "
        "enterprise partnerships provide a strong foundation for specialized use cases. "
        "The end is near."
    )
    verdict = check_reply(BLOCK, reply, GuardConfig())
    assert verdict.text is None
    assert str(verdict.reasons[0]).startswith('lost words "relationships, suggest, continued')


def test_a_light_copy_edit_keeps_enough_words() -> None:
    reply = BLOCK.text.replace("Looking ahead", "Looking forward").replace("helps", "is helpful")
    assert check_reply(BLOCK, reply, GuardConfig()).text == reply
