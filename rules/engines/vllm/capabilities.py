"""vLLM's attention backends (`--attention-backend NAME`) with their declared capabilities, each with its source.

Read from the vllm 0.33.0 wheel (`pip download --no-deps vllm`, unzipped, not installed). vLLM declares
capabilities on each backend class (`supported_dtypes`, `supports_head_size`, `supports_compute_capability`,
...) and `AttentionBackend.validate_configuration` turns every mismatch into one reason string; the CUDA
platform raises `Selected backend ... is not valid for this configuration. Reason: [...]` for an explicit
choice, or tries its priority list. This module holds those declarations as data, once each:

- RELEASES: one declaration per range of vLLM releases (0.11.1-0.12.x, 0.13.0-0.17.x, 0.18.0-0.25.x and 0.26.0
  on, the last three with 0.33.0's backends; the release files' capability deltas (changes.py) give the older
  values read in the 0.11.1-0.30 wheels; the reasons differ before 0.13.0, before 0.18.0 (the sink text) and
  before 0.26.0): the backends (VllmBackend, each fact's source: `source_of`) and the reasons;
- REASONS: every reason validate_configuration or a backend's supports_combination gives, with its
  condition and source;
- `rejections(backend, query)`: the one validator, every reason that holds, once; `validate` is the list
  vLLM prints (select.py walks the priority list with it). The rules (reasons.py, rules/) read these, and judge
  no reason themselves.

Assumptions, stated once: the standard CUDA wheel, so vllm_flash_attn ships FA2, FA3 (built for 9.0a) and
FA4 (CuTe DSL, vendored in vllm/vllm_flash_attn/cute: it needs nvidia-cutlass-dsl and quack-kernels, not the
pip flash-attn-4; the installed pair is judged by rule vllm-fa4-library) and FlashMLA is compiled;
FlashInfer's TRT-LLM cubins are available (flashinfer-cubin or
NVIDIA's artifactory reachable); VLLM_BATCH_INVARIANT is off; no decode/prefill context parallelism.
Compute capabilities are (major, minor) tuples.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Mapping, NamedTuple, Optional, Union

from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.engines.sglang.capabilities import BackendInfo
from attn_preflight.rules.engines.vllm import fa4 as vllm_fa4
from attn_preflight.rules.knowledge import NEWEST_KNOWN, data_text

VLLM_VERSION = NEWEST_KNOWN["vllm"]  # the release every fact below was read from
REPO = f"vllm-project/vllm@v{VLLM_VERSION}"
BACKEND_PY = "vllm/v1/attention/backend.py"
CUDA_PY = "vllm/platforms/cuda.py"
FA_UTILS = "vllm/v1/attention/backends/fa_utils.py"
FA_IFACE = "vllm/vllm_flash_attn/flash_attn_interface.py"
REGISTRY = "vllm/v1/attention/backends/registry.py"

CC = tuple[int, int]


def src(path: str, where: str) -> str:
    return f"{REPO}: {path}, {where}"


# --- reason strings, verbatim from AttentionBackend.validate_configuration (backend.py) ----------------
R_HEAD_SIZE = "head_size not supported"
R_DTYPE = "dtype not supported"
R_KV_DTYPE = "kv_cache_dtype not supported"
R_BLOCK_SIZE = "block_size not supported"
R_MLA = "MLA not supported"
R_NON_MLA = "non-MLA not supported"
R_SINKS = "attention sinks not supported"
R_SPARSE = "sparse not supported"
R_NON_SPARSE = "non-sparse not supported"
R_CC = "compute capability not supported"
R_SLIDING_WINDOW = "sliding window not supported"
VALIDATE_SOURCE = src(BACKEND_PY, "AttentionBackend.validate_configuration")
# The first release whose get_attn_backend_cls validates backends (validate_configuration, vllm PR #24794):
# 0.11.1's pre-release rc7 already does (vllm#28589 quotes its "sink setting not supported"); 0.11.0 does not.
VALIDATE_SINCE = "0.11.1rc7"

NONE_VALID = "No valid attention backend found for cuda with {config}. Reasons: {reasons}."
SELECT_SOURCE = src(CUDA_PY, "CudaPlatformBase.get_attn_backend_cls")
UNKNOWN_BACKEND = "Unknown attention backend: '{name}'. Valid options are: {valid}"
UNKNOWN_BACKEND_SOURCE = src(REGISTRY, "_AttentionBackendEnumMeta.__getitem__")


@dataclass(frozen=True)
class Archs:
    """A set of compute capabilities: the union of a range [lo, hi], whole majors, and exact capabilities."""

    lo: Optional[CC] = None
    hi: Optional[CC] = None
    majors: frozenset[int] = frozenset()
    exact: frozenset[CC] = frozenset()

    def __contains__(self, cc: CC) -> bool:
        ranged = (
            (self.lo is not None or self.hi is not None)
            and (self.lo is None or cc >= self.lo)
            and (self.hi is None or cc <= self.hi)
        )
        return ranged or cc[0] in self.majors or cc in self.exact

    def describe(self) -> str:
        parts = []
        if self.lo is not None and self.hi is not None:
            parts.append(f"{self.lo[0]}.{self.lo[1]} to {self.hi[0]}.{self.hi[1]}")
        elif self.lo is not None:
            parts.append(f">= {self.lo[0]}.{self.lo[1]}")
        elif self.hi is not None:
            parts.append(f"<= {self.hi[0]}.{self.hi[1]}")
        parts += [f"{m}.x" for m in sorted(self.majors)]
        parts += [f"{m}.{n}" for m, n in sorted(self.exact)]
        return " or ".join(parts) if parts else "none"


def majors(*values: int) -> Archs:
    return Archs(majors=frozenset(values))


ANY_ARCH = Archs(lo=(0, 0))
NO_ARCH = Archs()


@dataclass(frozen=True)
class MultipleOf:
    base: int


BlockSize = Union[int, MultipleOf]


@dataclass(frozen=True)
class HeadSizes:
    """`supports_head_size`: a list, or bounds with a divisor; `wide` raises the bound on some archs."""

    allowed: Optional[frozenset[int]] = None  # None: not a fixed list
    minimum: Optional[int] = None
    maximum: Optional[int] = None
    multiple_of: Optional[int] = None
    wide_max: Optional[int] = None  # the bound where `wide_archs` hold (FLASH_ATTN with FA4: 512)
    wide_archs: Archs = NO_ARCH

    def accepts(self, head_size: int, cc: CC) -> bool:
        if self.allowed is not None:
            return head_size in self.allowed
        if self.multiple_of and head_size % self.multiple_of:
            return False
        if self.minimum is not None and head_size < self.minimum:
            return False
        limit = self.wide_max if self.wide_max is not None and cc in self.wide_archs else self.maximum
        return limit is None or head_size <= limit

    def describe(self, cc: CC) -> str:
        if self.allowed is not None:
            return "one of " + ", ".join(str(h) for h in sorted(self.allowed))
        parts = []
        if self.multiple_of:
            parts.append(f"a multiple of {self.multiple_of}")
        if self.minimum is not None:
            parts.append(f">= {self.minimum}")
        limit = self.wide_max if self.wide_max is not None and cc in self.wide_archs else self.maximum
        if limit is not None:
            parts.append(f"<= {limit}")
        return ", ".join(parts) if parts else "any"


ANY_HEAD = HeadSizes()
HALF = frozenset({"float16", "bfloat16"})
HALF_AND_FP32 = frozenset({"float16", "bfloat16", "float32"})
BF16 = frozenset({"bfloat16"})
UNQUANTISED_KV = frozenset({"auto", "float16", "bfloat16"})


@dataclass(frozen=True)
class VllmBackend:
    """One member of vLLM's AttentionBackendEnum with what its class declares.

    `modelled=False`: the name is valid but its constraints are not encoded here (ROCm/CPU/XPU backends,
    model-driven DeepSeek-V4/MiniMax backends, experimental variants); rules answer skip for it, never pass.
    """

    name: str
    title: str
    source: str  # the backend class
    platform: str = "cuda"  # cuda | rocm | cpu | xpu | model (selected by one model's own layers)
    modelled: bool = True
    mla: bool = False
    sparse: bool = False
    archs: Archs = ANY_ARCH  # supports_compute_capability
    dtypes: frozenset[str] = HALF  # supported_dtypes (model dtype)
    kv_dtypes: Optional[frozenset[str]] = UNQUANTISED_KV  # supported_kv_cache_dtypes; None: any
    kv_dtype_archs: tuple[tuple[str, Archs], ...] = ()  # a KV dtype the class accepts only on some archs
    head_sizes: HeadSizes = ANY_HEAD
    block_sizes: tuple[BlockSize, ...] = (MultipleOf(1),)  # get_supported_kernel_block_sizes
    sinks: Archs = NO_ARCH  # where supports_sink() is True
    sink_fa_versions: frozenset[int] = frozenset({3, 4})  # FLASH_ATTN: the FA versions that take sinks
    sliding_window: bool = False  # supports_sliding_window
    qk_nope_head_dims: Optional[tuple[int, ...]] = None  # supports_combination's qk_nope_head_dim list; None: any
    auto_selected: bool = False  # in the CUDA priority list (_get_backend_priorities)
    notes: str = ""
    sources: Mapping[str, str] = field(default_factory=dict)  # fact -> where it was read, beyond `source`

    def __post_init__(self) -> None:
        object.__setattr__(self, "sources", MappingProxyType(dict(self.sources)))  # read-only, like the rest

    def source_of(self, fact: str) -> str:
        """Where this backend's `fact` (a field name) was read: its own entry in `sources`, else the class."""
        return self.sources.get(fact, self.source)

    def accepts_kv_dtype(self, kv_dtype: str, cc: CC) -> bool:
        if self.kv_dtypes is not None and kv_dtype not in self.kv_dtypes:
            return False
        return all(cc in archs for name, archs in self.kv_dtype_archs if name == kv_dtype)

    def accepts_block_size(self, block_size: int) -> bool:
        """AttentionBackend.supports_block_size: the block size is a multiple of some kernel block size."""
        return any(block_size % (s.base if isinstance(s, MultipleOf) else s) == 0 for s in self.block_sizes)

    def describe_block_sizes(self) -> str:
        return " or ".join(
            f"a multiple of {s.base}" if isinstance(s, MultipleOf) else f"a multiple of {s}" for s in self.block_sizes
        )


