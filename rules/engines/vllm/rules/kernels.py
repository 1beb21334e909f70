"""vLLM: what a backend's kernels take once vLLM has selected it: the FlashAttention version FLASH_ATTN resolves and
the libraries FA4 imports, FlashInfer's SM90 prefill over an FP8 KV cache, the Triton backends' dtypes per arch,
and FlexAttention's limits. Each fails in a backend's constructor or first forward, after validation passed."""

from __future__ import annotations

from attn_preflight.rules.checks.common import (
    gpu,
    kv_found,
    kv_unquantised_fix,
    libraries_found,
    library_state,
    running_flashinfer,
)
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import fa4 as kb_fa4
from attn_preflight.rules.engines.vllm import flashinfer as kb_fi
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.kernels import flashinfer as kb_flashinfer


@rule(
    id="vllm-flash-attn-version",
    title="The requested FlashAttention version runs on this GPU",
    engine="vllm",
    versions="vllm>=0.13.0",
    stage="runtime",
    prevents="Cannot use FA version 3 is not supported due to " + kb.FA_UNSUPPORTED_REASON[3],
    source=kb.FA_VERSION_SOURCE + "; " + kb.FA_SUPPORT_SOURCE,
    docs="""Checks `--attention-config.flash_attn_version=N` (FLASH_ATTN only) against the archs the
vllm_flash_attn build runs each version on: FA2 >= 8.0, FA3 9.x only (built for sm_90a), FA4 9.x, 10.x
or 11.x.

get_flash_attn_version takes the requested version, switches FA3 on Blackwell (>= 10.x) to FA4 (or FA2)
with the warning "Cannot use FA version 3 on Blackwell platform, …", and otherwise asserts that the
version is supported: on failure it logs "Cannot use FA version N is not supported due to …" and returns
None, and the FlashAttention layer fails with "FlashAttention version not detected." Without the flag
vLLM picks FA3 on 9.x, FA4 on 10.x and FA2 elsewhere.

Before 0.17.0 there is no FA4: version 4 is refused when the config is parsed (flash_attn_version is
Literal[2, 3]), FA3 on 10.x becomes FA2, and FA3 on 12.x is refused.

Where sources disagree: the 2026-05 backends matrix read vLLM's pinned FA fork, whose _is_fa4_supported
accepted 10.x only; the fork shipped from vllm 0.17.0 accepts 9.x, 10.x and 11.x. This rule follows the wheels.""",
    fix_title="Drop --attention-config.flash_attn_version, or request a version this GPU runs",
)
def vllm_flash_attn_version(cfg, target):
    requested = cfg.flags.get("attention_config.flash_attn_version")
    if requested is None:
        return skipped("no FA version requested")
    requested = int(requested)
    fix = ["drop --attention-config.flash_attn_version"]
    accepted = kb.fa_versions_accepted(vllm.release_of(target))
    if requested not in accepted:
        return failed(
            f"--attention-config.flash_attn_version={requested} at vllm {vllm.release_of(target) or kb.VLLM_VERSION}",
            f"one of {', '.join(map(str, accepted))}" + ("" if 4 in accepted else " (4 from vllm 0.17.0)"),
            fix,
        )
    if cfg.attention_backend not in (None, "FLASH_ATTN"):
        return skipped(f"the FA version applies to FLASH_ATTN, not {cfg.attention_backend}")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    resolution = kb.flash_attn_version(target.cc, requested=requested, release=vllm.release_of(target))
    if resolution.version is None:
        return failed(f"FA{requested} on {gpu(target)}", kb.FA_UNSUPPORTED_REASON.get(requested, "FA 2, 3 or 4"), fix)
    if resolution.version != requested:
        return warned(
            f"FA{requested} on {gpu(target)}: vLLM runs FA{resolution.version}",
            kb.FA_UNSUPPORTED_REASON[requested],
            fix,
            reason=resolution.notes[0],
        )
    return passed(f"FA{requested} on {gpu(target)}", f"FA{requested} runs on {kb.FA_SUPPORTED[requested].describe()}")


def _flash_attn_query(cfg: Config, target: Target, no_gpu: Outcome):
    """(vLLM's query, None) where FLASH_ATTN runs the config, named or selected by vLLM; else (None, the outcome
    to answer: skipped, or `no_gpu` on a target without a CUDA GPU)."""
    if cfg.attention_backend not in (None, "FLASH_ATTN"):
        return None, skipped("applies to FLASH_ATTN")
    if target.cc is None:
        return None, no_gpu
    q = vllm.query(cfg, target)
    if cfg.attention_backend is None and vllm.selected(q, target).chosen != "FLASH_ATTN":
        return None, skipped("vLLM does not select FLASH_ATTN for this config")
    return q, None


