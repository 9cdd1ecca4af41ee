"""A benchmark model server: OpenAI-compatible, on loopback, in its own process.

usage: python -m benchmarks._server   (prints ``PORT`` on its first line, serves until killed)

It answers ``POST /v1/chat/completions`` (streamed with chunked transfer encoding on a kept-alive
connection, as vLLM does, or whole), ``GET /v1/models``, and two control routes the benchmarks
use: ``POST /control`` (set the mode and its parameters; clears the records) and ``GET /stats``
(requests in flight, the most seen at once, one record per request). Its own process, so that
its work does not share the client's interpreter lock.

Modes (``/control`` JSON ``{"mode": ..., ...}``):

``latency`` (default)
    Echo the block text after the :class:`~benchmarks._common.LatencyModel` delay: the first
    token after ``ttft(prompt)``, the rest after the decode time of the whole reply. With
    ``"edit": true`` the reply is the block with one word changed (``very`` before its last
    word, see :func:`edited`), so the guard analyses it as it does a real copy edit instead of
    taking its ``unchanged`` shortcut; the modelled latency is the block's all the same.
``loop``
    A runaway model: stream the block's first ``normal_tokens`` pieces, then ``phrase`` over and
    over, one piece every ``token_s`` seconds, until ``max_tokens`` (capped at ``cap``) or the
    client disconnects. Each record counts the pieces written, and those written after the loop
    began, up to the write that found the connection closed.
"""

from __future__ import annotations

import contextlib
import json
import math
import subprocess
import sys
import threading
import time
from typing import Any

import httpx2

from benchmarks._common import (
    REPO,
    LatencyModel,
    block_text,
    chunk,
    prompt_tokens,
    sse_event,
    token_pieces,
    usage_chunk,
)
from owlai_refine.pipeline.prompt import estimate_tokens
from testsupport.loopback import LoopbackServer, QuietHandler

MODEL = "bench"


def edited(text: str) -> str:
    """``text`` with ``very`` put before its last word: a one-word edit that the guard judges
    in full (it refuses it as an intensified claim, as it should)."""
    head, space, last = text.rstrip().rpartition(" ")
    return f"{head}{space}very {last}" if space else text


class _Disconnected(Exception):
    """The client closed the connection while we were writing."""


class BenchServer(LoopbackServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.settings: dict[str, Any] = {"mode": "latency", **LatencyModel().to_json()}
        self.in_flight = 0
        self.max_in_flight = 0
        self.records: list[dict[str, Any]] = []

    def control(self, settings: dict[str, Any]) -> None:
        with self.lock:
            self.settings = {"mode": "latency", **LatencyModel().to_json(), **settings}
            self.records = []
            self.max_in_flight = self.in_flight

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "records": list(self.records),
            }


