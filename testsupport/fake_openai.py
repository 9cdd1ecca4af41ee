"""The loopback test server: a real OpenAI-compatible HTTP server that counts and misbehaves.

The one HTTP server the tests run (``benchmarks/_server.py`` is the benchmarks' own, in a
process of its own). It answers ``POST /v1/chat/completions`` (JSON or SSE streaming),
``GET /v1/models`` and ``GET /health`` from a thread pool, and records every request; for the
operator tools also ``GET /metrics`` and ``POST /tokenize`` as vLLM does (when given), and for
the Redis limiter tests ``GET /hold?ms=N&who=NAME`` (held ``N`` ms, counted per caller: the
independent witness of a cap shared by several processes; :func:`hold` calls it). It is the
server-side witness for the concurrency cap (``max_in_flight`` is counted here, not in the
client) and the source of faults a real model server cannot produce on demand: 429 with
``Retry-After``, 5xx, connection resets mid-response, hangs past the read timeout, malformed
JSON, empty ``choices``.

The model it plays echoes the text between ``<block>`` and ``</block>`` in the last user message
through ``reply`` (default: unchanged), one "token" per whitespace-separated word, cut at
``max_tokens`` or ``output_cap`` with ``finish_reason: "length"``. A request with a
``prediction`` gets ``usage.completion_tokens_details`` as the OpenAI API reports predicted
outputs: the prediction's words the reply used (accepted) and those it did not (rejected).
"""

from __future__ import annotations

import contextlib
import json
import re
import select
import socket
import struct
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from testsupport.loopback import LoopbackServer, QuietHandler

__all__ = ["FakeOpenAI", "Fault", "Seen", "Start", "block_text", "hold"]

# Never route loopback calls through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def hold(root_url: str, ms: int, who: str) -> None:
    """Make one ``/hold`` request (blocking): the server keeps it open ``ms`` milliseconds."""
    with _OPENER.open(f"{root_url}/hold?ms={ms}&who={who}", timeout=60) as response:
        response.read()


_BLOCK = re.compile(r"<block>\n?(.*?)\n?</block>", re.DOTALL)


def block_text(body: dict[str, Any]) -> str:
    """The block text inside the request's last user message (``""`` if none)."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            m = _BLOCK.search(message.get("content", ""))
            return m.group(1) if m else message.get("content", "")
    return ""


@dataclass(frozen=True)
class Fault:
    """What to do instead of (or before) answering normally."""

    status: int | None = None
    """Answer with this HTTP status and an OpenAI-style error body."""
    message: str | None = None
    """The error body's message (default ``injected STATUS``)."""
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    """Answer 200 with this raw body (e.g. malformed JSON), of type ``content_type``."""
    content_type: str = "application/json"
    chunks: tuple[bytes, ...] = ()
    """Answer 200 ``text/event-stream`` with these raw bytes, one write each, ``gap_s``
    seconds apart (the test does the SSE framing: a stream cut short, comments, trickles),
    then close the connection."""
    gap_s: float = 0.0
    reset: bool = False
    """Send part of the response, then reset the connection (TCP RST)."""
    hang_s: float = 0.0
    """Wait this long before answering (past the client's read timeout)."""
    empty_choices: bool = False


@dataclass(frozen=True)
class Start:
    """One ``/hold`` start: ``at`` (``time.monotonic()``, seconds), caller, and the number in
    flight overall and from that caller right after it started."""

    at: float
    who: str
    in_flight: int
    in_flight_who: int


@dataclass(frozen=True)
class Seen:
    """One request as the server saw it; times are ``time.monotonic()`` seconds."""

    number: int
    body: dict[str, Any]
    request_id: str | None
    authorization: str | None
    started: float
    in_flight: int
    """Requests in flight right after this one started (itself included)."""


