"""Headless Chromium for the tests that look at the review page as a person's browser shows it.

Debian's ``chromium`` (``apt-get install chromium``; ``.ci/run`` installs it when root) is run
once per look: ``--dump-dom`` gives the page's DOM after its scripts ran, ``--screenshot`` a
PNG, and ``--log-net-log`` every request the browser made. Chromium makes requests of its own
(Google time and account checks) whatever it is asked: those have no initiator (``not an
origin`` in the log); a request the page itself makes has the page's origin, ``null`` for a
``file://`` page, which is what :attr:`Look.page_requests` keeps.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Look", "chromium", "look"]

_FLAGS = [
    "--headless",
    "--no-sandbox",  # root in a container: the setuid sandbox cannot start
    "--disable-gpu",
    "--hide-scrollbars",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str | None:
    """The Chromium executable on ``PATH``, or ``None``."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass(frozen=True)
class Look:
    """What the browser made of a page: its DOM (``--dump-dom``; ``""`` for a screenshot) and
    the URLs of the requests the page made (a ``file://`` document's own load is not one)."""

    dom: str
    page_requests: list[str]


def look(url: str, work: Path, *, screenshot: Path | None = None, size: str = "1280,1600") -> Look:
    """Load ``url`` in headless Chromium (profile and net log under ``work``): its DOM after
    load, or with ``screenshot`` a PNG of the window (``size``: ``"WIDTH,HEIGHT"`` pixels)
    written there. Raises ``subprocess.CalledProcessError`` if Chromium fails."""
    exe = chromium()
    assert exe is not None, "no chromium on PATH"
    work.mkdir(parents=True, exist_ok=True)
    netlog = work / "net.json"
    what = [f"--screenshot={screenshot}", f"--window-size={size}"] if screenshot else ["--dump-dom"]
    done = subprocess.run(
        [
            exe,
            *_FLAGS,
            f"--user-data-dir={work / 'profile'}",
            f"--log-net-log={netlog}",
            *what,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params", {})
        if event["type"] != start or "url" not in params:
            continue
        if params.get("initiator", "not an origin") != "not an origin":
            urls.append(params["url"])
    return Look("" if screenshot else done.stdout, urls)
