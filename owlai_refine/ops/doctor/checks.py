"""``refine doctor``: check a self-hosted vLLM server against the settings this project needs.

Each check gives one :class:`Check` with status ``pass``, ``warn`` or ``fail``:

=====================  =====================================================================
``models``             ``/v1/models`` answers; ``max_model_len`` and ``owned_by`` (``vllm``)
``override``           the startup log's "Default vLLM sampling parameters have been overridden"
                       line holds both ``max_tokens`` and ``presence_penalty``
``kv-concurrency``     "Maximum concurrency for N tokens per request: X x" with N = the served
                       ``max_model_len`` (or KV cache tokens / N) is >= our concurrency
``max-num-seqs``       ``max_num_seqs`` in the logged non-default args equals our concurrency
                       (larger: warn; smaller: fail, requests would queue inside vLLM)
``speculative``        whether speculative decoding is on, its method and draft acceptance (pass)
``log-matches``        the startup log is this server's: port, served model, ``max_model_len``
                       (``/v1/models``) and KV cache size (``/metrics``) agree; fail if not
``kv-plan``            the log's KV cache size against ``refine plan`` for that server (the
                       model's config.json: ``--config``, or the log's local model path)
``log-requests``       ``--enable-log-requests``: without it our request ids never reach vLLM's
                       log (warn)
``request-id``         a live chat request sent with ``X-Request-Id`` comes back carrying it
``scheduling``         the server's scheduling policy: ``priority`` (``--scheduling-policy
                       priority`` in the logged args) passes; first-come-first-served warns
                       (people's chat turns wait behind refine requests). Without the log, a
                       live 1-token request with ``priority`` 1: refused (HTTP 400) is FCFS;
                       accepted is unknown (vLLM 0.32 accepts it on both policies)
``prompt-details``     the live reply's ``usage.prompt_tokens_details`` (cached tokens): absent
                       unless vLLM runs with ``--enable-prompt-tokens-details`` (warn)
=====================  =====================================================================

Checks that need the startup log warn ("skipped") without ``--server-log``; the KV check falls
back on ``/metrics`` (``vllm:cache_config_info``). Sources of figures are named in each line.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx2
import openai

from owlai_refine.ops.doctor.kvplan import kv_plan_check
from owlai_refine.ops.plan.modelarch import ModelArch
from owlai_refine.ops.serverlog import ServerLog
from owlai_refine.serve.metrics import Metrics
from owlai_refine.serve.server import (
    ModelInfo,
    ServerError,
    ServerUrls,
    fetch_metrics,
    fetch_models,
)

__all__ = [
    "Check",
    "DoctorInput",
    "Status",
    "check_log_matches",
    "check_server_log",
    "checks_json",
    "format_checks",
    "run_checks",
]

Status = Literal["pass", "warn", "fail"]
_NEEDED_OVERRIDES = ("max_tokens", "presence_penalty")


@dataclass(frozen=True, slots=True)
class Check:
    """One check's result: ``name`` (stable, see the module table), ``status``, ``detail``."""

    name: str
    status: Status
    detail: str


@dataclass(frozen=True, slots=True)
class DoctorInput:
    """What the checks read: the endpoint, the parsed log (``None`` without ``--server-log``),
    our self-hosted ``concurrency`` (requests in flight), ``model`` (``None``: the first served
    one), ``api_key``, the live request's ``timeout_s`` (seconds) and the served model's
    architecture ``arch`` for the ``kv-plan`` check (``None``: skipped)."""

    endpoint: ServerUrls
    log: ServerLog | None
    concurrency: int = 4
    model: str | None = None
    api_key: str = "EMPTY"
    timeout_s: float = 60.0
    arch: ModelArch | None = None


def _override_check(log: ServerLog | None) -> Check:
    if log is None:
        return Check("override", "warn", "skipped: needs --server-log")
    ovr = log.sampling_overrides
    if ovr is None and log.override_source is not None:
        return Check(
            "override",
            "warn",
            f"the log's override line (from {log.override_source}) holds no readable dict "
            "(not a Python literal): check presence_penalty and max_tokens by hand",
        )
    if ovr is None:
        return Check(
            "override",
            "fail",
            "no 'Default vLLM sampling parameters have been overridden' line in the log: the "
            "server sets no default max_tokens cap or presence_penalty",
        )
    missing = [k for k in _NEEDED_OVERRIDES if k not in ovr]
    if not missing:
        return Check("override", "pass", f"server defaults {ovr} (log)")
    asked = (log.args or {}).get("override_generation_config")
    dropped = ""
    if isinstance(asked, Mapping):
        lost = [k for k in missing if k in asked]
        if lost:
            dropped = f"; asked for in --override-generation-config {dict(asked)} but dropped"
    return Check("override", "fail", f"server defaults {ovr} lack {', '.join(missing)}{dropped}")


