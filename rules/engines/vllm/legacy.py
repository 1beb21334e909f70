"""vLLM 0.10.0-0.11.0: what runs for `VLLM_ATTENTION_BACKEND=NAME`, before vLLM validated a named backend.

Read in the vllm 0.10.0, 0.10.1.1, 0.10.2 and 0.11.0 wheels (`pip download --no-deps vllm==VERSION`, unzipped).
Three places decide, in this order:

1. the environment variable itself: 0.11.0 reads it through `env_with_choices` (envs.py:612-615), which raises
   "Invalid value 'X' for VLLM_ATTENTION_BACKEND. Valid options: [...]." (envs.py:269-271) for a name that is not
   a `_Backend` member, case-sensitive, at its first read (ModelConfig.__post_init__, config/model.py:417), so
   the selector's `removesuffix("_VLLM_V1")` (attention/selector.py:192-199) is never reached with a suffix;
2. EngineArgs._is_v1_supported_oracle: a name outside its V1_BACKENDS list falls back to the V0 engine with a
   warning, or raises "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND=X." when VLLM_USE_V1=1
   (_raise_or_fallback); 0.11.0 has no V0 engine left: `vllm serve` then stops at `assert envs.VLLM_USE_V1`;
3. CudaPlatformBase.get_attn_backend_cls: if/elif chains, one for MLA models and one for the rest. A name a chain
   does not handle falls through to the default without a word; an MLA model that falls through the MLA chain
   reaches the non-MLA chain and gets a non-MLA backend, whose Impl refuses the MLA layer's keyword arguments
   (`TypeError: FlashAttentionImpl.__init__() got an unexpected keyword argument 'q_lora_rank'`, vllm PR #13092).

The selector (attention/selector.py) raises "Invalid attention backend: 'X'. Valid backends are: [...]" for a
non-member in 0.10.1-0.11.0; 0.10.0's backend_name_to_enum returns None and the default runs.
Not modelled: the oracle's other V0 reasons (an FP8 KV cache a backend does not take, is_kv_cache_dtype_supported),
what the V0 engine's backends then do, and a non-MLA Impl that takes **kwargs (FlexAttention from 0.10.2) past
its constructor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Mapping, NamedTuple, Optional

from packaging.version import InvalidVersion

from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import changes, select

ENV_USE_V1 = "VLLM_USE_V1"
INVALID_VALUE = "Invalid value '{name}' for VLLM_ATTENTION_BACKEND. Valid options: {valid}."
INVALID_BACKEND = "Invalid attention backend: '{name}'. Valid backends are: {valid}"
USE_V1_REFUSED = "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND={name}."
V0_FALLBACK = (
    "VLLM_ATTENTION_BACKEND={name} is not supported by the V1 Engine. Falling back to V0. We recommend to remove "
    "VLLM_ATTENTION_BACKEND={name} from your config in favor of the V1 Engine."
)
KV_FALLBACK = "--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0. "
KV_USE_V1_REFUSED = "VLLM_USE_V1=1 is not supported with --kv-cache-dtype."
FA_FP8_KV_REFUSED = "FlashAttention does not support fp8 kv-cache on this device."
V0_INVALID = "Invalid attention backend for cuda, with use_v1: False use_mla: {mla}"
NO_V0 = "AssertionError (assert envs.VLLM_USE_V1)"
FORCED_V0 = "VLLM_USE_V1=0 selects the V0 engine"
MLA_KWARGS = "TypeError: {impl}.__init__() got an unexpected keyword argument 'q_lora_rank'"

# The Impl class each non-MLA backend builds (v1/attention/backends/*.py; V0: attention/backends/*.py).
V1_IMPLS: Mapping[str, str] = MappingProxyType(
    {
        "FLASH_ATTN": "FlashAttentionImpl",
        "FLASHINFER": "FlashInferImpl",
        "TRITON_ATTN": "TritonAttentionImpl",
        "FLEX_ATTENTION": "FlexAttentionImpl",
        "TREE_ATTN": "TreeAttentionImpl",
        "XFORMERS": "XFormersAttentionImpl",
    }
)
V0_IMPLS: Mapping[str, str] = MappingProxyType(
    {
        "FLASH_ATTN": "FlashAttentionImpl",
        "FLASHINFER": "FlashInferImpl",
        "XFORMERS": "XFormersImpl",
        "DUAL_CHUNK_FLASH_ATTN": "DualChunkFlashAttentionImpl",
        "DIFFERENTIAL_FLASH_ATTN": "DifferentialFlashAttentionImpl",
    }
)
# V0 FlashAttentionBackend.get_supported_head_sizes (attention/backends/flash_attn.py:45-46 in 0.10.2)
V0_FLASH_ATTN_HEADS = frozenset(range(32, 257, 32)) | frozenset({96, 160, 224})


@dataclass(frozen=True)
class LegacyRelease:
    """What one release range does with a named backend; each field's source is in `sources`."""

    since: str
    read_from: str
    v1_backends: frozenset[str]  # _is_v1_supported_oracle's V1_BACKENDS
    v1_chain: Mapping[str, str]  # the non-MLA V1 if/elif chain: name -> the backend it returns
    mla_chain: Mapping[str, str]  # the names the MLA chain returns a backend for (FLASHMLA: block size 64 only)
    mla_by_block: bool  # 0.10.0-0.10.1: any name runs TRITON_MLA unless the block size is 64
    sparse_mla: Optional[str]  # the backend every sparse MLA layer gets before the chain (0.11.0), whatever the name
    v0_chain: Optional[Mapping[str, str]]  # the V0 non-MLA chain; None: no V0 engine
    kwargs_impls: frozenset[str]  # non-MLA V1 backends whose Impl takes **kwargs (no TypeError for MLA)
    # the oracle's is_kv_cache_dtype_supported for a quantised KV cache off SM 10.0: names -> the archs that take
    # it ("fp8" in the name: FlashAttention 3, i.e. SM 9.x; "any"; "sm89"); None: the oracle does not ask (0.11.0)
    kv_oracle: Optional[Mapping[str, str]]
    sources: Mapping[str, str]

    def source(self, *facts: str) -> str:
        return f"vllm-project/vllm@v{self.read_from}: " + "; ".join(self.sources[f] for f in facts)


