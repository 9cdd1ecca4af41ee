"""Before the first block: is each server there, and does it serve the model we will ask for?

One ``GET /v1/models`` per endpoint, so that a wrong ``--model`` or an unreachable server is one
line and exit 2 before any block is sent and before any output is written, instead of a failure
per block.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import httpx2
import openai

from owlai_refine.config import RefineConfig, redact_url
from owlai_refine.endpoint import make_client
from owlai_refine.errors import AuthError, ConfigError

__all__ = ["check_servers"]

_PREFLIGHT_READ_S = 30.0
"""How long a server may take to list its models (seconds)."""


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


async def check_servers(config: RefineConfig, urls: Sequence[str]) -> None:
    """Ask each of ``urls`` for ``/models``; return if at least one answers and every one that
    lists its models lists ``config.model`` (when a model is named).

    A server that answers the listing with an HTTP error (some proxies do not list models) is
    not held against the model name. Raises :class:`ConfigError` when no server can be
    reached (naming the URL and the reason) or a server does not serve ``config.model`` (naming
    what it serves), and :class:`AuthError` on 401/403."""
    unreachable: list[str] = []
    for url in urls:
        where = str(redact_url(url)).rstrip("/")
        client = make_client(config, url)
        try:
            page = await client.models.list(
                timeout=httpx2.Timeout(config.connect_timeout_s, read=_PREFLIGHT_READ_S)
            )
        except openai.APIConnectionError as exc:  # refused, DNS, TLS, timeout
            unreachable.append(f"{where} ({_why(exc)})")
            continue
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise AuthError(
                f"{where} refused our credentials (HTTP {exc.status_code}); check OPENAI_API_KEY",
                status=exc.status_code,
            ) from exc
        except openai.APIError:  # lists no models (404, odd body): nothing to check against
            continue
        finally:
            await client.close()
        names = sorted(m.id for m in page.data)
        if config.model and names and config.model not in names:
            more = f" and {len(names) - 12} more" if len(names) > 12 else ""
            shown = ", ".join(names[:12]) + more
            raise ConfigError(
                f"model {config.model!r} is not served by {where}; it serves {shown} "
                "(--model, OWLAI_REFINE_MODEL)"
            )
    if unreachable and len(unreachable) == len(urls):
        raise ConfigError(f"cannot connect to {'; '.join(unreachable)}; nothing was sent")