@rule(
    id="vllm-flash-attn-fallback",
    title="FLASH_ATTN runs the FlashAttention version this GPU is best at",
    engine="vllm",
    versions="vllm>=0.29.0",
    stage="init",
    prevents=kb.FA4_TMEM_MESSAGE.format(head_size=192),
    reason="vLLM silently falls back to FA2 (a warning in the log), which runs but is slower than FA3/FA4.",
    source=kb.FA_VERSION_SOURCE,
    docs="""Warns when FLASH_ATTN would resolve FlashAttention 2 on a GPU whose default is FA4 (10.x) or
FA3 (9.x), because of the model's head size or features.

On Blackwell, FA4's tensor-memory budget limits head sizes: above 128 only 256 (hd256 kernel) and 192/128
are kept (192/128 only for a caller passing head_size_v, which FlashAttentionImpl never does: an MLA-disabled
DeepSeek's head size 192 runs FA2), anything else logs "FA4 on Blackwell does not support head_size=N due to TMEM capacity limits,
defaulting to FA version 2." The hd256 kernel itself falls back to FA2 for attention sinks, logit soft-cap,
a quantised KV cache or a block size that is not a multiple of 128. ALiBi forces FA2 on any arch.""",
    fix_title="Accept FA2, or use FLASHINFER (the default on SM100) for this model",
)
def vllm_flash_attn_fallback(cfg, target):
    q, skip = _flash_attn_query(cfg, target, unknown("no CUDA GPU on the target"))
    if skip:
        return skip
    if q.head_size is None:
        return skipped("needs the model's head size (--model)")
    default = kb.flash_attn_version(target.cc).version
    resolution = vllm.flash_attn_resolution(q, target)
    wanted = q.fa_version or default
    if resolution.version == 2 and wanted in (3, 4):
        return warned(
            f"FLASH_ATTN resolves FA2 for head size {q.head_size} on {gpu(target)}",
            f"FA{wanted}",
            vllm.instead(q, target, "FLASH_ATTN") if cfg.attention_backend else [],
            reason=resolution.notes[-1],
        )
    return passed(f"FLASH_ATTN resolves FA{resolution.version} on {gpu(target)}", f"FA{wanted or 2}")


@rule(
    id="vllm-fa4-library",
    title="FLASH_ATTN on FA4 needs a working CUTLASS CuTe DSL and quack-kernels",
    engine="vllm",
    versions=f"vllm>={kb_fa4.FA4_SINCE}",
    stage="runtime",
    needs_software=True,
    prevents="ModuleNotFoundError: No module named 'cutlass'",
    source=kb.src(
        kb.FA_IFACE,
        "flash_attn_varlen_func (imports vllm.vllm_flash_attn.cute.interface at the first FA4 "
        "call; FA4_AVAILABLE only checks that cute/interface.py exists)",
    )
    + "; "
    + kb_fa4.PINS_SOURCE,
    docs="""Checks, when FLASH_ATTN resolves FlashAttention 4 (by default on 10.x, or by
--attention-config.flash_attn_version=4), that the CUTLASS CuTe DSL (nvidia-cutlass-dsl, `cutlass.cute`) and
quack-kernels are installed and import.

vLLM runs FA4 from its own vllm_flash_attn build (vllm/vllm_flash_attn/cute, from vLLM 0.17.0), not from the pip
flash-attn-4 package. vLLM counts FA4 as available when cute/interface.py exists, so it starts and loads the
weights; the first FA4 call imports the interface, which imports `cutlass` and `quack`, and fails there. A
`cutlass` that imports only from a source tree (its .pth file not processed) shows here as a failed import.
Which head sizes above 128 keep FA4 on Blackwell changed by release: none in 0.17.x; 192 in 0.18-0.26; 256 in
0.27 (not on its sliding-window layers); none in 0.28; 256 through its own kernel from 0.29 (not with sinks,
soft-cap, a quantised KV cache or a block size that is not a multiple of 128). The fix installs the versions
the target's vLLM release requires (from nvidia-cutlass-dsl>=4.4.0.dev1 and quack-kernels>=0.2.7
in 0.17.0 to nvidia-cutlass-dsl[cu13]==4.8.0 and quack-kernels==0.6.5 in 0.32.0 and 0.33.0).""",
    fix_title="Install the nvidia-cutlass-dsl and quack-kernels versions the vLLM release requires",
)
def vllm_fa4_library(cfg, target):
    q, skip = _flash_attn_query(cfg, target, skipped("no CUDA GPU (rule install-no-cuda-gpu)"))
    if skip:
        return skip
    version = vllm.flash_attn_resolution(q, target).version
    if version != 4:
        return skipped(
            f"applies to FA4; FLASH_ATTN resolves {f'FA{version}' if version else 'no FA version'} on {gpu(target)}"
        )
    states = {
        name: library_state(target, key)
        for key, name in (("cutlass_dsl", "nvidia-cutlass-dsl"), ("quack", "quack-kernels"))
    }
    found = libraries_found(states)
    required = "nvidia-cutlass-dsl and quack-kernels that import (FA4 on vllm_flash_attn)"
    if any(state.healthy is False for state in states.values()):
        return failed(found, required, [kb_fa4.pins(vllm.release_of(target)).install()])
    if any(state.healthy is None for state in states.values()):
        return unknown(f"import health not checked: {found}")
    return passed(found, required)


