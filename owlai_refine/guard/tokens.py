"""Protected inline tokens: what a reply must keep exactly, counted as a multiset.

Pure code, no IO. :func:`protected_tokens` reads a text's tokens from its markdown-it-py parse
(link and image destinations, autolinks, inline code, inline math, inline HTML) and, in its
plain text (link text included, escapes kept visible, see ``_md``), by regex: LaTeX math
``\\(...\\)`` / ``\\[...\\]``, bare URLs, citation markers, footnote references, alert markers and
numbers with their units. :func:`compare_tokens` names every difference between a block's
multiset and a reply's.

Kinds and what counts as the same token (the comparison key):

=========  ===================================================================  ==================
kind       what                                                                 key
=========  ===================================================================  ==================
citation   ``[3]``, ``[1, 2]``, ``[1-3]``, ``【4†source】``                        spaces removed,
                                                                                dashes as ``-``
footnote   ``[^2]``                                                             as written
alert      GitHub alert markers ``[!IMPORTANT]``                                upper case
url        link destinations, autolinks, bare ``http(s)://`` / ``www.`` URLs     as written
image      image sources                                                        as written
code       inline code spans                                                    content
math       ``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``                     spaces collapsed
html       inline HTML tags (``<br>``, ``<sup>``)                               as written
number     ``22.7 GiB``, ``39,812``, ``65%``, ``$749.99``, ``H100`` (its digits)  no spaces, no
                                                                                thousands commas
bold       ``**...**`` spans (their words may change); also ``italic`` (``*...*``)  the count only
           and ``strikethrough`` (``~~...~~``)
=========  ===================================================================  ==================

Link text and image alt text may change, their destinations may not; numbers and markers inside
link text still count (``[Reuters, 2024](...)`` keeps its year). Dollar amounts such as
``$749.99 ... $1,999.99`` are numbers, not math: the shared parser applies pandoc's rules (no
space inside the dollars, no digit after the closing one).

Names are checked one way: every word of the block with two or more capitals (an acronym or
a product name: ``DLSS``, ``NIST``, ``GroqCloud``) must still be a word of the reply, in any case
and number (``lost name DLSS``); how often does not matter, and new ones are not reported.

Reasons, one per difference: ``lost <kind> <token>``, ``added <kind> <token>``, ``changed <kind>
<old> -> <new>`` (one lost and one added token of the same kind, paired in order) and ``escaped
<kind> <reply form>`` (a citation or footnote the reply wrote with backslashes, which turns it
into plain text).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from markdown_it.token import Token

from owlai_refine.guard._md import parse_tokens
from owlai_refine.guard.normalise import MAGNITUDE, spelled_as_digits
from owlai_refine.guard.reasons import Reason
from owlai_refine.markers import BARE_URL, CITATION, FOOTNOTE_REF

__all__ = ["ProtectedTokens", "compare_tokens", "protected_tokens"]

KINDS = (
    "citation", "footnote", "alert", "url", "image", "code", "math", "html", "number",
    "bold", "italic", "strikethrough",
)  # fmt: skip
_EMPHASIS = {"strong": "bold", "em": "italic", "s": "strikethrough"}

_LATEX_MATH = re.compile(r"\\\((?P<a>.+?)\\\)|\\\[(?P<b>.+?)\\\]", re.DOTALL)
_URL_TRAILING = ".,;:!?*_~"
_OPENING = {")": "(", "]": "[", "}": "{"}
_ESCAPED = re.compile(r"\\\[\s*(?P<body>\^[^\]\s\\]+|\d+(?:\s*[,\u2013\u2014-]\s*\d+)*)\s*\\?\]")
_ALERT = re.compile(r"(?<!\\)\[![A-Za-z]+\]")
_UNITS = (
    r"%|‰|[KMGTP]i?B(?:/s)?|[kKMGT]b(?:ps|/s)|[KMGTPkm]?Hz|[kMGT]?Wh?|[mµun]?s|ms|sec|mins?|hrs?"
    r"|[nµmck]?m|kg|mg|g|[xX]|\u00d7|[KMBT]|bn|billion|million|trillion|thousand|percent"
    r"|万|億|亿|兆|円|元|억|만|조|원|달러|ドル"
)
_NUMBER = re.compile(
    rf"(?<![\d.,])(?P<cur>[$€£¥₩]\s?)?(?P<num>\d+(?:[.,]\d+)*)(?:\s?(?P<unit>{_UNITS})(?![A-Za-z]))?"
)
_RANGE_UNIT = re.compile(
    r"(?<![\d.,])(\d+(?:[.,]\d+)*)(\s?[-\u2013\u2014~\uff5e]\s?)"
    rf"(?=\d+(?:[.,]\d+)*\s?({_UNITS})(?![A-Za-z]))"
)
"""A range whose unit is written once, after its second end (``7\u201320%``, an en dash):
the first end has it too, as ``7%\u201320%`` writes it."""
_SAME_UNIT = {"X": "x", "\u00d7": "x", "percent": "%", **MAGNITUDE}
_LATIN_WORD = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


@dataclass
class ProtectedTokens:
    """The protected tokens of one text: ``counts[(kind, key)]`` how often each occurs,
    ``shown[(kind, key)]`` how each occurrence was written, ``escaped`` the citations and footnotes
    written with backslashes (``(kind, key) -> written form``), which are *not* tokens."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    shown: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    escaped: dict[tuple[str, str], str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    """Words with two or more capitals (``DLSS``, ``NIST``, ``GroqCloud``, ``GPUs``), keyed by
    :func:`_word_key`, each with its first written form."""
    words: set[str] = field(default_factory=set)
    """Every Latin word of the plain text, by :func:`_word_key`."""

    def add(self, kind: str, key: str, written: str) -> None:
        self.counts[(kind, key)] += 1
        self.shown.setdefault((kind, key), []).append(written)

    def unmatched(self, other: ProtectedTokens, kind: str, key: str) -> list[str]:
        """How this text wrote the occurrences of ``(kind, key)`` that ``other`` lacks: the
        written forms ``other`` does not also have, else the last ones (``**A**`` and ``**B**``
        against ``**B**`` gives ``["**A**"]``)."""
        forms = list(self.shown.get((kind, key), []))
        missing = self.counts[(kind, key)] - other.counts[(kind, key)]
        theirs = Counter(other.shown.get((kind, key), []))
        picked = []
        for form in forms:
            if theirs[form]:
                theirs[form] -= 1
            else:
                picked.append(form)
        rest = [f for f in reversed(forms) if f not in picked]
        return (picked + rest)[:missing]


def _citation_key(written: str) -> str:
    return re.sub(r"\s+", "", written).replace("\u2013", "-").replace("\u2014", "-")


def _trim_url(url: str) -> str:
    """A bare URL without trailing punctuation or unbalanced closing brackets."""
    while url:
        last = url[-1]
        unbalanced = last in ")]}" and url.count(last) > url.count(_OPENING[last])
        if last in _URL_TRAILING or unbalanced:
            url = url[:-1]
        else:
            break
    return url


def _word_key(word: str) -> str:
    """A word compared without case or a plural ``s``: ``GPUs``, ``GPU`` and ``gpu`` meet."""
    lower = word.lower()
    return lower[:-1] if len(lower) > 2 and lower.endswith("s") else lower


def _number_key(m: re.Match[str]) -> str:
    num = m.group("num")
    if _THOUSANDS.match(num):
        num = num.replace(",", "")
    cur = (m.group("cur") or "").strip()
    unit = m.group("unit") or ""
    # one unit, however written: "8X" = "8x" = "8\u00d7", "$5B" = "$5 billion", "30 percent" = "30%"
    unit = _SAME_UNIT.get(unit, unit)
    return unicodedata.normalize("NFKC", f"{cur}{num}{unit}")


def _scan_text(run: str, out: ProtectedTokens, spelled: frozenset[int] = frozenset()) -> None:
    """Add the regex-found tokens of a plain-text run (escapes in their source form)."""

    def cut(pattern: re.Pattern[str], text: str, take: Callable[[re.Match[str]], None]) -> str:
        """``take`` every match of ``pattern`` in ``text``; ``text`` with each match blanked."""
        pieces: list[str] = []
        pos = 0
        for m in pattern.finditer(text):
            take(m)
            pieces.append(text[pos : m.start()])
            pieces.append(" ")
            pos = m.end()
        pieces.append(text[pos:])
        return "".join(pieces)

    def math(m: re.Match[str]) -> None:
        inner = m.group("a") if m.group("a") is not None else m.group("b")
        out.add("math", " ".join(inner.split()), m.group())

    def url(m: re.Match[str]) -> None:
        written = _trim_url(m.group())
        out.add("url", written, written)

    def escaped(m: re.Match[str]) -> None:
        body = m.group("body")
        kind = "footnote" if body.startswith("^") else "citation"
        key = f"[{body}]" if kind == "footnote" else _citation_key(f"[{body}]")
        out.escaped.setdefault((kind, key), m.group())

    def citation(m: re.Match[str]) -> None:
        out.add("citation", _citation_key(m.group()), m.group())

    def footnote(m: re.Match[str]) -> None:
        out.add("footnote", m.group(), m.group())

    def alert(m: re.Match[str]) -> None:
        out.add("alert", m.group().upper(), m.group())

    run = cut(_ESCAPED, run, escaped)  # before math: ``\\[^2\\]`` is no ``\\[...\\]`` math
    run = cut(_LATEX_MATH, run, math)
    run = cut(BARE_URL, run, url)
    run = cut(CITATION, run, citation)
    run = cut(FOOTNOTE_REF, run, footnote)
    run = cut(_ALERT, run, alert)
    run = run.replace("\\", " ")  # what is left of escapes (``\$``) must not join numbers
    run = spelled_as_digits(run, spelled)  # "forty-seven percent" may be the number 47%
    run = _RANGE_UNIT.sub(lambda m: f"{m.group(1)}{m.group(3)}{m.group(2)}", run)
    run = cut(_NUMBER, run, lambda m: out.add("number", _number_key(m), m.group().strip()))
    for m in _LATIN_WORD.finditer(run):  # numbers and their units are gone: GiB is no name
        word = m.group()
        key = _word_key(word)
        out.words.add(key)
        if sum(ch.isupper() for ch in word) >= 2:
            out.names.setdefault(key, word)


def _add_token(tok: Token, out: ProtectedTokens) -> None:
    """Add what an inline token other than text and emphasis protects, if anything."""
    kind = tok.type
    if kind == "link_open":
        href = str(tok.attrs.get("href", ""))
        out.add("url", href, href)
    elif kind == "image":
        src = str(tok.attrs.get("src", ""))
        out.add("image", src, src)
    elif kind == "code_inline":
        out.add("code", tok.content, tok.content)
    elif kind in ("math_inline", "math_inline_double"):
        out.add("math", " ".join(tok.content.split()), tok.content)
    elif kind == "html_inline":
        out.add("html", tok.content, tok.content)
    elif kind == "footnote_ref":
        label = f"[^{(tok.meta or {}).get('label', '')}]"
        out.add("footnote", label, label)


def _scan_inline(
    children: Sequence[Token], out: ProtectedTokens, spelled: frozenset[int] = frozenset()
) -> None:
    run: list[str] = []
    emphasis: list[tuple[str, str, int]] = []  # open spans: (kind, markup, where its text starts)
    shown: list[str] = []  # the text of the inline content so far, for naming emphasis spans

    def flush() -> None:
        if run:
            _scan_text("".join(run), out, spelled)
            run.clear()

    for tok in children:
        kind = tok.type
        if kind in ("text", "code_inline", "math_inline"):
            shown.append(tok.content)
        if kind == "text":
            run.append(tok.content)
        elif kind == "text_special":
            run.append(tok.markup)
        elif kind in ("softbreak", "hardbreak"):
            run.append("\n")
        elif kind.endswith("_open") and kind[:-5] in _EMPHASIS:
            # emphasis does not split "**12**%" into two tokens: the text run goes on
            emphasis.append((_EMPHASIS[kind[:-5]], tok.markup, len(shown)))
        elif kind.endswith("_close") and kind[:-6] in _EMPHASIS and emphasis:
            name, markup, start = emphasis.pop()
            out.add(name, "", f"{markup}{''.join(shown[start:])}{markup}")
        else:
            flush()
            _add_token(tok, out)
    flush()


def protected_tokens(
    text: str, tokens: Iterable[Token] | None = None, *, spelled: frozenset[int] = frozenset()
) -> ProtectedTokens:
    """The protected tokens of ``text`` (parsed here unless its ``tokens`` from
    :func:`owlai_refine.guard._md.parse_tokens` are given). ``spelled``: the numbers another
    text writes in digits, which ``text`` may write in words (``normalise.numbers_as_digits``:
    ``forty-seven percent`` is then the number ``47%``)."""
    out = ProtectedTokens()
    for tok in tokens if tokens is not None else parse_tokens(text)[0]:
        if tok.type == "inline" and tok.children:
            _scan_inline(tok.children, out, spelled)
    return out


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _counted(reasons: list[Reason]) -> list[Reason]:
    """``reasons`` with repeats folded into one, suffixed `` xN`` (``added citation [1] x39``)."""
    counts = Counter(reasons)
    return [
        r if counts[r] == 1 else Reason(r.group, f"{r.detail} x{counts[r]}", r.sep)
        for r in dict.fromkeys(reasons)
    ]


def compare_tokens(block: ProtectedTokens, reply: ProtectedTokens) -> list[Reason]:
    """The reasons ``reply`` does not keep ``block``'s protected tokens, in kind order (see the
    module docstring for their forms; a reason that applies ``N`` times ends in `` xN``); empty
    when the multisets are equal."""
    lost = block.counts - reply.counts
    added = reply.counts - block.counts
    reasons: list[Reason] = []
    for kind in KINDS:
        lost_keys = [k for (kd, k), n in lost.items() if kd == kind for _ in range(n)]
        added_keys = [k for (kd, k), n in added.items() if kd == kind for _ in range(n)]
        lost_forms = {k: iter(block.unmatched(reply, kind, k)) for k in lost_keys}
        added_forms = {k: iter(reply.unmatched(block, kind, k)) for k in added_keys}
        still_lost: list[str] = []
        for key in lost_keys:
            written = reply.escaped.get((kind, key))
            if written is not None:
                reasons.append(Reason(f"escaped {kind}", _short(written)))
            else:
                still_lost.append(next(lost_forms[key]))
        added_shown = [next(added_forms[k]) for k in added_keys]
        pairs = min(len(still_lost), len(added_shown))
        for old, new in zip(still_lost[:pairs], added_shown[:pairs], strict=True):
            reasons.append(Reason(f"changed {kind}", f"{_short(old)} -> {_short(new)}"))
        reasons.extend(Reason(f"lost {kind}", _short(form)) for form in still_lost[pairs:])
        reasons.extend(Reason(f"added {kind}", _short(form)) for form in added_shown[pairs:])
        if kind == "number":  # names come after numbers: both are facts in plain words
            reasons.extend(
                Reason("lost name", form)
                for key, form in block.names.items()
                if key not in reply.words
            )
    return _counted(reasons)
