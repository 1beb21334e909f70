"""Deterministic inference (`--enable-deterministic-inference`): backend lists and radix cache.

SGLang 0.5.23: arg_groups/overrides.py `_deterministic_attention_backend` and arg_groups/attention_hook.py
`handle_deterministic_inference`. Both look at --attention-backend (after SGLang fills a default and after
equal prefill/decode backends replace it); --prefill/--decode-attention-backend alone are not checked.
The fa4 arch rule for absorbed MLA is fa4-deterministic-mla-arch (rules/engines/sglang/rules/fa4.py).
"""

from __future__ import annotations

from attn_preflight.rules.checks.common import sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, warned
from attn_preflight.rules.engines.sglang.capabilities import (
    DETERMINISTIC_DEEPSEEK_BACKENDS_BEFORE_RADIX,
    DETERMINISTIC_FALLBACK_FROM,
    DETERMINISTIC_MLA_RADIX_FROM,
    SGLANG_BACKENDS,
)

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
DETERMINISTIC = [n for n, b in sorted(SGLANG_BACKENDS.items()) if b.deterministic]
RADIX = [n for n, b in sorted(SGLANG_BACKENDS.items()) if b.radix_deterministic]


def _applies(cfg):
    return cfg.deterministic and cfg.attention_backend is not None


def _deterministic(target):
    """DETERMINISTIC_ATTENTION_BACKEND_CHOICES in the target's release (rules/engines/sglang/capabilities.py eras)."""
    return [n for n, b in sorted(target.sglang_backends.items()) if b.deterministic]


def _radix(target):
    """RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND in the target's release."""
    return [n for n, b in sorted(target.sglang_backends.items()) if b.radix_deterministic]


@rule(
    id="deterministic-backend",
    title="Deterministic inference needs a batch-invariant attention backend",
    engine="sglang",
    versions="sglang>=0.5.3",
    stage="startup",
    prevents=f"Currently only {DETERMINISTIC} attention backends are supported for deterministic inference, but "
    "you explicitly specified '{attention_backend}'.",
    source=f"{OVERRIDES}, _deterministic_attention_backend; choices.py DETERMINISTIC_ATTENTION_BACKEND_CHOICES",
    docs="""Checks that `--enable-deterministic-inference` is used with an attention backend in SGLang's
DETERMINISTIC_ATTENTION_BACKEND_CHOICES (ascend, fa3, fa4, flashinfer, intel_xpu, triton).

Deterministic mode needs batch-invariant kernels (fixed split-KV, no atomics); other backends are refused
at start-up. Without a backend, SGLang first applies model defaults (GPT-OSS, Llama 4, Gemma 4, DeepSeek-V3
...), then falls back to fa3, or on SM100/SM120 to flashinfer (triton for DeepSeek-family models). So
DeepSeek-V3 with no backend on SM100 gets trtllm_mla and is refused with this message although nothing was
"explicitly specified" (confirmed against sglang 0.5.23's own resolution). From 0.5.4.post3 to 0.5.11 SGLang
fills its generic default before this check, so the fallback never runs: trtllm_mha on SM100 (from
0.5.6.post2) is refused the same way, and an A100 runs flashinfer, not fa3 (rules/engines/sglang/capabilities.py
DETERMINISTIC_AFTER_DEFAULT; sglang 0.5.5 and 0.5.10's own resolution agree). 0.5.3 and 0.5.3.post3 have no
fallback at all: without --attention-backend the list check refuses the unset backend.""",
    fix_title="Use --attention-backend fa3 (SM8x/SM90), flashinfer or triton",
)
def deterministic_backend(cfg, target):
    if not _applies(cfg):
        return skipped("applies to --enable-deterministic-inference")
    backend, allowed = cfg.attention_backend, _deterministic(target)
    fix = ["--attention-backend fa3"] if target.major in (8, 9) and not cfg.mla else ["--attention-backend triton"]
    release = sglang_release(target)
    if cfg.auto_backend and release < DETERMINISTIC_FALLBACK_FROM:
        return failed(
            f"no --attention-backend on sglang {release} (no deterministic fallback before 0.5.4)",
            "--attention-backend one of " + ", ".join(allowed),
            fix,
        )
    if backend in allowed:
        return passed(backend, "one of " + ", ".join(allowed))
    found = f"--attention-backend {backend}" + (" (SGLang's default, checked as if given)" if cfg.auto_backend else "")
    return failed(found, "one of " + ", ".join(allowed), fix)