BACKENDS_DIR = "vllm/v1/attention/backends"
MLA_COMMON = src(
    "vllm/model_executor/layers/attention/mla_attention.py",
    "MLACommonBackend.get_supported_head_sizes -> [320, 512, 576], is_mla -> True",
)
MLA_HEADS = HeadSizes(allowed=frozenset({320, 512, 576}))

# FA versions the vllm_flash_attn fork can run per arch (flash_attn_interface._is_fa{2,3,4}_supported).
FA2_ARCHS = Archs(lo=(8, 0))
FA3_ARCHS = majors(9)
FA4_ARCHS = majors(9, 10, 11)
FA_SUPPORTED: Mapping[int, Archs] = MappingProxyType({2: FA2_ARCHS, 3: FA3_ARCHS, 4: FA4_ARCHS})
FA_UNSUPPORTED_REASON: Mapping[int, str] = MappingProxyType(
    {
        2: "FA2 is only supported on devices with compute capability >= 8",
        3: "FA3 is only supported on devices with compute capability 9.x",
        4: "FA4 is only supported on devices with compute capability 9.x, 10.x, or 11.x",
    }
)
FA_SUPPORT_SOURCE = src(FA_IFACE, "_is_fa2_supported / _is_fa3_supported / _is_fa4_supported")
FA_VERSION_SOURCE = src(FA_UTILS, "get_flash_attn_version")

_FA = f"{BACKENDS_DIR}/flash_attn.py"
_FI = f"{BACKENDS_DIR}/flashinfer.py"

