"""The word rules: a content word replaced by its opposite, the noun that says which of a kind
replaced by another, or a noun replaced by another thing the block names.

Pure code, over the pair's edits (``guard.edits``): an edit that replaced one content word by
one its language's resource calls an antonym (WordNet for English: ``complexity`` ->
``simplicity``, ``began`` -> ``finished``) is a flipped claim: ``changed word "complexity" ->
"simplicity" (antonym)``; one noun replaced by another thing of the same specific kind
(``geometry`` -> ``arithmetic``: ``(another of its kind)``) names another thing. The word
tables' opposites (``meaning``) cover the other languages.

An edit whose last word, just before a noun the reply keeps, replaced the word that says which
of a kind the noun is (``inference optimization`` -> ``training optimization``, ``quadratic
speedup`` -> ``exponential speedup``, 异构群组 -> 同构群组, 实时交通状况 -> 历史交通状况,
중심팀 -> 중재팀, 表の表示 -> 画像の表示, 利用者 -> 開発者) names another thing of that kind,
unless the two are forms, synonyms or derivations of one word, or one spells the other
(``faceted`` -> ``multifaceted``): ``changed word "중심" -> "중재" (before "팀")``. The
modifier is a noun, a plain English adjective (a comparative is the comparison rules' matter)
or a Chinese adjective or adverb; the head a noun or a nominal suffix (者, 적), right after it
or after the genitive particle (の, 的, 의) or a hyphen. A Korean compound
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
from owlai_refine.guard.edits import Edit, EditClass, related
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


_LINKS = {"ja": frozenset({"の"}), "zh": frozenset({"的"}), "ko": frozenset({"의"})}
"""The genitive particle that may stand between a modifying noun and its head (表の表示)."""
_TAKES_OBJECT = frozenset({"NOUN", "PROPN", "VERB", "ADP", "CCONJ"})
"""The parts of speech before an English -ing form that make it a verb taking an object."""
_NOUN_SUFFIX = ("接尾辞-名詞", "XSN")
"""Tags of a nominal suffix (者 in 利用者, 적 in 공개적): the head a noun before it modifies."""

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
    """One reason for the first edit that replaced the word before a kept noun by an unrelated
    word of the same part (see the module docstring)."""
    a, language = pair.old.words, pair.old.language
    old_keys, new_keys = _key_counts(pair)
    for e in pair.edits:
        if e.cls is not EditClass.CONTENT or not e.old or not e.new:
            continue
        longest = 4 if language == "en" else 3  # English runs carry their articles
        if len(e.old) > longest or len(e.new) > longest:
            continue  # a phrase rebuilt, not a word replaced
        x, y = e.old[-1], e.new[-1]
        head = _kept_head(pair, e)
        if head is None:
            continue
        if not (_modifier(x, language) and _modifier(y, language)):
            continue
        if _gerund(x) and e.at_old and a[e.at_old - 1].pos in _TAKES_OBJECT:
            continue  # a participle after a noun, a verb or a preposition takes an object
            # ("domains addressing complex challenges", "by increasing compliance")
        kx, ky = word_key(x), word_key(y)
        if new_keys[kx] >= old_keys[kx] or old_keys[ky] >= new_keys[ky]:
            continue  # a word moved (as often on both sides)
        if kx in ky or ky in kx:
            continue  # faceted -> multifaceted, 公開 -> 公開的
        if language == "ko" and {x.lemma, y.lemma, head.lemma} & _KO_RELATIONAL:
            continue  # 다음 팀 -> 후 팀, 일원 사이 -> 구성원 사이: a place in time or order
        if related(x, y, language) is None:
            detail = f'"{x.text}" -> "{y.text}" (before "{head.text}")'
            return [Reason("changed word", detail)]
    return []


def _kept_head(pair: Pair, e: Edit) -> Token | None:
    """The noun (or nominal suffix) right after edit ``e`` that both texts keep, or None."""
    a, b, language = pair.old.words, pair.new.words, pair.old.language
    i, j = e.at_old + len(e.old), e.at_new + len(e.new)
    if i < len(a) and j < len(b) and a[i].text == b[j].text in _LINKS.get(language, ()):
        i, j = i + 1, j + 1  # 表の表示 -> 画像の表示: the genitive link kept
    if i >= len(a) or j >= len(b) or word_key(a[i]) != word_key(b[j]):
        return None
    if not (
        _adjacent(pair.block_prose, e.old[-1], a[i], language)
        and _adjacent(pair.reply_prose, e.new[-1], b[j], language)
    ):
        return None  # 时间。MHGPO: the next sentence's first word, not a head
    heads = (a[i],) if a[i].text == b[j].text else (a[i], b[j])  # as written: one word
    if not all(t.pos in _NOUNS or t.tag.startswith(_NOUN_SUFFIX) for t in heads):
        return None  # "the primary focus" -> "this report focuses": a verb now, no head
    return a[i]


def _modifier(t: Token, language: str) -> bool:
    """A word that says which of a kind the noun after it is: a noun (or an English gerund),
    a plain English adjective (not a comparative), a Chinese adjective or adverb (实时)."""
    if language == "zh" and t.tag == "f":
        return False  # a localizer, jieba's f (游戏上 -> 游戏中): where, not which
    if _noun(t):
        return True
    if language == "en":
        return t.tag == "JJ"
    return language == "zh" and t.pos in ("ADJ", "ADV") and len(t.text) > 1


def _adjacent(prose: str, x: Token, head: Token, language: str) -> bool:
    """True if nothing but spaces, a hyphen (``server-level``) or the genitive particle stands
    between ``x`` and ``head``."""
    between = prose[x.start + len(x.text) : head.start].strip()
    return not between or between == "-" or between in _LINKS.get(language, ())


def _gerund(t: Token) -> bool:
    """An English -ing form, whatever the tagger made of it (``increasing`` as JJ)."""
    return t.tag == "VBG" or (t.tag == "JJ" and t.text.endswith("ing"))


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
