"""Six small inputs, each with its exact verdict (text and reasons): a cut reply that still says
``stop``, a reply fenced or with a preamble, an escaped footnote with a changed citation, a heading
and bullets for a paragraph, Korean answered in English, and one sentence forty times."""

from __future__ import annotations

from owlai_refine.blocks import BlockKind
from owlai_refine.config import GuardConfig
from owlai_refine.guard import Reason, Verdict, check_reply
from testsupport.blocks import one_block

CONFIG = GuardConfig()
QUANTUM = "Quantum computers threaten RSA and ECC [1]."


def test_cut_reply_with_stop_loses_url_and_citation() -> None:
    block = one_block(
        "- Revenue rose 12% in 2024 ([Reuters, 2024](https://www.reuters.com/x)) [4]."
    )
    assert block.kind is BlockKind.LIST_ITEM
    reply = "- Revenue increased by 12% in 2024 ([Reuters, 2024](https://www.reu"
    verdict = check_reply(block, reply, CONFIG)
    assert (verdict.text, verdict.unwrapped) == (None, ("list_marker",))
    assert tuple(map(str, verdict.reasons)) == (
        'cut off: ends "s, 2024](https://www.reu"',
        "lost citation [4]",
        "changed url https://www.reuters.com/x -> https://www.reu",
    )


def test_fence_preamble_and_bare_sentence_give_the_same_paragraph() -> None:
    block = one_block(QUANTUM)
    fenced = f"```markdown\n{QUANTUM}\n```"
    preamble = f"Here is the improved paragraph:\n\n{QUANTUM}"
    verdicts = [check_reply(block, reply, CONFIG) for reply in (fenced, preamble, QUANTUM)]
    assert verdicts == [
        Verdict(QUANTUM, unchanged=True, unwrapped=("fence",)),
        Verdict(QUANTUM, unchanged=True, unwrapped=("preamble",)),
        Verdict(QUANTUM, unchanged=True),
    ]
    # the same holds when the model did change the sentence: one line, wrappers gone
    edited = "Quantum computers pose a threat to RSA and ECC [1]."
    replies = (
        f"```markdown\n{edited}\n```",
        f"Here is the improved paragraph:\n\n{edited}",
        edited,
    )
    assert [check_reply(block, reply, CONFIG) for reply in replies] == [
        Verdict(edited, unwrapped=("fence",)),
        Verdict(edited, unwrapped=("preamble",)),
        Verdict(edited),
    ]


def test_escaped_footnote_changed_citation_lost_url_and_code() -> None:
    block = one_block(
        "- Shor's algorithm breaks RSA[^2] and ECC [3]; see [NIST](https://www.nist.gov/pqc)"
        " and `ML-KEM`."
    )
    reply = "- Shor's algorithm can break RSA\\[^2\\] and ECC [4]; see NIST and ML-KEM."
    verdict = check_reply(block, reply, CONFIG)
    assert verdict.text is None
    assert tuple(map(str, verdict.reasons)) == (
        "changed citation [3] -> [4]",
        "escaped footnote \\[^2\\]",
        "lost url https://www.nist.gov/pqc",
        "lost code ML-KEM",
        'changed polarity ability: ∅ -> "can"',  # "breaks" -> "can break" is a weaker claim
    )


def test_heading_and_bullets_are_rejected_as_structure() -> None:
    reply = "## Summary\n\n- Quantum computers threaten RSA [1].\n- They also threaten ECC."
    verdict = check_reply(one_block(QUANTUM), reply, CONFIG)
    assert verdict == Verdict(
        None, (Reason("structure", "heading", ": "), Reason("structure", "list", ": "))
    )


def test_korean_paragraph_answered_in_english_is_rejected_as_language() -> None:
    block = one_block(
        "양자 컴퓨터는 RSA와 ECC 암호를 위협합니다 [1]. 따라서 새로운 표준이 필요합니다."
    )
    reply = (
        "Quantum computers threaten RSA and ECC encryption [1]. "
        "Therefore, new standards are needed."
    )
    assert check_reply(block, reply, CONFIG) == Verdict(None, (Reason("language", "ko -> latin"),))


def test_one_sentence_forty_times_is_rejected_as_repetition() -> None:
    verdict = check_reply(one_block(QUANTUM), " ".join([QUANTUM] * 40), CONFIG)
    assert verdict.text is None
    assert tuple(map(str, verdict.reasons)) == (
        'repetition: sentence x40 "Quantum computers threaten RSA and ECC [1]."',
        "too long: 40.91x",
        "added citation [1] x39",
    )