BACKEND_LIST: tuple[VllmBackend, ...] = (
    VllmBackend(
        "FLASH_ATTN",
        "FlashAttention 2/3/4 (vllm_flash_attn)",
        src(_FA, "FlashAttentionBackend"),
        archs=Archs(lo=(8, 0)),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        kv_dtype_archs=(("fp8", majors(9, 10)), ("fp8_e4m3", majors(9, 10))),
        head_sizes=HeadSizes(multiple_of=8, maximum=256, wide_max=512, wide_archs=FA4_ARCHS),
        block_sizes=(MultipleOf(16),),
        sinks=majors(9, 10),
        sliding_window=True,
        auto_selected=True,
        notes="FA version per arch: FA3 on 9.x, FA4 on 10.x, FA2 elsewhere (get_flash_attn_version); fp8 KV "
        "only where FA3 (SM90) or FA4 (SM90 head_size 512, SM100) resolves",
        sources={
            "archs": src(_FA, "FlashAttentionBackend.supports_compute_capability (>= 8.0)"),
            "head_sizes": src(_FA, "FlashAttentionBackend.supports_head_size (% 8, <= 256, <= 512 if FA4)"),
            "kv_dtypes": src(
                _FA, "FlashAttentionBackend.supports_kv_cache_dtype -> fa_utils.flash_attn_supports_kv_cache_dtype"
            ),
            "sinks": src(
                _FA,
                "FlashAttentionBackend.supports_sink -> fa_utils.flash_attn_supports_sinks "
                "(FA version in (3, 4)); supports_combination 'sink not supported on compute "
                "capability < 9.0'",
            ),
            "block_sizes": src(
                _FA,
                "FlashAttentionBackend.get_supported_kernel_block_sizes (MultipleOf(16); "
                "128 for FA4's Blackwell hd256 kernel, 64 for SM90 FA4 fp8 KV hd512)",
            ),
        },
    ),
    VllmBackend(
        "FLASHINFER",
        "FlashInfer (native + TRT-LLM gen / XQA)",
        src(_FI, "FlashInferBackend"),
        archs=Archs(lo=(8, 0), hi=(12, 1)),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", "nvfp4_4over6"}),
        kv_dtype_archs=(("nvfp4", majors(8, 9, 10, 12)), ("nvfp4_4over6", majors(10))),
        head_sizes=HeadSizes(allowed=frozenset({64, 128, 256, 512})),
        block_sizes=(16, 32, 64),
        sinks=Archs(majors=frozenset({10, 12}), exact=frozenset({(9, 0)})),
        sliding_window=True,
        auto_selected=True,
        notes="SM75 excluded until flashinfer#3621 lands (comment in supports_compute_capability); page sizes "
        "128..1024 only for GQA on SM100 with TRT-LLM",
        sources={
            "archs": src(_FI, "FlashInferBackend.supports_compute_capability (8.0 <= cc <= 12.1)"),
            "kv_dtypes": src(
                _FI,
                "FlashInferBackend.supports_kv_cache_dtype (nvfp4: FA2 path on SM8x/9x/12x "
                "takes only 'nvfp4'; SM10x needs TRT-LLM prefill+decode)",
            ),
            "sinks": src(
                _FI,
                "FlashInferBackend.supports_sink -> vllm/utils/flashinfer.py "
                "supports_trtllm_attention (XQA decode on SM90 / SM12x, TRT-LLM on SM10x)",
            ),
            "head_sizes": src(_FI, "FlashInferBackend.get_supported_head_sizes"),
        },
    ),
    VllmBackend(
        "TRITON_ATTN",
        "Triton unified attention",
        src(f"{BACKENDS_DIR}/triton_attn.py", "TritonAttentionBackend"),
        dtypes=HALF_AND_FP32,
        kv_dtypes=frozenset(
            {
                "auto",
                "float16",
                "bfloat16",
                "fp8",
                "fp8_e4m3",
                "fp8_e5m2",
                "int4_per_token_head",
                "int8_per_token_head",
                "fp8_per_token_head",
            }
        ),
        head_sizes=HeadSizes(minimum=32),
        block_sizes=(MultipleOf(16),),
        sinks=ANY_ARCH,
        sliding_window=True,
        auto_selected=True,
    ),
    VllmBackend(
        "FLEX_ATTENTION",
        "PyTorch FlexAttention",
        src(f"{BACKENDS_DIR}/flex_attention.py", "FlexAttentionBackend"),
        dtypes=HALF_AND_FP32,
        block_sizes=(MultipleOf(16),),
        sliding_window=True,
        auto_selected=True,
    ),
    VllmBackend(
        "TURBOQUANT",
        "TurboQuant compressed KV",
        src(f"{BACKENDS_DIR}/turboquant_attn.py", "TurboQuantAttentionBackend"),
        kv_dtypes=frozenset({"turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"}),
        block_sizes=(16, 32, 64, 128),
        auto_selected=True,
        notes="selected only for --kv-cache-dtype turboquant_*; forces flash_attn_version=2",
    ),
    VllmBackend(
        "B12X",
        "b12x paged attention (consumer Blackwell)",
        src(f"{BACKENDS_DIR}/b12x.py", "B12xPagedAttentionBackend"),
        archs=Archs(exact=frozenset({(12, 0), (12, 1)})),
        dtypes=BF16,
        kv_dtypes=None,
        head_sizes=HeadSizes(allowed=frozenset({64, 128, 192, 256})),
        block_sizes=(64, 128),
        sinks=ANY_ARCH,
        sliding_window=True,
        notes="not in the CUDA priority list: chosen only by name",
    ),
    VllmBackend(
        "HPC_ATTN",
        "Tencent hpc-ops attention (Hy3)",
        src(f"{BACKENDS_DIR}/hpc_attn.py", "HpcAttentionBackend"),
        archs=Archs(exact=frozenset({(9, 0)})),
        kv_dtypes=frozenset({"auto", "bfloat16", "fp8_e4m3"}),
        head_sizes=HeadSizes(allowed=frozenset({128})),
        block_sizes=(64,),
        notes="needs the hpc module (github.com/Tencent/hpc-ops); registry comment: Hy3 model only",
    ),
    # --- MLA -------------------------------------------------------------------------------------------
    VllmBackend(
        "FLASHMLA",
        "FlashMLA (dense)",
        src(f"{BACKENDS_DIR}/mla/flashmla.py", "FlashMLABackend"),
        mla=True,
        archs=majors(9, 10),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        head_sizes=MLA_HEADS,
        block_sizes=(64,),
        auto_selected=True,
        notes="supports_compute_capability allows 9.x and 10.x, but supports_combination -> "
        "is_flashmla_dense_supported allows Hopper only",
        sources={
            "head_sizes": MLA_COMMON,
            "archs": src(
                f"{BACKENDS_DIR}/mla/flashmla.py",
                "FlashMLABackend.supports_compute_capability; "
                "vllm/v1/attention/ops/flashmla.py is_flashmla_dense_supported",
            ),
        },
    ),
    VllmBackend(
        "FLASHMLA_SPARSE",
        "FlashMLA sparse (DeepSeek-V3.2 DSA)",
        src(f"{BACKENDS_DIR}/mla/flashmla_sparse.py", "FlashMLASparseBackend"),
        mla=True,
        sparse=True,
        archs=majors(9, 10),
        dtypes=BF16,
        kv_dtypes=frozenset({"auto", "bfloat16", "fp8_ds_mla", "fp8", "nvfp4_ds_mla"}),
        kv_dtype_archs=(("nvfp4_ds_mla", majors(10)),),
        head_sizes=HeadSizes(allowed=frozenset({512, 576})),
        block_sizes=(MultipleOf(64),),
        auto_selected=True,
        notes="'fp8' is an alias of fp8_ds_mla; head_size 512 only for rope-free models on SM90",
    ),
    VllmBackend(
        "CUTLASS_MLA",
        "CUTLASS MLA (SM100)",
        src(f"{BACKENDS_DIR}/mla/cutlass_mla.py", "CutlassMLABackend"),
        mla=True,
        archs=majors(10),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        head_sizes=MLA_HEADS,
        block_sizes=(128,),
        auto_selected=True,
        sources={"head_sizes": MLA_COMMON},
    ),
    VllmBackend(
        "FLASH_ATTN_MLA",
        "FlashAttention 3 MLA",
        src(f"{BACKENDS_DIR}/mla/flashattn_mla.py", "FlashAttnMLABackend"),
        mla=True,
        archs=majors(9),
        head_sizes=MLA_HEADS,
        block_sizes=(MultipleOf(16),),
        auto_selected=True,
        notes="supports_combination: 'FlashAttention MLA not supported on this device' unless FA3 on 9.x "
        "(fa_utils.flash_attn_supports_mla)",
        sources={"head_sizes": MLA_COMMON},
    ),
    VllmBackend(
        "TRITON_MLA",
        "Triton MLA",
        src(f"{BACKENDS_DIR}/mla/triton_mla.py", "TritonMLABackend"),
        mla=True,
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        block_sizes=(MultipleOf(16),),
        auto_selected=True,
        notes="TritonMLAImpl raises for fp8 KV below SM89 and bfloat16 KV below SM80",
    ),
    VllmBackend(
        "FLASHINFER_MLA",
        "FlashInfer MLA (TRT-LLM gen, SM100)",
        src(f"{BACKENDS_DIR}/mla/flashinfer_mla.py", "FlashInferMLABackend"),
        mla=True,
        archs=majors(10),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        head_sizes=MLA_HEADS,
        block_sizes=(32, 64),
        qk_nope_head_dims=(64, 128, 192),
        auto_selected=True,
        notes="supports_combination: the model's qk_nope_head_dim must be one FlashInfer's MLA kernel takes",
        sources={
            "head_sizes": MLA_COMMON,
            "qk_nope_head_dims": src(
                f"{BACKENDS_DIR}/mla/flashinfer_mla.py", "FlashInferMLABackend.supports_combination"
            ),
        },
    ),
    VllmBackend(
        "TOKENSPEED_MLA",
        "TokenSpeed MLA (SM100, FP8 KV)",
        src(f"{BACKENDS_DIR}/mla/tokenspeed_mla.py", "TokenspeedMLABackend"),
        mla=True,
        archs=majors(10),
        kv_dtypes=frozenset({"fp8", "fp8_e4m3"}),
        head_sizes=MLA_HEADS,
        block_sizes=(32, 64),
        auto_selected=True,
        notes="needs `pip install tokenspeed-mla`; DeepSeek-R1 dims only (128/64/128)",
        sources={"head_sizes": MLA_COMMON},
    ),
    VllmBackend(
        "FLASHINFER_MLA_SPARSE",
        "FlashInfer sparse MLA (TRT-LLM gen, SM100)",
        src(f"{BACKENDS_DIR}/mla/flashinfer_mla_sparse.py", "FlashInferMLASparseTRTLLMBackend"),
        mla=True,
        sparse=True,
        archs=majors(10),
        kv_dtypes=frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3"}),
        head_sizes=HeadSizes(allowed=frozenset({512, 576})),
        block_sizes=(MultipleOf(32),),
        auto_selected=True,
    ),
    VllmBackend(
        "FLASHINFER_MLA_SPARSE_SM90",
        "FlashInfer sparse MLA (SM90)",
        src(f"{BACKENDS_DIR}/mla/flashinfer_mla_sparse_sm90.py", "FlashInferMLASparseSM90Backend"),
        mla=True,
        sparse=True,
        archs=majors(9),
        dtypes=BF16,
        kv_dtypes=frozenset({"auto", "bfloat16", "fp8", "fp8_e4m3"}),
        head_sizes=HeadSizes(allowed=frozenset({512, 576})),
        block_sizes=(MultipleOf(64),),
        auto_selected=True,
        notes="needs FlashInfer >= 0.6.18; kv_lora_rank 512",
    ),
    VllmBackend(
        "FLASH_ATTN_MLA_SPARSE",
        "FlashAttention 3 sparse MLA (SM90)",
        src(f"{BACKENDS_DIR}/mla/flashattn_mla_sparse.py", "FlashAttnMLASparseBackend"),
        mla=True,
        sparse=True,
        archs=majors(9),
        block_sizes=(MultipleOf(64),),
        auto_selected=True,
    ),
    VllmBackend(
        "FLASH_ATTN_MLA_SPARSE_FA4",
        "FlashAttention 4 sparse MLA decode (SM100)",
        src(f"{BACKENDS_DIR}/mla/flashattn_mla_sparse.py", "FlashAttnMLASparseFA4Backend"),
        mla=True,
        sparse=True,
        archs=majors(10),
        dtypes=BF16,
        kv_dtypes=frozenset({"auto", "bfloat16"}),
        head_sizes=HeadSizes(allowed=frozenset({576})),
        block_sizes=(MultipleOf(64),),
        auto_selected=True,
    ),
    VllmBackend(
        "FLASHINFER_MLA_SPARSE_SM120",
        "FlashInfer sparse MLA (SM120)",
        src(f"{BACKENDS_DIR}/mla/flashinfer_mla_sparse.py", "FlashInferMLASparseSM120Backend"),
        mla=True,
        sparse=True,
        modelled=False,
        auto_selected=True,
        notes="constraints not modelled here",
    ),
)

