"""The OpenAI-compatible client for one endpoint, and the model it serves."""

from __future__ import annotations

import os

import httpx2
import openai

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.errors import AuthError, ConfigError

__all__ = ["endpoint_key", "make_client", "resolve_model"]


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


def endpoint_key(base_url: str, model: str) -> str:
    """The key of the per-endpoint limiter: base URL (credentials removed) and model."""
    return f"{redact_url(base_url)}#{model}"


async def resolve_model(client: openai.AsyncOpenAI, config: RefineConfig) -> str:
    """The model to ask for: ``config.model`` if set, else the one model the server lists.

    Raises :class:`ConfigError` if the server lists none or several (naming them), or cannot
    be reached; :class:`AuthError` on 401/403.
    """
    if config.model:
        return config.model
    where = redact_url(str(client.base_url))
    try:
        page = await client.models.list()
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise AuthError(
            f"{where} refused our credentials (HTTP {exc.status_code}); check OPENAI_API_KEY",
            status=exc.status_code,
        ) from exc
    except openai.APIError as exc:
        raise ConfigError(
            f"no model given and {where}/models could not be read ({type(exc).__name__}); "
            "set --model or OWLAI_REFINE_MODEL"
        ) from exc
    names = sorted(m.id for m in page.data)
    if len(names) != 1:
        listed = ", ".join(names[:10]) or "none"
        raise ConfigError(
            f"no model given and {where} serves {len(names)} models ({listed}); "
            "set --model or OWLAI_REFINE_MODEL"
        )
    return names[0]
