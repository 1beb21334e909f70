"""fa4's gates generated from its declaration (archs, paged KV and score_mod by arch, head dims by arch) and its
flag constraints as rows (judged by attn_preflight.rules.core.constraints.judge).

Each row names one fact of fa4's declaration (rules/engines/sglang/capabilities.py); gate.judge judges it through
the validator (rules/engines/sglang/reasons.py), which words what the fact requires.
"""

from attn_preflight.rules.core.constraints import (
    ALWAYS,
    All,
    AnyOf,
    Arch,
    Constraint,
    DeclaredArch,
    Feature,
    Flag,
    Not,
    Requirement,
    constraint_rules,
)
from attn_preflight.rules.engines.sglang.capabilities import FA4_INTERFACE
from attn_preflight.rules.engines.sglang.declared.gate import Fallback, Gate, gate_rules

INTERFACE = FA4_INTERFACE
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
TRITON = Fallback(mha=("triton",), mla=("triton",))

ROWS = (
    Gate(
        id="fa4-arch",
        title="fa4 runs on {requires}",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="Unsupported compute capability. Supported: 8.x, 9.x, 10.x, 11.x, and architectures registered "
        "through the forward-host bridge",
        source=f"{INTERFACE}, _flash_attn_fwd; kernels/ops/attention/fa4_sm120/dispatch.py, get_forward_host",
        docs="""Checks that `fa4` runs on a GPU flash_attn.cute has kernels for ({requires}): SM8x, SM90, SM10x,
SM11x in the interface, SM12x through SGLang's SM120 forward host.

SGLang's fa4 factory has no arch check; the kernel interface asserts at the first forward. Volta/Turing
(SM70/SM75) and unknown future archs fail. The flash-attn-4 4.0.0b36 wheel lists 8.x-12.x in its message.""",
        fix_title="Use --attention-backend triton on pre-Ampere GPUs",
        backend="fa4",
        fact="archs",
        fix=TRITON,
        backends=("fa4",),
        needs_gpu=True,
    ),
    Gate(
        id="fa4-paged-kv-sm8x",
        title="fa4 serves a paged KV cache on {requires} only",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="paged KV not supported on SM 8.0",
        source=f"{INTERFACE}, _flash_attn_fwd (SM80 kernel branch); {FA_BACKEND} (decode passes page_table)",
        docs="""Checks that `fa4` runs on a GPU where it reads a paged KV cache: {requires}.

FA4's SM8x forward kernel has no paged-KV path ("paged KV not supported on SM 8.0", also "SplitKV not
supported on SM 8.0"), and SGLang always reads the KV cache through a page table, even with page size 1,
so the first decode fails. The flash-attn-4 4.0.0b36 wheel has the same limits.""",
        fix_title="Use --attention-backend fa3 (MHA), flashinfer or triton on SM8x",
        backend="fa4",
        fact="feature_archs:paged_kv",
        fix=Fallback(mha=("fa3", "flashinfer"), mla=("triton",)),
        backends=("fa4",),
        needs_gpu=True,
        within_archs=True,
    ),
    Gate(
        id="fa4-head-dim-sm90",
        title="fa4 head dims on SM90: {head_dims:9}",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="(head_dim, head_dim_v)=({head_dim}, {head_dim_v}) is not supported on SM90. head_dim and head_dim_v "
        "must be between 8 and 256 and divisible by {alignment}, or both equal to 512.",
        source=f"{INTERFACE}, _validate_head_dims",
        docs="""Checks every layer type's (head_dim, v_head_dim) against FA4's SM90 kernels as fa4's declaration
gives them: {head_dims:9} (SGLang's newest verified release; older releases as declared for them).

The check runs at the first forward. SGLang's vendored copy takes (512, 512) from 0.5.22; the flash-attn-4
4.0.0b36 wheel allows 8..256 only. MLA models are judged on their prefill shape (192, 128) here; their
decode needs SM100/SM110 (rule fa4-mla-arch).""",
        fix_title="Use --attention-backend fa3 or flashinfer for this model on SM90",
        backend="fa4",
        fact="head_dims",
        fix=Fallback(mha=("fa3", "flashinfer"), mla=("fa3", "flashinfer")),
        backends=("fa4",),
        needs_model=True,
        majors=(9,),
    ),
    Gate(
        id="fa4-head-dim-sm100",
        title="fa4 head dims on SM100/SM110: {head_dims:10}",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="(head_dim, head_dim_v)=({head_dim}, {head_dim_v}) is not supported on SM100/SM110. head_dim and "
        "head_dim_v must be between 8 and 128 and divisible by {alignment}, or (192, 128) for DeepSeek, or "
        "(256, 256) for hd256.",
        source=f"{INTERFACE}, _validate_head_dims",
        docs="""Checks every layer type's (head_dim, v_head_dim) against FA4's SM100/SM110 kernels as fa4's
declaration gives them: {head_dims:10} (DeepSeek's (192, 128), the absorbed-MLA (64, 512) and the
dedicated hd256 kernel's (256, 256) among the shapes).

Other shapes (e.g. head_dim 160, 192/192, 256 with a different V dim) have no SM100 kernel and fail at the
first forward. The flash-attn-4 4.0.0b36 wheel has the same rule.""",
        fix_title="Use --attention-backend trtllm_mha or flashinfer for this model on SM100",
        backend="fa4",
        fact="head_dims",
        fix=Fallback(mha=("trtllm_mha", "flashinfer"), mla=("trtllm_mha", "flashinfer")),
        backends=("fa4",),
        needs_model=True,
        majors=(10, 11),
    ),
    Gate(
        id="fa4-score-mod-sm8x",
        title="A custom score_mod on fa4 needs {requires}",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="Custom user-provided score_mod is not supported on SM8x architectures.",
        source=f"{INTERFACE}, _flash_attn_fwd",
        docs="""Checks that a model passing a custom `score_mod` (Inkling, `--feature score_mod`) to `fa4` runs on
{requires}.

FA4's SM8x kernel cannot take a user score_mod (soft-capping, which FA4 turns into a built-in score_mod,
is allowed); the interface raises NotImplementedError. The flash-attn-4 4.0.0b36 wheel raises the same.""",
        fix_title="Use --attention-backend triton on SM8x",
        backend="fa4",
        fact="feature_archs:score_mod",
        fix=TRITON,
        backends=("fa4",),
        within_archs=True,
    ),
    Gate(
        id="fa4-mla-arch",
        title="MLA on fa4 needs {requires} (absorbed qv path)",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents="(head_dim, head_dim_v)=(64, 512) is not supported on SM90. head_dim and head_dim_v must be between "
        "8 and 256 and divisible by 8.",
        source=f"{INTERFACE}, _validate_head_dims and _flash_attn_fwd; {FA_BACKEND}, forward_decode (absorbed MLA "
        "passes qv)",
        docs="""Checks that an MLA model on `fa4` runs on {requires} (SM100/SM103, SM110).

SGLang decodes MLA models through the absorbed path: q_rope against the rope cache, q_nope as `qv` against
the latent cache (head dims 64/512). FA4 implements `qv` only in its SM100/SM110 MLA kernel and asserts
otherwise at the first decode. The deterministic-inference variant is refused at start-up (rule
fa4-deterministic-mla-arch); without deterministic inference the server starts and fails at decode.

What the user sees depends on the arch: on SM90 the head-dim validation fires before the qv assert, so
the error is the (64, 512) head-dim message above (seen on an H200 with flash-attn-4 4.0.0b36); on
SM8x/SM12x it is "only support Blackwell arch with qv".""",
        fix_title="Use fa3 on SM90, flashinfer elsewhere (or triton)",
        backend="fa4",
        fact="mla_archs",
        # fa3 where it serves MLA (SM90), else the first MLA backend the declarations admit on the GPU
        fix=Fallback(mla=("fa3", "flashinfer", "triton"), first=True),
        backends=("fa4",),
    ),
)

