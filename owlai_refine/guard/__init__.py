"""The reply guard: checks a model's reply before it may replace its block.

Pure code, no IO but the language analysers' one-time load. :func:`check_reply` takes a block
and the model's reply text and returns a :class:`Verdict`: the cleaned text to splice, or the
structured :class:`~owlai_refine.guard.reasons.Reason` list of why the reply may not replace the
block (the block then keeps its original text). The design, as a picture::

    block, reply ──unwrap──▶ Pair ──analyse (per language: lemminflect, Kiwi, MeCab, jieba)──▶
        tokens (surface, lemma, part of speech, roles) ──align──▶ edits ──classify──▶
        inflection · function · reorder · synonym · derivation · antonym · content
    RULES (guard.rules): form (structure, repetition, length, cut off, language, content,
        protected tokens) then meaning (word tables, roles, order, negation, links, antonyms)
        ──▶ Reason(group, detail) ... ──▶ Verdict

1. **unwrap** (``wrappers``): known wrappers removed by fixed rules (``<think>``, our ``<block>``
   tags and ``Section:`` line, one outer ``markdown`` fence, a preamble line, quotes around the
   whole, a repeated list marker); lines stripped.
2. **unchanged**: equal to the block after normalising whitespace, or the "no change needed"
   marker alone (``guard.marker``; ``Verdict.unchanged``, ``Verdict.marker``).
3. **the rules** (``guard.rules.RULES``, each over one shared ``guard.pair.Pair``): every rule
   whose gate is open runs, so a log line says everything that is wrong.

The reason groups (``Reason.group``, stable; the detail quotes the words as written):

- ``empty``: nothing left after unwrapping.
- ``marker``: ``marker: <unchanged/> with "..."``: the no-change marker and more text.
- ``structure``: ``structure: <construct>``: heading, list, code block, table, rule, quote, html
  block, math block, front matter, footnote definition, link definition, blank line, hard line
  break, empty.
- ``repetition``: ``repetition: phrase xN "..."`` / ``repetition: sentence xN "..."``.
- ``too short`` / ``too long``: ``too short: 0.31x``.
- ``cut off``: ``cut off: ends "...www.reu"``.
- ``language``: ``language ko -> latin``, ``language ja -> zh``.
- ``lost sentence``, ``lost words``, ``added words``: content dropped or brought in.
- ``lost <kind>``, ``added <kind>``, ``changed <kind>``, ``escaped <kind>`` for the protected
  kinds: citation, footnote, alert, url, image, code, math, html, number, name, bold, italic,
  strikethrough (a reason that applies N times ends in `` xN``).
- ``changed polarity <category>``: the word tables' negators, hedges, scope words, opposites.
- ``changed date``, ``changed number word``, ``changed unit``, ``swapped numbers``.
- ``changed name``, ``lost name``, ``added name``; ``lost clause``, ``added clause``;
  ``lost claim`` (a predicate adjective), ``lost qualifier`` (a Chinese attribute with its 的).
- ``moved citation``, ``moved link``: a marker now by other words.
- ``changed tense``: an English verb moved in time (``"slashes" -> "slashed"``) or, from the
  analysers' roles, ``changed tense: future ∅ -> "计划"``.
- ``changed degree``: ``changed degree: intensifier "significantly" -> ∅``.
- ``changed comparison``, ``changed count``, ``changed negation``: the other role families;
  ``changed comparison`` also for a word that crossed a comparison's sides.
- ``swapped words``, ``lost list element``, ``added list element``, ``moved negation``,
  ``swapped link texts``, ``swapped labels``, ``changed word`` (an antonym).
- ``lost ending``, ``changed ending``, ``lost quotes``; ``changed spelling``; ``changed
  quotation`` (the words of a quoted phrase).
- ``and more``: the last of :data:`MAX_REASONS` reasons, when there were more (a count, not a
  group: summaries do not count it, ``BlockOutcome.groups``).

:func:`watchdog_for` gives the streaming check: an incremental :class:`RepetitionDetector`
that closes the stream as soon as a loop is evident (its reason is a ``repetition: phrase``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from owlai_refine.blocks import Block, BlockKind
from owlai_refine.config import GuardConfig
from owlai_refine.guard import _md as _prose_of
from owlai_refine.guard import language as _languages
from owlai_refine.guard import normalise as _normalised
from owlai_refine.guard.analysis.core import forget
from owlai_refine.guard.cutoff import length_problem, normalise_ws
from owlai_refine.guard.marker import marker_reply
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.repetition import RepetitionDetector
from owlai_refine.guard.rules import RULES, run_rules
from owlai_refine.guard.surface import as_written
from owlai_refine.guard.wrappers import unwrap
from owlai_refine.results import MORE_REASONS

__all__ = [
    "MAX_REASONS",
    "RULES",
    "Reason",
    "RepetitionDetector",
    "Verdict",
    "check_reply",
    "forget_texts",
    "normalise_ws",
    "problems",
    "watchdog_for",
]

_RUNAWAY_CHARS = 20_000
"""A reply too long for its block and longer than this is refused on its length alone."""
MAX_REASONS = 12
"""At most this many reasons are returned; the last then says how many more there were."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's decision on one reply.

    ``text``: the cleaned reply to splice (``None`` if rejected; the block's own text when
    unchanged). ``reasons``: why it was rejected, empty otherwise. ``unchanged``: the reply equals
    the block after normalising whitespace. ``unwrapped``: the names of the wrapper rules that
    removed something (``"think"``, ``"block_tags"``, ``"section_echo"``, ``"fence"``,
    ``"preamble"``, ``"quotes"``, ``"list_marker"``), for logs. ``marker``: the reply was the
    "no change needed" marker alone (then ``unchanged`` too).
    """

    text: str | None
    reasons: tuple[Reason, ...] = ()
    unchanged: bool = False
    unwrapped: tuple[str, ...] = ()
    marker: bool = False


def check_reply(block: Block, reply: str, config: GuardConfig) -> Verdict:
    """Clean ``reply`` and decide whether it may replace ``block`` (see the module docstring
    for the steps and their reasons). Never raises for any reply text."""
    text, removed = unwrap(
        reply,
        block.text,
        list_item=block.kind is BlockKind.LIST_ITEM,
        heading_path=block.heading_path,
    )
    if not text:
        return Verdict(None, (Reason("empty"),), unwrapped=removed)
    marked = marker_reply(block.text, text)
    if marked is not None:  # the marker alone (unchanged) or with more (refused)
        alone = marked is True
        return Verdict(
            block.text if alone else None,
            () if isinstance(marked, bool) else (marked,),
            unchanged=alone,
            unwrapped=removed,
            marker=alone,
        )
    if normalise_ws(text) == normalise_ws(block.text):
        return Verdict(block.text, unchanged=True, unwrapped=removed)
    too_long = length_problem(block.text, text, config)
    if too_long is not None and too_long.group == "too long" and len(text) > _RUNAWAY_CHARS:
        # refused on length before any parse or alignment: a runaway reply of megabytes would
        # otherwise cost seconds of CPU on the event loop (the rules are superlinear in it)
        return Verdict(None, (too_long,), unwrapped=removed)
    reasons = problems(block.text, text, config)
    if reasons:
        return Verdict(None, tuple(reasons), unwrapped=removed)
    return Verdict(text, unwrapped=removed)


def _deduplicated(reasons: list[Reason]) -> list[Reason]:
    """``reasons`` in order without repeats, without a ``lost name X`` that a ``changed name X
    -> Y`` already says (the token and meaning checks both watch names), without a ``lost
    ending`` that a ``cut off`` already says, with one ``repetition`` reason at most, and with
    one reason of each role family (the word tables and the role rule may both see a degree)."""
    changed = {r.detail.split(" ")[0] for r in reasons if r.group == "changed name"}
    groups = {r.group for r in reasons}
    out: list[Reason] = []
    for r in reasons:
        if r in out or (r.group == "lost name" and r.detail in changed):
            continue
        if r.group == "lost ending" and "cut off" in groups:
            continue  # a reply cut off mid-sentence lost its ending: one fault, said once
        if r.group == "repetition" and any(o.group == "repetition" for o in out):
            continue  # one loop, seen by the repetition check and by the short-phrase echo
        out.append(r)
    return out


def problems(block_text: str, text: str, config: GuardConfig) -> list[Reason]:
    """Every reason ``text`` (an already unwrapped reply) may not replace a block whose text is
    ``block_text``: step 3 of the module docstring, at most :data:`MAX_REASONS`, each quote
    as the block or the reply writes it (``guard.surface``)."""
    reasons = _deduplicated(run_rules(block_text, text, config))
    if len(reasons) > MAX_REASONS:
        more = len(reasons) - MAX_REASONS + 1
        reasons = [*reasons[: MAX_REASONS - 1], Reason(MORE_REASONS, str(more), ": ")]
    return [as_written(r, block_text, text) for r in reasons]


def forget_texts() -> None:
    """Empty the per-text caches the checks share (normalised forms, parses, analysed
    sentences), so that a benchmark times a reply as the first time its texts are seen."""
    for cached in (
        _prose_of.prose,
        _languages.script_shares,
        _normalised.digit_numbers,
        _normalised.normalise,
    ):
        cached.cache_clear()
    forget()


def watchdog_for(block: Block, config: GuardConfig) -> Callable[[str], str | None]:
    """A streaming watchdog for ``block``'s reply: call it with the whole reply text received
    so far (after every chunk); it returns ``"repetition: phrase xN ..."`` as soon as a phrase
    has looped ``config.repeat_threshold`` times (more often than in the block), else ``None``.

    Incremental: each call reads only the text it has not seen, so a reply of ``n`` characters
    costs ``O(n)`` in all however it is chunked. For an exact loop of period ``p`` units (words,
    or CJK characters at half weight) it fires ``2p + repeat_window`` units after the loop
    began. It fires on no paragraph of the sample reports (see the tests)."""
    detector = RepetitionDetector(config.repeat_threshold, config.repeat_window, block.text)
    return detector.feed