@rule(
    id="vllm-flashinfer-fp8-kv-sm90",
    title="FlashInfer before 0.6.4 compiles its SM90 (FA3) prefill for a 16-bit query over an FP8 KV cache, and fails",
    engine="vllm",
    versions="vllm>=0.10.2",
    needs_gpu=True,
    stage="runtime",
    prevents=kb_flashinfer.FA3_FP8_KV_JIT_ERROR,
    source=f"{kb_flashinfer.FA3_DTYPE_CHECK_SOURCE}; vllm: vllm/v1/attention/backends/flashinfer.py, "
    f"FlashInferMetadataBuilder (q_data_type, _get_prefill_wrapper); the pins: {kb_fi.PINS_SOURCE}",
    references=(
        "https://github.com/vllm-project/vllm/issues/27604",
        "https://github.com/vllm-project/vllm/issues/31843",
        "https://github.com/flashinfer-ai/flashinfer/issues/2348",
        "https://github.com/flashinfer-ai/flashinfer/pull/2536",
    ),
    docs="""Checks FLASHINFER with an FP8 KV cache (fp8, fp8_e4m3, fp8_e5m2) on an SM90 GPU (H100, H200, H20)
against the FlashInfer that runs it: the installed one when the target's software is known (a probe,
--facts, --engine-version flashinfer==X), else the flashinfer-python the vLLM release pins.

Off SM100 vLLM keeps the query in the model's dtype (bf16/fp16) and asks FlashInfer for its prefill
kernels with backend "auto". Up to FlashInfer 0.6.3, "auto" picks the FA3 (SM90) kernels on Hopper whatever
the dtypes, and the FA3 kernel has no tensor-core MMA for a 16-bit query over an FP8 cache: its JIT build
fails (cute::make_tiled_mma / rs_op_selector, vllm#27604 on vLLM 0.11.0, vllm#31843 on FlashInfer 0.5.3) and
the engine dies at its first prefill. FlashInfer 0.6.4 (PR #2536) sends that pair to its FA2 kernel instead;
vLLM 0.17.0 is the first release to pin it. FLASH_ATTN reads an FP8 KV cache on SM90 with FA3.""",
    fix_title="Use FLASH_ATTN (FA3 reads an FP8 KV cache on SM90) or --kv-cache-dtype auto; or FlashInfer 0.6.4+ "
    "(pinned from vLLM 0.17.0)",
)
def vllm_flashinfer_fp8_kv_sm90(cfg, target):
    q = vllm.query(cfg, target)
    if cfg.attention_backend is None:
        if vllm.selected(q, target).chosen != "FLASHINFER":
            return skipped("vLLM does not select FLASHINFER for this config")
    elif cfg.attention_backend != "FLASHINFER":
        return skipped("applies to FLASHINFER")
    if target.major != 9:
        return skipped(f"FlashInfer's FA3 prefill kernels run on SM90 only, not on {gpu(target)}")
    if cfg.kv_cache_dtype not in kb_fi.FP8_KV_DTYPES:
        return skipped("applies to an FP8 KV cache")
    if q.use_mla:
        return skipped("FLASHINFER serves non-MLA attention (vllm-non-mla-model-backend)")
    release = vllm.release_of(target) or kb.VLLM_VERSION
    run = running_flashinfer(
        target, "vllm", release, kb_fi.pinned(release), kb_flashinfer.fa3_takes_16bit_query_over_fp8
    )
    if run.outcome is not None:
        return run.outcome
    found = f"{kv_found(cfg, target)} on FLASHINFER, {gpu(target)}, {run.said}"
    required = f"flashinfer {kb_flashinfer.FA3_DTYPE_CHECK_FROM}+ (FA2 serves a 16-bit query over an FP8 KV cache)"
    if not run.fa3:
        return passed(found, required)
    flash_attn = vllm.use_backend("FLASH_ATTN", target)
    return failed(found, required, [flash_attn, *kv_unquantised_fix(cfg, target, q.dtype)])


