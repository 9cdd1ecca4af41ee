"""The comparison rule: a word that crossed a comparison's two sides.

Pure code, over the pair's analysed tokens. A comparison names what is compared and the
standard it is compared with: in English the words after ``than`` (``AES-256 is more secure
than AES-128 or AES-192``), in Chinese after 比 (``A比B更快``), in Japanese and Korean the words
before より / 보다 (``AはBより速い``, ``A는 B보다 빠르다``). A sentence of the block and one of
the reply that both compare and share most words are the same comparison; a content word that
stood in the block's standard and stands in the reply's sentence outside it (or the reverse)
crossed sides: ``... than AES-128 or AES-192`` -> ``AES-256 and AES-192 are more secure than
AES-128``; ``suffering injustice is better than committing it`` -> ``committing injustice is
better than suffering it``. Rewording a comparison the other way round (``compared with B, A
is faster``) leaves no standard on one side, and is not judged here.
"""

from __future__ import annotations

from dataclasses import dataclass

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.rules.order import sentences, word_key

__all__ = ["comparison_reasons"]

_AFTER = {"en": frozenset({"than"}), "zh": frozenset({"比"})}
"""Pivots whose standard follows them."""
_BEFORE = {"ja": frozenset({"より"}), "ko": frozenset({"보다"})}
"""Pivots (particles) whose standard precedes them."""
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


def _standard(sentence: list[Token], i: int, language: str) -> list[Token]:
    """The content words of the standard of the pivot ``sentence[i]``; none for a contrast
    or a quantity (``rather than``, ``more than 23,000``)."""
    if language in _AFTER:
        return _standard_after(sentence, i, language)
    out: list[Token] = []
    for t in reversed(sentence[:i]):
        if t.punct or (out and t.pos in ("ADP", "PART") and t.lemma not in ("의", "の")):
            break  # the standard starts after the particle that ends the phrase before it
        if t.content:
            out.append(t)
        if len(out) == _MOST_WORDS:
            break
    return out


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


_NOT_COMPARED = frozenset({"rather", "other"})
"""``rather than`` (a contrast) and ``other than`` (an exception) compare nothing."""


def _pivot(t: Token, pivots: frozenset[str], language: str) -> bool:
    """True if ``t`` is a comparison's pivot: in Japanese and Korean a particle (not the verb
    보다, "to see")."""
    return t.lemma.lower() in pivots and (language in _AFTER or t.pos in ("ADP", "PART"))


def _comparisons(tokens: tuple[Token, ...], language: str) -> list[_Comparison]:
    """Each sentence's comparison (one pivot exactly; sentences with none or two are not
    compared here)."""
    pivots = _AFTER.get(language) or _BEFORE.get(language) or frozenset()
    out: list[_Comparison] = []
    for sentence in sentences(tokens):
        at = [i for i, t in enumerate(sentence) if _pivot(t, pivots, language)]
        if len(at) != 1:
            continue
        standard = _standard(sentence, at[0], language)
        if not standard:
            continue
        keys = {word_key(t) for t in standard}
        words = {word_key(t): t.text for t in sentence if t.content}
        rest = frozenset(words) - keys
        out.append(_Comparison(frozenset(keys), rest, words))
    return out


def comparison_reasons(pair: Pair) -> list[Reason]:
    """``changed comparison "AES-192" moved across "than"`` for the first word that crossed
    a comparison's sides (see the module docstring); empty if none did."""
    language = pair.old.language
    if language not in _AFTER and language not in _BEFORE:
        return []
    new = _comparisons(pair.new.tokens, language)
    pivot = next(iter(_AFTER.get(language) or _BEFORE[language]))
    for old in _comparisons(pair.old.tokens, language):
        mine = old.standard | old.rest
        match = max(new, key=lambda c: len(mine & (c.standard | c.rest)), default=None)
        if match is None or len(mine & (match.standard | match.rest)) < len(mine) / 2:
            continue
        crossed = (old.standard & match.rest) | (old.rest & match.standard)
        if crossed:
            word = sorted(crossed, key=lambda k: k)[0]
            return [Reason("changed comparison", f'"{old.words[word]}" moved across "{pivot}"')]
    return []
