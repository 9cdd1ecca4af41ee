"""The per-language word tables of the meaning check, read from ``guard/lexicon/*.toml``.

Pure code, no IO beyond reading the package's own data files once. A table is data, not code:
adding a language is adding a file (``language``, ``script``, categories as described in
``lexicon/en.toml``). :func:`tables_for` picks the tables that apply to a block: the Latin table
always (English terms inside any text), plus the table of the block's CJK label (``zh``, ``ja``,
``ko``) when there is one. A language with no table is judged by the language-independent rules
of ``meaning`` only.

Each category compiles to one regular expression whose alternatives are tried longest first, so
a compound counts once (没有 is one negator, not 没 + 有), after its ``exclude`` forms have been
blanked out (非常 "very" is no negation).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any, Literal

__all__ = ["Category", "Table", "all_tables", "tables_for"]

Kind = Literal["count", "opposites", "values", "numerals", "counters", "units"]
_KINDS = frozenset({"count", "opposites", "values", "numerals", "counters", "units"})
_LATIN_EDGE = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"


def _alternation(forms: list[str], *, words: bool, literal: bool) -> str:
    """One regex over ``forms``, longest first; ``words``: whole Latin words (the word edges
    checked once around the alternation), ``*`` a suffix."""
    parts: list[str] = []
    for form in sorted(set(forms), key=len, reverse=True):
        if words:
            stem = form[:-1] if form.endswith("*") else form
            body = re.escape(stem).replace(r"\ ", r"\s+")
            parts.append(body + (r"[a-z]*" if form.endswith("*") else ""))
        else:
            parts.append(re.escape(form) if literal else form)
    if not parts:
        return r"(?!x)x"
    if words:
        return f"{_LATIN_EDGE[0]}(?:{'|'.join(parts)}){_LATIN_EDGE[1]}"
    return "|".join(parts)


def _matcher(form: str, latin: bool) -> tuple[str, bool]:
    """``(stem, is_prefix)``: how a matched word is tested against one side of a pair."""
    form = form.lower()
    if form.endswith("*"):
        return form[:-1], True
    return form, not latin  # a CJK form also counts inside a longer match (やす in やすい)


_FOUND: dict[tuple[int, str], tuple[Category, Counter[str]]] = {}
"""What :meth:`Category.found` read, by (the category's id, text), with the category itself (an
id may be reused once a category is gone)."""
_FOUND_KEPT = 4096


@dataclass(frozen=True, slots=True)
class Category:
    """One category of a table: ``name`` (``negation``, ``month``, ...), its ``kind`` (see
    ``lexicon/en.toml``) and its compiled patterns."""

    name: str
    kind: Kind
    pattern: re.Pattern[str] | None = None
    """``count``/``numerals``: what is counted; ``values``: any form."""
    exclude: re.Pattern[str] | None = None
    pairs: tuple[tuple[tuple[str, bool], tuple[str, bool], str, str], ...] = ()
    """``opposites``: ``(side a, side b, a's form, b's form)``, each side ``(stem, is_prefix)``;
    :attr:`pattern` finds every form of every pair in one pass."""
    values: tuple[tuple[str, re.Pattern[str]], ...] = ()
    """``values``/``units``: ``(canonical value, pattern of its forms)``, longest forms first."""
    only_lost: bool = False
    """``count``: only a fall in the count is a change (a word an edit may make explicit)."""
    prefixes: tuple[str, ...] = ()
    """``count``: negative prefixes; ``not X`` in one text and ``<prefix>X`` in the other are
    the same negation (``not valid`` / ``invalid``)."""
    exact: frozenset[str] = frozenset()
    """Latin tables: the one-word forms, looked up in a set (lower case unless
    :attr:`case_sensitive`); :attr:`pattern` then holds only the other forms."""
    stems: tuple[str, ...] = ()
    """Latin tables: the one-word forms ending in ``*``, as prefixes."""
    word_values: tuple[tuple[str, str], ...] = ()
    """``values`` in Latin tables: one-word form -> canonical value."""
    case_sensitive: bool = False
    voice: bool = False
    """``opposites`` (English tense): a past of *be* that only makes a past the other text
    writes in the active voice passive (``impacted Plato`` -> ``Plato was impacted``) is not
    counted (``guard.tense.passive_pasts``)."""

    def blank(self, text: str) -> str:
        """``text`` with this category's excluded forms replaced by spaces."""
        if self.exclude is None:
            return text
        return self.exclude.sub(lambda m: " " * len(m.group()), text)

    def found(self, text: str) -> Counter[str]:
        """``count``/``numerals``/``values``: what ``text`` has, as a multiset of forms
        (``count``: as written, lower-cased; ``numerals``: the numeral; ``values``: the
        canonical value). A new counter each call (the last texts' are kept: several checks
        ask the same category of the same text)."""
        key = (id(self), text)
        hit = _FOUND.get(key)
        if hit is None or hit[0] is not self:  # an id may name a category made since
            if len(_FOUND) >= _FOUND_KEPT:
                _FOUND.clear()
            hit = _FOUND[key] = (self, self._found(text))
        return Counter(hit[1])

    def _found(self, text: str) -> Counter[str]:
        text = self.blank(text)
        out: Counter[str] = Counter()
        if self.exact or self.stems:
            words = _latin_words(text, lower=not self.case_sensitive)
            hits = words.keys() & self.exact  # most categories have none: no loop in Python
            if hits or self.stems:
                values = dict(self.word_values)
                for word, n in words.items():  # in the text's order, for the reasons
                    if word in hits:
                        out[values.get(word, word)] += n
                    elif self.stems and word not in self.exact and word.startswith(self.stems):
                        out[word] += n
        if self.pattern is None:
            return out
        if self.kind == "values":
            for m in self.pattern.finditer(text):
                out[self._value_at(text, m)] += 1
        else:
            for m in self.pattern.finditer(text):
                groups = m.groupdict()
                got = groups.get("value") or groups.get("word") or m.group()
                out[" ".join(got.lower().split())] += 1
        return out

    def written(self, text: str) -> dict[str, str]:
        """``values``/``numerals``: each form :meth:`found` counts in ``text`` -> the words of
        ``text`` it was read from, as written there (the first, when several): ``"past"`` ->
        ``"지난"``, ``"3"`` -> ``"三"``; for the reasons, which quote words, not values."""
        text = self.blank(text)
        out: dict[str, str] = {}
        if self.exact or self.stems:
            values = dict(self.word_values)
            for m in re.finditer(_WORD, text):
                word = m.group() if self.case_sensitive else m.group().lower()
                if word in self.exact:
                    out.setdefault(values.get(word, word), m.group())
                elif self.stems and word.startswith(self.stems):
                    out.setdefault(word, m.group())
        if self.pattern is not None:
            for m in self.pattern.finditer(text):
                if self.kind == "values":
                    out.setdefault(self._value_at(text, m), m.group().strip())
                else:
                    groups = m.groupdict()
                    got = groups.get("value") or groups.get("word") or m.group()
                    out.setdefault(" ".join(got.lower().split()), " ".join(m.group().split()))
        return out

    def has(self, word: str) -> bool:
        """True if the single word ``word`` is one of a Latin category's one-word forms."""
        key = word if self.case_sensitive else word.lower()
        return key in self.exact or bool(self.stems and key.startswith(self.stems))

    def _value_at(self, text: str, m: re.Match[str]) -> str:
        """The canonical value of the form ``m`` found in ``text``: that of the first value
        whose pattern matches the same span there (a pattern may look around the form:
        ``(?<=[0-9])以上``)."""
        for value, pattern in self.values:
            found = pattern.match(text, m.start())
            if found is not None and found.end() == m.end():
                return value
        return self.value_of(m.group())

    def value_of(self, form: str) -> str:
        """The canonical value of one written form (``values``/``units`` categories): the
        first listed; ``form`` itself when none lists it."""
        for value, pattern in self.values:
            if pattern.fullmatch(form):
                return value
        return form

    def values_of(self, form: str) -> tuple[str, ...]:
        """Every canonical value one written form may stand for, in table order: ``b`` is
        ``("billion", "byte")``, ``m`` ``("million", "meter")``; ``(form,)`` when none
        lists it."""
        return tuple(v for v, pattern in self.values if pattern.fullmatch(form)) or (form,)


