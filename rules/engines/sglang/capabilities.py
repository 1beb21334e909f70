"""Every SGLang `--attention-backend` value with its declared capabilities, each with its source.

This is the one SGLang capability declaration per backend (vLLM's counterpart is `supports_*` in
rules/engines/vllm/capabilities.py): the archs SGLang admits it on, MHA/MLA, KV dtypes, page sizes, phases,
the model features it handles, and which of those differ by SGLang release. Rules, attn_preflight.rules.engines.sglang.resolve, the
matrix, the alternatives and `check --smoke` planning read it; none of them restates a fact it holds.

Archs are compute-capability majors as SGLang's platform probes test them (major only: SM103 counts as
SM100, SM121 as SM120). `SGLANG_BACKENDS` holds the newest verified release's facts (sglang 0.5.23 paths);
a fact that was different in older releases is a capability delta of the release that changed it (its file under
rules/engines/sglang/releases/), folded here into an `Era` of the backend, and `declaration(name, release)`
returns the facts valid for one release (rules call attn_preflight.rules.checks.common.declared(target, name)).

vLLM's backends live in rules/engines/vllm/capabilities.py as `BACKENDS: dict[str, BackendInfo]` (the same
record); `choices(engine)` in attn_preflight.rules.engines.backends is the one way to list either engine's
backends.
"""

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Collection, Mapping, NamedTuple, Optional, Union

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.versions import VersionRange, parse_version
from attn_preflight.rules.knowledge import NEWEST_KNOWN

if TYPE_CHECKING:
    from attn_preflight.rules.core.target import Target

REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"
CHOICES = "sglang: python/sglang/srt/arg_groups/choices.py, ATTENTION_BACKEND_CHOICES"
DOCS = "sglang: docs/advanced_features/attention_backend.md (support matrix)"
OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
SPEC_HOOK = "sglang: python/sglang/srt/arg_groups/speculative_hook.py"
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
FA4_INTERFACE = "sglang: python/sglang/kernels/ops/attention/flash_attn/cute/interface.py"
FA3_API = "Dao-AILab/flash-attention: hopper/flash_api.cpp, mha_fwd (sgl-kernel builds its FA3 from it)"
PAGE_CONSTRAINTS = f"{OVERRIDES}, _mla_backend_page_constraints"
KV4_LISTS = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py, handle_kv4_compatibility (kv4_* features)"

# Features a backend may handle (BackendInfo.features): model features (attn_preflight.rules.core.models.FEATURES) plus
# serving paths. "spec_page_tree": an EAGLE draft tree (top-k > 1) on a paged KV cache
# (speculative_hook.py _PAGE_TREE_SPEC_BACKENDS); "fp8_q_cast": with an FP8 KV cache the backend casts the
# query to the KV dtype (flashattention_backend.py prepare_paged_mha_query; MLA decode dequantizes instead).
# "kv4_mha" / "kv4_mla": in SGLang's list of backends for an FP4 KV cache (nvfp4, fp4_mx_block16) and an MHA / MLA
# model; "kv4_fa4_mha_decode" / "kv4_fa4_mla_decode": in its list of decode backends after an fa4 prefill
# (kv_cache_hook.py handle_kv4_compatibility). "speculative_decoding": --speculative-algorithm (only in `refuses`).
# BackendInfo.feature_archs may also name "paged_kv" (reading SGLang's
# paged KV cache, which every backend needs) and "asymmetric_kv" (K and V head dims that differ).
FEATURES = (
    "sinks",
    "softcap",
    "sliding_window",
    "cross_attention",
    "score_mod",
    "rel_bias",
    "spec_page_tree",
    "fp8_q_cast",
    "kv4_mha",
    "kv4_mla",
    "kv4_fa4_mha_decode",
    "kv4_fa4_mla_decode",
    "speculative_decoding",
)
PHASES = frozenset({"prefill", "decode"})

# utils/common.py is_blackwell(_supported): major 10 only through 0.5.4 (utils.py `[0] == 10` in 0.5.0rc2-0.5.2,
# utils/common.py:194 in 0.5.4), [10, 12] from 0.5.4.post3 to 0.5.8 (0.5.6.post2 :224), [10, 11, 12] (Jetson Thor)
# since 0.5.9.
BLACKWELL_SM120_SINCE = Version("0.5.4.post3")
BLACKWELL_SM110_SINCE = Version("0.5.9")
BLACKWELL = frozenset({10, 11, 12})
BLACKWELL_BEFORE_SM110 = frozenset({10, 12})
BLACKWELL_BEFORE_SM120 = frozenset({10})
BLACKWELL_SOURCE = "sglang: python/sglang/srt/utils/common.py, is_blackwell / is_blackwell_supported"

# trtllm_mla prefill (forward_extend, the MHA_CHUNKED_KV path models/deepseek_common/attention_backend_handler.py
# handle_attention_trtllm_mla picks for every extend without speculative decoding; deepseek_v2.py before 0.5.8) calls
# flashinfer.prefill.trtllm_ragged_attention_deepseek, whose TllmGenFmhaRunner accepts SM100/SM103 only
# (FLASHINFER_CHECK(mSM == kSM_100 || mSM == kSM_103, "Unsupported architecture"); kSM_107 added in 0.6.17):
# the same check in every flashinfer SGLang pins from 0.5.4.post3 (flashinfer 0.5.0) to 0.5.23 (0.7.2).
TRTLLM_GEN_FMHA = (
    "flashinfer-ai/flashinfer: include/flashinfer/trtllm/fmha/fmhaRunner.cuh, TllmGenFmhaRunner (0.5.0 :30, "
    "0.6.7.post2 :30, 0.6.12 :37, 0.6.18 / 0.7.1 / 0.7.2 :37-38); reached from sglang "
    "layers/attention/trtllm_mla_backend.py forward_extend (flashinfer.prefill.trtllm_ragged_attention_deepseek)"
)
TRTLLM_GEN_FMHA_ARCHS = frozenset({10})


@dataclass(frozen=True)
class Era:
    """Facts of one backend that held for a range of SGLang releases and differ from the newest declaration.

    `facts` maps BackendInfo fields to the value in that range; `drop_features` removes features the
    newest declaration has (a feature added later). Later eras of a backend override earlier ones.

    Each era is a release file's capability delta (eras_of): the facts before the release that changed them."""

    versions: str  # a PEP 440 specifier of sglang releases, e.g. "<0.5.9" or ">=0.5.10,<0.5.19"
    source: str
    facts: Mapping[str, Any] = field(default_factory=dict)
    drop_features: frozenset[str] = frozenset()
    version_range: VersionRange = field(init=False, repr=False, compare=False, default=VersionRange("", ()))

    def __post_init__(self) -> None:  # parsed once: every Target judges its release against every era
        object.__setattr__(self, "version_range", VersionRange.parse(f"sglang{self.versions}"))

    def holds_for(self, release: Union[str, Version]) -> bool:
        return self.version_range.contains(release)


_NO_FACTS: Mapping[Any, Any] = MappingProxyType({})  # an empty mapping default, shared and read-only


class HeadDims(NamedTuple):
    """The (head_dim, head_dim_v) shapes a kernel takes on one arch: both in lo..hi, or one of `shapes`."""

    hi: int
    shapes: tuple[tuple[int, int], ...] = ()
    lo: int = 8

    def takes(self, head_dim: int, head_dim_v: int) -> bool:
        in_range = self.lo <= head_dim <= self.hi and self.lo <= head_dim_v <= self.hi
        return in_range or (head_dim, head_dim_v) in self.shapes