# The KV-cache dtypes the Triton backends' Impls store only from a compute capability on: Triton's native FP8 type
# (fp8e4nv) needs SM89, bfloat16 SM80 (TritonAttentionImpl / TritonMLAImpl.__init__).
TRITON_KV_MINIMUM_CC = {"fp8": (8, 9), "bfloat16": (8, 0)}


def triton_kv_dtype_arch(cfg: Config, target: Target, backend: str) -> Outcome:
    """The one check of the Triton backends' KV dtype minimums (TRITON_KV_MINIMUM_CC), for `backend` named or picked."""
    if cfg.attention_backend is None and target.cc is not None:
        forced = vllm.gemma4_forcing(cfg, target)
        chosen = forced.backend if forced and forced.backend else vllm.selected(vllm.query(cfg, target), target).chosen
        if chosen != backend:
            return skipped(f"vLLM does not select {backend} for this config")
    elif cfg.attention_backend != backend:
        return skipped(f"applies to {backend}")
    if target.cc is None:
        return unknown("no CUDA GPU on the target")
    found = f"{kv_found(cfg, target)} on {backend} ({gpu(target)})"
    needed = next((cc for kv, cc in TRITON_KV_MINIMUM_CC.items() if cfg.kv_cache_dtype.startswith(kv)), None)
    if needed is not None and target.cc < needed:
        stored = "bfloat16" if target.cc >= TRITON_KV_MINIMUM_CC["bfloat16"] else "float16"
        return failed(found, f"compute capability >= {needed[0]}.{needed[1]}", [f"--kv-cache-dtype {stored}"])
    return passed(found, "fp8 on SM89+, bfloat16 on SM80+")


# one rule per Triton backend, each judged by triton_kv_dtype_arch
TRITON_KV_ARCH_RULES = (
    (
        "TRITON_MLA",
        dict(
            id="vllm-triton-mla-fp8-kv-arch",
            title="TRITON_MLA reads an FP8 KV cache only on SM89 and newer",
            versions="vllm>=0.26.0",
            prevents="FP8 KV cache is not supported by the Triton MLA backend on NVIDIA A100-SXM4-80GB (compute "
            "capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.",
            source=kb.src(f"{kb.BACKENDS_DIR}/mla/triton_mla.py", "TritonMLAImpl.__init__"),
            docs="""Checks TRITON_MLA with an FP8 KV cache on GPUs older than SM89 (A100, A10, V100, T4), and a
bfloat16 KV cache below SM80.

validate_configuration accepts fp8 for TRITON_MLA on every GPU, but TritonMLAImpl raises when the layer is
built: Triton's native FP8 type (fp8e4nv) needs SM89, and bfloat16 needs SM80. This happens after backend
selection, while the model is being constructed.""",
            fix_title="Use --kv-cache-dtype bfloat16 (float16 below SM80)",
        ),
    ),
    (
        "TRITON_ATTN",
        dict(
            id="vllm-triton-fp8-kv-arch",
            title="TRITON_ATTN reads an FP8 KV cache only on SM89 and newer",
            versions="vllm>=0.11.0",
            prevents="FP8 KV cache is not supported by the Triton attention backend on NVIDIA A100-SXM4-80GB (compute "
            "capability 8.0); native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.",
            source=kb.src(f"{kb.BACKENDS_DIR}/triton_attn.py", "TritonAttentionImpl.__init__"),
            references=("https://github.com/vllm-project/vllm/pull/35720",),
            docs="""Checks TRITON_ATTN with an FP8 KV cache on GPUs older than SM89 (A100, A10, V100, T4), and a
bfloat16 KV cache below SM80.

validate_configuration accepts fp8 for TRITON_ATTN on every GPU. From vLLM 0.24.0 TritonAttentionImpl
raises when the layer is built (triton_attn.py:510-533 in 0.33.0): Triton's native FP8 type (fp8e4nv)
needs SM89, and bfloat16 needs SM80. Before that (0.16.0, PR #35720) the same config crashed at the first
forward, when Triton compiled the FP8 kernel.""",
            fix_title="Use --kv-cache-dtype bfloat16 (float16 below SM80)",
        ),
    ),
)
for _backend, _row in TRITON_KV_ARCH_RULES:

    def _check(cfg: Config, target: Target, backend: str = _backend) -> Outcome:
        return triton_kv_dtype_arch(cfg, target, backend)

    rule(**_row, engine="vllm", stage="init", generated=True)(_check)