@dataclass(frozen=True, slots=True)
class Table:
    """One language's table: ``language`` (``en``, ``zh``, ...), the ``script`` label it applies
    to (``latin`` applies to every text) and its categories in file order."""

    language: str
    script: str
    categories: tuple[Category, ...]

    def category(self, kind: Kind) -> tuple[Category, ...]:
        """The categories of one kind."""
        return tuple(c for c in self.categories if c.kind == kind)


def _category(raw: dict[str, Any], latin: bool) -> Category:
    kind = raw["kind"]
    if kind not in _KINDS:
        raise ValueError(f"lexicon category {raw.get('name')!r}: unknown kind {kind!r}")
    flags = 0 if raw.get("case_sensitive") else re.IGNORECASE
    excluded = [f"(?:{p})" for p in raw.get("exclude_patterns", [])]
    if raw.get("exclude"):
        excluded.insert(0, _alternation(raw["exclude"], words=latin, literal=latin))
    exclude = re.compile("|".join(excluded), flags) if excluded else None
    if latin and kind in ("count", "opposites", "values"):
        return _latin_category(raw, kind, exclude)
    if kind == "opposites":
        pairs = tuple(
            (
                _matcher(a, latin),
                _matcher(b, latin),
                a.rstrip("*"),
                b.rstrip("*"),
            )
            for a, b in raw["pairs"]
        )
        every = [form for pair in raw["pairs"] for form in pair]
        pattern = re.compile(_alternation(every, words=latin, literal=latin), flags)
        return Category(raw["name"], kind, pattern, exclude=exclude, pairs=pairs)
    if kind in ("values", "units"):
        values = raw.get("values", {})
        every = [form for forms in values.values() for form in forms]
        patterned = _value_patterns(raw, flags)
        per_value = (
            tuple(
                (str(v), re.compile(_alternation(fs, words=latin, literal=True), flags))
                for v, fs in values.items()
            )
            + patterned
        )
        alternatives = [_alternation(every, words=latin, literal=True)] if every else []
        alternatives += [p.pattern for _, p in patterned]
        pattern = re.compile("|".join(alternatives), flags)
        return Category(raw["name"], kind, pattern, exclude, values=per_value)
    if kind in ("numerals", "counters"):
        return Category(raw["name"], kind, re.compile(raw["regex"], flags), exclude)
    words = _alternation(list(raw.get("words", [])), words=latin, literal=True)
    raw_patterns = _alternation(list(raw.get("patterns", [])), words=False, literal=False)
    pattern = re.compile(f"{words}|{raw_patterns}", flags)
    prefixes = tuple(raw.get("prefixes", ()))
    only_lost = bool(raw.get("only_lost", False))
    return Category(raw["name"], kind, pattern, exclude, only_lost=only_lost, prefixes=prefixes)


