"""Structure: a reply must parse as the same kind of Markdown as its block, one paragraph.

Pure code, no IO. A block is a paragraph or a list item's text, so its text parses as exactly one
paragraph. The reply (wrappers and a repeated list marker already removed, lines stripped, see
``unwrap``) is parsed with the same parser; every block-level construct it has and the block does
not is named:

``structure: heading``, ``structure: list``, ``structure: code block`` (fence or indented),
``structure: table``, ``structure: rule``, ``structure: quote``, ``structure: html block``,
``structure: math block``, ``structure: front matter``, ``structure: footnote definition``,
``structure: link definition``, ``structure: blank line`` (more paragraphs than the block),
``structure: hard line break`` (a trailing backslash: the block has none, or it would not be
sent), ``structure: stray emphasis marker`` (an ``*`` or a word-edge ``_`` the parser left as
text, more than the block has: ``...usage.**`` with no opening ``**`` shows the asterisks) and
``structure: empty`` (no paragraph at all).

Such a reply, spliced under the block's prefixes, would change the report's outline or layout.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from markdown_it.token import Token

from owlai_refine.guard.reasons import Reason

__all__ = ["structure_problems"]

_NAMES: dict[str, str] = {
    "heading_open": "heading",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "fence": "code block",
    "code_block": "code block",
    "table_open": "table",
    "hr": "rule",
    "blockquote_open": "quote",
    "html_block": "html block",
    "math_block": "math block",
    "math_block_label": "math block",
    "amsmath": "math block",
    "front_matter": "front matter",
    "footnote_block_open": "footnote definition",
    "footnote_reference_open": "footnote definition",
}
_ORDER = (
    *dict.fromkeys(_NAMES.values()),
    "link definition",
    "hard line break",
    "stray emphasis marker",
)
_STRAY = re.compile(r"\*|(?<![^\W_])_|_(?![^\W_])")
"""An emphasis delimiter left as text: any ``*``, an ``_`` not inside a word (``snake_case``
keeps its underscore as text in every reply alike)."""


def _shape(tokens: Sequence[Token], env: dict[str, object]) -> Counter[str]:
    """How often each named construct occurs (top-level paragraphs as ``"paragraph"``)."""
    shape: Counter[str] = Counter()
    for tok in tokens:
        name = _NAMES.get(tok.type)
        if name is not None:
            shape[name] += 1
        elif tok.type == "paragraph_open" and tok.level == 0:
            shape["paragraph"] += 1
        elif tok.type == "inline":
            children = tok.children or ()
            shape["hard line break"] += sum(c.type == "hardbreak" for c in children)
            shape["stray emphasis marker"] += sum(
                len(_STRAY.findall(c.content)) for c in children if c.type == "text"
            )
    if env.get("references"):
        shape["link definition"] += 1
    return shape


def structure_problems(
    block_tokens: tuple[Sequence[Token], dict[str, object]],
    reply_tokens: tuple[Sequence[Token], dict[str, object]],
) -> list[Reason]:
    """``structure: ...`` reasons for the constructs the reply has beyond the block's, given
    both ``(tokens, env)`` from :func:`owlai_refine.guard._md.parse_tokens`; empty if the
    reply is shaped like the block."""
    block = _shape(*block_tokens)
    reply = _shape(*reply_tokens)
    reasons: list[Reason] = []
    for name in _ORDER:
        if reply[name] > block[name]:
            reasons.append(Reason("structure", name, ": "))
    if reply["paragraph"] > max(block["paragraph"], 1):
        reasons.append(Reason("structure", "blank line", ": "))
    if not reply["paragraph"] and block["paragraph"] and not reasons:
        reasons.append(Reason("structure", "empty", ": "))
    return reasons
