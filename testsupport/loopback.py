"""The base of the loopback HTTP servers tests and benchmarks use as model servers."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["LoopbackServer", "QuietHandler"]


class LoopbackServer(ThreadingHTTPServer):
    """A thread per connection, a deep listen() backlog (the default 5 drops SYNs when a client
    opens a burst of connections), and no noise when clients hang up early (cancelled runs,
    closed streams: what several tests are about)."""

    daemon_threads = True
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up is normal here."""


class QuietHandler(BaseHTTPRequestHandler):
    """HTTP/1.1, no access log, and TCP_NODELAY: one small write per streamed token would
    otherwise wait on Nagle's algorithm and delayed ACKs (~40 ms each)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
