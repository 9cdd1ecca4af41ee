"""The role rule: the words that set a claim's degree, time, aspect, comparison, contrast and
source kept.

Pure code. Each role of ``analysis/roles.toml`` (an intensifier, a past tense, a comparison,
...) is counted in the block's and the reply's analysed prose; a role whose count changed is a
change of meaning: ``changed degree: intensifier "significantly" -> ∅``, ``changed tense: past
"了" -> ∅``, ``changed comparison: comparative "更" x2 -> "更"``. A word of a role may replace
another of the same role (``significantly`` -> ``substantially``). English comparatives are
read from the analyser's tags too (``higher``: ``JJR``), and English tense is the tense
module's.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

from owlai_refine.guard.analysis import Analysis, Token
from owlai_refine.guard.analysis.roles import ROLE_FAMILIES, policy
from owlai_refine.guard.edits import restated
from owlai_refine.guard.lexicon import Category, tables_for
from owlai_refine.guard.normalise import numeral_value
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason, quoted

__all__ = ["role_reasons"]

_EN_COMPARATIVE = frozenset({"more", "less", "fewer"})


def _roles(analysis: Analysis) -> dict[str, list[str]]:
    """Role -> the surface forms that play it, in order."""
    found: dict[str, list[str]] = {}
    words = analysis.words
    for i, t in enumerate(words):
        for role in t.roles:
            found.setdefault(role, []).append(t.text)
        if analysis.language == "en" and _comparative(t, words[i + 1 : i + 3]):
            found.setdefault("comparative", []).append(t.text)
    return found


@cache
def _number_words() -> tuple[Category, ...]:
    return tuple(
        c for t in tables_for("latin") for c in t.category("values") if c.name == "number word"
    )


def _numeral(t: Token) -> bool:
    """True for an English number: tagged one, written in digits, or a number word of the
    word tables (``two``, which the tagger may call a noun)."""
    return (
        t.pos == "NUM"
        or any(ch.isdigit() for ch in t.text)
        or any(c.has(t.text) for c in _number_words())
    )


def _comparative(t: Token, after: tuple[Token, ...]) -> bool:
    """An English comparative: an adjective or adverb in ``-er`` (``JJR``, ``RBR``), ``more``,
    ``less``, ...; not ``more than 5`` or ``more than two`` (an approximation of a number:
    the word tables')."""
    if [a.lemma for a in after[:1]] == ["than"] and after[1:2] and _numeral(after[1]):
        return False
    return (
        t.tag in ("JJR", "RBR") and t.pos in ("ADJ", "ADV")
    ) or t.text.lower() in _EN_COMPARATIVE


def _gained_other(role: str, old: dict[str, list[str]], new: dict[str, list[str]]) -> bool:
    """True if another role of ``role``'s family has more words in ``new`` than in ``old``
    (시작했습니다 -> 시작할 계획입니다: the past gone, a plan come in, whether or not the block
    said another plan elsewhere)."""
    family = ROLE_FAMILIES[role]
    return any(
        ROLE_FAMILIES[r] == family and r != role and len(new.get(r, ())) > len(old.get(r, ()))
        for r in ROLE_FAMILIES
    )


_RISE = frozenset({
    "increase", "increased", "increasing", "increasingly", "rise", "rising", "grow", "growing",
    "heighten", "heightened", "enhance", "enhanced", "expand", "expanded", "boost", "more",
    "further", "additional", "high", "great", "large", "big", "ever",
})  # fmt: skip
_FALL = frozenset({
    "reduce", "reduced", "decrease", "decreased", "decreasing", "diminish", "diminished",
    "decline", "declining", "shrink", "shrinking", "lessen", "lessened", "less", "few", "low",
    "small",
})  # fmt: skip
"""English words that say a quantity went up (or down) the way a comparative before the same
noun does: ``increased power consumption`` is ``higher power consumption``, ``increasingly
imperative`` ``ever more imperative``, ``more research`` ``further research``, ``reduced
paperwork`` ``less paperwork`` (lemmas, and the participles the tagger calls adjectives:
``higher`` is ``high``, ``increased`` stays ``increased``)."""


def _direction(t: Token) -> frozenset[str] | None:
    key = t.lemma.lower()
    return _RISE if key in _RISE else _FALL if key in _FALL else None


def _comparative_restated(form: str, mine: Analysis, theirs: Analysis) -> bool:
    """True if the English comparative ``form`` of ``mine`` stands before a word that
    ``theirs`` has right after a word of the same direction (:data:`_RISE`, :data:`_FALL`)
    that ``mine`` does not have: ``higher integration costs`` for ``increased integration
    costs``. ``lower`` for ``increased`` is no restatement."""
    words, others = mine.words, theirs.words
    own = {t.lemma.lower() for t in words}
    for i, t in enumerate(words):
        direction = _direction(t) if t.text == form else None
        if direction is None:
            continue
        head = next((w.lemma.lower() for w in words[i + 1 : i + 3] if w.content), None)
        for j, o in enumerate(others[:-1]):
            if (
                o.lemma.lower() == head
                and j > 0
                and _direction(others[j - 1]) is direction
                and others[j - 1].lemma.lower() not in own
            ):
                return True
    return False


def _forgive(old: dict[str, list[str]], new: dict[str, list[str]], pair: Pair) -> None:
    """Take out of ``old`` and ``new`` the role words that are no change: an English degree
    word (frequency is of that family) said again as its derivation (particularly -> a
    particular problem, constantly changing -> in constant flux) or a comparative
    as a synonym of a word dropped (previous -> earlier); "compared" -> "comparable" still is
    one (equality). And a numeral the other text writes in digits (일차 -> 1차)."""
    if pair.old.language == "en":
        for role in old.keys() | new.keys():
            a, b = old.get(role, []), new.get(role, [])
            if ROLE_FAMILIES[role] == "degree":
                old[role] = [f for f in a if f in b or not _said_again(f, pair.old, pair.new)]
            if ROLE_FAMILIES[role] == "degree" or role == "comparative":
                new[role] = [f for f in b if f in a or not _said_again(f, pair.new, pair.old)]
            if role == "comparative":
                old[role] = [
                    f for f in a if f in b or not _comparative_restated(f, pair.old, pair.new)
                ]
                new[role] = [
                    f
                    for f in new[role]
                    if f in a or not _comparative_restated(f, pair.new, pair.old)
                ]
    for side, digits in ((old, pair.reply_digits), (new, pair.block_digits)):
        if "numeral" in side:
            side["numeral"] = [f for f in side["numeral"] if numeral_value(f) not in digits]


def role_reasons(pair: Pair) -> list[Reason]:
    """One reason per role whose count differs between block and reply (see the module
    docstring), in the order of ``roles.toml``'s families."""
    old, new = _roles(pair.old), _roles(pair.new)
    _forgive(old, new, pair)
    rules = policy(pair.old.language)
    reasons: list[Reason] = []
    for role in sorted(old.keys() | new.keys(), key=list(ROLE_FAMILIES).index):
        a, b = old.get(role, []), new.get(role, [])
        if len(a) == len(b):
            continue
        rule = rules[role]
        if rule == "presence" and bool(a) == bool(b):
            continue
        if rule == "lost" and len(b) > len(a):
            continue
        if rule == "fewer" and len(b) > len(a) > 0:
            continue
        if rule == "shift" and not (a and not b and _gained_other(role, old, new)):
            continue
        if rule == "trade" and not (len(b) < len(a) and _gained_other(role, old, new)):
            continue
        lost = list((Counter(a) - Counter(b)).elements())
        added = list((Counter(b) - Counter(a)).elements())
        if not lost and not added:  # the same words, said another number of times
            lost, added = (a, []) if len(a) > len(b) else ([], b)
        lost = [_written(form, pair.old, pair.block_prose) for form in lost]
        added = [_written(form, pair.new, pair.reply_prose) for form in added]
        detail = f"{role} {quoted(lost)} -> {quoted(added)}"
        reasons.append(Reason(f"changed {ROLE_FAMILIES[role]}", detail, ": "))
    return reasons


def _said_again(form: str, mine: Analysis, theirs: Analysis) -> bool:
    """True if the English role word ``form`` of ``mine`` says again a word only ``theirs``
    has (:func:`~owlai_refine.guard.edits.restated`: ``previous`` -> ``earlier``,
    ``particularly`` -> ``particular``)."""
    own = [t for t in mine.words if t.text == form]
    return bool(own) and restated(own[0], mine, theirs)


def _written(form: str, analysis: Analysis, text: str) -> str:
    """``form`` as ``text`` (the analysed prose) writes it: the form itself where it stands
    there as it is; for a morpheme an analyser split off (Kiwi's ``ᆯ`` of ``진행할``), the word
    that holds it."""
    for t in analysis.words:
        if t.text != form:
            continue
        if text[t.start : t.start + len(form)] == form:
            return form
        start, end = t.start, t.start
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        while end < len(text) and not text[end].isspace():
            end += 1
        return text[start:end].strip(".,;:!?()\u3001\u3002") or form
    return form
