"""vLLM: what the model asks of its dtype, its KV-cache dtype and the GPU, as constraint rows."""

from __future__ import annotations

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Arch,
    Constraint,
    Flag,
    HasModel,
    Model,
    Not,
    Requirement,
    Since,
    constraint_rules,
)
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import wording

# --dtype values vLLM runs in float16 (config/model.py _STR_DTYPE_TO_TORCH_DTYPE)
_FLOAT16 = Flag("dtype", tuple(name for name, dtype in kb.MODEL_DTYPES.items() if dtype == "float16"))
_PRE_AMPERE = Arch((3, 5, 6, 7))  # no bfloat16: vLLM's float16-refusing models run in float32 there
_AUTO_KV = ("--kv-cache-dtype auto",)

ROWS = (
    Constraint(
        id="vllm-fp16-model",
        title="The model accepts float16",
        engine="vllm",
        versions="vllm>=0.10.2",
        stage="startup",
        when=All((HasModel(), Model(model_types=tuple(kb.FLOAT16_UNSUPPORTED_MODELS)))),
        requires=(
            Requirement(Not(All((_FLOAT16, _PRE_AMPERE))), ("--dtype float32",)),
            Requirement(Not(_FLOAT16), ("--dtype bfloat16",)),
        ),
        first_only=True,
        prevents=kb.FLOAT16_MODEL_MESSAGE.format(model_type="gemma2", reason=kb.FLOAT16_UNSUPPORTED_MODELS["gemma2"]),
        source=kb.FLOAT16_MODEL_SOURCE,
        docs="""Checks that `--dtype half` / `float16` is not asked of a model vLLM refuses to run in float16: the
model types {float16_refused} (numerical instability).

Below SM80 these models have no half-precision dtype vLLM accepts (no bfloat16, no float16), so they run
in float32, which only {with:dtypes=float32} take.""",
        fix_title="Use --dtype bfloat16 (float32 below SM80)",
    ),
    Constraint(
        id="vllm-kv-cache-dtype-choice",
        title="The --kv-cache-dtype value is one the vLLM release has",
        engine="vllm",
        versions="vllm>=0.10.0",
        stage="parse",
        when=Flag("kv_cache_dtype"),
        # one requirement per dtype: it is a value from its first release on
        requires=(
            Requirement(Flag("kv_cache_dtype", kb.KV_CACHE_DTYPES), _AUTO_KV),
            *(
                Requirement(AnyOf((Not(Flag("kv_cache_dtype", (kv,))), Since(since, "vllm"))), _AUTO_KV)
                for kv, since in kb.KV_CACHE_DTYPE_SINCE.items()
            ),
        ),
        first_only=True,
        prevents="argument --kv-cache-dtype: invalid choice: 'nvfp4' (choose from auto, bfloat16, fp8, ...); "
        "Invalid kv_cache_dtype: 'X'. Valid values are: [...]",
        source=kb.KV_CACHE_DTYPE_SOURCE,
        docs="""Checks that `--kv-cache-dtype` names a KV-cache dtype the target's vLLM release has. Each release's
CacheDType lists them, and the list only grows: {kv_since}.

Through 0.32.x argparse refuses another value before anything loads; 0.33.0 takes any string on the command line
(a platform may register its own dtype) and CacheConfig refuses an unknown one when the engine config is built.""",
        fix_title="Use a KV-cache dtype of this release (auto, fp8, ...), or a newer vLLM",
    ),
    Constraint(
        id="vllm-inkling-paged-kv",
        title="vLLM's Inkling attention pages its KV cache, which its FA4 kernel cannot read on SM8x/SM12x",
        engine="vllm",
        versions="vllm>=0.26.0,<0.28.0",
        stage="runtime",
        needs_model=True,
        needs_gpu=True,
        when=Model(architectures=tuple(sorted(kb.INKLING_ARCHITECTURES))),
        requires=Arch(tuple(sorted(kb.INKLING_PAGED_KV_MAJORS))),
        prevents="Paged KV not supported on SM 12.0 in this PR",
        source=kb.INKLING_SOURCE + "; vllm/vllm_flash_attn/cute/interface.py, _flash_attn_fwd",
        references=("https://github.com/vllm-project/vllm/issues/51405",),
        docs="""Checks that an Inkling model (InklingForConditionalGeneration / InklingForCausalLM) is served by
vLLM 0.26-0.27 on a GPU whose Inkling attention kernel reads a paged KV cache: {inkling_majors}.

Inkling brings its own relative attention, whatever --attention-backend names: on SM10x/SM11x the bundled
tml_fa4 with a sheared bias, elsewhere vLLM's vendored FA4 with a score_mod, and always with the paged KV
cache's block table. The vendored FA4 has no paged KV on SM12x ("Paged KV not supported on SM 12.0 in this
PR") or SM8x ("paged KV not supported on SM 8.0"), so on an RTX 50xx / RTX PRO 6000 / GB10 or an A100 the
server dies in its first forward (the start-up profile run). vLLM 0.28.0 replaces the SM120 forward.""",
        fix_title="Serve Inkling on SM90/SM100 with vLLM 0.26-0.27, or use another engine release",
    ),
)

constraint_rules(__name__, ROWS, worded=wording.words)
