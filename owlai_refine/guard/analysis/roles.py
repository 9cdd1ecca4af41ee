"""Roles of tokens, from ``roles.toml``: a word's role (``intensifier``, ``past``, ...) decided
with its part of speech, so that a word that plays the role only in some uses is tagged only
there; a role may also be a sequence of lemmas (``て+居る``), tagged on its first token."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from owlai_refine.guard.analysis.tokens import Token

__all__ = ["ROLE_FAMILIES", "policy", "tag_roles"]

ROLE_FAMILIES = {
    "intensifier": "degree", "diminisher": "degree", "approximator": "degree",
    "focus": "degree", "completeness": "degree", "totality": "degree", "past": "tense",
    "progressive": "tense", "future": "tense", "perfect": "tense", "comparative": "comparison",
    "equality": "comparison", "negator": "negation", "numeral": "count",
    "contrast": "negation", "frequency": "degree", "source": "attribution", "onset": "aspect",
    "completion": "aspect", "recipient": "direction", "giver": "direction",
}  # fmt: skip
"""Each role's family: the group of the reason a change of it gives (``changed degree``)."""

Element = tuple[frozenset[str], frozenset[str]]
"""(its lemmas, one of which the token must have (``widely+regard|consider``), or ``*`` for any;
the parts of speech it must have, empty for any)."""
Entry = tuple[str, tuple[Element, ...]]
"""(role, the elements after the first)."""


def _element(text: str) -> Element:
    lemma, _, pos = text.partition("/")
    return frozenset(lemma.split("|")), frozenset(pos.split("|")) if pos else frozenset()


def _matches(token: Token, element: Element) -> bool:
    lemmas, pos = element
    return ("*" in lemmas or token.lemma.lower() in lemmas) and (not pos or token.pos in pos)


@cache
def _raw() -> dict[str, Any]:
    return tomllib.loads(resources.files(__package__).joinpath("roles.toml").read_text("utf-8"))


@cache
def policy(language: str) -> dict[str, str]:
    """Role -> what counts as its change in ``language`` (``"count"``, ``"presence"``,
    ``"lost"``, ``"fewer"``, ``"shift"`` or ``"trade"``; see ``roles.toml``): the shared
    ``[policy]`` with the language's own over it."""
    raw = _raw()
    out = {role: "count" for role in ROLE_FAMILIES}
    out.update(raw.get("policy", {}))
    out.update(raw.get(language, {}).get("policy", {}))
    return out


@cache
def _table(language: str) -> dict[str, list[tuple[str, tuple[Element, ...]]]]:
    """First lemma -> (role, all its elements) for the entries of ``language`` starting with it."""
    out: dict[str, list[tuple[str, tuple[Element, ...]]]] = {}
    for role, entries in _raw().get(language, {}).items():
        if role in ("policy", "prefixes"):
            continue
        for entry in entries:
            elements = tuple(_element(e) for e in entry.split("+"))
            for first in elements[0][0]:
                out.setdefault(first, []).append((role, elements))
    return out


_COUNTED_BY = {"ko": frozenset({"NNB"}), "ja": frozenset({"名詞-普通名詞", "接尾辞-名詞的"})}
_ARTICLE_LIKE = ("\u4e00",)  # 一: 一个, 一种 read as an article, a rewording adds or drops


def _numeral(tokens: list[Token], i: int, language: str) -> bool:
    """True for a count written in words: a ``NUM`` that is not digits, before a counter in
    Korean and Japanese (두 명, 三つ; not 일 "work"), not Chinese 一个 (an article, mostly)."""
    t = tokens[i]
    if t.pos != "NUM" or any(c.isdigit() for c in t.text) or language == "en":
        return False
    if language == "zh":
        return not t.text.startswith(_ARTICLE_LIKE)
    counters = _COUNTED_BY.get(language)
    if counters is None:
        return True
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    if nxt is None or not (nxt.tag in counters or nxt.tag.startswith("接尾辞")):
        return False
    return t.text != "\ud55c" or nxt.text == "\uba85"  # 한: "a", but 한 명 is one person


@cache
def _prefixes(language: str) -> frozenset[str]:
    return frozenset(_raw().get(language, {}).get("prefixes", ()))


def _prefix_roles(word: str, table: dict[str, list[tuple[str, tuple[Element, ...]]]]) -> set[str]:
    """The roles of a word jieba kept whole with a role word at its start (明显降低, 更快)."""
    for head in (word[:2], word[:1]):
        if head == word or (len(head) == 1 and head not in _prefixes("zh")):
            continue
        found = {role for role, elements in table.get(head, ()) if len(elements) == 1}
        if found:
            return found
    return set()


def tag_roles(tokens: list[Token], language: str) -> list[Token]:
    """``tokens`` with their :attr:`Token.roles` set from ``language``'s table; a numeral
    written in words (a ``NUM`` that is not digits: 두, 三, 二つ) gets the role ``numeral``."""
    table = _table(language)
    out = list(tokens)
    for i, t in enumerate(tokens):
        roles: set[str] = set()
        if _numeral(tokens, i, language):
            roles.add("numeral")
        for role, elements in table.get(t.lemma.lower(), ()):
            if i + len(elements) <= len(tokens) and all(
                _matches(tokens[i + k], element) for k, element in enumerate(elements)
            ):
                roles.add(role)
        if not roles and language == "zh" and len(t.text) >= 2 and not t.punct:
            roles |= _prefix_roles(t.text, table)
        if roles:
            out[i] = Token(t.text, t.lemma, t.pos, t.tag, t.start, t.roles | frozenset(roles))
    return out
