"""The order rules: two words that traded places, and an element dropped from a list.

Pure code, over the pair's analysed words (lemmas, so inflection is no change):

- **swapped words**: two content words that each stand once in block and reply, in the
  opposite order in the reply, with what stood between them kept between them (``smaller
  validators take on less risk than larger validators`` -> ``larger ... than smaller``;
  ``从 N4 到 N4P`` -> ``从 N4P 到 N4``). Two coordinated items reordered (``A and B`` -> ``B and
  A``: nothing but a comma or a conjunction between them), a phrase moved whole (what stood
  between them is gone from between them) and two phrases moved to other places in the sentence
  without taking each other's (neither stands after a word the other stood after: ``strong
  community engagement ... as of February 2026`` -> ``As of February 2026, ... reflecting strong
  community engagement``) are faithful edits.
- **lost list element**: an item of an enumeration (three or more items joined by commas or
  ideographic commas, the last by a conjunction or a comma; in Korean also two noun phrases
  joined by 과/와 or 및: ``고위 팀과 그 하위 팀``) whose content words are all gone from the
  reply. (English ``A and B`` -> ``A`` is not judged: a rewording folds ``the development and
  the use`` into one noun as often as it drops one.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache

from owlai_refine.guard.analysis import Token
from owlai_refine.guard.edits import restated
from owlai_refine.guard.pair import Pair
from owlai_refine.guard.reasons import Reason

__all__ = [
    "COORDINATORS",
    "added_list_reasons",
    "list_reasons",
    "sentences",
    "swap_reasons",
    "word_key",
]

_SEPARATORS = frozenset({",", "\u3001", "\uff0c", ";", "\uff1b"})
COORDINATORS = frozenset({
    "and", "or", "as well as", "和", "与", "及", "以及", "或", "或者", "跟", "と", "や", "及び",
    "または", "및", "와", "과", "또는", "그리고", "이나", "나",
})  # fmt: skip
_ETC = frozenset({"\u7b49", "\u7b49\u7b49"})
"""等, 等等 ("and so on"): they follow a Chinese list's last item."""
MIN_KEPT_BETWEEN = 0.5
"""The share of the content words between two swapped words that must stand between them in
the reply too, for the swap to be two words trading places (not a phrase moved whole)."""


_KO_PARTICLES = {"은": "는", "이": "가", "을": "를", "에": "에게", "한테": "에게", "께": "에게",
                 "과": "와", "으로": "로", "이랑": "랑"}  # fmt: skip
"""Korean particles written two ways after a consonant or a vowel (은/는, 이/가, 을/를, 과/와,
으로/로), and the dative's forms (에, 에게, 한테, 께): one particle each, one role."""


def word_key(t: Token) -> str:
    """The word's key: its lemma, lower-cased; a Korean particle's allomorphs one key; an
    English possessive's ``'s`` left off (``China's`` is ``china``)."""
    return _word_key(t.tag, t.lemma)


@lru_cache(maxsize=16384)
def _word_key(tag: str, lemma: str) -> str:
    if tag.startswith("J"):
        return _KO_PARTICLES.get(lemma, lemma)
    key = lemma.lower()
    return key[:-2] if key.endswith(("'s", "\u2019s")) and len(key) > 3 else key


_SENTENCE_END = frozenset(".!?;\u3002\uff01\uff1f\uff1b")


def _ends_sentence(tokens: tuple[Token, ...], i: int) -> bool:
    """True if the punctuation ``tokens[i]`` ends a sentence. A Latin ``.``, ``!`` or ``?``
    does so only before a space or the end, as the analyser cuts sentences
    (``analysis.core``): not in ``etc.)`` or ``v1.2``."""
    t = tokens[i]
    if t.text not in _SENTENCE_END:
        return False
    if t.text not in ".!?":
        return True
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return nxt is None or nxt.start > t.start + len(t.text)


def sentences(tokens: tuple[Token, ...]) -> list[list[Token]]:
    """``tokens`` cut into sentences (:func:`_ends_sentence`), the ending punctuation kept."""
    out: list[list[Token]] = [[]]
    for i, t in enumerate(tokens):
        out[-1].append(t)
        if t.punct and _ends_sentence(tokens, i):
            out.append([])
    return [s for s in out if s]