class FakeOpenAI:
    """The server. ``with FakeOpenAI() as server:`` serves on ``server.base_url``."""

    def __init__(
        self,
        *,
        reply: Callable[[str], str] = lambda text: text,
        latency_s: Callable[[dict[str, Any]], float] = lambda body: 0.0,
        output_cap: int | None = None,
        fault: Callable[[int, dict[str, Any]], Fault | None] = lambda n, body: None,
        models: tuple[str, ...] = ("fake-model",),
        models_status: int = 200,
        echo_request_id: bool = True,
        cached_tokens: int | None = 0,
    ) -> None:
        self.reply = reply
        self.cached_tokens = cached_tokens  # None: no prompt_tokens_details, as vLLM by default
        self.latency_s = latency_s
        self.output_cap = output_cap
        self.fault = fault
        self.models = models
        self.models_status = models_status
        """The HTTP status of ``GET /v1/models`` (401: a server started with an API key)."""
        self.echo_request_id = echo_request_id
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen: list[Seen] = []
        self.active: dict[int, Seen] = {}
        """Requests in flight now, by number."""
        self.connections = 0
        """TCP connections accepted."""
        self.open_connections: set[socket.socket] = set()
        """The connections open now (:meth:`stop` drops them)."""
        self.by_who: Counter[str] = Counter()
        """``/hold`` requests in flight now, per caller."""
        self.starts: list[Start] = []
        """Every ``/hold`` start, in order."""
        self.model_lists = 0
        """``GET /v1/models`` requests answered."""
        self._httpd: LoopbackServer | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"{self.url}/v1"

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the server root (``/hold``, ``/metrics``)."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def snapshot(self) -> tuple[int, int, list[Start]]:
        """``(in flight now, max in flight so far, copy of the /hold start log)``."""
        with self.lock:
            return self.in_flight, self.max_in_flight, list(self.starts)

    def in_flight_of(self, who: str) -> int:
        """``/hold`` requests in flight now from ``who``."""
        with self.lock:
            return self.by_who[who]

    def __enter__(self) -> FakeOpenAI:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = LoopbackServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering, as a server that goes away: later connections are refused, and the
        open ones (kept alive since an earlier request) are dropped."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self.lock:
            open_now, self.open_connections = list(self.open_connections), set()
        for sock in open_now:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def enter(self, body: dict[str, Any], headers: Any) -> Seen:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            seen = Seen(
                number=len(self.seen),
                body=body,
                request_id=headers.get("x-request-id"),
                authorization=headers.get("authorization"),
                started=time.monotonic(),
                in_flight=self.in_flight,
            )
            self.seen.append(seen)
            self.active[seen.number] = seen
        return seen

    def leave(self, seen: Seen) -> None:
        with self.lock:
            self.in_flight -= 1
            self.active.pop(seen.number, None)

    # What a vLLM stand-in overrides (tests/ops): the defaults are a plain OpenAI server's.
    def models_payload(self) -> Any:
        """The ``GET /v1/models`` body."""
        data = [{"id": m, "object": "model", "owned_by": "fake"} for m in self.models]
        return {"object": "list", "data": data}

    def metrics_text(self) -> str | None:
        """The ``GET /metrics`` text (Prometheus format); ``None``: 404, as here by default."""
        return None

    def tokenize_count(self, messages: list[dict[str, Any]]) -> int | None:
        """The ``POST /tokenize`` count for ``messages``; ``None``: 404, as here by default."""
        return None

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """The ``usage.prompt_tokens`` reported for ``messages`` (a character count / 4)."""
        return sum(len(m.get("content", "")) for m in messages) // 4

    def hold(self, who: str, seconds: float) -> None:
        """Serve one ``/hold``: count it in flight (overall and for ``who``) for ``seconds``."""
        with self.lock:
            self.in_flight += 1
            self.by_who[who] += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.starts.append(Start(time.monotonic(), who, self.in_flight, self.by_who[who]))
        try:
            time.sleep(seconds)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.by_who[who] -= 1

    def active_matching(self, needle: str) -> int:
        """Requests in flight now whose last message contains ``needle``."""
        with self.lock:
            return sum(needle in s.body["messages"][-1]["content"] for s in self.active.values())


@dataclass(frozen=True)
class _Answer:
    """One reply as the handler writes it: ``words`` (one completion token each), the
    ``finish`` reason, the ``usage`` object, extra response ``headers``; ``empty`` sends no
    choices, ``reset`` cuts the connection part way."""

    rid: str
    model: Any
    words: list[str]
    finish: str
    usage: dict[str, Any]
    headers: dict[str, str]
    empty: bool
    reset: bool