_V1_CHAIN_0_10_0 = {"FLASHINFER": "FLASHINFER", "FLEX_ATTENTION": "FLEX_ATTENTION", "FLASH_ATTN": "FLASH_ATTN"}
_V0_CHAIN = {
    "XFORMERS": "XFORMERS",
    "DUAL_CHUNK_FLASH_ATTN": "DUAL_CHUNK_FLASH_ATTN",
    "DIFFERENTIAL_FLASH_ATTN": "DIFFERENTIAL_FLASH_ATTN",
    "FLASH_ATTN": "FLASH_ATTN",
}
_V1_BACKENDS_0_10_0 = frozenset(
    {
        "FLASH_ATTN_VLLM_V1",
        "FLASH_ATTN",
        "PALLAS",
        "PALLAS_VLLM_V1",
        "TRITON_ATTN_VLLM_V1",
        "TRITON_MLA",
        "FLASHMLA",
        "FLASHINFER",
        "FLASHINFER_VLLM_V1",
        "ROCM_AITER_MLA",
        "TORCH_SDPA_VLLM_V1",
        "FLEX_ATTENTION",
    }
)

# The V1 chain of 0.10.1 and 0.10.2 (0.10.0's row adds only the Triton name; these add the tree and xFormers ones)
_V1_CHAIN_0_10_1 = MappingProxyType(
    {**_V1_CHAIN_0_10_0, "TRITON_ATTN_VLLM_V1": "TRITON_ATTN", "TREE_ATTN": "TREE_ATTN", "XFORMERS_VLLM_V1": "XFORMERS"}
)
_V0_CHAIN_0_10_0 = MappingProxyType({**_V0_CHAIN, "FLASHINFER": "FLASHINFER"})  # 0.10.0 and 0.10.1

