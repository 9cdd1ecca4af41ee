"""The traded-predicates rule: two parallel clauses whose subjects traded what they say.

Pure code, over the pair's analysed tokens. A sentence of parallel clauses, split at commas
and ideographic commas (``左侧展示构建过程、右侧说明RL策略``), gives each clause a subject (its
first noun) and a predicate (its other content words). The
reply's clauses are found by their subjects; when the clause of the block's first subject now
holds more of the second's own predicate words than of its own, and the second's more of the
first's, the two traded roles with every name kept: ``swapped words predicates of "左侧" <->
"右侧"``. Clauses reordered whole keep their predicates and are not judged. Chinese only:
on the other languages the same reading caught one bad row and refused one good (a Korean
clause whose first noun is no subject).
"""

from __future__ import annotations

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.rules.order import sentences, word_key

__all__ = ["predicate_reasons"]

_SPLIT = frozenset({",", "\uff0c", "\u3001", ";", "\uff1b"})
_SUBJECT = frozenset({"NOUN", "PROPN"})


def _clauses(tokens: tuple[Token, ...]) -> list[list[tuple[str, frozenset[str]]]]:
    """Per sentence, its clauses as ``(subject key, predicate keys)``."""
    out: list[list[tuple[str, frozenset[str]]]] = []
    for sentence in sentences(tokens):
        clauses: list[tuple[str, frozenset[str]]] = []
        part: list[Token] = []
        for t in [*sentence, None]:
            if t is not None and not (t.punct and t.text in _SPLIT) and not t.punct:
                part.append(t)
                continue
            if t is not None and t.punct and t.text not in _SPLIT:
                continue  # other punctuation inside a clause
            subject = next((x for x in part if x.pos in _SUBJECT), None)
            if subject is not None:
                rest = frozenset(word_key(x) for x in part if x.content and x is not subject)
                clauses.append((word_key(subject), rest))
            part = []
        out.append(clauses)
    return out


def predicate_reasons(pair: Pair) -> list[Reason]:
    """``swapped words predicates of "A" <-> "B"`` for the first two parallel clauses whose
    subjects traded predicates (see the module docstring); empty if none did, and for other
    languages than Chinese."""
    if pair.old.language != "zh":
        return []
    new = {s: p for sentence in _clauses(pair.new.tokens) for s, p in reversed(sentence)}
    for sentence in _clauses(pair.old.tokens):
        for i, (a, pa) in enumerate(sentence):
            for b, pb in sentence[i + 1 :]:
                if a == b or a not in new or b not in new:
                    continue
                own_a, own_b = pa - pb - {b}, pb - pa - {a}
                na, nb = new[a], new[b]
                if len(na & own_b) > len(na & own_a) and len(nb & own_a) > len(nb & own_b):
                    return [Reason("swapped words", f'predicates of "{a}" <-> "{b}"')]
    return []