class BackendInfo(NamedTuple):
    name: str
    title: str
    engine: str = "sglang"
    platform: str = "cuda"  # cuda | rocm | npu | xpu | cpu | musa | any
    archs: Optional[frozenset[int]] = None  # majors SGLang admits it on (its start-up gate); None = not restricted
    mha: bool = True
    mla: bool = True
    kv_dtypes: Optional[Collection[str]] = None  # accepted --kv-cache-dtype values (in SGLang's order); None = any
    page_sizes: Optional[tuple[int, ...]] = None  # sizes it accepts; others are snapped to page_snap
    deterministic: bool = False  # in DETERMINISTIC_ATTENTION_BACKEND_CHOICES
    radix_deterministic: bool = False  # in RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND
    general: bool = True  # offered as an alternative (False: model-specific, platform-specific or an alias)
    alias_of: Optional[str] = None
    removed: str = ""  # set when the release's argument parser no longer accepts the name: since when / why
    source: str = REGISTRY
    notes: str = ""
    features: frozenset[str] = frozenset()  # what it handles (see FEATURES)
    # Finer facts (SGLang only; vLLM's declaration has its own supports_* methods):
    min_cc: Optional[tuple[int, int]] = None  # the oldest compute capability its kernels are built for
    prefill_archs: Optional[frozenset[int]] = None  # majors admitted for prefill when fewer than `archs`
    mla_archs: Optional[frozenset[int]] = None  # majors on which it serves MLA models (None: as `archs`)
    kv_dtype_archs: Mapping[str, frozenset[int]] = _NO_FACTS  # KV dtypes read only on these majors
    feature_archs: Mapping[str, frozenset[int]] = _NO_FACTS  # features that run only on these
    max_head_dim: Optional[int] = None  # the largest Q/K head dim its kernels take
    head_dims: Mapping[int, HeadDims] = _NO_FACTS  # major -> the (head_dim, v_head_dim) shapes its kernels take there
    head_dim_multiple: int = 1  # head dims must be multiples of this (with head_dims)
    # phase -> the majors its kernels serve that phase on, where fewer than `archs`: SGLang starts, the first
    # forward fails elsewhere
    kernel_archs: Mapping[str, frozenset[int]] = _NO_FACTS
    drops: frozenset[str] = frozenset()  # model features it accepts but silently ignores (no error, wrong output)
    refuses: frozenset[str] = frozenset()  # features it refuses with an error (start-up or first forward)
    page_snap: Optional[int] = None  # the page size SGLang switches to when the given one is not in page_sizes
    arch_page_size: Mapping[int, int] = _NO_FACTS  # major -> the page size SGLang forces there
    phases: frozenset[str] = PHASES  # the phases it serves
    libraries: tuple[str, ...] = ()  # probed libraries (attn_preflight.probe.facts keys) its kernels are imported from
    sources: Mapping[str, str] = _NO_FACTS  # field -> source, where it is not `source`
    # facts of older SGLang releases: None, those of the release files' capability deltas (eras_of); a tuple, these
    eras: Optional[tuple[Era, ...]] = None

    def source_of(self, fact: str) -> str:
        """Where one fact of this declaration comes from."""
        return self.sources.get(fact, self.source)

    def archs_for(self, phase: str = "") -> Optional[frozenset[int]]:
        """The majors it is admitted on, for one phase ("prefill" may be narrower) or for every phase."""
        return self.prefill_archs if phase == "prefill" and self.prefill_archs is not None else self.archs


def _arch(*majors: int) -> frozenset[int]:
    return frozenset(majors)


def release_of(target: "Target") -> Version:
    """The target's SGLang release; the newest verified one when it is not known (--gpu, not installed)."""
    return parse_version(target.versions.get("sglang") or NEWEST_KNOWN["sglang"])


def blackwell_majors(release: Union[Version, str]) -> frozenset[int]:
    """Compute-capability majors SGLang's is_blackwell accepts in one release."""
    version = Version(str(release))
    if version >= BLACKWELL_SM110_SINCE:
        return BLACKWELL
    return BLACKWELL_BEFORE_SM110 if version >= BLACKWELL_SM120_SINCE else BLACKWELL_BEFORE_SM120


# flash_attn.cute's kernel limits. SGLang's fa4 runs its vendored copy (FA4_INTERFACE); `attn-preflight smoke`
# calls the flash-attn-4 4.0.0b36 wheel (FA4_WHEEL, rules/kernels/limits.py). One table for both:
# a fact the two copies share is written once, and where they differ both values are here, each with its source.
FA4_WHEEL = "flash-attn-4 4.0.0b36 flash_attn/cute/interface.py"
# Both copies: compute capability 8.x-12.x (the wheel's message lists 8.x-12.x; the vendored interface 8.x-11.x and
# SGLang's SM120 forward host SM12x).
FA4_ARCHS = _arch(8, 9, 10, 11, 12)
# Both copies: 'FP8 is only supported on SM100 (compute capability 10.x) for FA4 CuTe.' (`arch // 10 == 10`).
FA4_FP8_ARCHS = _arch(10)
# flash_attn.cute: a user score_mod from SM90, rel_bias on SM9x-SM11x and (SGLang's SM120 host) SM12x, paged KV
# from SM90 (the SM8x kernel has none; SGLang always pages).
FA4_FEATURE_ARCHS = {
    "score_mod": _arch(9, 10, 11, 12),
    "rel_bias": _arch(9, 10, 11, 12),
    "paged_kv": _arch(9, 10, 11, 12),
}
# They differ here: the wheel (like SGLang before 0.5.18) has no paged KV on SM12x either ('paged KV not supported
# on SM 8.0' / 'Paged KV not supported on SM 12.0 in this PR'): it has no SM120 forward host.
FA4_WHEEL_PAGED_KV_ARCHS = _arch(9, 10, 11)
# Before the SM120 host (sglang < 0.5.18) the vendored rel_bias ran on SM9x-SM11x only.
FA4_BEFORE_SM120_HOST_REL_BIAS_ARCHS = _arch(9, 10, 11)


# _validate_head_dims, by compute-capability major (other majors: not validated there). SGLang's vendored copy
# (FA4_INTERFACE): SM90 8..256 or (512, 512); SM100/SM110 8..128, DeepSeek's (192, 128), absorbed MLA (64, 512),
# (512, 512) and the hd256 kernel's (256, 256); both also want multiples of 16 / element size (8 for bf16/fp16),
# checked by the rules. The wheel (FA4_WHEEL) differs on SM90 only: 8..256, no (512, 512).
_FA4_SM100_HEAD_DIMS = HeadDims(128, ((192, 128), (64, 512), (512, 512), (256, 256)))
FA4_HEAD_DIMS = {9: HeadDims(256, ((512, 512),)), 10: _FA4_SM100_HEAD_DIMS, 11: _FA4_SM100_HEAD_DIMS}
FA4_WHEEL_HEAD_DIMS = {**FA4_HEAD_DIMS, 9: HeadDims(256)}
FA4_HEAD_DIM_MULTIPLE = 8