LEGACY_RELEASES: tuple[LegacyRelease, ...] = (
    LegacyRelease(
        since="0.10.0",
        read_from="0.10.0",
        v1_backends=_V1_BACKENDS_0_10_0 | {"CUTLASS_MLA_VLLM_V1"},
        v1_chain=MappingProxyType({**_V1_CHAIN_0_10_0, "TRITON_ATTN_VLLM_V1": "TRITON_ATTN"}),
        mla_chain=MappingProxyType({"CUTLASS_MLA_VLLM_V1": "CUTLASS_MLA", "TRITON_MLA": "TRITON_MLA"}),
        mla_by_block=True,
        sparse_mla=None,
        v0_chain=_V0_CHAIN_0_10_0,
        kwargs_impls=frozenset(),
        kv_oracle=MappingProxyType({"FLASH_ATTN_VLLM_V1": "fa3"}),
        sources=MappingProxyType(
            {
                "kv": "vllm/engine/arg_utils.py:1355-1361 -> platforms/cuda.py, is_kv_cache_dtype_supported "
                "(:460-470: SM 10.0, or fp8 with FLASH_ATTN_VLLM_V1 or no name on FA3)",
                "fa_fp8": "vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ (:383-387)",
                "oracle": "vllm/engine/arg_utils.py, _is_v1_supported_oracle (V1_BACKENDS :1404-1423) and "
                "_raise_or_fallback (:1681-1690)",
                "mla": "vllm/platforms/cuda.py, get_attn_backend_cls (MLA chain :201-237; block size forced by "
                "check_and_update_config :155-170)",
                "v1": "vllm/platforms/cuda.py, get_attn_backend_cls (V1 chain :245-260, default :262-312)",
                "v0": "vllm/platforms/cuda.py, get_attn_backend_cls (V0 chain :314-341)",
            }
        ),
    ),
    LegacyRelease(
        since="0.10.1",
        read_from="0.10.1.1",
        v1_backends=_V1_BACKENDS_0_10_0 | {"CUTLASS_MLA", "TREE_ATTN", "XFORMERS_VLLM_V1"},
        v1_chain=_V1_CHAIN_0_10_1,
        mla_chain=MappingProxyType({"CUTLASS_MLA": "CUTLASS_MLA", "TRITON_MLA": "TRITON_MLA"}),
        mla_by_block=True,
        sparse_mla=None,
        v0_chain=_V0_CHAIN_0_10_0,
        kwargs_impls=frozenset(),
        kv_oracle=MappingProxyType({"FLASH_ATTN_VLLM_V1": "fa3"}),
        sources=MappingProxyType(
            {
                "kv": "vllm/engine/arg_utils.py:1408-1414 -> platforms/cuda.py, is_kv_cache_dtype_supported "
                "(:498-508: SM 10.0, or fp8 with FLASH_ATTN_VLLM_V1 or no name on FA3)",
                "fa_fp8": "vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ (:417-420)",
                "oracle": "vllm/engine/arg_utils.py, _is_v1_supported_oracle (V1_BACKENDS :1456-1477) and "
                "_raise_or_fallback (:1762-1770)",
                "mla": "vllm/platforms/cuda.py, get_attn_backend_cls (MLA chain :226-264; block size forced by "
                "check_and_update_config :150-178)",
                "v1": "vllm/platforms/cuda.py, get_attn_backend_cls (V1 chain :274-295, default :297-350)",
                "v0": "vllm/platforms/cuda.py, get_attn_backend_cls (V0 chain :352-379)",
            }
        ),
    ),
    LegacyRelease(
        since="0.10.2",
        read_from="0.10.2",
        v1_backends=_V1_BACKENDS_0_10_0
        | {"CUTLASS_MLA", "TREE_ATTN", "XFORMERS_VLLM_V1", "FLASHMLA_VLLM_V1", "FLASH_ATTN_MLA", "FLASHINFER_MLA"},
        v1_chain=_V1_CHAIN_0_10_1,
        mla_chain=MappingProxyType(
            {
                "CUTLASS_MLA": "CUTLASS_MLA",
                "FLASHINFER_MLA": "FLASHINFER_MLA",
                "FLASHMLA": "FLASHMLA",
                "FLASHMLA_VLLM_V1": "FLASHMLA",
                "FLASH_ATTN_MLA": "FLASH_ATTN_MLA",
                "TRITON_MLA": "TRITON_MLA",
            }
        ),
        mla_by_block=False,
        sparse_mla=None,
        v0_chain=MappingProxyType(_V0_CHAIN),
        kwargs_impls=frozenset({"FLEX_ATTENTION"}),  # FlexAttentionImpl.__init__(..., **kwargs), :614-626
        kv_oracle=MappingProxyType(
            {
                "FLASH_ATTN_VLLM_V1": "fa3",
                "FLASHINFER": "any",
                "TRITON_ATTN_VLLM_V1": "sm89",
                "FLASHMLA": "mla",
                "CUTLASS_MLA": "mla",
            }
        ),
        sources=MappingProxyType(
            {
                "kv": "vllm/engine/arg_utils.py:1465-1471 -> platforms/cuda.py, is_kv_cache_dtype_supported "
                "(:522-561: MLA: FLASHMLA, CUTLASS_MLA or no fp8; else SM 10.0, FLASH_ATTN_VLLM_V1 (or no name) "
                "with FA3, FLASHINFER, TRITON_ATTN_VLLM_V1 on SM89+)",
                "fa_fp8": "vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ (:408-412)",
                "oracle": "vllm/engine/arg_utils.py, _is_v1_supported_oracle (V1_BACKENDS :1502-1525) and "
                "_raise_or_fallback (:1792-1800)",
                "mla": "vllm/platforms/cuda.py, get_attn_backend_cls (MLA chain :236-298; block size forced by "
                "check_and_update_config :162-185)",
                "v1": "vllm/platforms/cuda.py, get_attn_backend_cls (V1 chain :308-329, default :331-384)",
                "v0": "vllm/platforms/cuda.py, get_attn_backend_cls (V0 chain :386-403)",
            }
        ),
    ),
    LegacyRelease(
        since="0.11.0",
        read_from="0.11.0",
        v1_backends=frozenset(
            {
                "FLASH_ATTN",
                "PALLAS",
                "TRITON_ATTN",
                "TRITON_MLA",
                "CUTLASS_MLA",
                "FLASHMLA",
                "FLASH_ATTN_MLA",
                "FLASHINFER",
                "FLASHINFER_MLA",
                "ROCM_AITER_MLA",
                "TORCH_SDPA",
                "FLEX_ATTENTION",
                "TREE_ATTN",
                "XFORMERS",
                "ROCM_ATTN",
            }
        ),
        v1_chain=MappingProxyType(
            {**_V1_CHAIN_0_10_0, "TRITON_ATTN": "TRITON_ATTN", "TREE_ATTN": "TREE_ATTN", "XFORMERS": "XFORMERS"}
        ),
        mla_chain=MappingProxyType(
            {
                "CUTLASS_MLA": "CUTLASS_MLA",
                "FLASHINFER_MLA": "FLASHINFER_MLA",
                "FLASHMLA": "FLASHMLA",
                "FLASH_ATTN_MLA": "FLASH_ATTN_MLA",
                "TRITON_MLA": "TRITON_MLA",
            }
        ),
        mla_by_block=False,
        sparse_mla="FLASHMLA_SPARSE",
        v0_chain=None,
        kwargs_impls=frozenset({"FLEX_ATTENTION"}),  # FlexAttentionImpl.__init__(..., **kwargs), :656-668
        kv_oracle=None,  # is_kv_cache_dtype_supported (cuda.py:453) is called by nothing in 0.11.0
        sources=MappingProxyType(
            {
                "fa_fp8": "vllm/v1/attention/backends/flash_attn.py, FlashAttentionImpl.__init__ (:408-412)",
                "oracle": "vllm/engine/arg_utils.py, _is_v1_supported_oracle (V1_BACKENDS :1491-1512) and "
                "_raise_or_fallback (:1728-1737); vllm/entrypoints/openai/api_server.py:209 assert envs.VLLM_USE_V1",
                "mla": "vllm/platforms/cuda.py, get_attn_backend_cls (sparse MLA :252-255, MLA chain :257-299; "
                "block size forced by check_and_update_config :153-182)",
                "v1": "vllm/platforms/cuda.py, get_attn_backend_cls (V1 chain :311-332, default :334-388)",
            }
        ),
    ),
)


