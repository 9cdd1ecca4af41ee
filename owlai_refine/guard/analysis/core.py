"""The analysers, one per language, each loaded once per process on first use, and
:func:`analyse`, which picks the language's and tags roles."""

from __future__ import annotations

import time
from functools import cache

from owlai_refine.guard.analysis.tokens import Analyser, Analysis

__all__ = ["analyse", "load_time"]

_LOAD_S: dict[str, float] = {}


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
    fn = build()
    _LOAD_S[language] = time.perf_counter() - started
    return fn


def load_time(language: str) -> float | None:
    """Seconds this process spent loading ``language``'s analyser, or ``None`` if not loaded."""
    return _LOAD_S.get(language)


def analyse(text: str, language: str) -> Analysis:
    """``text`` analysed with the analyser of ``language`` (``en``, ``ko``, ``ja``, ``zh``; any
    other label gets the English tokenizer, which reads Latin words and leaves other scripts as
    single characters), roles tagged. Never raises for any text."""
    from owlai_refine.guard.analysis.roles import tag_roles

    key = language if language in ("ko", "ja", "zh") else "en"
    tokens = _analyser(key)(text)
    return Analysis.of(key, tag_roles(tokens, key))
