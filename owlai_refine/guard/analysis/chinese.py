"""The Chinese analyser: ``jieba``'s word segmentation (its HMM finds words its dictionary
lacks), each word's part of speech from jieba's own dictionary (``jieba.posseg``'s table, read
once; the per-sentence HMM tagger is not run: it costs milliseconds a sentence).

``该项目已经完成了测试`` -> ``该/r``, ``项目/n``, ``已经/d``, ``完成/v``, ``了/ul``, ``测试/vn``.
"""

from __future__ import annotations

from owlai_refine.guard.analysis.tokens import Analyser, Token

__all__ = ["analyser"]

_POS = {
    "n": "NOUN", "nr": "PROPN", "ns": "PROPN", "nt": "PROPN", "nz": "PROPN", "nrt": "PROPN",
    "nrfg": "PROPN", "j": "PROPN", "v": "VERB", "vn": "NOUN", "vd": "VERB", "a": "ADJ",
    "ad": "ADV", "an": "NOUN", "d": "ADV", "m": "NUM", "mq": "NUM", "q": "NOUN", "r": "PRON",
    "p": "ADP", "c": "CCONJ", "u": "PART", "ul": "PART", "uj": "PART", "uz": "PART",
    "ug": "PART", "uv": "PART", "ud": "PART", "y": "PART", "e": "X", "o": "X", "f": "NOUN",
    "s": "NOUN", "t": "NOUN", "b": "ADJ", "z": "ADJ", "i": "NOUN", "l": "NOUN", "g": "NOUN",
    "x": "PUNCT", "eng": "PROPN", "k": "PART", "h": "PART", "vg": "VERB", "ng": "NOUN",
    "ag": "ADJ", "dg": "ADV", "tg": "NOUN", "vi": "VERB", "vq": "VERB", "rr": "PRON",
    "rz": "PRON", "zg": "ADJ", "df": "ADV", "yg": "PART", "mg": "NUM", "rg": "PRON",
}  # fmt: skip


def analyser() -> Analyser:
    """The Chinese tokenising function (jieba's dictionary and tag table loaded now)."""
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    tags: dict[str, str] = jieba.posseg.dt.word_tag_tab

    def words(text: str) -> list[str]:
        """jieba's words, a word its HMM made up (not in the dictionary) split again into
        dictionary words when it is made of them (明显降低 -> 明显 + 降低)."""
        out: list[str] = []
        for word in jieba.lcut(text, HMM=True):
            if len(word) >= 4 and word not in tags and not word.isascii():
                parts = jieba.lcut(word, HMM=False)
                if all(len(p) >= 2 and p in tags for p in parts):
                    out += parts
                    continue
            out.append(word)
        return out

    def run(text: str) -> list[Token]:
        out: list[Token] = []
        at = 0
        for word in words(text):
            start, at = at, at + len(word)
            if word.isspace():
                continue
            if word.isascii() and word.isalnum():
                pos = "NUM" if word.isdigit() else "PROPN"
                out.append(Token(word, word.lower(), pos, "eng", start))
                continue
            tag = tags.get(word, "x" if not word.isalnum() else "n")
            pos = _POS.get(tag, "NOUN")
            if not word.isalnum() and pos != "PUNCT":
                pos = "PUNCT"
            out.append(Token(word, word, pos, tag, start))
        return out

    return run