def legacy_release(version: str) -> LegacyRelease:
    """The range holding `version` (0.10.0's for anything older)."""
    wanted = kb.release_numbers(version)[:3]
    holding = [r for r in LEGACY_RELEASES if kb.release_numbers(r.since) <= wanted]
    return holding[-1] if holding else LEGACY_RELEASES[0]


def valid_names(version: str) -> list[str]:
    """The release's own _Backend members, as vLLM lists them in its error (sorted here)."""
    release = kb.release_numbers(version)[:3]
    read = [r for numbers, r in kb._READ if numbers[:3] <= release]  # 0.10.1.1 stands for 0.10.1
    return sorted(kb.ENUM_BY_RELEASE[read[-1] if read else kb._READ[0][1]])


class Named(NamedTuple):
    """What vLLM does with VLLM_ATTENTION_BACKEND=name for one layer query in a release before 0.11.1."""

    runs: Optional[str]  # the backend that serves the layers; None: vLLM fails (error) or it is not modelled (note)
    as_named: bool  # the chain took the name (TRITON_ATTN_VLLM_V1 -> TRITON_ATTN counts)
    v0: bool = False  # on the V0 engine, 0.10.x's fallback
    error: str = ""  # vLLM's message when it stops
    stage: str = "startup"  # where it stops: startup (config, selection) or init (an Impl's constructor)
    note: str = ""  # what is not modelled
    source: str = ""
    fallback: str = ""  # the warning vLLM logs when it falls back to V0


