"""Remove the wrappers a chat model puts around its answer, by fixed rules, never by guessing.

Pure code, no IO. :func:`unwrap` applies the rules below until none applies; each rule removes
only what it names, and only when the block itself did not have it (a block that starts with
"Here is the plan:" keeps that line). A wrapper no rule covers stays and the later checks reject
the reply (a stray fence is a ``structure`` failure, a trailing note changes the length or
structure). The rules:

``think``
    ``<think>...</think>`` reasoning at the start (an unclosed ``<think>`` means the reply is all
    reasoning: nothing is left), or text up to a lone ``</think>`` (templates that open the
    reasoning in the prompt).
``block_tags``
    the ``<block>`` / ``</block>`` tags our own prompt puts around the block, echoed back: with
    exactly one pair, the answer is what is inside it and anything outside (an echoed title or
    instruction line) is dropped; else a leading ``<block>`` and a trailing ``</block>`` are
    removed. Dropping text is safe here: what is kept still passes every check against the block.
``section_echo``
    a first line starting ``Section:``: the heading-path line of our own per-block message
    (``owlai_refine.markers.SECTION_LABEL``), echoed back.
``fence``
    one code fence tagged ``markdown``, ``md`` or nothing around the whole reply, with no other
    fence line inside.
``preamble``
    a leading line from a fixed list ("Here is the refined paragraph:", "Sure! Here's the
    improved version:", "Refined text:", "Output:", and Chinese, Japanese and Korean lines
    that start "以下" or "다음은" and end in a colon), only when text follows it (on the same
    line after the colon, or on the next non-blank lines).
``quotes``
    one pair of quotes (``"…"``, ``“…”``, ``'…'``, ``«…»``, ``「…」``, ``『…』``) around the
    whole reply, only when the reply holds exactly that pair more than the block does (and,
    for a quote that opens and closes alike, the first one inside opens a quotation rather
    than closing one).
``heading_echo``
    first or last lines that only repeat the headings the block sits under (``Title >
    Section``), which the prompt names as its section; never a line the block itself has.
``list_marker``
    for a list item, a list marker (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``) the model repeated at
    the start of its reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial

from owlai_refine.markers import SECTION_LABEL

__all__ = ["PREAMBLE_PATTERNS", "UNWRAP_RULES", "tidy_lines", "unwrap"]

_THINK_BLOCK = re.compile(r"\A\s*<think>.*?</think>\s*", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"\A\s*<think>", re.IGNORECASE)
_THINK_CLOSE_ONLY = re.compile(r"\A.*?</think>\s*", re.DOTALL | re.IGNORECASE)
_BLOCK_OPEN = re.compile(r"\A\s*<block>[ \t]*\n?", re.IGNORECASE)
_BLOCK_CLOSE = re.compile(r"\n?[ \t]*</block>\s*\Z", re.IGNORECASE)
_FENCE = re.compile(
    r"\A\s*(?P<fence>`{3,}|~{3,})[ \t]*(?:markdown|md)?[ \t]*\n(?P<body>.*?)\n?[ \t]*"
    r"(?P=fence)[`~]*[ \t]*\s*\Z",
    re.DOTALL | re.IGNORECASE,
)
_FENCE_LINE = re.compile(r"^[ \t]*(?:`{3,}|~{3,})", re.MULTILINE)
_LIST_MARKER = re.compile(r"\A[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")

_EDIT_WORDS = (
    r"(?:refined|revised|improved|rewritten|re-written|edited|polished|corrected|updated|"
    r"proofread|cleaned[- ]up|final|paragraph|text|version|list item|block|rewrite|revision)"
)
_ACK = r"(?:sure|certainly|of course|okay|ok|absolutely|great|alright)"
PREAMBLE_PATTERNS: tuple[re.Pattern[str], ...] = (
    # "Here is the refined paragraph:", "Sure! Here's an improved version of the text:"
    re.compile(
        rf"(?:{_ACK}[!,.]?\s+)?here(?:'s|\u2019s|\s+is|\s+are)\b[^\n:\uff1a]{{0,80}}?\b{_EDIT_WORDS}"
        r"\b[^\n:\uff1a]{0,60}[:\uff1a]",
        re.IGNORECASE,
    ),
    # "Refined text:", "Revised paragraph:", "The improved version of the list item:"
    re.compile(
        r"(?:the\s+|my\s+)?(?:refined|revised|improved|rewritten|edited|polished|corrected|"
        r"updated|proofread)\s+(?:version|text|paragraph|block|list item|item|output|answer)"
        r"\b[^\n:\uff1a]{0,60}[:\uff1a]",
        re.IGNORECASE,
    ),
    # "Output:", "Rewritten:", "Refined:"
    re.compile(r"(?:output|rewritten|rewrite|revision|refined)\s*[:\uff1a]", re.IGNORECASE),
    # "Sure!", "Certainly." alone on the first line
    re.compile(rf"{_ACK}[!.]?(?=[ \t]*\n)", re.IGNORECASE),
    # Chinese / Japanese: "以下是润色后的段落:", "以下は推敲した段落です:" (either colon)
    re.compile(r"以下[是は为為][^\n:\uff1a]{0,40}[:\uff1a]"),
    # Korean: "다음은 수정된 문단입니다:", "아래는 ...:"
    re.compile(r"(?:다음은|아래는)[^\n:\uff1a]{0,40}[:\uff1a]"),
    # A short CJK line that names the edit and ends in a colon (either width): "润色后",
    # "修改后的段落如下", "以下が修正版です", "修正した段落です", "다듬은 문단입니다", "수정된 문단"
    re.compile(
        r"[^\n:\uff1a]{0,12}(?:润色|潤色|修改|修订|改写|优化|校对|精炼|改进|修正|推敲|校正|改訂|"
        r"編集|書き直|添削|다듬|수정|교정|개선|편집|윤문|고친)[^\n:\uff1a]{0,16}[:\uff1a]"
    ),
)
"""Lines a model puts before its answer. Each is matched at the very start of the reply; the
text after it must be non-empty, and the block itself must not start with the same match."""

_QUOTE_PAIRS: tuple[tuple[str, str], ...] = (
    ('"', '"'),
    ("\u201c", "\u201d"),
    ("'", "'"),
    ("\u2018", "\u2019"),
    ("\u00ab", "\u00bb"),
    ("\u300c", "\u300d"),
    ("\u300e", "\u300f"),
)

Rule = Callable[[str, str], str | None]
"""``rule(reply, block_text)``: the reply with one wrapper removed, or ``None`` if it has none."""


def _think(reply: str, block_text: str) -> str | None:
    if "think>" in block_text.lower():
        return None
    m = _THINK_BLOCK.match(reply)
    if m:
        return reply[m.end() :]
    if _THINK_OPEN.match(reply):
        return ""  # reasoning that never closed: there is no answer
    if "</think>" in reply.lower():
        m = _THINK_CLOSE_ONLY.match(reply)
        if m:
            return reply[m.end() :]
    return None


def _block_tags(reply: str, block_text: str) -> str | None:
    if "<block>" in block_text.lower() or "</block>" in block_text.lower():
        return None
    low = reply.lower()
    if low.count("<block>") == 1 and low.count("</block>") == 1:
        start, end = low.index("<block>") + len("<block>"), low.index("</block>")
        if start <= end:
            return reply[start:end]
    out = _BLOCK_CLOSE.sub("", _BLOCK_OPEN.sub("", reply, count=1), count=1)
    return out if out != reply else None


def _section_echo(reply: str, block_text: str) -> str | None:
    text = reply.lstrip()
    if not text.startswith(SECTION_LABEL) or block_text.lstrip().startswith(SECTION_LABEL):
        return None
    _first, newline, rest = text.partition("\n")
    return rest if newline and rest.strip() else None


def _fence(reply: str, block_text: str) -> str | None:
    if _FENCE_LINE.search(block_text):
        return None
    m = _FENCE.match(reply)
    if m is None or _FENCE_LINE.search(m.group("body")):
        return None
    return m.group("body")


def _preamble(reply: str, block_text: str) -> str | None:
    text = reply.lstrip()
    for pattern in PREAMBLE_PATTERNS:
        m = pattern.match(text)
        if m is None:
            continue
        if pattern.match(block_text.lstrip()):
            return None  # the block starts like that itself
        rest = text[m.end() :]
        if rest.strip():
            return rest.lstrip(" \t").lstrip("\n")
        return None
    return None


def _quotes(reply: str, block_text: str) -> str | None:
    text = reply.strip()
    block = block_text.strip()
    for open_q, close_q in _QUOTE_PAIRS:
        if len(text) < 3 or not (text.startswith(open_q) and text.endswith(close_q)):
            continue
        if block.startswith(open_q) and block.endswith(close_q):
            return None
        if open_q == close_q:
            inner = text[1:-1]
            first = inner.find(open_q)
            balanced = text.count(open_q) == block.count(open_q) + 2 and (
                first <= 0 or inner[first - 1].isspace() or inner[first - 1] in "([{"
            )  # '"A" and "B"' is two quoted words, not one quoted whole
        else:
            balanced = (
                text.count(open_q) == block.count(open_q) + 1
                and text.count(close_q) == block.count(close_q) + 1
            )
        return text[len(open_q) : -len(close_q)] if balanced else None
    return None


def _list_marker(reply: str, block_text: str) -> str | None:
    if _LIST_MARKER.match(block_text):
        return None
    m = _LIST_MARKER.match(reply)
    return reply[m.end() :] if m else None


UNWRAP_RULES: tuple[tuple[str, Rule], ...] = (
    ("think", _think),
    ("block_tags", _block_tags),
    ("section_echo", _section_echo),
    ("fence", _fence),
    ("preamble", _preamble),
    ("quotes", _quotes),
)
"""The rules for every block, by name, in the order they are tried."""


_PATH_SPLIT = re.compile(r"\s*(?:>|\u203a|\u00bb|/|\|)\s*")


def _heading_key(text: str) -> str:
    return " ".join(re.sub(r"[*_`#:]", " ", text).split()).casefold()


def _heading_echo(reply: str, block_text: str, heading_path: tuple[str, ...]) -> str | None:
    """``reply`` without first or last lines that only repeat headings the block sits under
    (the prompt names them as the block's section, and small models echo them, e.g.
    ``Report Title > Section``), unless the block itself has such a line."""
    headings = {_heading_key(h) for h in heading_path if h.strip()}
    if not headings:
        return None
    own = {_heading_key(line) for line in block_text.split("\n")}

    def echo(line: str) -> bool:
        parts = [_heading_key(p) for p in _PATH_SPLIT.split(line) if p.strip()]
        key = _heading_key(line)
        if not parts or key in own:
            return False
        named = [p in headings for p in parts]
        return all(named) or (len(parts) > 1 and any(named))  # "Title > Invented" too

    lines = reply.strip().split("\n")
    start, end = 0, len(lines)
    while end - start > 1 and echo(lines[start]):
        start += 1
    while end - start > 1 and echo(lines[end - 1]):
        end -= 1
    return "\n".join(lines[start:end]) if (start, end) != (0, len(lines)) else None


def tidy_lines(text: str) -> str:
    """``text`` with ``\\r\\n``/``\\r`` turned into ``\\n``, each line stripped of surrounding
    whitespace (so no trailing two-space hard break and no indented code can appear), and blank
    lines at either end dropped. Blank lines inside are kept (the structure check rejects
    them)."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def unwrap(
    reply: str, block_text: str, *, list_item: bool, heading_path: tuple[str, ...] = ()
) -> tuple[str, tuple[str, ...]]:
    """``(text, removed)``: ``reply`` without its wrappers, tidied with :func:`tidy_lines`, and
    the names of the rules that removed something, in order (a rule may apply more than once,
    e.g. a preamble line before a fence). ``list_item`` enables the ``list_marker`` rule;
    ``heading_path`` (the headings the block sits under) the ``heading_echo`` rule, which takes
    off first or last lines that only repeat those headings.

    A block that starts with a Unicode space (a Japanese ``U+3000`` paragraph indent, which is
    part of the block's text, not of its prefix) gets it back in front of the tidied text."""
    rules = list(UNWRAP_RULES)
    if heading_path:
        rules.append(("heading_echo", partial(_heading_echo, heading_path=heading_path)))
    if list_item:
        rules.append(("list_marker", _list_marker))
    removed: list[str] = []
    text = reply
    for _ in range(4 * len(rules)):  # every rule shortens the text, so this always ends
        for name, rule in rules:
            out = rule(text, block_text)
            if out is not None and out != text:
                removed.append(name)
                text = out
                break
        else:
            break
    text = tidy_lines(text)
    indent = block_text[: len(block_text) - len(block_text.lstrip())]
    if text and indent and indent.isspace() and not indent.isascii():
        text = indent + text
    return text, tuple(removed)
