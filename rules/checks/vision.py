"""Vision-encoder attention (`--mm-attention-backend`, or SGLang's default for multimodal models)."""

from __future__ import annotations

from packaging.version import Version

from rules.checks.common import gpu, sglang_release
from rules.engine import failed, passed, rule, skipped, unknown

# VisionAttention takes "fa4" from sglang 0.5.9 (vision.py; no "fa4" there through 0.5.8.post1).
VISION_FA4_FROM = Version("0.5.9")
VISION = "sglang: python/sglang/srt/layers/attention/vision.py, VisionAttention._determine_attention_backend"


@rule(
    id="vision-fa3-blackwell",
    title="The fa3 vision-attention backend does not run on Blackwell",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23: VisionAttention raises for fa3 on is_blackwell in every release "
        "(vision.py:486-487 in 0.5.1, :918 in 0.5.10, :1330-1331 in 0.5.23; bench/release_walk.py grep); its "
        "fa4 backend, the fix on SM10x, exists from 0.5.9"
    ),
    stage="load",
    prevents="The 'fa3' backend is not supported on Blackwell GPUs",
    source=VISION,
    docs="""Checks that `--mm-attention-backend fa3` is not used on a Blackwell GPU.

VisionAttention raises when the vision tower is built on an is_blackwell GPU: majors 10, 11 and 12 in
sglang 0.5.23 (utils/common.py is_blackwell_supported; older notes list 10 and 12 only). SGLang's own default
is fa3 on SM90, fa4 on SM10x and triton_attn elsewhere, so this only bites when fa3 is named.""",
    fix_title="Use --mm-attention-backend fa4 on SM100, triton_attn or sdpa elsewhere",
)
def vision_fa3_blackwell(cfg, target):
    if cfg.mm_attention_backend != "fa3":
        return skipped("applies to --mm-attention-backend fa3")
    if target.major is None:
        return unknown("compute capability unknown")
    if target.major in (8, 9):
        return passed(gpu(target), "SM8x/SM90 for the fa3 vision backend")
    fa4 = target.major in (10, 11) and sglang_release(target) >= VISION_FA4_FROM
    fix = ["--mm-attention-backend fa4"] if fa4 else ["--mm-attention-backend triton_attn"]
    return failed(f"--mm-attention-backend fa3 on {gpu(target)}", "a non-Blackwell GPU (SM8x/SM90)", fix)
