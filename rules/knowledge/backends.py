"""Every SGLang `--attention-backend` value with its declared capabilities, each with its source.

This is data: rules read it (which archs a backend runs on, MLA/MHA, KV dtypes, forced page sizes) and
`check` offers alternatives from it. Archs are compute-capability majors as SGLang's platform probes
test them (major only: SM103 counts as SM100, SM121 as SM120). Sources are sglang 0.5.23 paths.

vLLM's backends live in rules/knowledge/vllm_backends.py as `BACKENDS: dict[str, BackendInfo]` (same
dataclass); `choices(engine)` is the one way to list either engine's backends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"
CHOICES = "sglang: python/sglang/srt/arg_groups/choices.py, ATTENTION_BACKEND_CHOICES"
DOCS = "sglang: docs/advanced_features/attention_backend.md (support matrix)"
OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"


@dataclass(frozen=True)
class BackendInfo:
    name: str
    title: str
    engine: str = "sglang"
    platform: str = "cuda"  # cuda | rocm | npu | xpu | cpu | musa | any
    archs: Optional[frozenset[int]] = None  # majors SGLang admits it on (its start-up gate); None = not restricted
    mha: bool = True
    mla: bool = True
    kv_dtypes: Optional[frozenset[str]] = None  # accepted --kv-cache-dtype values; None = not restricted
    page_sizes: Optional[tuple[int, ...]] = None  # sizes it accepts; others are snapped (see rules)
    deterministic: bool = False  # in DETERMINISTIC_ATTENTION_BACKEND_CHOICES
    radix_deterministic: bool = False  # in RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND
    general: bool = True  # offered as an alternative (False: model-specific, platform-specific or an alias)
    alias_of: Optional[str] = None
    removed: str = ""  # set when the newest SGLang's argument parser no longer accepts the name: since when / why
    source: str = REGISTRY
    notes: str = ""
    features: frozenset[str] = field(default_factory=frozenset)  # model features it handles (see FEATURES)


def _arch(*majors: int) -> frozenset[int]:
    return frozenset(majors)


SGLANG_BACKENDS: dict[str, BackendInfo] = {
    b.name: b
    for b in (
        BackendInfo(
            "fa3",
            "FlashAttention 3 (sgl-kernel)",
            archs=_arch(8, 9),
            deterministic=True,
            radix_deterministic=True,
            features=frozenset({"sinks", "softcap", "sliding_window", "cross_attention"}),
            source=f"{REGISTRY}, create_flashattention_v3_backend (asserts major == 9, or 8 without MLA)",
            notes="MLA only on SM90; fp8_e5m2 KV is switched to triton",
        ),
        BackendInfo(
            "fa4",
            "FlashAttention 4 (CuTe DSL)",
            archs=_arch(8, 9, 10, 11, 12),
            deterministic=True,
            radix_deterministic=True,
            features=frozenset({"sinks", "softcap", "sliding_window", "score_mod", "rel_bias", "cross_attention"}),
            source=f"{REGISTRY}, create_flashattention_v4_backend (no arch assert); kernel limits in "
            "sglang/kernels/ops/attention/flash_attn/cute/interface.py",
        ),
        BackendInfo(
            "flashinfer",
            "FlashInfer",
            deterministic=True,
            features=frozenset({"softcap", "sliding_window", "cross_attention"}),
            source=f"{REGISTRY}, create_flashinfer_backend",
            notes="no attention sinks (model_override_base.get_default_attn_backend)",
        ),
        BackendInfo(
            "triton",
            "Triton",
            deterministic=True,
            radix_deterministic=True,
            features=frozenset({"sinks", "softcap", "sliding_window", "score_mod"}),
            source=f"{REGISTRY}, create_triton_backend (no cross attention)",
        ),
        BackendInfo("torch_native", "PyTorch SDPA", features=frozenset({"sliding_window", "cross_attention"})),
        BackendInfo("flex_attention", "PyTorch FlexAttention"),
        BackendInfo(
            "trtllm_mha",
            "TensorRT-LLM MHA (FlashInfer trtllm-gen / fmha_v2)",
            archs=_arch(9, 10, 12),
            mla=False,
            page_sizes=(16, 32, 64, 128),
            features=frozenset({"sinks", "sliding_window", "softcap"}),
            source="sglang: python/sglang/srt/arg_groups/attention_hook.py, "
            "handle_attention_backend_compatibility; attention_registry.create_trtllm_mha_backend",
        ),
        BackendInfo(
            "trtllm_mla",
            "TensorRT-LLM MLA (FlashInfer trtllm-gen)",
            archs=_arch(10, 11, 12),
            mha=False,
            kv_dtypes=frozenset({"fp8_e4m3", "bf16", "auto"}),
            page_sizes=(32, 64),
            source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks (is_blackwell: majors 10, 11, 12 in utils/common.py); "
            "attention_registry.create_trtllm_mla_backend",
        ),
        BackendInfo(
            "cutedsl_mla",
            "CuTe DSL MLA (decode)",
            archs=_arch(10),
            mha=False,
            kv_dtypes=frozenset({"fp8_e4m3", "bf16", "bfloat16", "auto"}),
            page_sizes=(32, 64),
            source=f"{OVERRIDES}; attention_registry.create_cutedsl_mla_backend",
        ),
        BackendInfo(
            "tokenspeed_mla",
            "TokenSpeed MLA (deprecated alias of cutedsl_mla)",
            archs=_arch(10),
            mha=False,
            general=False,
            alias_of="cutedsl_mla",
            source=f"{CHOICES} ('Deprecated alias for \"cutedsl_mla\"')",
        ),
        BackendInfo(
            "flashmla",
            "FlashMLA",
            archs=_arch(9, 10),
            mha=False,
            page_sizes=(64,),
            source=f"{OVERRIDES}, _mla_backend_page_constraints; {DOCS}",
        ),
        BackendInfo(
            "cutlass_mla",
            "CUTLASS MLA",
            archs=_arch(10),
            mha=False,
            page_sizes=(128,),
            general=False,
            removed="not in ATTENTION_BACKEND_CHOICES of sglang 0.5.23",
            source=f"{DOCS}; {CHOICES}",
        ),
        BackendInfo(
            "hpc_ops",
            "HPC-Ops (Tencent)",
            archs=_arch(9),
            mla=False,
            page_sizes=(64,),
            general=False,
            source=f"{CHOICES} comment 'Hopper (SM90) only, requires --page-size 64'; "
            f"{REGISTRY}, create_hpc_ops_backend",
        ),
        BackendInfo(
            "dsa",
            "DeepSeek sparse attention (V3.2 / GLM-5)",
            mha=False,
            general=False,
            source=f"{REGISTRY}, create_dsa_backend",
        ),
        BackendInfo(
            "nsa",
            "DeepSeek sparse attention (deprecated alias of dsa)",
            mha=False,
            general=False,
            alias_of="dsa",
            source=CHOICES,
        ),
        BackendInfo("qsa", "QSA sparse attention", general=False, source=CHOICES),
        BackendInfo("dsv4", "DeepSeek-V4 compressed attention", mha=False, general=False, source=CHOICES),
        BackendInfo(
            "compressed",
            "DeepSeek-V4 (deprecated alias of dsv4)",
            mha=False,
            general=False,
            alias_of="dsv4",
            source=CHOICES,
        ),
        BackendInfo(
            "dual_chunk_flash_attn",
            "Dual-chunk FlashAttention (Qwen 1M)",
            mla=False,
            general=False,
            removed="not in ATTENTION_BACKEND_CHOICES of sglang 0.5.23",
            source=CHOICES,
        ),
        BackendInfo("minicpm_flashattn", "MiniCPM sparse (FlashAttention)", general=False, source=CHOICES),
        BackendInfo("minicpm_flashinfer", "MiniCPM sparse (FlashInfer)", general=False, source=CHOICES),
        BackendInfo(
            "llada2_cfg_flashinfer",
            "LLaDA2 CFG FlashInfer",
            mla=False,
            general=False,
            source=f"{REGISTRY}, create_llada2_cfg_flashinfer_backend",
        ),
        BackendInfo("aiter", "AMD AITER", platform="rocm", general=False, source=CHOICES),
        BackendInfo("wave", "AMD Wave", platform="rocm", general=False, source=CHOICES),
        BackendInfo("intel_amx", "Intel AMX (CPU)", platform="cpu", general=False, source=CHOICES),
        BackendInfo(
            "ascend",
            "Huawei Ascend NPU",
            platform="npu",
            general=False,
            deterministic=True,
            radix_deterministic=True,
            source=CHOICES,
        ),
        BackendInfo("intel_xpu", "Intel XPU", platform="xpu", general=False, deterministic=True, source=CHOICES),
    )
}

# `--mm-attention-backend` (vision encoders): sglang python/sglang/srt/arg_groups/fields/mm.py.
MM_ATTENTION_BACKENDS = (
    "sdpa",
    "fa3",
    "fa4",
    "triton_attn",
    "ascend_attn",
    "aiter_attn",
    "flashinfer_cudnn",
    "amx_attn",
    "xpu_attn",
)

# `--speculative-draft-attention-backend`: choices.py DRAFT_ATTENTION_BACKEND_CHOICES.
DRAFT_ATTENTION_BACKENDS = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")


def choices(engine: str) -> dict[str, BackendInfo]:
    """The backends one engine accepts, by name."""
    if engine == "vllm":
        from rules.knowledge import vllm_backends

        return vllm_backends.BACKENDS
    return SGLANG_BACKENDS


def canonical(engine: str, name: str) -> Optional[str]:
    """The spelling the engine uses for `name` (SGLang: lower case; vLLM: upper case), or None."""
    table = choices(engine)
    for candidate in (name, name.lower(), name.upper()):
        if candidate in table:
            return candidate
    return None
