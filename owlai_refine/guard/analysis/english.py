"""The English analyser: a regular-expression tokenizer, closed-class lists (``en.toml``) and
lemminflect (lemmas and inflections of English words, from its own tables) for the open classes.

``The results was good`` -> ``The/DET the``, ``results/NOUN result NNS``, ``was/AUX be VBD``,
``good/ADJ good JJ``. The part of speech of an open-class word is the first of lemminflect's
candidates that its context allows (a word after a determiner or adjective is a noun if it can
be one; after ``to``, a modal, ``not`` or an auxiliary, an adverb between or not: ``have
successfully completed``, a verb if it can be one); a capitalised word inside a
sentence is a proper noun (``Google``, which lemminflect also knows as a verb), its lemma the
noun's where lemminflect has one (``Fireworks``: ``firework``, as the same word gets opening a
sentence).
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

from owlai_refine.guard.analysis.tokens import Analyser, Token

__all__ = ["WORD", "analyser", "closed_class"]

WORD = re.compile(
    r"\d+(?:[.,:]\d+)*(?![^\W_])"  # a number (1,000.5; 10:30)
    r"|[^\W\d_]+(?=-[^\W\d_])"  # a word before a hyphen and a word: its own token
    r"|[^\W_]+(?:['\u2019.][^\W_]+|-\d[^\W_]*)*"  # a word, a name (N4P, RTX-5090, Together.ai)
    r"|\S"  # anything else: one character
)
"""One token of a Latin-script text."""
_BASE = {"VERB": "VB", "AUX": "VB", "NOUN": "NN", "ADJ": "JJ", "ADV": "RB"}
_VERB_AFTER = frozenset({"to", "not", "will", "would", "can", "could", "may", "might", "should",
                         "must"})  # fmt: skip
_MODALS = frozenset({"can", "could", "will", "would", "shall", "should", "may", "might", "must"})
_RELATIVES = frozenset({"that", "which"})
_PUNCT = frozenset(".,;:!?()[]{}\"'-\u2013\u2014\u2026/")
_SENTENCE_END = frozenset(".!?:;")


@lru_cache(maxsize=1)
def closed_class() -> dict[str, str]:
    """Word (lower case) -> part of speech, from ``en.toml`` (the first class listed wins)."""
    data = tomllib.loads(resources.files(__package__).joinpath("en.toml").read_text("utf-8"))
    out: dict[str, str] = {}
    for pos, words in data.items():
        for word in words:
            out.setdefault(word, pos)
    return out


def _order(low: str, found: dict[str, tuple[str, ...]], prev: Token | None, before2: str,
           next_is_noun: bool, *, relative: bool = False) -> list[str]:  # fmt: skip
    """The parts of speech to try for an open-class word, most likely first, by its context
    (``relative``: the word follows a relative pronoun, ``solutions that address``)."""
    before, lemma = (prev.pos, prev.lemma) if prev else ("", "")
    rules = (
        (relative and "VERB" in found, ("VERB", "NOUN", "ADJ", "ADV")),
        (low.endswith("ly") and "ADV" in found, ("ADV", "ADJ", "VERB", "NOUN")),
        (
            before in ("DET", "ADJ", "NUM") or lemma in ("of", "for", "with"),
            ("ADJ", "NOUN") if next_is_noun else ("NOUN", "ADJ"),
        ),
        (lemma == "be", ("ADJ", "VERB", "NOUN", "ADV")),
        (
            lemma in ("to", "not")
            or before == "AUX"
            or (before in ("ADV", "ADJ") and (before2 in _VERB_AFTER or before2 == "have")),
            ("VERB", "ADJ", "NOUN", "ADV"),
        ),
        (before == "VERB", ("NOUN", "ADJ", "ADV", "VERB")),
        (before in ("NOUN", "PROPN", "PRON"), ("VERB", "NOUN", "ADJ", "ADV")),
    )
    return next((list(order) for when, order in rules if when), ["NOUN", "ADJ", "VERB", "ADV"])


class _English:
    """The analyser's state: lemminflect and the closed-class lists, with per-word caches."""

    def __init__(self) -> None:
        import lemminflect

        self._lemminflect = lemminflect
        self.closed = closed_class()
        self.lemmas = lru_cache(maxsize=65536)(self._lemmas)
        self.penn = lru_cache(maxsize=65536)(self._penn)

    def _lemmas(self, word: str) -> dict[str, tuple[str, ...]]:
        return dict(self._lemminflect.getAllLemmas(word))

    def _penn(self, word: str, lemma: str, pos: str) -> str:
        """The Penn tag of ``word`` as an inflection of ``lemma`` (``VBD``, ``NNS``, ``JJR``;
        the base tag when ``word`` is the lemma; ``""`` when lemminflect does not know it)."""
        if word == lemma:
            return _BASE.get(pos, "")
        inflections: dict[str, tuple[str, ...]] = self._lemminflect.getAllInflections(
            lemma, upos=pos
        )
        for tag, forms in inflections.items():
            if word in forms and tag not in ("VB", "VBP", "NN", "JJ", "RB"):
                return str(tag)
        return ""

    def word(self, word: str, start: int, tokens: list[Token], nxt: str, first: bool) -> Token:
        """The token of one word, after ``tokens`` and before the word ``nxt``."""
        low = word.lower().replace("\u2019", "'")
        prev = tokens[-1] if tokens and not tokens[-1].punct else None
        closed, found = self.closed, self.lemmas(low)
        if low[0].isdigit():
            return Token(word, low, "NUM", "CD", start)
        if low in closed and not (closed[low] == "PRON" and prev and prev.pos == "DET"):
            pos = closed[low]
            if pos != "AUX":
                return Token(word, low, pos, "", start)
            lemma = low if low in _MODALS else found.get("AUX", (low,))[0]  # was -> be
            return Token(word, lemma, pos, self.penn(low, lemma, "AUX"), start)
        if not found or (word[:1].isupper() and not first):
            proper = (word[:1].isupper() and not first) or (word.isupper() and len(word) > 1)
            # the noun's lemma where there is one, as the same word opening a sentence gets it
            # (Fireworks / firework)
            lemma = found["NOUN"][0].lower() if "NOUN" in found else low
            return Token(word, lemma, "PROPN" if proper else "NOUN", "NNP" if proper else "", start)
        next_is_noun = bool(nxt) and nxt not in closed and "NOUN" in self.lemmas(nxt)
        before2 = tokens[-2].lemma if len(tokens) > 1 else ""
        # "solutions that address both": after a noun, "that" or "which" opens a relative
        # clause, and a word that can be a verb is its verb, not a noun ("that address")
        relative = (
            prev is not None
            and prev.lemma in _RELATIVES
            and len(tokens) > 1
            and tokens[-2].pos in ("NOUN", "PROPN")
        )
        for pos in (*_order(low, found, prev, before2, next_is_noun, relative=relative), *found):
            if pos in found:
                lemma = found[pos][0]
                return Token(word, lemma, pos, self.penn(low, lemma, pos), start)
        return Token(word, low, "NOUN", "", start)  # pragma: no cover - found is not empty

    def __call__(self, text: str) -> list[Token]:
        matches = [(m.group(), m.start()) for m in WORD.finditer(text)]
        tokens: list[Token] = []
        first = True
        for i, (word, start) in enumerate(matches):
            if not word[0].isalnum():
                tokens.append(Token(word, word, "PUNCT" if word in _PUNCT else "SYM", "", start))
                first = first or word in _SENTENCE_END
                continue
            nxt = matches[i + 1][0].lower() if i + 1 < len(matches) else ""
            if nxt == "-" and word.isalpha():  # the first part of a compound: bit-flip
                low = word.lower()
                found = self.lemmas(low)
                if low.endswith("ly") and "ADV" in found:  # moderately-complex: an adverb
                    tokens.append(Token(word, found["ADV"][0], "ADV", "RB", start))
                    first = False
                    continue
                pos = "NOUN" if "NOUN" in found or not found else "ADJ"
                tokens.append(Token(word, low, pos, "", start))
                first = False
                continue
            tokens.append(self.word(word, start, tokens, nxt, first))
            first = False
        return tokens


def analyser() -> Analyser:
    """The English tokenising function (lemminflect's tables read now)."""
    return _English()
