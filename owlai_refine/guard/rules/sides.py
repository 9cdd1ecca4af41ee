"""The sides rule: a word that crossed a comparison's or a sequence's two sides.

Pure code, over the pair's analysed tokens. A comparison names what is compared and the
standard it is compared with: in English the words after ``than`` or ``compared with`` (``AES-256
is more secure than AES-128 or AES-192``), in Chinese after 比 or 相较于 and before 相比 (``A比B
更快``, ``与B相比A更快``), in Japanese and Korean the words before the particle より / 보다
(``AはBより速い``, ``A는 B보다 빠르다``). A sequence names what
comes first the same way: after ``after`` / ``before``, before 之后 / 之前, 後 / 前, 후 / 전
(``継続事前学習後に事後学習``). A sentence of the block and one of the reply with the same
pivot that share most words say the same relation; a content word that stood in the block's
standard and stands in the reply's sentence outside it (or the reverse) crossed sides: ``...
than AES-128 or AES-192`` -> ``AES-256 and AES-192 are more secure than AES-128``;
``suffering injustice is better than committing it`` -> ``committing injustice is better
than suffering it``; ``継続事前学習後に事後学習`` -> ``事後学習の後に継続事前学習``;
``相较于MAPPO MHGPO更快`` -> ``与MHGPO相比 MAPPO更快``. Rewording a relation with no pivot on
one side (``B, then A``) is not judged here.
"""

from __future__ import annotations

from dataclasses import dataclass

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.rules.order import sentences, word_key

__all__ = ["sides_reasons"]


@dataclass(frozen=True, slots=True)
class _Pivots:
    """The words that split one kind of relation into two sides, in one language."""

    group: str
    """The reason's group when a word crossed."""
    words: frozenset[str]
    follows: bool
    """True if the standard follows the pivot (``than B``), false if it precedes it (Bより)."""
    pos: frozenset[str] = frozenset()
    """The parts of speech a pivot may have (empty: any): the particle より, not the verb."""
    linked: frozenset[tuple[str, str]] = frozenset()
    """Two words that make a pivot whose standard follows them (``compared with B``, 相对于B,
    相比于B)."""
    reversed: frozenset[str] = frozenset()
    """Pivots the other way round: their standard precedes them (与B相比, 与B相较), unless a
    ``linked`` word follows (相比于B)."""


_COMPARE = "changed comparison"
_ORDER = "swapped words"
_PARTICLE = frozenset({"ADP", "PART"})
_PIVOTS: dict[str, tuple[_Pivots, ...]] = {
    "en": (
        _Pivots(
            _COMPARE,
            frozenset({"than"}),
            follows=True,
            linked=frozenset(
                {("compare", "with"), ("compare", "to"), ("relative", "to"), ("in", "comparison")}
            ),
        ),
        _Pivots(_ORDER, frozenset({"after", "before"}), follows=True, pos=frozenset({"ADP"})),
    ),
    "zh": (
        _Pivots(
            _COMPARE,
            frozenset({"比", "较之", "比起"}),
            follows=True,
            linked=frozenset({("相比", "于"), ("相较", "于"), ("相对", "于")}),
            reversed=frozenset({"相比", "相较"}),
        ),
        _Pivots(_ORDER, frozenset({"之后", "以后", "之前", "以前"}), follows=False),
    ),
    "ja": (
        _Pivots(_COMPARE, frozenset({"より"}), follows=False, pos=_PARTICLE),
        _Pivots(_ORDER, frozenset({"後", "前"}), follows=False),
    ),
    "ko": (
        _Pivots(_COMPARE, frozenset({"보다"}), follows=False, pos=_PARTICLE),
        _Pivots(_ORDER, frozenset({"후", "전"}), follows=False, pos=frozenset({"NOUN"})),
    ),
}
"""Comparisons (``A is faster than B``: B the standard) and sequences (``A after B``: B
first): a word that crossed either's sides changed what is compared or what comes first."""
_MOST_WORDS = 6
"""The most content words a standard holds (``than AES-128 or AES-192``: 2)."""


@dataclass(frozen=True, slots=True)
class _Comparison:
    standard: frozenset[str]
    """The keys of the standard's content words."""
    rest: frozenset[str]
    """The keys of the sentence's other content words."""
    words: dict[str, str]
    """Key -> the word as written, for the reason."""
    pivot: str
    """The pivot as written."""


def _standard(sentence: list[Token], i: int, language: str, follows: bool) -> list[Token]:
    """The content words of the standard of the pivot ``sentence[i]``; none for a contrast
    or a quantity (``rather than``, ``more than 23,000``). A standard before its pivot reads
    over a parenthesised part (``事後学習 (SFT, DPO) の後に``); where it is a verb and its
    object, the object is the standard (``継続事前学習を行った後に``: 継続事前学習)."""
    if follows:
        return _standard_after(sentence, i, language)
    out: list[Token] = []
    depth = 0
    for t in reversed(sentence[:i]):
        if t.text in (")", "\uff09"):
            depth += 1
        if depth:
            depth -= t.text in ("(", "\uff08")
            continue
        if t.punct:
            break
        if out and t.pos in ("ADP", "PART") and t.lemma not in ("의", "の"):
            if t.lemma in _OBJECT and all(w.pos == "VERB" for w in out):
                out.clear()  # 継続事前学習を行った後: the verb's object is what came first
                continue
            break  # the standard starts after the particle that ends the phrase before it
        if t.content:
            out.append(t)
        if len(out) == _MOST_WORDS:
            break
    return out


