"""The real vLLM server for CPU the tests marked ``vllm`` talk to.

``OWLAI_VLLM_URL`` (``http://127.0.0.1:PORT/v1``) names it and ``OWLAI_VLLM_LOG`` its startup
log; ``.ci/vllm-server start PORT --scheduling-policy priority`` starts one (``.ci/run`` does,
in CI). Without ``OWLAI_VLLM_URL`` the tests skip with that reason, except in CI (``CI=true``),
where a missing server is a failure: CI must never pass by skipping them (unless the step is
left out with ``OWLAI_CI_VLLM=0``).
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest


@pytest.fixture(scope="session")
def vllm_url() -> str:
    """The server's base URL; skips (fails in CI) when there is none, or it does not answer."""
    url = os.environ.get("OWLAI_VLLM_URL")
    in_ci = os.environ.get("CI", "").lower() == "true" and os.environ.get("OWLAI_CI_VLLM") != "0"
    if not url:
        reason = "no vLLM server: set OWLAI_VLLM_URL (.ci/vllm-server start PORT starts one)"
        if in_ci:
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    try:
        httpx2.get(url.removesuffix("/v1") + "/health", timeout=5).raise_for_status()
    except httpx2.HTTPError as exc:
        if in_ci:
            pytest.fail(f"the vLLM server at {url} does not answer /health: {exc}")
        pytest.skip(f"the vLLM server at {url} does not answer /health: {exc}")
    return url


@pytest.fixture(scope="session")
def vllm_log(vllm_url: str) -> Path | None:
    """The server's startup log, if ``OWLAI_VLLM_LOG`` names one that exists."""
    log = os.environ.get("OWLAI_VLLM_LOG")
    return Path(log) if log and Path(log).is_file() else None
