"""One parse of a text for the guard: the project's parser, with backslash escapes kept visible.

Pure code, no IO. markdown-it-py's ``text_join`` core rule folds escapes (``\\[``) and entities
(``&amp;``) into plain text, after which ``\\[^2\\]`` and ``[^2]`` read the same. The guard must
tell them apart (an escaped footnote reference is a lost footnote), so :func:`parse_tokens` runs
the shared parser's core rules without ``text_join``: escapes and entities stay ``text_special``
tokens whose ``markup`` is their source form. The shared parser itself is never modified.
"""

from __future__ import annotations

from markdown_it.rules_core import text_join
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from owlai_refine.parse import markdown_parser

__all__ = ["parse_tokens"]


def parse_tokens(text: str) -> tuple[list[Token], dict[str, object]]:
    """``(tokens, env)`` for ``text``: the block token stream of :func:`markdown_parser` with
    inline ``children``, except that escapes and entities are left as ``text_special`` tokens
    (``markup`` holds the source, e.g. ``"\\\\["`` or ``"&amp;"``). ``env`` is the parser's
    environment (``env["references"]`` holds any link reference definitions)."""
    md = markdown_parser()
    env: dict[str, object] = {}
    state = StateCore(text, md, env)
    for rule in md.core.ruler.getRules(""):
        if rule is not text_join:
            rule(state)
    return state.tokens, env
