"""Shared fixtures for the ops tests: recorded vLLM files and a loopback stub vLLM server.

The stub (stdlib ``http.server`` in a thread, 127.0.0.1, ephemeral port) serves the recorded
``/v1/models`` and ``/metrics`` files from ``fixtures/vllm/`` and answers ``/tokenize`` and
``/v1/chat/completions`` (plain and streamed) the way vLLM 0.32 does, with instant replies.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

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
    ``prefix_hit_tokens`` added to ``vllm:prefix_cache_hits_total`` per chat request,
    ``metrics_file`` (``None``: 404), and the counters and request log it keeps."""

    echo_request_id: bool = True
    prefix_hit_tokens: int = 0
    metrics_file: str | None = "metrics-idle.txt"
    tokenize: bool = True
    queries: int = 0
    hits: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def _send(
        self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        st = self.server.state
        if self.path == "/v1/models":
            self._send(200, fixture_text("models.json").encode(), "application/json")
        elif self.path == "/metrics" and st.metrics_file is not None:
            text = fixture_text(st.metrics_file)
            with st.lock:
                text = re.sub(r"(?m)^(vllm:prefix_cache_queries_total\{[^}]*\}) \S+",
                              rf"\g<1> {float(st.queries)}", text)  # fmt: skip
                text = re.sub(r"(?m)^(vllm:prefix_cache_hits_total\{[^}]*\}) \S+",
                              rf"\g<1> {float(st.hits)}", text)  # fmt: skip
            self._send(200, text.encode(), "text/plain; version=0.0.4")
        else:
            self._send(404, b'{"detail":"Not Found"}', "application/json")

    def do_POST(self) -> None:
        st = self.server.state
        body = json.loads(self.rfile.read(int(self.headers["content-length"])) or b"{}")
        if self.path == "/tokenize" and st.tokenize:
            count = stub_token_count(body["messages"])
            self._send(200, json.dumps({"count": count, "tokens": []}).encode(), "application/json")
            return
        if self.path != "/v1/chat/completions":
            self._send(404, b'{"detail":"Not Found"}', "application/json")
            return
        rid = self.headers.get("x-request-id") or "stub0"
        prompt = stub_token_count(body["messages"])
        out = int(body.get("max_tokens") or 16)
        with st.lock:
            st.requests.append(body)
            st.queries += prompt
            st.hits += st.prefix_hit_tokens
        headers = {"x-request-id": rid} if st.echo_request_id else {}
        usage = {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
        if not body.get("stream"):
            reply = {
                "id": f"chatcmpl-{rid}" if st.echo_request_id else "chatcmpl-0123",
                "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "length",
                             "message": {"role": "assistant", "content": "OK"}}],
                "usage": usage,
            }  # fmt: skip
            self._send(200, json.dumps(reply).encode(), "application/json", headers)
            return
        base = {"id": f"chatcmpl-{rid}", "object": "chat.completion.chunk", "created": 0,
                "model": body["model"]}  # fmt: skip
        chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""},
                                       "finish_reason": None}])]  # fmt: skip
        for i in range(out):
            chunks.append(dict(base, choices=[{"index": 0, "delta": {"content": f" w{i}"},
                  "finish_reason": "length" if i == out - 1 else None}]))  # fmt: skip
        chunks.append(dict(base, choices=[], usage=usage))
        data = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
        self._send(200, data + b"data: [DONE]\n\n", "text/event-stream", headers)


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: StubState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@dataclass
class Stub:
    """A running stub: ``url`` is its ``/v1`` base URL, ``state`` its settings and counters."""

    url: str
    state: StubState


@pytest.fixture
def stub() -> Iterator[Stub]:
    """A stub vLLM server on loopback for the duration of one test."""
    state = StubState()
    server = _StubServer(state)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Stub(url=f"http://127.0.0.1:{server.server_address[1]}/v1", state=state)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def dead_url() -> str:
    """A loopback URL on which nothing listens (a port bound, then closed)."""
    import socket  # noqa: PLC0415 - only this fixture needs it

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
