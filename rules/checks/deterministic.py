"""Deterministic inference (`--enable-deterministic-inference`): backend lists and radix cache."""
from __future__ import annotations

from rules.checks.common import SGLANG_NEWEST
from rules.engine import failed, passed, rule, skipped
from rules.knowledge.backends import SGLANG_BACKENDS

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
DETERMINISTIC = sorted(n for n, b in SGLANG_BACKENDS.items() if b.deterministic)


@rule(
    id="deterministic-backend",
    title="Deterministic inference needs a batch-invariant attention backend",
    engine="sglang", versions=SGLANG_NEWEST,
    prevents="Currently only ['ascend', 'fa3', 'fa4', 'flashinfer', 'intel_xpu', 'triton'] attention backends are "
             "supported for deterministic inference, but you explicitly specified '{attention_backend}'.",
    source=f"{OVERRIDES}, _deterministic_attention_backend; choices.py DETERMINISTIC_ATTENTION_BACKEND_CHOICES",
    docs="""Checks that `--enable-deterministic-inference` is used with an attention backend in SGLang's
DETERMINISTIC_ATTENTION_BACKEND_CHOICES (ascend, fa3, fa4, flashinfer, intel_xpu, triton).

Deterministic mode needs batch-invariant kernels (fixed split-KV, no atomics); other backends are refused
at start-up. Only --attention-backend is checked by SGLang; prefill/decode overrides are not.""",
    fix_title="Use --attention-backend fa3 (SM8x/SM90), flashinfer or triton",
)
def deterministic_backend(cfg, target):
    if not cfg.deterministic:
        return skipped("applies to --enable-deterministic-inference")
    backend = cfg.attention_backend
    if backend is None:
        return skipped("no attention backend chosen")
    if backend in DETERMINISTIC:
        return passed(backend, "one of " + ", ".join(DETERMINISTIC))
    fix = ["--attention-backend fa3"] if target.major in (8, 9) else ["--attention-backend triton"]
    return failed(f"--attention-backend {backend}", "one of " + ", ".join(DETERMINISTIC), fix)
