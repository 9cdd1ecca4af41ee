"""Record and replay model exchanges: JSONL cassettes behind an httpx transport.

A cassette is a JSONL file, one exchange per line::

    {"key": "<sha256 of the canonical request body>", "method": "POST",
     "path": "/v1/chat/completions", "request": {...body...},
     "response": {"status": 200, "content_type": "text/event-stream", "body": "..."},
     "complete": true}

The key hashes the request body with sorted keys (model, messages, sampling parameters, ...);
headers never enter it, so request ids and ``Authorization`` neither change the key nor reach
the file. Replay answers by key through an ``httpx2.MockTransport``, so the order in which
concurrent blocks ask does not matter. Recording appends each exchange when its response ends,
flushed to disk, so a crashed run keeps what it got (``--resume`` sends only the rest).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TextIO, cast

import httpx2

from owlai_refine.errors import CassetteError, CassetteMissError

__all__ = [
    "RecordingTransport",
    "ReplayTransport",
    "load_cassette",
    "request_key",
]


def request_key(method: str, path: str, body: bytes) -> str:
    """The cassette key of a request: SHA-256 (hex, 32 chars) of its JSON body with sorted keys
    and no whitespace, or of ``"METHOD path"`` for a request without a body. The ``priority``
    and ``prediction`` fields are left out: a scheduling hint for the server
    (``RefineConfig.priority``) and a predicted output (``RefineConfig.predicted_outputs``, the
    block itself), which change when a reply comes, not what it says."""
    if body:
        try:
            data = json.loads(body)
            if isinstance(data, dict):
                data.pop("priority", None)
                data.pop("prediction", None)
            canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            canonical = body.decode("utf-8", "replace")
    else:
        canonical = f"{method} {path}"
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _exchange(line: str) -> dict[str, Any]:
    """One cassette line as an exchange; ``ValueError`` naming what is wrong otherwise."""
    exchange = json.loads(line)
    if not isinstance(exchange, dict) or not isinstance(exchange.get("key"), str):
        raise ValueError("no 'key'")
    response = exchange.get("response")
    if not isinstance(response, dict) or not isinstance(response.get("body"), str):
        raise ValueError("no 'response.body'")
    status = response.get("status")
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise ValueError(f"'response.status' {status!r} is not an HTTP status")
    return exchange


def _lines(text: str) -> list[str]:
    """The lines of a cassette: split at ``\\n`` only (JSON escapes it inside strings), never
    at U+2028, U+2029 or U+0085, which a report or reply may hold raw and ``str.splitlines``
    would split at."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def load_cassette(
    path: Path, *, allow_cut_first: bool = False, complete_only: bool = False
) -> dict[str, dict[str, Any]]:
    """Read a cassette: ``{key: exchange}``. A later line for the same key wins, except that a
    complete exchange is never replaced by an incomplete one. A missing or empty file is empty.

    A final line cut short by a crash is ignored when good lines come before it (or always,
    with ``allow_cut_first``, as ``--resume`` needs). With ``complete_only`` (``--resume``)
    an exchange recorded incomplete (a stream that was cut or closed early) is left out, so
    that its request is sent again. Raises :class:`CassetteError` for a file
    that is not UTF-8 JSON lines or holds a line that is not an exchange.
    """
    if not path.exists():
        return {}
    exchanges: dict[str, dict[str, Any]] = {}
    try:
        lines = _lines(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise CassetteError(f"{path}: not a cassette (not UTF-8 text)") from exc
    except OSError as exc:
        raise CassetteError(f"cannot read cassette {path}: {exc.strerror or exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            exchange = _exchange(line)
        except ValueError as exc:
            if number == len(lines) and (exchanges or allow_cut_first):
                break  # a crash cut the last line short: everything before it is good
            raise CassetteError(
                f"{path}:{number}: not a cassette exchange ({exc}); cassettes are the JSON "
                "lines that --record writes"
            ) from exc
        key = exchange["key"]
        old = exchanges.get(key)
        if old is None or exchange.get("complete", True) or not old.get("complete", True):
            exchanges[key] = exchange
    if complete_only:
        return {k: e for k, e in exchanges.items() if e.get("complete", True) is True}
    return exchanges


def _response(exchange: dict[str, Any], request: httpx2.Request) -> httpx2.Response:
    response = exchange["response"]
    return httpx2.Response(
        status_code=response["status"],
        headers={"content-type": response.get("content_type", "application/json")},
        content=response["body"].encode("utf-8"),
        request=request,
    )


class ReplayTransport(httpx2.MockTransport):
    """Answers every request from a cassette; touches no network.

    A request whose key is not in the cassette raises :class:`CassetteMissError` (the refiner
    adds the block's id and lines to the message).
    """

    offline = True
    """Tells ``refine`` that no model server is needed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.exchanges = load_cassette(path)
        super().__init__(self._answer)

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        key = request_key(request.method, request.url.path, request.content)
        exchange = self.exchanges.get(key)
        if exchange is None:
            raise CassetteMissError(
                f"no recorded reply in {self.path} for request {key}; record it with --record",
                key=key,
            )
        return _response(exchange, request)


class _Tee(httpx2.AsyncByteStream):
    """Passes a response body through while keeping a copy, written out when it ends."""

    def __init__(self, inner: httpx2.AsyncByteStream, done: Any) -> None:
        self._inner = inner
        self._done = done
        self._chunks: list[bytes] = []
        self._finished = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk
        self._finish(complete=True)

    async def aclose(self) -> None:
        self._finish(complete=False)
        await self._inner.aclose()

    def _finish(self, *, complete: bool) -> None:
        if not self._finished:
            self._finished = True
            self._done(b"".join(self._chunks), complete)


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Forwards requests to ``inner`` (default: the network) and appends each exchange to the
    cassette at ``path`` as its response ends, flushed.

    With ``replay_first=True`` (``--resume``) a request already in the cassette, complete, is
    answered from it and not sent again (an incomplete one is sent again), except the model
    listing (``GET …/models``): that is the pre-flight, always asked of the server, so that a
    resumed recording against a server that is gone stops before any block. Only 2xx responses
    are recorded (a retry's failures are not).
    Raises :class:`CassetteError` if the file cannot be opened for appending, or (ending the
    run) if an exchange cannot be written to it (a full disk).
    """

    def __init__(
        self,
        path: Path,
        inner: httpx2.AsyncBaseTransport | None = None,
        *,
        replay_first: bool = False,
    ) -> None:
        self.path = path
        self.inner = inner or httpx2.AsyncHTTPTransport()
        self.known = (
            load_cassette(path, allow_cut_first=True, complete_only=True) if replay_first else {}
        )
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file: TextIO = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise CassetteError(f"cannot write cassette {path}: {exc}") from exc
        self.replayed = 0
        self.recorded = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        key = request_key(request.method, request.url.path, body)
        known = self.known.get(key)
        listing = request.method == "GET" and request.url.path.endswith("/models")
        if known is not None and not listing:
            self.replayed += 1
            return _response(known, request)
        response = await self.inner.handle_async_request(request)
        if not 200 <= response.status_code < 300:
            return response
        request_json: Any = json.loads(body) if body else None

        def done(data: bytes, complete: bool) -> None:
            self._write(
                {
                    "key": key,
                    "method": request.method,
                    "path": request.url.path,
                    "request": request_json,
                    "response": {
                        "status": response.status_code,
                        "content_type": response.headers.get("content-type", ""),
                        "body": data.decode("utf-8", "replace"),
                    },
                    "complete": complete,
                }
            )

        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Tee(cast(httpx2.AsyncByteStream, response.stream), done),
            extensions=response.extensions,
            request=request,
        )

    def _write(self, exchange: dict[str, Any]) -> None:
        line = json.dumps(exchange, ensure_ascii=False, sort_keys=True)
        with self._lock:
            try:
                self._file.write(line + "\n")
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise CassetteError(
                    f"cannot write cassette {self.path}: {exc.strerror or exc}"
                ) from exc
            self.recorded += 1

    async def aclose(self) -> None:
        """Close the cassette file and the inner transport."""
        with self._lock, contextlib.suppress(OSError):  # a failed write was raised already
            self._file.close()
        await self.inner.aclose()
