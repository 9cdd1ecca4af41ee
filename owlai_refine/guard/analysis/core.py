"""The analysers, one per language, each loaded once per process on first use, and
:func:`analyse`, which picks the language's and tags roles.

Thread safety: :func:`analyse` may be called from any thread (the refiner runs the guard in a
worker thread, off its event loop). The analysers are not all safe to share across threads
(MeCab's ``Tagger`` keeps one lattice; Kiwi and jieba say nothing of it), so every analyser call
and every analyser build holds one process-wide lock: at most one sentence is analysed at a
time, which costs nothing under the GIL (the analysers' Python side holds it anyway). The
sentence cache (``functools.lru_cache``) is itself thread-safe.
"""

from __future__ import annotations

import gc
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache, lru_cache

from owlai_refine.guard.analysis.tokens import Analyser, Analysis, Token

__all__ = ["analyse", "forget", "load_time"]

_LOAD_S: dict[str, float] = {}
_LOCK = threading.Lock()
"""Held while an analyser is built or runs: one analysis at a time per process."""


@cache
def _analyser(language: str) -> Analyser:
    """The tokenising function of ``language``, built once per process (its load time is kept
    for :func:`load_time`)."""
    started = time.perf_counter()
    fn: Analyser
    if language == "ko":
        from owlai_refine.guard.analysis.korean import analyser as build
    elif language == "ja":
        from owlai_refine.guard.analysis.japanese import analyser as build
    elif language == "zh":
        from owlai_refine.guard.analysis.chinese import analyser as build
    else:
        from owlai_refine.guard.analysis.english import analyser as build
    with _no_gc():
        fn = build()
        fn("." if language == "en" else "\u3002")  # an analyser's own lazy start counts as load
        if language == "en":
            from owlai_refine.guard.analysis.wordnet import load

            load()
    _LOAD_S[language] = time.perf_counter() - started
    return fn


@contextmanager
def _no_gc() -> Iterator[None]:
    """The cyclic garbage collector paused while a dictionary loads: jieba's 580,000 entries
    (one ``marshal.load``) and WordNet's index are objects without cycles, which the collector
    would otherwise walk again and again as they are made (jieba's load: 1.3 s -> 0.8 s)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def load_time(language: str) -> float | None:
    """Seconds this process spent loading ``language``'s analyser, or ``None`` if not loaded."""
    return _LOAD_S.get(language)


_SENTENCE = re.compile(r".+?(?:[.!?]+(?=\s|$)|[\u3002\uff01\uff1f]+|$)\s*", re.DOTALL)
SENTENCE_CACHE = 4096
"""Sentences kept analysed per process: a reply's sentences that its block already had (most
of a copy edit) are analysed once."""


@lru_cache(maxsize=SENTENCE_CACHE)
def _sentence(sentence: str, language: str) -> tuple[Token, ...]:
    from owlai_refine.guard.analysis.roles import tag_roles

    with _LOCK:  # builds the analyser once, and never runs one from two threads at once
        return tuple(tag_roles(_analyser(language)(sentence), language))


def forget() -> None:
    """Forget the analysed sentences (the analysers stay loaded)."""
    _sentence.cache_clear()


def analyse(text: str, language: str) -> Analysis:
    """``text`` analysed with the analyser of ``language`` (``en``, ``ko``, ``ja``, ``zh``; any
    other label gets the English tokenizer, which reads Latin words and leaves other scripts as
    single characters), sentence by sentence (a sentence seen before in this process is not
    analysed again), roles tagged within each sentence. Never raises for any text."""
    key = language if language in ("ko", "ja", "zh") else "en"
    tokens: list[Token] = []
    for m in _SENTENCE.finditer(text):
        at, found = m.start(), _sentence(m.group(), key)
        if at:
            found = tuple(
                Token(t.text, t.lemma, t.pos, t.tag, t.start + at, t.roles) for t in found
            )
        tokens += found
    return Analysis.of(key, tokens)