# DETERMINISTIC_ATTENTION_BACKEND_CHOICES / RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND by release (server_args.py
# through 0.5.19, arg_groups/choices.py after): flashinfer, fa3, triton from 0.5.3 (radix: fa3, triton from
# 0.5.4.post3); ascend added in 0.5.13, fa4 in 0.5.16, intel_xpu in 0.5.19 (not radix).
DETERMINISTIC_LISTS = (
    "sglang: server_args.py DETERMINISTIC_ATTENTION_BACKEND_CHOICES (0.5.5 :138, 0.5.13 :199, 0.5.16 :223, "
    "0.5.19 :234), arg_groups/choices.py (0.5.23 :113, :249)"
)
# Deterministic inference of a DeepSeek model before 0.5.18: a fixed ["fa3", "triton"] ("... with DeepSeek models.
# But you're using ..."; 0.5.5 server_args.py:1825-1827); from 0.5.18 the radix list ("... with absorbed-MLA models").
DETERMINISTIC_DEEPSEEK_BACKENDS_BEFORE_RADIX = ("fa3", "triton")
DETERMINISTIC_MLA_RADIX_FROM = Version("0.5.18")
# The newest release's declarations. What older releases had lives in the release files: each release's
# `capability_deltas` (rules/engines/sglang/releases/<version>.json, gathered into capability_deltas.json by
# bench/release_files.py)
# are folded into each backend's eras (eras_of) when an older release is asked.
SGLANG_BACKENDS: dict[str, BackendInfo] = {
    b.name: b
    for b in (
        BackendInfo(
            "fa3",
            "FlashAttention 3 (sgl-kernel)",
            archs=_arch(8, 9),
            mla_archs=_arch(9),
            kv_dtype_archs={"fp8_e4m3": _arch(9), "fp8_e5m2": _arch(9)},
            feature_archs={"asymmetric_kv": _arch(9)},
            max_head_dim=256,
            libraries=("sgl_kernel",),
            refuses=frozenset({"score_mod", "rel_bias"}),
            deterministic=True,
            radix_deterministic=True,
            features=frozenset(
                {"sinks", "softcap", "sliding_window", "cross_attention", "spec_page_tree", "fp8_q_cast"}
            ),
            source=f"{REGISTRY}, create_flashattention_v3_backend (asserts major == 9, or 8 without MLA)",
            sources={
                "mla_archs": f"{REGISTRY}, create_flashattention_v3_backend; {FA3_API} ('Only Hopper supports "
                "different V headdim')",
                "libraries": f"{FA_BACKEND} (fa_impl_ver 3: from sgl_kernel.flash_attn import ...)",
                "kv_dtype_archs": f"{FA3_API} ('FlashAttention on Ampere/Ada cards only supports fp16 and bf16 "
                "data type')",
                "feature_archs": f"{FA3_API} ('Only Hopper supports different V headdim')",
                "max_head_dim": f"{FA3_API} ('FlashAttention forward only supports head dimension at most 256')",
                "features": f"{FA_BACKEND}; {SPEC_HOOK}, _PAGE_TREE_SPEC_BACKENDS (spec_page_tree)",
                "refuses": f"{FA_BACKEND}, forward_extend / forward_decode ('score_mod is only supported by the FA4 "
                "backend.', 'rel_bias (sheared bias) is only supported by the FA4 backend.')",
            },
            notes="MLA only on SM90; fp8_e5m2 KV is switched to triton",
        ),
        BackendInfo(
            "fa4",
            "FlashAttention 4 (CuTe DSL)",
            archs=FA4_ARCHS,
            mla_archs=_arch(10, 11),
            kv_dtype_archs={"fp8_e4m3": FA4_FP8_ARCHS, "fp8_e5m2": FA4_FP8_ARCHS, "mxfp8": FA4_FP8_ARCHS},
            feature_archs=FA4_FEATURE_ARCHS,
            arch_page_size={10: 128},
            head_dims=FA4_HEAD_DIMS,
            head_dim_multiple=FA4_HEAD_DIM_MULTIPLE,
            libraries=("cutlass_dsl", "quack"),
            deterministic=True,
            radix_deterministic=True,
            features=frozenset(
                {"sinks", "softcap", "sliding_window", "score_mod", "rel_bias", "cross_attention", "fp8_q_cast"}
            ),
            source=f"{REGISTRY}, create_flashattention_v4_backend (no arch assert); kernel limits in "
            "sglang/kernels/ops/attention/flash_attn/cute/interface.py",
            sources={
                "archs": f"{FA4_INTERFACE}, _flash_attn_fwd; kernels/ops/attention/fa4_sm120/dispatch.py",
                "mla_archs": f"{FA4_INTERFACE}, _flash_attn_fwd ('only support Blackwell arch with qv')",
                "kv_dtype_archs": f"{FA4_INTERFACE}, _flash_attn_fwd ('FP8 is only supported on SM100')",
                "feature_archs": f"{FA4_INTERFACE}, _flash_attn_fwd (no user score_mod on SM8x; rel_bias on "
                "SM9x/10x/11x and the SM120 host, head dims <= 128 there; 'paged KV not supported on SM 8.0')",
                "arch_page_size": f"{OVERRIDES}, _fa4_page_constraint (non-MLA models, EAGLE top-k <= 1, is_sm100)",
                "head_dims": f"{FA4_INTERFACE}, _validate_head_dims",
                "libraries": "sglang: python/sglang/kernels/ops/attention/flash_attention_v4.py (the vendored "
                "flash_attn.cute imports cutlass.cute and quack)",
            },
        ),
        BackendInfo(
            "flashinfer",
            "FlashInfer",
            min_cc=(7, 5),
            deterministic=True,
            features=frozenset(
                {"softcap", "sliding_window", "cross_attention", "spec_page_tree", "kv4_mla", "kv4_fa4_mla_decode"}
            ),
            libraries=("flashinfer",),
            source=f"{REGISTRY}, create_flashinfer_backend",
            sources={
                "min_cc": "flashinfer-ai/flashinfer: README.md 'GPU Support' (SM 7.5 and newer)",
                "features": f"{FA_BACKEND}; {SPEC_HOOK}, _PAGE_TREE_SPEC_BACKENDS (spec_page_tree); {KV4_LISTS}",
            },
            notes="no attention sinks (model_override_base.get_default_attn_backend)",
        ),
        BackendInfo(
            "triton",
            "Triton",
            deterministic=True,
            radix_deterministic=True,
            features=frozenset(
                {"sinks", "softcap", "sliding_window", "score_mod", "spec_page_tree", "kv4_mha", "kv4_fa4_mha_decode"}
            ),
            refuses=frozenset({"cross_attention"}),
            source=f"{REGISTRY}, create_triton_backend (no cross attention)",
            sources={
                "features": f"{REGISTRY}, create_triton_backend; {SPEC_HOOK}, _PAGE_TREE_SPEC_BACKENDS; {KV4_LISTS}",
                "refuses": f"{REGISTRY}, create_triton_backend ('Cross attention is not supported in the triton "
                "attention backend')",
            },
        ),
        BackendInfo(
            "torch_native",
            "PyTorch SDPA",
            features=frozenset({"sliding_window", "cross_attention", "kv4_mha", "kv4_fa4_mha_decode"}),
            drops=frozenset({"softcap"}),
            sources={
                "drops": "sglang: python/sglang/srt/layers/attention/torch_native_backend.py (no logit_cap)",
                "features": KV4_LISTS,
            },
        ),
        BackendInfo(
            "flex_attention",
            "PyTorch FlexAttention",
            features=frozenset({"kv4_mha", "kv4_fa4_mha_decode"}),
            drops=frozenset({"softcap"}),
            refuses=frozenset({"speculative_decoding", "cross_attention"}),
            sources={
                "drops": "sglang: python/sglang/srt/layers/attention/torch_flex_backend.py (no logit_cap)",
                "features": KV4_LISTS,
                "refuses": f"{ATTENTION_HOOK}, handle_attention_backend_compatibility ('Speculative decoding is "
                "currently not supported with Flex Attention backend'); sglang: python/sglang/srt/layers/attention/"
                "torch_flex_backend.py, forward_extend ('TorchFlexAttnBackend does not support non-causal attention "
                "for now.', cross-attention and encoder-only layers)",
            },
        ),
        BackendInfo(
            "trtllm_mha",
            "TensorRT-LLM MHA (FlashInfer trtllm-gen / fmha_v2)",
            archs=_arch(9, 10, 12),
            mla=False,
            page_sizes=(16, 32, 64, 128),
            page_snap=64,
            features=frozenset({"sinks", "sliding_window", "kv4_mha"}),
            drops=frozenset({"softcap"}),
            libraries=("flashinfer",),
            source="sglang: python/sglang/srt/arg_groups/attention_hook.py, "
            "handle_attention_backend_compatibility; attention_registry.create_trtllm_mha_backend",
            sources={
                "page_sizes": PAGE_CONSTRAINTS,
                "page_snap": PAGE_CONSTRAINTS,
                "drops": "sglang: python/sglang/srt/layers/attention/trtllm_mha_backend.py (no logit_cap argument)",
                "features": f"{ATTENTION_HOOK}; {KV4_LISTS}",
            },
        ),
        BackendInfo(
            "trtllm_mla",
            "TensorRT-LLM MLA (FlashInfer trtllm-gen)",
            archs=BLACKWELL,
            mha=False,
            kv_dtypes=("fp8_e4m3", "bf16", "auto"),
            page_sizes=(32, 64),
            page_snap=64,
            kernel_archs={"prefill": TRTLLM_GEN_FMHA_ARCHS},
            features=frozenset({"kv4_mla", "kv4_fa4_mla_decode"}),
            libraries=("flashinfer",),
            source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks (is_blackwell: majors 10, 11, 12 in utils/common.py); "
            "attention_registry.create_trtllm_mla_backend",
            sources={
                "archs": BLACKWELL_SOURCE,
                "kernel_archs": TRTLLM_GEN_FMHA,
                "page_sizes": PAGE_CONSTRAINTS,
                "page_snap": PAGE_CONSTRAINTS,
                "features": KV4_LISTS,
            },
        ),
        BackendInfo(
            "cutedsl_mla",
            "CuTe DSL MLA (decode)",
            archs=_arch(10),
            mha=False,
            kv_dtypes=("fp8_e4m3", "bf16", "bfloat16", "auto"),
            page_sizes=(32, 64),
            page_snap=64,
            phases=frozenset({"decode"}),
            libraries=("flashinfer",),
            source=f"{OVERRIDES}; attention_registry.create_cutedsl_mla_backend",
            sources={
                "archs": f"{OVERRIDES}, _cutedsl_prefill_backend_fill (is_sm100_supported)",
                "kv_dtypes": f"{OVERRIDES}, _cutedsl_prefill_backend_fill",
                "phases": f"{OVERRIDES}, _cutedsl_prefill_backend_fill ('CuteDSL MLA only supports decoding for now')",
                "page_sizes": PAGE_CONSTRAINTS,
                "page_snap": PAGE_CONSTRAINTS,
            },
        ),
        BackendInfo(
            "tokenspeed_mla",
            "TokenSpeed MLA (deprecated alias of cutedsl_mla)",
            archs=_arch(10),
            mha=False,
            kv_dtypes=("fp8_e4m3",),
            page_sizes=(32, 64),
            page_snap=64,
            general=False,
            alias_of="cutedsl_mla",
            libraries=("flashinfer",),
            source=f"{CHOICES} ('Deprecated alias for \"cutedsl_mla\"')",
            sources={
                "kv_dtypes": "sglang: python/sglang/srt/arg_groups/serving_hook.py, handle_deprecated_args "
                "('tokenspeed_mla required FP8 KV; setting --kv-cache-dtype=fp8_e4m3.')",
                "page_sizes": PAGE_CONSTRAINTS,
                "page_snap": PAGE_CONSTRAINTS,
            },
        ),
        BackendInfo(
            "flashmla",
            "FlashMLA",
            archs=_arch(9),
            mha=False,
            page_sizes=(64,),
            page_snap=64,
            source=f"{OVERRIDES}, _mla_backend_page_constraints; {DOCS}",
            sources={
                "archs": "FlashMLA's dense MLA decode (what the flashmla backend calls) has SM90 kernels only: "
                "sgl-kernel 0.3.16.post4 flashmla_ops ('BF16 Dence MLA is not supported on SM100', 'FP8 Dence MLA is "
                "not supported on SM100'), sglang-kernel 0.4.9 ('Dense decode MLA is only supported on SM90a "
                "architecture'), sgl-flash-mla 1.0.0 (dense decode only among its legacy SM90 kernels; its SM100 "
                "kernels are sparse)"
            },
        ),
        BackendInfo(
            "cutlass_mla",
            "CUTLASS MLA",
            archs=_arch(10),
            mha=False,
            page_sizes=(128,),
            page_snap=128,
            general=False,
            removed="not in ATTENTION_BACKEND_CHOICES of sglang 0.5.23",
            source=f"{DOCS}; {CHOICES}",
            sources={"archs": "sglang: sgl-kernel cutlass_mla_decode (an SM100 kernel)"},
        ),
        BackendInfo(
            "hpc_ops",
            "HPC-Ops (Tencent)",
            archs=_arch(9),
            mla=False,
            page_sizes=(64,),
            page_snap=64,
            refuses=frozenset({"cross_attention", "speculative_decoding", "softcap"}),
            general=False,
            source=f"{CHOICES} comment 'Hopper (SM90) only, requires --page-size 64'; "
            f"{REGISTRY}, create_hpc_ops_backend",
            sources={
                "refuses": f"{REGISTRY}, create_hpc_ops_backend (cross attention, speculative decoding); "
                "hpc_ops_backend.py _check_layer_supported ('does not support logit cap')"
            },
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
        BackendInfo(
            "intel_xpu",
            "Intel XPU",
            platform="xpu",
            general=False,
            deterministic=True,
            source=CHOICES,
        ),
    )
}

# `--mm-attention-backend` (vision encoders): sglang python/sglang/srt/arg_groups/fields/mm.py.
# The names a release file's capability delta may use: "@NAME" for a value, "{NAME}" in a source (one home for a
# fact other code also reads, e.g. the flash-attn-4 wheel's limits in attn_preflight.rules.kernels.limits).
_DELTA_VALUES: Mapping[str, Any] = MappingProxyType(
    {
        "BLACKWELL": BLACKWELL,
        "BLACKWELL_BEFORE_SM110": BLACKWELL_BEFORE_SM110,
        "FA4_FEATURE_ARCHS": FA4_FEATURE_ARCHS,
        "FA4_WHEEL_HEAD_DIMS": FA4_WHEEL_HEAD_DIMS,
        "FA4_WHEEL_PAGED_KV_ARCHS": FA4_WHEEL_PAGED_KV_ARCHS,
        "FA4_BEFORE_SM120_HOST_REL_BIAS_ARCHS": FA4_BEFORE_SM120_HOST_REL_BIAS_ARCHS,
    }
)
_DELTA_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "ATTENTION_HOOK": ATTENTION_HOOK,
        "BLACKWELL_SOURCE": BLACKWELL_SOURCE,
        "CHOICES": CHOICES,
        "DETERMINISTIC_LISTS": DETERMINISTIC_LISTS,
        "OVERRIDES": OVERRIDES,
        "PAGE_CONSTRAINTS": PAGE_CONSTRAINTS,
        "SPEC_HOOK": SPEC_HOOK,
    }
)
_ARCH_SETS = frozenset({"archs", "prefill_archs", "mla_archs"})
_NAME_SETS = frozenset({"features", "drops", "refuses"})
_ARCH_MAPS = frozenset({"kv_dtype_archs", "feature_archs", "kernel_archs"})


