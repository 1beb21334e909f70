"""FlashAttention 3 (`--attention-backend fa3`): arch limits and features only FA4 has."""
from __future__ import annotations

from rules.checks.common import SGLANG_NEWEST, phases_using
from rules.engine import failed, passed, rule, skipped

FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"


@rule(
    id="fa3-score-mod",
    title="A custom score_mod needs the FA4 backend",
    engine="sglang", versions=SGLANG_NEWEST,
    prevents="score_mod is only supported by the FA4 backend.",
    source=f"{FA_BACKEND}, FlashAttentionBackend.forward_extend / forward_decode",
    docs="""Checks that a model which passes a custom `score_mod` to attention (e.g. Inkling's relative
attention, or `--feature score_mod`) is not served by `--attention-backend fa3`.

SGLang's FlashAttention backend serves both fa3 and fa4; only the FA4 kernels (flash_attn.cute) take a
`score_mod`, and the fa3 path raises at the first forward. Logit soft-capping is not a score_mod here:
SGLang passes it as `softcap`, which FA3 supports. The FA4 alternative has its own limit: no custom
score_mod on SM8x (rule fa4-score-mod-sm8x).""",
    fix_title="Use --attention-backend fa4 (SM90 and newer) or triton",
)
def fa3_score_mod(cfg, target):
    if "fa3" not in cfg.backends:
        return skipped("applies to the fa3 backend")
    if "score_mod" not in cfg.features:
        return passed("no custom score_mod", "score_mod only on FA4")
    fix = ["--attention-backend fa4"] if target.major is not None and target.major >= 9 else ["--attention-backend triton"]
    return failed(f"a model with a custom score_mod on {phases_using(cfg, 'fa3')}", "the fa4 backend", fix)
