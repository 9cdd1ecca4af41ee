"""The negation rule: a negation kept on the word it negated.

Pure code, over the pair's analysed tokens. The word tables (``meaning``) count negators, so a
negation added or dropped is theirs; a negation moved to another word with the count kept
(Korean ``A하지 않고 B`` -> ``B하지 않고 A``, ``not X but Y`` -> ``not Y but X``) passes them.
Here each negator is paired with the content word it negates (the nearest before it in Korean
and Japanese, where the negation follows its verb: ``위임/하/지/않``, ``使え/ない``; the nearest
after it in English and Chinese: ``not only``, ``不/依赖``), and the negated words must be the
same: ``moved negation "위임" -> "선출"``. The nearest such word decides alone when it is a noun
that both texts name and that the other side does not negate: a negation traded between two
things (``이 그룹이 아니라 심의회가`` -> ``심의회가 아니라 이 그룹이``, where Korean marks both with
the same particle, so the swap rule's particles cannot tell) is moved even though a word further
off (``결정``) is negated on both sides.
"""

from __future__ import annotations

from owlai_refine.guard.analysis import Analysis, Token
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason, quoted

__all__ = ["negation_reasons"]

_NEGATORS = {
    "en": frozenset({"not", "n't", "never", "no", "without", "nor"}),
    "zh": frozenset({"不", "没", "没有", "非", "未", "无", "并非", "不是", "无需", "无法"}),
    "ja": frozenset({"ない", "ず", "ぬ", "無い", "ません"}),
    "ko": frozenset({"않다", "못", "안", "아니다", "없다", "못하다"}),
}
_BEFORE = frozenset({"ko", "ja"})
_WINDOW = 2
"""Content words on the negator's side that it may negate."""


def _negated(analysis: Analysis) -> list[list[Token]]:
    """For each negator, the content words on its side (numbers left out), nearest first."""
    negators = _NEGATORS.get(analysis.language, frozenset())
    words = analysis.words
    found: list[list[Token]] = []
    for i, t in enumerate(words):
        if t.lemma.lower() not in negators and t.text.lower() not in negators:
            continue
        side = words[:i][::-1] if analysis.language in _BEFORE else words[i + 1 :]
        found.append([w for w in side if w.content and w.pos != "NUM"])
    return found


def _negations(analysis: Analysis) -> list[frozenset[str]]:
    """For each negator with a content word on its side, the lemmas of the content words it
    may negate: the :data:`_WINDOW` nearest."""
    return [
        frozenset(w.lemma.lower() for w in side[:_WINDOW]) for side in _negated(analysis) if side
    ]


def _nearest_nouns(analysis: Analysis) -> list[str | None]:
    """For each negator, the lemma of the nearest content word on its side when that word is a
    noun (the thing negated: ``그룹이 아니라``, ``not the council``), else ``None``."""
    return [
        side[0].lemma.lower() if side and side[0].pos in ("NOUN", "PROPN") else None
        for side in _negated(analysis)
    ]


def _traded_negation(pair: Pair) -> Reason | None:
    """A negation moved from one noun to another that both texts name, each negated on one side
    only (``이 그룹이 아니라 심의회가`` -> ``심의회가 아니라 이 그룹이``)."""
    old, new = _nearest_nouns(pair.old), _nearest_nouns(pair.new)
    if len(old) != len(new):
        return None
    old_words = {t.lemma.lower() for t in pair.old.words}
    new_words = {t.lemma.lower() for t in pair.new.words}
    for x, y in zip(old, new, strict=True):
        if x is None or y is None or x == y or x in new or y in old:
            continue
        if x in new_words and y in old_words:
            return Reason(
                "moved negation",
                f"{quoted(_written([x], pair.old))} -> {quoted(_written([y], pair.new))}",
            )
    return None


def negation_reasons(pair: Pair) -> list[Reason]:
    """``moved negation "a" -> "b"`` when the reply has as many negations as the block but one
    of the block's negates none of the words it negated, and what it negates now stood
    unnegated in the block."""
    old, new = _negations(pair.old), _negations(pair.new)
    if len(old) != len(new) or not old:
        return []
    if traded := _traded_negation(pair):
        return [traded]
    block_words = {t.lemma.lower() for t in pair.old.words}
    unmatched = list(new)
    for heads in old:
        best = max(unmatched, key=lambda other: len(heads & other))
        if heads & best:
            unmatched.remove(best)
            continue
        if best <= block_words:
            was, now = _written(sorted(heads), pair.old), _written(sorted(best), pair.new)
            return [Reason("moved negation", f"{quoted(was)} -> {quoted(now)}")]
    return []


def _written(lemmas: list[str], analysis: Analysis) -> list[str]:
    """Each lemma as the text writes it (its first word with that lemma): ``내리다`` -> ``내릴``."""
    forms: dict[str, str] = {}
    for t in analysis.words:
        forms.setdefault(t.lemma.lower(), t.text)
    return [forms.get(lemma, lemma) for lemma in lemmas]
