"""SGLang's Mamba SSM cache flags (handle_mamba_backend)."""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    gpu,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown

MAMBA_HOOK = "sglang: python/sglang/srt/arg_groups/mamba_hook.py"


MAMBA_STATES_PER_PATH_FROM = Version("0.5.17")  # --mamba-max-states-per-path (server_args.py:5955-5960 in 0.5.17)
MAMBA_STOCHASTIC_TRITON_MAJOR = 10  # the triton kernel's cvt.rs.f16x2.f32 (is_sm100_supported)


@rule(
    id="kv-mamba-cache-flags",
    title="Mamba SSM cache flags: Philox rounds >= 0, states per path -1 or positive, stochastic rounding on float16 "
    "(SM100 on triton)",
    engine="sglang",
    versions="sglang>=0.5.15",
    stage="startup",
    prevents="--mamba-cache-philox-rounds must be non-negative.; --mamba-max-states-per-path must be -1 (unlimited) "
    "or a positive integer, got {n}.; Stochastic rounding for the Mamba SSM cache requires --mamba-ssm-dtype "
    "float16, got {dtype!r}. ...; Stochastic rounding for the Mamba SSM cache with --mamba-backend triton requires "
    "SM100 with CUDA >= 12.8 because it uses the cvt.rs.f16x2.f32 PTX instruction. ...",
    source=f"{MAMBA_HOOK}, handle_mamba_backend (server_args.py _handle_mamba_backend before 0.5.19)",
    docs="""Checks the Mamba SSM cache flags SGLang validates for every model: `--mamba-cache-philox-rounds`
non-negative, `--mamba-max-states-per-path` -1 or positive, and `--enable-mamba-cache-stochastic-rounding` only
with `--mamba-ssm-dtype float16` and, on the default triton Mamba backend, an SM100 GPU.

Stochastic rounding writes FP16 states; the triton kernel rounds with an SM100-only PTX instruction, so SGLang
points SM90 users to `--mamba-backend flashinfer`. (FlashInfer's mamba module is install-flashinfer-mamba.)""",
    fix_title="Add --mamba-ssm-dtype float16 (and --mamba-backend flashinfer off SM100) for stochastic rounding",
)
def kv_mamba_cache_flags(cfg, target):
    release = sglang_release(target)
    rounds = cfg.flags.get("mamba_cache_philox_rounds")
    states = cfg.flags.get("mamba_max_states_per_path")
    stochastic = cfg.flags.get("enable_mamba_cache_stochastic_rounding")
    if rounds is None and states is None and not stochastic:
        return skipped("applies to the Mamba SSM cache flags")
    required = "rounds >= 0, states per path -1 or positive, stochastic rounding on float16 (SM100 on triton)"
    if rounds is not None and rounds < 0:
        return failed(f"--mamba-cache-philox-rounds {rounds}", required, ["--mamba-cache-philox-rounds 0"])
    if states is not None and release >= MAMBA_STATES_PER_PATH_FROM and (states == 0 or states < -1):
        return failed(f"--mamba-max-states-per-path {states}", required, ["--mamba-max-states-per-path -1"])
    if stochastic:
        dtype = cfg.flags.get("mamba_ssm_dtype")
        if dtype != "float16":
            return failed(
                f"stochastic rounding with --mamba-ssm-dtype {dtype or 'unset'}",
                required,
                ["--mamba-ssm-dtype float16"],
            )
        backend = cfg.flags.get("mamba_backend") or "triton"
        if target.major is None:
            return unknown("compute capability unknown")
        if backend == "triton" and target.major != MAMBA_STOCHASTIC_TRITON_MAJOR:
            return failed(
                f"stochastic rounding on --mamba-backend triton on {gpu(target)}",
                required,
                ["--mamba-backend flashinfer"],
            )
    return passed("Mamba SSM cache flags", required)
