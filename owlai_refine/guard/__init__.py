"""The reply guard: checks a model's reply before it may replace its block.

Pure code, no IO. :func:`check_reply` takes a block and the model's reply text and returns a
:class:`Verdict`: the cleaned text to splice, or the reasons the reply may not replace the block
(the block then keeps its original text). In order:

1. **unwrap** (``wrappers``): known wrappers removed by fixed rules (``<think>``, our ``<block>``
   tags and ``Section:`` line, one outer ``markdown`` fence, a preamble line, quotes around the
   whole, a repeated list marker); lines stripped.
2. **unchanged**: equal to the block after normalising whitespace (``Verdict.unchanged``).
3. **structure** (``structure``): one paragraph, as the block; no heading, list, fence, ...
4. **repetition** (``repetition``): no phrase or sentence looping ``repeat_threshold`` times.
5. **length**: within ``[min_length_ratio, max_length_ratio]`` of the block, in characters.
6. **cut off**: a block ending in ``.``/``!``/``?``/``。`` etc. must not be answered with a
   reply ending inside a word, a link or a bracket (a cut reply can claim ``finish_reason:
   stop``).
7. **language** (``language``): the block's language kept.
8. **content** (``content``): no sentence of the block dropped (its distinctive words gone),
   no quarter of its content words dropped (``lost words``: a clause gone) and no new matter
   brought in (a third of the reply's content words new); judged only when the language is
   kept.
9. **tokens** (``tokens``): the protected inline tokens kept as a multiset.
10. **meaning** (``meaning``): what the block says, said the same: no negator, hedge, scope
    or quantity word added or removed and no opposite flipped (per-language word tables in
    ``guard/lexicon``), no month, time word or number word changed, no number swapped or given
    another unit, no name replaced, no clause dropped or invented (an alignment of block and
    reply), no English verb moved to another tense, the block's final full stop, question mark
    or colon and the quotation marks around a term kept; judged only on a single paragraph in
    the block's language, after normalising widths, CJK-Latin spacing and contractions.

Every failing check adds its reasons (all checks run, so a log line says everything that is wrong).
Reason strings start with a fixed group name, for grouping logs (:func:`reason_group`):

- ``empty``: nothing left after unwrapping.
- ``structure: <construct>``: heading, list, code block, table, rule, quote, html block, math
  block, front matter, footnote definition, link definition, blank line, hard line break, empty.
- ``repetition: phrase xN "..."`` / ``repetition: sentence xN "..."``.
- ``too short: 0.31x`` / ``too long: 2.60x``: reply length over block length.
- ``cut off: ends "...www.reu"``.
- ``language <block> -> <reply>``: ``language ko -> latin``, ``language ja -> zh``.
- ``lost sentence "<its start>"``: a sentence of the block whose own words are gone.
- ``lost words "<dropped words>"``: a reply that kept less than 3/4 of the block's words.
- ``added words "<new words>"``: a reply that brought in new matter.
- ``lost <kind> <token>``, ``added <kind> <token>``, ``changed <kind> <old> -> <new>``,
  ``escaped <kind> <form>``; kinds: citation, footnote, alert, url, image, code, math, html,
  number, name (lost only: ``lost name DLSS``), bold, italic, strikethrough. A reason that
  applies N times ends in `` xN``.
- ``changed polarity <category>: <block's words> -> <reply's words>``: ``changed polarity
  negation: ∅ -> "not"``, ``changed polarity direction: "higher" -> "lower"``.
- ``changed date: "May" -> "June"``, ``changed number word: "three" -> "two"``.
- ``changed unit 27 hours -> 27 minutes``, ``swapped numbers 512 -> 27``.
- ``changed name Netherlands -> Siemens``, ``lost name X``, ``added name Y``.
- ``lost clause "..."``, ``added clause "..."``.
- ``moved citation [3]``, ``moved link <url>``: a marker now by other words.
- ``changed tense "slashes" -> "slashed"`` (regular verbs; ``changed polarity tense: "is" ->
  "was"`` for the table's irregular ones).
- ``lost ending "."``, ``changed ending ":" -> "."``, ``lost quotes "<term>"``.
- ``changed spelling "existing" -> "exisiting"``: an English word misspelled.
- ``and N more``: the last of :data:`MAX_REASONS` reasons, when there were more.

:func:`watchdog_for` gives the streaming check: an incremental :class:`RepetitionDetector`
that closes the stream as soon as a loop is evident (its reason is a ``repetition: phrase``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from owlai_refine.blocks import Block, BlockKind
from owlai_refine.config import GuardConfig
from owlai_refine.guard._md import parse_tokens
from owlai_refine.guard.content import added_words, lost_sentences, lost_words
from owlai_refine.guard.language import language_label, language_problem
from owlai_refine.guard.meaning import meaning_problems
from owlai_refine.guard.normalise import digit_numbers, numbers_as_digits
from owlai_refine.guard.repetition import RepetitionDetector, repetition_problem
from owlai_refine.guard.structure import structure_problems
from owlai_refine.guard.tokens import compare_tokens, protected_tokens
from owlai_refine.guard.wrappers import unwrap

__all__ = [
    "MAX_REASONS",
    "RepetitionDetector",
    "Verdict",
    "check_reply",
    "normalise_ws",
    "problems",
    "reason_group",
    "watchdog_for",
]

MAX_REASONS = 12
"""At most this many reasons are returned; the last then says how many more there were."""

_FINAL_PUNCT = tuple(".!?\u3002\uff01\uff1f")  # and the ideographic full stop, !, ?
_CUT_ENDING = re.compile(r"(?:[^\W_]|[/(\[{<,;:])\Z")  # a letter or digit (not "_"), or an opener
_MORE = re.compile(r"^and \d+ more$")
_GROUP = re.compile(
    r"^(?:changed polarity [\w :]+(?=:)|changed (?:number word|language name|time span)"
    r"|(?:lost|added|changed|escaped|swapped|moved) \w+|structure"
    r"|repetition|too short|too long|cut off"
    r"|language|empty)"
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The guard's decision on one reply.

    ``text``: the cleaned reply to splice (``None`` if rejected; the block's own text when
    unchanged). ``reasons``: why it was rejected, empty otherwise. ``unchanged``: the reply equals
    the block after normalising whitespace. ``unwrapped``: the names of the wrapper rules that
    removed something (``"think"``, ``"block_tags"``, ``"section_echo"``, ``"fence"``,
    ``"preamble"``, ``"quotes"``, ``"list_marker"``), for logs.
    """

    text: str | None
    reasons: tuple[str, ...] = ()
    unchanged: bool = False
    unwrapped: tuple[str, ...] = ()