class _Handler(QuietHandler):
    owner: FakeOpenAI

    def setup(self) -> None:
        super().setup()
        with self.owner.lock:
            self.owner.connections += 1
            self.owner.open_connections.add(self.connection)

    def finish(self) -> None:
        with self.owner.lock:
            self.owner.open_connections.discard(self.connection)
        super().finish()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.startswith("/hold"):
            query = parse_qs(urlsplit(self.path).query)
            self.owner.hold(query.get("who", ["?"])[0], int(query.get("ms", ["0"])[0]) / 1000)
            with contextlib.suppress(OSError):  # the caller died (SIGKILL test): nobody to answer
                self._send_json(200, "ok")
            return
        metrics = self.owner.metrics_text() if self.path == "/metrics" else None
        if self.path.endswith("/models"):
            with self.owner.lock:
                self.owner.model_lists += 1
            if self.owner.models_status != 200:
                error = {"message": "refused", "code": self.owner.models_status}
                self._send_json(self.owner.models_status, {"error": error})
            else:
                self._send_json(200, self.owner.models_payload())
        elif self.path == "/health":
            self._send_json(200, {"status": "ok"})
        elif metrics is not None:
            data = metrics.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._send_json(404, {"detail": "Not Found"})

    def _wait_unless_client_leaves(self, seconds: float) -> bool:
        """Sleep ``seconds``; return False early if the client closed its connection."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        self.close_connection = True
                        return False
                except OSError:
                    self.close_connection = True
                    return False
                time.sleep(min(left, 0.01))  # pipelined bytes: nothing to do but wait
        return True

    def _reset(self) -> None:
        self.wfile.flush()
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        owner = self.owner
        count = owner.tokenize_count(body.get("messages", [])) if self.path == "/tokenize" else None
        if count is not None:
            self._send_json(200, {"count": count, "tokens": []})
            return
        if not self.path.endswith("/chat/completions"):
            self._send_json(404, {"detail": "Not Found"})
            return
        seen = owner.enter(body, self.headers)
        try:
            fault = owner.fault(seen.number, body)
            wait = (fault.hang_s if fault is not None else 0.0) + owner.latency_s(body)
            if not self._wait_unless_client_leaves(wait):
                return  # the client gave up: like vLLM, abort the request and free the slot
            headers = {"x-request-id": seen.request_id or ""} if owner.echo_request_id else {}
            if fault is not None and fault.status is not None:
                message = fault.message or f"injected {fault.status}"
                error = {"error": {"message": message, "type": "fault"}}
                self._send_json(fault.status, error, {**headers, **fault.headers})
                return
            if fault is not None and fault.body is not None:
                data = fault.body.encode()
                self.send_response(200)
                self.send_header("Content-Type", fault.content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if fault is not None and fault.chunks:
                self._trickle(fault)
                return
            self._answer(body, seen, headers, fault)
        finally:
            owner.leave(seen)

    def _trickle(self, fault: Fault) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for i, data in enumerate(fault.chunks):
            if i and not self._wait_unless_client_leaves(fault.gap_s):
                return
            try:
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:  # the client hung up
                return

    def _answer(
        self, body: dict[str, Any], seen: Seen, headers: dict[str, str], fault: Fault | None
    ) -> None:
        words = self.owner.reply(block_text(body)).split(" ")
        limit = min(body.get("max_tokens") or 10**9, self.owner.output_cap or 10**9)
        finish = "stop"
        if len(words) > limit:
            words, finish = words[:limit], "length"
        usage = self._usage(body, words)
        echoed = self.owner.echo_request_id and seen.request_id
        rid = f"chatcmpl-{seen.request_id if echoed else seen.number}"
        answer = _Answer(
            rid=rid,
            model=body.get("model"),
            words=words,
            finish=finish,
            usage=usage,
            headers=headers,
            empty=fault is not None and fault.empty_choices,
            reset=fault is not None and fault.reset,
        )
        if not body.get("stream"):
            self._whole(answer)
        else:
            self._stream(answer)

    def _usage(self, body: dict[str, Any], words: list[str]) -> dict[str, Any]:
        """The reply's ``usage``: prompt tokens as counted, one completion token a word, the
        cached tokens set, and prediction tokens accepted or not as the OpenAI API counts them."""
        prompt_tokens = self.owner.prompt_tokens(body.get("messages", []))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(words),
            "total_tokens": prompt_tokens + len(words),
        }
        if self.owner.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": self.owner.cached_tokens}
        prediction = body.get("prediction")
        if isinstance(prediction, dict):  # as the OpenAI API: words of the prediction used or not
            predicted = Counter(str(prediction.get("content", "")).split(" "))
            accepted = sum((Counter(words) & predicted).values())
            usage["completion_tokens_details"] = {
                "accepted_prediction_tokens": accepted,
                "rejected_prediction_tokens": sum(predicted.values()) - accepted,
            }
        return usage

    def _whole(self, a: _Answer) -> None:
        """One JSON reply (``stream`` off); ``reset`` cuts it after 20 bytes of 100,000."""
        message = {"role": "assistant", "content": " ".join(a.words)}
        choice = {"index": 0, "message": message, "finish_reason": a.finish}
        payload = {
            "id": a.rid,
            "object": "chat.completion",
            "created": 0,
            "model": a.model,
            "choices": [] if a.empty else [choice],
            "usage": a.usage,
        }
        if a.reset:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(json.dumps(payload).encode()[:20])
            self._reset()
            return
        self._send_json(200, payload, a.headers)

    def _stream(self, a: _Answer) -> None:
        """Server-sent events, one chunk a word, then the finish and the usage chunks;
        ``reset`` cuts the connection halfway through the words."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in a.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True

        def event(obj: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()

        base = {
            "id": a.rid,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": a.model,
        }
        if a.empty:
            event({**base, "choices": [], "usage": a.usage})
            self.wfile.write(b"data: [DONE]\n\n")
            return
        for i, word in enumerate(a.words):
            delta = {"content": word if i == 0 else " " + word}
            event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            if a.reset and i == len(a.words) // 2:
                self._reset()
                return
        event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": a.finish}]})
        event({**base, "choices": [], "usage": a.usage})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
