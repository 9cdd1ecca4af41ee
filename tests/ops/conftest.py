"""Shared fixtures for the ops tests: recorded vLLM files and a loopback stub vLLM server.

The stub is the loopback test server (``testsupport/fake_openai.py``) playing vLLM: it serves
the recorded ``/v1/models`` and ``/metrics`` files from ``fixtures/vllm/`` and answers
``/tokenize`` and ``/v1/chat/completions`` (plain and streamed) the way vLLM 0.32 does, with
instant replies.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from testsupport.fake_openai import FakeOpenAI, Seen

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "vllm"


def fixture_text(name: str) -> str:
    """The text of a file in ``fixtures/vllm/``."""
    return (FIXTURES / name).read_text(encoding="utf-8")


def stub_token_count(messages: list[dict[str, Any]]) -> int:
    """The stub's tokenizer: 10 template tokens plus one per whitespace-separated word."""
    return 10 + sum(len(str(m.get("content", "")).split()) for m in messages)


@dataclass
class StubState:
    """What the stub does: ``echo_request_id`` (like ``--enable-request-id-headers``),
    ``cached_tokens`` in usage (``None``: no ``prompt_tokens_details``, like vLLM without
    ``--enable-prompt-tokens-details``), ``prefix_hit_tokens`` added to
    ``vllm:prefix_cache_hits_total`` per chat request, ``metrics_file`` (``None``: 404), and
    the counters and request log it keeps."""

    echo_request_id: bool = True
    cached_tokens: int | None = None
    prefix_hit_tokens: int = 0
    metrics_file: str | None = "metrics-idle.txt"
    tokenize: bool = True
    queries: int = 0
    hits: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class VllmStub(FakeOpenAI):
    """The loopback test server playing vLLM 0.32: the recorded ``/v1/models`` and
    ``/metrics`` (its prefix-cache counters live), ``/tokenize`` with :func:`stub_token_count`,
    and chat replies of exactly ``max_tokens`` tokens (``finish_reason: "length"``), all read
    from ``state`` at each request so that a test can change them mid-way."""

    def __init__(self, state: StubState) -> None:
        self.state = state
        super().__init__(reply=lambda text: " ".join(f"w{i}" for i in range(8192)))

    @property
    def cached_tokens(self) -> int | None:
        """``usage.prompt_tokens_details.cached_tokens``, from ``state``."""
        return self.state.cached_tokens

    @cached_tokens.setter
    def cached_tokens(self, value: int | None) -> None:
        """FakeOpenAI's constructor sets it; the stub keeps ``state``'s."""

    @property
    def echo_request_id(self) -> bool:
        """Like ``--enable-request-id-headers``, from ``state``."""
        return self.state.echo_request_id

    @echo_request_id.setter
    def echo_request_id(self, value: bool) -> None:
        self.state.echo_request_id = value

    def models_payload(self) -> Any:
        return json.loads(fixture_text("models.json"))

    def metrics_text(self) -> str | None:
        st = self.state
        if st.metrics_file is None:
            return None
        text = fixture_text(st.metrics_file)
        with st.lock:
            text = re.sub(r"(?m)^(vllm:prefix_cache_queries_total\{[^}]*\}) \S+",
                          rf"\g<1> {float(st.queries)}", text)  # fmt: skip
            text = re.sub(r"(?m)^(vllm:prefix_cache_hits_total\{[^}]*\}) \S+",
                          rf"\g<1> {float(st.hits)}", text)  # fmt: skip
        return text

    def tokenize_count(self, messages: list[dict[str, Any]]) -> int | None:
        return stub_token_count(messages) if self.state.tokenize else None

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        return stub_token_count(messages)

    def enter(self, body: dict[str, Any], headers: Any) -> Seen:
        st = self.state
        with st.lock:
            st.requests.append(body)
            st.queries += stub_token_count(body.get("messages", []))
            st.hits += st.prefix_hit_tokens
        return super().enter(body, headers)


@dataclass
class Stub:
    """A running stub: ``url`` is its ``/v1`` base URL, ``state`` its settings and counters."""

    url: str
    state: StubState


@pytest.fixture
def stub() -> Iterator[Stub]:
    """A stub vLLM server on loopback for the duration of one test."""
    state = StubState()
    with VllmStub(state) as server:
        yield Stub(url=server.base_url, state=state)


@pytest.fixture
def dead_url() -> str:
    """A loopback URL on which nothing listens (a port bound, then closed)."""
    import socket  # noqa: PLC0415 - only this fixture needs it

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
