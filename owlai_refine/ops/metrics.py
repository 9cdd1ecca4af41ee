"""Parse the Prometheus text format that vLLM serves at ``/metrics``.

Only what the ops tools read is supported: sample lines ``name{label="value",...} value
[timestamp]`` with the format's escapes (``\\\\``, ``\\"``, ``\\n``) in label values, and ``#``
comment lines (``HELP``/``TYPE``), which are skipped. Histogram series (``_bucket``, ``_sum``,
``_count``) are plain samples here. vLLM names used (see ``servers/README.md``):

- ``vllm:num_preemptions_total`` (counter, requests preempted)
- ``vllm:kv_cache_usage_perc`` (gauge, a fraction 0..1 despite the name)
- ``vllm:prefix_cache_queries_total`` / ``vllm:prefix_cache_hits_total`` (counters, tokens)
- ``vllm:cache_config_info`` (value 1; labels ``block_size``, ``num_gpu_blocks``,
  ``kv_cache_size_tokens``, ``kv_cache_max_concurrency`` ...)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = [
    "KV_USAGE",
    "PREEMPTIONS",
    "PREFIX_HITS",
    "PREFIX_QUERIES",
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

_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_NAME})(?:\{{(.*)\}})?\s+(\S+)(?:\s+\S+)?\s*$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


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


def _labels(text: str, line_no: int) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _LABEL.match(text, pos)
        if m is None:
            raise MetricsParseError(f"line {line_no}: bad label set {{{text}}}", line_no=line_no)
        out[m.group(1)] = re.sub(r"\\[\\\"n]", lambda e: _UNESCAPE[e.group(0)], m.group(2))
        pos = m.end()
    return out


def _float(text: str, line_no: int) -> float:
    try:
        return float(text)  # also takes +Inf, -Inf, NaN as the format spells them
    except ValueError:
        raise MetricsParseError(f"line {line_no}: bad value {text!r}", line_no=line_no) from None


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
    """Parse Prometheus text exposition into :class:`Metrics`.

    Raises :class:`MetricsParseError` on a line that is neither blank, a comment nor a sample.
    """
    samples: list[Sample] = []
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m is None:
            raise MetricsParseError(f"line {line_no}: not a sample: {line[:80]!r}", line_no=line_no)
        name, label_text, value = m.groups()
        labels = _labels(label_text, line_no) if label_text else {}
        samples.append(Sample(name, labels, _float(value, line_no)))
    return Metrics(samples)