# Valid names that this module does not model: name -> (platform, where it lives).
_UNMODELLED: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "FLASH_ATTN_DIFFKV": ("cuda", "flash_attn_diffkv.py: FLASH_ATTN for models whose K and V head dims differ"),
        "TRITON_ATTN_DIFFKV": ("cuda", "triton_attn_diffkv.py: TRITON_ATTN for diff-KV models"),
        "TRITON_FLASH_ATTN": ("cuda", "triton_flash_attn.py: Hopper mm-prefix composite"),
        "TRITON_FLASHINFER": ("cuda", "triton_flashinfer.py: Blackwell mm-prefix composite"),
        "ROCM_ATTN": ("rocm", "rocm_attn.py"),
        "ROCM_SEGMENTED_ATTN": ("rocm", "rocm_segmented_attn.py"),
        "ROCM_AITER_MLA": ("rocm", "mla/rocm_aiter_mla.py"),
        "ROCM_AITER_TRITON_MLA": ("rocm", "mla/aiter_triton_mla.py"),
        "ROCM_AITER_FA": ("rocm", "rocm_aiter_fa.py"),
        "ROCM_AITER_MLA_SPARSE": ("rocm", "mla/rocm_aiter_mla_sparse.py"),
        "ROCM_AITER_UNIFIED_ATTN": ("rocm", "rocm_aiter_unified_attn.py"),
        "ROCM_OCTAVE": ("rocm", "rocm_octave_attn.py"),
        "XPU_MLA_SPARSE": ("xpu", "mla/xpu_mla_sparse.py"),
        "CPU_ATTN": ("cpu", "cpu_attn.py"),
        "CPU_MLA": ("cpu", "mla/cpu_mla.py"),
        "AMX_MLA": ("cpu", "mla/amx_mla.py"),
        "FLASHMLA_SPARSE_DSV4": ("model", "vllm/models/deepseek_v4: selected by the DeepSeek-V4 layer"),
        "FLASHINFER_MLA_SPARSE_DSV4": ("model", "vllm/models/deepseek_v4"),
        "ROCM_FLASHMLA_SPARSE_DSV4": ("model", "vllm/models/deepseek_v4 (ROCm)"),
        "FLASHMLA_SPARSE_DSV41": ("model", "vllm/models/deepseek_v41"),
        "FLASHINFER_MLA_SPARSE_DSV41": ("model", "vllm/models/deepseek_v41"),
        "ROCM_FLASHMLA_SPARSE_DSV41": ("model", "vllm/models/deepseek_v41 (ROCm)"),
        "FLASHMLA_MEGA_ATTN_DSV41": ("model", "vllm/models/deepseek_v41"),
        "MINIMAX_M3_SPARSE": ("model", "vllm/models/minimax_m3"),
        "CUTLASS_MSA": ("model", "AttentionConfig.__post_init__: an alias that only picks MiniMax-M3's decode kernel"),
        "TRITON_MSA": ("model", "AttentionConfig.__post_init__: an alias that only picks MiniMax-M3's decode kernel"),
        "STEP5_DSA": ("model", "vllm/models/step5"),
        "ULTRAQUANT": ("cuda", "ultraquant_attn.py: packed-KV backend for --kv-cache-dtype ultraquant_4bit"),
        "NO_ATTENTION": ("any", "no_attention.py: for attention-free models"),
    }
)

# In AttentionBackendEnum but unusable as --attention-backend: their class path is empty, so
# AttentionBackendEnum.get_path raises "Backend {name} must be registered before use." (registry.py).
UNREGISTERED: Mapping[str, str] = MappingProxyType(
    {"TORCH_SDPA": "only a tag for vision-encoder attention", "CUSTOM": "a placeholder for plug-ins"}
)

ENUM_SOURCE = (
    "vllm-project/vllm: the attention-backend enum (_Backend, then AttentionBackendEnum) in the 37 wheels "
    "0.10.0-0.33.0 (rules/engines/vllm/backend_enum.json)"
)

# The backends of the newest declared range (RELEASES), modelled and not, by name (read-only).
BY_NAME: Mapping[str, VllmBackend] = MappingProxyType(
    {
        **{b.name: b for b in BACKEND_LIST},
        **{
            name: VllmBackend(
                name,
                name,
                src(f"{BACKENDS_DIR}", where),
                platform=platform,
                modelled=False,
                archs=ANY_ARCH if platform in ("cuda", "model", "any") else NO_ARCH,
            )
            for name, (platform, where) in _UNMODELLED.items()
        },
    }
)

MLA_BACKENDS = frozenset(name for name, b in BY_NAME.items() if b.mla)  # is_mla() is True

# Every value `--attention-backend` accepts in vLLM 0.33.0 (case-insensitive; "auto" means no choice).
VALID_NAMES = frozenset(BY_NAME) | frozenset(UNREGISTERED)
# The attention-backend enum's members in every release read from the wheels, 0.10.0 to 0.33.0
# (vllm_backend_enum.json, written by bench/vllm_backend_enum.py: `_Backend` in platforms/interface.py through
# 0.11.0, AttentionBackendEnum in attention/backends/registry.py, then v1/attention/backends/registry.py).
# Releases between two read ones (0.12.1, 0.13.1, ...) were not read; 0.10.1.1 stands for 0.10.1.
ENUM_BY_RELEASE: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        release: frozenset(entry["members"])
        for release, entry in json.loads(data_text("backend_enum.json", "attn_preflight.rules.engines.vllm"))[
            "releases"
        ].items()
    }
)
AUTO = "auto"
# Names some release read accepted that 0.33.0 does not.
REMOVED = frozenset().union(*ENUM_BY_RELEASE.values()) - VALID_NAMES


def release_numbers(text: str) -> tuple[int, ...]:
    """A release's numbers: '0.11.1rc7' -> (0, 11, 1) (a pre-release judged as its release)."""
    return parse_version(text).release


# The releases read, oldest first, with their numbers: parsed once (every name's history reads them).
_READ = tuple(sorted((release_numbers(r), r) for r in ENUM_BY_RELEASE))


def name_in_release(name: str, version: Optional[str]) -> Optional[bool]:
    """Whether AttentionBackendEnum has `name` in that vLLM release; None where the releases read disagree
    around it (or it is older than the oldest read). No version: the newest read."""
    if version is None:
        return name in ENUM_BY_RELEASE[_READ[-1][1]]
    wanted = release_numbers(version)[:3]
    below = [r for numbers, r in _READ if numbers <= wanted]
    above = [r for numbers, r in _READ if numbers > wanted]
    if not below:
        return None
    here = name in ENUM_BY_RELEASE[below[-1]]
    if release_numbers(below[-1]) == wanted or not above or (name in ENUM_BY_RELEASE[above[0]]) == here:
        return here
    return None


def name_history(name: str) -> str:
    """'in vllm 0.10.2-0.20.2, gone in 0.21.0' from the releases read."""
    present = [r for _, r in _READ if name in ENUM_BY_RELEASE[r]]
    if not present:
        return "in none of the vLLM releases read (" + ", ".join(r for _, r in _READ) + ")"
    last = release_numbers(present[-1])
    gone = [r for numbers, r in _READ if numbers > last and name not in ENUM_BY_RELEASE[r]]
    return f"in vllm {present[0]}-{present[-1]}" + (f", gone in {gone[0]}" if gone else "")


# `--kv-cache-dtype` choices: vllm/config/cache.py, CacheDType.
KV_CACHE_DTYPES = (
    "auto",
    "float16",
    "bfloat16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
    "turboquant_3bit_nc",
    "octave_k3v4",
    "octave_k3v3",
    "octave_k3v3_compact",
    "ultraquant_4bit",
    "int4_per_token_head",
    "int8_per_token_head",
    "fp8_per_token_head",
    "nvfp4",
    "nvfp4_4over6",
)
# The release each of them first appears in CacheDType (none has left it): vllm/config.py in 0.10.0 (read with
# bench/wheel_ranges.py), vllm/config/cache.py from 0.10.2 to 0.33.0, every release's wheel read.
KV_CACHE_DTYPE_SINCE: Mapping[str, str] = MappingProxyType(
    {
        **dict.fromkeys(("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"), "0.10.0"),
        "bfloat16": "0.11.0",
        "fp8_ds_mla": "0.11.2",
        "float16": "0.18.0",
        **dict.fromkeys(
            (
                "turboquant_k8v4",
                "turboquant_4bit_nc",
                "turboquant_k3v4_nc",
                "turboquant_3bit_nc",
                "int8_per_token_head",
                "fp8_per_token_head",
                "nvfp4",
            ),
            "0.20.0",
        ),
        "int4_per_token_head": "0.25.0",
        "nvfp4_4over6": "0.28.0",
        "nvfp4_ds_mla": "0.30.0",
        "ultraquant_4bit": "0.32.0",
        **dict.fromkeys(("octave_k3v4", "octave_k3v3", "octave_k3v3_compact"), "0.33.0"),
    }
)
KV_CACHE_DTYPE_SOURCE = (
    "vllm/config/cache.py CacheDType (vllm/config.py in 0.10.0-0.10.1.1); vllm/engine/arg_utils.py EngineArgs."
    "kv_cache_dtype: CacheDType, whose Literal argparse takes as its choices through 0.32.x; 0.33.0's "
    "`CacheDType | str` is checked by CacheConfig._validate_cache_dtype"
)


