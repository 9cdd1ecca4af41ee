"""``refine plan``: how many tokens of KV cache a vLLM server will have, before starting it.

Pure arithmetic over a :class:`~owlai_refine.ops.plan.modelarch.ModelArch` and the serving flags;
no network, no files. The KV layout follows vLLM's v1 KV cache manager (read from vLLM 0.32's
``vllm/v1/core/kv_cache_utils.py`` and ``kv_cache_interface.py``; the rules are older than
that release and unchanged in substance since 0.10):

- a *page* is one block (``block_size`` tokens) of one layer. Full attention: ``2 x kv_heads
  per rank x head_dim x dtype bytes`` per token (K and V; grouped-query attention; heads are
  split over tensor-parallel ranks, replicated when fewer than ranks); MLA: one latent of
  ``kv_lora_rank + qk_rope_head_dim`` per token, replicated on every rank;
- layers of one kind form groups of equal size (the smallest kind's count, or the largest when
  it is under 1.5x the smallest); every group draws blocks from one pool of
  ``available // (page x group_size)`` blocks;
- hybrid models: the attention block size grows (in steps of 16 tokens) until an attention
  page holds one sequence's state of a linear-attention / Mamba layer, whose page is padded
  to match; a sequence then holds one state block per state group;
- a request of ``max_model_len`` tokens needs ``ceil(len / block)`` blocks per full-attention
  group and ``ceil(min(window - 1 + max_num_batched_tokens, len) / block) + 1`` per sliding
  group; ``Maximum concurrency`` = blocks / blocks per request;
- the logged ``KV cache size`` is ``int(concurrency x max_model_len)`` (vLLM >= 0.20, and the
  same figure for one group of full attention) or ``blocks // groups x block_size``
  (``kv_size_rule="blocks"``: vLLM 0.9-0.19).

Memory per card (GPU; vLLM's ``determine_available_memory``): ``gpu_memory x utilization -
weights / TP - peak activation - non-torch overhead``. CUDA graphs are not modelled: vLLM up to
0.20 captured them after sizing the KV cache (the public logs this is fitted on); from 0.21 it
also subtracts an estimate of their memory by default (``VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS``,
logged as "Estimated CUDA graph memory"), so on those versions the per-card KV figure is high by
that estimate: give ``kv_cache_gib`` from the log's "Available KV cache memory" instead. The
activation peak is an estimate, linear in ``max_num_batched_tokens`` (see
:func:`activation_bytes`); all sizes are bytes unless a name says GiB.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from owlai_refine.ops.plan.modelarch import ModelArch, dtype_bytes

__all__ = [
    "GIB",
    "KvLayout",
    "Memory",
    "Plan",
    "PlanInput",
    "activation_bytes",
    "kv_layout",
    "plan",
    "stage_layers",
    "windows_text",
]

GIB = 1024**3
#: Hidden-size multiples of activation held per batched token (residual, norms, attention
#: in/out, and the torch.compile buffers around them), fitted on Llama-3.1-8B's profile
#: (2.07 GiB at 20,000 tokens, 2.99 GiB at 29,000) and on the reference MoE's 8192 -> 32768
#: case (KV 9.7 -> 8.1 GiB per card).
ACT_HIDDEN_FACTOR = 6.5
#: Memory outside torch's allocator per card (CUDA context, cuBLAS workspaces), GiB; fitted on
#: the public logs in ``fixtures/vllm/public-logs`` (0.29-0.35 GiB on one card).
OVERHEAD_GIB = 0.3
#: Extra per card under tensor parallelism (NCCL and custom all-reduce buffers), GiB (same
#: fixtures: 0.45-0.5 GiB in all at TP 2 and TP 4).
OVERHEAD_TP_GIB = 0.2
_KERNEL_BLOCK = 16  # attention kernels' block alignment (FlashAttention: multiples of 16)


@dataclass(frozen=True, slots=True)
class PlanInput:
    """One serving setup. ``max_model_len`` tokens per request (the window); sizes in GiB.

    Give either ``kv_cache_gib`` (the KV memory per rank, as ``VLLM_CPU_KVCACHE_SPACE`` or a
    logged ``Available KV cache memory``) or ``gpu_memory_gib`` and ``weights_gib`` (total
    over all ranks) for the per-card estimate. ``kv_cache_dtype`` ``"auto"`` follows
    ``dtype`` (``None``: the checkpoint's). ``typical_request_tokens``: a typical prompt plus
    output cap, for the second fit check. ``prefix_caching`` (vLLM's default) makes a hybrid
    model keep two state blocks per sequence instead of one. ``kv_size_rule``: how the logged
    KV cache size is counted (module docstring). Under pipeline parallelism each stage holds its own
    layers (vLLM's split: ``n // pp`` each, the remainder to the stages before the last) and
    the smallest stage pool sets the blocks; ``stage_kv_gib`` gives each stage's KV memory when
    they differ (the last stage also holds the output head), else every stage has the same.
    """

    arch: ModelArch
    max_model_len: int
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    stage_kv_gib: tuple[float, ...] | None = None
    dtype: str | None = None
    kv_cache_dtype: str = "auto"
    block_size: int = 16
    max_num_seqs: int = 256
    max_num_batched_tokens: int = 8192
    kv_cache_gib: float | None = None
    gpu_memory_gib: float | None = None
    gpu_memory_utilization: float = 0.9
    weights_gib: float | None = None
    typical_request_tokens: int | None = None
    kv_size_rule: Literal["concurrency", "blocks"] = "concurrency"
    prefix_caching: bool = True
    label: str = ""


@dataclass(frozen=True, slots=True)
class KvLayout:
    """vLLM's KV cache layout on one rank: ``block_size`` tokens per block, ``page_bytes`` per
    block and layer, ``group_size`` layers per group, ``groups`` groups (padding included),
    ``blocks_per_request`` for one ``max_model_len`` request (all groups), and the bytes one
    token of context costs in attention layers (``bytes_per_token``) and one sequence's fixed
    state (``state_bytes_per_seq``, before page padding)."""

    block_size: int
    page_bytes: int
    group_size: int
    groups: int
    blocks_per_request: int
    bytes_per_token: int
    state_bytes_per_seq: int
    notes: tuple[str, ...] = ()

    @property
    def bytes_per_block(self) -> int:
        """Pool bytes one block id costs (``page_bytes x group_size``)."""
        return self.page_bytes * self.group_size


@dataclass(frozen=True, slots=True)
class Memory:
    """Per-card memory account, GiB: ``requested`` (memory x utilization) = ``weights`` +
    ``activation`` (peak of the profile run) + ``overhead`` + ``kv``."""

    total: float
    requested: float
    weights: float
    activation: float
    overhead: float
    kv: float


@dataclass(frozen=True, slots=True)
class Plan:
    """The plan for one :class:`PlanInput`.

    ``kv_cache_tokens`` and ``max_concurrency`` are the two figures of vLLM's startup line
    (``KV cache size: N tokens``, ``Maximum concurrency for max_model_len tokens per request:
    X x``); ``max_concurrency`` is also the number of full windows that fit. ``seqs_fit``:
    ``max_num_seqs`` full windows fit; ``typical_concurrency``: requests of the typical size
    that fit (``None`` without one).
    """

    input: PlanInput
    layout: KvLayout
    kv_cache_bytes: int
    num_blocks: int
    max_concurrency: float
    kv_cache_tokens: int
    memory: Memory | None
    typical_concurrency: float | None
    notes: list[str] = field(default_factory=list)

    @property
    def seqs_fit(self) -> bool:
        """``max_num_seqs`` requests at the full window fit without preemption."""
        return self.max_concurrency >= self.input.max_num_seqs

    @property
    def typical_fit(self) -> bool | None:
        """``max_num_seqs`` typical requests fit (``None`` without a typical size)."""
        if self.typical_concurrency is None:
            return None
        return self.typical_concurrency >= self.input.max_num_seqs


def _kv_dtype_bytes(inp: PlanInput) -> int:
    if inp.kv_cache_dtype == "auto":
        return dtype_bytes(inp.dtype or inp.arch.dtype)
    return dtype_bytes(inp.kv_cache_dtype)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def kv_layout(inp: PlanInput) -> KvLayout:
    """The KV cache layout vLLM builds for ``inp`` on one rank (see the module docstring).
    Raises ``ValueError`` for a model without attention layers."""
    arch, tp = inp.arch, max(1, inp.tensor_parallel_size)
    kv_bytes = _kv_dtype_bytes(inp)
    if arch.mla:
        per_token_layer = arch.head_dim * kv_bytes
    else:
        heads = max(1, arch.kv_heads // tp)
        per_token_layer = 2 * heads * arch.head_dim * kv_bytes
    counts = {k: arch.count(k) for k in ("full", "sliding", "state")}
    if counts["full"] + counts["sliding"] == 0:
        raise ValueError(f"{arch.name}: no attention layers, no KV cache to plan")
    block = inp.block_size
    notes: list[str] = []
    state_bytes = 0
    page = block * per_token_layer
    if counts["state"] and arch.state is not None:
        state_bytes = arch.state.bytes_per_rank(tp, inp.dtype or arch.dtype)
        if page < state_bytes:
            block = _KERNEL_BLOCK * _cdiv(state_bytes, _KERNEL_BLOCK * per_token_layer)
            block = max(block, inp.block_size)
            page = block * per_token_layer
            notes.append(f"attention block size {block} tokens so a page holds a layer's state")
    present = [n for n in counts.values() if n]
    group_size = min(present)
    if max(present) < group_size * 1.5:
        group_size = max(present)
    groups = {k: _cdiv(n, group_size) for k, n in counts.items() if n}
    length = inp.max_model_len
    per_request = groups.get("full", 0) * _cdiv(length, block)
    if "sliding" in groups:
        window = arch.sliding_window or length
        held = min(window - 1 + inp.max_num_batched_tokens, length)
        per_request += groups["sliding"] * (_cdiv(held, block) + 1)
    # a state layer holds one block per sequence; two under prefix caching ("align" mode:
    # the running state and the last block-aligned checkpoint)
    per_request += groups.get("state", 0) * (2 if inp.prefix_caching else 1)
    attn_layers = counts["full"] + counts["sliding"]
    return KvLayout(
        block_size=block,
        page_bytes=page,
        group_size=group_size,
        groups=sum(groups.values()),
        blocks_per_request=per_request,
        bytes_per_token=per_token_layer * attn_layers,
        state_bytes_per_seq=state_bytes * counts["state"],
        notes=tuple(notes),
    )


def stage_layers(n: int, pp: int) -> list[int]:
    """Layers per pipeline stage as vLLM splits ``n`` layers over ``pp`` stages: ``n // pp``
    each, one more for each of the ``n % pp`` stages just before the last."""
    parts = [n // pp] * pp
    for i in range(2, n % pp + 2):
        parts[-i] += 1
    return parts


def _stages(inp: PlanInput) -> list[PlanInput]:
    pp = max(1, inp.pipeline_parallel_size)
    if pp == 1:
        return [inp]
    out, start = [], 0
    for count in stage_layers(len(inp.arch.layers), pp):
        arch = replace(inp.arch, layers=inp.arch.layers[start : start + count])
        out.append(replace(inp, arch=arch, pipeline_parallel_size=1))
        start += count
    return out


def activation_bytes(inp: PlanInput) -> int:
    """Estimated peak activation of vLLM's profile run on one rank, bytes.

    ``max(tokens x per-token, sampler)``: per batched token, ``ACT_HIDDEN_FACTOR`` hidden
    vectors plus the widest projection on the rank (dense MLP gate+up, or the fused-MoE
    caches ``top-k x (3 x expert width + hidden)``, or q/k/v), in the model dtype; the sampler
    pass holds ``max_num_seqs x vocab`` float32 logits about three times.
    """
    arch, tp = inp.arch, max(1, inp.tensor_parallel_size)
    size = dtype_bytes(inp.dtype or arch.dtype)
    dense = 2 * arch.intermediate_size // tp if not arch.num_experts else 0
    moe = arch.experts_per_token * (3 * arch.moe_intermediate_size // tp + arch.hidden_size)
    qkv = (arch.num_attention_heads + 2 * arch.kv_heads) * arch.head_dim // tp
    per_token = size * (ACT_HIDDEN_FACTOR * arch.hidden_size + max(dense, moe, qkv))
    forward = int(inp.max_num_batched_tokens * per_token)
    sampler = 3 * 4 * min(inp.max_num_seqs, inp.max_num_batched_tokens) * arch.vocab_size
    return max(forward, sampler)


def _memory(inp: PlanInput) -> Memory:
    if inp.gpu_memory_gib is None or inp.weights_gib is None:
        raise ValueError("need --kv-cache-gib, or --gpu-memory-gib and --weights-gib")
    tp = max(1, inp.tensor_parallel_size)
    requested = inp.gpu_memory_gib * inp.gpu_memory_utilization
    weights = inp.weights_gib / tp
    activation = activation_bytes(inp) / GIB
    overhead = OVERHEAD_GIB + (OVERHEAD_TP_GIB if tp > 1 else 0.0)
    kv = requested - weights - activation - overhead
    return Memory(inp.gpu_memory_gib, requested, weights, activation, overhead, kv)


def plan(inp: PlanInput) -> Plan:
    """Plan one setup: layout, KV blocks, the startup line's two figures, the fit checks.

    Raises ``ValueError`` when neither ``kv_cache_gib`` nor GPU memory and weights are given,
    or the model has no attention layers. A negative KV share plans zero blocks (a note says
    the model does not fit).
    """
    layout = kv_layout(inp)
    memory = None
    if inp.kv_cache_gib is not None:
        kv_gib = inp.kv_cache_gib
    else:
        memory = _memory(inp)
        kv_gib = memory.kv
    notes = list(layout.notes)
    kv_bytes = max(0, int(kv_gib * GIB))
    if kv_bytes == 0:
        notes.append("no memory left for the KV cache: the model does not fit")
    num_blocks = kv_bytes // layout.bytes_per_block
    stages = _stages(inp)
    if len(stages) > 1:  # the tightest stage sets the shared block count
        sizes = inp.stage_kv_gib or (kv_gib,) * len(stages)
        if len(sizes) != len(stages):
            raise ValueError(f"stage_kv_gib has {len(sizes)} sizes for {len(stages)} stages")
        per_stage = [
            (max(0, int(g * GIB)) // (lay := kv_layout(st)).bytes_per_block, lay, int(g * GIB))
            for st, g in zip(stages, sizes, strict=True)
        ]
        num_blocks, layout, kv_bytes = min(per_stage, key=lambda t: t[0])
    concurrency = num_blocks / layout.blocks_per_request
    if inp.kv_size_rule == "blocks":
        tokens = num_blocks // layout.groups * layout.block_size
    else:
        tokens = int(concurrency * inp.max_model_len)
    typical = None
    if inp.typical_request_tokens:
        small = replace(inp, max_model_len=inp.typical_request_tokens)
        typical = num_blocks / kv_layout(small).blocks_per_request
    return Plan(inp, layout, kv_bytes, num_blocks, concurrency, tokens, memory, typical, notes)


def windows_text(p: Plan) -> str:
    """One verdict sentence for a plan, e.g. ``"Int4: 7.6 windows >= 4 slots"``."""
    name = p.input.label or p.input.arch.name
    seqs = p.input.max_num_seqs
    head = f"{name}: {p.max_concurrency:.2f} windows"
    if p.seqs_fit:
        text = f"{head} >= {seqs} slots: {seqs} requests at the full window run without preemption"
    else:
        text = (
            f"{head} < {seqs} slots: {seqs} long requests would be preempted "
            f"(vLLM evicts and recomputes)"
        )
    if p.typical_concurrency is not None:
        fits = "fit" if p.typical_fit else "do not fit"
        text += (
            f"; {seqs} typical requests of {p.input.typical_request_tokens:,} tokens {fits} "
            f"(room for {p.typical_concurrency:.1f})"
        )
    return text + "."
