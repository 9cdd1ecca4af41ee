"""Repetition: loops rejected at the end, and cut early by the streaming watchdog."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.blocks import Block
from owlai_refine.config import GuardConfig
from owlai_refine.guard import watchdog_for
from owlai_refine.guard.repetition import MAX_UNIT, RepetitionDetector, repetition_problem, units
from owlai_refine.parser import parse

CONFIG = GuardConfig()
CHARS_PER_TOKEN = 4  # English, roughly; the yardstick for "256 tokens"


def _block(text: str) -> Block:
    (block,) = parse(text).blocks
    return block


def _stream(watchdog: Callable[[str], str | None], text: str, step: int = 3) -> int | None:
    """Feed ``text`` as a stream of ``step``-character chunks (the whole text so far each time,
    as the model call does); the length read when the watchdog fired, or ``None``."""
    for end in range(step, len(text) + step, step):
        if watchdog(text[:end]) is not None:
            return min(end, len(text))
    return None


def test_units() -> None:
    assert units("The GPU, 日本語 and 한국어 ok.") == [
        "the", "gpu", "日", "本", "語", "and", "한", "국", "어", "ok",
    ]  # fmt: skip
    assert units("(see) ... [1].") == ["see", "...", "1"]
    assert units("x" * (2 * MAX_UNIT + 3)) == ["x" * MAX_UNIT, "x" * MAX_UNIT, "xxx"]


@given(
    st.lists(
        st.sampled_from(["a", "bb ", " ", "\n", "漢", "字", ".", "xyzxyzxyzxyzxyzxyz"]), max_size=80
    ).map("".join),
    st.lists(st.integers(1, 9), min_size=1, max_size=50),
)
def test_feeding_in_chunks_counts_what_one_feed_counts(text: str, steps: list[int]) -> None:
    whole = RepetitionDetector(3, 8)
    whole.feed(text, final=True)
    chunked = RepetitionDetector(3, 8)
    end = 0
    for step in steps * (len(text) // max(sum(steps), 1) + 1):
        end += step
        chunked.feed(text[:end])
    chunked.feed(text, final=True)
    assert chunked.counts == whole.counts
    assert chunked.fired == whole.fired


@pytest.mark.parametrize(
    "sentence",
    [
        "Quantum computers threaten RSA and ECC [1]. ",
        "The RTX 5000 Series is a game-changer for gamers. ",
        "and the ",
        "......",
        "NVIDIA's RTX 5000 series marks a significant generational leap in gaming performance, "
        "delivering improved frame rates, cutting-edge AI upscaling and state-of-the-art ray "
        "tracing for enthusiasts and professionals alike. ",
        "量子计算机威胁RSA和ECC加密。",
        "양자 컴퓨터는 RSA와 ECC 암호를 위협합니다. ",
        "에선",
    ],
)
def test_watchdog_fires_within_256_tokens_of_a_loop(sentence: str) -> None:
    prose = "The committee reviewed the budget and agreed on three priorities for 2025. "
    watchdog = watchdog_for(_block(prose.strip()), CONFIG)
    fired_at = _stream(watchdog, prose + sentence * 60)
    assert fired_at is not None
    lag_tokens = (fired_at - len(prose)) / CHARS_PER_TOKEN
    assert lag_tokens < 256


def test_watchdog_is_the_detector_and_keeps_its_reason() -> None:
    watchdog = watchdog_for(_block("Some text."), CONFIG)
    loop = "It is good. " * 10
    reason = watchdog(loop)
    assert reason == 'repetition: phrase x3 "it is good it is good it is"'
    assert watchdog(loop + "More text.") == reason


def test_watchdog_allows_what_the_block_repeats() -> None:
    text = "the number of validators in the network " * 4
    block = _block(f"We count {text.strip()}.")
    assert watchdog_for(block, CONFIG)(text + "end ") is None
    assert RepetitionDetector(3, 8).feed(text + "end ") is not None


def test_sentence_repeated_far_apart() -> None:
    filler = ["Alpha rose.", "Beta fell sharply in May.", "Gamma held.", "Delta doubled."]
    reply = " ".join(f"{f} Prices rose again." for f in filler[:3])
    assert repetition_problem("Prices rose.", reply, 3, 8) == (
        'repetition: sentence x3 "prices rose again."'
    )
    assert repetition_problem("Prices rose.", reply, 4, 8) is None


def test_short_sentences_are_not_counted() -> None:
    assert repetition_problem("x", "Yes. No. Yes. No. Yes. Maybe so.", 3, 8) is None


def test_threshold_and_window_come_from_the_config() -> None:
    text = "one two three four five six " * 3
    block = _block("Counting words.")
    assert watchdog_for(block, CONFIG)(text) is None  # a 6-word loop, 2.5 rounds of 8-word phrases
    assert watchdog_for(block, GuardConfig(repeat_threshold=2))(text) is not None
    assert watchdog_for(block, GuardConfig(repeat_window=4))(text) is not None


def test_a_long_loop_is_cut_in_its_second_round() -> None:
    paragraph = (
        "Plato founded the Academy in Athens around 387 BCE, where philosophers and "
        "mathematicians studied together for nearly three centuries. The school shaped "
        "the curriculum of later institutions, and its dialogues set the agenda of "
        "Western philosophy on ethics, politics, knowledge and the nature of reality, "
        "as many historians of science and philosophy have argued at length [1, 2]. "
    )
    assert len(units(paragraph)) > 50  # a period twice the long phrase (24 words)
    watchdog = watchdog_for(_block("Plato founded the Academy."), CONFIG)
    fired_at = _stream(watchdog, paragraph * 5)
    assert fired_at is not None
    into_second_round = fired_at - len(paragraph)
    assert 0 < into_second_round / CHARS_PER_TOKEN < 64
    assert str(watchdog(paragraph * 5)).startswith("repetition: phrase x2 ")
