"""An endpoint (one server: its URL, client, model and slot limiter), the OpenAI-compatible
client for it, and the pool of a run's endpoints."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import anyio
import httpx2
import openai

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.errors import ConfigError
from owlai_refine.limits.limiter import SlotLimiter, open_limiter
from owlai_refine.serve.preflight import check_servers
from owlai_refine.serve.routing import EndpointPool

__all__ = ["Endpoint", "canonical_url", "endpoint_key", "make_client", "open_pool"]


@dataclass(eq=False)
class Endpoint:
    """One server: its base URL, client, model name and slot limiter."""

    base_url: str
    client: openai.AsyncOpenAI
    model: str
    limiter: SlotLimiter
    set_aside_until: float = 0.0
    """``time.monotonic()`` until which no new request goes here (0: available)."""
    restored: anyio.Event = field(default_factory=anyio.Event)

    @property
    def available(self) -> bool:
        """True unless the endpoint is set aside."""
        return self.set_aside_until <= time.monotonic()


def make_client(
    config: RefineConfig, base_url: str, transport: httpx2.AsyncBaseTransport | None = None
) -> openai.AsyncOpenAI:
    """Build the ``openai.AsyncOpenAI`` client for ``base_url``, with its own retries off
    (``max_retries=0``: tenacity owns retries), the config's connect/read timeouts (seconds),
    and a connection pool a little larger than the endpoint's slots.

    ``transport`` replaces the network (record/replay). The API key is ``config.api_key``, else
    ``$OPENAI_API_KEY``, else a placeholder (self-hosted servers ignore it).
    """
    key = (
        config.api_key.get_secret_value()
        if config.api_key is not None
        else os.environ.get("OPENAI_API_KEY") or "not-needed"
    )
    timeout = httpx2.Timeout(
        connect=config.connect_timeout_s,
        read=config.read_timeout_s,
        write=config.read_timeout_s,
        pool=None,  # waiting for a pooled connection is bounded by our own slot limiter
    )
    http = httpx2.AsyncClient(
        transport=transport,
        timeout=timeout,
        limits=httpx2.Limits(
            max_connections=config.slots + 4, max_keepalive_connections=config.slots + 4
        ),
    )
    return openai.AsyncOpenAI(
        base_url=base_url, api_key=key, max_retries=0, http_client=http, timeout=timeout
    )


def canonical_url(base_url: str) -> str:
    """``base_url`` as one server has one name: scheme and host in lower case, the host
    resolved to its address (the lowest IPv4 one, else the lowest IPv6 one; a name that does
    not resolve stays a name), the port written out (80, 443 by default), no trailing slash,
    no credentials, no query. ``http://localhost:8000/v1/`` and ``http://127.0.0.1:8000/v1``
    are the same."""
    parts = urlsplit(base_url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    host = (parts.hostname or "").lower()
    try:
        found = sorted({str(info[4][0]) for info in socket.getaddrinfo(host, port)})
    except (OSError, UnicodeError):
        found = []
    v4 = [a for a in found if ":" not in a]
    address = (v4 or found or [host])[0]
    shown = f"[{address}]" if ":" in address else address
    return f"{scheme}://{shown}:{port}{parts.path.rstrip('/')}"


def endpoint_key(base_url: str, model: str) -> str:
    """The key of the per-endpoint limiter: the server (:func:`canonical_url`: however its URL
    is spelled, one server has one cap, across workers too) and the model."""
    return f"{canonical_url(base_url)}#{model}"


def _refuse_repeats(base_urls: Sequence[str]) -> None:
    """Raise :class:`ConfigError` if two of ``base_urls`` name one server: each would get a
    cap of its own, and the server twice the requests."""
    seen: dict[str, str] = {}
    for url in base_urls:
        key = canonical_url(url)
        if key in seen:
            raise ConfigError(
                f"{redact_url(seen[key])} and {redact_url(url)} are one server, listed twice; "
                "give each endpoint once"
            )
        seen[key] = url


@asynccontextmanager
async def open_pool(
    config: RefineConfig,
    base_urls: Sequence[str],
    *,
    model: str | None = None,
    preflight: bool = True,
    transport: httpx2.AsyncBaseTransport | None = None,
    limiter: SlotLimiter | None = None,
) -> AsyncIterator[EndpointPool]:
    """Open a client and a slot limiter for each of ``base_urls`` and yield their pool; close
    them all on exit.

    ``model``, when given, is known already (the embedded server) and nothing is checked.
    Otherwise the new clients make the pre-flight
    (:func:`owlai_refine.serve.preflight.check_servers`: one ``GET /models`` each), which also tells
    the model when ``config.model`` does not; with ``preflight=False`` and ``config.model``
    set, nothing is asked. The model is used on every endpoint. ``limiter`` replaces the
    limiter of a single endpoint; otherwise each gets
    :func:`~owlai_refine.limits.limiter.open_limiter` for ``config.limiter``.

    Raises :class:`ConfigError` (no server reachable, the model not served or not to be told,
    one server listed twice, ``limiter`` with several endpoints, Redis extra missing) and
    :class:`AuthError` (401/403 from the pre-flight).
    """
    _refuse_repeats(base_urls)
    if limiter is not None and len(base_urls) > 1:
        raise ConfigError("an explicit limiter serves one endpoint; use config.limiter for several")
    async with AsyncExitStack() as stack:
        clients = []
        for url in base_urls:
            client = make_client(config, url, transport)
            stack.push_async_callback(client.close)
            clients.append(client)
        if model is None:
            model = (
                config.model
                if config.model and not preflight
                else await check_servers(config, clients)
            )
        endpoints = [
            Endpoint(
                base_url=url,
                client=client,
                model=model,
                limiter=limiter
                or open_limiter(
                    config.limiter,
                    endpoint_key(url, model),
                    config.slots,
                    lease_s=config.limiter_lease_s,
                    stack=stack,
                ),
            )
            for url, client in zip(base_urls, clients, strict=True)
        ]
        yield EndpointPool(endpoints, set_aside_s=config.set_aside_s)
