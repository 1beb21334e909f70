"""fa3's gates generated from its declaration (the archs on which it serves MLA models, the features it refuses)
and its flag constraints as rows.

Each gate names one fact of fa3's declaration (rules/engines/sglang/capabilities.py); gate.judge judges it through
the validator (rules/engines/sglang/reasons.py), which words what the fact requires. The rows are judged by
attn_preflight.rules.core.constraints.judge.
"""

from attn_preflight.rules.core.constraints import (
    ALWAYS,
    All,
    AnyOf,
    Constraint,
    Flag,
    Not,
    Rewritten,
    constraint_rules,
)
from attn_preflight.rules.engines.sglang.capabilities import FA3_API, FA_BACKEND
from attn_preflight.rules.engines.sglang.declared.gate import Fallback, Gate, gate_rules

REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py, create_flashattention_v3_backend"
FA3_ARCH_MESSAGE = "FlashAttention v3 Backend requires SM>=80 and SM<=90. Please use `--attention-backend flashinfer`."
# fa4 where its kernels take the model, else triton (SGLang's Inkling accepts these two).
FA4_OR_TRITON = Fallback(mha=("fa4", "triton"), mla=("fa4", "triton"), first=True)
# Off fa3's archs: the MHA backends the declarations admit on the GPU (trtllm_mha, fa4), for an MLA model trtllm_mla
# where its kernels run; triton (no arch limit, SGLang's own MLA default off SM90/SM100) where none is admitted.
OFF_FA3_ARCHS = Fallback(mha=("trtllm_mha", "fa4"), mla=("trtllm_mla",), otherwise=("triton",))

ROWS = (
    Gate(
        id="fa3-arch",
        title="fa3 runs on {fa3.archs} only",
        versions="sglang>=0.5.1",
        stage="init",
        prevents=FA3_ARCH_MESSAGE,
        source=f"{REGISTRY} (asserts major == 9, or 8 without MLA)",
        docs="""Checks that `fa3` (as attention, prefill or decode backend) runs on a GPU of {fa3.archs}.

SGLang's fa3 factory asserts `major == 9` or (`major == 8` and not MLA) when the model runner builds the
backend, after weights are loaded. Every Blackwell GPU (SM100/SM103, Thor SM110, SM120/SM121) fails here:
FA3's kernels are Hopper (sm_90a) kernels plus SM8x builds, with nothing for newer archs. The same assert
refuses MLA models on SM8x (rule fa3-mla-sm8x). Deterministic inference without a backend falls back to fa3
on every GPU but SM100/SM120, so on Thor this rule catches that default too.

The fix names the backends whose declarations admit the GPU: trtllm_mha ({trtllm_mha.archs}) and fa4 (paged KV
on {fa4.feature_archs:paged_kv}) for an MHA model, trtllm_mla for an MLA model where its prefill kernels run
({trtllm_mla.kernel_archs:prefill}); triton where none does.""",
        fix_title="Use a backend the GPU admits: trtllm_mha or fa4 (trtllm_mla for MLA), else triton",
        backend="fa3",
        fact="archs",
        fix=OFF_FA3_ARCHS,
        backends=("fa3",),
        needs_gpu=True,
        references=("https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/attention_backend.md",),
    ),
    Gate(
        id="fa3-mla-sm8x",
        title="fa3 serves MLA models on {requires} only",
        versions="sglang>=0.5.1",
        stage="init",
        prevents=FA3_ARCH_MESSAGE,
        source=f"{REGISTRY}; {FA3_API} ('Only Hopper supports different V headdim')",
        docs="""Checks that an MLA model (DeepSeek V2/V3 family, Kimi K2, ...) on `fa3` runs on {requires}.

SGLang runs MLA through FA3's absorbed path (qv, K/V head dims 64/512) which the FA3 kernels implement only
on Hopper ("Only Hopper supports different V headdim"); the fa3 factory therefore accepts SM8x only for
non-MLA models, with the generic SM80-90 message.""",
        fix_title="Use --attention-backend triton (or flashinfer) for MLA on SM8x",
        backend="fa3",
        fact="mla_archs",
        fix=Fallback(mla=("triton", "flashinfer")),
        backends=("fa3",),
        within_archs=True,
    ),
    Gate(
        id="fa3-score-mod",
        title="A custom score_mod needs the FA4 backend",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="score_mod is only supported by the FA4 backend.",
        source=f"{FA_BACKEND}, FlashAttentionBackend.forward_extend / forward_decode",
        docs="""Checks that a model which passes a custom `score_mod` to attention (Inkling's relative attention in
deterministic mode, or `--feature score_mod`) is not served by `fa3`.

SGLang's FlashAttention backend serves both fa3 and fa4; only the FA4 kernels (flash_attn.cute) take a
`score_mod`, and the fa3 path raises at the first forward. Logit soft-capping is not a score_mod here:
SGLang passes it as `softcap`, which FA3 supports. The FA4 alternative has its own limit: no custom
score_mod on SM8x (rule fa4-score-mod-sm8x).""",
        fix_title="Use --attention-backend fa4 (SM90 and newer) or triton",
        backend="fa3",
        fact="refuses:score_mod",
        fix=FA4_OR_TRITON,
        backends=("fa3",),
    ),
    Gate(
        id="fa3-rel-bias",
        title="A sheared relative bias (rel_bias) needs the FA4 backend",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="rel_bias (sheared bias) is only supported by the FA4 backend.",
        source=f"{FA_BACKEND}, FlashAttentionBackend.forward_extend / forward_decode",
        docs="""Checks that a model which passes a sheared relative bias (`rel_bias`, Inkling's relative attention
with SGLANG_OPT_USE_INKLING_SHEARED_BIAS, on by default) is not served by `fa3`.

Only the FA4 kernels SGLang vendors (sglang/kernels/ops/attention/flash_attn/cute) take `rel_bias`; the
fa3 path raises at the first forward. FA4 accepts it on {fa4.feature_archs:rel_bias} (SM12x through
SGLang's SM120 host, with head dims up to 128: rule fa4-rel-bias-arch).""",
        fix_title="Use --attention-backend fa4 on SM90/SM100, triton elsewhere",
        backend="fa3",
        fact="refuses:rel_bias",
        fix=FA4_OR_TRITON,
        backends=("fa3",),
    ),
)