def _delta_value(field: str, value: Any) -> Any:
    """A BackendInfo field's value as a release file writes it (JSON) -> as the declaration holds it."""
    if isinstance(value, str) and value.startswith("@"):
        return _DELTA_VALUES[value[1:]]
    if value is None or field not in BackendInfo._fields:
        return value
    if field in _ARCH_SETS or field in _NAME_SETS:
        return frozenset(value)
    if field in _ARCH_MAPS:
        base = dict(_DELTA_VALUES[value["@"]]) if "@" in value else {}
        return {**base, **{k: _delta_value("archs", v) for k, v in value.items() if k != "@"}}
    if field == "head_dims":
        return {
            int(major): HeadDims(d["hi"], tuple(tuple(s) for s in d["shapes"]), d["lo"]) for major, d in value.items()
        }
    if field == "arch_page_size":
        return {int(major): size for major, size in value.items()}
    return tuple(value) if isinstance(value, list) else value


def _fold(deltas: Mapping[str, list]) -> dict[str, tuple[Era, ...]]:
    """The eras the releases' capability deltas make, by backend, newest release first: a delta of release R holds
    the facts of the releases before R (from its `since`), and a later (older) era overrides an earlier one."""
    eras: dict[str, list[Era]] = {}
    for release, entries in deltas.items():
        for delta in entries:
            versions = (f">={delta['since']}," if delta.get("since") else "") + f"<{release}"
            facts = {field: _delta_value(field, value) for field, value in delta.get("facts", {}).items()}
            era = Era(
                versions,
                delta["source"].format_map(_DELTA_SOURCES),
                facts,
                frozenset(delta.get("drop_features", ())),
            )
            eras.setdefault(delta["backend"], []).append(era)
    unknown = sorted(set(eras) - set(SGLANG_BACKENDS))
    if unknown:
        raise ValueError(f"capability deltas name backends SGLang does not declare: {unknown}")
    return {name: tuple(found) for name, found in eras.items()}


def _deltas() -> Mapping[str, list]:
    from attn_preflight.rules.engines.releases import capability_deltas

    return capability_deltas("sglang")


@functools.cache
def _newest_delta() -> Optional[Version]:
    """The newest release with a capability delta: from it on no era holds (each ends at or before its release)."""
    from attn_preflight.rules.engines.releases import index

    with_deltas = index("sglang")["with_deltas"]
    return Version(with_deltas[-1]) if with_deltas else None


@functools.cache
def _file_eras() -> Mapping[str, tuple[Era, ...]]:
    """The eras of every backend, folded once, when a release older than _newest_delta() is first asked (a check
    of the newest release folds nothing)."""
    return MappingProxyType(_fold(_deltas()))


def eras_of(name: str, info: Optional[BackendInfo] = None) -> tuple[Era, ...]:
    """A backend's eras: its declaration's own when set (a test's), else those of the release files' deltas."""
    info = info if info is not None else SGLANG_BACKENDS[name]
    return info.eras if info.eras is not None else _file_eras().get(name, ())


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

