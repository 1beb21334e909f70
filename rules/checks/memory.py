"""Will it fit: the weights per GPU against the engine's memory fraction, the KV tokens left after them, and one
request at the context length.

`memory_figures(cfg, target)` computes the figures once (rules/knowledge/memory.py does the arithmetic); the
rules judge them, and `check` shows them ("kv capacity: bf16 0.41 M tokens; fp8_e4m3 0.82 M") and puts them
in its JSON.
"""

import dataclasses
import math
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from packaging.version import Version

from attn_preflight.rules.checks.common import auto_kv_dtype, backend_kv_dtype, gpu, sglang_release, vllm_release
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.jsontext import loads
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang.resolve import dsa_model, effective_page_size
from attn_preflight.rules.knowledge import engine_budget, memory
from attn_preflight.rules.knowledge.engine_budget import Budget
from attn_preflight.rules.knowledge.memory import GIB

if TYPE_CHECKING:  # the facts model is a live or saved target's; --gpu never loads it
    from attn_preflight.probe.facts import GpuDevice

MEMORY_HOOK = "sglang: python/sglang/srt/arg_groups/memory_hook.py, handle_gpu_memory_settings (mem_fraction_static)"
KV_BUDGET = (
    "sglang: python/sglang/srt/mem_cache/kv_cache_configurator.py:2990-3007 _profile_available_bytes (free memory "
    "after the weights less total x (1 - mem_fraction_static)); model_executor/pool_configurator.py _compute_cell_size"
)
VLLM_KV = (
    "vllm: vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory (0.33.0: v1/core/kv_cache_planning.py:50-86 "
    "_check_enough_kv_cache_memory); vllm/v1/kv_cache_interface.py"
)
# vLLM's memory checks: the same code in every wheel read from 0.10.0 (OLDEST_KNOWN).
VLLM_RELEASES = "vllm>=0.10.0"
# Every SGLang release from 0.5.1 sizes the pool the same way and raises the same error; the default fraction
# changes with the release (rules/knowledge/memory.py SGLANG_FRACTION_HEURISTICS).
SGLANG_RELEASES = "sglang>=0.5.1"
# --dtype as both engines spell it (vllm config/model.py _STR_DTYPE_TO_TORCH_DTYPE; sglang server_args --dtype
# choices): the width the weights and an "auto" KV cache are served in; "auto" keeps the checkpoint's.
SERVED_DTYPE_BYTES = {"float32": 4, "float": 4, "half": 2, "float16": 2, "fp16": 2, "bfloat16": 2, "bf16": 2}
# The TP sizes a fix offers (one node), then PP stages of TP 8.
_TP_CHOICES = (1, 2, 4, 8)
_MAX_PP = 16


class KvCapacity(NamedTuple):
    kv_dtype: str  # as the engine spells it ("auto" shown as the model dtype)
    label: str
    bytes_per_token: float
    tokens: int  # page-rounded, as the engine will log it
    formula: str  # how bytes_per_token is made: "8 kv heads x (128 + 128) x 2 B x 32 full layers"
    request_tokens: int  # the longest single request that fits (vLLM: sliding layers hold only their window)
    # The same under the larger reading of a term the install decides (engine_budget.Budget.low_terms)
    tokens_low: int = 0
    request_tokens_low: int = 0


class MemoryFigures(NamedTuple):
    engine: str
    gpu_memory_gib: float
    fraction: float
    fraction_origin: str  # "--mem-fraction-static", "SGLang's default for 80 GiB", ...
    tp: int
    pp: int
    attn_tp: int
    weights_gib: float  # per GPU, the busiest PP stage
    page_size: int
    capacities: tuple[KvCapacity, ...]  # the configured KV dtype first
    state_mib_per_request: float  # linear-attention / Mamba layers
    context_length: Optional[int]
    context_origin: str
    weight_format: str
    memory_origin: str = ""  # "" for the GPU's own memory; "the largest MIG slice of GPU 0" on a MIG GPU
    budget: Optional[Budget] = None  # what the engine subtracts before its KV cache (rules/knowledge/engine_budget.py)
    others_gib: float = 0.0  # memory other processes held on the GPU when it was probed (NVML used less the driver's)
    context_unread: Optional[str] = None  # config.json's max_position_embeddings, not an integer (ModelShape)
    moe_tp: int = 0  # the ranks vLLM splits the routed experts over (TP x DP); 0: the TP

    @property
    def budget_gib(self) -> float:
        return self.budget.budget_gib if self.budget else self.gpu_memory_gib * self.fraction

    @property
    def kv_gib(self) -> float:
        return self.budget.kv_gib if self.budget else self.budget_gib - self.weights_gib

    @property
    def kv_low_gib(self) -> float:
        return self.budget.kv_low_gib if self.budget else self.kv_gib

    @property
    def fits(self) -> bool:
        return self.kv_gib > 0

    @property
    def uncertain(self) -> bool:
        """The engine's figure depends on an install the target does not show (vLLM 0.10-0.11.0's sampler)."""
        return bool(self.budget and self.budget.low_terms)

    @property
    def has_kv(self) -> bool:
        """The weights fit and leave at least one token of KV cache."""
        return self.fits and self.configured.tokens > 0

    def request_tokens(self, capacity: Optional[KvCapacity] = None) -> int:
        """The tokens one request surely gets from `capacity` (the configured KV dtype's by default): the lower
        reading where the engine's figure depends on an install the target does not show."""
        capacity = self.configured if capacity is None else capacity
        return capacity.request_tokens_low if self.uncertain else capacity.request_tokens

    @property
    def context_needed(self) -> int:
        """The KV tokens one request at the context length takes, in whole pages; 0 without a context length."""
        if not self.context_length:
            return 0
        return math.ceil(self.context_length / self.page_size) * self.page_size

    def concurrency(self) -> Optional[float]:
        """Requests of the context length the KV cache holds at once (vLLM logs it as 'Maximum concurrency')."""
        if not self.context_length or not self.configured.tokens:
            return None
        return self.configured.tokens / self.context_length

    @property
    def configured(self) -> KvCapacity:
        return self.capacities[0]

    def capacity_line(self) -> str:
        """ "bf16 0.41 M tokens; fp8_e4m3 0.82 M" (per GPU group: every TP rank holds its share of each token)."""
        parts = [f"{c.label} {_millions(c.tokens)}" for c in self.capacities]
        parts[0] += " tokens"
        line = "; ".join(parts)
        concurrency = self.concurrency()
        if concurrency is not None:
            line += f", {concurrency:.2f}x requests of {self.context_length} tokens"
        if self.state_mib_per_request:
            line += f" (+ {self.state_mib_per_request:.0f} MiB of linear-attention state per request)"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "gpu_memory_gib": self.gpu_memory_gib,
            "gpu_memory_origin": self.memory_origin,
            "memory_fraction": self.fraction,
            "memory_fraction_origin": self.fraction_origin,
            "tp_size": self.tp,
            "pp_size": self.pp,
            "attention_tp_size": self.attn_tp,
            "weights_gib_per_gpu": round(self.weights_gib, 2),
            "weight_format": self.weight_format,
            "budget_gib_per_gpu": round(self.budget_gib, 2),
            "kv_gib_per_gpu": round(self.kv_gib, 2),
            "kv_gib_per_gpu_low": round(self.kv_low_gib, 2) if self.uncertain else None,
            "usable_gib_per_gpu": round(self.budget.usable_gib, 2) if self.budget else None,
            "usable_origin": self.budget.usable_origin if self.budget else None,
            "subtracted": [{"term": t.label, "gib": round(t.gib, 2), "source": t.source} for t in self.budget.terms]
            if self.budget
            else [],
            "assumption": self.budget.assumption if self.budget else "",
            # vLLM before 0.20.0: what runs after the KV cache is sized, outside the budget (vllm-memory-warmup)
            "after_kv_cache": [
                {"term": t.label, "gib": round(t.gib, 2), "source": t.source} for t in self.budget.warmup
            ]
            if self.budget
            else [],
            "after_kv_cache_room_gib": round(self.budget.room_gib, 2) if self.budget and self.budget.warmup else None,
            "max_concurrency": round(c, 2) if (c := self.concurrency()) is not None else None,
            "page_size": self.page_size,
            "kv_capacity": [
                {
                    "kv_cache_dtype": c.kv_dtype,
                    "label": c.label,
                    "bytes_per_token": c.bytes_per_token,
                    "formula": c.formula,
                    "tokens": c.tokens,
                    "tokens_low": c.tokens_low if self.uncertain else None,
                }
                for c in self.capacities
            ],
            "state_mib_per_request": round(self.state_mib_per_request, 1),
            "context_length": self.context_length,
            "context_origin": self.context_origin,
        }