_PASSIVE = {"zh": frozenset({"被", "由", "受", "受到"}), "ja": frozenset({"れる", "られる"}),
            "ko": frozenset({"되", "받"})}  # fmt: skip


def _places(
    tokens: tuple[Token, ...], language: str
) -> dict[tuple[str, int], tuple[int, int, str]]:
    """(content lemma, its occurrence: 0 for the first) -> (its index among the words, its
    sentence, the case particle after it: Korean and Japanese mark roles with particles, not
    word order)."""
    seen: Counter[str] = Counter()
    out: dict[tuple[str, int], tuple[int, int, str]] = {}
    sentence = word = 0
    for i, t in enumerate(tokens):
        if t.punct:
            sentence += _ends_sentence(tokens, i)
            continue
        if t.content and t.pos != "NUM":  # numbers in their context are the number check's
            key = (word_key(t), seen[word_key(t)])
            seen[word_key(t)] += 1
            particle = ""
            if language in ("ko", "ja"):
                for nxt in tokens[i + 1 : i + 4]:
                    if nxt.lemma in _ROLE_PARTICLES or nxt.tag[:3] in ("JKS", "JKO", "JX", "JKB"):
                        particle = word_key(nxt)
                        break
                    if nxt.content or nxt.punct:
                        break
            out[key] = (word, sentence, particle)
        word += 1
    return out


def _passive(tokens: tuple[Token, ...], language: str) -> bool:
    """True if ``tokens`` hold a passive (a change of voice reorders roles faithfully): in
    English a form of *be* before a participle (an adverb may stand between)."""
    if language == "en":
        words = [t for t in tokens if not t.punct]
        for i, t in enumerate(words):
            if t.lemma != "be":
                continue
            for nxt in words[i + 1 : i + 3]:
                if nxt.tag == "VBN" or nxt.text.lower().endswith(("ed", "en")):
                    return True
                if nxt.pos != "ADV":
                    break
        return False
    marks = _PASSIVE.get(language, frozenset())
    return any(t.lemma in marks for t in tokens)


_RELATIONAL = frozenset({"ADP", "PART", "SCONJ"})
_COPULA = frozenset({"be", "是", "为", "이다", "だ", "です", "である"})
_ROLE_PARTICLES = frozenset({"が", "を", "は", "に", "で", "と", "から", "まで", "より", "へ"})
"""Function words that relate two words (``than``, ``to``, ``not``, 比, 而非): two words with
one of them between stand in different roles, unlike two items joined by ``and``."""


def _coordinated(tokens: tuple[Token, ...], x: Token, y: Token, language: str) -> bool:
    """True if ``x`` and ``y`` are items of one list: between them, list items and separators
    or conjunctions (at least one), no clause: no auxiliary, subordinator or negator, no
    English verb, and in CJK text no comma (an ideographic comma 、 joins list items, a comma
    joins clauses)."""
    i, j = tokens.index(x), tokens.index(y)
    between = tokens[i + 1 : j]
    cjk = language in ("zh", "ja", "ko")
    joined = False
    item = 0
    for t in between:
        key = t.text.lower()
        if key in _SENTENCE_END or t.pos in ("AUX", "SCONJ") or _negator(t):
            return False
        if t.pos == "ADP" and not joined and key not in COORDINATORS:
            return False  # a relation before any conjunction (A 在 ... 优于 B): not a list
        if cjk and key in (",", "\uff0c"):
            return False
        if key in _SEPARATORS or key in COORDINATORS:
            joined, item = True, 0
        elif t.pos == "VERB" and not cjk and t.tag in ("VBD", "VBZ"):
            return False  # a finite English verb between: a clause, not a list
        elif not t.punct:
            item += 1
            if item > MAX_ITEM:
                return False  # a clause between, not a list item
    return joined


def _head(words: tuple[Token, ...], i: int, *, over: bool = False) -> str | None:
    """The key of the word ``words[i]`` modifies: the content word right after it, or with
    ``over`` after one particle or adposition (的, の) as well; ``None`` if there is none."""
    for t in words[i + 1 : i + (3 if over else 2)]:
        if t.content:
            return word_key(t)
        if not over or t.pos not in ("PART", "ADP"):
            return None
    return None


