"""The analysers: each language's tokens carry the lemma, part of speech and roles the rules
read (guard/analysis)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from owlai_refine.guard.analysis import analyse, load_time, wordnet
from owlai_refine.guard.analysis.core import forget


def _tokens(text: str, language: str) -> list[tuple[str, str, str]]:
    return [(t.text, t.lemma, t.pos) for t in analyse(text, language).tokens]


def _roles(text: str, language: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for t in analyse(text, language).tokens:
        for role in t.roles:
            out.setdefault(role, []).append(t.text)
    return out


def test_english_lemmas_and_tags() -> None:
    found = {
        t.text: t for t in analyse("The results was good; NVIDIA slashed prices.", "en").tokens
    }
    assert (found["results"].lemma, found["results"].pos, found["results"].tag) == (
        "result", "NOUN", "NNS"
    )  # fmt: skip
    assert (found["was"].lemma, found["was"].pos) == ("be", "AUX")
    assert (found["good"].pos, found["NVIDIA"].pos) == ("ADJ", "PROPN")
    assert (found["slashed"].lemma, found["slashed"].tag) == ("slash", "VBD")


def test_english_names_and_compounds_are_one_token_or_their_parts() -> None:
    texts = [t.text for t in analyse("From TSMC N4 to N4P, with bit-flip errors.", "en").words]
    assert texts == ["From", "TSMC", "N4", "to", "N4P", "with", "bit", "flip", "errors"]


def test_english_an_adverb_before_a_hyphen_stays_an_adverb() -> None:
    # "moderately-complex" (a hyphen a copy edit removes): the degree word is there on both sides
    for text in ("specifying moderately-complex data", "specify moderately complex data"):
        found = {t.text: t for t in analyse(text, "en").words}
        assert found["moderately"].pos == "ADV"
        assert "diminisher" in found["moderately"].roles


def test_english_modals_keep_their_own_lemma() -> None:
    lemmas = [t.lemma for t in analyse("It would work and it will work.", "en").words]
    assert "would" in lemmas and "will" in lemmas


def test_korean_morphemes_with_kiwi() -> None:
    tokens = _tokens("위원 두 명을 선출하지 않고", "ko")
    assert ("두", "두", "NUM") in tokens
    assert ("않", "않다", "AUX") in tokens
    assert _roles("위원 두 명을 선출했다", "ko") == {"numeral": ["두"], "past": ["었"]}


def test_korean_possibility_as_soon_as_available_is_a_sequence_not_a_word() -> None:
    # the old tables read "수 있" anywhere; the analysis sees ㄹ/수/있다 as three morphemes
    words = [t.lemma for t in analyse("사용할 수 있는 즉시 공개됩니다.", "ko").words]
    assert words[:4] == ["사용", "하", "ᆯ", "수"]


def test_japanese_with_mecab_unidic() -> None:
    tokens = _tokens("導入された。", "ja")
    assert tokens[:4] == [("導入", "導入", "NOUN"), ("さ", "為る", "AUX"), ("れ", "れる", "AUX"),
                          ("た", "た", "AUX")]  # fmt: skip
    assert _roles("導入が検討されている", "ja") == {"future": ["検討"], "progressive": ["て"]}


def test_chinese_with_jieba_words_and_their_roles() -> None:
    assert "未来" in [t.text for t in analyse("未来将推出。", "zh").words]  # not 未 + 来
    roles = _roles("MARL明显降低了等待时间\uff0c以更快的速度完成。", "zh")
    assert roles["intensifier"] == ["明显降低"]  # jieba keeps it whole: its head's role
    assert roles["comparative"] in (["更快"], ["更"])  # 更快 whole or 更 + 快: a comparative
    assert _roles("将复杂任务分解", "zh").get("future") is None  # 将 before a noun: no future
    assert _roles("将推出新版本", "zh")["future"] == ["将"]


@pytest.mark.parametrize("language", ["en", "ko", "ja", "zh"])
def test_each_analyser_loads_once_and_says_how_long_it_took(language: str) -> None:
    analyse("x", language)
    took = load_time(language)
    assert took is not None and took >= 0
    analyse("y", language)
    assert load_time(language) == took


def test_wordnet_relations() -> None:
    assert wordnet.available()
    assert wordnet.relation("complexity", "simplicity") == "antonym"
    assert wordnet.relation("appear", "seem") == "synonym"
    assert wordnet.relation("typically", "typical") == "derivation"
    assert wordnet.relation("linear", "logarithmic") is None


def test_any_text_is_analysed_without_raising() -> None:
    for text in ["", "\u2028", "😀 ok", "a" * 5000, "\ud55c", "。。。", "[1] `x`"]:
        for language in ("en", "ko", "ja", "zh", "cyrillic"):
            analyse(text, language)


_THREADED = {
    "en": "Prices fell by 12% in 2024, and the council met twice.",
    "ko": "리더십 위원회는 2024년에 두 번 회의를 열었다.",
    "ja": "評議会は二〇二四年に二回会合を開いた。",
    "zh": "委员会在二〇二四年召开了两次会议。",
}


def test_analysis_from_many_threads_matches_one_thread() -> None:
    """The refiner runs the guard in a worker thread: the analysers (MeCab, Kiwi, jieba) are
    shared by the process, so sentences analysed from 8 threads at once (each sentence new to
    the cache, so every thread runs an analyser) give what one thread gives."""
    jobs = [(f"{text} ({n})", lang) for n in range(40) for lang, text in _THREADED.items()]
    forget()
    alone = [_tokens(text, lang) for text, lang in jobs]
    forget()
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda job: _tokens(*job), jobs))
    assert together == alone
    assert all(alone)