def _kv_check(log: ServerLog | None, metrics: Metrics | None, n: int | None, want: int) -> Check:
    if n is None and log is not None:
        n = log.max_model_len_arg or log.max_concurrency_tokens
    if n is None:
        return Check("kv-concurrency", "warn", "unknown max_model_len: cannot check")
    x: float | None = None
    source = ""
    if log is not None and log.max_concurrency is not None and log.max_concurrency_tokens == n:
        x, source = log.max_concurrency, "log 'Maximum concurrency' line"
    elif log is not None and log.kv_cache_tokens is not None:
        x, source = log.kv_cache_tokens / n, f"log KV cache size {log.kv_cache_tokens:,} tokens"
    elif metrics is not None and (cap := metrics.kv_capacity_tokens()) is not None:
        x, source = cap / n, f"/metrics cache_config_info: {cap:,} KV tokens"
    if x is None:
        return Check("kv-concurrency", "warn", "no KV capacity in the log or /metrics")
    verdict: Status = "pass" if x >= want else "fail"
    relation = ">=" if x >= want else "<"
    return Check(
        "kv-concurrency",
        verdict,
        f"{x:.2f}x requests of {n:,} tokens fit in the KV cache {relation} concurrency {want} "
        f"({source})",
    )


def _seqs_check(log: ServerLog | None, want: int) -> Check:
    if log is None:
        return Check("max-num-seqs", "warn", "skipped: needs --server-log")
    seqs = log.max_num_seqs
    if seqs is None:
        return Check(
            "max-num-seqs",
            "warn",
            "max_num_seqs not in the logged non-default args: vLLM's default applies (unlogged)",
        )
    if seqs == want:
        return Check("max-num-seqs", "pass", f"max_num_seqs {seqs} == concurrency {want} (log)")
    if seqs > want:
        return Check(
            "max-num-seqs",
            "warn",
            f"max_num_seqs {seqs} > concurrency {want} (log): other clients can push the "
            "server past the measured knee",
        )
    return Check(
        "max-num-seqs",
        "fail",
        f"max_num_seqs {seqs} < concurrency {want} (log): our requests would queue in vLLM",
    )


def _spec_check(log: ServerLog | None) -> Check:
    enabled = log.speculative_enabled if log is not None else None
    if enabled is None:
        return Check("speculative", "warn", "unknown: needs --server-log")
    if enabled and log is not None:
        method = log.speculative_method or "unknown method"
        tokens = log.speculative_tokens
        detail = f"on: {method}" + (f", {tokens} tokens drafted a step" if tokens else "")
        if log.spec_acceptance is not None:
            detail += (
                f"; {log.spec_acceptance:.0%} of drafted tokens accepted "
                f"({log.spec_accepted_tokens:,} of {log.spec_draft_tokens:,})"
            )
        return Check("speculative", "pass", f"{detail} (log)")
    return Check("speculative", "pass", "not configured (log: speculative_config=None)")


def check_server_log(
    log: ServerLog | None,
    max_model_len: int | None,
    concurrency: int,
    metrics: Metrics | None = None,
) -> list[Check]:
    """The checks that read the log (and /v1/models' ``max_model_len``, and ``/metrics`` for
    the KV capacity when given): override, kv-concurrency, max-num-seqs, speculative. Pure."""
    return [
        _override_check(log),
        _kv_check(log, metrics, max_model_len, concurrency),
        _seqs_check(log, concurrency),
        _spec_check(log),
    ]