# --- get_default_attn_backend (CUDA, MHA models) before 0.5.23, read in each wheel (bench/release_walk.py) -------
# The default it picks changed in these releases; rules/engines/sglang/resolve.py applies them by the target's release.
DEFAULT_BACKEND_SOURCE = (
    "sglang: server_args.py _get_default_attn_backend (0.5.4.post3-0.5.18; model_runner.py before), "
    "arg_groups/model_override_base.py get_default_attn_backend (0.5.19+)"
)
# SM90 takes fa3 only for utils/common.py is_fa3_default_architecture's list through 0.5.7 (0.5.5 common.py:2650-2667);
# from 0.5.8 every MHA architecture. Each entry: the first release with that list.
FA3_DEFAULT_ARCHITECTURES_UNTIL = Version("0.5.8")
_FA3_DEFAULT_0_5_1 = frozenset(
    {
        "Qwen2ForCausalLM",
        "Llama4ForConditionalGeneration",
        "LlamaForCausalLM",
        "Gemma2ForCausalLM",
        "Gemma3ForConditionalGeneration",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4vMoeForConditionalGeneration",
        "Step3VLForConditionalGeneration",
    }
)
_FA3_DEFAULT_0_5_4 = _FA3_DEFAULT_0_5_1 | {"Olmo2ForCausalLM"}
FA3_DEFAULT_ARCHITECTURES = (
    (
        Version("0.5.6.post2"),
        _FA3_DEFAULT_0_5_4
        | {"Glm4vForConditionalGeneration", "Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration"},
    ),
    (Version("0.5.4"), _FA3_DEFAULT_0_5_4),
    (Version("0.0"), _FA3_DEFAULT_0_5_1),
)
# SM100 MHA default trtllm_mha from 0.5.6.post2 (server_args.py:1383); flashinfer before (0.5.6 :1307).
TRTLLM_MHA_DEFAULT_FROM = Version("0.5.6.post2")
# WhisperForConditionalGeneration -> flashinfer from 0.5.10 (server_args.py:2231-2235).
WHISPER_FLASHINFER_DEFAULT_FROM = Version("0.5.10")
# A model with attention sinks gets triton instead of flashinfer from 0.5.11 (server_args.py:2511-2513).
SINKS_TRITON_DEFAULT_FROM = Version("0.5.11")
# SM100 with asymmetric K/V head dims gets fa4 instead of trtllm_mha from 0.5.17 (server_args.py:5697-5701).
ASYMMETRIC_KV_FA4_DEFAULT_FROM = Version("0.5.17")
# DFLASH counts as EAGLE top-k 1 for the SM100 default from 0.5.23 (model_override_base.py:318).
DFLASH_TOPK_ONE_DEFAULT_FROM = Version("0.5.23")
# Llama 4 gets a default backend (trtllm_mha on SM100, fa3 on SM90, triton elsewhere) from 0.5.6 (server_args.py
# :1125-1139); before, model_specific_adjustments asserts its list on --attention-backend as given, so no backend
# fails (0.5.5 server_args.py:999-1005, the trtllm_mha default after the assert cannot run).
LLAMA4_DEFAULT_FROM = Version("0.5.6")
# --enable-deterministic-inference without a backend. 0.5.3 and 0.5.3.post3 have no fallback: the list is checked
# against the unset backend and refuses it (0.5.3 server_args.py:1264-1267). From 0.5.4 the fallback fills it: fa3,
# or flashinfer on SM100/SM120 (0.5.4 :1526-1533), triton there for DeepSeek models from 0.5.4.post3. From
# 0.5.4.post3 to 0.5.11 the generic default is filled first (_handle_attention_backend_compatibility :596 before
# _handle_deterministic_inference :638 in 0.5.5, :791 / :841 in 0.5.10), so the fallback never runs and the list is
# checked against the default; 0.5.12 swaps the two (:935 / :936). Before 0.5.4.post3 the generic default is the
# model runner's, after ServerArgs.
DETERMINISTIC_FALLBACK_FROM = Version("0.5.4")
DETERMINISTIC_DEEPSEEK_TRITON_FROM = Version("0.5.4.post3")
DETERMINISTIC_AFTER_DEFAULT = VersionRange.parse("sglang>=0.5.4.post3,<0.5.12")


def deterministic_fallback_runs(release: Version) -> bool:
    """Whether SGLang's deterministic fallback fills an unset --attention-backend in this release."""
    return release >= DETERMINISTIC_FALLBACK_FROM and not DETERMINISTIC_AFTER_DEFAULT.contains(release)


# The fa4 page-size rewrite to 128 ("FA4 backend only supports page size 128 ..."), read in each wheel:
# 0.5.4-0.5.5: an explicit --prefill-attention-backend fa4, any model, any GPU (0.5.4 server_args.py:1147-1150);
# 0.5.5.post3-0.5.9: non-MLA models only (0.5.8 :1779); 0.5.10-0.5.14: and on SM100 only (0.5.12 :2795-2797);
# from 0.5.15 any phase naming fa4, with EAGLE top-k <= 1 (arg_groups/overrides.py:1678-1690, 0.5.23 :1274-1297).
FA4_PAGE_REWRITE_FROM = Version("0.5.4")
FA4_PAGE_REWRITE_NON_MLA_FROM = Version("0.5.5.post3")
FA4_PAGE_REWRITE_SM100_FROM = Version("0.5.10")
FA4_PAGE_REWRITE_ANY_PHASE_FROM = Version("0.5.15")


# The NVFP4 KV plan (kv_cache_hook.handle_nvfp4_prefill_kv_dequant_dtype: prefill flashinfer / trtllm_mha, decode
# trtllm_mha) first appears in 0.5.21 and is the same code through 0.5.23 (kv_cache_hook.py:20-100).
NVFP4_PLAN_FROM = Version("0.5.21")


# IQuestQ1's override (arg_groups/model_overrides/iquest_q1.py, 0.5.21-0.5.23): fa3 for every phase and its MTP
# draft, EAGLE top-k 1; it sets fa3 itself where no backend is named.
IQUEST_Q1_ARCHITECTURES = frozenset({"IQuestQ1ForCausalLM", "IQuestQ1MTP"})
IQUEST_Q1_FROM = Version("0.5.21")


# HRM-Text (prefix_lm): SGLang forces --attention-backend triton as the last step of resolution, with chunked
# prefill, the radix cache and CUDA graphs off (model_runner.py :1150-1166 in 0.5.15 at model-runner start;
# overrides.py _hrm_text_attention_force from 0.5.16, run by arg_groups/model_hook.py: 0.5.23 :766-813,
# overrides.py :1773-1783). SGLang matches model_type "hrm_text" or this architecture.
HRM_TEXT_ARCHITECTURE = "HrmTextForCausalLM"
HRM_TEXT_MODEL_TYPE = "hrm_text"
HRM_TEXT_TRITON_FROM = Version("0.5.15")


# Hybrid models whose Mamba/linear-attention state rides the radix cache (arg_groups/overrides.py
# _MAMBA_RADIX_CACHE_ARCHS, sglang 0.5.23 :369-399; also GraniteMoeHybrid with mamba layers and any
# linear-attention spec registered with uses_mamba_radix_cache): `--mamba-radix-cache-strategy` applies to them.
MAMBA_RADIX_CACHE_ARCHITECTURES = frozenset(
    {
        "KimiLinearForCausalLM",
        "KimiK3ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5ForCausalLM",
        "Qwen4ExpForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "FalconH1ForCausalLM",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
        "Lfm2ForCausalLM",
        "Lfm2MoeForCausalLM",
        "ZayaForCausalLM",
        "Glm5NextForConditionalGeneration",
    }
)
MAMBA_RADIX_CACHE_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _MAMBA_RADIX_CACHE_ARCHS"

