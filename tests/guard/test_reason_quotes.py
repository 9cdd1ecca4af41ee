"""A reason quotes the words as the block or the reply writes them: never the checks'
stems (``"their platfo suppor"``), lower-cased words, CJK split into characters, canonical
values (``"past"`` for 지난) or a morpheme split off a word (Kiwi's ``ᆯ``)."""

from __future__ import annotations

import pytest

from owlai_refine.config import GuardConfig
from owlai_refine.guard import MAX_REASONS, check_reply
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.surface import _QUOTE, as_written, locate
from owlai_refine.results import MORE_REASONS, BlockOutcome, OutcomeStatus
from testsupport.blocks import one_block
from testsupport.edits import load_rows


def _flat(text: str) -> str:
    return " ".join(text.split())


def _unquoted(reason: str, block: str, reply: str) -> list[str]:
    """The quoted fragments of ``reason`` that neither text writes (a cut fragment's ``…``
    dropped; a quoted list of words, ``"a, b, c"``, read word by word)."""
    texts = (_flat(block), _flat(reply))
    out = []
    for fragment in _QUOTE.findall(reason):
        core = fragment.rstrip("\u2026").rstrip(", ")
        items = [core] if any(core in t for t in texts) else core.split(", ")
        if not all(any(item in t for t in texts) for item in items):
            out.append(fragment)
    return out


def test_every_quote_of_every_refused_corpus_reply_is_in_its_block_or_reply() -> None:
    config = GuardConfig()
    quotes = 0
    wrong: list[tuple[str, str]] = []
    for row in load_rows():
        for reason in check_reply(row.block, row.reply, config).reasons:
            quotes += len(_QUOTE.findall(str(reason)))
            wrong += [
                (row.id, str(reason)) for _ in _unquoted(str(reason), row.block.text, row.reply)
            ]
    assert quotes > 1000  # the corpus quotes plenty (1,459 on 2026-12-02)
    assert wrong == []


def test_a_lost_clause_quotes_the_block_not_its_stems() -> None:
    block = (
        "Their platforms support over 200 languages, which makes them popular with teams "
        "that publish reports in several languages at once."
    )
    reply = "Their tools are popular with teams that publish reports."
    reasons = [str(r) for r in check_reply(one_block(block), reply, GuardConfig()).reasons]
    clause = next(r for r in reasons if r.startswith("lost clause"))
    assert clause.startswith('lost clause "platforms support over 200 languages')
    assert "platfo " not in clause and "suppor " not in clause


@pytest.mark.parametrize(
    ("fragment", "text", "written"),
    [
        ("their platfo suppor over 200", "Their platforms support over 200 GPUs",
         "Their platforms support over 200"),
        ("日 本 語 llm", "これは日本語LLMの評価です", "日本語LLM"),
        ("where it trails amd's rx 9070 xt", "where it trails AMD\u2019s RX 9070XT.",
         "where it trails AMD\u2019s RX 9070XT"),
        ("de forma c lebre", "de forma célebre la teoría", "de forma célebre"),
        ("zentrale geschäftskennzahl", "als zentrale Geschäftskennzahl betrachten",
         "zentrale Geschäftskennzahl"),
        ("失去 了 所有", "他们失去了所有的 café 客户", "失去了所有"),
        ("founde the academ he dedica", "founded the Academy [1, 2]. He dedicated",
         "founded the Academy [1, 2]. He dedicated"),
        ("!", "みなさんです\uff01", "\uff01"),
        ("the result [1].", "Read the results [1]. Then", "the results [1]."),
        ("policy", "no such words here", None),
    ],
)  # fmt: skip
def test_locate_maps_a_checks_form_back_to_the_words_as_written(
    fragment: str, text: str, written: str | None
) -> None:
    assert locate(fragment, text) == written


def test_a_quote_already_as_written_or_found_nowhere_is_left_alone() -> None:
    kept = Reason("changed polarity hedge", '"may" -> \u2205', ": ")
    assert as_written(kept, "It may rain.", "It rains.") is kept
    label = Reason("changed tense", 'future "xyz" -> \u2205', ": ")
    assert as_written(label, "abc", "def") is label
    stem = Reason("lost clause", '"if a suffic powerf quantu comput is develo"')
    block = "Data is at risk if a sufficiently powerful quantum computer is developed."
    assert str(as_written(stem, block, "Data is at risk.")) == (
        'lost clause "if a sufficiently powerful quantum computer is developed"'
    )


def test_and_more_is_not_a_group_and_a_block_counts_each_group_once() -> None:
    groups = ("lost clause", "lost name", "lost clause", MORE_REASONS)
    outcome = BlockOutcome(
        block_id=0, kind="paragraph", line_span=(0, 1), status=OutcomeStatus.REJECTED,
        reasons=("a", "b", "c", "and more: 3"), reason_groups=groups,
    )  # fmt: skip
    assert outcome.groups == ("lost clause", "lost name")
    many = "; ".join(f"Item {i} costs {i + 10} dollars." for i in range(MAX_REASONS + 4))
    reply = "; ".join(f"Item {i} costs {i + 50} euros." for i in range(MAX_REASONS + 4))
    reasons = check_reply(one_block(many), reply, GuardConfig()).reasons
    assert len(reasons) == MAX_REASONS and reasons[-1].group == MORE_REASONS
