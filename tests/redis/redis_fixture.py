"""A throwaway real ``redis-server`` on a free loopback port, for the Redis limiter tests.

The server runs in a temporary directory with persistence off (``--save ''``, ``--appendonly
no``), so a stop loses everything, like a Redis restarted without persistence. Redis has no
"pick a free port" mode (``--port 0`` means "no TCP at all"), so a free port is found first and
the start is retried on a new port if another process took it meanwhile.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["RedisServer", "find_redis_server", "free_port"]

_START_TIMEOUT_S = 10.0


def find_redis_server() -> str | None:
    """The path of the ``redis-server`` executable, or ``None`` if it is not on PATH."""
    return shutil.which("redis-server")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1; ``start()`` waits until it answers PING.

    ``url`` is ``redis://127.0.0.1:PORT/0``. ``stop()`` ends it (SIGTERM, then SIGKILL after
    5 s; ``hard=True`` sends SIGKILL at once) and waits for the process to exit.
    """

    def __init__(self, executable: str, workdir: Path) -> None:
        self.executable = executable
        self.workdir = workdir
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start on a free port; raises ``RuntimeError`` if it does not answer within 10 s."""
        last_log = ""
        for _attempt in range(3):
            self.port = free_port()
            log = self.workdir / f"redis-{self.port}.log"
            self._process = subprocess.Popen(
                [
                    self.executable,
                    "--port",
                    str(self.port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(self.workdir),
                    "--logfile",
                    str(log),
                    "--daemonize",
                    "no",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + _START_TIMEOUT_S
            while time.monotonic() < deadline and self._process.poll() is None:
                if _ping(self.port):
                    return
                time.sleep(0.05)
            self.stop()
            last_log = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(f"redis-server did not start; its log ends with:\n{last_log}")

    def stop(self, *, hard: bool = False) -> None:
        """Stop the server and wait for it to exit (idempotent)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGKILL if hard else signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        with contextlib.suppress(OSError):
            process.wait()