def _same_head(places: list[tuple[tuple[Token, ...], int]]) -> bool:
    """True if the words at ``places`` (words, index) all modify one word: each is followed by
    the same content word (``withdrawal key`` / ``signing key`` in block and reply), so that the
    tagger calling one a noun and the other a participle is no change of kind."""

    heads = {_head(words, i) for words, i in places}
    return len(heads) == 1 and None not in heads


def _owner(words: tuple[Token, ...], i: int) -> str | None:
    """The key of the content word that owns ``words[i]``: the one right before it over one
    particle or adposition (``ANN的分层团队``: ``ann``; ``LLMの学習``), ``None`` if there is
    no such particle or no content word before it."""
    if i < 2 or words[i - 1].pos not in ("PART", "ADP") or not words[i - 2].content:
        return None
    return word_key(words[i - 2])


def _head_over(words: tuple[Token, ...], i: int) -> str | None:
    return _head(words, i, over=True)


def _traded(
    old: tuple[tuple[Token, ...], int, int],
    new: tuple[tuple[Token, ...], int, int],
    neighbour: Callable[[tuple[Token, ...], int], str | None],
) -> bool:
    """True if two words traded a neighbour: each one's (``neighbour`` of its words and index)
    is the other's on the other side, two different words. With :func:`_head_over`, two names
    traded the items they own (``MHGPO的群组采样、ANN的分层团队`` ->
    ``ANN的群组采样、MHGPO的分层团队``); with :func:`_owner`, two items traded their owners, the
    owners kept in place (``ANN的分层团队、MasHost的图构建`` -> ``ANN的图构建、MasHost的分层团队``).
    Two list items reordered whole keep theirs."""
    (a, xa, ya), (b, xb, yb) = old, new
    nx, ny = neighbour(a, xa), neighbour(a, ya)
    return (
        nx is not None
        and ny is not None
        and nx != ny
        and (nx, ny) == (neighbour(b, yb), neighbour(b, xb))
    )


def _negator(t: Token) -> bool:
    """True for a negating particle (``not``, 不, 非, 안)."""
    return t.lemma.lower() in ("not", "n't", "不", "非", "没", "没有", "안", "못", "ない")


def _in_parentheses(tokens: tuple[Token, ...]) -> set[int]:
    """The indices among the words (punctuation left out, as :func:`_places` counts them) of
    the words that stand inside parentheses."""
    inside: set[int] = set()
    depth = word = 0
    for t in tokens:
        if t.punct:
            if t.text in ("(", "\uff08"):
                depth += 1
            elif t.text in (")", "\uff09") and depth:
                depth -= 1
            continue
        if depth:
            inside.add(word)
        word += 1
    return inside


def _outside(
    a: tuple[Token, ...], b: tuple[Token, ...], at: tuple[int, int]
) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
    """The keys of the words right before and right after the longest run of words around
    ``at`` (its index in ``a``, in ``b``) that both sides share, in ``a`` and in ``b``
    (``None`` at an end): the phrase the word moved with, and where it stands."""
    i, j = at
    left = 0
    while i - left > 0 and j - left > 0 and word_key(a[i - left - 1]) == word_key(b[j - left - 1]):
        left += 1
    right = 0
    while (
        i + right + 1 < len(a)
        and j + right + 1 < len(b)
        and word_key(a[i + right + 1]) == word_key(b[j + right + 1])
    ):
        right += 1

    def key(words: tuple[Token, ...], k: int) -> str | None:
        return word_key(words[k]) if 0 <= k < len(words) else None

    return (
        (key(a, i - left - 1), key(a, i + right + 1)),
        (key(b, j - left - 1), key(b, j + right + 1)),
    )


