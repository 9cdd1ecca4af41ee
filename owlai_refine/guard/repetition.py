"""Repetition: a reply that loops (one sentence or phrase again and again) is rejected.

Pure code, no IO. Small models under greedy decoding fall into loops and may still end with
``finish_reason: "stop"``; while streaming, a loop should be cut as soon as it is evident, to free
the server's slot (:class:`RepetitionDetector`, fed incrementally).

Text is cut into *units*: a word (a run of non-space characters, lower-cased, stripped of the
punctuation around it, longer runs split into :data:`MAX_UNIT` character pieces so that loops
such as ``"......"`` or ``"abcabc..."`` are seen) or
one Han, Kana or Hangul character (Korean has spaces, but a loop such as "에선에선에선" has none).
A *phrase* ending at a unit is
the shortest run of units ending there that weighs at least ``window``. Weights follow token
cost, so that a window costs about as many tokens in every script: a word or a Hangul syllable
weighs 1 (SmolLM2 spends 1.3 tokens on an English word, 2.2 on a Hangul syllable and 3.1 on a
spaced one), a Han or Kana character 1/2 (1.4 and 1.7 tokens): 8 words, 8 syllables or 16
characters. A phrase seen ``threshold`` times, or a phrase three times as long seen twice (and
either more often than in the block itself), is a loop. An exact loop of period ``p`` units is
caught after ``min(2p + window, p + 3 * window)`` units: a short sentence looping in its third
round, a long one 24 words into its second.

A phrase shorter than the window (3 words up to the window) said three times in a row ("supported
by growth, supported by growth, supported by growth,") is a loop too, caught as its third copy
ends, unless the block itself has that run.

:func:`repetition_problem` also counts whole sentences (ended by ``.``, ``!``, ``?`` or their
CJK forms), so that a sentence repeated far apart (not a contiguous loop) is caught too. Reasons:
``repetition: phrase xN "<phrase>"`` and ``repetition: sentence xN "<sentence>"``.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from owlai_refine.guard.reasons import Reason
from owlai_refine.scripts import CJK, HANGUL

__all__ = ["MAX_UNIT", "RepetitionDetector", "repetition_problem", "units"]

MAX_UNIT = 16
"""Longest unit in characters; a longer run of non-space characters is cut into pieces."""
_CJK_CHAR = f"[{CJK}]"  # Kana, Han, the iteration mark, halfwidth Kana, Hangul syllables
_UNIT = re.compile(rf"{_CJK_CHAR}|(?:(?!{_CJK_CHAR})\S){{1,{MAX_UNIT}}}")
_IS_CJK = re.compile(_CJK_CHAR)
_IS_HANGUL = re.compile(f"[{HANGUL}]")
MIN_RUN_WEIGHT = 3.0
"""The lightest phrase whose three copies in a row are a loop (3 words): "very, very, very"
or "and the and the and the" are prose, not loops."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[\u3002\uff01\uff1f])")
_MIN_SENTENCE_CHARS = 12
_PUNCT = ".,;:!?\"'()[]{}*_`\u201c\u201d\u2018\u2019"


def units(text: str) -> list[str]:
    """The units of ``text``: words or word pieces lower-cased and without the punctuation
    around them (unless that is all they are), and single CJK characters."""
    return [u.lower().strip(_PUNCT) or u for u in _UNIT.findall(text)]


def _weight(unit: str) -> float:
    if _IS_CJK.match(unit):
        return 1.0 if _IS_HANGUL.match(unit) else 0.5
    return 1.0


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


