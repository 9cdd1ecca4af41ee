"""``refine doctor``'s ``kv-plan`` check: the plan for the server a startup log describes,
against the KV figures that log states. Pure: takes the parsed log and the model's
architecture, returns a :class:`~owlai_refine.ops.doctor.checks.Check`-shaped tuple.

Inputs from the log (:mod:`owlai_refine.ops.serverlog`): the KV memory per rank ("Available KV
cache memory" or vLLM for CPU's "Explicitly set ... GiB for KV cache"), ``max_model_len``, the
engine line's ``dtype``, ``kv_cache_dtype`` and ``tensor_parallel_size``, and the version (how
the size line counts tokens). The block size is vLLM's default 16 unless given (``/metrics``
``vllm:cache_config_info`` knows it); for one group of full attention it does not change the
token count.
"""

from __future__ import annotations

import re
from typing import Literal

from owlai_refine.ops.plan.kvcache import Plan, PlanInput, plan
from owlai_refine.ops.plan.modelarch import ModelArch
from owlai_refine.ops.serverlog import ServerLog

__all__ = ["TOLERANCE", "kv_plan_check", "plan_for_log"]

TOLERANCE = 0.05
"""Largest relative gap between the plan and the log that still passes."""

_GAP_CAUSES = (
    "the served model is not the --config given (another checkpoint or quantisation)",
    "a kv-cache-dtype or dtype the engine line does not show (fp8 KV halves the bytes)",
    "a layout vLLM chose differently (hybrid block size, sliding-window groups: see the log's "
    "'Setting attention block size' and 'padding layers' lines)",
    "the log rounds the KV memory to 0.01 GiB (a few blocks at most)",
)


def _rule(version: str | None) -> Literal["concurrency", "blocks"]:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    if m and (int(m.group(1)), int(m.group(2))) < (0, 20):
        return "blocks"
    return "concurrency"


def plan_for_log(log: ServerLog, arch: ModelArch, block_size: int = 16) -> Plan | None:
    """The plan for the logged server, or ``None`` when the log lacks the KV memory or the
    window."""
    window = log.max_model_len
    if log.kv_cache_gib is None or window is None:
        return None
    engine = log.engine
    tp = engine.get("tensor_parallel_size", "1")
    return plan(
        PlanInput(
            arch=arch,
            max_model_len=window,
            tensor_parallel_size=int(tp) if tp.isdigit() else 1,
            dtype=engine.get("dtype") or None,
            kv_cache_dtype=engine.get("kv_cache_dtype") or "auto",
            block_size=block_size,
            max_num_seqs=log.max_num_seqs or 256,
            kv_cache_gib=log.kv_cache_gib,
            kv_size_rule=_rule(log.vllm_version),
        )
    )


def kv_plan_check(
    log: ServerLog | None, arch: ModelArch | None, block_size: int = 16
) -> tuple[Literal["pass", "warn", "fail"], str]:
    """``(status, detail)`` of the ``kv-plan`` check: pass when the plan's KV cache size is
    within :data:`TOLERANCE` of the log's, warn when it is not (naming what explains a gap)
    or when the inputs are missing."""
    if log is None:
        return "warn", "skipped: needs --server-log"
    if arch is None:
        return "warn", "skipped: needs the model's config.json (--config, or a local model path)"
    try:
        p = plan_for_log(log, arch, block_size)
    except ValueError as exc:
        return "warn", f"cannot plan this model: {exc}"
    if p is None or log.kv_cache_tokens is None:
        return "warn", "the log has no KV memory or KV cache size line: nothing to compare"
    logged = log.kv_cache_tokens
    gap = p.kv_cache_tokens / logged - 1
    figures = (
        f"plan {p.kv_cache_tokens:,} tokens, {p.max_concurrency:.2f}x for "
        f"{p.input.max_model_len:,} (from {log.kv_cache_gib} GiB, "
        f"{p.layout.bytes_per_token:,} bytes/token) vs log {logged:,} tokens"
    )
    if log.max_concurrency is not None:
        figures += f", {log.max_concurrency:.2f}x"
    if abs(gap) <= TOLERANCE:
        return "pass", f"{figures} ({gap:+.1%})"
    return "warn", f"{figures} ({gap:+.1%}); a gap like this means: " + "; or ".join(_GAP_CAUSES)