# `--dtype` choices and what they mean: vllm/config/model.py, ModelDType and _STR_DTYPE_TO_TORCH_DTYPE.
MODEL_DTYPES: Mapping[str, Optional[str]] = MappingProxyType(
    {
        "auto": None,
        "half": "float16",
        "float16": "float16",
        "bfloat16": "bfloat16",
        "float": "float32",
        "float32": "float32",
    }
)


def is_quantised_kv(kv_dtype: Optional[str]) -> bool:
    """vllm/v1/kv_cache_interface.py is_quantized_kv_cache: anything but the model dtype."""
    return kv_dtype not in (None, "auto", "float16", "bfloat16")


# --- env var and flag history (verified in the 0.12.0, 0.13.0, 0.14.1, 0.15.0 and 0.33.0 wheels) -------------
ENV_BACKEND = "VLLM_ATTENTION_BACKEND"
ENV_FA_VERSION = "VLLM_FLASH_ATTN_VERSION"
FLAG_SINCE = "0.13.0"  # --attention-backend first in engine/arg_utils.py of 0.13.0 (0.12.0: env var only)
ENV_REMOVED_IN = "0.15.0"  # 0.13.0-0.14.1: read by AttentionConfig._set_from_env_if_set with a deprecation warning


def backend_option(vllm_version: Optional[str]) -> str:
    """What names the attention backend on a vLLM release: ENV_BACKEND before FLAG_SINCE, whose argparse refuses
    --attention-backend, the flag from then on (and the newest known behaviour when the release is unknown)."""
    if vllm_version is not None and parse_version(vllm_version) < parse_version(FLAG_SINCE):
        return ENV_BACKEND
    return "--attention-backend"


ENV_UNKNOWN_WARNING = "Unknown vLLM environment variable detected: {env}"
ENV_SOURCE = (
    src("vllm/platforms/interface.py", "Platform.validate_environ")
    + "; removed by vllm PR #32812 (2026-01-22), deprecated by PR #26315"
)
ENV_DEPRECATION = (
    "Using VLLM_ATTENTION_BACKEND environment variable is deprecated and will be removed in "
    "v0.14.0 or v1.0.0, whichever is soonest. Please use --attention-config.backend command line "
    "argument or AttentionConfig(backend=...) config field instead."
)


# --- the FlashAttention version vLLM resolves ---------------------------------------------------------------
@dataclass(frozen=True)
class FaResolution:
    version: Optional[int]  # None: get_flash_attn_version returns None (the asserted version is unsupported)
    notes: tuple[str, ...] = ()  # vLLM's own log lines for every downgrade on the way


FA4_TMEM_MESSAGE = (
    "FA4 on Blackwell does not support head_size={head_size} due to TMEM capacity limits, defaulting to FA version 2."
)
FA3_BLACKWELL_MESSAGE = (
    "Cannot use FA version 3 on Blackwell platform, defaulting to FA version 4 if supported, otherwise FA2."
)
FA3_BLACKWELL_FA2_MESSAGE = "Cannot use FA version 3 on Blackwell platform, defaulting to FA version 2."  # 0.13-0.16
FA4_HD256_MESSAGE = "FA4's Blackwell head_size=256 kernel does not support {reason}, defaulting to FA version 2."


def fa_versions_accepted(release: Optional[str]) -> tuple[int, ...]:
    """The values AttentionConfig.flash_attn_version's Literal takes in a release (config/attention.py: 2, 3 before
    0.17.0, and 4 from it), which pydantic checks when the flags are parsed, whatever backend then runs."""
    return (2, 3, 4) if vllm_fa4.era(release).fa4 else (2, 3)


def flash_attn_version(
    cc: CC,
    head_size: Optional[int] = None,
    head_size_v: Optional[int] = None,
    requested: Optional[int] = None,
    has_sinks: bool = False,
    softcap: bool = False,
    alibi: bool = False,
    kv_dtype: Optional[str] = None,
    block_size: Optional[int] = None,
    release: Optional[str] = None,
) -> FaResolution:
    """fa_utils.get_flash_attn_version as FlashAttentionBackend calls it (supports_fa4_hd256=True), in the FA4
    behaviour of `release` (vllm_fa4.FA_ERAS; the newest when None)."""
    era = vllm_fa4.era(release)
    notes = []
    if cc[0] == 9:
        version = 3
    elif cc[0] == 10 and era.fa4:
        version = 4
    else:
        version = 2
    if requested is not None:
        version = requested
    if requested is not None and requested not in fa_versions_accepted(release):
        return FaResolution(
            None, (f"flash_attn_version: Input should be {' or '.join(map(str, fa_versions_accepted(release)))}",)
        )
    if version == 3 and (cc[0] >= 10 if era.fa4 else cc[0] == 10):
        notes.append(FA3_BLACKWELL_MESSAGE if era.fa4 else FA3_BLACKWELL_FA2_MESSAGE)
        version = 4 if era.fa4 and cc in FA4_ARCHS else 2
    if alibi and version in (3, 4):
        notes.append(f"Cannot use FA version {version} with ALiBi, defaulting to FA version 2.")
        version = 2
    if era.sm90_upgrade and version == 3 and cc[0] == 9 and head_size is not None and head_size > 256:
        notes.append(f"FA3 does not support head_size={head_size} on SM90: upgrading FlashAttention 3 -> 4")
        version = 4
    if era.hd256 == "off" and version == 4 and cc[0] >= 10 and head_size == 256:
        notes.append(vllm_fa4.FA4_HD256_OFF_MESSAGE)
        version = 2
    hd256 = head_size == 256 and head_size_v in (None, 256) and cc[0] in (10, 11)
    if version == 4 and hd256 and era.hd256 == "kernel":
        reason = (
            "attention sinks"
            if has_sinks
            else "logits soft capping"
            if softcap
            else f"quantized KV cache dtype {kv_dtype}"
            if is_quantised_kv(kv_dtype)
            else f"a KV cache block size of {block_size}"
            if block_size is not None and block_size % 128
            else None
        )
        if reason is not None:
            notes.append(FA4_HD256_MESSAGE.format(reason=reason))
            version = 2
    if (
        version == 4
        and cc[0] >= 10
        and head_size is not None
        and head_size > 128
        and not any(head_size == kept and (vs is None or head_size_v in vs) for kept, vs in era.tmem_kept)
    ):
        notes.append(FA4_TMEM_MESSAGE.format(head_size=head_size))
        version = 2
    if cc not in FA_SUPPORTED[version]:
        notes.append(f"Cannot use FA version {version} is not supported due to {FA_UNSUPPORTED_REASON[version]}")
        return FaResolution(None, tuple(notes))
    return FaResolution(version, tuple(notes))


FA_FP8_KV_REASON = "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
FA_FP8_KV_SOURCE = (
    src(_FA, "FlashAttentionBackend.supports_combination") + "; " + src(FA_UTILS, "flash_attn_supports_kv_cache_dtype")
)


def flash_attn_fp8_kv_ok(cc: CC, kv_dtype: str, head_size: Optional[int], fa: FaResolution) -> bool:
    """fa_utils.flash_attn_supports_kv_cache_dtype for a quantised KV dtype."""
    if kv_dtype == "fp8_e5m2":
        return False
    sm90_ok = fa.version == 3 or (fa.version == 4 and head_size in (None, 512))
    return (sm90_ok and cc[0] == 9) or (fa.version == 4 and cc[0] == 10)


