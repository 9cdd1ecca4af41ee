"""Content kept: no sentence of the block dropped."""

from __future__ import annotations

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.guard._md import prose
from owlai_refine.guard.content import added_words, content_tokens, lost_sentences
from owlai_refine.pipeline.parse import parse


def test_content_tokens() -> None:
    assert content_tokens("The threat threatens these RSA keys, 2048 of them.") == {
        "threat",
        "keys",
        "rsa",  # an acronym names a thing, however short
    }
    # CJK: each Han or Hangul character that is no particle or ending is a token
    assert content_tokens("量子計算") == {"量", "子", "計", "算"}
    assert content_tokens("심의회는 결정") == {"심", "회", "결", "정"}


def test_latin_glued_to_cjk_is_read_apart() -> None:
    # a defect once: the Latin branch of the word pattern swallowed the Chinese after it
    assert content_tokens("MHGPO在性能和计算效率上优于PPO") == {
        "mhgpo", "性", "能", "计", "算", "效", "率", "上", "优", "ppo",
    }  # fmt: skip
    # and a space between CJK and Latin text is typesetting, not a new word
    assert content_tokens("使用GPU训练") == content_tokens("使用 GPU 训练")


@pytest.mark.parametrize(
    ("block", "reply", "lost"),
    [
        ("Alpha grew fast. Beta shrank slowly.", "Alpha grew quickly.", ['"Beta shrank slowly."']),
        ("Alpha grew fast. Beta shrank slowly.", "Alpha grew fast, and Beta shrank slowly.", []),
        ("Alpha grew fast. Beta shrank slowly.", "Beta shrank slowly.", ['"Alpha grew fast."']),
        ("**Latency Reduction:**", "**Performance Gains:**", ['"**Latency Reduction:**"']),
        ("**Enhanced Thermal Management:**", "**Improved Thermal Management:**", []),
        ("Short one. Go.", "Short.", []),  # too few distinctive words to judge
        ("Use `cargo build` on https://x.example now.", "Use it now.", []),  # tokens' job
    ],
)
def test_lost_sentences(block: str, reply: str, lost: list[str]) -> None:
    assert [str(r) for r in lost_sentences(block, reply)] == [f"lost sentence {s}" for s in lost]


@pytest.mark.parametrize(
    ("block", "reply", "added"),
    [
        ("CUDA cores grew by a third.", "CUDA cores grew by a third, a major factor in GPU growth.",
         '"major, factor, gpu, growth"'),
        ("The GPU market have grown fast.", "The GPU market has grown fast.", None),
        ("Costs fell.", "Costs dropped sharply.", None),  # two new words: an edit, not new matter
    ],
)  # fmt: skip
def test_added_words(block: str, reply: str, added: str | None) -> None:
    found = added_words(block, reply)
    assert (None if found is None else str(found)) == (
        None if added is None else f"added words {added}"
    )


BETWEEN_PRICES = (
    "The base model costs $749.99 and ships with a steel frame, a quiet fan and a two-year "
    "warranty, while the pro model costs $1,999.99."
)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("The base model costs $749.99, while the pro model costs $1,999.99.", "lost sentence"),
        (
            "The base model costs $749.99 and ships as a cheap toy edition with plastic housing "
            "and no warranty whatsoever, while the pro model costs $1,999.99.",
            "added words",
        ),
    ],
)
def test_the_words_between_two_prices_are_prose_not_math(reply: str, reason: str) -> None:
    """``$749.99 ... $1,999.99`` is not dollar math (the parser's pandoc rules), so a clause
    dropped or invented between two prices is seen."""
    block = parse(f"# T\n\n{BETWEEN_PRICES}\n").blocks[0]
    verdict = check_reply(block, reply, GuardConfig())
    assert verdict.text is None
    assert any(str(r).startswith(reason) for r in verdict.reasons)


def test_dollar_math_is_still_not_prose() -> None:
    assert prose("Area $x^2$ grows; it costs $5 and $6.").split() == [
        "Area", "grows;", "it", "costs", "$5", "and", "$6."
    ]  # fmt: skip


def test_a_bare_url_leaves_no_word_in_the_prose() -> None:
    # nothing of the address is read as a word; the sentence's own closing marks stay
    text = "Docs: https://example.org/guide/install (see https://x.org/a].)"
    assert prose(text).split() == ["Docs:", "(see", "].)"]