@rule(
    id="deterministic-mla-backend",
    title="Deterministic inference of DeepSeek-family models needs fa3, fa4 or triton",
    engine="sglang",
    versions="sglang>=0.5.4.post3",
    needs_model=True,
    stage="startup",
    prevents=f"Currently only {RADIX} attention backends are supported for deterministic inference with "
    "absorbed-MLA models. But you're using {attention_backend}.",
    source=f"{ATTENTION_HOOK}, handle_deterministic_inference",
    docs="""Checks that deterministic inference of a DeepSeek-family absorbed-MLA model (DeepSeek V2/V3/V3.2,
Mistral Large 3, Pixtral, GLM MoE DSA / 4 MoE Lite / 5 Next) uses ascend, fa3, fa4 or triton.

FlashInfer's MLA kernels are not batch invariant, so SGLang refuses the config at start-up. fa4 further
needs SM100/SM110 (fa4-deterministic-mla-arch), fa3 needs SM90 (fa3-arch, fa3-mla-sm8x).""",
    fix_title="Use --attention-backend fa3 on SM90, fa4 on SM100/SM110, triton elsewhere",
)
def deterministic_mla_backend(cfg, target):
    if not _applies(cfg):
        return skipped("applies to --enable-deterministic-inference")
    if not cfg.model.deepseek_family:
        return skipped(f"applies to DeepSeek-family models ({cfg.model.architecture} is not one)")
    backend = cfg.attention_backend
    allowed = (
        _radix(target)
        if sglang_release(target) >= DETERMINISTIC_MLA_RADIX_FROM
        else list(DETERMINISTIC_DEEPSEEK_BACKENDS_BEFORE_RADIX)
    )
    if backend in allowed:
        return passed(backend, "one of " + ", ".join(allowed))
    fix = {9: "fa3", 10: "fa4", 11: "fa4"}.get(target.major, "triton")
    if fix not in allowed:
        fix = "triton"
    return failed(
        f"--attention-backend {backend} for {cfg.model.architecture}",
        "one of " + ", ".join(allowed),
        [f"--attention-backend {fix}"],
    )


@rule(
    id="deterministic-radix-cache",
    title="Deterministic inference on flashinfer silently disables the radix cache",
    engine="sglang",
    versions="sglang>=0.5.4.post3",
    stage="startup",
    prevents="Currently radix cache is not compatible with {attention_backend} attention backend for deterministic "
    "inference. It will be supported in the future.",
    source=f"{ATTENTION_HOOK}, handle_deterministic_inference",
    docs="""Warns when deterministic inference runs on a backend outside RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_
BACKEND (ascend, fa3, fa4, triton), i.e. flashinfer or intel_xpu: SGLang logs a warning and turns the radix
(prefix) cache off.

Without prefix caching every request recomputes its whole prompt, which changes throughput and latency
for chat and agent workloads. This is also SGLang's own default on SM100/SM120 for non-DeepSeek models.""",
    fix_title="Use --attention-backend triton (or fa3 on SM90, fa4) to keep the radix cache",
)
def deterministic_radix_cache(cfg, target):
    if not _applies(cfg):
        return skipped("applies to --enable-deterministic-inference")
    backend, radix = cfg.attention_backend, _radix(target)
    if backend not in _deterministic(target):
        return skipped("deterministic-backend judges this backend")
    if backend in radix:
        return passed(backend, "a backend that keeps the radix cache")
    if cfg.flags.get("disable_radix_cache"):
        return passed(f"{backend} with --disable-radix-cache", "radix cache off by choice")
    fix = {9: "fa3", 10: "fa4"}.get(target.major, "triton")
    if fix not in radix:
        fix = "triton"
    return warned(
        f"--attention-backend {backend} (SGLang disables the radix cache)",
        "one of " + ", ".join(radix),
        [f"--attention-backend {fix}", "--disable-radix-cache"],
    )