_OBJECT = frozenset({"を", "が", "을", "를", "이", "가"})
"""The case particles of a verb's object or subject: before a verb that ends a standard,
what stands before them is the standard (``継続事前学習を行った後``, ``검토를 마친 후``)."""
_NOMINAL = frozenset({"NOUN", "PROPN", "NUM", "ADJ"})


def _standard_after(sentence: list[Token], i: int, language: str) -> list[Token]:
    """The standard after ``than`` or 比: up to the punctuation, clause or predicate that ends
    it; after a conjunction only nouns and adjectives go on (``than AES-128 or AES-192``, not
    ``than PoW and thus allows``)."""
    if i and sentence[i - 1].lemma.lower() in _NOT_COMPARED:
        return []
    out: list[Token] = []
    joined = False
    for t in sentence[i + 1 :]:
        if t.punct or t.pos in ("SCONJ", "AUX") or t.tag in ("VBZ", "VBD", "VBP"):
            break
        if language == "zh" and out and t.pos in ("ADJ", "VERB", "ADV"):
            break  # A比B更快: the standard ends at the predicate
        if (
            language == "en"
            and out
            and ((t.pos == "ADP" and t.lemma.lower() != "of") or t.lemma.lower() in _CAUSAL)
        ):
            break  # "compared to classical systems due to decoherence": a noun phrase
        if t.pos == "CCONJ":
            joined = True
            continue
        if not t.content:
            continue
        if t.pos == "NUM" and not out:
            return []  # more than 23,000: a quantity, not a standard
        if joined and t.pos not in _NOMINAL:
            break
        out.append(t)
        if len(out) == _MOST_WORDS:
            break
    return out


_CAUSAL = frozenset({"due", "because", "owing", "thanks"})
"""``due to``, ``because of``: a cause after the standard, not part of it."""
_NOT_COMPARED = frozenset({"rather", "other"})
"""``rather than`` (a contrast) and ``other than`` (an exception) compare nothing."""


def _direction(sentence: list[Token], i: int, kind: _Pivots) -> bool | None:
    """Whether ``sentence[i]`` is a pivot of ``kind`` whose standard follows it (``True``:
    than B, compared with B, 相对于B), one whose standard precedes it (``False``: Bより,
    与B相比), or no pivot (``None``)."""
    t = sentence[i]
    lemma = t.lemma.lower()
    if kind.pos and t.pos not in kind.pos:
        return None
    if lemma in kind.words:
        return kind.follows
    nxt = sentence[i + 1].lemma.lower() if i + 1 < len(sentence) else ""
    if (lemma, nxt) in kind.linked:
        return True
    if lemma in kind.reversed:
        return False
    return None


def _comparisons(tokens: tuple[Token, ...], language: str, kind: _Pivots) -> list[_Comparison]:
    """Each sentence's relation of ``kind`` (one pivot exactly; sentences with none or two
    are not judged here)."""
    out: list[_Comparison] = []
    for sentence in sentences(tokens):
        at = [
            (i, d) for i in range(len(sentence)) if (d := _direction(sentence, i, kind)) is not None
        ]
        if len(at) != 1:
            continue
        standard = _standard(sentence, at[0][0], language, at[0][1])
        if not standard:
            continue
        keys = {word_key(t) for t in standard}
        words = {word_key(t): t.text for t in sentence if t.content}
        rest = frozenset(words) - keys
        out.append(_Comparison(frozenset(keys), rest, words, sentence[at[0][0]].text))
    return out


def sides_reasons(pair: Pair) -> list[Reason]:
    """``changed comparison "AES-192" moved across "than"`` (or ``swapped words "X" moved
    across "after"``) for the first word that crossed a comparison's or a sequence's sides
    (see the module docstring); empty if none did."""
    language = pair.old.language
    for kind in _PIVOTS.get(language, ()):
        new = _comparisons(pair.new.tokens, language, kind)
        for old in _comparisons(pair.old.tokens, language, kind):
            mine = old.standard | old.rest
            match = max(new, key=lambda c: len(mine & (c.standard | c.rest)), default=None)
            if match is None or len(mine & (match.standard | match.rest)) < len(mine) / 2:
                continue
            crossed = (old.standard & match.rest) | (old.rest & match.standard)
            if crossed:
                word = old.words[min(crossed)]
                return [Reason(kind.group, f'"{word}" moved across "{old.pivot}"')]
    return []
