"""The Japanese analyser: MeCab through ``fugashi`` with the ``unidic-lite`` dictionary, in
UniDic short units: ``導入された`` -> ``導入/名詞``, ``さ/動詞 (為る)``, ``れ/助動詞 (れる)``,
``た/助動詞 (た)``.

UniDic's part of speech (``pos1``, with ``pos2`` for nouns) maps to Universal parts of speech;
the lemma is UniDic's (``為る`` for ``さ``), without the English gloss UniDic adds to loan
words (``システム-system`` -> ``システム``).
"""

from __future__ import annotations

from owlai_refine.guard.analysis.tokens import Analyser, Token

__all__ = ["analyser"]

_POS1 = {
    "動詞": "VERB", "形容詞": "ADJ", "形状詞": "ADJ", "副詞": "ADV", "助詞": "ADP",
    "助動詞": "AUX", "接続詞": "CCONJ", "連体詞": "DET", "代名詞": "PRON", "接頭辞": "PART",
    "接尾辞": "PART", "感動詞": "X", "補助記号": "PUNCT", "記号": "SYM", "空白": "PUNCT",
}  # fmt: skip
_NOUN2 = {"固有名詞": "PROPN", "数詞": "NUM", "普通名詞": "NOUN", "助動詞語幹": "AUX"}


def analyser() -> Analyser:
    """The Japanese tokenising function (MeCab and UniDic loaded now)."""
    import fugashi

    tagger = fugashi.Tagger()

    def run(text: str) -> list[Token]:
        out: list[Token] = []
        at = 0
        for word in tagger(text):
            surface = word.surface
            start = text.find(surface, at)
            at = start + len(surface) if start >= 0 else at
            feature = word.feature
            pos1, pos2 = feature.pos1 or "", feature.pos2 or ""
            pos = _NOUN2.get(pos2, "NOUN") if pos1 == "名詞" else _POS1.get(pos1, "X")
            if pos1 == "動詞" and pos2 == "非自立可能":
                pos = "AUX"  # いる in ている, する after a verbal noun: grammar, not content
            lemma = (feature.lemma or surface).split("-")[0]
            if surface.isascii():
                lemma = surface.lower()
            out.append(Token(surface, lemma, pos, f"{pos1}-{pos2}", max(start, 0)))
        return out

    return run
