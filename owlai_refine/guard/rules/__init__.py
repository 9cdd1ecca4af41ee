"""The guard's rules, in order: each a small function over one shared analysis of the pair
(:class:`~owlai_refine.guard.pair.Pair`) returning structured reasons.

A :class:`Rule` has a name, a function ``(pair, config) -> reasons`` and a gate: ``always``;
``paragraph`` (only when the reply is shaped like the block: a single paragraph's checks);
``language`` (only when the reply kept the block's language: words can only be compared within
one); ``meaning`` (both). Adding a check is adding one entry to :data:`RULES`.

=========================  =========  ==========================================================
rule                       gate       refuses
=========================  =========  ==========================================================
``structure``              always     a heading, list, fence, table, blank line ... the block lacks
``repetition``             always     a phrase or sentence looping
``length``                 always     a reply far shorter or longer than the block
``cut_off``                paragraph  a reply that stops mid-word where the block ended a sentence
``language``               always     another language
``content``                language   a sentence, a quarter of the words, new matter
``tokens``                 always     a citation, footnote, link, URL, code, math, HTML, emphasis,
                                      number or name changed, lost or added
``tables``                 meaning    the word tables (negators, hedges, opposites, dates, number
                                      words), numbers in context, names, clauses, markers in place,
                                      tense, spelling, endings and quotes (``guard.meaning``)
``roles``                  meaning    a degree, tense, aspect, comparison, contrast, source or
                                      direction word added or dropped (Korean 에게 -> 으로부터)
``swapped_words``          meaning    two words that traded places
``traded_predicates``      meaning    two parallel clauses' subjects that traded predicates
                                      (Chinese)
``sides``                  meaning    a word that crossed a comparison's sides (``than``,
                                      ``compared with``, 比, 相较于, 与…相比, より, 보다) or a
                                      sequence's (``after``, 之后, 後, 후)
``lost_list_element``      meaning    an item of an enumeration dropped
``added_list_element``     meaning    an item added to an enumeration or to a pair (収集・検証),
                                      in words all new
``moved_negation``         meaning    a negation moved to another word
``links``                  meaning    two link texts or two parenthesised labels swapped, or
                                      option labels said in another order (``(i)``, ``(ii)``)
``antonyms``               meaning    a word replaced by its opposite, or a noun by another
                                      thing of its kind (``geometry`` -> ``arithmetic``)
``modifiers``              meaning    the noun before a kept noun replaced (another thing of
                                      that kind: 중심팀 -> 중재팀)
``named_elsewhere``        meaning    a noun replaced by another thing the block names (a claim
                                      moved: 중재팀 -> 심의회)
``lost_subject``           meaning    a Korean or Japanese topic or subject noun written nowhere
                                      while the verb it governed stays (an act handed to
                                      another: 심의회 위원은 감사를 시작할 수 -> 감사를 시작할 수도)
``claims``                 meaning    a predicate adjective dropped (English)
``qualifiers``             meaning    an attribute dropped with its 的 (Chinese)
``quotations``             meaning    a phrase in quotation marks said in other words
``added_clause``           meaning    a run of three or more content words all new inserted (a
                                      result, a cause, an evaluation the block does not claim)
=========================  =========  ==========================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from owlai_refine.config import GuardConfig
from owlai_refine.guard.content import added_words, lost_sentences, lost_words
from owlai_refine.guard.cutoff import cut_off, length_problem
from owlai_refine.guard.edits import restated
from owlai_refine.guard.language import language_label, language_problem
from owlai_refine.guard.meaning import meaning_problems, morpheme_index
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.repetition import repetition_problem
from owlai_refine.guard.rules.added import added_clause_reasons, confirmed
from owlai_refine.guard.rules.claims import claim_reasons
from owlai_refine.guard.rules.counts import counts_a_list
from owlai_refine.guard.rules.links import label_reasons, link_reasons
from owlai_refine.guard.rules.negation import negation_reasons
from owlai_refine.guard.rules.order import added_list_reasons, list_reasons, swap_reasons
from owlai_refine.guard.rules.predicates import predicate_reasons
from owlai_refine.guard.rules.qualifiers import qualifier_reasons
from owlai_refine.guard.rules.quotes import quotation_reasons
from owlai_refine.guard.rules.roles import role_reasons
from owlai_refine.guard.rules.sides import sides_reasons
from owlai_refine.guard.rules.subjects import lost_subject_reasons
from owlai_refine.guard.rules.words import (
    antonym_reasons,
    modifier_reasons,
    named_elsewhere_reasons,
)
from owlai_refine.guard.structure import structure_problems
from owlai_refine.guard.tokens import compare_tokens, protected_tokens

__all__ = ["RULES", "Gate", "Rule", "run_rules"]

Gate = Literal["always", "paragraph", "language", "meaning"]
Check = Callable[[Pair, GuardConfig], Iterable[Reason]]


@dataclass(frozen=True, slots=True)
class Rule:
    """One check: its ``name``, its function and its :data:`Gate`; ``unless``: a reason group
    that, already given by an earlier rule, makes this one's reasons say nothing new (the
    tables' surface clause check and the ``added_clause`` rule both find ``added clause``)."""

    name: str
    check: Check
    gate: Gate = "meaning"
    unless: str | None = None


def _some(reason: Reason | None) -> list[Reason]:
    return [] if reason is None else [reason]


def _content(pair: Pair, config: GuardConfig) -> list[Reason]:
    del config
    lemmas = _latin_lemmas(pair)
    reasons = lost_sentences(pair.block_words, pair.reply_words, lemmas)
    if not reasons:
        again = _said_again(pair, "block")
        reasons += _some(lost_words(pair.block_words, pair.reply_words, again, lemmas))
    return reasons + _some(
        added_words(pair.block_words, pair.reply_words, _said_again(pair, "reply"), lemmas)
    )