def flash_attn_sinks_ok(cc: CC, versions: frozenset[int], requested: Optional[int] = None) -> bool:
    """fa_utils.flash_attn_supports_sinks: the layer-less FA version is one that takes sinks (3 or 4; 3 only
    before vLLM 0.20.0)."""
    return flash_attn_version(cc, requested=requested).version in versions


# --- other supports_combination reasons ------------------------------------------------------------------
FA_SINK_CC_REASON = "sink not supported on compute capability < 9.0"
FLASHMLA_DENSE_REASON = "FlashMLA Dense is only supported on Hopper devices."
FLASHMLA_DENSE_SOURCE = (
    src("vllm/v1/attention/ops/flashmla.py", "is_flashmla_dense_supported")
    + "; "
    + src(f"{BACKENDS_DIR}/mla/flashmla.py", "FlashMLABackend.supports_combination")
)
FLASHMLA_SPARSE_NVFP4_REASON = "FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype on SM100 (Blackwell)"
FI_NVFP4_HEAD64_REASON = "fa2 prefill misreads an NVFP4 KV cache at head_size 64"
FI_NVFP4_SINK_REASON = "the sink prefill wrapper cannot read an NVFP4 KV cache"
FI_NVFP4_SOURCE = src(_FI, "FlashInferBackend.supports_combination")
FI_MLA_QK_NOPE_REASON = "FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got {got}"


def fi_mla_qk_nope_reason(backend: VllmBackend) -> str:
    """FlashInferMLABackend.supports_combination's text in the backend's release: "== 128" in 0.15.0-0.17.x
    (flashinfer_mla.py:85-88 in 0.15.0 and 0.17.1), "in [64, 128]" in 0.18.x (:87-90 in 0.18.0 and 0.18.1), "in
    [64, 128, 192]" from 0.19.0 (:87-90 in 0.19.0, :245-248 in 0.33.0)."""
    dims = backend.qk_nope_head_dims or ()
    wanted = f"== {dims[0]}" if len(dims) == 1 else f"in {list(dims)}"
    return f"FlashInfer MLA kernel requires qk_nope_head_dim {wanted}, but got {{got}}"


FI_MLA_QK_NOPE_SOURCE = src(f"{BACKENDS_DIR}/mla/flashinfer_mla.py", "FlashInferMLABackend.supports_combination")
TOKENSPEED_DIMS = (128, 64, 128)  # qk_nope_head_dim, qk_rope_head_dim, v_head_dim
TOKENSPEED_DIMS_REASON = (
    "tokenspeed_mla requires DeepSeek R1 MLA dimensions (qk_nope_head_dim=128, "
    "qk_rope_head_dim=64, v_head_dim=128), got ({got})"
)
TOKENSPEED_SOURCE = src(f"{BACKENDS_DIR}/mla/tokenspeed_mla.py", "TokenspeedMLABackend.supports_combination")

BF16_ARCH_MESSAGE = (
    "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu} GPU "
    "has compute capability {cc}. You can use float16 instead by explicitly setting the `dtype` "
    "flag in CLI, for example: --dtype=half."
)
BF16_ARCH_SOURCE = src(CUDA_PY, "CudaPlatformBase.check_if_supports_dtype (called from gpu_worker)")
# config/model.py _FLOAT16_NOT_SUPPORTED_MODELS: model_type -> reason
FLOAT16_UNSUPPORTED_MODELS: Mapping[str, str] = MappingProxyType(
    {
        m: "Numerical instability. Please use bfloat16 or float32 instead."
        for m in ("gemma2", "gemma3", "gemma3_text", "glm4")
    }
)
FLOAT16_MODEL_MESSAGE = "The model type {model_type!r} does not support float16. Reason: {reason}"
FLOAT16_MODEL_SOURCE = src("vllm/config/model.py", "_check_valid_dtype, _FLOAT16_NOT_SUPPORTED_MODELS")

# Model types vLLM runs with MLA attention when config.json has kv_lora_rank
# (vllm/transformers_utils/model_arch_config_convertor.py, is_deepseek_mla; ModelConfig.use_mla adds
# VLLM_MLA_DISABLE=1 and is_causal=false as ways out). Other models with kv_lora_rank (MiniCPM3) use vLLM's
# generic MLA-free path.
MLA_MODEL_TYPES = frozenset(
    {
        "axk1",
        "deepseek_v2",
        "deepseek_v3",
        "deepseek_v32",
        "deepseek_v4",
        "deepseek_v41",
        "dots3_note",
        "deepseek_mtp",
        "k3_dspark",
        "glm5_next",
        "glm5_next_text",
        "glm_moe_dsa",
        "glm4_moe_lite",
        "glm4_moe_lite_mtp",
        "kimi_k2",
        "kimi_linear",
        "longcat_flash",
        "pangu_ultra_moe",
        "pangu_ultra_moe_mtp",
        "bailing_hybrid",
        "bailing_hybrid_mtp",
        "bailing_hybrid_v3_mtp",
        "hy_v4",
        "hy_v4_mtp",
    }
)
MLA_DISABLE_ENV = "VLLM_MLA_DISABLE"


class SparseMlaArchs(NamedTuple):
    """The compute-capability majors on which some sparse MLA backend of vLLM's CUDA priority list runs, for
    the releases from `since` to the next entry: the union of each listed sparse backend's
    supports_compute_capability."""

    since: str
    majors: frozenset[int]
    backends: str  # the sparse backends listed, by major
    seen: str  # the wheels read, with file:line


SPARSE_MLA_ARCHS: tuple[SparseMlaArchs, ...] = (
    SparseMlaArchs(
        "0.11.2",
        frozenset({9, 10}),
        "FLASHMLA_SPARSE (majors 9, 10) in both MLA branches; FLASHINFER_MLA_SPARSE (major 10) in the SM10x branch "
        "from 0.17.0",
        "platforms/cuda.py _get_backend_priorities of 0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.16.0, 0.17.0, 0.19.1 "
        "(:58-98), 0.20.0, 0.22.1, 0.23.0: no SM12x branch; flashmla_sparse.py supports_compute_capability "
        "`capability.major in [9, 10]` (:86-87 in 0.11.2, :107-108 in 0.13.0, :135-136 in 0.22.1); "
        "flashinfer_mla_sparse.py `capability.major == 10` (:99 in 0.17.0, :102 in 0.22.1)",
    ),
    SparseMlaArchs(
        "0.24.0",
        frozenset({9, 10, 12}),
        "an SM12x branch [TRITON_MLA, FLASHINFER_MLA_SPARSE_SM120 (major 12)]; FLASH_ATTN_MLA_SPARSE (major 9) from "
        "0.25.0, FLASHINFER_MLA_SPARSE_SM90 from 0.30.0, FLASH_ATTN_MLA_SPARSE_FA4 (major 10) in 0.33.0",
        "platforms/cuda.py _get_backend_priorities of 0.24.0 (:47-51 of the function), 0.25.0, 0.26.0, 0.30.0, "
        "0.33.0; flashinfer_mla_sparse.py FlashInferMLASparseSM120Backend.supports_compute_capability "
        "`capability.major == 12` (:171 in 0.24.0, :170 in 0.26.0, :193 in 0.33.0)",
    ),
)
SPARSE_MLA_ARCHS_SOURCE = src(CUDA_PY, "_get_backend_priorities (the sparse MLA entries)")


def sparse_mla_archs(version: Optional[str]) -> SparseMlaArchs:
    """The entry holding `version` (the newest for an unknown version, the oldest for older releases)."""
    if version is None:
        return SPARSE_MLA_ARCHS[-1]
    wanted = release_numbers(version)[:3]
    holding = [entry for entry in SPARSE_MLA_ARCHS if release_numbers(entry.since) <= wanted]
    return holding[-1] if holding else SPARSE_MLA_ARCHS[0]


# Inkling (vllm/models/inkling, in the model registry from 0.26.0) runs its own relative attention whatever
# --attention-backend says: models/inkling/nvidia/ops/fa4_rel_attention.py calls tml_fa4 (vllm/third_party,
# sheared bias) on SM10x/SM11x (_use_sheared_bias) and the vendored FA4 (vllm/vllm_flash_attn/cute, score_mod)
# elsewhere, always with the paged KV cache's block table (page_table=block_table; nvidia/attention.py:316).
# The vendored FA4 refuses a page table on SM8x ("paged KV not supported on SM 8.0", interface.py:952 in 0.27.0)
# and SM12x ("Paged KV not supported on SM 12.0 in this PR", :1091 in 0.26.0, :1101 in 0.27.0 and 0.27.1); 0.28.0
# replaces its SM120 forward (flash_fwd_sm120, no such assert), which is not judged here.
INKLING_ARCHITECTURES = frozenset({"InklingForCausalLM", "InklingForConditionalGeneration"})
INKLING_PAGED_KV_MAJORS = frozenset({9, 10, 11})
INKLING_SOURCE = src("vllm/models/inkling/nvidia/ops/fa4_rel_attention.py", "inkling_fa4_rel_attention")