# --mamba-radix-cache-strategy extra_buffer / extra_buffer_lazy (mamba_hook.py validate_mamba_extra_buffer, 0.5.23
# :105-150; server_args.py _validate_mamba_extra_buffer 0.5.14-0.5.18). The architectures that take it, and only on
# --linear-attn-backend triton (overrides.py _MAMBA_EXTRA_BUFFER_ARCHS and supports_mamba_cache_extra_buffer, 0.5.23
# :403-451; the triton test the same from 0.5.14). Inkling pins extra_buffer itself and declares the Mamba radix
# cache (model_overrides/inkling.py); GraniteMoeHybrid rides it when its layer_types name mamba layers.
MAMBA_EXTRA_BUFFER_ARCHITECTURES = frozenset(
    {
        "KimiLinearForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5MoeForCausalLM",
        "Qwen3_5ForCausalLM",
        "Qwen3NextForCausalLM",
        "Qwen4ExpForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "MiniCPMV4_6ForConditionalGeneration",
        "MiniCPMV4_7ForConditionalGeneration",
        "BailingMoeV2_5ForCausalLM",
        "BailingMoeV3ForCausalLM",
        "BailingMoeV3VLForConditionalGeneration",
        "FalconH1ForCausalLM",
        "GraniteMoeHybridForCausalLM",
        "Glm5NextForConditionalGeneration",
        "NemotronHForCausalLM",
        "NemotronHPuzzleForCausalLM",
        "NemotronH_Omni_Reasoning_V3",
        "KimiK3ForConditionalGeneration",
        "InklingForConditionalGeneration",
        "InklingForConditionalGenerationMTP",
    }
)
MAMBA_EXTRA_BUFFER_SOURCE = "sglang: python/sglang/srt/arg_groups/mamba_hook.py, validate_mamba_extra_buffer"
MAMBA_EXTRA_BUFFER_STRATEGIES = ("extra_buffer", "extra_buffer_lazy")
INKLING_ARCHITECTURES = frozenset({"InklingForConditionalGeneration", "InklingForConditionalGenerationMTP"})
GRANITE_HYBRID_ARCHITECTURE = "GraniteMoeHybridForCausalLM"
MAMBA_TRACK_INTERVAL_DEFAULT = 256  # --mamba-track-interval (fields/exec_.py :530-533; server_args.py from 0.5.7)
# extra_buffer_lazy: refused with speculative decoding in 0.5.14-0.5.16 ("extra_buffer_lazy unsupported with spec."),
# under PD disaggregation from 0.5.17 ("extra_buffer_lazy unsupported under PD disaggregation")
MAMBA_LAZY_PD_CHECK_FROM = Version("0.5.17")
# model_hook.py handle_mamba_radix_cache: an explicit extra_buffer on a model without Mamba state raises from 0.5.21
MAMBA_NEEDS_STATE_FROM = Version("0.5.21")
# overrides.py mamba_cache_chunk_size (0.5.23 :1897-1925; server_args.py from 0.5.13): getattr(hf_config,
# "mamba_chunk_size", 64), FLA's CHUNK_SIZE when the config has none. SGLang's own config classes fill it for some
# architectures: a fixed value (configs/lfm2.py, zaya.py: 1; inkling.py: 64), or a default for an absent key
# (falcon_h1.py, granitemoehybrid.py, nemotron_h.py: 256; Nemotron-H also reads the older `chunk_size` key first).
FLA_CHUNK_SIZE = 64
MAMBA_CHUNK_SIZE_FIXED = MappingProxyType(
    {
        "Lfm2ForCausalLM": 1,
        "Lfm2MoeForCausalLM": 1,
        "ZayaForCausalLM": 1,
        "InklingForConditionalGeneration": 64,
        "InklingForConditionalGenerationMTP": 64,
    }
)
NEMOTRON_H_ARCHITECTURES = frozenset({"NemotronHForCausalLM", "NemotronHPuzzleForCausalLM"})
MAMBA_CHUNK_SIZE_DEFAULTS = MappingProxyType(
    {
        "FalconH1ForCausalLM": 256,
        GRANITE_HYBRID_ARCHITECTURE: 256,
        **{arch: 256 for arch in NEMOTRON_H_ARCHITECTURES},
    }
)

# Hybrids whose SSM layers run SGLang's Mamba2AttnBackend and take the extra buffer (attention_registry.py
# attn_backend_wrapper: mamba2_config's FalconH1Config / NemotronHConfig, short-conv LFM2 / ZAYA1 aside): with the extra
# buffer it asserts --mamba-track-interval >= mamba_chunk_size (hybrid_linear_attn_backend.py 0.5.23 :1075-1083)
MAMBA2_BACKEND_ARCHITECTURES = frozenset({"FalconH1ForCausalLM", *NEMOTRON_H_ARCHITECTURES})


def mamba_chunk_size(architecture: Optional[str], given: Optional[int], legacy_chunk_size: Optional[int]) -> int:
    """The mamba_chunk_size SGLang reads off the model's config (see MAMBA_CHUNK_SIZE_FIXED above): `given` is
    config.json's mamba_chunk_size, `legacy_chunk_size` its chunk_size (Nemotron-H's older name)."""
    arch = architecture or ""
    if arch in MAMBA_CHUNK_SIZE_FIXED:
        return MAMBA_CHUNK_SIZE_FIXED[arch]
    if given is not None:
        return given
    if arch in NEMOTRON_H_ARCHITECTURES and legacy_chunk_size is not None:
        return legacy_chunk_size
    return MAMBA_CHUNK_SIZE_DEFAULTS.get(arch, FLA_CHUNK_SIZE)


# --enable-page-major-kv-layout (which --enable-unified-memory implies) admits only backends whose kernels read
# the per-layer views by their strides (kv_cache_hook.py handle_page_major_kv_layout: 0.5.19 :290-360 ... 0.5.23
# :771-827, the lists unchanged but for tokenspeed_mla, renamed cutedsl_mla in 0.5.23). K/V head dims that differ
# (MiMo-V2 192/128) were refused outright before 0.5.23 ("--enable-unified-memory requires uniform K/V rows" /
# "... does not yet admit asymmetric K/V rows"); 0.5.23 admits them on the backends that carry v_head_dim.
PAGE_MAJOR_SOURCE = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py, handle_page_major_kv_layout"
PAGE_MAJOR_MLA_BACKENDS = ("triton", "fa3", "trtllm_mla", "flashinfer", "cutedsl_mla", "flashmla")
PAGE_MAJOR_MLA_BEFORE_ALIAS = (*PAGE_MAJOR_MLA_BACKENDS, "tokenspeed_mla")  # 0.5.19-0.5.22
TOKENSPEED_MLA_ALIAS_FROM = Version("0.5.23")  # tokenspeed_mla becomes an alias of cutedsl_mla (serving_hook.py)
PAGE_MAJOR_MHA_BACKENDS = ("triton", "fa3", "fa4", "flashinfer", "trtllm_mha")
PAGE_MAJOR_ASYMMETRIC_KV_BACKENDS = ("triton", "fa3", "fa4")  # ASYMMETRIC_KV_BACKENDS
PAGE_MAJOR_ASYMMETRIC_KV_FROM = Version("0.5.23")
# The linear-attention and Mamba kernels that read the strided conv/SSM state of the page-major layout, on every
# model (handle_page_major_kv_layout 0.5.19 :370-392 ... 0.5.23 :828-862): decode triton / flashinfer, prefill
# triton / flashkda and from 0.5.23 flashinfer; MLA (KDA-hybrid) models add cutedsl and helion to both; --mamba-backend
# triton or none.
PAGE_MAJOR_LINEAR_DECODE_BACKENDS = ("triton", "flashinfer")
PAGE_MAJOR_LINEAR_PREFILL_BACKENDS = ("triton", "flashkda")
PAGE_MAJOR_LINEAR_PREFILL_FLASHINFER_FROM = Version("0.5.23")
PAGE_MAJOR_LINEAR_MLA_BACKENDS = ("cutedsl", "helion")
PAGE_MAJOR_MAMBA_BACKEND = "triton"

# --enable-unified-memory's speculative and DCP limits as sglang 0.5.23 has them (kv_cache_hook.py
# handle_unified_memory_pool :528-720, _validate_unified_memory_dcp :723-760; the sets changed in every release
# from 0.5.18, so only 0.5.23's are declared).
UNIFIED_MEMORY_SOURCE = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py, handle_unified_memory_pool"
UNIFIED_MEMORY_SPEC_ALGORITHMS = ("DSPARK", "EAGLE", "EAGLE3", "DFLASH")
UNIFIED_SPEC_VERIFY_BACKENDS = ("triton", "trtllm_mla", "cutedsl_mla", "flashmla", "flashinfer", "fa3")
UNIFIED_SPEC_MHA_BACKENDS = ("triton", "flashinfer", "fa3", "trtllm_mha")  # _SPEC_MHA_AUDITED_BACKENDS
UNIFIED_DSPARK_BACKENDS = (*UNIFIED_SPEC_VERIFY_BACKENDS, "fa4")
UNIFIED_DCP_BACKENDS = ("flashinfer", "trtllm_mla", "cutedsl_mla")
# The FULL prefill CUDA graph builds its block table in _init_full_cg_prefill_metadata, which only fa3/fa4
# implement: with --enable-unified-memory on any other backend SGLang switches prefill capture off, warned only
# (kv_cache_hook.py:271-291 in 0.5.20, :696-716 in 0.5.23). FULL comes from --cuda-graph-config's prefill backend,
# else --cuda-graph-backend-prefill, else Inkling's model default (cuda_graph_hook.py parse_cuda_graph_config and
# apply_inkling_prefill_cuda_graph_default, the same in 0.5.20-0.5.23).
FULL_PREFILL_GRAPH_BACKENDS = ("fa3", "fa4")
INKLING_FULL_PREFILL_GRAPH_ARCHITECTURES = frozenset(
    {"InklingForConditionalGeneration", "InklingForConditionalGenerationMTP"}
)
# Backends that switch off both graph phases before the unified-memory hook runs (attention_hook.py
# handle_attention_backend_compatibility)
NO_CUDA_GRAPH_BACKENDS = ("torch_native", "flex_attention")


