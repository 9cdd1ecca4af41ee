"""Markers in their place: a citation or a link must stay with the claim it stood by.

Pure code, no IO. The token check keeps every citation marker and link destination as a
multiset, so a citation moved to another sentence, or two links that traded destinations, pass
it. Here each marker (``[3]``, ``[^2]``, ``【4†source】``, a link or image destination, a bare
URL) is read with the content of its sentence: Latin words of four letters or more (cut to six)
and Han, Katakana and Hangul characters, link texts and markers left out. In the reply, each
occurrence of the marker is paired with the one whose sentence shares most with it, and that
sentence must keep at least :data:`MIN_KEPT` of the content, else ``moved <kind> <marker>``. A
reworded, merged or split sentence keeps its marker's words; a sentence moved whole takes its
marker with it.
"""

from __future__ import annotations

import re
from collections import defaultdict

from owlai_refine.guard.normalise import CJK, normalise
from owlai_refine.guard.reasons import Reason
from owlai_refine.markers import BARE_URL, CITATION, FOOTNOTE_REF
from owlai_refine.scripts import HIRAGANA

__all__ = ["MIN_KEPT", "moved_markers"]

MIN_KEPT = 0.3
"""The share of a marker's sentence content the reply's sentence around it must keep."""
MIN_CONTENT = 4
"""Sentences with less content than this are not judged (a bare list of sources)."""

_LINK = re.compile(r"\]\((?P<url>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
_MARKER = re.compile(
    rf"(?P<link>{_LINK.pattern})|(?P<cite>{CITATION.pattern})|(?P<foot>{FOOTNOTE_REF.pattern})"
    rf"|(?P<bare>{BARE_URL.pattern})",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^a-z])|(?<=[\u3002\uff01\uff1f])")
_CONTENT = re.compile(rf"[{CJK}]|[A-Za-z]{{4,}}")
_HIRAGANA = re.compile(f"[{HIRAGANA}]")
_WHOLE_LINK = re.compile(r"!?\[[^\]]*\]\([^)]*\)")


def _content(text: str) -> set[str]:
    """The words a marker's place is known by: Latin words of four letters or more (cut to
    six), Han, Katakana and Hangul characters; link texts and markers left out (they travel
    with the marker)."""
    text = _MARKER.sub(" ", _WHOLE_LINK.sub(" ", text))
    return {u.lower()[:6] for u in _CONTENT.findall(normalise(text)) if not _HIRAGANA.match(u)}


def _markers(text: str) -> dict[str, list[set[str]]]:
    """Marker -> the content of the sentence around each of its occurrences, in order."""
    found: dict[str, list[set[str]]] = defaultdict(list)
    for piece in _SENTENCE_END.split(text):
        context = _content(piece)
        for m in _MARKER.finditer(piece):
            key = m.group("url") if m.group("link") else re.sub(r"\s+", "", m.group())
            key = key.rstrip(".,;:!?*_~") if m.group("bare") else key
            found[key].append(context)
    return found


def moved_markers(block_text: str, reply_text: str) -> list[Reason]:
    """``moved citation [3]`` / ``moved link https://...`` for each marker of ``block_text``
    that ``reply_text`` puts by other words (see the module docstring); at most one reason."""
    before, after = _markers(block_text), _markers(reply_text)
    for key, contexts in before.items():
        theirs = list(after.get(key, []))
        for mine in contexts:
            if len(mine) < MIN_CONTENT or not theirs:
                continue  # too little to judge; a lost marker is the token check's
            best = max(theirs, key=lambda other: len(mine & other))
            theirs.remove(best)  # each occurrence in the reply answers one in the block
            if len(mine & best) < MIN_KEPT * len(mine):
                kind = "link" if "/" in key or key.startswith("www") else "citation"
                shown = key if len(key) <= 60 else key[:59] + "\u2026"
                return [Reason(f"moved {kind}", shown)]
    return []
