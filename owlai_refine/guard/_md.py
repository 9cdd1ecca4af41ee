"""One parse of a text for the guard: the project's parser, with backslash escapes kept visible.

Pure code, no IO. markdown-it-py's ``text_join`` core rule folds escapes (``\\[``) and entities
(``&amp;``) into plain text, after which ``\\[^2\\]`` and ``[^2]`` read the same. The guard must
tell them apart (an escaped footnote reference is a lost footnote), so :func:`parse_tokens` runs
the shared parser's core rules without ``text_join``: escapes and entities stay ``text_special``
tokens whose ``markup`` is their source form. The shared parser itself is never modified.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it.rules_core import text_join
from markdown_it.rules_core.state_core import StateCore
from markdown_it.token import Token

from owlai_refine.markdown import markdown_parser
from owlai_refine.markers import BARE_URL

__all__ = ["parse_tokens", "prose"]

_NOT_PROSE = re.compile(
    r"`[^`]*`"  # a code span
    r"|\]\([^)\s]*\)"  # a link or image destination
    r"|\$(?=\S)[^$\n]*?(?<=\S)\$(?!\d)"  # dollar math by the parser's rules: $5 and $6 is not
    r"|\\\(.*?\\\)"  # \( ... \) math
)


@lru_cache(maxsize=4096)  # pure, and asked of the same text by several checks
def prose(text: str) -> str:
    """``text`` with code spans, link and image destinations, inline math and bare URLs
    blanked out: the words the language and content checks read. Dollar math follows the
    shared parser's pandoc rules, so the text between two prices (``$5 ... $6``) stays prose."""
    return BARE_URL.sub(_blank_url, _NOT_PROSE.sub(" ", text))


def _blank_url(m: re.Match[str]) -> str:
    """A bare URL blanked, its trailing sentence punctuation and closing brackets kept
    (``see https://x.org/a].`` keeps ``].``: the sentence still ends there)."""
    url = m.group()
    end = len(url)
    while end and url[end - 1] in ".,;:!?)]}*_~":
        end -= 1
    return " " + url[end:]


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
