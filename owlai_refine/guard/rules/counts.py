"""Counts of a list: a Chinese number word that says how many items the list before it has.

Pure code, over the reply's analysed tokens (jieba's). A rewording often makes a list's count
explicit: ``跨越经典和量子维度`` -> ``跨越经典与量子两个维度``, ``分为L1、L2、L3、L4`` -> ``分为L1、
L2、L3和L4四个级别``. The word tables read any number word the block lacks as a count changed;
one whose value is the number of items of the enumeration right before it says nothing new.
A count that is not the list's (``经典与量子三个维度``) still is a change.
"""

from __future__ import annotations

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.normalise import numeral_value
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.rules.order import COORDINATORS

__all__ = ["counts_a_list", "list_before"]

_JOINS = COORDINATORS | {"\u3001"}
"""The ideographic comma and the conjunctions that join a list's items (the order rules')."""
_CLAUSE_END = frozenset({",", ";", ":", ".", "!", "?", "\u3002", "\uff0c", "\uff1b", "\uff1a"})
_BOUNDARY = frozenset({"ADP", "ADV", "PRON", "PART", "AUX"})
"""Parts of speech that stand before a list, not in it (在, 其, 均, 的)."""


def list_before(tokens: tuple[Token, ...], i: int) -> int:
    """How many items the enumeration that ends right before ``tokens[i]`` has (1 if there is
    none): items joined by :data:`_JOINS`, read back to a clause's end, a preposition, a
    pronoun or an adverb, or a verb that is no item (no join next to it; the word right
    before ``tokens[i]`` is the last item whatever its tag: 性能与计算开销两方面, jieba's 开销
    a verb); what stands in parentheses is part of its item."""
    items, depth = 1, 0
    for k in range(i - 1, -1, -1):
        t = tokens[k]
        if t.text in (")", "\uff09"):
            depth += 1
            continue
        if t.text in ("(", "\uff08"):
            depth = max(depth - 1, 0)
            continue
        if depth:
            continue
        if t.text in _CLAUSE_END or (t.pos in _BOUNDARY and t.text not in _JOINS):
            break
        if t.text in _JOINS:
            items += 1
            continue
        if t.pos == "VERB" and k < i - 1:
            before = tokens[k - 1].text if k > 0 else ""
            after = tokens[k + 1].text if k + 1 < len(tokens) else ""
            if before not in _JOINS and after not in _JOINS:
                break
    return items


def counts_a_list(pair: Pair, form: str) -> bool:
    """True if every place the Chinese reply writes the number word ``form`` (``两个``,
    ``四个``) comes right after an enumeration of that many items (:func:`list_before`)."""
    value = numeral_value(form[:1])
    if pair.label != "zh" or value is None or value < 2:
        return False
    tokens = pair.new.tokens
    places = [i for i, t in enumerate(tokens) if t.text.startswith(form[:1]) and form in
              pair.reply_prose[t.start : t.start + len(form)]]  # fmt: skip
    return bool(places) and all(list_before(tokens, i) == value for i in places)