# Kimi-K3 with --dcp-size > 1 (arg_groups/model_overrides/kimi_k3.py _kimi_k3_overrides, 0.5.23 :54-113; in
# overrides.py from 0.5.17): decode cutedsl_mla (or none named) becomes prefill trtllm_mla + decode cutedsl_mla,
# aiter is the ROCm path, tokenspeed_mla its own pair before it became cutedsl_mla's alias; any other decode
# backend is an AssertionError.
KIMI_K3_ARCHITECTURE = "KimiK3ForConditionalGeneration"
KIMI_K3_DCP_DECODE_BACKENDS = ("cutedsl_mla", "aiter")
KIMI_K3_DCP_SOURCE = "sglang: python/sglang/srt/arg_groups/model_overrides/kimi_k3.py, _kimi_k3_overrides"
# Kimi-K3 DCP decoding on cutedsl_mla (given, or no decode backend) needs FlashInfer's
# trtllm_batch_decode_with_kv_cache_mla with enable_dcp: "FlashInfer 0.6.17 or newer" (kimi_k3.py:20-37 in 0.5.23,
# overrides.py:413-428 in 0.5.18; 0.5.17 asks for a DCP-patched build, :344-362).
KIMI_K3_DCP_FLASHINFER = "0.6.17"
# The speculative and linear-attention defaults SGLang fills for Kimi's hybrid models (model_hook.py:239-249 in
# 0.5.23, from 0.5.17: kimi_k3_hook.py, the same conditions in every release) and GLM-5-Next (from 0.5.22:
# glm5_next_hook.py:18-35): with speculative decoding an unset --linear-attn-verify-backend becomes nv_cutedsl (on
# SM100 only for GLM-5-Next); Kimi's DSPARK draft on SM100 runs trtllm_mha when no draft backend is given, and its
# KDA decode triton on SM100 with --mamba-ssm-dtype bfloat16 and no decode backend given.
KIMI_HYBRID_ARCHITECTURES = frozenset({"KimiLinearForCausalLM", KIMI_K3_ARCHITECTURE})
KIMI_HYBRID_DEFAULTS_FROM = Version("0.5.17")
GLM5_NEXT_ARCHITECTURE = "Glm5NextForConditionalGeneration"
GLM5_NEXT_DEFAULTS_FROM = Version("0.5.22")
HYBRID_SPEC_VERIFY_BACKEND = "nv_cutedsl"
KIMI_DSPARK_DRAFT_BACKEND = "trtllm_mha"
KIMI_BF16_DECODE_BACKEND = "triton"

# Models whose FlashAttention backend runs "prefill-aware SWA" (model.is_prefill_aware_swa(): prefill tokens stay
# in the window during decode), which asserts page size 1 (flashattention_backend.py 0.5.15 :293-297, 0.5.23
# :257-268; the only such model in every release 0.5.15-0.5.23 is models/unlimited_ocr.py).
PREFILL_AWARE_SWA_ARCHITECTURES = frozenset({"UnlimitedOCRForCausalLM"})
PREFILL_AWARE_SWA_UNIFIED_FROM = Version("0.5.19")  # ... and refuses --enable-unified-memory


# Diffusion LLMs (--dllm-algorithm): overrides.py _dllm_attention_backend (server_args.py _handle_dllm_inference
# from 0.5.6.post2 :2082-2100; 0.5.23 overrides.py:1671-1714). On CUDA with decode CUDA graphs on, SGLang sets
# --attention-backend flashinfer. From 0.5.21 an algorithm may require a backend for every phase instead
# (dllm/algorithm/*.py required_attention_backend): Gemma4Renoise requires triton; from 0.5.22 its
# supported_attention_backends (triton, fa4) are kept as given.
DLLM_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _dllm_attention_backend"
DLLM_FLASHINFER_FROM = Version("0.5.6.post2")
DLLM_CUDA_GRAPH_BACKEND = "flashinfer"
DLLM_REQUIRED_BACKEND_FROM = Version("0.5.21")
DLLM_SUPPORTED_BACKENDS_FROM = Version("0.5.22")
DLLM_ALGORITHM_BACKENDS = {"Gemma4Renoise": ("triton", ("triton", "fa4"))}  # required, supported
# The diffusion LLMs SGLang serves, by architecture (dllm/config.py DllmConfig.from_server_args; --dllm-algorithm
# exists from 0.5.6): (first release listing it, its block size). LLaDA2-MoE from 0.5.6 (:29 in 0.5.6, whose block
# is --dllm-block-size; 32 from 0.5.6.post2, :33-34), SDAR and SDAR-MoE from 0.5.9 (DLLM_PARAMS :35-37 in
# 0.5.9-0.5.15.post1, :37-39 in 0.5.16-0.5.18, :40-42 in 0.5.19-0.5.20, :47-53 in 0.5.21, :53-59 in 0.5.22-0.5.23),
# DiffusionGemma from 0.5.21, whose block is its config.json canvas_length, 256 when absent. `block_size` in
# --dllm-algorithm-config's YAML replaces it (:54 in 0.5.6.post2, :67 in 0.5.10, :154 in 0.5.23). Any other
# architecture is refused: "Unknown diffusion LLM: {arch}" (:33 in 0.5.6, :38 in 0.5.6.post2 and 0.5.7, :40 in
# 0.5.8 and 0.5.8.post1, :46 in 0.5.9-0.5.15.post1, :48 in 0.5.16-0.5.18, :51 in 0.5.19-0.5.20, :66 in 0.5.21,
# :72 in 0.5.22-0.5.23), raised where the config is first built: the scheduler and FlashInfer backend at start
# before 0.5.10, argument resolution from 0.5.10 (server_args.py _handle_dllm_inference with the radix cache on,
# :3554 in 0.5.10; overrides.py _dllm_page_size from 0.5.15, :2015 in 0.5.15, :1736 in 0.5.23).
DLLM_BLOCK_SIZES = MappingProxyType(
    {
        "LLaDA2MoeModelLM": (Version("0.5.6"), 32),
        "SDARForCausalLM": (Version("0.5.9"), 4),
        "SDARMoeForCausalLM": (Version("0.5.9"), 4),
        "DiffusionGemmaForBlockDiffusion": (Version("0.5.21"), None),
    }
)
DLLM_CONFIG_SOURCE = "sglang: python/sglang/srt/dllm/config.py, DllmConfig.from_server_args"
# From 0.5.21 a diffusion LLM and an algorithm may require each other: DLLM_PARAMS' "algorithm" ("{arch} requires
# the {algorithm} diffusion algorithm", dllm/config.py:71-75 in 0.5.21, :77-81 in 0.5.22-0.5.23) and the
# algorithm's supported_architectures ("{algorithm} does not support model architecture {arch}", :76-82 in 0.5.21,
# :82-88 in 0.5.22-0.5.23): DiffusionGemma takes Gemma4Renoise only, and Gemma4Renoise serves DiffusionGemma only
# (dllm/algorithm/gemma4_renoise.py:43 in 0.5.21, :74 in 0.5.22-0.5.23).
DLLM_PAIRED_ALGORITHMS = MappingProxyType({"DiffusionGemmaForBlockDiffusion": "Gemma4Renoise"})
DLLM_PAIRED_FROM = Version("0.5.21")
# The diffusion algorithms, by the first release having them: each dllm/algorithm/*.py module's `Algorithm` class,
# keyed by its class name (dllm/algorithm/__init__.py import_algorithms): LowConfidence from 0.5.6, JointThreshold
# from 0.5.9, Gemma4Renoise from 0.5.21, JointThresholdInDel from 0.5.22. Any other --dllm-algorithm is refused:
# "Unknown diffusion LLM algorithm: {name}" (get_algorithm_cls, __init__.py:36 in 0.5.6-0.5.20, :35 in 0.5.21-0.5.23),
# when the algorithm is built at start before 0.5.21 (dllm/algorithm/base.py DllmAlgorithm.from_server_args), in
# argument resolution from 0.5.21 (arg_groups/dllm_hook.py handle_dllm_inference, :29 in 0.5.21, :30 in 0.5.23).
DLLM_ALGORITHMS_SINCE = MappingProxyType(
    {
        "LowConfidence": Version("0.5.6"),
        "JointThreshold": Version("0.5.9"),
        "Gemma4Renoise": Version("0.5.21"),
        "JointThresholdInDel": Version("0.5.22"),
    }
)
DLLM_ALGORITHM_SOURCE = "sglang: python/sglang/srt/dllm/algorithm/__init__.py, get_algorithm_cls"
# The algorithm every release has and no model is refused (no supported_architectures, no config.json fields it
# needs, unlike JointThresholdInDel's delete_token_id / split_token_id, dllm/config.py:90-107 in 0.5.22): the fix
# offered for a name or pairing SGLang refuses.
DLLM_GENERIC_ALGORITHM = "LowConfidence"
DLLM_CANVAS_DEFAULT = 256
# The page size then aligned to the block size: with the radix cache on, a page size that is not a multiple of
# the block becomes the block (server_args.py _handle_dllm_inference from 0.5.10, :3555-3559 in 0.5.10, :6101-6105
# in 0.5.14; overrides.py _dllm_page_size from 0.5.15, :2016-2020 in 0.5.15, :1737-1741 in 0.5.23); from 0.5.15
# the same pass also caps a larger page at the block (:2021-2029 in 0.5.15, :1742-1749 in 0.5.23), which 0.5.10-0.5.14 did only in the scheduler's own
# page size (managers/scheduler.py:450-456 in 0.5.10, :604-610 in 0.5.14, after the model runner has its page).
DLLM_PAGE_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _dllm_page_size; dllm/config.py, DllmConfig"
DLLM_PAGE_ALIGN_FROM = Version("0.5.10")
DLLM_PAGE_CAP_FROM = Version("0.5.15")