def normalise_ws(text: str) -> str:
    """``text`` with every run of whitespace turned into one space, and stripped."""
    return " ".join(text.split())


def reason_group(reason: str) -> str:
    """The stable group of a reason, for counting logs: ``"lost citation"``, ``"changed url"``,
    ``"lost sentence"``, ``"structure"``, ``"language"``, ``"repetition"``, ``"too long"``,
    ``"and more"``, ... (the reason itself if it has no known group)."""
    if _MORE.match(reason):
        return "and more"
    m = _GROUP.match(reason)
    return m.group() if m else reason


def _length_problem(block_text: str, text: str, config: GuardConfig) -> str | None:
    ratio = len(normalise_ws(text)) / max(len(normalise_ws(block_text)), 1)
    if ratio < config.min_length_ratio:
        return f"too short: {ratio:.2f}x"
    if ratio > config.max_length_ratio:
        return f"too long: {ratio:.2f}x"
    return None


def _cut_off(block_text: str, text: str) -> str | None:
    """A reply that stops mid-word, mid-link or after an opening bracket or comma, where the
    block ended a sentence: the tell-tale of a reply cut short that still says ``stop``."""
    if not block_text.rstrip().endswith(_FINAL_PUNCT):
        return None
    if _CUT_ENDING.search(text):
        return f'cut off: ends "{normalise_ws(text[-24:])}"'
    return None