def _moved_whole(
    a: tuple[Token, ...],
    b: tuple[Token, ...],
    x: tuple[int, int],
    y: tuple[int, int],
    sides: int = 2,
) -> bool:
    """True if neither of the phrases around the words at ``x`` and ``y`` (each its index in
    ``a``, in ``b``; :func:`_outside`) took the other's place: none stands next to a word
    that stood next to the other (on the same side) and not next to itself. Two phrases
    that traded slots do (``in a single-argument form, with ... or in a two-argument form.``
    -> ``in a two-argument form, with ... or in a single-argument form.``); a phrase moved to
    the front or the end of its sentence does not. ``sides``: 2 to read the words before and
    after, 1 the word before only (English: a sentence's last phrase, whichever it is, stands
    before the sentence's citation)."""
    (old_x, new_x), (old_y, new_y) = _outside(a, b, x), _outside(a, b, y)

    def took(
        own: tuple[str | None, ...], other: tuple[str | None, ...], new: tuple[str | None, ...]
    ) -> bool:
        read = zip(own[:sides], other[:sides], new[:sides], strict=True)
        return any(n is not None and n == t != o for o, t, n in read)

    return not took(old_x, old_y, new_x) and not took(old_y, old_x, new_y)


def swap_reasons(pair: Pair) -> list[Reason]:
    """``swapped words "smaller" <-> "larger"`` for the first pair of content words that traded
    places (see the module docstring); empty if none did."""
    language = pair.old.language
    a, b = pair.old.words, pair.new.words
    place_a, place_b = _places(pair.old.tokens, language), _places(pair.new.tokens, language)
    if _passive(pair.old.tokens, language) != _passive(pair.new.tokens, language):
        return []
    shared = sorted((k for k in place_a if k in place_b), key=lambda k: place_a[k][0])
    glossed: tuple[set[int], set[int]] = (set(), set())
    if language == "en":  # Chinese writes a label in parentheses (奖励聚合 (ARIA)): a swap
        glossed = _in_parentheses(pair.old.tokens), _in_parentheses(pair.new.tokens)
    # each word's key where it counts between two swapped words (a content or relational word)
    keys_a = [word_key(t) if t.content or t.pos in _RELATIONAL else None for t in a]
    keys_b = [word_key(t) if t.content or t.pos in _RELATIONAL else None for t in b]
    for i, x in enumerate(shared):
        (xa, sxa, px_a), (xb, sxb, px_b) = place_a[x], place_b[x]
        for y in shared[i + 1 :]:
            (ya, sya, py_a), (yb, syb, py_b) = place_a[y], place_b[y]
            if yb > xb or sxa != sya or sxb != syb:
                continue  # the same order, or not one sentence on both sides
            if {xa, ya} & glossed[0] or {xb, yb} & glossed[1]:
                continue  # an English gloss in parentheses moved with what it glosses (a
                # list's items reordered, "leadership (scholarch) of the Academy" ->
                # "leadership of the Academy (the role of scholarch)")
            if (
                a[xa].pos != a[ya].pos
                and {a[xa].pos, a[ya].pos} != {"NOUN", "PROPN"}
                and not _same_head([(a, xa), (a, ya), (b, xb), (b, yb)])
            ):
                continue  # words of different kinds: a sentence restructured
            if language in ("ko", "ja") and not (px_a and px_a == py_b and py_a == px_b != px_a):
                continue  # each kept its particle: a phrase moved with its role
            if _coordinated(pair.old.tokens, a[xa], a[ya], language) and not any(
                _traded((a, xa, ya), (b, xb, yb), n) for n in (_head_over, _owner)
            ):
                continue  # "A, B and C" -> "C, B and A": items of one list reordered
            if _moved_whole(a, b, (xa, xb), (ya, yb), 1 if language == "en" else 2) or all(
                t.lemma in _COPULA or t.pos == "DET" for t in a[xa + 1 : ya]
            ):
                continue  # neither phrase took the other's place ("strong community
                # engagement ... as of February" -> "As of February ..., reflecting strong
                # community engagement"); or "A is the B" -> "B is the A", an identity
            between_a = [k for k in keys_a[xa + 1 : ya] if k is not None]
            between_b = {k for k in keys_b[yb + 1 : xb] if k is not None}
            if not between_a:
                continue
            kept = sum(1 for k in between_a if k in between_b)
            if (
                kept >= MIN_KEPT_BETWEEN * len(between_a)
                and len(between_b) <= 2 * len(between_a) + 2
            ):
                return [Reason("swapped words", f'"{a[xa].text}" <-> "{a[ya].text}"')]
    return []