def _v1_default(q: kb.VllmQuery, version: str) -> Optional[str]:
    """The non-MLA V1 default (select._legacy_select); an MLA layer falling through is judged by its
    latent head size, as the chain does."""
    return select.select(replace(q, use_mla=False, use_sparse=False), version).chosen


def _v0_default(q: kb.VllmQuery) -> str:
    """get_attn_backend_cls' V0 default: FLASH_ATTN unless the GPU, dtype, block size or head size rule it out."""
    block = q.block_size or 16
    ok = q.cc >= (8, 0) and q.dtype in kb.HALF and block % 16 == 0
    return "FLASH_ATTN" if ok and (q.head_size is None or q.head_size in V0_FLASH_ATTN_HEADS) else "XFORMERS"


def _mla_block(name: Optional[str], q: kb.VllmQuery, release: LegacyRelease) -> int:
    """The block size check_and_update_config leaves for an MLA model: FlashMLA's 64 on Hopper (named, or no
    name), CUTLASS MLA's 128, FlashInfer MLA's 64 (0.10.2-0.11.0), else --block-size or 16."""
    if release.mla_chain.get(name or "") == "CUTLASS_MLA":
        return 128
    if name in (None, "FLASHMLA") and q.cc[0] == 9:
        return 64
    if name == "FLASHINFER_MLA" and not release.mla_by_block and q.block_size not in (32, 64):
        return 64
    return q.block_size or 16


def _mla_chain(name: Optional[str], q: kb.VllmQuery, release: LegacyRelease) -> Optional[str]:
    """The MLA backend the MLA chain returns, or None where it falls through to the non-MLA chain."""
    block = _mla_block(name, q, release)
    if release.mla_by_block:
        if release.mla_chain.get(name or "") == "CUTLASS_MLA":
            return "CUTLASS_MLA"
        if name == "TRITON_MLA" or block != 64:
            return "TRITON_MLA"
        return "FLASHMLA" if q.cc[0] == 9 else None  # is_flashmla_supported: Hopper only
    if release.sparse_mla is not None and q.use_sparse:
        return release.sparse_mla  # whatever the name
    runs = release.mla_chain.get(name or "")
    if runs == "FLASHMLA" and block != 64:
        return None  # "FlashMLA backend is not supported for block size %d", and on
    return runs


class EnvCheck(NamedTuple):
    """How releases from `since` (to the next entry) treat a VLLM_ATTENTION_BACKEND value that is no member of their
    enum, compared case-sensitively; `message` None: the default runs."""

    since: str
    message: Optional[str]
    before_oracle: bool  # raised at the variable's first read, before the V1 oracle (else at backend selection)
    source: str


ENV_CHECKS: tuple[EnvCheck, ...] = (
    EnvCheck(
        "0.10.0",
        None,
        False,
        "vllm-project/vllm@v0.10.0: vllm/attention/selector.py, backend_name_to_enum (:21-32) gives None and "
        "_cached_get_attn_backend selects as if no name were set (:192-195)",
    ),
    EnvCheck(
        "0.10.1",
        INVALID_BACKEND,
        False,
        "vllm-project/vllm@v0.10.2: vllm/attention/selector.py, _cached_get_attn_backend (:196-202, the same lines "
        "in 0.10.1.1)",
    ),
    EnvCheck(
        "0.11.0",
        INVALID_VALUE,
        True,
        "vllm-project/vllm@v0.11.0: vllm/envs.py, env_with_choices (VLLM_ATTENTION_BACKEND :612-615, raise :269-271; "
        "0.11.2 :637-645 and :313-316, 0.12.0 :652-660 and :323-326), first read by ModelConfig.__post_init__ "
        "(config/model.py:417 in 0.11.0, :480 in 0.11.2, :472 in 0.12.0), before the selector's removesuffix"
        "('_VLLM_V1') (attention/selector.py:192-199 in 0.11.0, :138-146 in 0.12.0) is reached",
    ),
)


