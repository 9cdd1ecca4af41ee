"""``refine plan``: the command line around :mod:`owlai_refine.ops.plan.kvcache` (files in,
text out).

Reads the model's ``config.json`` (a file or a model folder, whose ``*.safetensors`` sizes give
the weights), the GPU presets (``gpus.json`` beside this module), and optionally a usage
ledger for the typical request; prints one column per variant and the verdict in words, or
JSON with ``--json``. Variants: ``--variant 'NAME:flag=value,flag=value'`` overrides the base
flags (``weights-gib``, ``tensor-parallel-size``, ``kv-cache-dtype``, ``max-num-batched-tokens``
... with dashes or underscores).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from owlai_refine.errors import ConfigError, InputError
from owlai_refine.ops.console import Parser, out
from owlai_refine.ops.ledger import read_ledgers
from owlai_refine.ops.plan.kvcache import GIB, Plan, PlanInput, plan, windows_text
from owlai_refine.ops.plan.modelarch import ModelArch, arch_from_config
from owlai_refine.ops.quantiles import quantile

__all__ = [
    "EXAMPLES",
    "PRESETS",
    "add_plan_arguments",
    "format_plans",
    "load_model",
    "main",
    "model_name",
    "plan_json",
    "plans",
]

PRESETS: dict[str, float] = {
    k: float(v)
    for k, v in json.loads(
        resources.files("owlai_refine.ops.plan").joinpath("gpus.json").read_text(encoding="utf-8")
    ).items()
    if not k.startswith("_")
}
_INT_FIELDS = ("tensor_parallel_size", "max_model_len", "max_num_seqs", "max_num_batched_tokens")
_FLOAT_FIELDS = ("weights_gib", "kv_cache_gib", "gpu_memory_gib", "gpu_memory_utilization")


EXAMPLES = """\
examples:
  refine plan --config ~/models/Qwen3-32B --gpu-memory-gib h100-80g --max-model-len 32768
  refine plan --config config.json --weights-gib 61 --gpus 2 --gpu-memory-gib 80 \\
      --max-num-seqs 8 --variant 'FP8 KV:kv-cache-dtype=fp8'
  refine plan --config config.json --kv-cache-gib 20 --max-model-len 8192 --ledger ledger.jsonl
"""
"""``refine plan --help``'s epilog (tests run each line against a fixture config)."""


def model_name(cfg: dict[str, Any], cfg_path: Path) -> str:
    """The model's name for a table column: the config's ``_name_or_path`` (or ``name``),
    its last path part (``Qwen/Qwen3-32B`` -> ``Qwen3-32B``); else the model folder's name
    when the file is a folder's ``config.json``; else the file's name without ``.json`` and a
    ``-config`` ending (``smollm2-135m-config.json`` -> ``smollm2-135m``), never the name of
    the folder a loose config file happens to sit in."""
    for key in ("_name_or_path", "name"):
        value = cfg.get(key)
        if isinstance(value, str) and value.strip().strip("/"):
            return value.strip().rstrip("/").rsplit("/", 1)[-1]
    if cfg_path.name == "config.json" and cfg_path.parent.name:
        return cfg_path.parent.resolve().name
    stem = cfg_path.stem
    for tail in ("-config", "_config", ".config"):
        if stem.lower().endswith(tail) and len(stem) > len(tail):
            return stem[: -len(tail)]
    return stem


