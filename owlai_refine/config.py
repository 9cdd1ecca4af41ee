"""Settings for a refine run: where the model is, how many requests at once, how to retry.

Every time is in seconds and every size in tokens unless a name says otherwise. The CLI fills a
:class:`RefineConfig` from flags and environment variables; the library takes one explicitly.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from owlai_refine.defaults import DEFAULT_CONCURRENCY, DEFAULT_TEMPERATURE, Backend

__all__ = [
    "DEFAULT_CONCURRENCY",
    "Backend",
    "GuardConfig",
    "OutputBudget",
    "RefineConfig",
    "RetryPolicy",
    "redact_url",
]


_REFUSED_WITH_PREDICTION = frozenset({"audio", "max_completion_tokens", "tools", "functions"})
"""Request fields the OpenAI API refuses beside ``prediction`` whatever their value."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RetryPolicy(_Frozen):
    """How a failed call is retried: exponential back-off with full jitter, bounded in attempts
    and in total time. The wait happens outside the endpoint's limiter (no slot is held).

    Retried: connection errors, timeouts, 429, 5xx, a malformed body or an empty ``choices``
    list. Never retried: other 4xx. Each wait is the jittered back-off (at most ``max_wait_s``)
    or the server's ``Retry-After`` if that is longer: ``Retry-After`` is not capped by
    ``max_wait_s`` (the server knows when it will have room), only by ``max_total_s``, which
    gives up instead of waiting past it. ``wait_scale`` multiplies every wait; tests set it to
    0. All times are in seconds.
    """

    max_attempts: int = Field(default=5, ge=1, le=100)
    initial_wait_s: float = Field(default=1.0, ge=0)
    max_wait_s: float = Field(default=30.0, ge=0)
    max_total_s: float = Field(default=180.0, gt=0)
    """Start no attempt more than this long after the block's first request went out (time
    spent queueing for a slot before that does not count)."""
    wait_scale: float = Field(default=1.0, ge=0)


class OutputBudget(_Frozen):
    """The ``max_tokens`` sent with each block: ``ceil(ratio * estimated block tokens) +
    headroom``, at most ``max_tokens``. A refined block is rarely longer than 1.3x the original;
    2x plus headroom leaves room without letting a looping reply run to the server's cap."""

    ratio: float = Field(default=2.0, gt=0)
    headroom: int = Field(default=64, ge=0)
    max_tokens: int = Field(default=4096, ge=1)


class GuardConfig(_Frozen):
    """Limits the reply guard applies before a reply replaces its block (see ``guard``).

    Lengths are in characters after normalising whitespace; a ratio is reply / block."""

    min_length_ratio: float = Field(default=0.5, gt=0)
    """Reject a reply shorter than this fraction of the block (``too short``)."""
    max_length_ratio: float = Field(default=2.0, gt=0)
    """Reject a reply longer than this multiple of the block (``too long``)."""
    repeat_threshold: int = Field(default=3, ge=2)
    """Reject a reply in which one sentence or phrase of ``repeat_window`` words occurs this many
    times or more, and more often than in the block (while streaming, the stream is closed as
    soon as this is seen)."""
    repeat_window: int = Field(default=8, ge=4, le=64)
    """Words in a repetition phrase (a CJK character counts as half a word)."""
    check_language: bool = True
    """Reject a reply whose script proportions say it left the block's language."""