def check_log_matches(
    log: ServerLog | None,
    ep: ServerUrls,
    models: list[ModelInfo],
    metrics: Metrics | None,
) -> Check:
    """Whether the startup log describes the server at ``ep``: its ``--port`` (vLLM's default
    8000 when unset), served model names, ``max_model_len`` and KV cache size against the
    URL, ``/v1/models`` and ``/metrics``. ``max_num_seqs`` is not served by vLLM, so it is
    named, unchecked. Fail on any disagreement, each one listed."""
    if log is None:
        return Check("log-matches", "warn", "skipped: needs --server-log")
    bad: list[str] = []
    url_port = urlsplit(ep.root).port
    log_port = log.port if log.port is not None else 8000
    if url_port is not None and log.args is not None and url_port != log_port:
        bad.append(f"port: log {log_port}, server {url_port}")
    served = [m.id for m in models]
    names = log.served_models
    if names and served and not set(names) & set(served):
        bad.append(f"model: log {names}, server {served}")
    lens = {m.max_model_len for m in models if m.max_model_len is not None}
    if log.max_model_len is not None and lens and log.max_model_len not in lens:
        bad.append(f"max_model_len: log {log.max_model_len}, server {sorted(lens)}")
    cap = metrics.kv_capacity_tokens() if metrics is not None else None
    if cap is not None and log.kv_cache_tokens is not None and cap != log.kv_cache_tokens:
        bad.append(f"KV cache size: log {log.kv_cache_tokens:,}, /metrics {cap:,} tokens")
    seqs = f"max_num_seqs {log.max_num_seqs}" if log.max_num_seqs else "max_num_seqs unset"
    if bad:
        return Check(
            "log-matches",
            "fail",
            "the log is not this server's startup: " + "; ".join(bad) + f" (log's {seqs}: not "
            "this server's either; pass the log of the server at this URL)",
        )
    checked = "port, model, max_model_len" + (", KV cache size" if cap is not None else "")
    return Check(
        "log-matches", "pass", f"{checked} agree; {seqs} (vLLM does not serve it: unchecked)"
    )


def _log_requests_check(log: ServerLog | None) -> Check:
    if log is None:
        return Check("log-requests", "warn", "skipped: needs --server-log")
    if log.flag("enable_log_requests"):
        return Check(
            "log-requests", "pass", "--enable-log-requests: vLLM logs each request with our id"
        )
    return Check(
        "log-requests",
        "warn",
        "vLLM runs without --enable-log-requests (off by default): our X-Request-Id never "
        "reaches its log; join the two logs through the echoed x-request-id header and the "
        "reply id chatcmpl-<id> (README: 'Joining our log to vLLM's')",
    )


def _models_check(models: list[ModelInfo], wanted: str | None) -> tuple[Check, ModelInfo | None]:
    if not models:
        return Check("models", "fail", "/v1/models lists no model"), None
    chosen = next((m for m in models if m.id == wanted), None) if wanted else models[0]
    if chosen is None:
        served = ", ".join(m.id for m in models)
        return Check("models", "fail", f"model {wanted!r} not served (serves: {served})"), None
    detail = f"{chosen.id}: max_model_len {chosen.max_model_len}, owned_by {chosen.owned_by}"
    if chosen.owned_by != "vllm":
        return Check("models", "warn", detail + " (not vLLM: log checks may not apply)"), chosen
    if chosen.max_model_len is None:
        return Check("models", "warn", detail + " (no max_model_len)"), chosen
    return Check("models", "pass", detail), chosen


def _details_check(usage: Any, log: ServerLog | None) -> Check:
    details = getattr(usage, "prompt_tokens_details", None)
    if details is not None and getattr(details, "cached_tokens", None) is not None:
        return Check(
            "prompt-details", "pass", f"usage carries cached_tokens ({details.cached_tokens})"
        )
    flag = " (the log's args lack it too)" if log is not None and log.args is not None else ""
    return Check(
        "prompt-details",
        "warn",
        "the reply's usage has no prompt_tokens_details: cached_tokens stay unknown in our log "
        f"and refine stats; start vLLM with --enable-prompt-tokens-details{flag}",
    )


async def _live_checks(inp: DoctorInput, model: str) -> list[Check]:
    """The ``request-id`` and ``prompt-details`` checks, from one live request."""
    rid = f"owlai-doctor-{uuid.uuid4().hex[:16]}"
    client = openai.AsyncOpenAI(
        base_url=inp.endpoint.v1, api_key=inp.api_key, max_retries=0, timeout=inp.timeout_s
    )
    try:
        raw = await client.chat.completions.with_raw_response.create(
            model=model,
            messages=[{"role": "user", "content": "Say OK."}],
            max_tokens=1,
            temperature=0,
            extra_headers={"X-Request-Id": rid},
        )
        reply = raw.parse()
    except openai.OpenAIError as exc:
        failed = f"live request failed: {type(exc).__name__}: {exc}"
        return [Check("request-id", "fail", failed), Check("prompt-details", "warn", failed)]
    finally:
        await client.close()
    return [
        _id_check(rid, raw.headers.get("x-request-id"), reply.id),
        _details_check(reply.usage, inp.log),
    ]


