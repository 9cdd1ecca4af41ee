"""The meaning check: a reply must say what its block said, not only keep its tokens.

Pure code, no IO, no language model. Both texts are first reduced to their prose
(``_md.prose``) and normalised (``normalise``: widths, CJK-Latin spacing, contractions), so a
change of typesetting is never a change of meaning. Then:

- **polarity** (the word tables, ``lexicon``): the negators, hedges and modals, certainty words,
  scope words (``only``, 仅) and quantifiers of the block must all still be there, as many of
  each category as before (a synonym of the same category may replace one); an opposite pair
  (``higher``/``lower``, 增加/减少, 上昇/低下, 증가/감소) must not flip. ``changed polarity
  negation: ∅ -> "not"``, ``changed polarity direction: "higher" -> "lower"``. Korean opposites
  are counted on Kiwi's morphemes (the rule passes the pair's analyses), so 크 "big" is not
  read inside 링크, nor 작 "small" inside 작성; a Chinese opposite of one character on
  jieba's words, so 未 "not yet" is not read inside 未来 "future".
- **dates and number words** (the word tables): months, weekdays, time words (``last year``,
  去年, 来年), quarters and numbers in words (``three``, 三层, 二つ, 두 가지) are facts like
  digits: ``changed date: "May" -> "June"``, ``changed number word: "三" -> "两"``.
- **numbers in context** (``facts``): each number bound to its unit and to the words around it,
  so a swap or a changed unit shows (``swapped numbers``, ``changed unit``).
- **names** (``facts``): capitalised words that do not start a sentence, acronyms, Latin words
  inside CJK text and Katakana runs; a replaced name is reported with what replaced it.
- **clauses** (``clauses``): an alignment of block and reply; a run of the block's content
  dropped from the reply, or a run of new content inserted, is a ``lost clause`` / ``added
  clause``.
- **markers in place** (``anchors``): a citation or link must stay in a sentence that keeps
  the words of the one it stood in (``moved citation [3]``, ``moved link https://...``).

A language with no word table is judged by the numbers, names and clauses only. What the check
cannot see: two roles swapped with every word kept ("A acquired B" -> "B acquired A"), a
synonym of the wrong strength within one category ("may" -> "can"), a name written in Han or
Hangul replaced by another, a claim inverted with words the tables do not list.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from owlai_refine.guard._md import prose
from owlai_refine.guard.analysis import Analysis, Token
from owlai_refine.guard.analysis.wordnet import relation
from owlai_refine.guard.anchors import moved_markers
from owlai_refine.guard.clauses import clause_problems, echoed_phrase
from owlai_refine.guard.facts import name_problems, number_problems
from owlai_refine.guard.lexicon import Category, tables_for
from owlai_refine.guard.normalise import HANGUL, normalise
from owlai_refine.guard.punctuation import punctuation_problems
from owlai_refine.guard.reasons import Reason
from owlai_refine.guard.spelling import spelling_problem
from owlai_refine.guard.tense import passive_pasts, tense_problem
from owlai_refine.markers import CITATION, FOOTNOTE_REF

__all__ = ["meaning_problems", "morpheme_index", "polarity_problems"]

_EMPTY = "\u2205"
_MARKERS = re.compile(f"{CITATION.pattern}|{FOOTNOTE_REF.pattern}|" + r"(?<!\\)\[![A-Za-z]+\]")
_NOT_WORD = re.compile(r"\bnot\s+([a-z][a-z\-]*)")
_ANY_WORD = re.compile(r"[A-Za-z0-9]+")
_NEXT_WORD = re.compile(r"\s+(?:be\s+|have\s+|not\s+)?([A-Za-z][A-Za-z\-]{2,})")
_DATE_CATEGORIES = frozenset({"month", "weekday", "time word"})


def _forms(counter: Counter[str]) -> str:
    if not counter:
        return _EMPTY
    return ", ".join(f'"{form}"' + (f" x{n}" if n > 1 else "") for form, n in counter.items())


def _prefixed(category: Category, text: str, other: str) -> int:
    """How many ``not X`` of ``text`` stand as ``<prefix>X`` in ``other`` (``not valid`` /
    ``invalid``): each is one negation written two ways."""
    if not category.prefixes:
        return 0
    words = set(re.findall(r"[a-z][a-z\-]*", other.lower()))
    return sum(
        any(p + m.group(1) in words for p in category.prefixes)
        for m in _NOT_WORD.finditer(text.lower())
    )


def _folded(category: Category, block: str, reply: str, lost: int, forms: Counter[str]) -> bool:
    """True if the ``lost`` occurrences of the category went with the phrase they stood in:
    the words after them are gone as often ("can be specified in A or can be specified in B"
    -> "can be specified in A or in B": ``can`` and ``be specified`` both lost once). An edit
    that folds a repeated phrase keeps its meaning; one that removes a modal alone keeps the
    words after it. A modal shared by two verbs is folded too ("may lower A and may reduce B" ->
    "may lower A and reduce B"); a verb that stays said without it ("and reduces B", "and will
    reduce B") is not. Only the words after the ``forms`` lost are read ("likely designated"
    -> "designated" is no fold because "perhaps due" became "perhaps because"), and only those
    the reply still says (a fold keeps one copy of the phrase: "may theoretically be" -> "is"
    deleted the hedge)."""
    followers: Counter[str] = Counter()
    for m in _ANY_WORD.finditer(block):
        if not category.has(m.group()) or m.group().lower() not in forms:
            continue
        nxt = _NEXT_WORD.match(block, m.end())
        if nxt is None:
            return False
        followers[nxt.group(1).lower()] += 1
    low_block, low_reply = block.lower(), reply.lower()
    gone = 0
    for word, n in followers.items():
        said = rf"(?<![a-z]){re.escape(word)}(?:s|es|d|ed)?(?![a-z])"  # "reduces" still says it
        shared = rf"(?<![a-z])(?:and|or),?\s+{re.escape(word)}(?![a-z])"  # "may A and reduce B"
        kept = len(re.findall(said, low_reply))
        if not kept:
            continue  # the word after it is gone too: deleted ("may theoretically"), not folded
        dropped = len(re.findall(said, low_block)) - kept
        joined = len(re.findall(shared, low_reply)) - len(re.findall(shared, low_block))
        gone += min(n, max(dropped, 0) + max(joined, 0))
    return gone >= lost


def _count_problem(category: Category, block: str, reply: str) -> Reason | None:
    before, after = category.found(block), category.found(reply)
    n_before, n_after = sum(before.values()), sum(after.values())
    if n_before == n_after or (category.only_lost and n_after > n_before):
        return None
    if n_before - _prefixed(category, block, reply) == n_after - _prefixed(category, reply, block):
        return None
    lost, gained = before - after, after - before
    if 0 < n_after < n_before and _folded(category, block, reply, n_before - n_after, lost):
        return None
    derived = _derived(lost, block, reply) if lost else _derived(gained, reply, block)
    if derived:
        return None
    detail = f"{_forms(lost)} -> {_forms(gained)}"
    return Reason(f"changed polarity {category.name}", detail, ": ")


def _derived(forms: Counter[str], text: str, other: str) -> bool:
    """True if each of ``forms`` (Latin words one text gained) stands for a word the other
    text had and this one lost, in another form of the same root: ``independent`` ->
    ``independently`` (WordNet's derivations, or a shared stem of five letters or more)."""
    if not forms or not all(f.isascii() and f.isalpha() for f in forms):
        return False
    mine = {w.lower() for w in _ANY_WORD.findall(text)}
    theirs = {w.lower() for w in _ANY_WORD.findall(other)} - mine
    return all(
        any(len(w) >= 5 and (w.startswith(f[:5]) and f.startswith(w[:5])) for w in theirs)
        or any(relation(f, w) == "derivation" for w in theirs)
        for f in forms
    )


def _side_count(found: Counter[str], side: tuple[str, bool]) -> int:
    stem, prefix = side
    if not prefix:
        return found.get(stem, 0)
    return sum(n for form, n in found.items() if form.startswith(stem))


Morphemes = tuple[tuple[str, Mapping[int, Token]], tuple[str, Mapping[int, Token]]]
"""The block's and the reply's prose, each with its analysed tokens by their start offset
(:func:`morpheme_index` of ``Pair.block_prose``, ``Pair.old`` and ``Pair.reply_prose``,
``Pair.new``)."""


def morpheme_index(block: tuple[str, Analysis], reply: tuple[str, Analysis]) -> Morphemes:
    """The :data:`Morphemes` of two analysed texts, each ``(text, its analysis)``."""
    return (
        (block[0], {t.start: t for t in block[1].tokens}),
        (reply[0], {t.start: t for t in reply[1].tokens}),
    )


_WORD_POS = frozenset({"NOUN", "PROPN", "ADJ", "VERB", "ADV", "NUM"})
_INFLECTED = frozenset({"ADJ", "VERB", "ADV"})


def _at_morphemes(form: str, text: str, starts: Mapping[int, Token]) -> int:
    """How often ``form`` stands in ``text`` as its own morphemes: starting where a word (or a
    prefix: 비 of 비공개) starts, and ending where a token starts or a word ends, unless that
    word is an adjective, verb or adverb (inflected or derived: 크게, 많이). Korean 크 is no
    "big" inside 링크, nor 작 "small" inside 작성, nor 적 "few" the suffix of 효율적; 후에 is no
    "after" inside 사후에."""
    n = at = 0
    while (at := text.find(form, at)) >= 0:
        end = at + len(form)
        first = starts.get(at)
        if (
            first is not None
            and (first.pos in _WORD_POS or first.tag == "XPN")
            and (
                end in starts
                or end == len(text)
                or not text[end].isalnum()
                or first.pos in _INFLECTED
            )
        ):
            n += 1
        at += 1
    return n


def _opposite_problems(
    category: Category, block: str, reply: str, morphemes: Morphemes | None = None
) -> list[Reason]:
    if category.voice:  # the passive of the other text's past is no change of tense
        block, reply = passive_pasts(block, reply), passive_pasts(reply, block)
    if category.exact or category.stems:  # a Latin table: whole words
        before, after = category.found(block), category.found(reply)
        if before == after:
            return []

        def counts(side: tuple[str, bool], other: tuple[str, bool]) -> tuple[int, int]:
            del other  # whole words: one cannot stand inside another
            return _side_count(before, side), _side_count(after, side)

    else:  # CJK: every occurrence of the form, also inside a longer word (見やすい, 見づらい)
        blanked_block, blanked_reply = category.blank(block), category.blank(reply)

        def counts(side: tuple[str, bool], other: tuple[str, bool]) -> tuple[int, int]:
            # a side written inside the other (メリット in デメリット, 中心化 in 去中心化)
            # counts only where it stands alone
            stem, longer = side[0], other[0]
            inside = stem != longer and stem in longer

            def n(text: str) -> int:
                return text.count(stem) - (text.count(longer) * longer.count(stem) if inside else 0)

            if morphemes is not None and (HANGUL.match(stem) or len(stem) == 1):
                # Korean, and a lone Han character (未 is no "not yet" inside 未来): counted
                # on the analysed morphemes; a Chinese word of two or more characters counts
                # inside jieba's longer words too (动态 in 动态分配)

                def m(text: str, starts: Mapping[int, Token]) -> int:
                    own = _at_morphemes(stem, text, starts)
                    if inside:
                        own -= _at_morphemes(longer, text, starts) * longer.count(stem)
                    return own

                return m(*morphemes[0]), m(*morphemes[1])
            return n(blanked_block), n(blanked_reply)

    reasons: list[Reason] = []
    low = block.lower()
    for side_a, side_b, a, b in category.pairs:
        (a_before, a_after), (b_before, b_after) = counts(side_a, side_b), counts(side_b, side_a)
        a_diff, b_diff = a_after - a_before, b_after - b_before
        if not (a_diff or b_diff) or f"not {a}" in low or f"not {b}" in low:
            continue  # unchanged; or "not valid" -> "invalid", the negation check's
        if _negated_korean(a, b, block, reply) or _negated_korean(b, a, block, reply):
            continue  # 공개되지 않은 -> 비공개: one negation in two forms
        a_had, b_had = a_before > 0, b_before > 0
        if a_diff < 0 < b_diff or (a_had and not b_had and b_diff > 0 and a_diff <= 0):
            reasons.append(Reason(f"changed polarity {category.name}", f'"{a}" -> "{b}"', ": "))
        elif b_diff < 0 < a_diff or (b_had and not a_had and a_diff > 0 and b_diff <= 0):
            reasons.append(Reason(f"changed polarity {category.name}", f'"{b}" -> "{a}"', ": "))
    return reasons[:1]


_KO_NEGATING_PREFIXES = ("비", "미", "불", "무")


def _negated_korean(plain: str, prefixed: str, block: str, reply: str) -> bool:
    """True if ``prefixed`` is ``plain`` with a Sino-Korean negating prefix (비공개 of 공개) and
    one text writes ``plain`` negated by a verb (공개되지 않은, 공개하지 않는) where the other
    writes ``prefixed``: the same negation said two ways."""
    if not (prefixed.startswith(_KO_NEGATING_PREFIXES) and prefixed[1:] == plain):
        return False
    negated = re.compile(rf"{re.escape(plain)}(?:되|하|적이)?지 (?:않|못)")
    return bool(
        (negated.search(block) and prefixed in reply)
        or (negated.search(reply) and prefixed in block)
    )


def _value_problem(category: Category, block: str, reply: str) -> Reason | None:
    before, after = category.found(block), category.found(reply)
    if before.keys() == after.keys():
        return None  # a date or number word said once more (or once less) is the same fact
    group = "date" if category.name in _DATE_CATEGORIES else category.name
    lost = _as_written(before - after, category.written(block))
    gained = _as_written(after - before, category.written(reply))
    return Reason(
        f"changed {group}",
        f"{_forms(lost)} -> {_forms(gained)}",
        ": ",
        lost=tuple(lost.elements()),
        added=tuple(gained.elements()),
    )


def _as_written(values: Counter[str], written: dict[str, str]) -> Counter[str]:
    """``values`` (a category's canonical values) as the words the text wrote them with."""
    out: Counter[str] = Counter()
    for value, n in values.items():
        out[written.get(value, value)] += n
    return out


def _counter_problem(category: Category, block: str, reply: str) -> Reason | None:
    """``changed unit 한 명 -> 한 팀``: a numeral said with another counter in the reply (the
    same numeral with a new counter, its old counter gone). A numeral the block did not have is
    the number-word check's; an article-like "한" that a rewording brings in is no change."""
    pattern = category.pattern
    assert pattern is not None  # a counters category always has its regex

    def counted(text: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for m in pattern.finditer(category.blank(text)):
            out.setdefault(m.group("value"), set()).add(m.group("counter"))
        return out

    before, after = counted(block), counted(reply)
    for numeral, counters in before.items():
        gone, new = counters - after.get(numeral, set()), after.get(numeral, set()) - counters
        if gone and new:
            return Reason(
                "changed unit", f"{numeral} {sorted(gone)[0]} -> {numeral} {sorted(new)[0]}"
            )
    return None


def polarity_problems(
    block: str, reply: str, label: str, morphemes: Morphemes | None = None
) -> list[Reason]:
    """The word-table reasons for two normalised prose texts (see the module docstring), for a
    block whose language label is ``label``; empty when nothing changed. With ``morphemes``
    (Korean, Chinese), the opposites are counted where they stand as morphemes of the analysed prose
    (Korean ones, and Chinese ones of one character), not inside longer words."""
    reasons: list[Reason] = []
    for table in tables_for(label):
        for category in table.categories:
            if category.kind == "count":
                if problem := _count_problem(category, block, reply):
                    reasons.append(problem)
            elif category.kind == "opposites":
                reasons += _opposite_problems(category, block, reply, morphemes)
            elif category.kind in ("values", "numerals", "counters"):
                check = _counter_problem if category.kind == "counters" else _value_problem
                if problem := check(category, block, reply):
                    reasons.append(problem)
    return reasons


def _unmarked(text: str) -> str:
    """The prose of ``text`` without citation, footnote and alert markers (the token check
    keeps those)."""
    return _MARKERS.sub(" ", prose(text))


def meaning_problems(
    block_text: str, reply_text: str, label: str, morphemes: Morphemes | None = None
) -> list[Reason]:
    """Every meaning reason ``reply_text`` may not replace a block whose text is
    ``block_text`` and whose language label is ``label`` (``guard.language.language_label``):
    polarity, tense, spelling, dates and number words, numbers in context, names, clauses, an
    echoed phrase, markers in place, endings and quotation marks, in that order. Both are
    Markdown source (``check_reply`` passes them with numbers spelled out made digits where the
    other text has the digits: ``normalise.numbers_as_digits``); code, URLs and math are left
    out (the token check guards them)."""
    block, reply = normalise(_unmarked(block_text)), normalise(_unmarked(reply_text))
    if block == reply:  # the same words: only the markers may have moved (citations traded)
        return moved_markers(block_text, reply_text)
    reasons = polarity_problems(block, reply, label, morphemes)
    if tense := tense_problem(block, reply):
        reasons.append(tense)
    if typo := spelling_problem(block, reply):
        reasons.append(typo)
    reasons += number_problems(block, reply, label)
    block_source, reply_source = normalise(block_text), normalise(reply_text)
    reasons += name_problems(block, reply, label, block_source, reply_source)
    reasons += clause_problems(block, reply, block_source, reply_source, label)
    if echo := echoed_phrase(block, reply):
        reasons.append(echo)
    if not any(r.group == "lost clause" for r in reasons):  # else its markers went too
        reasons += moved_markers(block_text, reply_text)
    reasons += punctuation_problems(block, reply)
    return reasons
