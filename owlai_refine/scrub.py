"""Secrets out of every string that leaves the process: log lines, error lines, printed bodies.

One rule for all of them: each secret (an API key, a URL's password) becomes ``[redacted]``
wherever it occurs, in strings nested at any depth in dicts, lists and tuples, and a lone
surrogate (text no UTF-8 encoder can write) becomes U+FFFD, so that a scrubbed value can always
be written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, TextIO, cast
from urllib.parse import urlsplit

__all__ = ["REDACTED", "scrub", "scrub_text", "scrubbed_stream", "url_secrets"]

REDACTED = "[redacted]"
_SURROGATE = re.compile("[\ud800-\udfff]")
_MIN_SECRET = 4
"""Shorter "secrets" (a placeholder key such as ``x``) would redact ordinary text."""


def scrub_text(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret of ``secrets`` (4 characters or more) replaced by
    ``[redacted]`` and every lone surrogate by U+FFFD."""
    for secret in secrets:
        if len(secret) >= _MIN_SECRET and secret in text:
            text = text.replace(secret, REDACTED)
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """:func:`scrub_text` applied to every string in ``value``, at any depth of dicts (keys
    and values), lists and tuples; other values are returned as they are."""
    if isinstance(value, str):
        return scrub_text(value, secrets)
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub(v, secrets) for v in value)
    return value


def url_secrets(urls: Iterable[str | None]) -> list[str]:
    """The passwords (and user names given with one) in ``urls``, such as a Redis limiter's
    ``redis://:PASSWORD@host``; URLs that do not parse give none."""
    found: list[str] = []
    for url in urls:
        if not url:
            continue
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        if parts.password:
            found.append(parts.password)
            if parts.username:
                found.append(f"{parts.username}:{parts.password}")
    return found


class _Scrubbed:
    """A text stream whose every write is scrubbed of ``secrets``; the rest is the stream's."""

    def __init__(self, stream: TextIO, secrets: Sequence[str]) -> None:
        self._stream, self._secrets = stream, list(secrets)

    def write(self, text: str) -> int:
        return self._stream.write(scrub_text(text, self._secrets))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def scrubbed_stream(stream: TextIO, secrets: Sequence[str]) -> TextIO:
    """``stream`` with every write scrubbed of ``secrets`` (:func:`scrub_text`), such as the
    CLI's stderr or the operator tools' stdout. A secret is caught only within one write."""
    return cast(TextIO, _Scrubbed(stream, secrets))
