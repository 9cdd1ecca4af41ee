"""The meaning check on hand-written cases, one class at a time (``fixtures/guard/meaning.json``),
and the word tables it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.guard.language import language_label
from owlai_refine.guard.lexicon import all_tables, tables_for
from owlai_refine.guard.meaning import meaning_problems
from owlai_refine.guard.normalise import normalise
from tests.guard.test_check_reply import block_for

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "guard"
CASES: list[dict[str, Any]] = json.loads((FIXTURES / "meaning.json").read_text("utf-8"))


def test_case_names_are_ascii() -> None:
    # They are the tests' ids: pytest escapes other characters, and mutmut (benchmarks/mutation.py)
    # then cannot select the test by its id.
    assert [c["name"] for c in CASES if not c["name"].isascii()] == []


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    verdict = check_reply(block_for(case["block"], "paragraph"), case["reply"], GuardConfig())
    groups = [r.group for r in verdict.reasons]
    if case["reason"] is None:
        assert verdict.text is not None, verdict.reasons
    else:
        assert verdict.text is None
        assert any(g.startswith(case["reason"]) for g in groups), verdict.reasons


def test_every_table_loads_and_names_its_language() -> None:
    languages = {t.language for t in all_tables()}
    assert {"en", "zh", "ja", "ko"} <= languages
    for table in all_tables():
        assert table.categories
        assert {"negation", "direction", "number word"} <= {c.name for c in table.categories}


def test_a_block_reads_the_latin_table_and_its_own() -> None:
    assert [t.language for t in tables_for("latin")] == ["en"]
    assert sorted(t.language for t in tables_for("zh")) == ["en", "zh"]
    # a language without a table is judged by the language-independent rules only
    assert [t.language for t in tables_for("cyrillic")] == ["en"]
    block = "Сервер обрабатывает 512 запросов каждые 27 часов."
    reply = "Сервер обрабатывает 27 запросов каждые 512 часов."
    assert language_label(block) == "cyrillic"
    assert any(r.group == "swapped numbers" for r in meaning_problems(block, reply, "cyrillic"))


def test_a_text_compared_with_itself_has_no_meaning_problem() -> None:
    text = "NVIDIA's RTX 5090 is not cheaper than the 4090: it may cost $1,999 in May 2025."
    assert meaning_problems(text, text, "latin") == []


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ("使用 GPU 训练", "使用GPU训练"),
        ("效果\uff08很好\uff09", "效果(很好)"),  # full-width brackets
        ("Rust 팀이 할 수 있다", "Rust팀이 할 수 있다"),
        ("it can't", "it can not"),
    ],
)
def test_normalisation_folds_typesetting(text: str, same: str) -> None:
    assert normalise(text) == normalise(same)


def test_normalisation_keeps_korean_word_spaces() -> None:
    assert normalise("할 수 있다") == "할 수 있다"


@pytest.mark.parametrize(
    ("block", "reply", "group"),
    [
        # what the embedded model once did, each spliced in as refined before this check
        (
            "번역본은 중국어(번체), 일본어로 게시됩니다.",
            "번역본은 중국어(번역), 일본어로 게시됩니다.",
            "lost clause",
        ),
        (
            "Packages are published on crates.io after review.",
            "Packages are published on crates. after review.",
            "lost name",
        ),
        ("이 RFC는 심의회를 설립합니다.", "The RFC는 심의회를 설립합니다.", "added name"),
        (
            "Each team names one representative (required) and may name an alternate.",
            "Each team names one representative and may name an alternate.",
            "lost clause",
        ),
        (
            "Growth is supported by sustained growth potential, strong demand and new markets.",
            "Growth is supported by sustained growth potential, supported by sustained growth"
            " potential, supported by sustained growth potential, strong demand and new markets.",
            "repetition",
        ),
        ("Frame rates rise by up to 8X.", "Frame rates rise by up to 8x.", None),  # defect 5
    ],
)
def test_the_issue_examples(block: str, reply: str, group: str | None) -> None:
    verdict = check_reply(block_for(block, "paragraph"), reply, GuardConfig())
    if group is None:
        assert verdict.text is not None, verdict.reasons
    else:
        assert any(r.group.startswith(group) for r in verdict.reasons), verdict.reasons


@pytest.mark.parametrize(
    ("block", "reply", "changed"),
    [
        # an abbreviation that may name two units is the same unit as either, spelled out
        ("Each record header takes 512 B on disk.", "Each record header takes 512 bytes.", False),
        ("The cable run between racks is 5 m long.", "The cable run is 5 metres long.", False),
        ("The model has 7 B weights.", "The model has 7 billion weights.", False),
        # and not the same as a unit it cannot name
        ("The die is 5 mm across.", "The die is 5 cm across.", True),
        ("Each record header takes 512 B on disk.", "Each record header takes 512 bits.", True),
    ],
)
def test_an_ambiguous_unit_is_any_unit_it_may_name(block: str, reply: str, changed: bool) -> None:
    reasons = meaning_problems(block, reply, "latin")
    assert any(r.group == "changed unit" for r in reasons) is changed, reasons


@pytest.mark.parametrize(
    ("block", "reply", "reasons"),
    [
        (  # a Katakana name, named both ways
            "エヌビディアの新しいGPUは消費電力が大きい。",
            "インテルの新しいGPUは消費電力が大きい。",
            ("changed name エヌビディア -> インテル",),
        ),
        (  # each modal lost, counted
            "The new policy may cut costs and may shorten waiting times.",
            "The new policy will cut costs and shorten waiting times.",
            (
                'changed polarity hedge: "may" x2 -> \u2205',
                'changed tense: future \u2205 -> "will"',
            ),
        ),
        (  # of two equal numbers, the one whose unit changed
            "The cache uses 16 GB of memory and 16 MB of disk.",
            "The cache uses 16 GB of memory and 16 TB of disk.",
            ("changed number 16 MB -> 16 TB", "changed unit 16 MB -> 16 TB"),
        ),
        (  # two links that traded destinations: the moved one by its URL
            "Prices fell sharply in Europe ([Reuters](https://www.reuters.com/markets/europe))."
            " Demand stayed strong across Asian markets ([Nikkei](https://asia.nikkei.com/m)).",
            "Prices fell sharply in Europe ([Reuters](https://asia.nikkei.com/m))."
            " Demand stayed strong across Asian markets"
            " ([Nikkei](https://www.reuters.com/markets/europe)).",
            (
                "moved link https://www.reuters.com/markets/europe",
                'swapped link texts "Reuters" <-> "Nikkei"',
            ),
        ),
        (  # the token check's "lost name DLSS" is said once, by the meaning check's reason
            "NVIDIA's DLSS raises frame rates in most new games.",
            "NVIDIA's FSR raises frame rates in most new games.",
            ("changed name DLSS -> FSR",),
        ),
    ],
    ids=["katakana", "modal-count", "unit-of-which", "link-url", "name-once"],
)
def test_a_reason_names_what_changed(block: str, reply: str, reasons: tuple[str, ...]) -> None:
    """The log line says what changed, in the words of the texts, once."""
    verdict = check_reply(block_for(block, "paragraph"), reply, GuardConfig())
    assert tuple(str(r) for r in verdict.reasons) == reasons
