"""The word rules: a content word replaced by its opposite, the noun that says which of a kind
replaced by another, or a noun replaced by another thing the block names.

Pure code, over the pair's edits (``guard.edits``): an edit that replaced one content word by
one its language's resource calls an antonym (WordNet for English: ``complexity`` ->
``simplicity``, ``began`` -> ``finished``) is a flipped claim: ``changed word "complexity" ->
"simplicity" (antonym)``; one noun replaced by another thing of the same specific kind
(``geometry`` -> ``arithmetic``: ``(another of its kind)``) names another thing. The word
tables' opposites (``meaning``) cover the other languages.

An edit that replaced only the noun before a noun the reply keeps (``inference optimization``
-> ``training optimization``, 异构群组 -> 同构群组, 중심팀 -> 중재팀, 視覚エンコーダ ->
音声エンコーダ) names another thing of that kind, unless the two are forms, synonyms or
derivations of one word: ``changed word "중심" -> "중재" (before "팀")``. A Korean compound
counts written as one word or apart (중재 팀 -> 인프라 팀), but not with a noun that places a
thing in time or order (다음 팀, "the next team"; 구성원 사이, "among the members").

An edit that replaced a noun (or a run of up to three: 중재 팀) by nouns the block already names
elsewhere, so that the reply names the first fewer times and the others more, gives a claim to
another thing of the block (the moderation team's duty now the council's; "the encoder" for
"the LLM"): ``changed word "중재팀" -> "심의회" (named elsewhere in the block)``. Two spellings
that share most of their letters are a slip fixed (適応 -> 適用 where the block writes 適用),
not another thing named.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.edits import EditClass, related
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.rules.order import word_key

__all__ = ["antonym_reasons", "modifier_reasons", "named_elsewhere_reasons"]

_NOUNS = frozenset({"NOUN", "PROPN"})
_KO_RELATIONAL = frozenset(
    {"다음", "후", "뒤", "전", "이후", "이전", "즉시", "대로", "경우", "때", "중", "사이", "간"}
)
"""Korean nouns that place a thing in time, order or among others (다음 팀, "the next team";
구성원 사이, "among the members"); Kiwi tags them as common nouns (NNG). Before or as the head
they say where, not which of a kind."""


_SAYS = {EditClass.ANTONYM: "antonym", EditClass.KIN: "another of its kind"}


def antonym_reasons(pair: Pair) -> list[Reason]:
    """One reason per edit classed ``antonym`` or ``kin`` (another thing of the same kind)."""
    return [
        Reason(
            "changed word",
            f'"{(e.old_content or e.old)[0].text}" -> '
            f'"{(e.new_content or e.new)[0].text}" ({_SAYS[e.cls]})',
        )
        for e in pair.edits
        if e.cls in _SAYS
    ]


def _noun(t: Token) -> bool:
    """A noun, or an English gerund before one (``training`` in ``training optimization``)."""
    return t.pos in _NOUNS or t.tag == "VBG"


def _key_counts(pair: Pair) -> tuple[Counter[str], Counter[str]]:
    """How often each word key stands in the block and in the reply."""
    return Counter(map(word_key, pair.old.words)), Counter(map(word_key, pair.new.words))


def modifier_reasons(pair: Pair) -> list[Reason]:
    """One reason for the first edit that replaced the noun before a kept noun by an unrelated
    noun (see the module docstring)."""
    a = pair.old.words
    old_keys, new_keys = _key_counts(pair)
    for e in pair.edits:
        if e.cls is not EditClass.CONTENT or len(e.old) != 1 or len(e.new) != 1:
            continue
        x, y = e.old[0], e.new[0]
        after_old = e.at_old + 1
        if not (_noun(x) and _noun(y)) or after_old >= len(a):
            continue
        if x.tag == "VBG" and e.at_old and a[e.at_old - 1].pos in ("NOUN", "PROPN", "VERB"):
            continue  # a participle after a noun or a verb takes an object ("domains
            # addressing complex challenges"): a verb, not the modifier of a noun
        head = a[after_old]
        kx, ky = word_key(x), word_key(y)
        if head.pos not in _NOUNS or new_keys[kx] >= old_keys[kx] or old_keys[ky] >= new_keys[ky]:
            continue  # not a modifier, or a word moved (as often on both sides)
        if pair.old.language == "ko" and {x.lemma, y.lemma, head.lemma} & _KO_RELATIONAL:
            continue  # 다음 팀 -> 후 팀, 일원 사이 -> 구성원 사이: a place in time or order
        if related(x, y, pair.old.language) is None:
            detail = f'"{x.text}" -> "{y.text}" (before "{head.text}")'
            return [Reason("changed word", detail)]
    return []


def _look_alike(x: str, y: str) -> bool:
    """True if two spellings share most of their letters (適応 and 適用, "affect" and
    "effect"): a slip fixed, not another thing named."""
    return SequenceMatcher(None, x, y).ratio() >= 0.5


def named_elsewhere_reasons(pair: Pair) -> list[Reason]:
    """One reason for the first edit that replaced a noun (or a run of nouns: 중재 팀) by nouns
    the block already names elsewhere, the reply saying the first fewer times and the others
    more: a claim moved to another thing of the block (중재팀 -> 심의회, "the council" -> "the
    group")."""
    old_keys, new_keys = _key_counts(pair)
    for e in pair.edits:
        if e.cls is not EditClass.CONTENT:
            continue
        xs, ys = e.old_content, e.new_content
        if not (xs and ys and len(xs) <= 3 and len(ys) <= 3):
            continue
        if not all(t.pos in _NOUNS for t in (*xs, *ys)):
            continue
        kxs, kys = {word_key(t) for t in xs}, {word_key(t) for t in ys}
        if kxs & kys or not all(old_keys[k] for k in kys):
            continue  # a word kept, or one the block does not name
        if not any(new_keys[k] < old_keys[k] for k in kxs):
            continue
        if not any(new_keys[k] > old_keys[k] for k in kys):
            continue
        x = pair.block_prose[xs[0].start : xs[-1].start + len(xs[-1].text)]
        y = pair.reply_prose[ys[0].start : ys[-1].start + len(ys[-1].text)]
        if _look_alike(x, y) or any(related(p, q, pair.old.language) for p in xs for q in ys):
            continue
        return [Reason("changed word", f'"{x}" -> "{y}" (named elsewhere in the block)')]
    return []