MAX_ITEM = 5
_CONNECTIVE = frozenset({"ADV", "CCONJ", "SCONJ"})
"""Parts of speech of a first "item" that is a connective (``However, A, B and C``)."""
"""Words at most in one item of an enumeration (longer runs between commas are clauses)."""


def _nominal(item: list[Token]) -> bool:
    """True if an item ends in a noun (its particles aside): a list item, not a clause."""
    words = [t for t in item if t.pos not in ("ADP", "PART")]
    return bool(words) and words[-1].pos in ("NOUN", "PROPN", "NUM")


def _item(tokens: tuple[Token, ...], i: int, language: str) -> bool:
    """True if the verb ``tokens[i]`` is part of a list item, not the predicate that ends the
    list: a Chinese word or an English gerund (``browser caching``) that a separator, a
    conjunction or 等 ("and so on") follows, the verb and one word more at most (jieba tags the
    率 of 召回率 and the 计算 of 量子计算 verbs). An English finite verb ends the list even so
    (``as every analyst expected and as the market ...``)."""
    if language != "zh" and tokens[i].tag != "VBG":
        return False
    for t in tokens[i + 1 : i + 3]:  # 召回 率 、: the verb and one word more
        nxt = t.text.lower()
        if nxt in _SEPARATORS or nxt in COORDINATORS or nxt in _ETC:
            return True
        if t.punct or t.pos not in ("NOUN", "VERB"):
            return False
    return False


def _enumerations(tokens: tuple[Token, ...], language: str = "en") -> list[list[list[Token]]]:
    """The enumerations of ``tokens``: each a list of items, each item its tokens. An
    enumeration is three or more short items (:data:`MAX_ITEM` words) joined by ideographic
    commas, or by commas with a conjunction before the last item."""
    out: list[list[list[Token]]] = []
    items: list[list[Token]] = [[]]
    joiners: list[str] = []

    def close() -> None:
        full = [i for i in items if i]
        joined = joiners
        if full and all(t.pos in _CONNECTIVE for t in full[0]):
            full, joined = full[1:], joiners[1:]  # "However, A, B and C": no item
        if language in ("ja", "ko") and not all(_nominal(i) for i in full):
            return  # 、 and , also join clauses there: a list is of nouns
        if (
            len(full) >= 3
            and all(len(i) <= MAX_ITEM for i in full[1:-1])
            and (all(j in ("\u3001", "\u3001") for j in joined) or joined[-1:] != [","])
            and len(joined) >= 2
        ):
            out.append(full)

    clause_comma = language in ("zh", "ja")  # lists take 、 there; a comma joins clauses
    for i, t in enumerate(tokens):
        key = t.text.lower()
        if clause_comma and key in (",", "\uff0c"):
            close()
            items, joiners = [[]], []
            continue
        if key in _SEPARATORS or key in COORDINATORS:
            if items[-1]:
                items.append([])
                joiners.append("," if key in (",", "\uff0c") else key)
            elif key in COORDINATORS and joiners:
                joiners[-1] = key  # "A, B, and C": the conjunction joins the last item
            continue
        verb = t.pos in ("VERB", "AUX") and len(items) > 1 and not _item(tokens, i, language)
        if t.punct or verb:
            close()
            items, joiners = [[]], []
            if not t.punct:
                items[-1].append(t)
            continue
        items[-1].append(t)
    close()
    return out


_NOUN_PHRASE = frozenset({"NOUN", "PROPN", "DET"})


def _korean_pairs(tokens: tuple[Token, ...]) -> list[list[list[Token]]]:
    """Two noun phrases joined by a coordinating particle (과/와, tagged ``JC``) or 및: ``고위
    팀과 그 하위 팀``; a Korean list of two is said so, without a comma."""
    out: list[list[list[Token]]] = []
    for i, t in enumerate(tokens):
        if not (t.tag.startswith("JC") or t.lemma == "및"):
            continue
        before: list[Token] = []
        for prev in reversed(tokens[:i]):
            if prev.pos not in _NOUN_PHRASE or len(before) == MAX_ITEM:
                break
            before.insert(0, prev)
        after: list[Token] = []
        for nxt in tokens[i + 1 :]:
            if nxt.pos not in _NOUN_PHRASE or len(after) == MAX_ITEM:
                break
            after.append(nxt)
        if _nominal(before) and _nominal(after):
            out.append([before, after])
    return out