def _latin_lemmas(pair: Pair) -> dict[str, str] | None:
    """Each Latin word of either English text, lower-cased -> its lemma (the first, where a
    word has two); None for the other languages (their content tokens are characters)."""
    if pair.old.language != "en":
        return None
    out: dict[str, str] = {}
    for t in (*pair.old.words, *pair.new.words):
        if t.text.isascii() and t.text.isalpha():
            out.setdefault(t.text.lower(), t.lemma.lower())
    return out


def _said_again(pair: Pair, side: Literal["block", "reply"]) -> Callable[[str], bool]:
    """Whether a word of one side (``side``) says again a word only the other has
    (:func:`~owlai_refine.guard.edits.restated`: ``require`` -> ``need``), so that a rewording
    is read neither as words lost nor as words added."""

    def said_again(word: str) -> bool:  # the texts are analysed only if it is asked
        mine, theirs = (pair.old, pair.new) if side == "block" else (pair.new, pair.old)
        own = [t for t in mine.words if t.content and t.text.lower() == word.lower()]
        return bool(own) and restated(own[0], mine, theirs)

    return said_again


def _tokens(pair: Pair, config: GuardConfig) -> list[Reason]:
    del config
    return compare_tokens(
        protected_tokens(pair.block, pair.block_parse[0], spelled=pair.reply_digits),
        protected_tokens(pair.reply, pair.reply_parse[0], spelled=pair.block_digits),
    )


def _language(pair: Pair, config: GuardConfig) -> list[Reason]:
    return _some(language_problem(pair.block, pair.reply)) if config.check_language else []


def _tables(pair: Pair) -> list[Reason]:
    """The word tables' reasons; Korean opposites, and Chinese ones of one character, counted
    on the analysed morphemes; a Chinese added clause only with two new words
    (:func:`~owlai_refine.guard.rules.added.confirmed`), and no Chinese number word that counts
    the list before it (:func:`~owlai_refine.guard.rules.counts.counts_a_list`)."""
    korean = (
        morpheme_index((pair.block_prose, pair.old), (pair.reply_prose, pair.new))
        if pair.label in ("ko", "zh")
        else None
    )
    found = meaning_problems(pair.block_words, pair.reply_words, pair.label, korean)
    return [
        r
        for r in found
        if not (r.group == "added clause" and not confirmed(pair, r))
        and not (
            r.group == "changed number word"
            and not r.lost
            and all(counts_a_list(pair, form) for form in r.added)
        )
    ]


def _pair_only(fn: Callable[[Pair], list[Reason]]) -> Check:
    def check(pair: Pair, config: GuardConfig) -> list[Reason]:
        del config
        return fn(pair)

    check.__doc__ = fn.__doc__
    return check


RULES: tuple[Rule, ...] = (
    Rule("structure", lambda p, c: structure_problems(p.block_parse, p.reply_parse), "always"),
    Rule(
        "repetition",
        lambda p, c: _some(
            repetition_problem(p.block, p.reply, c.repeat_threshold, c.repeat_window)
        ),
        "always",
    ),
    Rule("length", lambda p, c: _some(length_problem(p.block, p.reply, c)), "always"),
    Rule("cut_off", lambda p, c: _some(cut_off(p.block, p.reply)), "paragraph"),
    Rule("language", _language, "always"),
    Rule("content", _content, "language"),
    Rule("tokens", _tokens, "always"),
    Rule("tables", lambda p, c: _tables(p)),
    Rule("roles", _pair_only(role_reasons)),
    Rule("swapped_words", _pair_only(swap_reasons)),
    Rule("traded_predicates", _pair_only(predicate_reasons)),
    Rule("sides", _pair_only(sides_reasons)),
    Rule("lost_list_element", _pair_only(list_reasons)),
    Rule("added_list_element", _pair_only(added_list_reasons)),
    Rule("moved_negation", _pair_only(negation_reasons)),
    Rule("links", _pair_only(lambda p: link_reasons(p) + label_reasons(p))),
    Rule("antonyms", _pair_only(antonym_reasons)),
    Rule("modifiers", _pair_only(modifier_reasons)),
    Rule("named_elsewhere", _pair_only(named_elsewhere_reasons)),
    Rule("lost_subject", _pair_only(lost_subject_reasons)),
    Rule("claims", _pair_only(claim_reasons)),
    Rule("qualifiers", _pair_only(qualifier_reasons)),
    Rule("quotations", _pair_only(quotation_reasons)),
    Rule("added_clause", _pair_only(added_clause_reasons), unless="added clause"),
)
"""Every rule, in the order their reasons are reported."""


def run_rules(block: str, reply: str, config: GuardConfig) -> list[Reason]:
    """Every reason of every rule whose gate is open, for the Markdown texts of a block and
    of its (unwrapped) reply, in :data:`RULES` order."""
    pair = Pair(block, reply, language_label(block))
    reasons: list[Reason] = []
    structural = language_changed = False
    for rule in RULES:
        if rule.gate == "paragraph" and structural:
            continue
        if rule.gate == "language" and language_changed:
            continue
        if rule.gate == "meaning" and (structural or language_changed):
            continue
        if rule.unless is not None and any(r.group == rule.unless for r in reasons):
            continue
        found = list(rule.check(pair, config))
        if rule.name == "structure":
            structural = bool(found)
        if rule.name == "language":
            # words can only be compared within one language, whether or not the check is on
            language_changed = language_problem(block, reply) is not None
        reasons += found
    return reasons
