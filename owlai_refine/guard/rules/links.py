"""The link rule: each link keeps its text with its destination.

Pure code. The token check keeps the multiset of link destinations and the anchors check keeps
each near the words of its sentence; neither sees two links whose texts were swapped with the
destinations left in place (``[SaffireTech](https://developer.woocommerce.com/...)``). Here
each destination that stands once in block and reply keeps a text that shares a word with its
own text rather than with another link's: ``swapped link texts "A" <-> "B"``.
"""

from __future__ import annotations

import re

from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = ["label_reasons", "link_reasons"]

_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_WORD = re.compile(r"\w+")


def _links(text: str) -> dict[str, str]:
    """Destination -> text, for the destinations that stand once in ``text``."""
    seen: dict[str, list[str]] = {}
    for m in _LINK.finditer(text):
        seen.setdefault(m.group("url"), []).append(m.group("text"))
    return {url: texts[0] for url, texts in seen.items() if len(texts) == 1}


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def link_reasons(pair: Pair) -> list[Reason]:
    """``swapped link texts "A" <-> "B"`` for the first destination whose reply text is
    another link's text of the block (see the module docstring)."""
    old, new = _links(pair.block), _links(pair.reply)
    for url, text in old.items():
        reply_text = new.get(url)
        if reply_text is None or reply_text == text:
            continue
        mine, theirs = _words(text), _words(reply_text)
        for other_url, other_text in old.items():
            if other_url == url:
                continue
            other = _words(other_text)
            if len(theirs & other) > len(theirs & mine):
                return [Reason("swapped link texts", f'"{text}" <-> "{other_text}"')]
    return []


_LABELLED = re.compile(
    r"(?P<name>[@\w][\w.\-/]*)\s*[(\uff08](?P<label>[^()\uff08\uff09]{1,40})[)\uff09]"
)


def _labels(text: str) -> dict[str, str]:
    """Word -> the parenthesised label right after it (``@khionu(중재)``, ``相对奖励 (MHGPO)``),
    for the words that carry one label."""
    seen: dict[str, list[str]] = {}
    for m in _LABELLED.finditer(text):
        seen.setdefault(m.group("name")[-12:], []).append(" ".join(m.group("label").split()))
    return {name: labels[0] for name, labels in seen.items() if len(labels) == 1}


_ENUMERATOR = re.compile(r"(?<![\w(])\((?:[ivx]{1,4}|[a-h]|\d{1,2})\)(?!\w)")
"""An option's or a step's label in prose: ``(i)``, ``(ii)``, ``(b)``, ``(2)``."""


def _enumerator_swap(pair: Pair) -> list[Reason]:
    """``swapped labels "(i)" <-> "(ii)"`` when the reply says the block's option labels, each
    as often, in another order: the argument against (i) is now the one against (ii)."""
    old, new = _ENUMERATOR.findall(pair.block), _ENUMERATOR.findall(pair.reply)
    if len(set(old)) < 2 or sorted(old) != sorted(new) or old == new:
        return []
    first = next(i for i, (x, y) in enumerate(zip(old, new, strict=True)) if x != y)
    return [Reason("swapped labels", f'"{old[first]}" <-> "{new[first]}"')]


def label_reasons(pair: Pair) -> list[Reason]:
    """``swapped labels "A" <-> "B"`` when a word's parenthesised label in the reply is the one
    another word had in the block (two people's roles or two methods' names swapped), or when
    the reply says the block's option labels (``(i)``, ``(ii)``) in another order."""
    swapped = _enumerator_swap(pair)
    if swapped:
        return swapped
    old, new = _labels(pair.block), _labels(pair.reply)
    owners = {label: name for name, label in old.items()}
    for name, label in old.items():
        other = new.get(name)
        if other is None or other == label:
            continue
        if owners.get(other, name) != name and new.get(owners[other]) == label:
            return [Reason("swapped labels", f'"{label}" <-> "{other}"')]
    return []