def check_reply(block: Block, reply: str, config: GuardConfig) -> Verdict:
    """Clean ``reply`` and decide whether it may replace ``block`` (see the module docstring
    for the checks and their reasons). Never raises for any reply text."""
    text, removed = unwrap(
        reply,
        block.text,
        list_item=block.kind is BlockKind.LIST_ITEM,
        heading_path=block.heading_path,
    )
    if not text:
        return Verdict(None, ("empty",), unwrapped=removed)
    if normalise_ws(text) == normalise_ws(block.text):
        return Verdict(block.text, unchanged=True, unwrapped=removed)
    reasons = problems(block.text, text, config)
    if reasons:
        return Verdict(None, tuple(reasons), unwrapped=removed)
    return Verdict(text, unwrapped=removed)


def _deduplicated(reasons: list[str]) -> list[str]:
    """``reasons`` in order without repeats, without a ``lost name X`` that a ``changed name X
    -> Y`` already says (the token and meaning checks both watch names), without a ``lost
    ending`` that a ``cut off`` already says, and with one ``repetition`` reason at most."""
    changed = {r.split(" ")[2] for r in reasons if r.startswith("changed name ")}
    cut = any(r.startswith("cut off") for r in reasons)
    out: list[str] = []
    for r in reasons:
        if r in out or (r.startswith("lost name ") and r.split(" ", 2)[2] in changed):
            continue
        if cut and r.startswith("lost ending"):
            continue  # a reply cut off mid-sentence lost its ending: one fault, said once
        if r.startswith("repetition:") and any(o.startswith("repetition:") for o in out):
            continue  # one loop, seen by the repetition check and by the short-phrase echo
        out.append(r)
    return out


def problems(block_text: str, text: str, config: GuardConfig) -> list[str]:
    """Every reason ``text`` (an already unwrapped reply) may not replace a block whose text is
    ``block_text``: checks 3 to 10 of the module docstring, at most :data:`MAX_REASONS`."""
    block_parse = parse_tokens(block_text)
    reply_parse = parse_tokens(text)
    reasons = structure_problems(block_parse, reply_parse)
    structural = bool(reasons)
    language = language_problem(block_text, text)
    for problem in (
        repetition_problem(block_text, text, config.repeat_threshold, config.repeat_window),
        _length_problem(block_text, text, config),
        None if reasons else _cut_off(block_text, text),  # only judged on a single paragraph
        language if config.check_language else None,
    ):
        if problem:
            reasons.append(problem)
    # A number spelled out where the other text writes it in digits is that number
    # ("Forty-seven percent" for "47%"): the content, token and meaning checks read it so.
    block_digits, reply_digits = digit_numbers(block_text), digit_numbers(text)
    block_words = numbers_as_digits(block_text, reply_digits)
    reply_words = numbers_as_digits(text, block_digits)
    if language is None:  # words can only be matched within one language
        reasons += lost_sentences(block_words, reply_words)
        if not any(r.startswith("lost sentence") for r in reasons) and (
            lost := lost_words(block_words, reply_words)
        ):
            reasons.append(lost)
        if added := added_words(block_words, reply_words):
            reasons.append(added)
    reasons += compare_tokens(
        protected_tokens(block_text, block_parse[0], spelled=reply_digits),
        protected_tokens(text, reply_parse[0], spelled=block_digits),
    )
    if language is None and not structural:  # meaning is judged within one paragraph
        reasons += meaning_problems(block_words, reply_words, language_label(block_text))
    reasons = _deduplicated(reasons)
    if len(reasons) > MAX_REASONS:
        more = len(reasons) - MAX_REASONS + 1
        reasons = [*reasons[: MAX_REASONS - 1], f"and {more} more"]
    return reasons


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
