"""The claim rule: what a sentence says of its subject kept.

Pure code, over the pair's analysed words. A predicate adjective (``the results were
*good*``, after a form of *be*, *become*, *remain* or *seem*, an adverb allowed between) is a
claim; a reply that keeps none of its forms, no word WordNet relates to it (``good`` ->
``fine``) and puts no other adjective, adverb or verb in its place (``is dynamic`` -> ``is
fluid``, ``is evident`` -> ``shows clearly``: reworded) has dropped the claim, however fluent
the rest: ``lost claim "good"``. The
README's own example: "The results was good and the team were happy [1]." -> "The team was
happy with the results [1]." English only (the analysers of the other languages do not tell a
predicate from an attribute).
"""

from __future__ import annotations

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.edits import related
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["claim_reasons"]

_LINKING = frozenset({"be", "become", "remain", "seem", "appear", "stay", "prove", "look"})


def _predicates(words: tuple[Token, ...]) -> list[Token]:
    out: list[Token] = []
    for i, t in enumerate(words):
        if t.lemma not in _LINKING:
            continue
        for nxt in words[i + 1 : i + 3]:
            if nxt.pos == "ADJ" and not nxt.text.lower().endswith("ed") and nxt.tag != "JJR":
                # not a participle, not a comparison (the role rule's)
                out.append(nxt)
                break
            if nxt.pos not in ("ADV", "PART"):
                break
    return out


def claim_reasons(pair: Pair) -> list[Reason]:
    """``lost claim "good"`` for each predicate adjective of the block that the reply no longer
    says in any form (see the module docstring)."""
    if pair.old.language != "en":
        return []
    reply = [t for t in pair.new.words if t.content]
    keys = {t.lemma.lower() for t in reply}
    reworded = {
        id(t)
        for e in pair.edits
        if any(n.pos in ("ADJ", "ADV", "VERB") for n in e.new_content)
        for t in e.old
    }  # a word the reply replaced with another adjective, adverb or verb: reworded
    reasons: list[Reason] = []
    for adjective in _predicates(pair.old.words):
        if id(adjective) in reworded:
            continue
        if any(adjective.lemma.lower() in key for key in keys):
            continue  # said again, or inside a derived word ("not valid" -> "invalid")
        if any(related(adjective, t, "en") in ("synonym", "derivation") for t in reply):
            continue
        reasons.append(Reason("lost claim", f'"{adjective.text}"'))
    return reasons