def _millions(tokens: int) -> str:
    """0.41 M; below 0.1 M in thousands (15.9 k), where two decimals of a million say too little."""
    return f"{tokens / 1e6:.2f} M" if tokens >= 100_000 else f"{tokens / 1e3:.1f} k"


def attention_tp(cfg: Config) -> int:
    """Attention's TP size: --tp-size, divided by --dp-size under SGLang's --enable-dp-attention."""
    dp = cfg.flags.get("dp_size")
    if cfg.engine == "sglang" and cfg.flags.get("enable_dp_attention") and isinstance(dp, int) and dp > 1:
        return max(1, cfg.tp_size // dp)
    return cfg.tp_size


def uses_mtp_layers(cfg: Config) -> bool:
    """SGLang's NEXTN / EAGLE without a draft model runs the checkpoint's own MTP layers as the draft
    (arg_groups/speculative_hook.py:109-116 promotes NEXTN to EAGLE), loading their weights beside the model's."""
    shape = cfg.model.shape if cfg.model else None
    return bool(
        cfg.engine == "sglang"
        and shape is not None
        and shape.mtp_layers
        and (cfg.speculative_algorithm or "").upper() in ("NEXTN", "EAGLE")
        and not cfg.flags.get("speculative_draft_model_path")
    )


def _fraction(cfg: Config, target: Target, memory_gib: float, tp: int, pp: int) -> tuple[float, str]:
    if cfg.mem_fraction is not None:
        flag = "--mem-fraction-static" if cfg.engine == "sglang" else "--gpu-memory-utilization"
        return cfg.mem_fraction, flag
    if cfg.engine == "vllm":
        release = vllm_release(target)
        return memory.vllm_gpu_memory_utilization(release), f"vLLM {release}'s default --gpu-memory-utilization"
    release = sglang_release(target)
    flags = sglang_memory_flags(cfg)
    vision = sglang_vision_tower(cfg, release)
    dsa = dsa_model(cfg, target)
    fraction = memory.sglang_default_mem_fraction(
        memory_gib * 1024, tp, pp, cfg.mla, release, cfg.speculative_algorithm, flags, dsa, vision
    )
    given = ", ".join(
        [
            *(
                f"--{name.replace('_', '-')}{'' if value is True else f' {value}'}"
                for name, value in flags._asdict().items()
                if value not in (None, False) and name in _FRACTION_FLAGS
            ),
            *([f"prefill graphs up to {flags.prefill_graph_max_bs} tokens"] if flags.prefill_graph_max_bs else []),
            *(f"no {phase} CUDA graphs" for phase in sorted(flags.disabled_graph_phases)),
        ]
    )
    vision_note = f", x {memory.sglang_vision_factor(vision):.3f} for the vision tower" if vision else ""
    return fraction, (
        f"SGLang {release}'s default --mem-fraction-static for {memory_gib:g} GiB at TP {tp} x PP {pp}"
        + (f" with {given}" if given else "")
        + vision_note
    )


def sglang_vision_tower(cfg: Config, release: Optional[Version]) -> Optional[tuple[int, int]]:
    """The vision tower SGLang lowers its default fraction for: a config.json vision_config, on an architecture
    served multimodal by default or under --enable-multimodal."""
    model = cfg.model
    if model is None or model.shape is None or model.shape.vision_tower is None:
        return None
    served = cfg.flags.get("enable_multimodal") or memory.sglang_multimodal_by_default(model.architecture, release)
    return model.shape.vision_tower if served else None


# SglangMemoryFlags fields named as the flag is spelled.
_FRACTION_FLAGS = (
    "chunked_prefill_size",
    "max_prefill_tokens",
    "cuda_graph_max_bs",
    "max_running_requests",
    "disable_cuda_graph",
)


def sglang_memory_flags(cfg: Config) -> memory.SglangMemoryFlags:
    """The launch flags SGLang's default --mem-fraction-static reads, from the config."""

    def count(key: str) -> Optional[int]:
        value = cfg.flags.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return memory.SglangMemoryFlags(
        chunked_prefill_size=count("chunked_prefill_size"),
        max_prefill_tokens=count("max_prefill_tokens"),
        cuda_graph_max_bs=count("cuda_graph_max_bs"),
        max_running_requests=count("max_running_requests"),
        prefill_graph_max_bs=count("prefill_graph_max_bs"),
        disable_cuda_graph=bool(cfg.flags.get("disable_cuda_graph")),
        disabled_graph_phases=frozenset(
            phase
            for phase, dests in (
                ("prefill", ("disable_piecewise_cuda_graph", "disable_prefill_cuda_graph")),
                ("decode", ("disable_decode_cuda_graph",)),
            )
            if any(cfg.flags.get(dest) for dest in dests)
        ),
        context_length=cfg.context_length,
    )


def _kv_dtypes(cfg: Config, target: Target) -> list[str]:
    fp8 = "fp8_e4m3" if cfg.engine == "sglang" else "fp8"
    # the pool's dtype, then what auto gives (the checkpoint's quantized KV where the engine takes it), then FP8
    return list(dict.fromkeys([backend_kv_dtype(cfg, target), auto_kv_dtype(cfg, target), fp8]))


def _label(kv_dtype: str, model_dtype: Optional[str]) -> str:
    if kv_dtype != "auto":
        return kv_dtype
    return {"float16": "fp16", "float32": "fp32"}.get(model_dtype or "", "bf16")


def vllm_dp(cfg: Config) -> int:
    """The data-parallel ranks vLLM splits the routed experts over, with the TP ranks: its fused MoE layer flattens
    TP across DP (TP x DP ranks each hold a share of every expert, or with --enable-expert-parallel whole experts):
    vllm model_executor/layers/fused_moe/config.py FusedMoEParallelConfig.make, flatten_tp_across_dp (0.10.0
    :271-280; 0.33.0 flatten_tp_across_dp_and_pcp :1106-1114). 1 for SGLang."""
    dp = cfg.flags.get("dp_size") if cfg.engine == "vllm" else None
    return dp if isinstance(dp, int) and not isinstance(dp, bool) and dp > 1 else 1


def memory_figures(
    cfg: Config, target: Target, tp: Optional[int] = None, pp: Optional[int] = None, fraction: Optional[float] = None
):
    """The figures for the config (or for another TP / PP / memory fraction of it); None without a model shape or
    GPU memory.

    Computed once per (config, target, layout): the two memory rules, `check`'s rendering and the matrix read
    the same figures. The entry holds the target itself, so its id stays its own while the entry lives."""
    key = ("memory", id(target), tp or cfg.tp_size, pp or cfg.pp_size, fraction)
    if key not in cfg.per_target:
        cfg.per_target[key] = (target, _compute_figures(cfg, target, tp, pp, fraction))
    return cfg.per_target[key][1]


def _count(cfg: Config, key: str) -> Optional[int]:
    value = cfg.flags.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _flashinfer_installed(target: Target) -> Optional[bool]:
    """Whether the target has flashinfer-python (a live probe or a saved report knows; --gpu does not)."""
    if not target.software_known:
        return None
    return "flashinfer" in target.versions


def held_by_others_gib(target: Target) -> float:
    """GiB other processes held on the busiest visible GPU when the target was probed: NVML's used less the driver's
    own reservation (0.60 GiB on an idle H200, ../shared/research/h200-memory.md); 0 when not known or below
    0.25 GiB."""
    if target.facts is None:
        return 0.0
    used = [
        d.memory_used_mib
        for d in target.facts.gpus.devices
        if d.index in target.visible_gpus and d.memory_used_mib is not None
    ]
    held = max(used, default=0) / 1024 - engine_budget.DRIVER_RESERVE_GIB
    return round(held, 2) if held > 0.25 else 0.0


def _rope_cache_gib(cfg: Config, shape: memory.ModelShape) -> float:
    """The rotary cos/sin cache per GPU (engine_budget.rope_cache_gib): MLA rotates qk_rope_head_dim, others the
    head dim (a partial rotary factor would make it smaller: an upper bound); vLLM in the served dtype, SGLang in
    FP32."""
    rotary = shape.qk_rope_head_dim if shape.mla else shape.head_dim
    element = 4 if cfg.engine == "sglang" else shape.dtype_bytes
    return engine_budget.rope_cache_gib(shape.max_position_embeddings, rotary, element)


def _budget(cfg: Config, target: Target, memory_gib: float, fraction: float, weights: float, shape, tp, pp, attn_tp):
    rope = _rope_cache_gib(cfg, shape)
    if cfg.engine == "sglang":
        # SGLang sizes its pool from what is free at init: other processes' memory comes off it
        return engine_budget.sglang_budget(
            nvml_total_gib=memory_gib - held_by_others_gib(target),
            fraction=fraction,
            weights_gib=weights,
            tp=tp,
            pp=pp or 1,
            gpu_name=target.gpu_name or target.label,
            rope_cache_gib=rope,
        )
    experts = shape.num_experts and shape.moe_layers
    width = (shape.moe_intermediate_size * (shape.experts_per_token or 8) if experts else shape.intermediate_size) // tp
    return engine_budget.vllm_budget(
        release=vllm_release(target),
        nvml_total_gib=memory_gib,
        gpu_name=target.gpu_name or target.label,
        utilization=fraction,
        weights_gib=weights,
        vocab=shape.vocab_size,
        hidden=shape.hidden_size,
        mlp_width=width,
        tp=tp,
        pp=pp or 1,
        max_num_batched_tokens=_count(cfg, "max_num_batched_tokens"),
        max_num_seqs=_count(cfg, "max_num_seqs"),
        enforce_eager=bool(cfg.flags.get("enforce_eager")),
        flashinfer_installed=_flashinfer_installed(target),
        max_capture_size=_count(cfg, "max_cudagraph_capture_size"),
        speculative_tokens=_speculative_tokens(cfg),
        gpt_oss=bool(cfg.model and cfg.model.architecture == "GptOssForCausalLM"),
        layers=math.ceil(shape.num_layers / (pp or 1)),
        rope_cache_gib=rope,
    )


def _speculative_tokens(cfg: Config) -> int:
    """num_speculative_tokens of vLLM's --speculative-config JSON (each one more token per decode step that the
    CUDA graphs capture: config/vllm.py _set_cudagraph_sizes decode_query_len); 0 when absent or unread."""
    raw = cfg.flags.get("speculative_config")
    if not isinstance(raw, str):
        return 0
    try:
        value = loads(raw)
    except ValueError:
        return 0
    tokens = value.get("num_speculative_tokens") if isinstance(value, dict) else None
    return tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and 0 < tokens < 64 else 0


def _compute_figures(
    cfg: Config, target: Target, tp: Optional[int], pp: Optional[int], fraction_override: Optional[float] = None
) -> Optional[MemoryFigures]:
    shape = cfg.model.shape if cfg.model else None
    memory_gib, memory_origin = judged_memory(target)
    if shape is None or not memory_gib or unsized_quantization(cfg):
        return None
    quantization_flag = cfg.flags.get("quantization")
    shape = memory.with_quantization_flag(shape, quantization_flag if isinstance(quantization_flag, str) else None)
    model_dtype = cfg.model.dtype if cfg.model else None
    served = SERVED_DTYPE_BYTES.get(str(cfg.dtype).lower())
    if served:  # --dtype float32 / half / bfloat16: the weights and an auto KV cache in that width
        shape = shape._replace(dtype_bytes=served)
        model_dtype = (
            "float32" if served == 4 else ("float16" if cfg.dtype in ("half", "float16", "fp16") else model_dtype)
        )
    tp, pp = tp or cfg.tp_size, pp or cfg.pp_size
    attn_tp = max(1, attention_tp(cfg) * tp // cfg.tp_size)
    fraction, origin = _fraction(cfg, target, memory_gib, tp, pp)
    if fraction_override is not None:
        fraction, origin = fraction_override, f"{flag(cfg, 'fraction')} {fraction_override:g} (the fix)"
    weights = memory.weight_bytes_per_gpu(shape, tp, pp, attn_tp, moe_tp=tp * vllm_dp(cfg)) / GIB
    if uses_mtp_layers(cfg):
        weights += memory.mtp_bytes_per_gpu(shape, tp) / GIB
    quantization = shape.quantization
    if cfg.engine == "vllm" and quantization is not None and quantization.method == "mxfp4" and shape.num_experts:
        weights += engine_budget.vllm_mxfp4_padding_gib(
            hidden=shape.hidden_size,
            expert_intermediate=shape.moe_intermediate_size,
            experts=shape.num_experts,
            moe_layers=shape.moe_layers,
            layers=shape.num_layers,
            bytes_per_weight=quantization.bytes_per_weight,
            tp=tp,
            pp=pp,
            cc=target.cc,
        )
    budget = _budget(cfg, target, memory_gib, fraction, weights, shape, tp, pp, attn_tp)
    kv_bytes = budget.kv_gib * GIB
    kv_low_bytes = budget.kv_low_gib * GIB
    page = (effective_page_size(cfg, target) or 1) if cfg.engine == "sglang" else (cfg.page_size or 16)
    capacities = []
    state = 0.0
    # vLLM keys the indexer on index_topk alone (deepseek_v2.py is_v32), SGLang on its DSA architectures too
    indexer = dsa_model(cfg, target) if cfg.engine == "sglang" else bool(cfg.model and cfg.model.dsa)
    for kv_dtype in _kv_dtypes(cfg, target):
        if kv_dtype != "auto" and kv_dtype not in memory.KV_ELEMENT_BYTES:
            continue  # a dtype whose layout is not modelled (e.g. fp4 recipes): not guessed
        cost = memory.kv_cost(shape, cfg.engine, kv_dtype, attn_tp, pp, indexer)
        state = cost.state_bytes_per_request

        def tokens_of(kv: float, cost=cost) -> int:
            return int(max(kv, 0) // cost.bytes_per_token) // page * page if cost.bytes_per_token else 0

        def request_of(kv: float, tokens: int, cost=cost) -> int:
            return _longest_request(cost, kv, page) if cfg.engine == "vllm" else tokens

        tokens, tokens_low = tokens_of(kv_bytes), tokens_of(kv_low_bytes)
        capacities.append(
            KvCapacity(
                kv_dtype,
                _label(kv_dtype, model_dtype),
                cost.bytes_per_token,
                tokens,
                cost.formula,
                request_of(kv_bytes, tokens),
                tokens_low,
                request_of(kv_low_bytes, tokens_low),
            )
        )
    if not capacities:
        return None
    context = cfg.context_length or shape.max_position_embeddings
    context_origin = (
        ("--context-length" if cfg.engine == "sglang" else "--max-model-len")
        if cfg.context_length
        else ("the model's max_position_embeddings" if context else "")
    )
    quantization = shape.quantization
    weight_format = quantization.method if quantization else f"{shape.dtype_bytes * 8}-bit"
    return MemoryFigures(
        engine=cfg.engine,
        gpu_memory_gib=memory_gib,
        memory_origin=memory_origin,
        fraction=fraction,
        fraction_origin=origin,
        tp=tp,
        pp=pp,
        attn_tp=attn_tp,
        moe_tp=tp * vllm_dp(cfg),
        weights_gib=weights,
        page_size=page,
        capacities=tuple(capacities),
        state_mib_per_request=state / (1 << 20),
        context_length=context,
        context_origin=context_origin,
        weight_format=weight_format + (f" + {shape.mtp_layers} MTP layer(s)" if uses_mtp_layers(cfg) else ""),
        budget=budget,
        others_gib=held_by_others_gib(target),
        context_unread=None if cfg.context_length else shape.max_position_embeddings_unread,
    )


def _longest_request(cost: memory.KvCost, kv_bytes: float, page: int) -> int:
    """The most tokens one request can hold in `kv_bytes`: past the window, a token costs its full layers only."""
    if kv_bytes <= 0 or not cost.bytes_per_token:
        return 0
    tokens = int(kv_bytes // cost.bytes_per_token)
    if cost.window and tokens > cost.window and cost.full_bytes_per_token:
        tokens = int((kv_bytes - cost.sliding_bytes_per_token * cost.window) // cost.full_bytes_per_token)
    elif cost.window and not cost.full_bytes_per_token:
        tokens = 1 << 40  # every layer sliding: one request never outgrows its window
    return tokens // page * page


def flag(cfg: Config, name: str) -> str:
    """The engine's spelling of a layout or memory flag (name: tp, pp, context, fraction)."""
    flags = {
        "sglang": {
            "tp": "--tp-size",
            "pp": "--pp-size",
            "context": "--context-length",
            "fraction": "--mem-fraction-static",
        },
        "vllm": {
            "tp": "--tensor-parallel-size",
            "pp": "--pipeline-parallel-size",
            "context": "--max-model-len",
            "fraction": "--gpu-memory-utilization",
        },
    }
    return flags[cfg.engine][name]


def _smallest_fitting_layout(cfg: Config, target: Target) -> Optional[tuple[int, int]]:
    """The smallest TP (up to 8), else PP of TP 8 (up to 16 stages), whose weights fit. For vLLM, among the TP
    sizes, the smallest whose KV cache also holds one request at the configured context comes first: vLLM refuses
    to start without it (memory-kv-context fails), so a TP that only moves the failure there is no fix. SGLang
    shortens the context instead (a warning), and more GPUs are never proposed for the context alone."""
    tp_layouts = [(tp, cfg.pp_size) for tp in _TP_CHOICES if tp > cfg.tp_size]
    first = None
    for tp, pp in tp_layouts:
        figures = memory_figures(cfg, target, tp, pp)
        if figures is None or not figures.has_kv:
            continue
        if cfg.engine != "vllm" or not figures.context_length:
            return tp, pp
        first = first or (tp, pp)
        if figures.request_tokens() >= figures.context_needed:
            return tp, pp
    if first:
        return first
    for tp, pp in [(max(8, cfg.tp_size), pp) for pp in range(cfg.pp_size + 1, _MAX_PP + 1)]:
        figures = memory_figures(cfg, target, tp, pp)
        if figures is not None and figures.has_kv:
            return tp, pp
    return None


def _layout_fix(cfg: Config, layout: tuple[int, int]) -> str:
    tp, pp = layout
    fix = f"{flag(cfg, 'tp')} {tp}"
    return fix + (f" {flag(cfg, 'pp')} {pp}" if pp != cfg.pp_size else "")


def _experts_over(figures: MemoryFigures) -> str:
    return f" (the experts over TP x DP = {figures.moe_tp} GPUs)" if figures.moe_tp > figures.tp else ""


def _describe(figures: MemoryFigures) -> str:
    head = (
        f"{figures.weights_gib:.1f} GiB of {figures.weight_format} weights per GPU at TP {figures.tp} x PP "
        f"{figures.pp}{_experts_over(figures)}; {figures.gpu_memory_gib:g} GiB{f' ({figures.memory_origin})' if figures.memory_origin else ''}"
    )
    budget = figures.budget
    if budget is None:
        return f"{head} x {figures.fraction:.3f} ({figures.fraction_origin}) = {figures.budget_gib:.1f} GiB"
    others = "".join(f" - {t.gib:.2f} ({t.label})" for t in budget.terms if t.label != "weights")
    return (
        f"{head}; {budget.usable_gib:.2f} GiB usable ({budget.usable_origin}) x {figures.fraction:.3f} "
        f"({figures.fraction_origin}) = {figures.budget_gib:.1f} GiB - {figures.weights_gib:.1f} (weights){others} "
        f"= {figures.kv_gib:.2f} GiB of KV cache"
        + (f" ({figures.kv_low_gib:.2f} GiB unless {budget.assumption})" if figures.uncertain else "")
    )


# The utilization a vLLM fix may propose at most (1.0 leaves nothing for the run-time peaks vLLM does not profile).
_MAX_UTILIZATION = 0.95


def _fraction_fix(cfg: Config, target: Target, figures: MemoryFigures, needed_tokens: Optional[int]):
    """The smallest --gpu-memory-utilization / --mem-fraction-static (to 0.95) under which the KV cache holds
    `needed_tokens` (at least one page when None), re-checked by recomputing the figures at it; None if none.
    The capacity grows with the fraction, so the search halves the range."""
    budget = figures.budget
    if budget is None:
        return None
    if budget.usable_gib * _MAX_UTILIZATION <= sum(t.gib for t in budget.terms):
        return None  # not even the largest fraction leaves room

    def holds(hundredths: int) -> bool:
        return _holds_request(memory_figures(cfg, target, fraction=hundredths / 100), needed_tokens)

    low, high = math.floor(figures.fraction * 100) + 1, int(_MAX_UTILIZATION * 100)
    if low > high or not holds(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return f"{flag(cfg, 'fraction')} {low / 100:g}"


WEIGHTS_DOCS = """Checks that one GPU's share of the weights (TP-sharded, the busiest PP stage) fits in its memory times
the engine's memory fraction, leaving room for at least one page of KV cache.

The fraction is SGLang's --mem-fraction-static or the default the target's sglang release computes per GPU
memory and launch flags ((memory - reserved) / memory; from 0.5.3 reserved = 512 MiB + 1.5 x max(the chunked
prefill size, or --max-prefill-tokens when --chunked-prefill-size is -1, 2048) + 2 x the decode CUDA-graph max
batch + TP x PP / 8 GiB, from 0.5.10 plus the prefill CUDA graphs (8 MiB per capture size up to the chunk, 1.5
GiB for MLA), at least 10 GiB above 60 GiB, to 0.5.13 plus the speculative reserve; before 0.5.3 a fixed
reserve per memory tier whatever the flags; the tiers moved in 0.5.4.post3 and 0.5.20: sglang 0.5.3
server_args.py:566-675, 0.5.23 arg_groups/memory_hook.py:89-399). --chunked-prefill-size and
--cuda-graph-max-bs(-decode) replace the tier's defaults; from 0.5.22 --max-running-requests lowers a default
decode max batch to it (memory_hook.py:182-188); from 0.5.14 --disable-cuda-graph drops the prefill graphs'
reserve and from 0.5.15 the decode graphs' too (0.5.23 cuda_graph_hook.py:55-57, memory_hook.py:357-399); the
prefill graphs are off under PP > 1 except in 0.5.15-0.5.18 (0.5.23 cuda_graph_hook.py:150-161), for MLA
models other than DSA ones in 0.5.15-0.5.17, under speculative decoding in 0.5.10, and their capture sizes stop
at --context-length in 0.5.13-0.5.16 (rules/knowledge/memory.py SGLANG_FRACTION_HEURISTICS). A model with a
vision_config that SGLang serves multimodal (all but Gemma 3, Llama 4, Step3-VL and, from 0.5.16, Inkling, which
need --enable-multimodal: configs/model_config.py mm_disabled_models) has the fraction multiplied by 0.95 x a
factor of its tower's size clamped to 0.8-1.05 (0.5.23 arg_groups/memory_hook.py:417-462). Or vLLM's
--gpu-memory-utilization (default 0.92 in vllm/config/cache.py from 0.20.0 to 0.33.0, 0.9 before). SGLang sizes the KV pool as the free memory after loading less total x (1 - fraction)
(mem_cache/kv_cache_configurator.py:2990-3007); at zero tokens MemoryPoolConfig raises 'Not enough memory'
(model_executor/pool_configurator.py:94-100), and vLLM raises 'No available memory for the cache blocks'
(vllm 0.33.0 v1/core/kv_cache_planning.py:56-63). When the weights alone exceed the GPU the load itself runs
out of memory. On a GPU in MIG mode a process has one slice: the rules judge the largest slice the probe
recorded (an upper bound of the one the process is given), and answer unknown without the slices' sizes.

The weight bytes are an estimate from config.json (rules/knowledge/memory.py): parameter counts within 2% of
the published ones for 36 models (Kimi K2: to its published 1T); quantized layers at their packed size plus
scales (`--quantization` names the checkpoint's format when given; a method not sized here, with no
quantization_config to read, leaves the rules unknown); the vision tower of multimodal models, norms and biases not counted;
the engines' own overheads as rules/knowledge/engine_budget.py models them. Near the limit (within ~5%) the
verdict can go either way; well past it, it cannot. The fix is the smallest TP (up to 8) or, past one node,
PP stages of TP 8 that fit."""
WEIGHTS_TITLE = "The weights fit in GPU memory x the engine's memory fraction"
WEIGHTS_FIX = "Shard wider (--tp-size / --pp-size), quantize, or use a GPU with more memory"


def _online_fp8_load_gib(cfg: Config, figures: MemoryFigures) -> Optional[float]:
    """GiB per GPU SGLang's online FP8 holds while loading (the checkpoint-dtype weights), when --quantization fp8
    quantizes a checkpoint that is not FP8 (its config.json gives no quantization_config); else None."""
    shape = cfg.model.shape if cfg.model else None
    if cfg.engine != "sglang" or shape is None or shape.quantization is not None or shape.dtype_bytes < 2:
        return None
    if str(cfg.flags.get("quantization") or "").lower() != "fp8":
        return None
    return memory.weight_bytes_per_gpu(shape, figures.tp, figures.pp, figures.attn_tp) / GIB


def _online_fp8_fits(cfg: Config, target: Target, layout: tuple[int, int]) -> bool:
    wider = memory_figures(cfg, target, *layout)
    online = _online_fp8_load_gib(cfg, wider) if wider is not None else None
    return bool(wider and wider.budget and (online is None or online <= wider.budget.usable_gib))


def unsized_quantization(cfg: Config) -> Optional[str]:
    """A --quantization method that says the checkpoint is quantized in a format the estimate cannot size
    (compressed-tensors, gguf ...) while config.json carries no quantization_config to read it from: counting
    its weights at the checkpoint dtype would judge a 4-bit checkpoint as a 16-bit one."""
    method = cfg.flags.get("quantization")
    shape = cfg.model.shape if cfg.model else None
    if not isinstance(method, str) or shape is None or shape.quantization is not None:
        return None
    return None if memory.quantization_from_flag(method) else method


def _mig_gpus(target: Target) -> "list[GpuDevice]":
    """The visible GPUs in MIG mode, from a probe or a saved report."""
    if target.facts is None:
        return []
    visible = set(target.visible_gpus)  # a set: a report may list thousands of GPUs
    return [d for d in target.facts.gpus.devices if d.index in visible and d.mig_mode == "enabled"]


def judged_memory(target: Target) -> tuple[Optional[float], str]:
    """(GiB one engine process has, where that figure comes from). On MIG a process has one slice, not the GPU
    (NVIDIA MIG user guide: each instance has its own memory slices; NVML's GPU total is the whole GPU): the
    largest slice the facts show, an upper bound of whichever the process is given; None when MIG is on and
    the facts do not give the slices' memory (a report of an older probe)."""
    mig = _mig_gpus(target)
    if not mig:
        return target.memory_gib, ""
    slices = [(mib, d.index) for d in mig for mib in d.mig_memory_mib or []]
    if not slices:
        return None, ""
    mib, index = max(slices, key=lambda s: (s[0], -s[1]))  # the first GPU holding the largest slice
    return round(mib / 1024, 1), f"the largest MIG slice of GPU {index}"


def _figures_or_unknown(cfg, target, estimate: str):
    """(the memory figures, None), or (None, the unknown outcome saying which fact is missing)."""
    if target.memory_gib is None:
        return None, unknown(f"the memory of {gpu(target) if target.cc else target.label} is unknown")
    if judged_memory(target)[0] is None:
        return None, unknown("MIG mode: the memory of its slices is not in the facts (probe again to record it)")
    method = unsized_quantization(cfg)
    if method:
        return None, unknown(f"--quantization {method}: a weight format the {estimate} estimate does not size")
    figures = memory_figures(cfg, target)
    if figures is None:
        return None, unknown(f"{cfg.model.name}: config.json lacks the sizes the {estimate} estimate needs")
    return figures, None


@rule(
    id="memory-weights-fit",
    title=WEIGHTS_TITLE,
    engine="sglang",
    versions=SGLANG_RELEASES,
    stage="load",
    needs_model=True,
    prevents="Not enough memory. Please try to increase --mem-fraction-static.",
    source=f"{MEMORY_HOOK}; {KV_BUDGET}; rules/knowledge/memory.py",
    docs=WEIGHTS_DOCS,
    fix_title=WEIGHTS_FIX,
)
@rule(
    id="vllm-memory-weights-fit",
    title=WEIGHTS_TITLE,
    engine="vllm",
    versions=VLLM_RELEASES,
    stage="load",
    needs_model=True,
    prevents="No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
    "the engine",
    source=f"{VLLM_KV}; vllm: vllm/config/cache.py:215 gpu_memory_utilization; rules/knowledge/memory.py",
    docs=WEIGHTS_DOCS,
    fix_title=WEIGHTS_FIX,
)
def memory_weights_fit(cfg, target):
    figures, missing = _figures_or_unknown(cfg, target, "weight")
    if missing:
        return missing
    found = _describe(figures)
    required = "the weights and what the engine profiles below the budget, with room for KV cache"
    online = _online_fp8_load_gib(cfg, figures)
    if online is not None and figures.budget is not None and online > figures.budget.usable_gib:
        # sglang srt/layers/quantization/fp8.py (0.5.23 :654-659): without an FP8 checkpoint the weights are created
        # in the checkpoint dtype and quantized after loading, so the load holds them at full width first
        layout = _smallest_fitting_layout(cfg, target)
        return failed(
            f"--quantization fp8 on a checkpoint whose config.json has no quantization_config: SGLang creates the "
            f"{online:.1f} GiB of {8 * (cfg.model.shape.dtype_bytes if cfg.model and cfg.model.shape else 2)}-bit "
            f"weights per GPU first and quantizes them after loading, in {figures.budget.usable_gib:.1f} GiB free "
            f"at init",
            "the checkpoint-dtype weights within the memory free at init (an FP8 checkpoint is loaded at FP8)",
            [_layout_fix(cfg, layout)] if layout and _online_fp8_fits(cfg, target, layout) else [],
        )
    if cfg.engine == "vllm" and figures.others_gib and figures.budget is not None:
        # vllm v1/worker/gpu_worker.py init_device (0.10.0 :164-176, 0.11.2 :251): the free memory at start-up must
        # hold total x gpu_memory_utilization
        free = figures.budget.usable_gib - engine_budget.CUDA_CONTEXT_GIB - figures.others_gib
        if free < figures.budget_gib:
            fitting = math.floor(free / figures.budget.usable_gib * 100) / 100
            refit = memory_figures(cfg, target, fraction=fitting) if fitting > 0 else None
            fitting = fitting if refit is not None and refit.has_kv else 0
            return failed(
                f"other processes hold {figures.others_gib:.1f} GiB of the GPU: {free:.1f} GiB free at start-up "
                f"for {figures.budget_gib:.1f} GiB requested ({figures.budget.usable_gib:.1f} x {figures.fraction:.2f})",
                "the free memory at start-up at least total x --gpu-memory-utilization",
                [f"--gpu-memory-utilization {fitting:g}"] if fitting > 0 else [],
            )
    fits = figures.has_kv
    if fits and not (figures.uncertain and figures.configured.tokens_low <= 0):
        return passed(found, required)
    fraction_fix = _fraction_fix(cfg, target, figures, None)
    if fits:  # fits only under the lighter reading of a term the install decides
        return warned(found, required, [fraction_fix] if fraction_fix else [])
    fixes = [fraction_fix] if fraction_fix else []
    layout = _smallest_fitting_layout(cfg, target)
    if layout is None:
        if fixes:
            return failed(found, required, fixes)
        return failed(found, required, reason=f"no TP up to 8 x PP up to {_MAX_PP} of {gpu(target)} holds them")
    tp, pp = layout
    if target.gpu_count_known and tp * pp > target.gpu_count:  # the layout's fix would fail the GPU count
        if fixes:
            return failed(found, required, fixes)
        return failed(
            found,
            required,
            reason=f"they fit from TP {tp} x PP {pp}: {tp * pp} GPUs, more than the {target.gpu_count} of the target",
        )
    return failed(found, required, [*fixes, _layout_fix(cfg, layout)])


KV_DOCS = """Checks that the KV tokens left after the weights hold one request at --context-length / --max-model-len
(or the model's max_position_embeddings), and reports the capacity per KV dtype.

Bytes per token per GPU: MHA/GQA layers kv heads per attention-TP rank (at least one) x (head_dim +
v_head_dim) x the dtype's bytes (sglang model_executor/pool_configurator.py:491-497; vllm
v1/kv_cache_interface.py:586-594 page_size_bytes / block_size); MLA layers (kv_lora_rank + qk_rope_head_dim) x
bytes, one latent not divided by TP (pool_configurator.py:379-385); MXFP8 adds a scale byte per 32 elements
(:524-528), FP4 a scale byte per 16 (:386-396); SGLang's DSA models (DeepSeek-V3.2 ...) add the indexer's
index_head_dim + index_head_dim / 128 x 4 bytes per layer (132; from 0.5.3.post3, 0.5.23 pool_configurator.py
:399-408, :560-636), and so do vLLM's (0.33.0 model_executor/models/deepseek_v2.py:658-666), whose fp8_ds_mla
takes 656 bytes per layer (model_executor/layers/attention/mla_attention.py:1383-1388). Sliding-window layers: SGLang's hybrid-SWA models (gpt-oss,
Llama 4's chunked layers; configs/model_config.py:2651-2711) count them at swa_full_tokens_ratio 0.8
(pool_configurator.py:797-802), other models as full layers; vLLM counts them whole per token but one request
holds only its window of them. Linear-attention layers hold a state per request instead. Tokens = (GPU
memory x fraction - weights) / bytes per token, rounded down to the page size.

SGLang starts anyway and caps a request at min(context length, KV capacity) - 1 tokens, rejecting longer
inputs (managers/tp_worker.py:568-572, managers/utils.py:282-285): a warning. vLLM refuses to start: a
failure.

The capacity is the one the engine will log ('GPU KV cache size: N tokens', 'KV Cache is allocated. #tokens: N'):
what each engine subtracts first is modelled per release (rules/knowledge/engine_budget.py). vLLM: torch's total
(NVML's less 0.60 GiB) x gpu_memory_utilization less the weights, its profiled peak (the sampler warm-up of
min(max_num_batched_tokens, max_num_seqs) x vocabulary logits: 38 B an element on the PyTorch-native sampler,
12.4 on FlashInfer's; or the dummy forward), non-torch memory, the rotary cos/sin cache (max_position_embeddings
x rotary dim, one per GPU) and from 0.20.0 its CUDA graph estimate (before it, vllm-memory-warmup). SGLang: the
memory free at init (NVML's less the driver's and the context's 1.11 GiB, and distributed init's ~1.6 GiB at TP > 1
on an NVSwitch node; a GB10's 121.69 GiB of unified memory as CUDA reports it) x mem_fraction_static less the
weights and its FP32 rotary cache. Where the release leaves the sampler to the install (vLLM 0.10-0.11.0 with or
without flashinfer-python) and the target does not show it, a context that fits only under FlashInfer's reading is
a warning. Measured against 56 real engine logs (tests/fixtures/memory_logs.json, bench/memory_logs.py): the work
set's KV figures median 0.4% and 31 of 33 within 10% of the logged ones. The fixes (largest context, smallest fraction, smallest TP) are re-checked by recomputing
the figures with them."""
KV_TITLE = "One request at the context length fits in the KV cache left after the weights"
# The shortest context a shorter-context fix offers: below it the server starts but a chat request (system
# prompt, history, answer) does not fit, so the fix would leave the config useless (issue 23).
MIN_USEFUL_CONTEXT = 4096

KV_FIX = "Use an FP8 KV cache, a shorter --context-length, or shard wider"


@rule(
    id="memory-kv-context",
    title=KV_TITLE,
    engine="sglang",
    versions=SGLANG_RELEASES,
    stage="load",
    needs_model=True,
    prevents="Input length (N tokens) exceeds the maximum allowed length (M tokens). Use a shorter input or enable "
    "--allow-auto-truncate.",
    references=(
        "sglang: python/sglang/srt/managers/tp_worker.py:568-572 max_req_len = min(context_len - 1, kv_capacity - 1)",
    ),
    source=f"{KV_BUDGET}; rules/knowledge/memory.py kv_cost",
    docs=KV_DOCS,
    fix_title=KV_FIX,
)
@rule(
    id="vllm-memory-kv-context",
    title=KV_TITLE,
    engine="vllm",
    versions=VLLM_RELEASES,
    stage="load",
    needs_model=True,
    prevents="To serve at least one request with the model's max seq len (...), (... GiB KV cache is needed, which is "
    "larger than the available KV cache memory",
    source=f"{VLLM_KV}; rules/knowledge/memory.py kv_cost",
    docs=KV_DOCS,
    fix_title=KV_FIX,
)
def memory_kv_context(cfg, target):
    figures, missing = _figures_or_unknown(cfg, target, "KV")
    if missing:
        return missing
    if not figures.has_kv:
        return skipped("the weights leave no KV cache (memory-weights-fit)")
    capacity = f"kv capacity: {figures.capacity_line()}"
    if figures.uncertain:
        capacity += f" ({_millions(figures.configured.tokens_low)} unless {figures.budget.assumption})"
    if not figures.context_length and figures.context_unread is not None:
        return unknown(
            f"config.json's max_position_embeddings is {figures.context_unread}, not an integer: the context one "
            f"request needs is unknown (give {flag(cfg, 'context')}); {capacity}"
        )
    if not figures.context_length:
        return passed(capacity, reason="no context length given and none in config.json")
    needed = figures.context_needed
    configured = figures.configured
    found = (
        f"one request at {figures.context_length} tokens ({figures.context_origin}); {capacity}; "
        f"{configured.bytes_per_token:g} B per token per GPU = {configured.formula}"
    )
    required = f"{needed} tokens of KV cache at --kv-cache-dtype {configured.kv_dtype}"
    sure = figures.request_tokens()
    if sure >= needed:
        return passed(found, required)
    fix = [f"--kv-cache-dtype {c.kv_dtype}" for c in figures.capacities[1:] if figures.request_tokens(c) >= needed]
    if sure >= MIN_USEFUL_CONTEXT:  # the longest that fits, as the engine would estimate it; 1,189 serves nothing
        fix.append(f"{flag(cfg, 'context')} {sure}")
    fraction_fix = _fraction_fix(cfg, target, figures, needed)
    if fraction_fix:
        fix.append(fraction_fix)
    layout = next(
        (
            (tp, cfg.pp_size)
            for tp in _TP_CHOICES
            if tp > cfg.tp_size
            and (wider := memory_figures(cfg, target, tp)) is not None
            and wider.fits
            and wider.request_tokens() >= needed
        ),
        None,
    )
    if layout:
        fix.append(_layout_fix(cfg, layout))
    if configured.request_tokens >= needed:  # only under the lighter reading of a term the install decides
        return warned(found, required, fix)
    outcome = failed if cfg.engine == "vllm" else warned
    return outcome(found, required, fix)


WARMUP_DOCS = """Checks that what vLLM runs after sizing its KV cache fits in what --gpu-memory-utilization leaves
outside the budget: before 0.20.0 the CUDA graphs are captured there, unbudgeted, and then the sampler is warmed
up with min(max_num_seqs, max_num_batched_tokens) dummy requests.

vLLM sizes the KV cache as torch's total x gpu_memory_utilization less the weights, the profiled peak and
non-torch memory (v1/worker/gpu_worker.py determine_available_memory), then captures the CUDA graphs and warms
the sampler up (compile_or_warm_up_model, 0.19.0 :550-680). Up to 0.19.x the CUDA graph memory is estimated
(gpu_model_runner.py profile_cudagraph_memory, 0.19.0 :5862-5961) but not subtracted unless
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1; 0.20.0 makes that the default (envs.py). The graphs and the warm-up
then live in total x (1 - utilization) less the CUDA context, plus whatever of the freed profiling peak
PyTorch's allocator hands back. The check warns when the graphs (rules/knowledge/engine_budget.py
vllm_cudagraph_gib, vLLM's own estimate per capture size and layer) and the sampler's logits (the profiled bytes
per element) exceed that room: the start then depends on the allocator reusing the peak's blocks. Two gpt-oss-20b
starts at 0.95 on an H100 died this way with 1.6-1.8 GiB reserved but unallocated (llm-d-planner
accuracy/results/v0.19.0/logs, '... FAILED.log'); Qwen3-32B at TP 2 and 0.95 on vLLM 0.11.0 too (llm-d/llm-d#787);
other launches in the same margin started (Gemma-2, Llama-4-Scout, Qwen2.5-72B at 0.95): a warning, never a
failure. The fixes (a lower --gpu-memory-utilization that still holds the context, a smaller --max-num-seqs) are
re-checked by recomputing the figures with them."""


@rule(
    id="vllm-memory-warmup",
    title="The CUDA graphs and the sampler warm-up fit beside the KV cache",
    engine="vllm",
    versions="vllm>=0.10.0,<0.20.0",
    stage="load",
    needs_model=True,
    prevents="RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy requests. Please "
    "try lowering `max_num_seqs` or `gpu_memory_utilization` when initializing the engine.",
    source="vllm: v1/worker/gpu_worker.py compile_or_warm_up_model; v1/worker/gpu_model_runner.py "
    "profile_cudagraph_memory, _dummy_sampler_run; envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; "
    "rules/knowledge/engine_budget.py",
    docs=WARMUP_DOCS,
    fix_title="Lower --gpu-memory-utilization or --max-num-seqs",
)
def vllm_memory_warmup(cfg, target):
    figures, missing = _figures_or_unknown(cfg, target, "KV")
    if missing:
        return missing
    budget = figures.budget
    if not figures.has_kv or budget is None:
        return skipped("the weights leave no KV cache (vllm-memory-weights-fit)")
    if not budget.warmup:
        reason = "--enforce-eager: no CUDA graphs" if cfg.flags.get("enforce_eager") else "no CUDA graphs to capture"
        return passed("", reason=reason)
    parts = " + ".join(f"{t.gib:.2f} ({t.label})" for t in budget.warmup)
    found = (
        f"after the KV cache is sized, outside the budget: {parts} = {budget.warmup_gib:.2f} GiB in the "
        f"{budget.room_gib:.2f} GiB that {budget.usable_gib:.2f} x (1 - {figures.fraction:g}) less the CUDA context "
        "leaves"
    )
    required = "the CUDA graphs and the sampler warm-up within it (or the allocator reusing the freed profiling peak)"
    if not budget.warmup_short:
        return passed(found, required)
    needed = figures.context_needed
    fixes = []
    for hundredths in range(math.ceil(figures.fraction * 100) - 1, 49, -1):
        if _warmup_fits(memory_figures(cfg, target, fraction=hundredths / 100), needed):
            fixes.append(f"{flag(cfg, 'fraction')} {hundredths / 100:g}")
            break
    gpu_name = target.gpu_name or target.label
    seqs = (
        _count(cfg, "max_num_seqs")
        or engine_budget.vllm_batch_defaults(vllm_release(target), budget.usable_gib, gpu_name)[1]
    )
    for fewer in (512, 256, 128, 64, 32, 16, 8):
        if fewer < seqs:
            fewer_cfg = dataclasses.replace(cfg, flags={**cfg.flags, "max_num_seqs": fewer})
            if _warmup_fits(memory_figures(fewer_cfg, target), needed):
                fixes.append(f"--max-num-seqs {fewer}")
                break
    return warned(found, required, fixes)


def _holds_request(figures: Optional[MemoryFigures], needed: Optional[int]) -> bool:
    """The figures fit and their KV cache holds one request of `needed` tokens (a page when None or 0)."""
    if figures is None or not figures.fits:
        return False
    tokens = figures.request_tokens()
    return tokens > 0 and (not needed or tokens >= needed)


def _warmup_fits(figures: Optional[MemoryFigures], needed: int) -> bool:
    """The figures leave KV cache for one request of `needed` tokens (a page when 0) and room for the warm-up."""
    if figures is None or (figures.budget is not None and figures.budget.warmup_short):
        return False
    return _holds_request(figures, needed)