def env_check(version: str) -> EnvCheck:
    """The entry holding `version`, a release before --attention-backend (0.13.0)."""
    wanted = kb.release_numbers(version)[:3]
    return (
        [c for c in ENV_CHECKS if kb.release_numbers(c.since) <= wanted][-1] if wanted >= (0, 10, 0) else ENV_CHECKS[0]
    )


def forced_v1(use_v1: Optional[str]) -> Optional[bool]:
    """envs.VLLM_USE_V1 when the variable is set (bool(int(value))), else None."""
    return bool(int(use_v1)) if use_v1 is not None and use_v1.strip().isdigit() else None


def env_refusal(name: str, version: str, use_v1: Optional[str] = None) -> Optional[str]:
    """vLLM's message for VLLM_ATTENTION_BACKEND=name where the release refuses the name, else None. A check made
    at selection comes after the V1 oracle, which VLLM_USE_V1=1 makes raise first for a name outside V1_BACKENDS
    (no non-member is in it)."""
    check = env_check(version)
    if check.message is None or name in valid_names(version):
        return None
    if not check.before_oracle and forced_v1(use_v1):
        return USE_V1_REFUSED.format(name=name)
    return check.message.format(name=name, valid=valid_names(version))


def named(name: str, q: kb.VllmQuery, version: str, use_v1: Optional[str] = None) -> Named:
    """What vLLM `version` (before 0.11.1) runs for VLLM_ATTENTION_BACKEND=name on this layer; `use_v1` is the
    VLLM_USE_V1 value when set."""
    release = legacy_release(version)
    member = name in valid_names(version)
    forced = forced_v1(use_v1)
    check, refusal = env_check(version), env_refusal(name, version, use_v1)
    if refusal and check.before_oracle:
        return Named(None, False, error=refusal, source=check.source)
    fallback, refused, source = "", "", release.source("oracle")
    if forced is not False and not _kv_supported(name, q, release):
        fallback, refused, source = KV_FALLBACK, KV_USE_V1_REFUSED, release.source("kv", "oracle")
    elif forced is not False and name not in release.v1_backends:
        fallback, refused = V0_FALLBACK.format(name=name), USE_V1_REFUSED.format(name=name)
    if refused and forced:
        return Named(None, False, error=refused, source=source)
    v0 = forced is False or bool(fallback)
    if v0 and release.v0_chain is None:
        return Named(None, False, True, error=f"{NO_V0}, after: {fallback or FORCED_V0}", source=source)
    if refusal:
        return Named(None, False, v0, error=refusal, source=check.source, fallback=fallback)
    selected = name if member else None
    outcome = _v0(selected, q, release) if v0 else _v1(selected, q, version, release)
    outcome = outcome._replace(fallback=fallback or (FORCED_V0 if v0 else ""))
    declared = changes.backend_at(outcome.runs, kb.VALIDATE_SINCE) if outcome.runs and outcome.as_named else None
    if declared is not None and not outcome.v0 and q.cc not in declared.archs:
        # no release before 0.11.1 checks the GPU for a named backend: its kernels run where they were not built for
        note = (
            f"{outcome.runs} runs unchecked on SM{q.cc[0]}{q.cc[1]}, outside the {declared.archs.describe()} that "
            f"vllm {kb.VALIDATE_SINCE} declares for it (supports_compute_capability); how its kernels fail is not read"
        )
        return outcome._replace(runs=None, as_named=False, note=note)
    return outcome


