"""The word rules: a content word replaced by its opposite, or the noun that says which of a
kind replaced by another.

Pure code, over the pair's edits (``guard.edits``): an edit that replaced one content word by
one its language's resource calls an antonym (WordNet for English: ``complexity`` ->
``simplicity``, ``began`` -> ``finished``) is a flipped claim: ``changed word "complexity" ->
"simplicity" (antonym)``. The word tables' opposites (``meaning``) cover the other languages.

An edit that replaced only the noun before a noun the reply keeps (``inference optimization``
-> ``training optimization``, 异构群组 -> 同构群组, 중심팀 -> 중재팀, 視覚エンコーダ ->
音声エンコーダ) names another thing of that kind, unless the two are forms, synonyms or
derivations of one word: ``changed word "중심" -> "중재" (before "팀")``. Korean writes a
modifier that is not part of a name apart (다음 팀, "the next team"): there only a compound
written as one word counts.
"""

from __future__ import annotations

from collections import Counter

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.edits import EditClass, related
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.rules.order import word_key

__all__ = ["antonym_reasons", "modifier_reasons"]

_NOUNS = frozenset({"NOUN", "PROPN"})


def antonym_reasons(pair: Pair) -> list[Reason]:
    """One reason per edit classed ``antonym``."""
    return [
        Reason("changed word", f'"{e.old_content[0].text}" -> "{e.new_content[0].text}" (antonym)')
        for e in pair.edits
        if e.cls is EditClass.ANTONYM
    ]


def _noun(t: Token) -> bool:
    """A noun, or an English gerund before one (``training`` in ``training optimization``)."""
    return t.pos in _NOUNS or t.tag == "VBG"


def _joined(first: Token, second: Token) -> bool:
    return second.start == first.start + len(first.text)


def modifier_reasons(pair: Pair) -> list[Reason]:
    """One reason for the first edit that replaced the noun before a kept noun by an unrelated
    noun (see the module docstring)."""
    a, b = pair.old.words, pair.new.words
    old_keys = Counter(map(word_key, a))
    new_keys = Counter(map(word_key, b))
    for e in pair.edits:
        if e.cls is not EditClass.CONTENT or len(e.old) != 1 or len(e.new) != 1:
            continue
        x, y = e.old[0], e.new[0]
        after_old, after_new = e.at_old + 1, e.at_new + 1
        if not (_noun(x) and _noun(y)) or after_old >= len(a):
            continue
        head = a[after_old]
        kx, ky = word_key(x), word_key(y)
        if head.pos not in _NOUNS or new_keys[kx] >= old_keys[kx] or old_keys[ky] >= new_keys[ky]:
            continue  # not a modifier, or a word moved (as often on both sides)
        if pair.old.language == "ko" and not (
            _joined(x, head) and after_new < len(b) and _joined(y, b[after_new])
        ):
            continue
        if related(x, y, pair.old.language) is None:
            detail = f'"{x.text}" -> "{y.text}" (before "{head.text}")'
            return [Reason("changed word", detail)]
    return []
