"""The guard on the labelled replies of ``fixtures/edits`` (good edits accepted, bad edits
caught), and the corpus itself checked against the sample reports.

The shares asserted are floors just under what ``python -m benchmarks.guard_quality`` measures
today (the guard is deterministic), so a change that makes the guard refuse good edits or let
bad ones through fails here; the benchmark prints the whole table per language and class.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import check_reply
from owlai_refine.pipeline.parse import parse
from testsupport.edits import accepted, load_rows
from testsupport.reports import SHARED

ROWS = load_rows()
GOOD_FLOOR = {"en": 0.90, "ja": 0.98, "ko": 0.93, "zh": 0.95}
"""Good replies accepted, per language (measured: en 90.7%, ja 98.7%, ko 93.6%, zh 95.4% over
7,380 rows, the nineteen held-out sets written blind included)."""
BAD_FLOOR = {"en": 0.91, "ja": 0.90, "ko": 0.90, "zh": 0.91}
"""Bad replies caught, per language, every class (role swaps included) (measured: en 91.2%,
ja 91.0%, ko 90.2%, zh 91.6%; a content word replaced by a plausible non-synonym, an
attribution moved and a role swap are most of what is missed: docs/guard-design.md)."""
BLIND = tuple(f"s{n}-" for n in range(3, 23))
"""The ids of the rows of the held-out sets written blind (heldout3 to heldout22; set 21's rows were
lost before they were copied here)."""


@pytest.fixture(scope="module")
def accepted_by_id() -> dict[str, bool]:
    config = GuardConfig()
    return {row.id: accepted(check_reply(row.block, row.reply, config)) for row in ROWS}


def test_the_corpus_covers_four_languages_both_ways() -> None:
    assert len(ROWS) >= 500
    assert len({row.id for row in ROWS}) == len(ROWS)
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for row in ROWS:
        counts[(row.language, row.label)] += 1
    for language in ("en", "zh", "ja", "ko"):
        assert counts[(language, "good")] >= 60
        assert counts[(language, "bad")] >= 80


def test_every_row_quotes_its_block_exactly() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared/reports is not beside this checkout")
    blocks: dict[tuple[str, int], str] = {}
    for report in {row.report for row in ROWS}:
        for block in parse((SHARED / report).read_text("utf-8")).blocks:
            blocks[(report, block.id)] = block.text
    for row in ROWS:
        assert blocks[(row.report, row.block.id)] == row.block.text, row.id


@pytest.mark.parametrize("language", ["en", "zh", "ja", "ko"])
def test_good_edits_are_accepted(accepted_by_id: dict[str, bool], language: str) -> None:
    rows = [r for r in ROWS if r.label == "good" and r.language == language]
    refused = [r.id for r in rows if not accepted_by_id[r.id]]
    assert 1 - len(refused) / len(rows) >= GOOD_FLOOR[language], refused


@pytest.mark.parametrize("language", ["en", "zh", "ja", "ko"])
def test_bad_edits_are_caught(accepted_by_id: dict[str, bool], language: str) -> None:
    rows = [r for r in ROWS if r.label == "bad" and r.language == language]
    passed = [r.id for r in rows if accepted_by_id[r.id]]
    assert 1 - len(passed) / len(rows) >= BAD_FLOOR[language], passed


@pytest.mark.parametrize(
    "cls", ["negation", "digit", "citation", "url", "sentence_dropped", "structure", "translation"]
)
def test_these_classes_are_always_caught(accepted_by_id: dict[str, bool], cls: str) -> None:
    # of the mechanical corruptions (the blind sets' subtle negations are counted above)
    rows = [r for r in ROWS if not r.id.startswith(BLIND)]
    passed = [r.id for r in rows if r.cls == cls and accepted_by_id[r.id]]
    assert len(passed) <= 1, passed