def _id_check(rid: str, echoed: str | None, body_id: str | None) -> Check:
    if echoed == rid:
        return Check("request-id", "pass", f"x-request-id {rid} echoed; response id {body_id}")
    if rid in (body_id or ""):
        return Check(
            "request-id", "warn", f"response id {body_id} carries our id but no x-request-id header"
        )
    return Check(
        "request-id",
        "fail",
        f"sent X-Request-Id {rid}, got header {echoed!r} and id {body_id!r}: start vLLM with "
        "--enable-request-id-headers",
    )


_FCFS_ADVICE = (
    "people's chat turns wait behind refine requests: start vLLM with --scheduling-policy "
    "priority (refine sends priority 10, chat turns 0)"
)


def _scheduling_from_log(log: ServerLog) -> Check:
    policy = (log.args or {}).get("scheduling_policy", "fcfs")
    if policy == "priority":
        return Check("scheduling", "pass", "priority (log: --scheduling-policy priority)")
    return Check("scheduling", "warn", f"{policy} (log): {_FCFS_ADVICE}")


async def _scheduling_check(inp: DoctorInput, model: str | None) -> Check:
    if inp.log is not None and inp.log.args is not None:
        return _scheduling_from_log(inp.log)
    if model is None:
        return Check("scheduling", "warn", "skipped: no model to send to")
    client = openai.AsyncOpenAI(
        base_url=inp.endpoint.v1, api_key=inp.api_key, max_retries=0, timeout=inp.timeout_s
    )
    try:
        await client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Say OK."}],
            max_tokens=1,
            extra_body={"priority": 1},
        )
    except openai.BadRequestError as exc:
        if "priority" in str(exc).lower():
            return Check("scheduling", "warn", f"fcfs (refused priority: HTTP 400): {_FCFS_ADVICE}")
        return Check("scheduling", "warn", f"unknown: the probe failed: {exc}")
    except openai.OpenAIError as exc:
        return Check("scheduling", "warn", f"unknown: the probe failed: {type(exc).__name__}")
    finally:
        await client.close()
    return Check(
        "scheduling",
        "warn",
        "unknown: priority accepted, which vLLM 0.32 does on both policies; pass --server-log "
        "to read it",
    )


async def run_checks(inp: DoctorInput, http: httpx2.AsyncClient) -> list[Check]:
    """Run every check against the live server; never raises for a server problem (a failed
    check says it). ``http`` is used for the plain GETs."""
    checks: list[Check] = []
    try:
        models = await fetch_models(http, inp.endpoint)
    except ServerError as exc:
        checks.append(Check("models", "fail", str(exc)))
        chosen = None
    else:
        models_check, chosen = _models_check(models, inp.model)
        checks.append(models_check)
    try:
        metrics = await fetch_metrics(http, inp.endpoint)
    except ServerError:
        metrics = None
    n = chosen.max_model_len if chosen is not None else None
    matches = check_log_matches(inp.log, inp.endpoint, models if chosen else [], metrics)
    checks.append(matches)
    log = inp.log if matches.status != "fail" else None  # another server's log proves nothing
    from_log = check_server_log(log, n, inp.concurrency, metrics)
    from_log.append(Check("kv-plan", *kv_plan_check(log, inp.arch, _block_size(metrics))))
    from_log.append(_log_requests_check(log))
    if log is None and inp.log is not None:
        from_log = [
            Check(c.name, c.status, "skipped: the log is another server's")
            if "needs --server-log" in c.detail
            else c
            for c in from_log
        ]
    checks += from_log
    if chosen is None:
        checks.append(Check("request-id", "fail", "skipped: no model to send to"))
    else:
        checks += await _live_checks(inp, chosen.id)
    checks.append(await _scheduling_check(inp, chosen.id if chosen is not None else None))
    return checks


def _block_size(metrics: Metrics | None) -> int:
    info = metrics.info_labels() if metrics is not None else None
    size = (info or {}).get("block_size", "")
    return int(size) if size.isdigit() else 16


def format_checks(checks: list[Check]) -> str:
    """One line per check: ``PASS  name  detail``, then a summary line."""
    lines = [f"{c.status.upper():<4}  {c.name:<15} {c.detail}" for c in checks]
    counts = {s: sum(c.status == s for c in checks) for s in ("pass", "warn", "fail")}
    lines.append(", ".join(f"{v} {k}" for k, v in counts.items()))
    return "\n".join(lines)


def checks_json(checks: list[Check]) -> list[dict[str, Any]]:
    """The checks as JSON-ready dicts ``{"name", "status", "detail"}``."""
    return [{"name": c.name, "status": c.status, "detail": c.detail} for c in checks]