def load_model(path: str) -> tuple[ModelArch, float | None]:
    """Read ``config.json`` at ``path`` (a file, or a folder holding one) and, for a folder,
    the total size of its ``*.safetensors`` files in GiB (``None`` when there are none). The
    architecture is named by :func:`model_name`. Raises ``InputError`` when the file cannot be
    read or lacks what the plan needs."""
    p = Path(path)
    cfg_path = p / "config.json" if p.is_dir() else p
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
        name = model_name(cfg, cfg_path) if isinstance(cfg, dict) else cfg_path.stem
        arch = arch_from_config(cfg, name=name)
    except OSError as exc:
        raise InputError(f"cannot read {cfg_path}: {exc.strerror or exc}") from exc
    except (ValueError, TypeError) as exc:
        raise InputError(f"{cfg_path}: {exc}") from exc
    weights = None
    if p.is_dir() and (files := sorted(p.glob("*.safetensors"))):
        weights = sum(f.stat().st_size for f in files) / GIB
    return arch, weights


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``refine plan`` (vLLM's names and defaults where vLLM has the flag)."""
    p.add_argument("--config", required=True, help="model config.json, or the model folder")
    p.add_argument("--weights-gib", type=float, help="weights, all ranks (default: safetensors)")
    p.add_argument("--gpus", type=int, default=1, help="cards (default 1; TP defaults to it)")
    p.add_argument("--gpu-memory-gib", help=f"GiB per card, or a preset: {', '.join(PRESETS)}")
    p.add_argument("--tensor-parallel-size", type=int, help="default: --gpus")
    p.add_argument("--gpu-memory-utilization", type=float, default=0.9, help="default 0.9")
    p.add_argument("--max-model-len", type=int, help="window (default: the model's)")
    p.add_argument("--max-num-seqs", type=int, default=256, help="default 256")
    p.add_argument("--max-num-batched-tokens", type=int, default=8192, help="default 8192")
    p.add_argument("--dtype", help="model dtype (default: the checkpoint's)")
    p.add_argument("--kv-cache-dtype", default="auto", help="auto, fp8, ... (default auto)")
    p.add_argument("--block-size", type=int, default=16, help="default 16")
    p.add_argument("--kv-cache-gib", type=float, help="KV memory per rank given directly")
    p.add_argument("--typical-tokens", type=int, help="typical prompt + output cap, tokens")
    p.add_argument("--ledger", nargs="+", metavar="LOG", help="typical prompt: our log's p90")
    p.add_argument("--output-tokens", type=int, default=1024, help="output cap with --ledger")
    p.add_argument(
        "--kv-size-rule",
        choices=("concurrency", "blocks"),
        default="concurrency",
        help="how vLLM prints KV cache size: >=0.20 'concurrency', 0.9-0.19 'blocks'",
    )
    p.add_argument(
        "--no-enable-prefix-caching",
        dest="prefix_caching",
        action="store_false",
        help="as vLLM's flag (hybrid models then keep one state block per sequence, not two)",
    )
    p.add_argument("--label", help="name of the base setup in the table (default: the model)")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:k=v,...",
        help="another setup beside the base, e.g. 'FP8:weights-gib=34.9,kv-cache-dtype=auto'",
    )
    p.add_argument("--json", action="store_true", help="print JSON")


def _gpu_gib(text: str | None) -> float | None:
    if text is None:
        return None
    if text.lower() in PRESETS:
        return PRESETS[text.lower()]
    try:
        return float(text)
    except ValueError:
        raise ConfigError(f"--gpu-memory-gib: not a number or preset: {text!r}") from None