class RefineConfig(_Frozen):
    """Everything a refine run needs to know.

    ``base_url=None`` means the embedded llama.cpp server (needs ``owlai-refine[local]``).
    ``model=None`` asks the server's ``/v1/models`` and uses its only model (a ``ConfigError``
    if it serves none or several). ``concurrency=None`` takes the backend's default
    (:data:`DEFAULT_CONCURRENCY`); for a self-hosted vLLM server set it to ``max_num_seqs``.
    """

    base_url: str | tuple[str, ...] | None = None
    """The OpenAI-compatible endpoint (``http://host:port/v1``), or several endpoints serving
    the same model (e.g. one vLLM server per GPU group): each has its own ``slots``, and a
    block goes to whichever has a free slot. ``None``: the embedded llama.cpp server."""
    model: str | None = None
    api_key: SecretStr | None = Field(default=None, repr=False)
    backend: Backend = Backend.SELF_HOSTED
    concurrency: int | None = Field(default=None, ge=1, le=1024)
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0, le=2)
    presence_penalty: float | None = Field(default=0.0, ge=-2, le=2)
    """Sent on every request: 0 by default. A copy edit must reuse the block's own words, which
    a presence penalty punishes (chat model cards recommend 1.5, and a vLLM server's
    ``override_generation_config`` may apply it to every request that does not say otherwise).
    ``None`` sends nothing and leaves the server's default."""
    frequency_penalty: float | None = Field(default=0.0, ge=-2, le=2)
    """As :attr:`presence_penalty`, for the frequency penalty."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra request fields for the server (e.g. vLLM's ``repetition_penalty``); part of the
    cassette key. A field here wins over the same field set above."""

    def sampling_body(self) -> dict[str, Any]:
        """The request-body fields beyond ``model``, ``messages``, ``max_tokens`` and
        ``temperature``: the penalties that are not ``None``, then :attr:`extra_body`."""
        penalties = {
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
        }
        return {**{k: v for k, v in penalties.items() if v is not None}, **self.extra_body}

    stream: bool = True
    """Stream replies: gives TTFT, and lets a runaway reply be stopped early (freeing the slot)."""
    connect_timeout_s: float = Field(default=10.0, gt=0)
    read_timeout_s: float = Field(default=300.0, gt=0)
    """Longest silence allowed while waiting for (the next part of) a reply."""
    token_timeout_s: float = Field(default=120.0, gt=0)
    """Streaming: the longest wait for the first token after the response headers, and
    between two tokens. SSE comments (``: ping``) and bytes that make no token do not count:
    a stream that sends no token for this long is cut and retried."""
    request_deadline_s: float = Field(default=120.0, gt=0)
    """Every request ends within ``request_deadline_s + deadline_per_token_s * max_tokens``
    seconds of being sent, whatever the server sends meanwhile (it is then cut and retried)."""
    deadline_per_token_s: float = Field(default=0.5, ge=0)
    """See :attr:`request_deadline_s`: the time allowed per output token asked for."""
    output: OutputBudget = OutputBudget()
    retry: RetryPolicy = RetryPolicy()
    guard: GuardConfig = GuardConfig()
    max_block_tokens: int = Field(default=4000, ge=1)
    """Blocks estimated longer than this are skipped (``too_long``), never sent."""
    max_consecutive_connection_failures: int = Field(default=8, ge=1)
    """After this many calls in a row fail without any HTTP answer, the server is taken as gone:
    nothing more is sent and every unsent block keeps its text (the run is ``partial``)."""
    reference_headings: tuple[str, ...] | None = None
    """Headings whose sections are never sent; ``None`` for the built-in list."""
    report_context_chars: int = Field(default=2000, ge=0)
    """At most this many characters of title and outline go into the stable prompt prefix."""
    log_text: bool = False
    """Log each block's text and the model's reply (``refine.block_text``, DEBUG). Off by
    default: report text stays out of logs unless asked for (``refine --log-level debug``)."""

    unchanged_marker: bool = True
    """Offer the "no change needed" marker (``owlai_refine.markers.UNCHANGED_MARKER``) as the
    whole reply for a block that is already fine: such a block then costs a few decode tokens
    instead of its whole length again (the guard reads the marker alone as ``unchanged`` and
    refuses it with other text around it). ``max_tokens`` is the same either way. ``False``:
    the prompt without it (the recorded cassettes were made so)."""
    predicted_outputs: bool | None = None
    """Send each block as the OpenAI API's predicted output (``prediction: {"type":
    "content", "content": <block>}``): the API then skips generating the spans of the reply
    that match it. ``None``: on for :attr:`Backend.CLOUD`, off for self-hosted servers (vLLM
    and llama.cpp do not take the field). Never sent with a parameter the API refuses beside
    it (:meth:`prediction_conflict`: ``True`` with one is a validation error); an HTTP 400
    naming it drops it for that endpoint for the rest of the run (one WARNING
    ``refine.prediction_refused``). Its prediction tokens are billed as completion tokens
    when rejected: the ledger's ``accepted_prediction_tokens`` and
    ``rejected_prediction_tokens`` show them."""

    def prediction_conflict(self) -> str | None:
        """The first request field the OpenAI API refuses beside ``prediction`` (its Predicted
        Outputs guide: ``n`` > 1, ``logprobs``, ``top_logprobs``, ``presence_penalty`` or
        ``frequency_penalty`` > 0, ``audio``, ``modalities`` other than text,
        ``max_completion_tokens``, ``tools`` and ``functions``) in :meth:`sampling_body`, as
        ``"presence_penalty=0.5"``; ``None`` if there is none."""
        for name, value in self.sampling_body().items():
            refused = (
                (name == "n" and isinstance(value, int) and value > 1)
                or (name in ("presence_penalty", "frequency_penalty") and (value or 0) > 0)
                or (name in ("logprobs", "top_logprobs") and value not in (None, False))
                or (name == "modalities" and value not in (None, ["text"]))
                or (name in _REFUSED_WITH_PREDICTION and value is not None)
            )
            if refused:
                return f"{name}={value!r}"
        return None

    @property
    def sends_prediction(self) -> bool:
        """Whether block calls carry ``prediction`` (see :attr:`predicted_outputs`)."""
        wanted = (
            self.backend is Backend.CLOUD
            if self.predicted_outputs is None
            else self.predicted_outputs
        )
        return wanted and self.prediction_conflict() is None

    @model_validator(mode="after")
    def _check_prediction(self) -> RefineConfig:
        if self.predicted_outputs and (conflict := self.prediction_conflict()):
            raise ValueError(
                f"predicted_outputs: the API refuses prediction with {conflict}; leave one out"
            )
        return self

    limiter: str | None = None
    """Where the slots are counted: ``None`` for this process (an ``anyio.CapacityLimiter`` per
    endpoint), or ``redis://HOST:PORT/DB`` to share each endpoint's cap with every worker
    process using the same Redis (needs ``owlai-refine[redis]``)."""
    limiter_lease_s: float = Field(default=30.0, ge=0.1, le=3600)
    """Redis limiter: a slot held by a worker that died comes back within this many seconds."""
    priority: int = Field(default=10, ge=-(2**31), le=2**31 - 1)
    """vLLM request priority for self-hosted endpoints (lower is served first; people's chat
    turns use the default 0, so 10 makes the refine a background tenant). Sent only to
    self-hosted endpoints and never to one known to refuse it (an HTTP 400 naming the field
    drops it for that endpoint and the request is sent again at once). 0: never sent."""
    adaptive: bool = False
    """Self-hosted endpoints: adjust the cap on requests in flight about once a second from the
    server's ``/metrics`` (see :mod:`owlai_refine.serve.adaptive`): leave a slot free while others'
    requests run or wait, grow back to :attr:`slots` (never above) when the server is ours."""
    adaptive_interval_s: float = Field(default=1.0, gt=0, le=60)
    """Seconds between two readings of ``/metrics`` by the adaptive cap."""
    set_aside_s: float = Field(default=30.0, ge=0)
    """With several endpoints: how long one that refused a connection gets no new requests
    (it is probed meanwhile and comes back as soon as it answers)."""

    @field_validator("base_url", mode="before")
    @classmethod
    def _check_url(cls, value: object) -> str | tuple[str, ...] | None:
        if value is None:
            return None
        urls = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
        if not urls:
            return None
        checked: list[str] = []
        for url in urls:
            parts = urlsplit(str(url))
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"base URL must be http(s)://host[:port]/path, got {url!r}")
            checked.append(str(url).rstrip("/"))
        return checked[0] if len(checked) == 1 else tuple(checked)

    @field_validator("limiter")
    @classmethod
    def _check_limiter(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            parts = urlsplit(value)
            parts.port  # noqa: B018 - raises ValueError for a port that is no port
        except ValueError as exc:
            raise ValueError(f"limiter URL is not redis://HOST:PORT/DB ({exc})") from None
        if parts.scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"limiter must be redis://HOST:PORT/DB, got {redact_url(value)!r}")
        return value

    @property
    def base_urls(self) -> tuple[str, ...]:
        """The configured endpoints (empty: the embedded server)."""
        if self.base_url is None:
            return ()
        return (self.base_url,) if isinstance(self.base_url, str) else self.base_url

    @property
    def slots(self) -> int:
        """Requests in flight allowed to each endpoint."""
        return self.concurrency or DEFAULT_CONCURRENCY[self.backend]


def redact_url(url: str | None) -> str | None:
    """``url`` with any ``user:password@`` and query string removed, for logs and errors."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
