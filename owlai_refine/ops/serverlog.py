"""Read the facts ``refine doctor`` needs from a vLLM server's startup log.

Lines read (vLLM 0.32, recorded in ``fixtures/vllm/``)::

    ... non-default args: {'model': ..., 'max_num_seqs': 4, 'override_generation_config': {...}}
    ... Using max model len 4096
    ... Initializing a V1 LLM engine (v0.32.0) with config: ..., speculative_config=None, ...
        dtype=torch.float32, ..., tensor_parallel_size=1, ..., kv_cache_dtype=auto, ...
    ... Explicitly set (1.0/11.71) GiB for KV cache on node 0.      (vLLM for CPU)
    ... Available KV cache memory: 9.70 GiB                          (GPU)
    ... CPU KV cache size: 23,296 tokens, Maximum concurrency for 4,096 tokens per request: 5.69x
    ... Default vLLM sampling parameters have been overridden by the model's
        `generation_config.json`: `{'presence_penalty': 1.5, 'max_tokens': 48}`. ...

(the last is one line in the log), and, with speculative decoding on (``--speculative-config``;
``vllm/config/speculative.py``'s ``__repr__`` and ``vllm/v1/spec_decode/metrics.py``'s
``SpecDecodingLogging.log``, recorded in ``fixtures/vllm/startup-ngram-spec.log``)::

    ... with config: ..., speculative_config=SpeculativeConfig(method='ngram', model=None,
        num_spec_tokens=4), ...
    ... SpecDecoding metrics: Mean acceptance length: 1.11, Accepted throughput: 1.25 tokens/s,
        Drafted throughput: 43.68 tokens/s, Accepted: 14 tokens, Drafted: 489 tokens,
        Per-position acceptance rate: 0.113, 0.000, 0.000, 0.000, Avg Draft acceptance rate: 2.9%

(each metrics line counts the drafts since the one before: they are summed). A log holding
several startups (an appended file) is read to its end, so the last startup wins. Pure: takes
text, returns values, touches no files.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from owlai_refine.errors import InputError

__all__ = ["ServerLog", "parse_server_log", "read_server_log"]

_ARGS = re.compile(r"non-default args: (\{.*\})\s*$")
_ENGINE = re.compile(r"Initializing a \S+ LLM engine \(v([^)]+)\) with config: (.*)$")
_SPEC = re.compile(r"speculative_config=(None|[A-Za-z_]*\(.*?\)|\{.*?\})(?:, [a-z_]+=|$)")
_KV_SIZE = re.compile(r"\b([A-Z]PU|XPU|TPU) KV cache size: ([\d,]+) tokens")
_MAX_CONC = re.compile(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x")
_MAX_LEN = re.compile(r"Using max model len (\d+)")
_KV_GIB = re.compile(
    r"(?:Available KV cache memory: (-?[\d.]+) GiB|Explicitly set \(([\d.]+)/[\d.]+\) GiB for KV)"
)
_ENGINE_FIELD = re.compile(
    r"(?:^|, )(dtype|tensor_parallel_size|kv_cache_dtype|max_seq_len)=([^,]+)"
)
_SPEC_FIELD = re.compile(r"\b(method|num_spec_tokens)=('?)([^',)]+)\2")
_SPEC_STATS = re.compile(r"SpecDecoding metrics: .*?Accepted: (\d+) tokens, Drafted: (\d+) tokens")
_OVERRIDE = re.compile(
    r"Default vLLM sampling parameters have been overridden by (.*?): `(\{.*?\})`"
)


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


@dataclass(slots=True)
class ServerLog:
    """What a vLLM startup log says. Every field is ``None`` when its line was not found.

    - ``args``: the ``non-default args`` dict (CLI flags the operator set), or ``None``;
    - ``max_num_seqs``: from ``args`` (``None`` if absent: vLLM's default then applies);
    - ``override_source`` / ``sampling_overrides``: the "overridden by" source text and the
      default sampling parameters it set (e.g. ``{'max_tokens': 48, 'presence_penalty': 1.5}``);
    - ``kv_cache_tokens``: KV cache capacity in tokens; ``max_concurrency_tokens`` and
      ``max_concurrency``: the "Maximum concurrency for N tokens per request: X x" pair;
    - ``speculative_config``: the engine config's text for it (``"None"`` when off);
      ``speculative_method`` / ``speculative_tokens`` (properties): its method (``"ngram"``,
      ``"suffix"``, ``"eagle"`` ...) and tokens proposed per step;
      ``spec_accepted_tokens`` / ``spec_draft_tokens``: the ``SpecDecoding metrics`` lines'
      accepted and drafted tokens, summed (``None`` when the log has no such line);
    - ``vllm_version``: from the engine line; ``engine``: its ``dtype`` (``"float32"``),
      ``kv_cache_dtype``, ``tensor_parallel_size`` and ``max_seq_len`` as text;
    - ``max_model_len``: the "Using max model len" line, else the args' ``max_model_len``;
    - ``kv_cache_gib``: the KV memory per rank, GiB ("Available KV cache memory", or vLLM for
      CPU's "Explicitly set (X/...) GiB for KV cache"; the smallest when ranks differ);
    - ``port``, ``served_models`` (``served_model_name``, else ``model``), from ``args``.
    """

    args: dict[str, Any] | None = None
    max_num_seqs: int | None = None
    max_model_len_arg: int | None = None
    override_source: str | None = None
    sampling_overrides: dict[str, Any] | None = None
    kv_cache_tokens: int | None = None
    max_concurrency_tokens: int | None = None
    max_concurrency: float | None = None
    speculative_config: str | None = None
    spec_accepted_tokens: int | None = None
    spec_draft_tokens: int | None = None
    vllm_version: str | None = None
    engine: dict[str, str] = field(default_factory=dict)
    max_model_len_line: int | None = None
    kv_cache_gib: float | None = None
    lines_read: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def max_model_len(self) -> int | None:
        """The served window: the "Using max model len" line, else the args, else the engine
        line's ``max_seq_len``."""
        if self.max_model_len_line is not None:
            return self.max_model_len_line
        if self.max_model_len_arg is not None:
            return self.max_model_len_arg
        seq = self.engine.get("max_seq_len", "")
        return int(seq) if seq.isdigit() else None

    @property
    def port(self) -> int | None:
        """The ``--port`` in the non-default args (``None``: vLLM's default 8000 or unknown)."""
        return _int_arg(self.args or {}, "port")

    @property
    def served_models(self) -> list[str]:
        """Names the server answers to: ``served_model_name`` (a list or a string), else
        ``model``; empty when the args were not read."""
        args = self.args or {}
        names = args.get("served_model_name") or args.get("model")
        if isinstance(names, str):
            return [names]
        return [str(n) for n in names] if isinstance(names, list | tuple) else []

    def flag(self, name: str) -> bool:
        """Whether boolean flag ``name`` (``"enable_log_requests"``) is on in the args."""
        return (self.args or {}).get(name) is True

    @property
    def speculative_enabled(self) -> bool | None:
        """True when speculative decoding is configured, False when the engine line says
        ``speculative_config=None`` (or the args set none), ``None`` when unknown."""
        if self.speculative_config is not None:
            return self.speculative_config != "None"
        if self.args is not None:
            return bool(self.args.get("speculative_config"))
        return None

    def _spec_field(self, name: str, arg: str) -> str | None:
        """``name`` from the engine line's ``SpeculativeConfig(...)``, else ``arg`` from the
        ``--speculative-config`` dict in the args."""
        for key, _, value in _SPEC_FIELD.findall(self.speculative_config or ""):
            if key == name:
                return str(value)
        spec = (self.args or {}).get("speculative_config")
        value = spec.get(arg) if isinstance(spec, dict) else None
        return None if value is None else str(value)

    @property
    def speculative_method(self) -> str | None:
        """The speculative method (``"ngram"``, ``"suffix"``, ``"eagle"``, ``"mtp"`` ...), or
        ``None`` when off or not found."""
        return self._spec_field("method", "method") if self.speculative_enabled else None

    @property
    def speculative_tokens(self) -> int | None:
        """Tokens the proposer drafts per step (``num_speculative_tokens``), or ``None``."""
        if not self.speculative_enabled:
            return None
        value = self._spec_field("num_spec_tokens", "num_speculative_tokens")
        return int(value) if value is not None and value.isdigit() else None

    @property
    def spec_acceptance(self) -> float | None:
        """Accepted / drafted tokens over the log's ``SpecDecoding metrics`` lines (0..1), or
        ``None`` when none drafted."""
        if not self.spec_draft_tokens or self.spec_accepted_tokens is None:
            return None
        return self.spec_accepted_tokens / self.spec_draft_tokens


def _int_arg(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read_engine(out: ServerLog, version: str, config: str) -> None:
    out.vllm_version = version
    if spec := _SPEC.search(config):
        out.speculative_config = spec.group(1)
    for key, value in _ENGINE_FIELD.findall(config):
        out.engine.setdefault(key, value.strip().removeprefix("torch."))


def parse_server_log(text: str) -> ServerLog:
    """Parse a vLLM startup log's text into a :class:`ServerLog` (never raises on odd text)."""
    out = ServerLog()
    for line in text.splitlines():
        out.lines_read += 1
        if m := _ARGS.search(line):  # a new startup: what the previous one said is stale
            out.kv_cache_gib, out.max_model_len_line, out.engine = None, None, {}
            out.spec_accepted_tokens = out.spec_draft_tokens = None
            args = _literal(m.group(1))
            if isinstance(args, dict):
                out.args = args
                out.max_num_seqs = _int_arg(args, "max_num_seqs")
                out.max_model_len_arg = _int_arg(args, "max_model_len")
            else:
                out.notes.append("non-default args line is not a Python literal")
                seqs = re.search(r"'max_num_seqs': (\d+)", m.group(1))
                out.max_num_seqs = int(seqs.group(1)) if seqs else None
        if m := _ENGINE.search(line):
            _read_engine(out, m.group(1), m.group(2))
        if m := _MAX_LEN.search(line):
            out.max_model_len_line = int(m.group(1))
        if m := _KV_GIB.search(line):
            gib = float(m.group(1) or m.group(2))
            out.kv_cache_gib = gib if out.kv_cache_gib is None else min(out.kv_cache_gib, gib)
        if m := _KV_SIZE.search(line):
            out.kv_cache_tokens = int(m.group(2).replace(",", ""))
        if m := _MAX_CONC.search(line):
            out.max_concurrency_tokens = int(m.group(1).replace(",", ""))
            out.max_concurrency = float(m.group(2))
        if m := _SPEC_STATS.search(line):
            out.spec_accepted_tokens = (out.spec_accepted_tokens or 0) + int(m.group(1))
            out.spec_draft_tokens = (out.spec_draft_tokens or 0) + int(m.group(2))
        if m := _OVERRIDE.search(line):
            out.override_source = m.group(1)
            overrides = _literal(m.group(2))
            out.sampling_overrides = overrides if isinstance(overrides, dict) else None
            if out.sampling_overrides is None:
                out.notes.append("sampling override dict is not a Python literal")
    return out


def read_server_log(path: str | None) -> ServerLog | None:
    """The startup log at ``path`` parsed (``None`` for no path); :class:`InputError` when the
    file cannot be read."""
    if path is None:
        return None
    try:
        return parse_server_log(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        raise InputError(f"cannot read server log {path}: {exc.strerror or exc}") from exc
