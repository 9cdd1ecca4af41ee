"""The CLI's logging: JSON lines through structlog, to stderr or a file.

The library never configures logging; this is the application doing it. Every string value is
scrubbed of the API key before rendering (defence in depth: the key is never logged on purpose).
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

__all__ = ["configure_json_logging"]


def _scrubber(secrets: list[str]) -> structlog.types.Processor:
    def scrub(_: Any, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in event.items():
            if isinstance(value, str):
                clean = value
                for secret in secrets:
                    clean = clean.replace(secret, "[redacted]")
                event[key] = clean
        return event

    return scrub


def configure_json_logging(
    stream: TextIO, level: str = "info", secrets: list[str] | None = None
) -> None:
    """Send owlai-refine's structlog events to ``stream`` as one JSON object per line, with
    ``timestamp`` (ISO 8601, UTC), ``level`` and ``event``; drop events below ``level``
    (``debug`` adds block text). ``secrets`` are replaced by ``[redacted]`` wherever they occur."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.dict_tracebacks,
            _scrubber([s for s in secrets or [] if len(s) >= 4]),
            structlog.processors.JSONRenderer(ensure_ascii=False, sort_keys=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
