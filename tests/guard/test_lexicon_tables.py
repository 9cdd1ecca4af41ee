"""Every entry of every word table does what ``lexicon/en.toml``'s header says it does.

The oracle is the TOML files read here with ``tomllib``, not the product's loader: for each form
a table lists, the compiled category must find it once (whole Latin words, case folded unless the
category is ``case_sensitive``, a trailing ``*`` any ending, a space any run of white space; CJK
forms anywhere), map it to its canonical value, blank its ``exclude`` forms, and a swap of the two
sides of an ``opposites`` pair must be reported as a flipped polarity.

Each test reads the tables afresh (the loader's cache cleared first), so a fault in the loading
code shows here and not only through the labelled replies it happens to change.
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest

from owlai_refine.guard import lexicon
from owlai_refine.guard.lexicon import Category, Table, all_tables
from owlai_refine.guard.meaning import polarity_problems

_FOLDER = resources.files("owlai_refine.guard").joinpath("lexicon")
RAW: dict[str, dict[str, Any]] = {
    p.name: tomllib.loads(p.read_text("utf-8"))
    for p in sorted(_FOLDER.iterdir(), key=lambda p: p.name)
    if p.name.endswith(".toml")
}
# A sentence frame per script that none of the tables counts, for the opposites swap.
FRAME = {
    "latin": "Throughput {} sharply.",
    "zh": "吞吐量{}。",
    "ja": "性能が{}。",
    "ko": "성능이 {}.",
}


@pytest.fixture(autouse=True)
def fresh_tables() -> Iterator[None]:
    """Read and compile the tables anew for each test, and leave a fresh cache behind."""
    all_tables.cache_clear()
    lexicon._latin_words.cache_clear()
    yield
    all_tables.cache_clear()
    lexicon._latin_words.cache_clear()


def _loaded(raw_name: str) -> Table:
    language = RAW[raw_name]["language"]
    (table,) = [t for t in all_tables() if t.language == language]
    return table


def _pairs() -> Iterator[tuple[str, dict[str, Any], Category, bool]]:
    """``(file, raw category, loaded category, latin)`` for every category of every table."""
    for name, raw in RAW.items():
        table = _loaded(name)
        assert [c.name for c in table.categories] == [c["name"] for c in raw["category"]]
        for raw_cat, cat in zip(raw["category"], table.categories, strict=True):
            yield name, raw_cat, cat, raw["script"] == "latin"


def _instance(form: str) -> str:
    """A written word for a table form: ``increas*`` -> ``increass`` (any ending)."""
    return form[:-1] + "s" if form.endswith("*") else form


_SIMPLE = re.compile(r"[A-Za-z0-9]+")


def _excluded(cat: Category, text: str) -> bool:
    return cat.exclude is not None and cat.exclude.search(text) is not None


def test_the_tables_load_in_file_order_with_their_language_and_script() -> None:
    tables = all_tables()
    assert [(t.language, t.script) for t in tables] == [
        (raw["language"], raw["script"]) for raw in RAW.values()
    ]
    for name, raw_cat, cat, _ in _pairs():
        assert cat.kind == raw_cat["kind"], (name, cat.name)
        assert cat.only_lost == bool(raw_cat.get("only_lost", False)), (name, cat.name)
        assert cat.prefixes == tuple(raw_cat.get("prefixes", ())), (name, cat.name)
        assert cat.case_sensitive == bool(raw_cat.get("case_sensitive")) or not cat.exact


def test_every_counted_word_is_found_once_as_a_whole_word() -> None:
    wrong: list[str] = []
    for name, raw_cat, cat, latin in _pairs():
        if raw_cat["kind"] not in ("count", "opposites"):
            continue
        words = raw_cat.get("words") or [f for pair in raw_cat.get("pairs", []) for f in pair]
        if not latin:  # CJK tables list their forms as patterns; the literal ones are words
            words = words + [p for p in raw_cat.get("patterns", []) if re.escape(p) == p]
        for form in words:
            word = _instance(form) if latin else form.rstrip("*")
            text = f"({word})" if latin else word
            if _excluded(cat, text):
                continue
            # the form itself, once (a compound such as "short-term" may count "short" too)
            key = word if raw_cat.get("case_sensitive") else word.lower()
            got = cat.found(text)
            if got[key] != 1:
                wrong.append(f"{name} {cat.name}: {text!r} -> {dict(got)}")
            if not latin:
                continue
            # case folded unless the category says otherwise
            other_case = word.swapcase()
            n = cat.found(f"({other_case})")[other_case.lower()]
            if raw_cat.get("case_sensitive"):
                if other_case not in words and n != 0:
                    wrong.append(f"{name} {cat.name}: {other_case!r} counted (case-sensitive)")
            elif n != 1:
                wrong.append(f"{name} {cat.name}: {other_case!r} not counted")
            # a whole word: not inside a longer one
            if _SIMPLE.fullmatch(word) and sum(cat.found(f"(q{word}q)").values()) != 0:
                wrong.append(f"{name} {cat.name}: counted inside 'q{word}q'")
            # a space in a form is any run of white space
            spread = word.replace(" ", "\n  ")
            if " " in word and cat.found(f"({spread})")[" ".join(key.split())] != 1:
                wrong.append(f"{name} {cat.name}: {word!r} not found across a line break")
    assert wrong == []


def test_every_value_form_is_read_as_its_value() -> None:
    wrong: list[str] = []
    for name, raw_cat, cat, latin in _pairs():
        if raw_cat["kind"] not in ("values", "units"):
            continue
        fold = (lambda f: f) if raw_cat.get("case_sensitive") else str.lower
        meanings: dict[str, set[str]] = {}  # a form -> every value that lists it
        for value, forms in raw_cat.get("values", {}).items():
            for form in forms:
                meanings.setdefault(fold(form), set()).add(str(value))
        for value, forms in raw_cat.get("values", {}).items():
            for form in forms:
                text = f"({form})" if latin else form
                if _excluded(cat, text):
                    continue
                variants = [text]
                if latin and not raw_cat.get("case_sensitive") and form.upper() != form:
                    variants.append(f"({form.upper()})")
                for variant in variants:
                    if raw_cat["kind"] == "values":
                        # values compare as sets: "a single" says 1 (and "single" 1 again)
                        found = cat.found(variant)
                        if set(found) != {str(value)} or min(found.values()) < 1:
                            wrong.append(f"{name} {cat.name}: {variant!r} -> {found}, not {value}")
                        continue
                    assert cat.pattern is not None
                    m = cat.pattern.search(variant)
                    said = set(cat.values_of(m.group())) if m else set()
                    if (
                        m is None
                        or said != meanings[fold(form)]
                        or cat.value_of(m.group()) not in said
                    ):
                        wrong.append(f"{name} {cat.name}: unit {variant!r} read as {said}")
                if latin and _SIMPLE.fullmatch(form) and sum(cat.found(f"(q{form}q)").values()):
                    wrong.append(f"{name} {cat.name}: {form!r} read inside 'q{form}q'")
    assert wrong == []


@pytest.mark.parametrize(
    ("language", "text", "values"),
    [
        ("en", "It serves up to 400 tokens, more than 5 users and 3 or more nodes.",
         {"ceiling": 1, "floor": 2}),
        ("en", "Up to date, and more than ever.", {}),
        ("ko", "한 명 이상의 위원과 최대 3개의 팀, 최대한 빨리, 이상적인 구조",
         {"floor": 1, "ceiling": 1}),
        ("zh", "至少3个数据集、30%以上的用户\uff0c以下几个方面", {"floor": 2}),
        ("ja", "3つ以上のモデル、最大5件、以上のように", {"floor": 1, "ceiling": 1}),
    ],
)  # fmt: skip
def test_a_bound_is_read_only_on_a_number(language: str, text: str, values: dict[str, int]) -> None:
    (table,) = [t for t in all_tables() if t.language == language]
    (bound,) = [c for c in table.categories if c.name == "bound"]
    assert dict(bound.found(text)) == values


def test_a_case_sensitive_value_is_not_read_in_another_case() -> None:
    wrong: list[str] = []
    for name, raw_cat, cat, latin in _pairs():
        if not (latin and raw_cat.get("case_sensitive") and raw_cat["kind"] == "values"):
            continue
        every = {f for forms in raw_cat["values"].values() for f in forms}
        for form in every:
            lower = form.lower()
            if lower != form and lower not in every and sum(cat.found(f"({lower})").values()):
                wrong.append(f"{name} {cat.name}: {lower!r} read though only {form!r} is listed")
    assert wrong == []


def test_an_excluded_form_is_never_counted() -> None:
    wrong: list[str] = []
    for name, raw_cat, cat, _ in _pairs():
        for form in raw_cat.get("exclude", []):
            if re.escape(form) != form:  # a pattern, not a literal form
                continue
            if cat.kind in ("count", "values", "numerals") and cat.found(form).total():
                wrong.append(f"{name} {cat.name}: excluded {form!r} -> {dict(cat.found(form))}")
            if cat.blank(form).strip():
                wrong.append(f"{name} {cat.name}: {form!r} not blanked")
    assert wrong == []


def test_swapping_the_sides_of_an_opposites_pair_flips_polarity() -> None:
    wrong: list[str] = []
    for name, raw_cat, cat, latin in _pairs():
        if raw_cat["kind"] != "opposites":
            continue
        script = RAW[name]["script"]
        frame = FRAME[script]
        for a, b in raw_cat["pairs"]:
            a_word, b_word = (_instance(a), _instance(b)) if latin else (a, b)
            block, reply = frame.format(a_word), frame.format(b_word)
            if _excluded(cat, block) or _excluded(cat, reply):
                continue
            for one, other in ((block, reply), (reply, block)):
                reasons = polarity_problems(one, other, script)
                # "非公開" -> "公開" may be the negation's reason: either is a flip
                if not any(r.group.startswith("changed polarity") for r in reasons):
                    wrong.append(f"{name}: {one!r} -> {other!r}: {reasons}")
    assert wrong == []


def test_pattern_tables_compile_with_the_groups_their_checks_read() -> None:
    for name, raw_cat, cat, _ in _pairs():
        if raw_cat["kind"] == "counters":
            assert cat.pattern is not None
            assert {"value", "counter"} <= set(cat.pattern.groupindex), (name, cat.name)
        if raw_cat["kind"] in ("numerals", "counters"):
            assert cat.pattern is not None
            assert cat.pattern.pattern == raw_cat["regex"], (name, cat.name)


def test_an_unknown_kind_is_refused_naming_the_category() -> None:
    with pytest.raises(ValueError, match=r"lexicon category 'colour': unknown kind 'hue'"):
        lexicon._category({"name": "colour", "kind": "hue", "words": ["red"]}, latin=True)


def test_a_word_is_literal_and_a_pattern_a_regex() -> None:
    for latin in (True, False):
        cat = lexicon._category(
            {"name": "t", "kind": "count", "words": ["a.b", "up to"], "patterns": ["~(?=[0-9])"]},
            latin=latin,
        )
        assert cat.found("(a.b)") == Counter({"a.b": 1}), latin
        assert cat.found("(axb)") == Counter(), latin
        assert cat.found("(up to) and ~5") == Counter({"up to": 1, "~": 1}), latin
        assert cat.found("~x") == Counter(), latin


def test_a_cjk_table_keeps_its_prefixes_exclusions_and_values() -> None:
    count = lexicon._category(
        {"name": "n", "kind": "count", "patterns": ["不"], "prefixes": ["非"], "only_lost": True},
        latin=False,
    )
    assert (count.prefixes, count.only_lost) == (("非",), True)
    values = lexicon._category(
        {"name": "v", "kind": "values", "values": {"1": ["一"], "2": ["二"]}, "exclude": ["一般"]},
        latin=False,
    )
    assert values.found("一般的に二つ、一つ") == Counter({"2": 1, "1": 1})
    units = lexicon._category(
        {"name": "u", "kind": "units", "values": {"h": ["時間"]}, "exclude": ["時間帯"]},
        latin=False,
    )
    assert units.blank("時間帯") == "   "
