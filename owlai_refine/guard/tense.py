"""Tense: an English claim moved in time ("slashes" -> "slashed", "leads" -> "led").

Pure code, no IO. The verbs whose past is never a participle (``is``/``was``, ``grows``/``grew``)
are the word table's ``tense`` pairs (``lexicon/en.toml``); this reads the rest: a present in
``-s`` the reply lost and the past of the same verb it gained, or the other way round, for
regular verbs (``slashes``/``slashed``, ``stops``/``stopped``, ``relies``/``relied``) and for
irregular ones whose past is also their participle (``leads``/``led``, ``makes``/``made``).

Only a finite past counts: after a form of *be*, *have* or *get*, an adverb in -ly between or
not ("is used", "has slashed", "is famously depicted"),
after an article, a possessive or a preposition ("the proposed method") or before ``by`` and a
word, an adverb between or not ("the method proposed by", "a skill possessed only by", not
"increased by 30") the word is a participle, and a change of voice or construction is a
faithful edit. Only a present in ``-s`` that is no noun counts (not
after an article, a possessive or a preposition: "the results", "an increase").
``changed tense "slashes" -> "slashed"``.
"""

from __future__ import annotations

import re
from collections import Counter

from owlai_refine.guard.reasons import Reason

__all__ = ["passive_pasts", "tense_problem"]

_WORD = re.compile(r"[A-Za-z]+|\d+")
_NOT_A_VERB_AFTER = frozenset(
    ("the", "a", "an", "this", "that", "these", "those", "its", "their", "our", "his", "her",
     "my", "your", "of", "in", "on", "for", "with", "to", "from", "at", "into", "per", "by", "as")
)  # fmt: skip
_AUXILIARIES = frozenset(
    ("is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "having", "get",
     "gets", "got", "getting")
)  # fmt: skip
_NOT_FINITE_AFTER = _NOT_A_VERB_AFTER | _AUXILIARIES
# Pasts that are also participles, each with its present in -s.
_IRREGULAR = {
    "led": "leads", "made": "makes", "brought": "brings", "won": "wins", "sold": "sells",
    "held": "holds", "built": "builds", "spent": "spends", "kept": "keeps", "said": "says",
    "found": "finds", "bought": "buys", "paid": "pays", "cut": "cuts", "set": "sets",
    "put": "puts", "sent": "sends", "lost": "loses", "left": "leaves", "met": "meets",
    "told": "tells", "thought": "thinks", "taught": "teaches", "caught": "catches",
    "felt": "feels", "meant": "means", "heard": "hears", "stood": "stands",
}  # fmt: skip


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _finite(words: list[str], i: int) -> bool:
    """True if ``words[i]``, a past form, stands as a finite past tense."""
    before = words[i - 1] if i else ""
    if before.endswith("ly") and i > 1 and words[i - 2] in _AUXILIARIES:
        before = words[i - 2]  # "is famously depicted": an adverb after the auxiliary (not
        # "the supply increased", a noun in -ly)
    after = words[i + 1 : i + 4]
    if after and after[0].endswith("ly"):
        after = after[1:]  # "possessed only by", "used mainly by": the agent after an adverb
    after = after[:2]
    agent = len(after) == 2 and after[0] == "by" and not after[1].isdigit()  # "by 30": a measure
    return before not in _NOT_FINITE_AFTER and not agent


def _present_of(past: str) -> set[str]:
    """The ``-s`` presents whose past may be ``past`` (``slashed`` -> slashes, slashs;
    ``relied`` -> relies; ``stopped`` -> stops; ``led`` -> leads), over-generated: only words
    of the other text are looked up."""
    if past in _IRREGULAR:
        return {_IRREGULAR[past]}
    if len(past) < 5 or not past.endswith("ed"):
        return set()
    stems = {past[:-2], past[:-1]}  # slash-ed, use-d
    if past[-3] == past[-4]:
        stems.add(past[:-3])  # stopp-ed
    out = {stem + "s" for stem in stems} | {stem + "es" for stem in stems}
    if past.endswith("ied"):
        out.add(past[:-3] + "ies")
    return out


def _tenses(text: str) -> tuple[Counter[str], Counter[str]]:
    """``(finite pasts, -s presents that are no nouns)`` of ``text``, lower case."""
    words = _words(text)
    pasts: Counter[str] = Counter()
    presents: Counter[str] = Counter()
    for i, word in enumerate(words):
        if _present_of(word) and _finite(words, i):
            pasts[word] += 1
        elif (
            len(word) > 3
            and word.endswith("s")
            and (i == 0 or words[i - 1] not in _NOT_A_VERB_AFTER)
        ):
            presents[word] += 1
    return pasts, presents


_PASSIVE_PAST = re.compile(r"\b(?:was|were)\s+(?:[A-Za-z]+ly\s+)*([A-Za-z]+ed)\b", re.IGNORECASE)
_PAST_BEFORE = frozenset(("got", "had"))


def passive_pasts(text: str, other: str) -> str:
    """``text`` with each ``was``/``were`` blanked that only turns a past the ``other`` text
    writes into the passive voice: ``Plato was profoundly impacted`` against ``... impacted
    Plato``, ``were slashed`` against ``got slashed``; the tense is the same. A participle the
    other text writes after a present (``are slashed``, ``has impacted``) keeps the ``was``: a
    claim moved in time; one it writes after ``was`` too is the same passive on both sides.
    """
    words = _words(other)
    pasts = {
        w for i, w in enumerate(words)
        if w.endswith("ed") and (_finite(words, i) or (i and words[i - 1] in _PAST_BEFORE))
    }  # fmt: skip
    if not pasts:
        return text

    def blank(m: re.Match[str]) -> str:
        if m.group(1).lower() not in pasts:
            return m.group()
        return " " * (m.start(1) - m.start()) + m.group(1)

    return _PASSIVE_PAST.sub(blank, text)


def _first_pair(pasts: Counter[str], presents: Counter[str]) -> tuple[str, str] | None:
    """The first ``(past, present)`` of one verb among ``pasts`` and ``presents``."""
    for past in sorted(pasts):
        for present in sorted(_present_of(past) & presents.keys()):
            return past, present
    return None


def tense_problem(block: str, reply: str) -> Reason | None:
    """``changed tense "X" -> "Y"`` when the reply lost an ``-s`` present of a verb and gained
    its finite past, or the other way round; ``None`` otherwise. Both are normalised prose
    (``meaning``)."""
    (b_past, b_present), (r_past, r_present) = _tenses(block), _tenses(reply)
    if pair := _first_pair(r_past - b_past, b_present - r_present):
        return Reason("changed tense", f'"{pair[1]}" -> "{pair[0]}"')
    if pair := _first_pair(b_past - r_past, r_present - b_present):
        return Reason("changed tense", f'"{pair[0]}" -> "{pair[1]}"')
    return None
