"""Block and reply aligned into edits, each edit classified (the model is ERRANT, the
grammatical-error annotation toolkit: align, merge, classify).

Pure code. :func:`align` takes the two :class:`~owlai_refine.guard.analysis.Analysis` of a pair
and returns its :class:`Edit` list: the runs of words where the two differ (``difflib``'s
longest-matching-block alignment over lemmas, punctuation left out), each with the words around
it and its :class:`EditClass`:

- ``inflection``: the same lemmas in other forms (``was`` -> ``were``);
- ``function``: only function words changed (articles, particles, prepositions);
- ``reorder``: the edit's words stand elsewhere on the other side (moved, not changed);
- ``synonym`` / ``derivation``: one content word for another that the language's resource calls
  a synonym or a derived form (WordNet for English);
- ``antonym``: one content word for its opposite;
- ``kin``: one noun for another thing of the same specific kind (WordNet: ``geometry`` ->
  ``arithmetic``, ``memory`` -> ``disk``; ``guard.analysis.wordnet.kin``);
- ``content``: content words replaced, added or dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from difflib import SequenceMatcher
from enum import StrEnum

from owlai_refine.guard.analysis import Analysis, Token, wordnet

__all__ = ["Edit", "EditClass", "align", "related", "restated"]


class EditClass(StrEnum):
    """What one edit changed (see the module docstring)."""

    INFLECTION = "inflection"
    FUNCTION = "function"
    REORDER = "reorder"
    SYNONYM = "synonym"
    DERIVATION = "derivation"
    ANTONYM = "antonym"
    KIN = "kin"
    CONTENT = "content"


@dataclass(frozen=True, slots=True)
class Edit:
    """One run of words where block and reply differ.

    ``old``/``new``: the block's and the reply's words of the run (either may be empty: an
    insertion or a deletion); ``at_old``/``at_new``: the index of the run's first word in each
    text's :attr:`Analysis.words`; ``before``/``after``: the lemma of the word just before and
    just after the run (``""`` at an end), the same on both sides by construction; ``cls``.
    """

    old: tuple[Token, ...]
    new: tuple[Token, ...]
    at_old: int
    at_new: int
    before: str
    after: str
    cls: EditClass

    @property
    def old_content(self) -> tuple[Token, ...]:
        """The block's content words in the run."""
        return tuple(t for t in self.old if t.content)

    @property
    def new_content(self) -> tuple[Token, ...]:
        """The reply's content words in the run."""
        return tuple(t for t in self.new if t.content)


def _key(token: Token) -> str:
    return token.lemma.lower()


def related(a: Token, b: Token, language: str) -> str | None:
    """How two content words relate: ``"inflection"`` (same lemma), ``"derivation"`` (WordNet,
    or one Latin lemma the other's prefix of five letters or more), ``"synonym"``,
    ``"antonym"`` (WordNet, English words), or ``None``."""
    ka, kb = _key(a), _key(b)
    if ka == kb:
        return "inflection"
    if ka.isascii() and kb.isascii() and ka.isalpha() and kb.isalpha():
        found = wordnet.relation(ka, kb)
        if found:
            return found
        stem = min(len(ka), len(kb), 5)
        if stem >= 5 and ka[:stem] == kb[:stem]:
            return "derivation"
    del language
    return None


def restated(word: Token, mine: Analysis, theirs: Analysis) -> bool:
    """True if ``word`` (a token of ``mine``) says again a content word that only ``theirs``
    has, as a WordNet synonym or derivation of it (``need`` for ``require``, ``earlier`` for
    ``previous``): a rewording, neither a word lost nor a word added. English words only (the
    other languages have no synonym resource offline)."""
    shared = {_key(t) for t in mine.words}
    others = [t for t in theirs.words if t.content and _key(t) not in shared]
    return any(related(word, t, mine.language) in ("synonym", "derivation") for t in others)


def _classify(old: tuple[Token, ...], new: tuple[Token, ...], moved: Counter[str],
              language: str) -> EditClass:  # fmt: skip
    if sorted(map(_key, old)) == sorted(map(_key, new)):
        return EditClass.INFLECTION if old != new else EditClass.REORDER
    old_c = [t for t in old if t.content]
    new_c = [t for t in new if t.content]
    if len(old) == len(new) == 1 and related(old[0], new[0], language) == "antonym":
        return EditClass.ANTONYM  # whatever the tagger called them (Unlike ADJ -> Like ADP)
    if not old_c and not new_c:
        return EditClass.FUNCTION
    if all(moved[_key(t)] > 0 for t in (*old_c, *new_c)):
        return EditClass.REORDER
    return _word_class(old_c, new_c, language)


def _word_class(old_c: list[Token], new_c: list[Token], language: str) -> EditClass:
    """The class of an edit of content words: one for one, how the two relate; else
    ``content``."""
    if len(old_c) != 1 or len(new_c) != 1:
        return EditClass.CONTENT
    rel = related(old_c[0], new_c[0], language)
    if rel:
        return EditClass(rel)
    return EditClass.KIN if _kin(old_c[0], new_c[0]) else EditClass.CONTENT


def _kin(a: Token, b: Token) -> bool:
    """Two English nouns, another thing of the same kind (:func:`wordnet.kin`)."""
    return (
        a.pos == b.pos == "NOUN"
        and _key(a).isascii()
        and _key(b).isascii()
        and wordnet.kin(_key(a), _key(b))
    )


def align(block: Analysis, reply: Analysis) -> list[Edit]:
    """The edits that turn ``block``'s words into ``reply``'s (see the module docstring), in
    block order. Two equal texts give ``[]``."""
    a, b = block.words, reply.words
    matcher = SequenceMatcher(None, [_key(t) for t in a], [_key(t) for t in b], autojunk=False)
    runs = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    # a word dropped in one run and added in another was moved, not changed
    gone: Counter[str] = Counter()
    added: Counter[str] = Counter()
    for _, i1, i2, j1, j2 in runs:
        gone.update(_key(t) for t in a[i1:i2])
        added.update(_key(t) for t in b[j1:j2])
    moved = gone & added
    edits: list[Edit] = []
    for _, i1, i2, j1, j2 in runs:
        old, new = a[i1:i2], b[j1:j2]
        before = _key(a[i1 - 1]) if i1 else ""
        after = _key(a[i2]) if i2 < len(a) else ""
        edits.append(
            Edit(old, new, i1, j1, before, after, _classify(old, new, moved, block.language))
        )
    return edits