def _override(base: PlanInput, spec: str) -> PlanInput:
    name, _, body = spec.partition(":")
    changes: dict[str, Any] = {"label": name.strip()}
    for item in filter(None, (s.strip() for s in body.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lstrip("-").replace("-", "_")
        if not eq:
            raise ConfigError(f"--variant {spec!r}: {item!r} is not flag=value")
        try:
            if key in _INT_FIELDS or key == "block_size":
                changes[key] = int(value)
            elif key in _FLOAT_FIELDS:
                changes[key] = _gpu_gib(value) if key == "gpu_memory_gib" else float(value)
            elif key in ("dtype", "kv_cache_dtype"):
                changes[key] = value.strip()
            elif key in ("prefix_caching", "enable_prefix_caching"):
                changes["prefix_caching"] = value.strip().lower() in ("1", "true", "yes", "on")
            else:
                raise ConfigError(f"--variant {spec!r}: unknown flag --{key.replace('_', '-')}")
        except ValueError:
            raise ConfigError(f"--variant {spec!r}: bad value {value!r}") from None
    return replace(base, **changes)


def plans(args: argparse.Namespace, typical: int | None) -> list[Plan]:
    """The base setup and every ``--variant``, planned. Raises ``ConfigError`` for flags that
    do not make a setup (no memory given, a model without attention)."""
    arch, folder_weights = load_model(args.config)
    window = args.max_model_len or arch.max_position_embeddings
    if not window:
        raise ConfigError("--max-model-len is needed (the config has no max_position_embeddings)")
    base = PlanInput(
        arch=arch,
        max_model_len=window,
        tensor_parallel_size=args.tensor_parallel_size or args.gpus,
        dtype=args.dtype,
        kv_cache_dtype=args.kv_cache_dtype,
        block_size=args.block_size,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        kv_cache_gib=args.kv_cache_gib,
        gpu_memory_gib=_gpu_gib(args.gpu_memory_gib),
        gpu_memory_utilization=args.gpu_memory_utilization,
        weights_gib=args.weights_gib if args.weights_gib is not None else folder_weights,
        typical_request_tokens=typical,
        kv_size_rule=args.kv_size_rule,
        prefix_caching=args.prefix_caching,
        label=args.label or arch.name,
    )
    inputs = [base] + [_override(base, v) for v in args.variant]
    for i, inp in enumerate(inputs):
        _check_memory(inp, None if i == 0 else args.variant[i - 1], args.config, folder_weights)
    try:
        return [plan(i) for i in inputs]
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _check_memory(
    inp: PlanInput, variant: str | None, config: str, folder_weights: float | None
) -> None:
    """Raise ``ConfigError`` naming the flags to add when ``inp`` gives no KV memory to plan:
    neither ``--kv-cache-gib`` nor both ``--gpu-memory-gib`` and the weights' size."""
    if inp.kv_cache_gib is not None or (
        inp.gpu_memory_gib is not None and inp.weights_gib is not None
    ):
        return
    where = f"--variant {variant!r}: " if variant is not None else ""
    if inp.gpu_memory_gib is None and inp.weights_gib is None:
        raise ConfigError(
            f"{where}no memory to plan: give --kv-cache-gib GIB (KV memory per card), or "
            "--gpu-memory-gib (GiB per card, or a preset such as h100-80g) with --weights-gib "
            "(default: the *.safetensors of a model folder given to --config)"
        )
    if inp.gpu_memory_gib is None:
        raise ConfigError(
            f"{where}--weights-gib needs --gpu-memory-gib (GiB per card, or a preset: "
            f"{', '.join(PRESETS)}), or give --kv-cache-gib instead"
        )
    found = (
        "a file, not a model folder"
        if not Path(config).is_dir()
        else "a folder with no *.safetensors"
        if folder_weights is None
        else "a folder"
    )
    raise ConfigError(
        f"{where}--gpu-memory-gib needs the weights' size: give --weights-gib GIB, or --config "
        f"the model folder holding its *.safetensors ({config} is {found}), or --kv-cache-gib"
    )


def _row(name: str, cells: list[str]) -> str:
    return f"{name:<28}" + "".join(f"{c:>16}" for c in cells)


def format_plans(ps: list[Plan]) -> str:
    """The variants side by side (one column each), then one verdict line per variant."""
    rows = [_row("", [p.input.label or p.input.arch.name for p in ps])]

    def add(name: str, fn: Any) -> None:
        rows.append(_row(name, [fn(p) for p in ps]))

    def mem(attr: str) -> Any:
        return lambda p: f"{getattr(p.memory, attr):.2f}" if p.memory else "-"

    add("tensor parallel", lambda p: str(p.input.tensor_parallel_size))
    add("max_num_batched_tokens", lambda p: f"{p.input.max_num_batched_tokens:,}")
    add("kv cache dtype", lambda p: p.input.kv_cache_dtype)
    add("GiB/card requested", mem("requested"))
    add("  weights", mem("weights"))
    add("  activation (est.)", mem("activation"))
    add("  overhead (est.)", mem("overhead"))
    add("  KV cache", lambda p: f"{p.kv_cache_bytes / GIB:.2f}")
    add("KV bytes/token (attn)", lambda p: f"{p.layout.bytes_per_token:,}")
    add("state MiB/sequence", lambda p: f"{p.layout.state_bytes_per_seq / 2**20:.1f}")
    add("block size (tokens)", lambda p: str(p.layout.block_size))
    add("KV blocks", lambda p: f"{p.num_blocks:,}")
    add("KV cache size (tokens)", lambda p: f"{p.kv_cache_tokens:,}")
    add("max concurrency (windows)", lambda p: f"{p.max_concurrency:.2f}x")
    add("max_num_seqs", lambda p: str(p.input.max_num_seqs))
    out = "\n".join(rows) + f"\n(window: {ps[0].input.max_model_len:,} tokens)\n"
    verdicts = [windows_text(p) for p in ps]
    notes = sorted({n for p in ps for n in p.notes})
    return out + "\n".join(verdicts + [f"note: {n}" for n in notes])


def plan_json(ps: list[Plan]) -> dict[str, Any] | list[dict[str, Any]]:
    """JSON-ready: one object per variant (a list when there are several). Each holds
    ``kv_cache_tokens``, ``max_concurrency`` (for ``max_model_len`` tokens per request), the
    inputs, the layout, the memory account (GiB, or null) and the verdict."""
    out = []
    for p in ps:
        inp = p.input
        out.append(
            {
                "label": inp.label,
                "model": inp.arch.name,
                "kv_cache_tokens": p.kv_cache_tokens,
                "max_concurrency": round(p.max_concurrency, 4),
                "max_model_len": inp.max_model_len,
                "kv_cache_gib": round(p.kv_cache_bytes / GIB, 4),
                "num_blocks": p.num_blocks,
                "block_size": p.layout.block_size,
                "kv_bytes_per_token": p.layout.bytes_per_token,
                "state_bytes_per_sequence": p.layout.state_bytes_per_seq,
                "tensor_parallel_size": inp.tensor_parallel_size,
                "max_num_seqs": inp.max_num_seqs,
                "max_num_batched_tokens": inp.max_num_batched_tokens,
                "kv_cache_dtype": inp.kv_cache_dtype,
                "memory_gib": None
                if p.memory is None
                else {k: round(getattr(p.memory, k), 3) for k in p.memory.__slots__},
                "seqs_fit": p.seqs_fit,
                "typical_request_tokens": inp.typical_request_tokens,
                "typical_concurrency": p.typical_concurrency,
                "verdict": windows_text(p),
            }
        )
    return out[0] if len(out) == 1 else out


def main(argv: list[str]) -> int:
    """``refine plan --config PATH ...``: KV cache size and maximum concurrency before a vLLM
    start (see :mod:`owlai_refine.ops.plan.kvcache`). Returns 0 with a plan (whatever its
    verdict); raises :class:`ConfigError` for flags that make no setup, :class:`InputError`
    for an unreadable config or ledger."""
    p = Parser(
        prog="refine plan",
        description="The KV cache a vLLM server will have (tokens, full windows) for a "
        "model,\ncards and flags; variants side by side.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_plan_arguments(p)
    args = p.parse_args(argv)
    typical = args.typical_tokens
    if typical is None and args.ledger:
        prompts = [c.prompt_tokens for c in read_ledgers(args.ledger).calls if c.prompt_tokens]
        if not prompts:
            raise InputError(f"no prompt_tokens in {', '.join(args.ledger)}")
        typical = int(quantile(prompts, 0.9)) + args.output_tokens
    ps = plans(args, typical)
    out(json.dumps(plan_json(ps), indent=2) if args.json else format_plans(ps))
    return 0
