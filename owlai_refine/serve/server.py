"""Everything asked of an OpenAI-compatible server but chat: ``/v1/models``, ``/metrics``,
``/tokenize``. The one module that sends these requests (``tests/test_layers.py`` holds it).

Clients are passed in, never global: the run's own ``openai.AsyncOpenAI`` for the pre-flight
and the routing's probe (:func:`model_names`: its transport, so that record/replay holds, and
its connections), an ``httpx2.AsyncClient`` (the httpx-compatible package openai uses) for the
adaptive cap (:func:`metrics_text`) and the operator tools (:func:`fetch_models`,
:func:`fetch_metrics`, :func:`tokenize_count`). ``base_url`` is what the user gives:
``http://host:port/v1`` (like the openai client) or ``http://host:port``; :func:`server_urls`
derives both forms. vLLM serves ``/metrics``, ``/tokenize`` and ``/version`` at the root, the
OpenAI API under ``/v1``. The Prometheus text is read by :mod:`owlai_refine.serve.metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx2

from owlai_refine.config import redact_url
from owlai_refine.errors import ConfigError, InputError
from owlai_refine.serve.metrics import Metrics, MetricsParseError, parse_metrics

if TYPE_CHECKING:  # the client is passed in: ``refine doctor`` never loads openai
    import openai

__all__ = [
    "ModelInfo",
    "ServerError",
    "ServerUrls",
    "fetch_metrics",
    "fetch_models",
    "metrics_text",
    "metrics_url",
    "model_names",
    "server_urls",
    "tokenize_count",
]


class ServerError(InputError):
    """Raised when the server cannot be reached, answers an error status, or answers a body
    that is not what the endpoint promises. ``url`` names the request, without any
    ``user:password@`` or query string, in ``url`` and in the message alike."""

    def __init__(self, message: str, *, url: str) -> None:
        shown = str(redact_url(url))
        super().__init__(message.replace(url, shown))
        self.url = shown


@dataclass(frozen=True, slots=True)
class ServerUrls:
    """``v1``: the OpenAI API base (``.../v1``); ``root``: the server root (``/metrics``)."""

    v1: str
    root: str


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One entry of ``/v1/models``: ``max_model_len`` in tokens (vLLM only, else ``None``)."""

    id: str
    owned_by: str | None
    max_model_len: int | None


def server_urls(base_url: str) -> ServerUrls:
    """Split ``base_url`` into its ``/v1`` and root forms.

    Raises ``ConfigError`` unless it is an absolute ``http://`` or ``https://`` URL.
    """
    url = base_url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or url.endswith("://"):
        raise ConfigError(f"--base-url must be an http(s) URL, got {base_url!r}")
    root = url.removesuffix("/v1")
    return ServerUrls(v1=root + "/v1", root=root)


def metrics_url(base_url: str) -> str:
    """``/metrics`` beside an OpenAI base URL: ``http://h:8000/v1`` -> ``http://h:8000/metrics``."""
    root = base_url.rstrip("/")
    root = root.removesuffix("/v1")
    return root + "/metrics"


async def model_names(
    client: openai.AsyncOpenAI, request_timeout: float | httpx2.Timeout
) -> list[str]:
    """The model names ``client``'s server lists (``GET /v1/models`` through the run's own
    client), sorted; ``request_timeout`` in seconds (or an ``httpx2.Timeout``). Nothing is retried:
    openai's errors go through (``APIConnectionError`` when nothing answers,
    ``AuthenticationError`` on 401, another ``APIError`` for an HTTP error or an odd body)."""
    page = await client.models.list(timeout=request_timeout)
    return sorted(m.id for m in page.data)


async def metrics_text(client: httpx2.AsyncClient, url: str) -> str:
    """GET ``url`` (a server's ``/metrics``, :func:`metrics_url`) and return its text. Raises
    ``httpx2.HTTPError`` on a network error or an error status."""
    response = await client.get(url)
    response.raise_for_status()
    return response.text


async def _get(client: httpx2.AsyncClient, url: str) -> httpx2.Response:
    try:
        return await client.get(url)
    except httpx2.HTTPError as exc:
        raise ServerError(f"cannot reach {url}: {type(exc).__name__}: {exc}", url=url) from exc


async def fetch_models(client: httpx2.AsyncClient, ep: ServerUrls) -> list[ModelInfo]:
    """GET ``/v1/models``. Raises ``ServerError`` on a network error, a non-200 status or a body
    without a ``data`` list."""
    url = ep.v1 + "/models"
    resp = await _get(client, url)
    if resp.status_code != 200:
        raise ServerError(f"GET {url} answered HTTP {resp.status_code}", url=url)
    try:
        data = resp.json()["data"]
        if not isinstance(data, list):
            raise TypeError("data is not a list")
        return [
            ModelInfo(
                id=str(m["id"]),
                owned_by=m.get("owned_by"),
                max_model_len=m.get("max_model_len"),
            )
            for m in data
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ServerError(f"GET {url}: not an OpenAI model list ({exc})", url=url) from exc


async def fetch_metrics(client: httpx2.AsyncClient, ep: ServerUrls) -> Metrics | None:
    """GET ``/metrics`` and parse it; ``None`` when the server has none (404, e.g. a cloud API).

    Raises ``ServerError`` on a network error, another error status, or unparseable text.
    """
    url = ep.root + "/metrics"
    resp = await _get(client, url)
    if resp.status_code == 404:
        return None
    if resp.status_code != 200:
        raise ServerError(f"GET {url} answered HTTP {resp.status_code}", url=url)
    try:
        return parse_metrics(resp.text)
    except MetricsParseError as exc:
        raise ServerError(f"GET {url}: {exc}", url=url) from exc


async def tokenize_count(
    client: httpx2.AsyncClient, ep: ServerUrls, model: str, messages: Sequence[Mapping[str, object]]
) -> int | None:
    """Prompt tokens of ``messages`` with the chat template applied, from vLLM's ``POST
    /tokenize`` (the same count as ``usage.prompt_tokens``). ``None`` when the server has no
    such endpoint (404/405) or answers without ``count``. Raises ``ServerError`` on a network
    error."""
    url = ep.root + "/tokenize"
    try:
        resp = await client.post(
            url, json={"model": model, "messages": list(messages), "add_generation_prompt": True}
        )
    except httpx2.HTTPError as exc:
        raise ServerError(f"cannot reach {url}: {type(exc).__name__}: {exc}", url=url) from exc
    if resp.status_code != 200:
        return None
    try:
        count = resp.json().get("count")
    except (ValueError, AttributeError):
        return None
    return count if isinstance(count, int) else None
