"""Repetition: loops rejected at the end, and cut early by the streaming watchdog."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.config import GuardConfig
from owlai_refine.guard import Reason, watchdog_for
from owlai_refine.guard.repetition import MAX_UNIT, RepetitionDetector, repetition_problem, units
from testsupport.blocks import one_block

CONFIG = GuardConfig()
CHARS_PER_TOKEN = 4  # English, roughly; the yardstick for "256 tokens"


def _text(reason: Reason | None) -> str | None:
    return None if reason is None else str(reason)


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
    watchdog = watchdog_for(one_block(prose.strip()), CONFIG)
    fired_at = _stream(watchdog, prose + sentence * 60)
    assert fired_at is not None
    lag_tokens = (fired_at - len(prose)) / CHARS_PER_TOKEN
    assert lag_tokens < 256


@pytest.mark.parametrize(
    "sentence",
    [
        "The market for GPUs grew fast this year. ",
        "Our team will review the plan next week. ",
        "Prices for cloud GPUs fell sharply last year. ",
    ],
)
def test_an_eight_word_loop_is_cut_within_35_tokens(sentence: str) -> None:
    """docs/guard-design.md's figure: a looping sentence is cut as its third copy ends, which for an
    8-word sentence (41-46 characters) is at most 35 tokens (4 characters a token) after the
    loop begins; fed one character at a time."""
    prose = "The committee reviewed the budget and agreed on three priorities for 2025. "
    watchdog = watchdog_for(one_block(prose.strip()), CONFIG)
    fired_at = _stream(watchdog, prose + sentence * 60, step=1)
    assert fired_at is not None
    assert fired_at - len(prose) == 3 * len(sentence)
    assert (fired_at - len(prose)) / CHARS_PER_TOKEN <= 35


def test_watchdog_is_the_detector_and_keeps_its_reason() -> None:
    watchdog = watchdog_for(one_block("Some text."), CONFIG)
    loop = "It is good. " * 10
    reason = watchdog(loop)
    assert reason == 'repetition: phrase x3 in a row "it is good"'
    assert watchdog(loop + "More text.") == reason


def test_watchdog_allows_what_the_block_repeats() -> None:
    text = "the number of validators in the network " * 4
    block = one_block(f"We count {text.strip()}.")
    assert watchdog_for(block, CONFIG)(text + "end ") is None
    assert RepetitionDetector(3, 8).feed(text + "end ") is not None


def test_sentence_repeated_far_apart() -> None:
    filler = ["Alpha rose.", "Beta fell sharply in May.", "Gamma held.", "Delta doubled."]
    reply = " ".join(f"{f} Prices rose again." for f in filler[:3])
    assert _text(repetition_problem("Prices rose.", reply, 3, 8)) == (
        'repetition: sentence x3 "prices rose again."'
    )
    assert _text(repetition_problem("Prices rose.", reply, 4, 8)) is None


def test_short_sentences_are_not_counted() -> None:
    assert _text(repetition_problem("x", "Yes. No. Yes. No. Yes. Maybe so.", 3, 8)) is None


def test_threshold_and_window_come_from_the_config() -> None:
    text = "one two three four five six seven " * 2 + "one two three four "
    block = one_block("Counting words.")
    assert watchdog_for(block, CONFIG)(text) is None  # a 7-word loop, 2.5 rounds
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
    watchdog = watchdog_for(one_block("Plato founded the Academy."), CONFIG)
    fired_at = _stream(watchdog, paragraph * 5)
    assert fired_at is not None
    into_second_round = fired_at - len(paragraph)
    assert 0 < into_second_round / CHARS_PER_TOKEN < 64
    assert str(watchdog(paragraph * 5)).startswith("repetition: phrase x2 ")


_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_HAN_KANA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def smollm2_tokens(text: str) -> float:
    """SmolLM2's token count for ``text``, from rates measured with the embedded llama.cpp
    server's ``/tokenize``: a Hangul syllable 2.2 tokens and a space after one 0.9 (a spaced
    syllable: 3.1), a Han or Kana character 1.75, anything else 0.4 per character (English:
    0.38). Rounded up from the measurements, so the figure is an upper bound."""
    hangul = len(_HANGUL.findall(text))
    spaced = len(re.findall(r"[\uac00-\ud7a3] ", text))
    han_kana = len(_HAN_KANA.findall(text))
    other = len(text) - hangul - spaced - han_kana
    return 2.2 * hangul + 0.9 * spaced + 1.75 * han_kana + 0.4 * other


def _spaced(text: str) -> str:
    return " ".join(ch for ch in text if not ch.isspace()) + " "


KOREAN = (
    "한국의 경제는 빠르게 성장하고 있으며 수출이 크게 늘어나고 있다는 점을 이 보고서가 보여 줍니다"
)


@pytest.mark.parametrize("syllables", [2, 3, 5, 8, 12, 16, 20, 24, 32, 40, 48])
def test_a_spaced_hangul_loop_is_cut_within_256_tokens(syllables: int) -> None:
    """Issue 12, item 5: a looping reply in spaced Hangul ran 376 tokens before the watchdog
    closed it. Counted in SmolLM2's tokens from the start of the loop's first round."""
    sentence = _spaced(KOREAN.replace(" ", "")[:syllables])
    prose = "이 보고서는 2025년 예산을 검토하고 세 가지 우선순위에 합의했습니다. "
    watchdog = watchdog_for(one_block(prose.strip()), CONFIG)
    fired_at = _stream(watchdog, prose + sentence * 80)
    assert fired_at is not None
    assert smollm2_tokens((prose + sentence * 80)[len(prose) : fired_at]) < 256


@pytest.mark.parametrize(
    "sentence",
    [
        _spaced(KOREAN),  # 41 syllables a round: longer than the window, cut in round two
        "양자 컴퓨터는 RSA와 ECC 암호를 위협합니다. ",
        "量子计算机正在快速发展\uff0c并对现有的公钥密码体系构成了严重威胁。",
        "日本語のテキストを繰り返し生成してしまうモデルがあります。",
        "The RTX 5000 Series is a game-changer for gamers. ",
    ],
)
def test_any_script_is_cut_within_256_tokens_of_the_second_round(sentence: str) -> None:
    watchdog = watchdog_for(one_block("The committee met."), CONFIG)
    text = sentence * 40
    fired_at = _stream(watchdog, text)
    assert fired_at is not None
    assert smollm2_tokens(text[len(sentence) : fired_at]) < 256


@pytest.mark.parametrize(
    "phrase",
    [
        "supported by sustained growth potential, ",  # a loop once missed
        "and so on ",
        "the market grew fast, ",
        "as noted in the report [1], ",
        "지속적인 성장 잠재력에 힘입어 ",
        "持续增长潜力的支撑\uff0c",
    ],
)
def test_a_short_phrase_three_times_in_a_row_is_a_loop(phrase: str) -> None:
    block = "The outlook is strong, supported by sustained growth potential."
    reply = f"The outlook is strong, {phrase * 3} and more."
    reason = _text(repetition_problem(block, reply, 3, 8))
    assert reason is not None and reason.startswith("repetition: phrase x3")
    watchdog = watchdog_for(one_block(block), CONFIG)
    assert _stream(watchdog, reply) is not None  # cut while streaming, by its third copy


@pytest.mark.parametrize(
    "reply",
    [
        "It was very, very, very good.",
        "Prices rose and the and the and the rest fell.",  # a stutter of two words, not a loop
        "The plan works, the plan works, and it is cheap.",  # twice is emphasis
    ],
)
def test_short_stutters_and_pairs_are_not_loops(reply: str) -> None:
    assert _text(repetition_problem("Some text here.", reply, 3, 8)) is None


def test_a_run_the_block_itself_has_is_allowed() -> None:
    text = "We said go west, go west, go west, and they went."
    assert repetition_problem(text, text.replace("went", "left"), 3, 8) is None
    assert watchdog_for(one_block(text), CONFIG)(text + " ") is None


def test_a_short_loop_after_a_long_cjk_run_is_caught() -> None:
    """Three words said three times in a row, after some 50 Han characters (half a word's
    weight each): the loop's own words weigh as words."""
    block = (
        "该模型在多个基准测试中表现优异\uff0c尤其是在长文本理解和多轮对话任务上\uff0c"
        "研究团队认为其核心优势来自混合专家架构的设计。"
    )
    loop = "Mixture of Experts, Mixture of Experts, Mixture of Experts"
    reply = block[:-1] + f"\uff0c即 {loop} 架构。"
    assert _text(repetition_problem(block, reply, 3, 8)) == (
        'repetition: phrase x3 in a row "mixture of experts"'
    )


def test_a_short_loop_is_named_not_a_phrase_the_block_repeats() -> None:
    platforms = "is supported on Linux, macOS and Windows by default."
    block = f"Tool A {platforms} Tool B {platforms} Tool C {platforms}"
    reply = block[:-1] + " on all platforms, on all platforms, on all platforms."
    assert _text(repetition_problem(block, reply, 3, 8)) == (
        'repetition: phrase x3 in a row "on all platforms"'
    )
