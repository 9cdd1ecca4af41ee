"""A loopback HTTP server that counts requests in flight: the independent witness of the cap.

Limiter holders call ``GET /hold?ms=50&who=NAME`` while they hold a slot; the server counts how
many such requests are open at once, overall and per caller, and records when each one started.
It knows nothing of Redis, so its count stays honest even when Redis is stopped.
"""

from __future__ import annotations

import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["CountingServer", "Start", "hold"]

# Never route loopback calls through a proxy from the environment.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def hold(base_url: str, ms: int, who: str) -> None:
    """Make one ``/hold`` request (blocking): the server keeps it open ``ms`` milliseconds."""
    with _OPENER.open(f"{base_url}/hold?ms={ms}&who={who}", timeout=60) as response:
        response.read()


@dataclass(frozen=True)
class Start:
    """One request start: ``at`` (``time.monotonic()``, seconds), caller, and the number in
    flight overall and from that caller right after it started."""

    at: float
    who: str
    in_flight: int
    in_flight_who: int


class CountingServer:
    """Counts concurrent ``/hold`` requests. ``start()`` serves on 127.0.0.1 in a thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.by_who: Counter[str] = Counter()
        self.starts: list[Start] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def snapshot(self) -> tuple[int, int, list[Start]]:
        """``(in flight now, max in flight so far, copy of the start log)``."""
        with self._lock:
            return self.in_flight, self.max_in_flight, list(self.starts)

    def in_flight_of(self, who: str) -> int:
        """Requests in flight now from ``who``."""
        with self._lock:
            return self.by_who[who]

    def _enter(self, who: str) -> None:
        with self._lock:
            self.in_flight += 1
            self.by_who[who] += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.starts.append(Start(time.monotonic(), who, self.in_flight, self.by_who[who]))

    def _leave(self, who: str) -> None:
        with self._lock:
            self.in_flight -= 1
            self.by_who[who] -= 1

    def start(self) -> None:
        """Serve on a free loopback port in a daemon thread."""
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                who = query.get("who", ["?"])[0]
                ms = int(query.get("ms", ["0"])[0])
                counter._enter(who)
                try:
                    time.sleep(ms / 1000)
                finally:
                    counter._leave(who)
                try:
                    self.send_response(200)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"ok")
                except OSError:  # the caller died (SIGKILL test): nobody to answer
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a killed caller's broken connection is expected, not a test failure

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
