"""Older values of vLLM's backend declarations, release by release: each `Change` is one capability as it held
for releases in [since, until), read from the backend classes of the vllm 0.11.1-0.30.0 wheels; `backend_at`
applies them to the newest declarations (attn_preflight.rules.engines.vllm.capabilities)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping, Optional

from attn_preflight.rules.engines.vllm.capabilities import (
    VALIDATE_SINCE,
    Archs,
    HeadSizes,
    MultipleOf,
    VllmBackend,
    majors,
    release_for,
    release_numbers,
)


@dataclass(frozen=True)
class Change:
    """An older value of one declared capability: it held for releases in [since, until). Read from the same
    backend classes in the vllm 0.11.1, 0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.15.0-0.19.1, 0.20.0, 0.26.0 and 0.30.0
    wheels (FLASHINFER's also in 0.21.0-0.25.1; a pre-release `since` is judged as its release)."""

    backend: str
    field: str
    value: object
    until: str  # the first release read with today's value
    since: str = "0.15.0"  # the oldest release read with this value
    seen: str = ""  # the releases read that show it


# KV-cache dtypes before 0.15.0 (0.12.0: flash_attn.py:147-152, flashinfer.py:281-286, triton_attn.py:157-162,
# flex_attention.py:82, mla/flashmla.py:42, cutlass_mla.py:39, flashinfer_mla.py:38, flashattn_mla.py:44,
# triton_mla.py:31, flashmla_sparse.py:58); 0.15.0 adds "bfloat16" to each list and 0.18.0 "float16" (and
# TRITON_MLA fp8, FLASHMLA_SPARSE the "fp8" alias), which is what 0.33.0 declares for the MLA backends and FLEX.
# FLASH_ATTN takes any fp8* only where flash_attn_supports_fp8() (FA3 on 9.x: fa_utils.py:84-88 in 0.12.0, the
# same through 0.19.x), so its fp8 names carry that arch (FLASH_ATTN kv_dtype_archs below).
KV_BEFORE_0_15: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "FLASH_ATTN": frozenset({"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}),
        "FLASHINFER": frozenset({"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}),
        "TRITON_ATTN": frozenset({"auto", "fp8", "fp8_e4m3", "fp8_e5m2"}),
        "FLEX_ATTENTION": frozenset({"auto"}),
        "FLASHMLA": frozenset({"auto", "fp8", "fp8_e4m3"}),
        "CUTLASS_MLA": frozenset({"auto", "fp8", "fp8_e4m3"}),
        "FLASHINFER_MLA": frozenset({"auto", "fp8", "fp8_e4m3"}),
        "FLASH_ATTN_MLA": frozenset({"auto"}),
        "TRITON_MLA": frozenset({"auto"}),
        "FLASHMLA_SPARSE": frozenset({"auto", "fp8_ds_mla"}),
    }
)
SEEN_0_11_TO_0_14 = "0.11.1, 0.11.2, 0.12.0, 0.13.0, 0.14.1"
SEEN_0_15_TO_0_17 = "0.15.0, 0.15.1, 0.16.0, 0.17.0, 0.17.1"
SEEN_0_18_TO_0_19 = "0.18.0, 0.18.1, 0.19.0, 0.19.1"

CHANGES: tuple[Change, ...] = (
    # FlashInferMLABackend.supports_combination: no qk_nope_head_dim check in 0.11.1-0.14.x (none in
    # flashinfer_mla.py of 0.11.2, 0.12.0, 0.13.0, 0.14.0 and 0.14.1); `!= 128` in 0.15.0-0.17.x (:85 in 0.15.0,
    # 0.15.1, 0.16.0, 0.17.0 and 0.17.1); `not in [64, 128]` in 0.18.x (:87 in 0.18.0 and 0.18.1); [64, 128, 192]
    # from 0.19.0 (:87 in 0.19.0-0.20.0, :245 in 0.33.0)
    Change(
        "FLASHINFER_MLA",
        "qk_nope_head_dims",
        None,
        until="0.15.0",
        since=VALIDATE_SINCE,
        seen="0.11.2, 0.12.0, 0.13.0, 0.14.0, 0.14.1",
    ),
    Change("FLASHINFER_MLA", "qk_nope_head_dims", (128,), until="0.18.0", since="0.15.0", seen=SEEN_0_15_TO_0_17),
    Change("FLASHINFER_MLA", "qk_nope_head_dims", (64, 128), until="0.19.0", since="0.18.0", seen="0.18.0, 0.18.1"),
    *(
        Change(name, "kv_dtypes", kv, until="0.15.0", since=VALIDATE_SINCE, seen=SEEN_0_11_TO_0_14)
        for name, kv in KV_BEFORE_0_15.items()
    ),
    *(
        Change(name, "kv_dtypes", kv | {"bfloat16"}, until="0.18.0", since="0.15.0", seen=SEEN_0_15_TO_0_17)
        for name, kv in KV_BEFORE_0_15.items()
    ),
    *(
        Change(
            name,
            "kv_dtypes",
            KV_BEFORE_0_15[name] | {"float16", "bfloat16"},
            until="0.20.0",
            since="0.18.0",
            seen=SEEN_0_18_TO_0_19,
        )
        for name in ("FLASH_ATTN", "TRITON_ATTN")
    ),
    Change(
        "FLASH_ATTN",
        "kv_dtype_archs",
        tuple((kv, majors(9)) for kv in ("fp8", "fp8_e4m3", "fp8_e5m2")),
        until="0.20.0",
        since=VALIDATE_SINCE,
        seen=f"{SEEN_0_11_TO_0_14}, {SEEN_0_15_TO_0_17}, {SEEN_0_18_TO_0_19}",
    ),
    # FlashInferBackend.supports_compute_capability: >= 7.5 through 0.23 (flashinfer.py:352-356 in 0.12.0, :339-343
    # in 0.11.1, :408 in 0.23.0), >= 8.0 from 0.24.0 (:432, the SM75 comment); get_supported_head_sizes gains 512
    # in 0.22.0 (:347-348 in 0.12.0, :334-335 in 0.11.1, 0.21.0 :406, 0.22.0 :405)
    Change(
        "FLASHINFER",
        "archs",
        Archs(lo=(7, 5), hi=(12, 1)),
        until="0.24.0",
        since=VALIDATE_SINCE,
        seen=f"{SEEN_0_11_TO_0_14}, 0.15.0, 0.20.0, 0.23.0",
    ),
    Change(
        "FLASHINFER",
        "head_sizes",
        HeadSizes(allowed=frozenset({64, 128, 256})),
        until="0.22.0",
        since=VALIDATE_SINCE,
        seen=f"{SEEN_0_11_TO_0_14}, 0.15.0, 0.20.0, 0.21.0",
    ),
    Change(
        "FLASHINFER",
        "kv_dtypes",
        frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"}),
        until="0.21.0",
        since="0.18.0",
        seen="0.18.0, 0.19.1, 0.20.0",
    ),
    Change(  # supported_kv_cache_dtypes gains nvfp4 in 0.21.0 (flashinfer.py:329-337)
        "FLASHINFER",
        "kv_dtypes",
        frozenset({"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"}),
        until="0.30.0",
        since="0.21.0",
        seen="0.21.0, 0.23.0, 0.24.0, 0.25.0, 0.25.1, 0.26.0",
    ),
    Change(  # 0.21-0.24: no supports_kv_cache_dtype override, the class takes nvfp4 on every arch it admits
        "FLASHINFER",
        "kv_dtype_archs",
        (),
        until="0.25.0",
        since="0.21.0",
        seen="0.21.0, 0.23.0, 0.24.0",
    ),
    Change(  # 0.32.0 adds the FA2 path on SM8x/SM9x/SM12x (flashinfer.py:109-110, :529-539), as 0.33.0 has it
        "FLASHINFER",
        "kv_dtype_archs",
        (("nvfp4", majors(10)), ("nvfp4_4over6", majors(10))),
        until="0.32.0",
        since="0.25.0",
        seen="0.25.0 and 0.25.1 (flashinfer.py:427-434), 0.26.0 (:446-453), 0.30.0, 0.31.0 (:499-506): SM100 "
        "family only",
    ),
    # supports_sink -> utils/flashinfer.py supports_trtllm_attention: is_device_capability(100), SM 10.0 only
    # (0.11.1 and 0.11.2 :229, 0.12.0 :267); is_device_capability_family(100) from 0.13.0 (:268, 0.14.1 :285)
    Change("FLASHINFER", "sinks", Archs(exact=frozenset({(10, 0)})), until="0.13.0", since=VALIDATE_SINCE),
    Change(
        "FLASHINFER",
        "sinks",
        majors(10),
        until="0.30.0",
        since="0.13.0",
        seen="0.13.0, 0.14.1, 0.16.0, 0.17.0, 0.20.0, 0.26.0",
    ),
    # fa_utils.flash_attn_supports_sinks: get_flash_attn_version() == 3 (0.12.0 attention/utils/fa_utils.py:91-95,
    # 0.16.0 fa_utils.py:123-127, 0.19.0 :164-168); (3, 4) from 0.20.0 (:200-203)
    Change(
        "FLASH_ATTN",
        "sink_fa_versions",
        frozenset({3}),
        until="0.20.0",
        since=VALIDATE_SINCE,
        seen=f"{SEEN_0_11_TO_0_14}, 0.15.0, 0.16.0, 0.17.0, 0.19.0",
    ),
    # FlashAttentionBackend.get_supported_head_sizes: 32..256 by 32 (flash_attn.py:122-123 in 0.11.1/0.11.2);
    # supports_head_size `% 8 == 0 and <= 256` from 0.12.0 (:143-144) through 0.19.x; 512 with FA4 from 0.20.0
    Change(
        "FLASH_ATTN",
        "head_sizes",
        HeadSizes(allowed=frozenset(range(32, 257, 32))),
        until="0.12.0",
        since=VALIDATE_SINCE,
        seen="0.11.1, 0.11.2",
    ),
    Change(
        "FLASH_ATTN",
        "head_sizes",
        HeadSizes(multiple_of=8, maximum=256),
        until="0.20.0",
        since="0.12.0",
        seen=f"0.12.0, 0.13.0, 0.14.1, {SEEN_0_15_TO_0_17}, {SEEN_0_18_TO_0_19}",
    ),
    Change(
        "FLASH_ATTN",
        "kv_dtype_archs",
        (("fp8", majors(9)), ("fp8_e4m3", majors(9))),
        until="0.30.0",
        since="0.20.0",
        seen="0.20.0, 0.26.0 (fp8 KV only where get_flash_attn_version() == 3)",
    ),
    # FlashMLASparseBackend.get_supported_head_sizes: [576] (flashmla_sparse.py:77-78 in 0.12.0, :103 in 0.15.0,
    # :107 in 0.19.1, :123 in 0.22.1, :116 in 0.26.0); [512, 576] in 0.20.0-0.21.0 (:121) and 0.33.0
    Change(
        "FLASHMLA_SPARSE",
        "head_sizes",
        HeadSizes(allowed=frozenset({576})),
        until="0.20.0",
        since=VALIDATE_SINCE,
        seen=f"{SEEN_0_11_TO_0_14}, 0.15.0, 0.17.0, 0.18.0, 0.19.0, 0.19.1",
    ),
    Change(
        "FLASHMLA_SPARSE",
        "head_sizes",
        HeadSizes(allowed=frozenset({576})),
        until="0.33.0",
        since="0.22.0",
        seen="0.22.0, 0.22.1, 0.23.0, 0.24.0, 0.25.0, 0.26.0, 0.30.0",
    ),
    # FlashInferMLASparseBackend.get_supported_head_sizes: [576] (flashinfer_mla_sparse.py:86 in 0.17.0, :56 in
    # 0.29.0); [512, 576] from 0.30.0 (:57)
    Change(
        "FLASHINFER_MLA_SPARSE",
        "head_sizes",
        HeadSizes(allowed=frozenset({576})),
        until="0.30.0",
        since="0.17.0",
        seen="0.17.0, 0.18.0, 0.19.1, 0.20.2, 0.22.1, 0.24.0, 0.26.0, 0.29.0",
    ),
    # FlashMLASparseBackend.supported_kv_cache_dtypes: the "fp8" alias of fp8_ds_mla from 0.18.0 (before it, the
    # KV_BEFORE_0_15 lists above: flashmla_sparse.py:79-83 in 0.15.0, :82-86 in 0.17.0 and 0.17.1)
    Change(
        "FLASHMLA_SPARSE",
        "kv_dtypes",
        frozenset({"auto", "bfloat16", "fp8_ds_mla", "fp8"}),
        until="0.33.0",
        since="0.18.0",
        seen="0.18.0, 0.18.1, 0.19.0, 0.19.1, 0.20.0, 0.26.0, 0.30.0",
    ),
    # MLACommonBackend.get_supported_head_sizes, which every dense MLA backend inherits (TRITON_MLA too until its
    # own `[]`, any size, in 0.18.0): [576] (mla/common.py:321-322 in 0.12.0, :312 in 0.11.1; model_executor/layers/
    # attention/mla_attention.py:359 in 0.15.0, :1017 in 0.16.0, :1093 in 0.17.0 and 0.17.1), [320, 576] (:1154 in
    # 0.18.0, :1152 in 0.19.1, :1235 in 0.20.0)
    *(
        Change(
            name,
            "head_sizes",
            HeadSizes(allowed=frozenset({576})),
            until="0.18.0",
            since=VALIDATE_SINCE,
            seen=f"{SEEN_0_11_TO_0_14}, {SEEN_0_15_TO_0_17}",
        )
        for name in ("FLASHMLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHINFER_MLA", "TOKENSPEED_MLA", "TRITON_MLA")
    ),
    *(
        Change(
            name,
            "head_sizes",
            HeadSizes(allowed=frozenset({320, 576})),
            until="0.30.0",
            since="0.18.0",
            seen="0.18.0, 0.19.0, 0.19.1, 0.20.0, 0.26.0 (MLACommonBackend.get_supported_head_sizes)",
        )
        for name in ("FLASHMLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHINFER_MLA", "TOKENSPEED_MLA")
    ),
    # FlexAttentionBackend had no get_supported_kernel_block_sizes before 0.21.0 and inherited the base
    # [MultipleOf(1)] (v1/attention/backend.py:64-65 in 0.19.1); [MultipleOf(16)] from 0.21.0
    # (flex_attention.py:143-144), vllm PR #41363
    Change(
        "FLEX_ATTENTION",
        "block_sizes",
        (MultipleOf(1),),
        until="0.21.0",
        seen="0.15.0, 0.19.0, 0.19.1, 0.20.0, 0.20.2 (no override in flex_attention.py)",
    ),
    Change(
        "TRITON_ATTN",
        "kv_dtypes",
        frozenset(
            {"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8_per_token_head", "fp8_per_token_head"}
        ),
        until="0.26.0",
        since="0.20.0",
        seen="0.20.0",
    ),
)


def backend_at(name: str, version: Optional[str]) -> Optional[VllmBackend]:
    """The backend as the given vLLM release declares it (the newest read when the version is unknown)."""
    backend = release_for(version).backends.get(name)
    if backend is None or version is None:
        return backend
    wanted = release_numbers(version)[:3]
    # each Change.value has the type of the field it names (`object` in Change: the fields differ)
    updates: dict[str, Any] = {
        c.field: c.value
        for c in CHANGES
        if c.backend == name and release_numbers(c.since) <= wanted < release_numbers(c.until)
    }
    return replace(backend, **updates) if updates else backend