class _Phrases:
    """Count the phrases of one length (``window`` units of weight) as units arrive."""

    def __init__(self, window: float, threshold: int) -> None:
        self.window = window
        self.threshold = threshold
        self.units: deque[str] = deque()
        self.weights: deque[float] = deque()
        self.weight = 0.0
        self.counts: Counter[tuple[str, ...]] = Counter()

    def push(self, unit: str, weight: float) -> tuple[tuple[str, ...], int] | None:
        """Add ``unit`` of ``weight`` (its :func:`_weight`, computed once by the caller for both
        phrase lengths); ``(phrase, times seen)`` for the phrase it completes, if any."""
        self.units.append(unit)
        self.weights.append(weight)
        self.weight += weight
        while self.weight - self.weights[0] >= self.window:
            self.units.popleft()
            self.weight -= self.weights.popleft()
        if self.weight < self.window:
            return None
        phrase = tuple(self.units)
        self.counts[phrase] += 1
        return phrase, self.counts[phrase]


class _Runs:
    """Find a short phrase said three times in a row: the last ``3p`` units are one phrase of
    ``p`` units repeated, for every ``p`` whose phrase weighs at least :data:`MIN_RUN_WEIGHT`
    and less than ``window`` (longer phrases are the window's business)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self.max_units = int(window / 0.5)  # the most units a lighter-than-window phrase holds
        self.units: deque[str] = deque(maxlen=3 * self.max_units)
        self.weights: deque[float] = deque(maxlen=3 * self.max_units)

    def push(self, unit: str, weight: float) -> tuple[str, ...] | None:
        """Add ``unit``; the phrase whose third copy in a row it completes, if any."""
        self.units.append(unit)
        self.weights.append(weight)
        n = len(self.units)
        weight_p = 0.0
        for p in range(1, min(self.max_units, n // 3) + 1):
            weight_p += self.weights[n - p]
            if weight_p >= self.window:
                break
            if weight_p < MIN_RUN_WEIGHT or self.units[n - 1] != self.units[n - 1 - p]:
                continue
            if all(
                self.units[n - 1 - i] == self.units[n - 1 - i - p] == self.units[n - 1 - i - 2 * p]
                for i in range(p)
            ):
                return tuple(self.units[i] for i in range(n - p, n))
        return None


def _runs_in(text: str, window: float) -> frozenset[tuple[str, ...]]:
    """The short phrases said three times in a row somewhere in ``text``."""
    runs = _Runs(window)
    found = (runs.push(u, _weight(u)) for u in units(text))
    return frozenset(r for r in found if r is not None)


class RepetitionDetector:
    """Count the phrases of a growing text and report the first one that loops.

    Two phrase lengths are watched: a phrase of ``window`` words seen ``threshold`` times, and a
    phrase of ``LONG_FACTOR * window`` words seen twice (a 24-word stretch never recurs in real
    prose, so a long loop is cut one round earlier). With ``runs`` (the default), a shorter
    phrase (3 words up to the window) said three times in a row is a loop as well. Only phrases
    and runs seen more often than in ``baseline`` (the block's text) count.

    Feed it the whole text so far with :meth:`feed` (the same string, longer each time, as a
    streaming client accumulates it); it only reads the part it has not seen, so feeding a reply
    chunk by chunk costs time linear in the reply's length. Units that may still grow (a word
    with no space after it yet) wait for the next call.
    """

    LONG_FACTOR = 3

    def __init__(
        self, threshold: int, window: int, baseline: str = "", *, runs: bool = True
    ) -> None:
        self._pos = 0
        self._watch = (
            _Phrases(float(window), threshold),
            _Phrases(float(window * self.LONG_FACTOR), 2),
        )
        self._runs = _Runs(float(window)) if runs else None
        self.reason: Reason | None = None
        """The reason, once a loop has been seen (then further feeds return it at once)."""
        self._block = baseline
        self._window = window

    def _in_block(self, phrase: tuple[str, ...]) -> int:
        """How often the block has ``phrase``; the block's phrases are counted only when a
        phrase of the reply first reaches the threshold (most replies never do), once per
        block (``_phrase_counts`` is cached)."""
        return _phrase_counts(self._block, self._window).get(phrase, 0) if self._block else 0

    def _run_in_block(self, run: tuple[str, ...]) -> bool:
        return bool(self._block) and run in _baseline_runs(self._block, self._window)

    @property
    def fired(self) -> str | None:
        """:attr:`reason` as text (``repetition: phrase x3 "..."``), or ``None``."""
        return None if self.reason is None else str(self.reason)

    @property
    def counts(self) -> Counter[tuple[str, ...]]:
        """How often each phrase (of either length) has been seen so far."""
        total: Counter[tuple[str, ...]] = Counter()
        for watch in self._watch:
            total.update(watch.counts)
        return total

    def _push_all(self, new_units: list[str]) -> str | None:
        for unit in new_units:
            weight = _weight(unit)
            for watch in self._watch:
                found = watch.push(unit, weight)
                if found is None or self.reason is not None:
                    continue
                phrase, seen = found
                if seen >= watch.threshold and seen > self._in_block(phrase):
                    detail = f'phrase x{seen} "{_short(" ".join(phrase))}"'
                    self.reason = Reason("repetition", detail, ": ")
            run = self._runs.push(unit, weight) if self._runs is not None else None
            if run is not None and self.reason is None and not self._run_in_block(run):
                detail = f'phrase x3 in a row "{_short(" ".join(run))}"'
                self.reason = Reason("repetition", detail, ": ")
        return self.fired

    def feed(self, text: str, *, final: bool = False) -> str | None:
        """Read ``text[already read:]``; return the reason once a phrase has looped, else
        ``None``. ``final=True`` also reads a last unit that has no space after it."""
        if self.fired is not None:
            return self.fired
        end = len(text)
        if not final:
            # a trailing run of non-space, non-CJK characters may continue in the next chunk:
            # of it, only the MAX_UNIT pieces with more characters after them are final
            tail = end
            while tail > self._pos and not text[tail - 1].isspace():
                if _IS_CJK.match(text[tail - 1]):
                    break
                tail -= 1
            run = end - tail
            if run:
                end = tail + ((run - 1) // MAX_UNIT) * MAX_UNIT
        if end <= self._pos:
            return None
        chunk = text[self._pos : end]
        self._pos = end
        return self._push_all(units(chunk))


@lru_cache(maxsize=64)
def _phrase_counts(text: str, window: int) -> Mapping[tuple[str, ...], int]:
    """How often each phrase of either watched length occurs in ``text``: a block's baseline,
    computed once per block although each attempt's watchdog and the final check need it."""
    watch = (
        _Phrases(float(window), 0),
        _Phrases(float(window * RepetitionDetector.LONG_FACTOR), 0),
    )
    for unit in units(text):
        weight = _weight(unit)
        for phrases in watch:
            phrases.push(unit, weight)
    return MappingProxyType(watch[0].counts + watch[1].counts)


