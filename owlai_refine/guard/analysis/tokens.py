"""The values of an analysis: :class:`Token` and :class:`Analysis`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CONTENT", "Analyser", "Analysis", "Token"]

CONTENT = frozenset({"NOUN", "PROPN", "VERB", "ADJ", "ADV", "NUM"})
"""The parts of speech that carry content: a replaced, added or dropped one is a content edit."""


@dataclass(frozen=True, slots=True)
class Token:
    """One token of an analysed text.

    ``text``: the surface form as written (after the guard's normalisation); ``lemma``: its
    dictionary form, lower-cased for Latin words (the key tokens are aligned on); ``pos``: the
    Universal Dependencies part of speech; ``tag``: the analyser's own tag (Penn ``VBD``, Kiwi
    ``EP``, UniDic ``助動詞``, jieba ``ul``); ``start``: its offset in the analysed text, in
    characters; ``roles``: the roles of ``roles.toml`` it plays (``negator``, ``degree``,
    ``past``, ...), decided with its part of speech.
    """

    text: str
    lemma: str
    pos: str
    tag: str = ""
    start: int = 0
    roles: frozenset[str] = frozenset()

    @property
    def content(self) -> bool:
        """True for a content word (see :data:`CONTENT`) that plays no grammatical role."""
        return self.pos in CONTENT and "function" not in self.roles

    @property
    def punct(self) -> bool:
        """True for punctuation and symbols."""
        return self.pos in ("PUNCT", "SYM")


@dataclass(frozen=True, slots=True)
class Analysis:
    """A text analysed once: its ``language`` label and its ``tokens`` in order."""

    language: str
    tokens: tuple[Token, ...]
    words: tuple[Token, ...] = field(default=())
    """The tokens that are not punctuation, in order (what the alignment reads)."""

    @classmethod
    def of(cls, language: str, tokens: list[Token]) -> Analysis:
        """An analysis of ``tokens`` (their :attr:`words` derived)."""
        return cls(language, tuple(tokens), tuple(t for t in tokens if not t.punct))


Analyser = Callable[[str], list[Token]]
"""A language's tokenising function: text -> its tokens, in order."""