# fa4 named for decode: --attention-backend or --decode-attention-backend (0.5.4-0.5.7 refuse both)
FA4_DECODE = AnyOf((Flag("attention_backend", ("fa4",)), Flag("decode_attention_backend", ("fa4",))))
PREFILL_FA4 = "--prefill-attention-backend fa4"

CONSTRAINTS = (
    Constraint(
        id="fa4-softcap-score-mod",
        title="fa4 cannot combine logit soft-capping with a custom score_mod",
        versions="sglang>=0.5.16",
        backends=("fa4",),
        stage="runtime",
        prevents="softcap and score_mod cannot be used together",
        source=f"{INTERFACE}, _flash_attn_fwd",
        docs="""Checks that a model does not need both logit soft-capping (attn_logit_softcapping) and a custom
score_mod on `fa4`.

FA4 implements soft-capping as a built-in score_mod, so it asserts when a second one is passed.""",
        fix_title="Fold the soft-cap into the score_mod, or use --attention-backend triton",
        when=Feature("score_mod"),
        requires=Not(Feature("softcap")),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="fa4-sm12x-paged-kv",
        title="Before SGLang's SM120 host, fa4 on SM12x cannot serve a paged KV cache",
        versions="sglang<0.5.18",
        backends=("fa4",),
        needs_gpu=True,
        stage="runtime",
        prevents="Paged KV not supported on SM 12.0 in this PR",
        source="sglang 0.5.17: python/sglang/kernels/ops/attention/flash_attn/cute/interface.py, _flash_attn_fwd; "
        "sglang 0.5.13: jit_kernel/flash_attention_v4.py imports the flash-attn-4 wheel (same assert in "
        "4.0.0b36 flash_attn/cute/interface.py)",
        docs="""Checks `fa4` on SM120/SM121 (RTX 50xx, RTX PRO 6000, GB10) for SGLang releases before its SM120 forward
host.

Up to 0.5.15 SGLang's fa4 ran the flash-attn-4 wheel, and in 0.5.16/0.5.17 its vendored copy; both send SM12x
to FA4's SM120 kernel, which refuses paged KV ("Paged KV not supported on SM 12.0 in this PR",
0.5.17 interface.py:1362) and split-KV. SGLang always pages its KV cache, so the first forward fails. 0.5.18
routes SM12x to kernels/ops/attention/fa4_sm120 (flashattention_backend.py:274-281), which serves paged
decode (fa4_sm120/runtime.py:1322 try_paged_decode, :1472 register_paged_decode).""",
        fix_title="Upgrade SGLang to 0.5.18 or newer, or use --attention-backend flashinfer/triton on SM12x",
        when=ALWAYS,
        # SM8x lacks paged KV too, on every release: fa4-paged-kv-sm8x reports it
        requires=AnyOf((Not(Arch((12,))), DeclaredArch("fa4", "feature_archs:paged_kv"))),
        fix=("pip install 'sglang>=0.5.18'", "--attention-backend flashinfer"),
    ),
    Constraint(
        id="fa4-prefill-only",
        title="sglang 0.5.4-0.5.7 run fa4 for prefill only",
        versions="sglang>=0.5.4,<0.5.8",
        backends=("fa4",),
        stage="startup",
        prevents="FA4 backend is only supported for prefill. Please use `--prefill-attention-backend fa4` instead.",
        source="sglang 0.5.7: python/sglang/srt/server_args.py, ServerArgs._handle_attention_backend_compatibility",
        docs="""Checks that on sglang 0.5.4-0.5.7 fa4 is named only for prefill.

Those releases refuse `--attention-backend fa4` and `--decode-attention-backend fa4` at start-up with a
ValueError (server_args.py:1643-1650 in 0.5.7); fa4 decode arrives in 0.5.8.""",
        fix_title="Use --prefill-attention-backend fa4 with another decode backend, or upgrade SGLang",
        when=ALWAYS,
        # the fix keeps fa4 for prefill and decodes on the arch's usual backend: fa3 on SM90, trtllm_mha on SM100
        requires=(
            Requirement(Not(All((FA4_DECODE, Arch((9,))))), (f"{PREFILL_FA4} --decode-attention-backend fa3",)),
            Requirement(Not(All((FA4_DECODE, Arch((10,))))), (f"{PREFILL_FA4} --decode-attention-backend trtllm_mha",)),
            Requirement(Not(FA4_DECODE), (f"{PREFILL_FA4} --decode-attention-backend triton",)),
        ),
        first_only=True,
    ),
)

gate_rules(__name__, ROWS)
constraint_rules(__name__, CONSTRAINTS)
