"""Language kept, judged by script proportions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from owlai_refine.guard.language import language_label, language_problem, script_shares

KO = "양자 컴퓨터는 RSA와 ECC 암호를 위협합니다. 따라서 새로운 표준이 필요합니다."
JA = "量子コンピュータはRSAとECCを脅かしている。そのため新しい標準が必要である。"
ZH = "量子计算机威胁RSA和ECC加密。因此需要新的标准。"
EN = "Quantum computers threaten RSA and ECC. New standards are therefore needed."


@pytest.mark.parametrize(
    ("text", "label"),
    [
        (KO, "ko"),
        (JA, "ja"),
        (ZH, "zh"),
        (EN, "latin"),
        ("Квантовые компьютеры угрожают RSA.", "cyrillic"),
        ("自然言語処理研究所", "zh"),  # Kanji only: indistinguishable from Chinese by script
        ("`코드` and https://한국.example/경로 only English words here", "latin"),
        ("12345 !?", "none"),
    ],
)
def test_labels(text: str, label: str) -> None:
    assert language_label(text) == label


def test_cjk_letters_weigh_three() -> None:
    shares, letters = script_shares("ab 한")
    assert letters == 3
    assert shares == {"latin": 0.4, "hangul": 0.6}


@pytest.mark.parametrize(
    ("block", "reply", "reason"),
    [
        (KO, EN, "language ko -> latin"),
        (JA, ZH, "language ja -> zh"),
        (ZH, JA, "language zh -> ja"),
        (EN, ZH, "language latin -> zh"),
        (JA, EN, "language ja -> latin"),
        (KO, KO.replace("따라서", "그래서"), None),
        ("自然言語処理研究所の成果", "自然言語処理研究所の研究成果", None),
        ("自然言語処理研究所", "自然語言處理研究所", None),  # no Kana in either: not judged apart
        ("Cost: $0.25", "コスト: $0.25", None),  # too few letters to judge
        ("회의는 내일 열린다.", "The meeting is tomorrow.", "language ko -> latin"),  # 8: judged
        # Latin kept at exactly half its share: the margin is "less than half"
        ("Moscow is huge.", "Москва is huge.", None),
    ],
)
def test_language_problem(block: str, reply: str, reason: str | None) -> None:
    found = language_problem(block, reply)
    assert (None if found is None else str(found)) == reason


def test_a_mixed_block_may_shift_a_little() -> None:
    # a Chinese paragraph full of English terms (Han share 0.42): losing a few Han characters
    # changes its label but not its language
    block = "MHGPO在HotpotQA和2WikiMultiHopQA上的F1-score显著优于MAPPO baseline方法。"
    reply = "MHGPO在HotpotQA和2WikiMultiHopQA上的F1-score优于MAPPO baseline。"
    assert language_label(block) == "zh"
    assert language_problem(block, reply) is None


def _shares_per_letter(text: str) -> tuple[dict[str, float], int]:
    """``script_shares`` by its definition: every letter classified one by one."""
    import unicodedata  # noqa: PLC0415 - only this reference needs it
    from collections import Counter  # noqa: PLC0415

    from owlai_refine.guard._md import prose  # noqa: PLC0415
    from owlai_refine.guard.language import _script  # noqa: PLC0415

    counts = Counter(_script(ch) for ch in prose(text) if unicodedata.category(ch)[0] == "L")
    weights = {k: v * (3 if k in {"hangul", "kana", "han"} else 1) for k, v in counts.items()}
    total = sum(weights.values())
    if not total:
        return {}, 0
    return {k: v / total for k, v in weights.items()}, sum(counts.values())


@given(
    st.text() | st.sampled_from([KO, JA, ZH, EN, KO + EN + JA, "`代码` $x$ 中文 https://a.example"])
)
def test_script_shares_follow_their_definition(text: str) -> None:
    shares, letters = script_shares(text)
    expected, expected_letters = _shares_per_letter(text)
    assert letters == expected_letters
    assert list(shares.items()) == list(expected.items())  # same values, same order
