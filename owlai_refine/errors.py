"""The errors owlai-refine raises, in one tree.

    RefineError                     base class: catch this to catch everything below
    ├── ConfigError                 the settings cannot work (no model, bad URL, bad limits)
    │   ├── AuthError               the server refused our credentials (401/403): the run stops
    │   └── LocalModelError         the embedded llama.cpp model server cannot be set up
    ├── InputError                  the report cannot be read as UTF-8 Markdown
    ├── OutputError                 the refined report cannot be written
    ├── CassetteError               a cassette file is unreadable or has no reply for a request
    │   └── CassetteMissError       replay found no recorded reply for one block's request
    ├── LimiterError                a slot limiter backend (e.g. Redis) stopped working
    └── BlockCallError              one block's model call failed (kept inside BlockOutcome)
        ├── RetryableCallError      the failure is worth retrying (5xx, 429, timeout, connection)
        └── FatalCallError          retrying the same request cannot help (400, 404, 422)

What escapes :func:`owlai_refine.refine` (and ``Refiner.refine``): ``ConfigError`` and its
``AuthError`` and ``LocalModelError``, and ``CassetteError`` (replay has no reply for a block).
A server that cannot be reached, or does not serve the model, is a ``ConfigError`` raised when
the ``Refiner`` opens (its pre-flight, ``owlai_refine.serve.preflight``), before any block is sent.
``InputError`` and ``OutputError`` come from the CLI's file handling, never from ``refine``,
which takes text and returns text. Per-block failures are recorded as ``failed`` outcomes and
the block keeps its original text. A ``LimiterError`` stops the run without escaping it: the
result comes back whole with ``stopped_by == "limiter"`` and every unsent block ``failed``.
The CLI maps each class to one exit code (see README).
"""

from __future__ import annotations

__all__ = [
    "AuthError",
    "BlockCallError",
    "CassetteError",
    "CassetteMissError",
    "ConfigError",
    "FatalCallError",
    "InputError",
    "LimiterError",
    "LocalModelError",
    "OutputError",
    "RefineError",
    "RetryableCallError",
]


class RefineError(Exception):
    """Base class of every error owlai-refine raises on purpose."""


class ConfigError(RefineError):
    """Raised when the settings cannot work: no model, an unusable URL, a limit out of range."""


class AuthError(ConfigError):
    """Raised when the server answers 401 or 403: every block would fail the same way.

    ``status`` is the HTTP status code.
    """

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class LocalModelError(ConfigError):
    """Raised when the embedded model server cannot start: extra not installed, model file
    missing and not fetchable, or the server did not answer its health check in time."""


class InputError(RefineError):
    """Raised when the input cannot be refined safely: missing, a directory, binary, not UTF-8,
    or over the size limit. Raised before any model call."""


class OutputError(RefineError):
    """Raised when the refined report cannot be written where asked (the input is untouched)."""


class CassetteError(RefineError):
    """Raised when a cassette file cannot be read or written."""


class CassetteMissError(CassetteError):
    """Raised in replay when a block's request has no recorded reply.

    ``key`` is the request-body hash that was looked up; ``block_id`` and ``line_span``
    (0-based ``[start, end)``) name the block once the refiner knows it.
    """

    def __init__(
        self,
        message: str,
        *,
        key: str,
        block_id: int | None = None,
        line_span: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message)
        self.block_id = block_id
        self.line_span = line_span
        self.key = key


class LimiterError(RefineError):
    """Raised when a slot limiter backend (e.g. Redis) fails; no request is sent without a slot."""


class BlockCallError(RefineError):
    """Raised (and caught by the refiner) when one block's model call fails.

    ``request_id`` is the ``X-Request-Id`` of the request that failed and ``attempt`` its
    number for the block (1-based; when the error ends the block, the attempts made): both are
    known where the error is raised, in :func:`~owlai_refine.serve.call.call_model`. ``status`` is
    the HTTP status if the server answered, ``retry_after_s`` the server's ``Retry-After`` in
    seconds if it sent one (not capped: the server knows when it will have room), and
    ``connection`` is true when no HTTP answer came back at all.
    """

    def __init__(
        self,
        message: str,
        *,
        request_id: str | None = None,
        attempt: int = 0,
        status: int | None = None,
        retry_after_s: float | None = None,
        connection: bool = False,
    ) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.attempt = attempt
        self.status = status
        self.retry_after_s = retry_after_s
        self.connection = connection


class RetryableCallError(BlockCallError):
    """Raised for failures worth retrying: connection errors, timeouts, 429, 5xx, a malformed or
    empty reply body. ``connection`` is true when no HTTP answer came back at all."""


class FatalCallError(BlockCallError):
    """Raised for failures that retrying cannot fix: 400 (e.g. context too long), 404 (unknown
    model), 422. The block fails; the run goes on."""
