"""The "no change needed" marker: a reply that is :data:`~owlai_refine.markers.UNCHANGED_MARKER`
alone means the block stays as it is.

Pure code. Read after unwrapping (a fence, quotes, ``<block>`` tags or a preamble around the
marker are taken off first by ``guard.wrappers``). The marker alone, in any letter case and with
or without the space or slash (``<unchanged/>``, ``<unchanged />``, ``<UNCHANGED>``), is
``unchanged``; the marker with anything else in the reply (an edit after it, a comment) is
refused with the reason group ``marker``: the guard cannot know which half the model meant. A
block whose own text holds the marker is judged as any other (the marker is then its text).
"""

from __future__ import annotations

import re
from typing import Literal

from owlai_refine.guard.reasons import Reason
from owlai_refine.markers import UNCHANGED_MARKER

__all__ = ["marker_reply"]

_MARKER = re.compile(r"<\s*unchanged\s*/?\s*>", re.IGNORECASE)


def marker_reply(block_text: str, text: str) -> Literal[True] | Reason | None:
    """What the marker says of ``text`` (an unwrapped reply) for a block of ``block_text``:
    ``True`` when it is the marker alone (the block is unchanged), a ``marker`` :class:`Reason`
    when it holds the marker and more, ``None`` when it holds none (or the block itself does,
    see the module docstring)."""
    if _MARKER.search(block_text):
        return None
    found = _MARKER.search(text)
    if found is None:
        return None
    rest = (text[: found.start()] + text[found.end() :]).strip()
    if not rest:
        return True
    shown = rest if len(rest) <= 40 else rest[:37] + "..."
    return Reason("marker", f'{UNCHANGED_MARKER} with "{shown}"', ": ")
