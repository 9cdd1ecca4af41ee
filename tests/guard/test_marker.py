"""The "no change needed" marker: alone it is ``unchanged``; beside anything else, refused."""

from __future__ import annotations

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.pipeline.prompt import FINE_REQUEST, UNCHANGED_MARKER
from testsupport.blocks import one_block

BLOCK = one_block("The market grew in 2024 [1].")


@pytest.mark.parametrize(
    ("reply", "unwrapped"),
    [
        (UNCHANGED_MARKER, ()),
        ("  <unchanged/>\n", ()),
        ("<unchanged />", ()),
        ("<UNCHANGED>", ()),
        ("```\n<unchanged/>\n```", ("fence",)),
        ('"<unchanged/>"', ("quotes",)),
        ("<block>\n<unchanged/>\n</block>", ("block_tags",)),
        ("Section: Market\n<unchanged/>", ("section_echo",)),
        ("Here is the refined paragraph:\n<unchanged/>", ("preamble",)),
        ("<think>fine as it is</think><unchanged/>", ("think",)),
    ],
)
def test_the_marker_alone_keeps_the_block(reply: str, unwrapped: tuple[str, ...]) -> None:
    verdict = check_reply(BLOCK, reply, GuardConfig())
    assert verdict.unchanged and verdict.marker
    assert verdict.text == BLOCK.text  # the block's own text, never the marker
    assert verdict.reasons == ()
    assert verdict.unwrapped == unwrapped


@pytest.mark.parametrize(
    "reply",
    [
        "<unchanged/> The market grew in 2024 [1].",
        "The market grew in 2024 [1].\n<unchanged/>",
        "The market has grown in 2024 [1]. <unchanged/>",
        "<unchanged/> (the block is fine)",
    ],
)
def test_the_marker_beside_other_text_is_refused(reply: str) -> None:
    verdict = check_reply(BLOCK, reply, GuardConfig())
    assert verdict.text is None and not verdict.unchanged and not verdict.marker
    assert [r.group for r in verdict.reasons] == ["marker"]
    assert str(verdict.reasons[0]).startswith('marker: <unchanged/> with "')


def test_a_long_rest_is_shortened_in_the_reason() -> None:
    verdict = check_reply(BLOCK, "<unchanged/> " + "word " * 30, GuardConfig())
    assert verdict.reasons[0].detail.endswith('..."')
    assert len(verdict.reasons[0].detail) < 70


def test_a_block_holding_the_marker_is_judged_as_any_other() -> None:
    block = one_block("Our prompt offer `<unchanged/>` for a block that is fine.")
    same = check_reply(block, block.text, GuardConfig())
    assert same.unchanged and not same.marker
    edited = check_reply(
        block, "Our prompt offers `<unchanged/>` for a block that is fine.", GuardConfig()
    )
    assert edited.text is not None and not edited.marker
    assert check_reply(block, UNCHANGED_MARKER, GuardConfig()).text is None  # lost the text


def test_a_japanese_indented_block_takes_the_marker_too() -> None:
    block = one_block("\u3000本記事の内容は正確です。")
    verdict = check_reply(block, UNCHANGED_MARKER, GuardConfig())
    assert verdict.unchanged and verdict.marker and verdict.text == block.text


def test_the_prompts_fine_example_is_fine() -> None:
    """The marker's worked example is a block the guard keeps as it is."""
    fine = one_block(FINE_REQUEST.split("<block>\n", 1)[1].rsplit("\n</block>", 1)[0])
    assert check_reply(fine, fine.text, GuardConfig()).unchanged
    assert check_reply(fine, UNCHANGED_MARKER, GuardConfig()).marker
