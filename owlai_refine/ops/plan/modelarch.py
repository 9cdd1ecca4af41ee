"""A model's memory-relevant architecture, read from its Hugging Face ``config.json``.

Pure: takes the parsed JSON (a dict), returns a :class:`ModelArch`; touches no files. What is
read, by family (the keys are the ones public configs use):

================  =============================================================================
every model       ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
                  ``num_key_value_heads`` (grouped-query attention; missing: = heads),
                  ``head_dim`` (missing: hidden / heads), ``vocab_size``, ``intermediate_size``,
                  ``torch_dtype`` / ``dtype``; a nested ``text_config`` wins (multimodal configs)
MoE               ``num_experts`` / ``num_local_experts`` / ``n_routed_experts``,
                  ``num_experts_per_tok``, ``moe_intermediate_size``
MLA (DeepSeek)    ``kv_lora_rank`` + ``qk_rope_head_dim``: one latent "head" per token and layer,
                  replicated on every tensor-parallel rank
sliding window    ``layer_types`` (``sliding_attention``), else Gemma-2 (every other layer),
                  Gemma-3 ``sliding_window_pattern``, else ``sliding_window`` on every layer
                  (Mistral-7B-v0.1) unless ``use_sliding_window`` is false
hybrid            ``layer_types`` (``linear_attention`` / ``mamba``), Qwen3-Next
                  ``full_attention_interval``, Jamba ``attn_layer_period``/``attn_layer_offset``;
                  state per sequence from ``linear_*`` (gated delta net) or ``mamba_*`` (Mamba-1),
                  the recurrent state in ``mamba_ssm_dtype`` when given
================  =============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DTYPE_BYTES", "LayerKind", "ModelArch", "StateSpec", "arch_from_config", "dtype_bytes"]

LayerKind = Literal["full", "sliding", "state"]

#: Bytes per element of the dtype names vLLM accepts for ``--dtype`` and ``--kv-cache-dtype``.
DTYPE_BYTES: dict[str, int] = {
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
    "int8": 1,
}


def dtype_bytes(name: str) -> int:
    """Bytes per element of ``name`` (``"bfloat16"`` -> 2). Raises ``ValueError`` if unknown."""
    try:
        return DTYPE_BYTES[name.lower().removeprefix("torch.")]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r} (known: {', '.join(DTYPE_BYTES)})") from None


@dataclass(frozen=True, slots=True)
class StateSpec:
    """The fixed state one sequence holds in one linear-attention / state-space layer.

    ``conv_dim`` x (``conv_kernel`` - 1) elements of convolution state plus
    ``ssm_heads`` x ``ssm_a`` x ``ssm_b`` elements of recurrent state; both sharded over
    tensor-parallel ranks (``conv_dim`` and ``ssm_heads`` are divided by TP).
    """

    conv_dim: int
    conv_kernel: int
    ssm_heads: int
    ssm_a: int
    ssm_b: int
    ssm_dtype: str | None = None

    def bytes_per_rank(self, tp: int, dtype: str) -> int:
        """State bytes per sequence, per layer, on one of ``tp`` ranks: the convolution state
        in ``dtype`` (the model's), the recurrent state in ``ssm_dtype`` (the config's
        ``mamba_ssm_dtype``, e.g. float32 for Qwen3.5) or ``dtype``."""
        conv = (self.conv_dim // tp) * (self.conv_kernel - 1) * dtype_bytes(dtype)
        ssm = (self.ssm_heads // tp) * self.ssm_a * self.ssm_b
        return conv + ssm * dtype_bytes(self.ssm_dtype or dtype)


@dataclass(frozen=True, slots=True)
class ModelArch:
    """What the memory arithmetic needs from a model.

    ``layers``: one kind per decoder layer (``full`` attention, ``sliding`` window attention,
    ``state``: linear attention / Mamba with a fixed per-sequence state). ``kv_heads`` and
    ``head_dim`` describe one attention layer's K and V (for MLA: 1 latent head of
    ``kv_lora_rank + qk_rope_head_dim``, stored once, not K and V). ``dtype`` is the
    checkpoint's compute dtype name.
    """

    name: str
    layers: tuple[LayerKind, ...]
    hidden_size: int
    num_attention_heads: int
    kv_heads: int
    head_dim: int
    vocab_size: int
    intermediate_size: int
    dtype: str = "bfloat16"
    mla: bool = False
    sliding_window: int | None = None
    state: StateSpec | None = None
    num_experts: int = 0
    experts_per_token: int = 0
    moe_intermediate_size: int = 0
    max_position_embeddings: int | None = None

    def count(self, kind: LayerKind) -> int:
        """How many layers are of ``kind``."""
        return sum(k == kind for k in self.layers)


def _int(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return default


def _need(cfg: dict[str, Any], *keys: str) -> int:
    value = _int(cfg, *keys)
    if value is None:
        raise ValueError(f"config.json has none of {', '.join(keys)}")
    return value


def _layer_kinds(cfg: dict[str, Any], n: int) -> tuple[LayerKind, ...]:
    kinds: dict[str, LayerKind] = {
        "full_attention": "full",
        "attention": "full",
        "sliding_attention": "sliding",
        "chunked_attention": "full",
        "linear_attention": "state",
        "mamba": "state",
        "mamba2": "state",
    }
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == n:
        try:
            return tuple(kinds[str(t)] for t in types)
        except KeyError as exc:
            raise ValueError(f"config.json: unknown layer type {exc.args[0]!r}") from None
    if (interval := _int(cfg, "full_attention_interval")) and "linear_num_value_heads" in cfg:
        return tuple("full" if (i + 1) % interval == 0 else "state" for i in range(n))
    if (period := _int(cfg, "attn_layer_period")) is not None:
        offset = _int(cfg, "attn_layer_offset", default=0) or 0
        return tuple("full" if i % period == offset else "state" for i in range(n))
    return _sliding_kinds(cfg, n)


def _sliding_kinds(cfg: dict[str, Any], n: int) -> tuple[LayerKind, ...]:
    if not _int(cfg, "sliding_window") or cfg.get("use_sliding_window", True) is False:
        return tuple(_kind(True) for _ in range(n))
    if cfg.get("model_type") == "gemma2":
        return tuple(_kind(i % 2 != 0) for i in range(n))
    if pattern := _int(cfg, "sliding_window_pattern"):
        return tuple(_kind((i + 1) % pattern == 0) for i in range(n))
    return tuple(_kind(False) for _ in range(n))


def _kind(full: bool) -> LayerKind:
    return "full" if full else "sliding"


def _dtype_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value in DTYPE_BYTES else None


def _state(cfg: dict[str, Any], hidden: int) -> StateSpec | None:
    if "linear_num_value_heads" in cfg:  # gated delta net (Qwen3-Next, Qwen3.5)
        k_heads, v_heads = _need(cfg, "linear_num_key_heads"), _need(cfg, "linear_num_value_heads")
        k_dim, v_dim = _need(cfg, "linear_key_head_dim"), _need(cfg, "linear_value_head_dim")
        return StateSpec(
            conv_dim=k_dim * k_heads * 2 + v_dim * v_heads,
            conv_kernel=_need(cfg, "linear_conv_kernel_dim"),
            ssm_heads=v_heads,
            ssm_a=v_dim,
            ssm_b=k_dim,
            ssm_dtype=_dtype_or_none(cfg.get("mamba_ssm_dtype")),
        )
    if "mamba_d_state" in cfg:  # Mamba-1 (Jamba)
        d_inner = (_int(cfg, "mamba_expand", default=2) or 2) * hidden
        return StateSpec(
            conv_dim=d_inner,
            conv_kernel=_need(cfg, "mamba_d_conv"),
            ssm_heads=d_inner,
            ssm_a=_need(cfg, "mamba_d_state"),
            ssm_b=1,
            ssm_dtype=_dtype_or_none(cfg.get("mamba_ssm_dtype")),
        )
    return None


def arch_from_config(config: dict[str, Any], name: str = "model") -> ModelArch:
    """Read a :class:`ModelArch` from a parsed ``config.json``.

    Raises ``ValueError`` naming the missing key when the config lacks what the arithmetic
    needs (layers, heads, hidden size), or holds a layer type this module does not know.
    """
    cfg = dict(config)
    if isinstance(cfg.get("text_config"), dict):
        cfg = {**cfg, **cfg["text_config"]}
    n = _need(cfg, "num_hidden_layers", "n_layer", "num_layers")
    hidden = _need(cfg, "hidden_size", "d_model")
    heads = _need(cfg, "num_attention_heads", "n_head")
    kv_heads = _int(cfg, "num_key_value_heads", "multi_query_group_num", default=heads) or heads
    head_dim = _int(cfg, "head_dim", default=hidden // heads) or hidden // heads
    mla = "kv_lora_rank" in cfg and cfg.get("kv_lora_rank") is not None
    if mla:
        kv_heads, head_dim = 1, _need(cfg, "kv_lora_rank") + _need(cfg, "qk_rope_head_dim")
    layers = _layer_kinds(cfg, n)
    state = _state(cfg, hidden) if "state" in layers else None
    if "state" in layers and state is None:
        raise ValueError("config.json has state-space layers but no linear_*/mamba_* sizes")
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    return ModelArch(
        name=name,
        layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        vocab_size=_int(cfg, "vocab_size", default=32000) or 32000,
        intermediate_size=_int(cfg, "intermediate_size", "ffn_dim", default=4 * hidden) or 0,
        dtype=dtype if dtype.removeprefix("torch.") in DTYPE_BYTES else "bfloat16",
        mla=mla,
        sliding_window=_int(cfg, "sliding_window") if "sliding" in layers else None,
        state=state,
        num_experts=_int(cfg, "num_experts", "num_local_experts", "n_routed_experts", default=0)
        or 0,
        experts_per_token=_int(
            cfg, "num_experts_per_tok", "experts_per_token", "moe_topk", default=0
        )
        or 0,
        moe_intermediate_size=_int(cfg, "moe_intermediate_size", default=0) or 0,
        max_position_embeddings=_int(cfg, "max_position_embeddings"),
    )