@lru_cache(maxsize=64)
def _baseline_runs(text: str, window: int) -> frozenset[tuple[str, ...]]:
    """The block's own runs of a short phrase said three times (allowed in its reply)."""
    return _runs_in(text, float(window))


def _sentences(text: str) -> list[str]:
    return [" ".join(s.split()).lower() for s in _SENTENCE_END.split(text) if s.strip()]


def repetition_problem(block_text: str, reply: str, threshold: int, window: int) -> Reason | None:
    """The ``repetition: ...`` reason if ``reply`` repeats a phrase or a sentence of at least
    12 characters ``threshold`` times or more (and more often than ``block_text`` does)."""
    before = Counter(_sentences(block_text))
    counts = Counter(s for s in _sentences(reply) if len(s) >= _MIN_SENTENCE_CHARS)
    for sentence, seen in counts.most_common(1):
        if seen >= threshold and seen > before[sentence]:
            return Reason("repetition", f'sentence x{seen} "{_short(sentence)}"', ": ")
    detector = RepetitionDetector(threshold, window, baseline=block_text)
    detector.feed(reply, final=True)
    found = detector.reason
    if found is not None and " in a row " in found.detail:  # name the phrase by the window rule
        phrase = RepetitionDetector(threshold, window, baseline=block_text, runs=False)
        phrase.feed(reply, final=True)
        return phrase.reason or found
    return found
