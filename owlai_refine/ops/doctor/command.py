"""``refine doctor [--base-url URL] [--server-log FILE] [--concurrency N]``: its command line
(see :func:`main`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import httpx2

from owlai_refine.errors import ConfigError, InputError
from owlai_refine.ops.console import EXIT_CHECK_FAILED, Parser, api_key, out
from owlai_refine.ops.doctor.checks import DoctorInput, checks_json, format_checks, run_checks
from owlai_refine.ops.serverlog import ServerLog, read_server_log
from owlai_refine.serve.server import server_urls

if TYPE_CHECKING:
    from owlai_refine.ops.doctor.checks import Check
    from owlai_refine.ops.plan.modelarch import ModelArch

__all__ = ["main"]


def _served_arch(config: str | None, log: ServerLog | None) -> ModelArch | None:
    """The model architecture for doctor's kv-plan check: ``--config``, else the log's
    ``model`` when it is a local folder holding a config.json, else ``None``."""
    from owlai_refine.ops.plan.command import load_model

    if config is not None:
        return load_model(config)[0]
    path = (log.args or {}).get("model") if log is not None else None
    if isinstance(path, str) and (Path(path) / "config.json").is_file():
        try:
            return load_model(path)[0]
        except InputError:
            return None
    return None


def main(argv: list[str]) -> int:
    """``refine doctor ...``: one pass/warn/fail line per check (see
    :mod:`owlai_refine.ops.doctor.checks`). ``--base-url``, ``--model`` and ``--concurrency``
    default to ``$OWLAI_REFINE_BASE_URL``, ``$OWLAI_REFINE_MODEL`` and
    ``$OWLAI_REFINE_CONCURRENCY``, as for ``refine`` itself. Returns 0 when no check fails, 4
    (:data:`EXIT_CHECK_FAILED`) when one does; raises :class:`ConfigError` when no server is
    named."""
    args = _parser().parse_args(argv)
    url = _one_server(args.base_url)
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    log = read_server_log(args.server_log)
    inp = DoctorInput(
        endpoint=server_urls(url),
        log=log,
        concurrency=args.concurrency,
        model=args.model,
        api_key=api_key(),
        timeout_s=args.timeout,
        arch=_served_arch(args.config, log),
    )

    async def go() -> list[Check]:
        async with httpx2.AsyncClient(timeout=args.timeout) as http:
            return await run_checks(inp, http)

    checks = anyio.run(go)
    out(json.dumps(checks_json(checks), indent=2) if args.json else format_checks(checks))
    return EXIT_CHECK_FAILED if any(c.status == "fail" for c in checks) else 0


def _parser() -> Parser:
    """``refine doctor``'s flags; the defaults read from the environment now."""
    p = Parser(
        prog="refine doctor",
        description="Check a self-hosted vLLM server against the settings owlai-refine depends on.",
    )
    env = os.environ.get
    p.add_argument(
        "--base-url",
        default=env("OWLAI_REFINE_BASE_URL"),
        help="the server to check, e.g. http://127.0.0.1:8000/v1 [$OWLAI_REFINE_BASE_URL]",
    )
    p.add_argument("--server-log", help="the vLLM server's startup log")
    p.add_argument(
        "--concurrency",
        type=int,
        default=env("OWLAI_REFINE_CONCURRENCY", "4"),
        help="our self-hosted concurrency (default 4) [$OWLAI_REFINE_CONCURRENCY]",
    )
    p.add_argument(
        "--model",
        default=env("OWLAI_REFINE_MODEL"),
        help="model to check (default: the first one served) [$OWLAI_REFINE_MODEL]",
    )
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds for the live request (default 60)"
    )
    p.add_argument(
        "--config",
        help="the served model's config.json or folder, for the kv-plan check "
        "(default: the log's model path when it is a local folder)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of lines")
    return p


def _one_server(base_url: str | None) -> str:
    """The one server ``--base-url`` names; :class:`ConfigError` for none or several."""
    if not base_url:
        raise ConfigError(
            "which server? give --base-url URL or set OWLAI_REFINE_BASE_URL (as for refine itself)"
        )
    urls = [u.strip() for u in base_url.split(",") if u.strip()]
    if len(urls) != 1:
        raise ConfigError(
            f"refine doctor checks one server; {base_url!r} names {len(urls)}: "
            "give one with --base-url"
        )
    return urls[0]
