"""The added-clause rule: a clause the reply inserts, with words the block has nowhere.

Pure code, over the pair's edits (``guard.edits``). An edit that replaces no content word of
the block and brings in at least :data:`MIN_NEW` content words (nouns, verbs, adjectives) whose
lemmas the block has nowhere, one of them a verb or an adjective (or a noun its suffix makes
one: Korean 반영되다, Japanese 収集する), says something the block did not: a result
(``...확립하여 프로젝트 운영의 투명성을 높입니다``), a cause, an evaluation
(``从而显著提升了最终答案的准确率``): ``added clause "프로젝트 운영의 투명성을 높이"``. A copy
edit inserts connectives, particles and words of the block said again; a rewording replaces
words (an edit with the block's words on its other side), and is judged by the other rules.
English words that WordNet relates to a word of the block, and Chinese, Japanese or Korean words
that hold one of the block's words or stand inside one (相结合 for 结合, 形 for 形式), are said
again, not new; the light verbs (是, 있다, する, ``be``) are not counted; and a run whose
content words are mostly the block's is text moved with a word or two added, not a clause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.edits import restated
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["MIN_NEW", "added_clause_reasons", "confirmed"]

MIN_NEW = 3
"""The fewest new content words an inserted run needs to be a clause (Korean 투명성, 높이다 and
운영; fewer is a word or two of emphasis, the role and word rules')."""
_CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ"})
_PREDICATE = frozenset({"VERB", "ADJ"})
_LIGHT = frozenset(
    {
        "be", "have", "do", "make", "get", "是", "有", "进行", "为", "成为", "하다", "있다", "되다",
        "이다", "없다", "않다", "為る", "居る", "有る", "成る", "出来る", "行う", "於く",
    }
)  # fmt: skip
"""Verbs that carry a sentence's grammar rather than a claim of their own."""


def _said_again(word: str, block: set[str], language: str) -> bool:
    """True if a Chinese, Japanese or Korean ``word`` holds a block word of two characters or
    more (相结合: 结合), or stands inside one (形: 形式; 대표: 대표자)."""
    if language not in ("zh", "ja", "ko"):
        return False
    return any(len(b) >= 2 and (b in word or word in b) for b in block)


def _block_words(pair: Pair) -> set[str]:
    return {t.lemma.lower() for t in pair.old.words} | {t.text.lower() for t in pair.old.words}


def _new(tokens: Iterable[Token], block: set[str], pair: Pair) -> list[Token]:
    """The content words of ``tokens`` (the reply's) that the block has nowhere, in any form
    (see the module docstring)."""
    return [
        t
        for t in tokens
        if t.content
        and t.pos in _CONTENT
        and t.lemma.lower() not in block
        and t.text.lower() not in block
        and t.lemma not in _LIGHT
        and not _said_again(t.text, block, pair.old.language)
        and not restated(t, pair.new, pair.old)
    ]


_VERB_SUFFIXES = frozenset({"XSV", "XSA"})
"""Kiwi's verb- and adjective-making suffixes (반영 + 되다, 충분 + 하다)."""
_VERB_MAKERS = frozenset({"為る", "致す", "出来る"})
"""UniDic's lemmas of the light verbs that make a noun a Japanese verb (収集 + する)."""


def _predicate(word: Token, pair: Pair) -> bool:
    """True if the reply's ``word`` is a verb or an adjective, or a noun made one by the
    suffix or light verb right after it (Korean 반영되다, Japanese 収集する)."""
    if word.pos in _PREDICATE:
        return True
    tokens = pair.new.tokens
    at = next((i for i, t in enumerate(tokens) if t is word), -1)
    nxt = tokens[at + 1] if 0 <= at < len(tokens) - 1 else None
    return nxt is not None and (nxt.tag in _VERB_SUFFIXES or nxt.lemma in _VERB_MAKERS)


def confirmed(pair: Pair, reason: Reason) -> bool:
    """False if the Chinese run of an ``added clause`` reason of the surface clause check
    (``guard.clauses``, which weighs characters; the run is the reason's
    :attr:`~owlai_refine.guard.reasons.Reason.added`) holds fewer than two content words new
    to the block, as jieba cuts them: ``对角色、Prompt和工具进行联合优化`` for ``共同优化角色``
    adds 进行 (a light verb) and 联合 (共同 said again), no clause; one new word in the noun
    phrase of a preposition is one (根据任务复杂度: a condition brought in). The run is found
    in the reply's prose whatever punctuation stands between its characters (the clause
    check leaves it out: 对此该框架, where the reply has a comma after 对此); True where it
    cannot be found (the reason stands)."""
    run = reason.added[0] if reason.added else ""
    found = re.search(r"\W*".join(map(re.escape, run)), pair.reply_prose) if run else None
    if pair.label != "zh" or found is None:
        return True
    start, end = found.span()
    inside = [t for t in pair.new.words if start <= t.start < end]
    new = _new(inside, _block_words(pair), pair)
    return len(new) >= 2 or _framed(inside, new)


def _framed(words: list[Token], new: list[Token]) -> bool:
    """True if a preposition among ``words`` governs a noun phrase (the nouns right after it)
    holding a ``new`` word: a condition or a means brought in (根据任务复杂度, 通过外部工具)."""
    for i, t in enumerate(words):
        if t.pos != "ADP":
            continue
        for nxt in words[i + 1 :]:
            if nxt.pos not in ("NOUN", "PROPN"):
                break
            if nxt in new:
                return True
    return False


def added_clause_reasons(pair: Pair) -> list[Reason]:
    """``added clause "..."`` for the first inserted run of new content words (see the module
    docstring); empty if there is none."""
    block = _block_words(pair)
    for edit in pair.edits:
        if any(t.content for t in edit.old):
            continue
        new = _new(edit.new, block, pair)
        said = [t for t in edit.new if t.content]
        if (
            len(new) >= MIN_NEW
            and 2 * len(new) >= len(said)
            and any(_predicate(t, pair) for t in new)
        ):
            shown = pair.reply_prose[new[0].start : new[-1].start + len(new[-1].text)]
            return [Reason("added clause", f'"{" ".join(shown.split())}"')]
    return []
