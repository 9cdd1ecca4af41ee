"""The CLI's logging: JSON lines through structlog, to stderr or a file.

The library never configures logging; this is the application doing it. Every string, at any
depth of the event (a traceback's frames included), is scrubbed of the secrets before rendering
(defence in depth: no secret is logged on purpose), and tracebacks carry no frame locals.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog
from structlog.tracebacks import ExceptionDictTransformer

from owlai_refine.scrub import scrub

__all__ = ["configure_json_logging"]


def _scrubber(secrets: list[str]) -> structlog.types.Processor:
    def scrubbed(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in event.items():
            event[key] = scrub(value, secrets)
        return event

    return scrubbed


def configure_json_logging(
    stream: TextIO, level: str = "info", secrets: list[str] | None = None
) -> None:
    """Send owlai-refine's structlog events to ``stream`` as one JSON object per line, with
    ``timestamp`` (ISO 8601, UTC), ``level`` and ``event``; drop events below ``level``
    (``debug`` adds block text). ``secrets`` (4 characters or more) are replaced by
    ``[redacted]`` wherever they occur, at any depth; tracebacks are dicts without frame
    locals."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False)),
            _scrubber(list(secrets or [])),
            structlog.processors.JSONRenderer(ensure_ascii=False, sort_keys=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
