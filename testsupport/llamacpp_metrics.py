"""Requests in flight as a llama.cpp server counts them itself (its ``/metrics`` gauge)."""

from __future__ import annotations

import re
import threading
import urllib.request

__all__ = ["InFlightSampler"]

_PROCESSING = re.compile(r"^llamacpp:requests_processing\s+([0-9.]+)", re.MULTILINE)


class InFlightSampler:
    """Reads ``llamacpp:requests_processing`` from ``/metrics`` every 20 ms in a thread while
    the ``with`` block runs: ``peak`` is the most seen at once, ``samples`` how many reads
    succeeded."""

    def __init__(self, base_url: str) -> None:
        self.url = base_url.removesuffix("/v1") + "/metrics"
        self.peak = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(self.url, timeout=5) as response:  # noqa: S310 - loopback
                    m = _PROCESSING.search(response.read().decode())
            except OSError:
                m = None
            if m:
                self.peak = max(self.peak, int(float(m.group(1))))
                self.samples += 1
            self._stop.wait(0.02)

    def __enter__(self) -> InFlightSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
