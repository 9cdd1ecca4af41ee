"""Content kept: a reply must not drop a sentence of its block, nor bring in new matter.

Pure code, no IO, no language model. Copy-editing rewords a sentence but keeps most of what it
is about; a small model instead often drops a sentence (or replaces a label such as "Latency
Reduction:" by another), and the token and length checks let that through when no citation or
number went with it. So each sentence of the block is reduced to its *content tokens*:

- Latin, Cyrillic, ... words of four letters or more, and acronyms of two or more capitals
  (``DQN``, ``GPU``: a name, however short), lower-cased, minus a few function words,
  cut to their first six letters (a crude stem: "threatens" and "threat" meet); in English the
  word's lemma from the analyser is cut instead, so that two forms of one word meet whatever
  their length ("focuses" and "focus", "noting" and "note");
- in CJK and Hangul text (no useful word boundaries), character bigrams.

A sentence's *distinctive* tokens are those no other sentence of the block has. A sentence with
at least :data:`MIN_DISTINCTIVE` distinctive tokens of which the reply keeps less than
:data:`MIN_KEPT` is reported as ``lost sentence "<its start>"``. Rewording keeps names and
nouns; merging two sentences keeps both sets; dropping one keeps (almost) none of its own.
Code, URLs, link destinations and math are left out (the token check guards them).

The other way round, a reply whose content tokens are more than :data:`MAX_NEW` new (and at
least :data:`MIN_NEW` of them) brought in matter the block did not have: ``added words "major,
factor, growth, market"``. On SmolLM2's replies to the sample reports this caught a claim
tacked onto a list item ("... has been a major factor in the growth of the GPU market") and the
worked example pasted over a block, and no edit that kept the block's sense.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from owlai_refine.guard._md import prose
from owlai_refine.guard.normalise import CJK, CJK_STOP, HANGUL, HANGUL_STOP, normalise
from owlai_refine.guard.reasons import Reason
from owlai_refine.scripts import HAN
from owlai_refine.scripts import HANGUL as HANGUL_CLASS

__all__ = [
    "MAX_NEW",
    "MIN_DISTINCTIVE",
    "MIN_KEPT",
    "MIN_KEPT_OVERALL",
    "MIN_NEW",
    "MIN_OVERALL",
    "added_words",
    "content_tokens",
    "lost_sentences",
    "lost_words",
]

MIN_DISTINCTIVE = 2
"""Sentences with fewer distinctive content tokens are not judged (too little to tell)."""
MIN_KEPT = 1 / 2
MIN_KEPT_OVERALL = 3 / 4
"""A reply must keep three quarters of the block's content tokens (a copy edit rewords a few;
dropping a quarter means a clause or a fact went missing)."""
MIN_OVERALL = 8
"""Blocks with fewer content tokens than this are not judged by :func:`lost_words`."""
"""A sentence whose distinctive tokens the reply keeps less than this fraction of is lost. A
copy edit changes as little as needed: on SmolLM2's replies to the sample reports, every
sentence kept below one half was dropped, replaced or rewritten into another claim, and a third
let such rewrites through."""

MAX_NEW = 1 / 3
"""A reply with more than this fraction of new content tokens brought in new matter ..."""
MAX_NEW_CJK = 1 / 2
"""... or of new CJK characters (a faithful Korean or Chinese rewording changes many
characters: "RFC에 대한 개요를 제공" -> "RFC의 내용을 개괄적으로 소개"; a new clause is the
``meaning`` check's ``added clause``)."""
MIN_KEPT_CJK = 1 / 3
"""A sentence of mostly CJK tokens is lost below this fraction of its distinctive characters
kept (Japanese "この記事の管理は GitHub で行っています" -> "この記事は GitHub で管理しています"
keeps few of its own characters in the same words)."""
MIN_NEW = 3
"""... if it has at least this many new content tokens (a changed word or two is an edit)."""

_WORD = re.compile(rf"[{HAN}]|[\u30a1-\u30fa\u30fc]{{2,}}|[{HANGUL_CLASS}]+|[^\W\d_{CJK}]+")
_IS_CJK = re.compile(f"[{CJK}]")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])")
_STOP = frozenset(
    {
        "that", "this", "with", "from", "have", "been", "were", "which", "their", "there",
        "these", "those", "they", "them", "than", "then", "into", "also", "such", "more", "most",
        "other", "some", "what", "when", "where", "while", "will", "would", "could", "should",
        "about", "after", "before", "being", "between", "both", "each", "only", "over", "under",
        "very",
    }
)  # fmt: skip


def content_tokens(text: str) -> set[str]:
    """The content tokens of ``text`` (see the module docstring; code, URLs and math are
    removed first by :func:`lost_sentences` and :func:`added_words`), after
    :func:`~owlai_refine.guard.normalise.normalise`."""
    return set(_ordered_tokens(normalise(text)))