# --- the selection vLLM would make ---------------------------------------------------------------------
@dataclass(frozen=True)
class VllmQuery:
    """vLLM's AttentionSelectorConfig for one attention layer, plus what supports_combination reads."""

    cc: CC
    head_size: Optional[int]  # None: no model given
    dtype: str = "bfloat16"  # "float16" | "bfloat16" | "float32"
    kv_dtype: str = "auto"
    block_size: Optional[int] = None  # only when --block-size was given
    use_mla: bool = False
    use_sparse: bool = False
    has_sink: bool = False
    has_sliding_window: bool = False
    softcap: bool = False
    head_size_v: Optional[int] = None
    fa_version: Optional[int] = None  # --attention-config.flash_attn_version
    qk_nope_head_dim: Optional[int] = None
    qk_rope_head_dim: Optional[int] = None
    v_head_dim: Optional[int] = None
    num_heads: Optional[int] = None


def flash_attn_for_kv(q: VllmQuery) -> FaResolution:
    """The FA version FlashAttentionBackend.supports_combination resolves to judge a quantised KV cache."""
    return flash_attn_version(
        q.cc,
        q.head_size,
        q.head_size,
        q.fa_version,
        q.has_sink,
        q.softcap,
        kv_dtype=q.kv_dtype,
        block_size=q.block_size,
    )


def supports_sink(backend: VllmBackend, cc: CC, fa_version: Optional[int] = None) -> bool:
    """supports_sink() on this arch; FLASH_ATTN's answer follows the FA version (3 and 4 take sinks)."""
    if backend.name == "FLASH_ATTN":
        return flash_attn_sinks_ok(cc, backend.sink_fa_versions, fa_version)
    return cc in backend.sinks


def flashinfer_nvfp4_fa2(q: VllmQuery) -> bool:
    """FlashInfer serves this NVFP4 KV cache through its FA2 path (SM8x, SM9x, SM12x)."""
    return q.kv_dtype.startswith("nvfp4") and q.cc[0] in (8, 9, 12)


def _tokenspeed_dims(q: VllmQuery) -> tuple[Optional[int], ...]:
    return q.qk_nope_head_dim, q.qk_rope_head_dim, q.v_head_dim


@dataclass(frozen=True)
class Reason:
    """One reason vLLM gives for rejecting a backend, declared once: `holds(backend, query)` is the condition,
    `text` the verbatim message (`{got}` filled by `got(query)`). `backend` names the class whose
    supports_combination gives it; "" is validate_configuration's own check, run for every backend."""

    key: str
    text: str
    source: str
    holds: Callable[[VllmBackend, VllmQuery], bool]
    backend: str = ""
    got: Optional[Callable[[VllmQuery], str]] = None
    worded: Optional[Callable[[VllmBackend], str]] = None  # the text where the backend's release words it apart

    def message(self, backend: VllmBackend, q: VllmQuery) -> str:
        text = self.worded(backend) if self.worded is not None else self.text
        return text.format(got=self.got(q)) if self.got is not None else text


FA_MLA_DEVICE_REASON = "FlashAttention MLA not supported on this device"
FA_MLA_DEVICE_SOURCE = src(f"{BACKENDS_DIR}/mla/flashattn_mla.py", "FlashAttnMLABackend.supports_combination")
FA_SINK_CC_SOURCE = src(_FA, "FlashAttentionBackend.supports_combination")
FLASHMLA_SPARSE_NVFP4_SOURCE = src(
    f"{BACKENDS_DIR}/mla/flashmla_sparse.py", "FlashMLASparseBackend.supports_combination"
)

# validate_configuration's checks in its order, then the supports_combination texts (one backend each, in
# the order its method tests them). vLLM stops at a backend's first supports_combination text.
REASONS: tuple[Reason, ...] = (
    Reason(
        "head_size",
        R_HEAD_SIZE,
        VALIDATE_SOURCE + " (supports_head_size)",
        lambda b, q: q.head_size is not None and not b.head_sizes.accepts(q.head_size, q.cc),
    ),
    Reason("dtype", R_DTYPE, VALIDATE_SOURCE + " (supported_dtypes)", lambda b, q: q.dtype not in b.dtypes),
    Reason(
        "kv_cache_dtype",
        R_KV_DTYPE,
        VALIDATE_SOURCE + " (supports_kv_cache_dtype)",
        lambda b, q: not b.accepts_kv_dtype(q.kv_dtype, q.cc),
    ),
    Reason(
        "block_size",
        R_BLOCK_SIZE,
        VALIDATE_SOURCE + " (supports_block_size)",
        lambda b, q: q.block_size is not None and not b.accepts_block_size(q.block_size),
    ),
    Reason("mla", R_MLA, VALIDATE_SOURCE + " (use_mla != is_mla())", lambda b, q: q.use_mla and not b.mla),
    Reason("non_mla", R_NON_MLA, VALIDATE_SOURCE + " (use_mla != is_mla())", lambda b, q: b.mla and not q.use_mla),
    Reason(
        "sinks",
        R_SINKS,
        VALIDATE_SOURCE + " (supports_sink)",
        lambda b, q: q.has_sink and not supports_sink(b, q.cc, q.fa_version),
    ),
    Reason(
        "sparse", R_SPARSE, VALIDATE_SOURCE + " (use_sparse != is_sparse())", lambda b, q: q.use_sparse and not b.sparse
    ),
    Reason(
        "non_sparse",
        R_NON_SPARSE,
        VALIDATE_SOURCE + " (use_sparse != is_sparse())",
        lambda b, q: b.sparse and not q.use_sparse,
    ),
    Reason("cc", R_CC, VALIDATE_SOURCE + " (supports_compute_capability)", lambda b, q: q.cc not in b.archs),
    Reason(
        "sliding_window",
        R_SLIDING_WINDOW,
        VALIDATE_SOURCE + " (supports_sliding_window)",
        lambda b, q: q.has_sliding_window and not b.sliding_window,
    ),
    Reason("fa_sink_cc", FA_SINK_CC_REASON, FA_SINK_CC_SOURCE, lambda b, q: q.has_sink and q.cc < (9, 0), "FLASH_ATTN"),
    Reason(
        "fa_fp8_kv",
        FA_FP8_KV_REASON,
        FA_FP8_KV_SOURCE,
        lambda b, q: (
            is_quantised_kv(q.kv_dtype)
            and not flash_attn_fp8_kv_ok(q.cc, q.kv_dtype, q.head_size, flash_attn_for_kv(q))
        ),
        "FLASH_ATTN",
    ),
    Reason(
        "fi_nvfp4_head64",
        FI_NVFP4_HEAD64_REASON,
        FI_NVFP4_SOURCE,
        lambda b, q: flashinfer_nvfp4_fa2(q) and q.head_size == 64,
        "FLASHINFER",
    ),
    Reason(
        "fi_nvfp4_sinks",
        FI_NVFP4_SINK_REASON,
        FI_NVFP4_SOURCE,
        lambda b, q: flashinfer_nvfp4_fa2(q) and q.has_sink,
        "FLASHINFER",
    ),
    Reason(
        "flashmla_dense",
        FLASHMLA_DENSE_REASON,
        FLASHMLA_DENSE_SOURCE,
        lambda b, q: not q.use_sparse and q.cc[0] != 9,
        "FLASHMLA",
    ),
    Reason(
        "flashmla_sparse_nvfp4",
        FLASHMLA_SPARSE_NVFP4_REASON,
        FLASHMLA_SPARSE_NVFP4_SOURCE,
        lambda b, q: q.kv_dtype == "nvfp4_ds_mla" and q.cc[0] != 10,
        "FLASHMLA_SPARSE",
    ),
    Reason("fa_mla_device", FA_MLA_DEVICE_REASON, FA_MLA_DEVICE_SOURCE, lambda b, q: q.cc[0] != 9, "FLASH_ATTN_MLA"),
    Reason(
        "fi_mla_qk_nope",
        FI_MLA_QK_NOPE_REASON,
        FI_MLA_QK_NOPE_SOURCE,
        lambda b, q: (
            b.qk_nope_head_dims is not None
            and q.qk_nope_head_dim is not None
            and q.qk_nope_head_dim not in b.qk_nope_head_dims
        ),
        "FLASHINFER_MLA",
        got=lambda q: str(q.qk_nope_head_dim),
        worded=fi_mla_qk_nope_reason,
    ),
    Reason(
        "tokenspeed_dims",
        TOKENSPEED_DIMS_REASON,
        TOKENSPEED_SOURCE,
        lambda b, q: None not in _tokenspeed_dims(q) and _tokenspeed_dims(q) != TOKENSPEED_DIMS,
        "TOKENSPEED_MLA",
        got=lambda q: ", ".join(str(d) for d in _tokenspeed_dims(q)),
    ),
)


