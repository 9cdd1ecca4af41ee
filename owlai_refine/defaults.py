"""The settings' closed sets and defaults that need no pydantic: the backends, their caps and
the sampling temperature.

:mod:`owlai_refine.config` builds its models on these (and re-exports them); the CLI's flags and
``--help`` read them here, so that ``refine --help`` and ``--version`` load no pydantic model.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["DEFAULT_CONCURRENCY", "DEFAULT_TEMPERATURE", "Backend"]


class Backend(StrEnum):
    """Where the model runs, which decides the default cap on requests in flight."""

    CLOUD = "cloud"
    """A hosted API: short calls (about 2 s), many slots on the provider's side."""
    SELF_HOSTED = "self-hosted"
    """A vLLM (or llama.cpp) server of our own: the cap must equal its ``max_num_seqs``."""


DEFAULT_CONCURRENCY: dict[Backend, int] = {Backend.CLOUD: 12, Backend.SELF_HOSTED: 4}
"""Requests in flight per endpoint. Cloud 12: with ~2 s block calls the wait for the slowest
block measured 18.2 s at 4, 6.5 s at 12 and 5.7 s at 16 in flight. Self-hosted 4: the vLLM
server's ``max_num_seqs``; with production inputs (median 39,812 tokens, 61.7% over 32K) prefill
saturates the GPU beyond 2-4 concurrent requests, and going from 4 to 8 gave +4% throughput for
+65% TTFT and -56% per-request decode speed. (Figures from OwlAI's design brief.)"""

DEFAULT_TEMPERATURE = 0.2
"""``RefineConfig.temperature``'s default: low, for a copy edit that keeps the block's words."""