def _kv_supported(name: str, q: kb.VllmQuery, release: LegacyRelease) -> bool:
    """EngineArgs._is_v1_supported_oracle's KV-cache check for VLLM_ATTENTION_BACKEND=name (is_kv_cache_dtype_
    supported): a quantised KV cache keeps the V1 engine on SM 10.0, or with a name that takes it."""
    if release.kv_oracle is None or not kb.is_quantised_kv(q.kv_dtype) or q.cc == (10, 0):
        return True
    fp8 = q.kv_dtype.startswith("fp8")
    takes = release.kv_oracle.get(name, "")
    if q.use_mla and "mla" in release.kv_oracle.values():  # 0.10.2: the MLA names, or no fp8
        return takes == "mla" or not fp8
    fa3 = fp8 and q.cc[0] == 9  # flash_attn_supports_fp8: FA version 3, on 9.x
    return {"fa3": fa3, "any": True, "sm89": q.cc >= (8, 9)}.get(takes, False)


def _v1(selected: Optional[str], q: kb.VllmQuery, version: str, release: LegacyRelease) -> Named:
    if q.use_mla:
        mla = _mla_chain(selected, q, release)
        if mla is not None:
            return Named(mla, mla == release.mla_chain.get(selected or "", selected), source=release.source("mla"))
    runs = release.v1_chain.get(selected or "")
    as_named = runs is not None
    if runs is None:
        runs = _v1_default(q, version)
    source = release.source(*(("mla", "v1") if q.use_mla else ("v1",)))
    if runs is None:
        return Named(None, False, note="the V1 default for this layer is not modelled", source=source)
    if not q.use_mla:
        if runs == "FLASH_ATTN" and kb.is_quantised_kv(q.kv_dtype) and q.cc[0] != 9:  # FA3 on 9.x takes fp8
            return Named(None, False, error=FA_FP8_KV_REFUSED, stage="init", source=release.source("fa_fp8"))
        return Named(runs, as_named, source=source)
    if runs in release.kwargs_impls:
        note = f"the non-MLA {V1_IMPLS[runs]} is built for the MLA layers (it takes **kwargs); what it then does is not read"
        return Named(None, False, note=note, source=source)
    return Named(None, False, error=MLA_KWARGS.format(impl=V1_IMPLS[runs]), stage="init", source=source)


def _v0(selected: Optional[str], q: kb.VllmQuery, release: LegacyRelease) -> Named:
    assert release.v0_chain is not None, "called where the release has a V0 engine"
    source = release.source("oracle", "v0")
    if q.use_mla:  # the MLA chain with use_v1 False: only Triton MLA and FlashMLA have V0 classes
        block = _mla_block(selected, q, release)
        if selected == "TRITON_MLA" or (release.mla_by_block and block != 64):
            return Named("TRITON_MLA", selected == "TRITON_MLA", True, source=source)
        flashmla = release.mla_by_block or selected in ("FLASHMLA", "FLASHMLA_VLLM_V1")
        if flashmla and q.cc[0] == 9 and block == 64:
            return Named("FLASHMLA", selected in ("FLASHMLA", "FLASHMLA_VLLM_V1"), True, source=source)
    if selected is not None and selected not in release.v0_chain:
        return Named(None, False, True, error=V0_INVALID.format(mla=q.use_mla), source=source)
    runs = release.v0_chain[selected] if selected not in (None, "FLASH_ATTN") else _v0_default(q)
    if q.use_mla:
        return Named(None, False, True, error=MLA_KWARGS.format(impl=V0_IMPLS[runs]), stage="init", source=source)
    return Named(runs, selected is not None and runs == release.v0_chain.get(selected), True, source=source)


def spelling(backend: str, version: str) -> Optional[str]:
    """The VLLM_ATTENTION_BACKEND value the release's chains take for `backend` (TRITON_ATTN_VLLM_V1 in 0.10.x),
    None where no name selects it."""
    release = legacy_release(version)
    chains = {**release.mla_chain, **release.v1_chain}
    return next((name for name, runs in chains.items() if runs == backend), None)


def spelled(names: list[str], version: str) -> list[str]:
    """Backend names as a release before 0.11.1 takes them (TRITON_ATTN -> TRITON_ATTN_VLLM_V1 in 0.10.x), once each;
    as given for a later or unreadable release."""
    try:
        if kb.release_numbers(version)[:3] >= kb.release_numbers(kb.VALIDATE_SINCE)[:3]:
            return names
    except InvalidVersion:
        return names
    return list(dict.fromkeys(spelling(name, version) or name for name in names))