_NOMINAL = frozenset({"NOUN", "PROPN", "ADJ"})


def _pairs(tokens: tuple[Token, ...], mark: str) -> list[list[list[Token]]]:
    """The two nouns or adjectives ``mark`` joins (Chinese 稀疏、高维 with the ideographic
    comma, Japanese 収集・検証 with the middle dot), where no other mark joins them to more: a
    list of two is said so, and its items are the words next to the mark (the words before
    them may be the clause's)."""
    out: list[list[list[Token]]] = []
    commas = [i for i, t in enumerate(tokens) if t.text == mark]
    for i in commas:
        if i - 2 in commas or i + 2 in commas or not 0 < i < len(tokens) - 1:
            continue  # a longer list: the enumerations'
        before, after = tokens[i - 1], tokens[i + 1]
        if all(t.content and t.pos in _NOMINAL for t in (before, after)):
            out.append([[before], [after]])
    return out


_PAIR_MARKS = {"zh": "\u3001", "ja": "\u30fb"}
"""The mark that joins a list of two in a language (、 in Chinese, ・ in Japanese)."""


def _two(tokens: tuple[Token, ...], language: str) -> list[list[list[Token]]]:
    mark = _PAIR_MARKS.get(language)
    return _pairs(tokens, mark) if mark else []


def list_reasons(pair: Pair) -> list[Reason]:
    """``lost list element "astronomy"`` for each item of the block's enumerations whose
    content words are all gone from the reply (see the module docstring)."""
    reply_keys = {word_key(t) for t in pair.new.words} | {t.text.lower() for t in pair.new.words}
    reply_text = pair.reply_prose.lower()
    reasons: list[Reason] = []
    reply_content = " ".join(word_key(t) for t in pair.new.words if t.content)
    lists = _enumerations(pair.old.tokens, pair.old.language)
    if pair.old.language == "ko":
        lists += _korean_pairs(pair.old.tokens)
    lists += _two(pair.old.tokens, pair.old.language)
    for items in lists:
        for n, item in enumerate(items):
            others = {word_key(t) for m, other in enumerate(items) if m != n for t in other}
            content = [t for t in item if t.content and word_key(t) not in others]
            if not content:  # every word also in another item: the item is its sequence
                sequence = " ".join(word_key(t) for t in item if t.content)
                if sequence and f" {sequence} " not in f" {reply_content} ":
                    reasons.append(
                        Reason("lost list element", f'"{" ".join(t.text for t in item)}"')
                    )
                continue
            if all(
                word_key(t) not in reply_keys and t.text.lower() not in reply_text for t in content
            ):
                words = " ".join(t.text for t in item)
                reasons.append(Reason("lost list element", f'"{words}"'))
    return reasons[:1]


def added_list_reasons(pair: Pair) -> list[Reason]:
    """``added list element "security"`` for an item of the reply's enumerations whose content
    words are all new: not in the block, nor a word of it said again
    (:func:`~owlai_refine.guard.edits.restated`) (an item added to a list, ``speed and
    uptime`` -> ``speed, security, and uptime``)."""
    language = pair.old.language
    block = pair.old.words
    block_keys = {word_key(t) for t in block} | {t.text.lower() for t in block}
    block_text = pair.block.lower()  # the whole block: a word of its math or code is not new
    for items in _enumerations(pair.new.tokens, language) + _two(pair.new.tokens, language):
        for item in items:
            content = [t for t in item if t.content]
            if (
                not content
                or not _nominal(item)
                or any(word_key(t) in block_keys or t.text.lower() in block_text for t in content)
            ):
                continue
            if any(restated(t, pair.new, pair.old) for t in content):
                continue  # an item said in other words
            return [Reason("added list element", f'"{" ".join(t.text for t in item)}"')]
    return []