def _ordered_tokens(text: str, lemmas: Mapping[str, str] | None = None) -> dict[str, str]:
    """Content token -> the word it was first seen in (a CJK token stands for itself), for an
    already normalised ``text``; ``lemmas``: lower-cased Latin word -> its lemma, which is
    then cut instead of the word (``focuses`` and ``focus``, ``noting`` and ``note`` meet)."""
    tokens: dict[str, str] = {}
    for word in _WORD.findall(text):
        if HANGUL.match(word):
            for ch in word:
                if ch not in HANGUL_STOP:
                    tokens.setdefault(ch, ch)
        elif _IS_CJK.match(word):
            if word not in CJK_STOP:
                tokens.setdefault(word, word)
        elif (len(word) >= 4 or (len(word) > 1 and word.isupper())) and (
            lower := word.lower()
        ) not in _STOP:  # an acronym (DQN, GPU) names a thing, however short
            key = lemmas.get(lower, lower) if lemmas else lower
            tokens.setdefault(key[:6], lower)
    return tokens


def _mostly_cjk(tokens: Iterable[str]) -> bool:
    """True if most of ``tokens`` are CJK characters (one character carries less of a
    sentence than one Latin word, and a rewording changes more of them)."""
    marks = [bool(_IS_CJK.match(t)) for t in tokens]
    return sum(marks) * 2 > len(marks)


def _start(sentence: str, limit: int = 50) -> str:
    sentence = " ".join(sentence.split())
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "\u2026"


def lost_sentences(
    block_text: str, reply_text: str, lemmas: Mapping[str, str] | None = None
) -> list[Reason]:
    """``lost sentence "..."`` for each sentence of ``block_text`` that ``reply_text`` dropped
    (in block order); empty if every sentence is still there in some wording. ``lemmas``: as
    for :func:`lost_words`."""
    sentences = [s for s in _SENTENCE.split(normalise(prose(block_text))) if s.strip()]
    tokens = [set(_ordered_tokens(s, lemmas)) for s in sentences]
    kept = set(_ordered_tokens(normalise(prose(reply_text)), lemmas))
    reasons: list[Reason] = []
    for i, sentence in enumerate(sentences):
        others: set[str] = set().union(*tokens[:i], *tokens[i + 1 :])
        distinctive = tokens[i] - others
        if len(distinctive) < MIN_DISTINCTIVE:
            continue
        needed = MIN_KEPT_CJK if _mostly_cjk(distinctive) else MIN_KEPT
        if len(distinctive & kept) < needed * len(distinctive):
            reasons.append(Reason("lost sentence", f'"{_start(sentence)}"'))
    return reasons


def lost_words(
    block_text: str,
    reply_text: str,
    rewritten: Callable[[str], bool] | None = None,
    lemmas: Mapping[str, str] | None = None,
) -> Reason | None:
    """``lost words "<dropped tokens>"`` if the reply keeps less than :data:`MIN_KEPT_OVERALL`
    of the block's word tokens, or less than :data:`MIN_KEPT` of its CJK/Hangul bigrams (a
    copy edit changes many more bigrams than words), counted only for blocks with at least
    :data:`MIN_OVERALL` tokens of that kind: a dropped clause inside a sentence, which
    :func:`lost_sentences` lets through. ``rewritten(word)``: True for a Latin word of the
    block the reply says with another word of the same meaning (a synonym or a derivation
    added), which counts as kept. ``lemmas``: lower-cased Latin word -> its lemma in either
    text (the analysers'), so that two forms of one word are one token. ``None`` otherwise."""
    before = _ordered_tokens(normalise(prose(block_text)), lemmas)
    kept = set(_ordered_tokens(normalise(prose(reply_text)), lemmas))
    lost: list[str] = []
    for cjk, needed in ((False, MIN_KEPT_OVERALL), (True, MIN_KEPT)):
        tokens = {t: w for t, w in before.items() if bool(_IS_CJK.match(t)) is cjk}
        if len(tokens) < MIN_OVERALL:
            continue
        gone = [word for token, word in tokens.items() if token not in kept]
        failing = len(tokens) - len(gone) < needed * len(tokens)
        if failing and not cjk and rewritten is not None:  # only then: WordNet costs time
            gone = [word for word in gone if not rewritten(word)]
        if len(tokens) - len(gone) < needed * len(tokens):
            lost += gone
    if lost:
        shown = ", ".join(lost[:6]) + (", \u2026" if len(lost) > 6 else "")
        return Reason("lost words", f'"{shown}"')
    return None


def added_words(
    block_text: str,
    reply_text: str,
    rewording: Callable[[str], bool] | None = None,
    lemmas: Mapping[str, str] | None = None,
) -> Reason | None:
    """``added words "<new tokens>"`` if more than :data:`MAX_NEW` of the reply's content
    tokens (and at least :data:`MIN_NEW`) are not in ``block_text``; else ``None``.
    ``rewording(word)``: True for a Latin word of the reply that says a word the reply dropped
    from the block (a synonym or a derivation of it), which is not new matter. ``lemmas``: as
    for :func:`lost_words`."""
    before = set(_ordered_tokens(normalise(prose(block_text)), lemmas))
    after = _ordered_tokens(normalise(prose(reply_text)), lemmas)
    new = [word for token, word in after.items() if token not in before]
    limit = MAX_NEW_CJK if _mostly_cjk(after) else MAX_NEW
    if rewording is not None and len(new) >= MIN_NEW and len(new) > limit * len(after):
        new = [word for word in new if _IS_CJK.match(word) or not rewording(word)]
    if len(new) >= MIN_NEW and len(new) > limit * len(after):
        shown = ", ".join(new[:6]) + (", \u2026" if len(new) > 6 else "")
        return Reason("added words", f'"{shown}"')
    return None