# SGLang's fa3 + fp8_e5m2 rewrite: --attention-backend fa3 as given, or replaced by triton for an fp8_e5m2 KV cache.
FA3_E5M2_REWRITTEN = Rewritten("attention_backend", "fa3")

CONSTRAINTS = (
    Constraint(
        id="fa3-fp8-e5m2-rewrite",
        title="fa3 with an fp8_e5m2 KV cache is silently switched to triton",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",
        source="sglang: python/sglang/srt/arg_groups/overrides.py, _attention_backend_fa3_fp8_fallback",
        docs="""Warns when `--attention-backend fa3 --kv-cache-dtype fp8_e5m2` is requested: SGLang logs a warning and
runs triton instead, so the server starts on a backend nobody asked for.

FA3's FP8 path takes only E4M3 ("FlashAttention only supports fp16, bf16, and fp8_e4m3 data type",
hopper/flash_api.cpp). The rewrite looks at --attention-backend only (and at prefill/decode backends when
both name fa3). attn-preflight judges the rest of the config as triton, which is what would run. The
rewrite is in every release from 0.5.0rc2 (model_runner.py until 0.5.4, server_args.py from 0.5.4.post3,
arg_groups/overrides.py:1263-1270 in 0.5.23).""",
        fix_title="Use --kv-cache-dtype fp8_e4m3 to keep fa3",
        when=AnyOf(
            (Flag("attention_backend", ("fa3",)), All((FA3_E5M2_REWRITTEN, Flag("kv_cache_dtype", ("fp8_e5m2",)))))
        ),
        requires=Not(FA3_E5M2_REWRITTEN),
        fix=("--kv-cache-dtype fp8_e4m3",),
        severity="warn",
    ),
    Constraint(
        id="fa3-dtype",
        title="fa3 computes in fp16 or bf16 only",
        versions="sglang>=0.5.0rc2",
        backends=("fa3",),
        stage="runtime",
        prevents="FlashAttention only supports fp16, bf16, and fp8_e4m3 data type",
        source=FA3_API,
        docs="""Checks that `--dtype` is not float32 when fa3 serves the model.

FA3 has no fp32 kernels and refuses fp32 queries at the first forward. (An FP8 E4M3 KV cache is the only
8-bit input, and only on Hopper: rule fa3-fp8-sm8x.)""",
        fix_title="Use --dtype bfloat16 (or float16)",
        when=ALWAYS,
        requires=Not(Flag("dtype", ("float32", "float", "fp32"))),
        fix=("--dtype bfloat16",),
    ),
)

gate_rules(__name__, ROWS)
constraint_rules(__name__, CONSTRAINTS)
