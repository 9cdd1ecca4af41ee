"""Punctuation that carries meaning: how a block ends, and quotation marks around a term.

Pure code, no IO. Both texts are normalised prose (``meaning``: NFKC, curly quotes straight,
markers and link destinations blanked), so a change of typesetting (a full-width colon for
``:``, curly quotes for straight ones) is no change here.

- **the ending**: a block that ends with a full stop, a question mark or a colon must end with the
  same kind of mark. A colon at the end introduces what follows the block (a list, a code block:
  "For example, this command line:"); a reply that drops that lead-in, or ends on another mark,
  no longer introduces it. A block with no final mark (a list item, a label) may gain one.
  ``changed ending ":" -> "."``, ``lost ending "."``.
- **quotation marks**: a term the block quotes (``'리더십 대화'``, ``"prefix cache"``,
  ``「推論」``) that the reply keeps without any quotation marks: quoting names a term, a title or
  someone's words, and an edit may change the style of the marks but not drop them.
  ``lost quotes "리더십 대화"``. A comma or a full stop set inside the closing mark (the
  American style: ``"period subkey."``) or outside it is the same quotation.
"""

from __future__ import annotations

import re

from owlai_refine.guard.reasons import Reason

__all__ = ["punctuation_problems"]

# What may stand after a block's last mark: closing brackets and quotes, emphasis, spaces.
_TRAILING = " )]}\"'」』》〉】*_~"
_KIND = {
    ".": "stop", "\u3002": "stop", "!": "stop", "\uff01": "stop", "\u2026": "stop",
    "?": "question", "\uff1f": "question",
    ":": "colon", "\uff1a": "colon",
}  # fmt: skip
# A quoted term: an opening mark not after a Latin letter or digit, up to 60 characters, a
# closing mark not before one (the apostrophes of "NVIDIA's" and "don't" open nothing; a Korean
# particle or 的 may follow the closing mark).
_QUOTED = re.compile(
    r"(?<![A-Za-z0-9])(?:'(?P<s>[^'\n]{1,60}?)'|\"(?P<d>[^\"\n]{1,60}?)\"|「(?P<c>[^」\n]{1,60})」"
    r"|『(?P<w>[^』\n]{1,60})』|«(?P<g>[^»\n]{1,60})»)(?![A-Za-z0-9])"
)


def _last_mark(text: str) -> str:
    """The character ``text`` ends with, before any closing brackets, quotes or emphasis."""
    end = len(text)
    while end and text[end - 1] in _TRAILING:
        end -= 1
    return text[end - 1] if end else ""


def _ending(text: str) -> str | None:
    """The kind of the mark ``text`` ends with, before any closing brackets, quotes or
    emphasis; ``None`` when it ends with none."""
    return _KIND.get(_last_mark(text))


def _quoted(text: str) -> set[str]:
    """The terms ``text`` quotes, each with its inner spaces made one and without the
    sentence mark the American style sets inside the closing quote (``"subkey."``)."""
    out = set()
    for m in _QUOTED.finditer(text):
        inner = next(g for g in m.groups() if g is not None)
        term = " ".join(inner.split()).rstrip(".,;:!?")
        if term:
            out.add(term)
    return out


def punctuation_problems(block: str, reply: str) -> list[Reason]:
    """``changed ending`` / ``lost ending`` and ``lost quotes`` reasons for two normalised
    prose texts (see the module docstring); empty when the reply keeps both."""
    reasons: list[Reason] = []
    was = _ending(block)
    if was is not None:
        now = _ending(reply)
        if now is None:
            reasons.append(Reason("lost ending", f'"{_last_mark(block)}"'))
        elif now != was:  # each mark as the text writes it (U+3002, not ".")
            reasons.append(
                Reason("changed ending", f'"{_last_mark(block)}" -> "{_last_mark(reply)}"')
            )
    still_quoted = _quoted(reply)
    flat_reply = " ".join(reply.split())
    for term in sorted(_quoted(block) - still_quoted):
        if term in flat_reply:
            reasons.append(Reason("lost quotes", f'"{term}"'))
    return reasons