_WORD = re.compile(r"[A-Za-z0-9]+")
_SIMPLE = re.compile(r"[A-Za-z0-9]+\*?")


@lru_cache(maxsize=16)
def _latin_words(text: str, *, lower: bool) -> Counter[str]:
    """The alphanumeric runs of ``text`` (lower-cased if ``lower``), each with its count, in
    the order they first occur: read once for every category of a check (the cache holds the
    last texts; callers only read it)."""
    return Counter(_WORD.findall(text.lower() if lower else text))


def _split_forms(forms: list[str], case_sensitive: bool) -> tuple[list[str], list[str], list[str]]:
    """``(exact one-word forms, prefix stems, other forms)`` of a Latin table's category."""
    exact, stems, other = [], [], []
    for form in forms:
        key = form if case_sensitive else form.lower()
        if not _SIMPLE.fullmatch(form):
            other.append(form)
        elif key.endswith("*"):
            stems.append(key[:-1])
        else:
            exact.append(key)
    return exact, stems, other


def _latin_category(raw: dict[str, Any], kind: Kind, exclude: re.Pattern[str] | None) -> Category:
    """A Latin table's ``count``, ``opposites`` or ``values`` category: one-word forms in a set
    and a tuple of stems, the rest (multi-word forms, raw patterns) in one regex."""
    case_sensitive = bool(raw.get("case_sensitive"))
    flags = 0 if case_sensitive else re.IGNORECASE
    word_values: list[tuple[str, str]] = []
    per_value: list[tuple[str, re.Pattern[str]]] = []
    if kind == "opposites":
        forms = [form for pair in raw["pairs"] for form in pair]
    elif kind == "values":
        forms = [form for fs in raw.get("values", {}).values() for form in fs]
        for value, fs in raw.get("values", {}).items():
            exact_v, _, other_v = _split_forms(list(fs), case_sensitive)
            word_values += [(form, str(value)) for form in exact_v]
            if other_v:
                alternation = _alternation(other_v, words=True, literal=True)
                per_value.append((str(value), re.compile(alternation, flags)))
    else:
        forms = list(raw.get("words", []))
    exact, stems, other = _split_forms(forms, case_sensitive)
    parts = [_alternation(other, words=True, literal=True)] if other else []
    if raw.get("patterns"):
        parts.append(_alternation(list(raw["patterns"]), words=False, literal=False))
    if kind == "values" and raw.get("value_patterns"):
        patterned = _value_patterns(raw, flags)
        per_value += patterned
        parts += [p.pattern for _, p in patterned]
    pattern = re.compile("|".join(parts), flags) if parts else None
    pairs = tuple(
        (_matcher(a, True), _matcher(b, True), a.rstrip("*"), b.rstrip("*"))
        for a, b in raw.get("pairs", [])
    )
    return Category(
        raw["name"],
        kind,
        pattern,
        exclude,
        pairs=pairs,
        values=tuple(per_value),
        only_lost=bool(raw.get("only_lost", False)),
        prefixes=tuple(raw.get("prefixes", ())),
        exact=frozenset(exact),
        stems=tuple(stems),
        word_values=tuple(word_values),
        case_sensitive=case_sensitive,
        voice=bool(raw.get("voice", False)),
    )