class _Handler(QuietHandler):
    server: BenchServer

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length", "0"))
        parsed: dict[str, Any] = json.loads(self.rfile.read(length) or b"{}")
        return parsed

    def do_GET(self) -> None:
        if self.path.endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        elif self.path == "/stats":
            self._json(200, self.server.stats())
        else:
            self._json(200, {"status": "ok"})

    def do_POST(self) -> None:
        body = self._body()
        if self.path == "/control":
            self.server.control(body)
            self._json(200, {"ok": True})
            return
        server = self.server
        with server.lock:
            settings = dict(server.settings)
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
            record: dict[str, Any] = {"n": len(server.records), "started": time.monotonic()}
            server.records.append(record)
        try:
            if settings["mode"] == "loop":
                self._loop(body, settings, record)
            else:
                self._latency(body, settings, record)
        except _Disconnected:
            record["ended"] = "disconnect"
            self.close_connection = True
        finally:
            record["finished"] = time.monotonic()
            with server.lock:
                server.in_flight -= 1

    # --- streaming with chunked transfer encoding -------------------------------------------
    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", self.headers.get("x-request-id", ""))
        self.end_headers()

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Disconnected from exc

    def _end_stream(self) -> None:
        self._write(sse_event("[DONE]"))
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Disconnected from exc

    def _latency(
        self, body: dict[str, Any], settings: dict[str, Any], record: dict[str, Any]
    ) -> None:
        model = LatencyModel(
            settings["prefill_s_per_token"], settings["decode_s_per_token"], settings["scale"]
        )
        text = block_text(body)
        prompt = prompt_tokens(body.get("messages", []))
        output = estimate_tokens(text)
        if settings.get("edit"):
            text = edited(text)
        ttft, total = model.ttft(prompt), model.latency(prompt, output)
        record.update(prompt=prompt, output=output, modelled_s=total)
        rid = f"chatcmpl-{record['n']}"
        pieces = token_pieces(text) or [""]
        time.sleep(ttft)
        if not body.get("stream"):
            time.sleep(total - ttft)
            message = {"role": "assistant", "content": text}
            payload = {
                "id": rid,
                "object": "chat.completion",
                "created": 0,
                "model": MODEL,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": usage_chunk(rid, MODEL, prompt, len(pieces))["usage"],
            }
            self._json(200, payload)
            record["ended"] = "stop"
            return
        self._start_stream()
        self._write(sse_event(chunk(rid, MODEL, pieces[0], None)))
        time.sleep(total - ttft)
        rest = "".join(pieces[1:])
        if rest:
            self._write(sse_event(chunk(rid, MODEL, rest, None)))
        self._write(sse_event(chunk(rid, MODEL, None, "stop")))
        self._write(sse_event(usage_chunk(rid, MODEL, prompt, len(pieces))))
        self._end_stream()
        record["ended"] = "stop"

    def _loop(self, body: dict[str, Any], settings: dict[str, Any], record: dict[str, Any]) -> None:
        text = block_text(body)
        normal = token_pieces(text)[: int(settings.get("normal_tokens", 40))]
        phrase = token_pieces(str(settings.get("phrase", " and so on")))
        limit = min(int(body.get("max_tokens") or 10**9), int(settings.get("cap", 32768)))
        token_s = float(settings.get("token_s", 0.001))
        prompt = prompt_tokens(body.get("messages", []))
        rid = f"chatcmpl-{record['n']}"
        record.update(loop_start=len(normal), written=0, after_loop=0, limit=limit)
        self._start_stream()
        ascii_chars = other_chars = 0  # of the text written after the loop began
        i = 0
        while i < limit:
            looping = i >= len(normal)
            piece = phrase[(i - len(normal)) % len(phrase)] if looping else normal[i]
            self._write(sse_event(chunk(rid, MODEL, piece, None)))
            i += 1
            record["written"] = i
            if looping:
                n_ascii = sum(1 for ch in piece if ord(ch) < 128)
                ascii_chars += n_ascii
                other_chars += len(piece) - n_ascii
                record["after_loop"] = i - len(normal)
                record["after_loop_est_tokens"] = math.ceil(ascii_chars / 3.5 + other_chars * 2.5)
            time.sleep(token_s)
        self._write(sse_event(chunk(rid, MODEL, None, "length")))
        self._write(sse_event(usage_chunk(rid, MODEL, prompt, i)))
        self._end_stream()
        record["ended"] = "length"


def main() -> None:
    server = BenchServer()
    print(server.server_address[1], flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # interactive use
        server.serve_forever(poll_interval=0.05)


if __name__ == "__main__":
    main()


class ServerProcess:
    """The benchmark server in a child process: ``with ServerProcess() as server:``."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[str] | None = None
        self.port = 0

    def __enter__(self) -> ServerProcess:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._server"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdout is not None
        self.port = int(self._proc.stdout.readline())
        self._http = httpx2.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=30)
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(10)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def control(self, **settings: Any) -> None:
        """Set the mode and its parameters (see the module docstring); clears the records."""
        self._http.post("/control", json=settings).raise_for_status()

    def stats(self) -> dict[str, Any]:
        """``in_flight``, ``max_in_flight`` and ``records`` (one dict per request)."""
        response = self._http.get("/stats")
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result
