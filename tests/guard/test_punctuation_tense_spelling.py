"""The ending, quotation-mark, tense and spelling helpers on their own, where a case through the
whole guard cannot tell two behaviours apart (hand-written expectations)."""

from __future__ import annotations

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.guard.clauses import echoed_phrase
from owlai_refine.guard.meaning import meaning_problems
from owlai_refine.guard.punctuation import punctuation_problems
from owlai_refine.guard.spelling import _edits
from tests.guard.test_check_reply import block_for


@pytest.mark.parametrize(
    ("block", "reply", "reasons"),
    [
        ("It is done.", "", ['lost ending "."']),
        ("It is done.", ")]", ['lost ending "."']),
        ('He said "done."', 'He said "done".', []),
        ("Is it done?", "It is done.", ['changed ending "?" -> "."']),
        ("Steps:", "Steps", ['lost ending ":"']),
        ("Steps", "Steps.", []),
    ],
)
def test_the_ending(block: str, reply: str, reasons: list[str]) -> None:
    assert [str(r) for r in punctuation_problems(block, reply)] == reasons


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("existing", "existing", 0),
        ("existing", "exisiting", 1),  # a letter added
        ("practice", "pratice", 1),  # a letter dropped
        ("loading", "loafing", 1),  # a letter changed
        ("form", "from", 1),  # two letters swapped
        ("kitten", "sitting", 3),
        ("integration", "intergation", 1),
    ],
)
def test_edit_distance(a: str, b: str, distance: int) -> None:
    assert _edits(a, b) == distance == _edits(b, a)


def test_a_typo_two_edits_away_is_a_changed_spelling() -> None:
    block = "Costs of integration with legacy systems remain high."
    reply = "Costs of integartoin with legacy systems remain high."
    assert _edits("integration", "integartoin") == 2
    reasons = meaning_problems(block, reply, "latin")
    assert 'changed spelling "integration" -> "integartoin"' in map(str, reasons)


def test_a_loop_after_a_phrase_the_block_itself_repeats_is_seen() -> None:
    block = "It went ok ok ok at first. Later the team shipped the release."
    reply = "It went ok ok ok at first. Later the team shipped the release release release release."
    assert echoed_phrase(block, reply) is not None


def test_a_name_moved_into_code_is_the_token_checks_not_a_lost_name() -> None:
    reasons = meaning_problems("Built by NVIDIA in 2024.", "Built by `NVIDIA` in 2024.", "latin")
    assert not [r for r in reasons if "name" in r.group]


def test_a_cut_off_reply_says_its_lost_ending_once_and_every_other_reason() -> None:
    block = block_for('The vendor calls it "continuous batching" in its docs.', "paragraph")
    verdict = check_reply(block, "The vendor calls it continuous batching in its do", GuardConfig())
    assert verdict.text is None
    assert not any(r.group == "lost ending" for r in verdict.reasons)
    assert verdict.reasons[0].group == "cut off"
    assert 'lost quotes "continuous batching"' in map(str, verdict.reasons)
