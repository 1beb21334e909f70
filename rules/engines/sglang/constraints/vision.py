"""Vision-encoder attention (`--mm-attention-backend`, or SGLang's default for multimodal models) and
`--language-model-only`, as constraint rows."""

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Arch,
    BackendArch,
    Constraint,
    Flag,
    Model,
    Not,
    Requirement,
    Since,
    constraint_rules,
)

VISION = "sglang: python/sglang/srt/layers/attention/vision.py, VisionAttention._determine_attention_backend"
VISION_FA4_FROM = "0.5.9"  # VisionAttention takes "fa4" from sglang 0.5.9 (no "fa4" in vision.py through 0.5.8.post1)
QWEN3_VL = "sglang: python/sglang/srt/models/qwen3_vl.py, Qwen3_VisionBlock"
# Qwen3-VL's vision blocks ask VisionAttention for fa3 themselves (attn_implementation="flash_attention_3") in
# sglang 0.5.3-0.5.5 (PR #13354 removed it in 0.5.5.post3); Qwen3-Omni's vision model is the same from 0.5.4.
QWEN3_VL_FA3_ARCHITECTURES = ("Qwen3VLForConditionalGeneration", "Qwen3VLMoeForConditionalGeneration")
# --language-model-only (0.5.18+) refuses these beside it
LANGUAGE_MODEL_ONLY_REFUSES = (
    "encoder_only",
    "language_only",
    "enable_prefix_mm_cache",
    "enable_broadcast_mm_inputs_process",
    "mm_enable_dp_encoder",
)

ROWS = (
    Constraint(
        id="vision-fa3-blackwell",
        title="The fa3 vision-attention backend does not run on Blackwell",
        versions="sglang>=0.5.1",
        stage="load",
        prevents="The 'fa3' backend is not supported on Blackwell GPUs",
        source=VISION,
        docs="""Checks that `--mm-attention-backend fa3` is not used on a Blackwell GPU.

VisionAttention raises when the vision tower is built on an is_blackwell GPU: majors 10, 11 and 12 in
sglang 0.5.23 (utils/common.py is_blackwell_supported; older notes list 10 and 12 only). SGLang's own default
is fa3 on SM90, fa4 on SM10x and triton_attn elsewhere, so this only bites when fa3 is named (or, in
sglang 0.5.3-0.5.5, chosen by Qwen3-VL itself: rule vision-qwen3-vl-fa3).""",
        fix_title="Use --mm-attention-backend fa4 on SM100, triton_attn or sdpa elsewhere",
        when=Flag("mm_attention_backend", ("fa3",)),
        # the fix is fa4 where VisionAttention has it (SM10x/SM11x from 0.5.9), triton_attn elsewhere: each requirement
        # fails exactly where its fix is the one
        requires=(
            Requirement(
                AnyOf((Arch((8, 9)), Not(Arch((10, 11))), Not(Since(VISION_FA4_FROM)))), ("--mm-attention-backend fa4",)
            ),
            Requirement(
                AnyOf((Arch((8, 9)), All((Arch((10, 11)), Since(VISION_FA4_FROM))))),
                ("--mm-attention-backend triton_attn",),
            ),
        ),
    ),
    Constraint(
        id="vision-qwen3-vl-fa3",
        title="Before sglang 0.5.5.post3 Qwen3-VL's vision tower runs fa3, which does not run on Blackwell",
        versions="sglang>=0.5.3,<0.5.5.post3",
        needs_model=True,
        needs_gpu=True,
        stage="load",
        prevents="The 'fa3' backend is not supported on Blackwell GPUs",
        source=f"{QWEN3_VL}; {VISION}",
        references=(
            "https://github.com/sgl-project/sglang/issues/12360",
            "https://github.com/sgl-project/sglang/pull/13354",
        ),
        docs="""Checks that a Qwen3-VL (or, from sglang 0.5.4, Qwen3-Omni) model launched without
`--mm-attention-backend` runs on a GPU where the fa3 vision backend runs (SM8x, SM90), on sglang 0.5.3-0.5.5.

In those releases the model's vision blocks ask VisionAttention for fa3 themselves, whatever the GPU, so
SGLang's platform default (triton_attn off SM90) never applies: on a Blackwell GPU the vision tower raises
while the model loads; on other GPUs without FA3 kernels the first image fails. An explicit
--mm-attention-backend wins over the model's choice (rule vision-fa3-blackwell judges it). sglang 0.5.5.post3
dropped the model's choice (PR #13354).""",
        fix_title="Pass --mm-attention-backend triton_attn (or sdpa), or upgrade to sglang >= 0.5.5.post3",
        # an explicit --mm-attention-backend wins over the model's fa3 (vision-fa3-blackwell judges it)
        when=All(
            (
                AnyOf(
                    (
                        Model(QWEN3_VL_FA3_ARCHITECTURES),
                        All((Model(("Qwen3OmniMoeForConditionalGeneration",)), Since("0.5.4"))),
                    )
                ),
                Not(Flag("mm_attention_backend")),
            )
        ),
        requires=BackendArch("fa3"),
        fix=("--mm-attention-backend triton_attn",),
    ),
    Constraint(
        id="model-language-model-only",
        title="--language-model-only: the listed architectures only, no encoder split or multimodal caches, no PD",
        versions="sglang>=0.5.18",
        stage="startup",
        prevents="--language-model-only cannot be combined with {name}; --language-model-only is incompatible with "
        "--disaggregation-mode prefill/decode; --language-model-only does not support {architectures}. Supported: "
        "[...].",
        source="sglang: python/sglang/srt/arg_groups/model_hook.py, handle_language_model_only (server_args.py "
        "_handle_language_model_only before 0.5.19); server_args.py LANGUAGE_MODEL_ONLY_ARCHITECTURES",
        docs="""Checks `--language-model-only` (serve a multimodal checkpoint's language model without its encoder):
the architecture must be one SGLang lists for it in the target's release (MuseGlimmer; Cosmos3 from 0.5.20;
DeepSeek-V4 from 0.5.22), without `--encoder-only`, `--language-only`, `--enable-prefix-mm-cache`,
`--enable-broadcast-mm-inputs-process` or `--mm-enable-dp-encoder`, and not as a PD prefill / decode worker
(a DeepSeek-V4.1 worker may be, from 0.5.22).

Only those models can skip loading their encoder, and the encoder-disaggregation and multimodal-cache paths need
it; SGLang refuses each combination at start-up, before the weights load.""",
        fix_title="Drop --language-model-only (or the encoder / multimodal-cache flags beside it)",
        when=Flag("language_model_only"),
        # handle_language_model_only raises at the first of these, in this order
        requires=(
            *(Requirement(Not(Flag(name))) for name in LANGUAGE_MODEL_ONLY_REFUSES),
            # a DeepSeek-V4.1 text-only worker may run under PD from 0.5.22 (model_hook.py:1071-1077)
            Requirement(
                AnyOf(
                    (
                        Not(Flag("disaggregation_mode", ("prefill", "decode"))),
                        All((Flag("model"), Model(model_types=("deepseek_v41",)), Since("0.5.22"))),
                    )
                )
            ),
            Requirement(
                AnyOf(
                    (
                        Model(("MuseGlimmerForConditionalGeneration",)),
                        All(
                            (
                                Model(("Cosmos3ForConditionalGeneration", "Cosmos3EdgeForConditionalGeneration")),
                                Since("0.5.20"),
                            )
                        ),
                        All((Model(("DeepseekV4ForCausalLM",)), Since("0.5.22"))),
                    )
                )
            ),
        ),
        first_only=True,
    ),
)

constraint_rules(__name__, ROWS)
