"""Before the first block: is each server there, and does it serve the model we will ask for?

The one reader of an endpoint's ``GET /v1/models`` for a run, through
:func:`owlai_refine.serve.server.model_names` (which sends it). A
:class:`~owlai_refine.pipeline.refiner.Refiner` calls :func:`check_servers` once when it opens, so
that a wrong model or an unreachable server is one :class:`~owlai_refine.errors.ConfigError` before
any block is sent (and, from the CLI, one line and exit 2 before any output is written), instead of
a failure per block after its retries.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import httpx2
import openai

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.errors import AuthError, ConfigError
from owlai_refine.serve.server import model_names

__all__ = ["check_servers"]

_PREFLIGHT_READ_S = 30.0
"""How long a server may take to list its models (seconds)."""

_NAME_ONE = "name one (--model, OWLAI_REFINE_MODEL or RefineConfig.model)"


def _why(exc: BaseException) -> str:
    """The most specific reason in ``exc``'s chain (``Connection refused`` rather than
    httpx's ``All connection attempts failed``), at most 120 characters."""
    reason: BaseException = exc
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.strerror:
            reason = seen
            break
        reason = seen
        seen = seen.__cause__ or seen.__context__
    if isinstance(reason, OSError) and reason.errno and reason.errno > 0:
        text = os.strerror(reason.errno)  # asyncio words it "Connect call failed (host, port)"
    elif isinstance(reason, OSError) and reason.strerror:
        text = reason.strerror
    else:
        text = str(reason).strip() or type(reason).__name__
    return text if len(text) <= 120 else text[:119] + "\u2026"


def _where(client: openai.AsyncOpenAI) -> str:
    return str(redact_url(str(client.base_url))).rstrip("/")


async def _listing(client: openai.AsyncOpenAI, config: RefineConfig) -> list[str]:
    """The model names ``client``'s server lists, sorted (``connect_timeout_s`` to connect,
    30 s to answer). Raises :class:`AuthError` on 401/403; lets ``openai.APIConnectionError``
    (no answer) and other ``openai.APIError`` (an HTTP error, an odd body) through."""
    try:
        return await model_names(
            client, httpx2.Timeout(config.connect_timeout_s, read=_PREFLIGHT_READ_S)
        )
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        raise AuthError(
            f"{_where(client)} refused our credentials (HTTP {exc.status_code}); "
            "check OPENAI_API_KEY",
            status=exc.status_code,
        ) from exc


def _only_model(where: str, names: list[str]) -> str:
    if len(names) != 1:
        listed = ", ".join(names[:10]) or "none"
        raise ConfigError(
            f"no model given and {where} serves {len(names)} models ({listed}); {_NAME_ONE}"
        )
    return names[0]


async def check_servers(config: RefineConfig, clients: Sequence[openai.AsyncOpenAI]) -> str:
    """Ask each of ``clients``' servers for ``/models`` once and return the model to ask for:
    ``config.model``, else the one model every answering server lists.

    Passes if at least one server answers and every one that lists its models lists
    ``config.model``. A server that answers the listing with an HTTP error (some proxies do not
    list models) is not held against a named model. The clients are the run's own (their
    transport, their connections, which the run then reuses); each listing may take
    ``connect_timeout_s`` to connect and 30 s to answer, and nothing is retried.

    Raises :class:`ConfigError` when no server can be reached (naming each URL and the reason,
    e.g. ``Connection refused``), when a server does not serve ``config.model`` (naming what it
    serves), or with no model named, when none can be told (a server lists none or several,
    the servers disagree, or a listing cannot be read); :class:`AuthError` on 401/403.
    """
    unreachable: list[str] = []
    found: set[str] = set()
    errors: list[ConfigError] = []
    for client in clients:
        where = _where(client)
        try:
            names = await _listing(client, config)
        except openai.APIConnectionError as exc:  # refused, DNS, TLS, timeout
            unreachable.append(f"{where} ({_why(exc)})")
            continue
        except openai.APIError as exc:  # lists no models (404, odd body): nothing to check against
            errors.append(
                ConfigError(
                    f"no model given and {where}/models could not be read "
                    f"({type(exc).__name__}); {_NAME_ONE}"
                )
            )
            continue
        if config.model and names and config.model not in names:
            more = f" and {len(names) - 12} more" if len(names) > 12 else ""
            shown = ", ".join(names[:12]) + more
            raise ConfigError(
                f"model {config.model!r} is not served by {where}; it serves {shown} "
                "(--model, OWLAI_REFINE_MODEL)"
            )
        if not config.model:
            try:
                found.add(_only_model(where, names))
            except ConfigError as exc:
                errors.append(exc)
    if unreachable and len(unreachable) == len(clients):
        raise ConfigError(f"cannot connect to {'; '.join(unreachable)}; nothing was sent")
    if config.model:
        return config.model
    if not found:
        raise errors[0]
    if len(found) > 1:
        shown = ", ".join(sorted(found))
        raise ConfigError(f"the servers serve different models ({shown}); {_NAME_ONE}")
    return found.pop()
