"""Read the Prometheus text format that vLLM serves at ``/metrics``.

vLLM writes it with ``prometheus_client``; we read it with the same library's parser
(``prometheus_client.parser``), so escapes, comments, timestamps and special values follow the
format as written. Every sample of every family is kept flat (a histogram's ``_bucket``,
``_sum`` and ``_count`` series are plain samples here). vLLM names used:

- ``vllm:num_preemptions_total`` (counter, requests preempted)
- ``vllm:kv_cache_usage_perc`` (gauge, a fraction 0..1 despite the name)
- ``vllm:prefix_cache_queries_total`` / ``vllm:prefix_cache_hits_total`` (counters, tokens)
- ``vllm:num_requests_running`` / ``vllm:num_requests_waiting`` (gauges: requests in the
  batch, requests queued; running never exceeds the server's ``max_num_seqs``)
- ``vllm:time_to_first_token_seconds`` (histogram, seconds: its ``_count`` and ``_sum``)
- ``vllm:cache_config_info`` (value 1; labels ``block_size``, ``num_gpu_blocks``,
  ``kv_cache_size_tokens``, ``kv_cache_max_concurrency`` ...)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "KV_USAGE",
    "PREEMPTIONS",
    "PREFIX_HITS",
    "PREFIX_QUERIES",
    "RUNNING",
    "TTFT",
    "WAITING",
    "Metrics",
    "MetricsParseError",
    "Sample",
    "parse_metrics",
]

PREEMPTIONS = "vllm:num_preemptions_total"
KV_USAGE = "vllm:kv_cache_usage_perc"
PREFIX_HITS = "vllm:prefix_cache_hits_total"
PREFIX_QUERIES = "vllm:prefix_cache_queries_total"
CACHE_CONFIG = "vllm:cache_config_info"
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
TTFT = "vllm:time_to_first_token_seconds"


class MetricsParseError(ValueError):
    """Raised when a non-comment line of ``/metrics`` text is not a sample line; ``line_no``
    is its 1-based number."""

    def __init__(self, message: str, *, line_no: int) -> None:
        super().__init__(message)
        self.line_no = line_no


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample: metric ``name``, its ``labels`` (name -> unescaped value), its ``value``."""

    name: str
    labels: dict[str, str]
    value: float


class Metrics:
    """The samples of one ``/metrics`` scrape, with the look-ups the ops tools need."""

    def __init__(self, samples: list[Sample]) -> None:
        """Wrap ``samples`` (as returned by :func:`parse_metrics`)."""
        self.samples = samples

    def total(self, name: str, **labels: str) -> float | None:
        """Sum of ``name`` over every series whose labels include ``labels``; ``None`` if the
        metric is absent (so "no such metric" differs from zero). NaN samples are ignored."""
        found = [
            s.value
            for s in self.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        ]
        if not found:
            return None
        return sum(v for v in found if not math.isnan(v))

    def peak(self, name: str) -> float | None:
        """Largest value of ``name`` across its series (a gauge per engine), ``None`` if absent."""
        found = [s.value for s in self.samples if s.name == name and not math.isnan(s.value)]
        return max(found) if found else None

    def info_labels(self, name: str = CACHE_CONFIG) -> dict[str, str] | None:
        """Labels of the first series of an ``_info`` metric (``vllm:cache_config_info`` by
        default), or ``None`` if the scrape has none."""
        for s in self.samples:
            if s.name == name:
                return s.labels
        return None

    def kv_capacity_tokens(self) -> int | None:
        """KV cache capacity in tokens from ``vllm:cache_config_info``: the
        ``kv_cache_size_tokens`` label if present, else ``num_gpu_blocks x block_size``;
        ``None`` when neither can be read."""
        info = self.info_labels()
        if info is None:
            return None
        try:
            if info.get("kv_cache_size_tokens") not in (None, "", "None"):
                return int(float(info["kv_cache_size_tokens"]))
            return int(info["num_gpu_blocks"]) * int(info["block_size"])
        except (KeyError, ValueError):
            return None


def parse_metrics(text: str) -> Metrics:
    """Parse Prometheus text exposition into :class:`Metrics` (``prometheus_client``'s parser).

    Raises :class:`MetricsParseError` naming the first line the parser refuses.
    """
    # Loaded on first use: a run without --adaptive never reads /metrics.
    from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

    try:
        families = list(text_string_to_metric_families(text))
    except ValueError:
        raise _first_bad_line(text) from None
    return Metrics(
        [Sample(s.name, dict(s.labels), float(s.value)) for f in families for s in f.samples]
    )


def _first_bad_line(text: str) -> MetricsParseError:
    """The error for the first line that does not parse on its own (the parser's own error
    names no line)."""
    from prometheus_client.parser import text_string_to_metric_families  # noqa: PLC0415

    lines = text.splitlines()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            list(text_string_to_metric_families(line + "\n"))
        except ValueError:
            return MetricsParseError(
                f"line {line_no}: not a sample: {line[:80]!r}", line_no=line_no
            )
    return MetricsParseError("not Prometheus text exposition", line_no=len(lines))
