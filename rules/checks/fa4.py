"""FlashAttention 4 (`--attention-backend fa4`, flash_attn.cute): arch, head-dim, dtype and feature limits."""
from __future__ import annotations

from rules.checks.common import SGLANG_NEWEST, gpu
from rules.engine import failed, passed, rule, skipped, unknown

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"


@rule(
    id="fa4-deterministic-mla-arch",
    title="Deterministic absorbed-MLA on fa4 needs SM100/SM110",
    engine="sglang", versions=SGLANG_NEWEST,
    prevents="Deterministic inference with absorbed-MLA models on the fa4 attention backend requires SM100/SM110: "
             "it runs absorbed MLA, whose qv argument flash_attn.cute only implements on those archs.",
    source=f"{ATTENTION_HOOK}, handle_deterministic_inference",
    docs="""Checks that deterministic inference (`--enable-deterministic-inference`) of a DeepSeek-family
absorbed-MLA model on `--attention-backend fa4` runs on a compute-capability 10.x or 11.x GPU.

SGLang runs such models through FA4's absorbed-MLA path (the `qv` argument), which flash_attn.cute
implements only on SM100/SM110 ("only support Blackwell arch with qv"). SGLang refuses the config at
start-up on any other GPU (platform probe is_sm100_or_sm110: major 10 or 11, torch CUDA >= 12.8).
The DeepSeek family is the architecture list in handle_deterministic_inference (DeepSeek V2/V3/V3.2,
Mistral Large 3, Pixtral, GLM MoE DSA / 4 MoE Lite / 5 Next).""",
    fix_title="Use --attention-backend fa3 on SM90 (triton elsewhere), or run on SM100/SM110",
)
def fa4_deterministic_mla_arch(cfg, target):
    if not (cfg.deterministic and cfg.attention_backend == "fa4"):
        return skipped("applies to deterministic inference on --attention-backend fa4")
    if cfg.model is None:
        if "mla" not in cfg.features:
            return skipped("applies to DeepSeek-family MLA models (give --model)")
    elif not cfg.model.deepseek_family:
        return skipped(f"applies to DeepSeek-family models ({cfg.model.architecture} is not one)")
    if target.major is None:
        return unknown("compute capability unknown")
    if target.major in (10, 11):
        return passed(gpu(target), "SM100/SM110")
    fix = ["--attention-backend fa3"] if target.major == 9 else ["--attention-backend triton"]
    return failed(f"deterministic absorbed-MLA on fa4 on {gpu(target)}", "SM100 or SM110 (B200/GB200/B300/Thor)",
                  fix)