def _value_patterns(raw: dict[str, Any], flags: int) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """A ``values`` category's ``[category.value_patterns]``: canonical value -> regular
    expressions of its forms (a bound on a number: ``up to 400``, ``30%以上``)."""
    return tuple(
        (str(v), re.compile("|".join(f"(?:{p})" for p in pats), flags))
        for v, pats in raw.get("value_patterns", {}).items()
    )


def _load(name: str) -> Table:
    data = tomllib.loads(resources.files(__package__).joinpath("lexicon", name).read_text("utf-8"))
    latin = data["script"] == "latin"
    cats = tuple(_category(c, latin) for c in data.get("category", []))
    return Table(data["language"], data["script"], cats)


@cache
def all_tables() -> tuple[Table, ...]:
    """Every table shipped in ``guard/lexicon``, read and compiled once (sorted by file name).
    Raises ``ValueError`` for a malformed table (a test loads them all)."""
    folder = resources.files(__package__).joinpath("lexicon")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".toml"))
    return tuple(_load(n) for n in names)


def tables_for(label: str) -> tuple[Table, ...]:
    """The tables for a block whose language label is ``label`` (``guard.language``): the Latin
    tables always, and the table whose ``script`` is ``label`` if there is one."""
    return tuple(t for t in all_tables() if t.script in ("latin", label))