# FA4 image masks (0.5.22-0.5.23): a Gemma-4 multimodal prefill with images on an fa4 prefill backend gets
# image_token_ranges in its FlashAttention metadata (models/gemma4_mm.py prepare_attn_masks, the fa_impl_ver == 4
# branch, :344-380 in 0.5.22, :343-379 in 0.5.23, called for an EXTEND forward with image inputs at :688-696 /
# :687-695; Gemma4UnifiedForConditionalGeneration inherits that forward, gemma4_diffusion.py:531-534 calls it on
# DiffusionGemma's context pass). FlashAttentionBackend.forward_extend then raises NotImplementedError when that
# forward runs prefill CP, skips the KV cache (embedding mode), or passes a score_mod (flashattention_backend.py
# :1518-1534 in 0.5.22, :1602-1618 in 0.5.23).
FA4_IMAGE_MASK_ARCHITECTURES = frozenset(
    {"Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion"}
)
FA4_IMAGE_MASK_FROM = Version("0.5.22")


# cutedsl_mla serves decode only; with no --prefill-attention-backend SGLang fills prefill with trtllm_mla
# (server_args.py :2930-2976 in 0.5.13, overrides.py _cutedsl_prefill_backend_fill from 0.5.16; 0.5.23 :1232-1258).
CUTEDSL_PREFILL_FILL_FROM = Version("0.5.13")


# MiniMax-M3.1 NVFP4 (arg_groups/model_overrides/minimax_m3.py _minimax_m3_overrides, new in 0.5.23 :38-124):
# the checkpoint's quantization resolves to minimax_m3_nvfp4; then page size 128 (any other given is refused), on
# Blackwell an fp8_e4m3 KV cache (auto becomes it, any other is refused) and trtllm_mha where no backend is named,
# fa3 elsewhere; speculative decoding DSPARK or DFLASH only.
MINIMAX_M3_ARCHITECTURES = frozenset({"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"})
MINIMAX_M3_NVFP4 = "minimax_m3_nvfp4"
MINIMAX_M3_NVFP4_FROM = Version("0.5.23")
MINIMAX_M3_NVFP4_PAGE = 128
MINIMAX_M3_NVFP4_KV = "fp8_e4m3"
MINIMAX_M3_NVFP4_SPECULATIVE = ("DSPARK", "DFLASH")
MINIMAX_M3_SOURCE = "sglang: python/sglang/srt/arg_groups/model_overrides/minimax_m3.py, _minimax_m3_overrides"


def fa3_default_architectures(release: Version) -> Optional[frozenset[str]]:
    """The MHA architectures SGLang defaults to fa3 on SM90 in one release; None: every one (0.5.8+)."""
    if release >= FA3_DEFAULT_ARCHITECTURES_UNTIL:
        return None
    return next(archs for since, archs in FA3_DEFAULT_ARCHITECTURES if release >= since)


# `--speculative-draft-attention-backend`: choices.py DRAFT_ATTENTION_BACKEND_CHOICES.
DRAFT_ATTENTION_BACKENDS = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")

# The backends the DFLASH draft worker keeps (others are replaced by flashinfer), by release: each entry the first
# release with that list. Before 0.5.17 trtllm_mha is always replaced; from then only for a draft that is neither
# all-sliding nor causal.
DFLASH_DRAFT_SOURCE = (
    "sglang: speculative/dflash_worker.py supported_draft_backends (0.5.11 :102, 0.5.13 :104), "
    "arg_groups/speculative_hook.py _resolve_dflash_draft_attention_backend (0.5.15 :263, 0.5.17 :443-450, "
    "DRAFT_ATTENTION_BACKEND_CHOICES from 0.5.20 :730)"
)
DFLASH_DRAFT_BACKENDS = (
    (Version("0.5.20"), DRAFT_ATTENTION_BACKENDS),
    (Version("0.5.17"), ("flashinfer", "fa3", "fa4", "triton", "trtllm_mha", "ascend")),
    (Version("0.5.13"), ("flashinfer", "fa3", "fa4", "triton", "ascend")),
    (Version("0.5.11"), ("flashinfer", "fa3", "fa4", "triton")),
)


def dflash_draft_backends(release: Version) -> tuple[str, ...]:
    """The attention backends SGLang's DFLASH draft worker keeps in one release (the oldest list before 0.5.11)."""
    return next((kept for since, kept in DFLASH_DRAFT_BACKENDS if release >= since), DFLASH_DRAFT_BACKENDS[-1][1])


def declaration(name: str, release: Union[Version, str, None] = None) -> BackendInfo:
    """An SGLang backend's facts as they hold in one release (the newest verified one when None): the newest
    declaration with the facts of every era containing the release applied, in declared order."""
    base = SGLANG_BACKENDS[name]
    try:
        version = parse_version(str(release or NEWEST_KNOWN["sglang"]))  # parsed once for every era
    except InvalidVersion:  # an unreadable release is inside no era (general-engine-version says so)
        return base
    if base.eras is not None:
        eras = base.eras
    else:
        newest = _newest_delta()
        eras = _file_eras().get(name, ()) if newest is not None and version < newest else ()
    facts: dict[str, Any] = {}
    dropped: frozenset[str] = frozenset()
    for era in eras:
        if era.holds_for(version):
            facts.update(era.facts)
            dropped |= era.drop_features
    if dropped:
        facts["features"] = facts.get("features", base.features) - dropped
    return base._replace(**facts) if facts else base


def declarations(release: Union[Version, str, None] = None) -> dict[str, BackendInfo]:
    """Every SGLang backend, by name, as declared for one release (the newest verified one when None)."""
    return {name: declaration(name, release) for name in SGLANG_BACKENDS}


def with_feature(feature: str, backends: Optional[Mapping[str, BackendInfo]] = None) -> tuple[str, ...]:
    """The SGLang backends that declare `feature`, in declaration order: of `backends` (one release's
    declarations, e.g. Target.sglang_backends), else of the newest verified release."""
    declared = backends if backends is not None else declarations()
    return tuple(name for name, info in declared.items() if feature in info.features)