class Rejection(NamedTuple):
    """A reason that holds for one backend and query: its key, vLLM's text, and whether it comes from the
    backend's supports_combination (of which vLLM reports only the first)."""

    key: str
    text: str
    combination: bool


def rejections(backend: VllmBackend, q: VllmQuery, release: Optional[Release] = None) -> tuple[Rejection, ...]:
    """Every declared reason that holds, once each, in vLLM's order (modelled backends only): the one
    validator rules and the selection read. Unlike vLLM it does not stop at a backend's first
    supports_combination text, so that each of them can be reported; `validate` gives vLLM's list."""
    reasons = (release or RELEASES[-1]).reasons
    return tuple(
        Rejection(r.key, r.message(backend, q), bool(r.backend))
        for r in reasons
        if r.backend in ("", backend.name) and r.holds(backend, q)
    )


def validate(backend: VllmBackend, q: VllmQuery, release: Optional[Release] = None) -> list[str]:
    """AttentionBackend.validate_configuration: the reasons vLLM lists, in its order (modelled backends only)."""
    out, combined = [], False
    for rejection in rejections(backend, q, release):
        if rejection.combination:
            if combined:
                continue
            combined = True
        out.append(rejection.text)
    return out


# --- one declaration per range of vLLM releases -------------------------------------------------------------
@dataclass(frozen=True)
class Release:
    """What one range of vLLM releases declares: every backend with its capabilities (each fact's source:
    VllmBackend.source_of) and every reason validate_configuration gives (REASONS).

    A range holds from `since` up to the next declared one. The two newest ranges declare the vllm 0.33.0
    backends, which their older releases get with the release files' capability deltas applied (changes.py: the
    older values read in the 0.11.1-0.30.0 wheels), and differ in the reasons (the sliding-window check is new in 0.26.0); the 0.11.1 range is the
    first with validate_configuration (vllm PR #24794)."""

    since: str
    read_from: str
    backends: Mapping[str, VllmBackend]
    reasons: tuple[Reason, ...]


# vllm 0.11.1-0.12.x (attention/backends/abstract.py:201-249 in 0.12.0, :175-223 in 0.11.1/0.11.2): the
# same checks, but the sink reason reads "sink setting not supported" (:228), get_attn_backend_cls passes
# block_size=None (platforms/cuda.py:349, :373 in 0.12.0; :362 in 0.11.1), and no sliding-window check yet;
# the supports_combination texts of that range are FLASH_ATTN's sink/cc, FLASHMLA's dense-Hopper and
# FLASH_ATTN_MLA's device check.
R_SINK_SETTING = "sink setting not supported"
_VALIDATE_0_11_KEYS = frozenset(
    {
        "head_size",
        "dtype",
        "kv_cache_dtype",
        "mla",
        "non_mla",
        "sinks",
        "sparse",
        "non_sparse",
        "cc",
        "fa_sink_cc",
        "flashmla_dense",
        "fa_mla_device",
    }
)
REASONS_0_11 = tuple(
    replace(r, text=R_SINK_SETTING) if r.key == "sinks" else r for r in REASONS if r.key in _VALIDATE_0_11_KEYS
)
# The enum of vllm 0.11.2 and 0.12.0 (vllm/attention/backends/registry.py): the names that range can run.
_NAMES_0_11 = ENUM_BY_RELEASE["0.11.2"] | ENUM_BY_RELEASE["0.12.0"]

_REASONS_0_13 = tuple(r for r in REASONS if r.key not in ("sliding_window", "fi_nvfp4_head64", "fi_nvfp4_sinks"))

RELEASES: tuple[Release, ...] = (
    Release(
        since=VALIDATE_SINCE,
        read_from="the vllm 0.11.1, 0.11.2 and 0.12.0 wheels (pip download --no-deps vllm==VERSION)",
        backends=MappingProxyType({name: b for name, b in BY_NAME.items() if name in _NAMES_0_11}),
        reasons=REASONS_0_11,
    ),
    # Before 0.26.0 validate_configuration has no sliding-window check (none in the 0.13.0 and 0.14.0
    # attention/backends/abstract.py, nor in v1/attention/backend.py of 0.20.0-0.25.1; `if has_sliding_window and
    # not cls.supports_sliding_window()` from 0.26.0) and FlashInferBackend no supports_combination (none in
    # 0.13.0-0.28.0, so neither NVFP4 combination reason); the other reasons and the backends are 0.33.0's with
    # the capability deltas applied (changes.py), as for every older release
    Release(
        since="0.13.0",
        read_from="the vllm 0.13.0, 0.14.0 and 0.20.0-0.25.1 wheels' validate_configuration and FlashInferBackend",
        backends=BY_NAME,
        reasons=tuple(replace(r, text=R_SINK_SETTING) if r.key == "sinks" else r for r in _REASONS_0_13),
    ),
    # validate_configuration's sink text is "sink setting not supported" through 0.17.x (abstract.py:237 in
    # 0.13.0; v1/attention/backend.py:243 in 0.14.1, :250 in 0.15.0 and 0.16.0, :255 in 0.17.0, :275 in 0.17.1)
    # and "attention sinks not supported" from 0.18.0 (:284 in 0.18.0, 0.18.1 and 0.19.0, :306 in 0.20.0)
    Release(
        since="0.18.0",
        read_from="the vllm 0.17.0-0.20.0 wheels' v1/attention/backend.py validate_configuration",
        backends=BY_NAME,
        reasons=_REASONS_0_13,
    ),
    Release(
        since="0.26.0",  # the first release whose validate_configuration has every reason 0.33.0 gives
        read_from=f"the vllm {VLLM_VERSION} wheel (pip download --no-deps vllm=={VLLM_VERSION})",
        backends=BY_NAME,
        reasons=REASONS,
    ),
)


def release_for(version: Optional[str]) -> Release:
    """The declared range holding `version`: the newest for an unknown version, the oldest for older releases."""
    if version is None:
        return RELEASES[-1]
    wanted = release_numbers(version)[:3]
    holding = [r for r in RELEASES if release_numbers(r.since) <= wanted]
    return holding[-1] if holding else RELEASES[0]


def backend_info(backend: VllmBackend) -> BackendInfo:
    """The engine-neutral view other modules read (names, platforms, archs, MLA/MHA, KV dtypes)."""
    arch_majors = (
        None
        if backend.archs == ANY_ARCH
        else frozenset(m for m in range(7, 13) if any((m, n) in backend.archs for n in range(10)))
    )
    return BackendInfo(
        name=backend.name,
        title=backend.title,
        engine="vllm",
        platform=backend.platform,
        archs=arch_majors,
        mha=not backend.mla,
        mla=backend.mla,
        kv_dtypes=backend.kv_dtypes,
        general=backend.modelled and backend.auto_selected and backend.platform == "cuda",
        source=backend.source,
        notes=backend.notes,
    )


# Every name a vLLM launch line may carry, for name checks and alternatives: the usable backends, plus the
# removed and unregistered names so that rule vllm-backend-name (not a usage error) reports them.
BACKENDS: dict[str, BackendInfo] = {
    **{name: backend_info(b) for name, b in BY_NAME.items()},
    **{
        name: BackendInfo(
            name=name, title=name, engine="vllm", general=False, removed=name_history(name), source=ENUM_SOURCE
        )
        for name in REMOVED
    },
    **{
        name: BackendInfo(name=name, title=name, engine="vllm", general=False, removed=why, source=REPO)
        for name, why in UNREGISTERED.items()
    },
}
