"""The MLA backends' (and trtllm_mha's) gates generated from their declarations (archs, page sizes, model kind)
and their flag constraints as rows (judged by attn_preflight.rules.core.constraints.judge).

Each row names a backend and one fact of its declaration (rules/engines/sglang/capabilities.py); gate.judge
judges it through the validator (rules/engines/sglang/reasons.py), which words what the fact requires.
"""

from attn_preflight.rules.core.constraints import (
    ALWAYS,
    All,
    AnyOf,
    Arch,
    Constraint,
    Declares,
    Feature,
    Flag,
    Listed,
    Not,
    Range,
    Requirement,
    constraint_rules,
)
from attn_preflight.rules.engines.sglang.declared.gate import (
    ATTENTION_OR_DECODE,
    MLA_FALLBACK,
    PHASE_OR_DRAFT,
    Gate,
    gate_rules,
)
from attn_preflight.rules.engines.sglang.reasons import declared_words

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"

ROWS = (
    Gate(
        id="trtllm-mha-page",
        title="trtllm_mha page size: SGLang snaps unsupported sizes to {trtllm_mha.page_snap}",
        versions="sglang>=0.5.0rc2",
        stage="startup",
        prevents="TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning), which changes prefix-cache granularity.",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is one trtllm_mha supports when any phase (or the draft) uses it:
{requires} (sglang >= 0.5.17; {trtllm_mha.page_sizes#0.5.16} before).

SGLang does not refuse another size: it logs a warning and uses {trtllm_mha.page_snap}. That rewrite is
reported as a warning so that what runs is what was asked for.""",
        fix_title="Pass --page-size {trtllm_mha.page_snap} (any {trtllm_mha.page_sizes} is taken)",
        backend="trtllm_mha",
        fact="page_sizes",
        named_by=PHASE_OR_DRAFT,
    ),
    Gate(
        id="trtllm-mha-mla-model",
        title="An MLA model cannot use trtllm_mha",
        versions="sglang>=0.5.1",
        stage="init",
        prevents="trtllm_mha backend can only be used with non-MLA models.",
        source=f"{REGISTRY}, create_trtllm_mha_backend",
        docs="""Checks that an MLA model (DeepSeek V2/V3, Kimi K2, ...: config.json `kv_lora_rank`, or `--feature mla`)
is not served by trtllm_mha (prefill or decode).

trtllm_mha implements attention over full K/V heads only; its factory raises when the model runner starts.
The MLA counterpart is trtllm_mla on Blackwell, fa3 or flashmla on Hopper. (hpc_ops, the other MHA-only
backend, is covered by hpc-ops-model.)""",
        fix_title="Use --attention-backend trtllm_mla (Blackwell), fa3 or flashmla (SM90), or triton",
        backend="trtllm_mha",
        fact="mla",
        fix=MLA_FALLBACK,
        backends=("trtllm_mha",),
    ),
    Gate(
        id="trtllm-mla-arch",
        title="trtllm_mla needs a Blackwell GPU ({requires})",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different backend.",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks; utils/common.py is_blackwell",
        docs="""Checks that trtllm_mla (attention or decode backend) runs on a GPU SGLang's is_blackwell probe
accepts: {requires} ({trtllm_mla.archs#0.5.8} before sglang 0.5.9, {trtllm_mla.archs#0.5.4} before
0.5.4.post3) with torch CUDA >= 12.8.

SGLang refuses it at start-up elsewhere: Hopper uses fa3 or flashmla for MLA, older GPUs triton. Before
0.5.9 the message read "(SM100)" and is_blackwell accepted majors 10 and 12 only, so Jetson Thor (SM110)
was refused.""",
        fix_title="Use --attention-backend fa3 or flashmla (SM90), or triton",
        backend="trtllm_mla",
        fact="archs",
        named_by=ATTENTION_OR_DECODE,
        fix=MLA_FALLBACK,
    ),
    Gate(
        id="trtllm-mla-page",
        title="trtllm_mla page size: SGLang snaps unsupported sizes to {trtllm_mla.page_snap}",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="TensorRT-LLM MLA only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is one trtllm_mla takes ({trtllm_mla.page_sizes}) when trtllm_mla is the attention or decode backend.

SGLang logs a warning and uses {trtllm_mla.page_snap} for any other size; the rewrite is reported as a
warning.""",
        fix_title="Pass --page-size {trtllm_mla.page_snap} (any {trtllm_mla.page_sizes} is taken)",
        backend="trtllm_mla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="cutedsl-mla-arch",
        title="cutedsl_mla needs {requires} (B200/GB200/B300)",
        versions="sglang>=0.5.13",
        stage="startup",
        prevents="CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.",
        source=f"{OVERRIDES}, _cutedsl_prefill_backend_fill; utils/common.py is_sm100_supported",
        docs="""Checks that cutedsl_mla (any phase; in sglang 0.5.23 also its deprecated alias tokenspeed_mla) runs
on a GPU of {requires} (is_sm100: major 10, torch CUDA >= 12.8).

SGLang refuses it at start-up elsewhere, including SM110 and SM12x, which trtllm_mla does accept.""",
        fix_title="Use --attention-backend trtllm_mla (SM110/SM12x), fa3 (SM90) or triton",
        backend="cutedsl_mla",
        fact="archs",
        fix=MLA_FALLBACK,
        backends=("cutedsl_mla", "tokenspeed_mla"),
    ),
    Gate(
        id="cutedsl-mla-page",
        title="cutedsl_mla page size: SGLang snaps unsupported sizes to {cutedsl_mla.page_snap}",
        versions="sglang>=0.5.13",
        stage="startup",
        prevents="CuteDSL MLA only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is one cutedsl_mla takes ({cutedsl_mla.page_sizes}) when it serves any phase.

SGLang logs a warning and uses {cutedsl_mla.page_snap} for any other size; the rewrite is reported as a
warning.""",
        fix_title="Pass --page-size {cutedsl_mla.page_snap} (any {cutedsl_mla.page_sizes} is taken)",
        backend="cutedsl_mla",
        fact="page_sizes",
        backends=("cutedsl_mla", "tokenspeed_mla"),
    ),
    Gate(
        id="tokenspeed-mla-arch",
        title="tokenspeed_mla needs a Blackwell GPU (sglang 0.5.12-0.5.22)",
        versions="sglang>=0.5.12",
        stage="startup",
        prevents="tokenspeed_mla backend is only supported on Blackwell GPUs (SM100/SM12x).",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks (sglang 0.5.12-0.5.22)",
        docs="""Checks that tokenspeed_mla runs on a Blackwell GPU (is_blackwell: {tokenspeed_mla.archs#0.5.22})
on sglang 0.5.12-0.5.22, where it is its own backend.

SGLang refuses it at start-up elsewhere. From sglang 0.5.23 tokenspeed_mla is a deprecated alias of
cutedsl_mla, judged by cutedsl-mla-arch (SM100 only) instead.""",
        fix_title="Use --attention-backend trtllm_mla (Blackwell), fa3 or flashmla (SM90), or triton",
        backend="tokenspeed_mla",
        fact="archs",
        named_by=ATTENTION_OR_DECODE,
        fix=MLA_FALLBACK,
    ),
    Gate(
        id="tokenspeed-mla-page",
        title="tokenspeed_mla page size: SGLang snaps unsupported sizes to {tokenspeed_mla.page_snap} (sglang "
        "0.5.12-0.5.22)",
        versions="sglang>=0.5.12",
        stage="startup",
        prevents="tokenspeed_mla only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints (0.5.15-0.5.22; server_args.py 0.5.12-0.5.14)",
        docs="""Checks that `--page-size` is one tokenspeed_mla takes ({tokenspeed_mla.page_sizes#0.5.22}) when it is the
attention or decode backend, on sglang 0.5.12-0.5.22, where it is its own backend.

SGLang logs a warning and uses {tokenspeed_mla.page_snap#0.5.22} for any other size; the rewrite is reported as a warning. From sglang
0.5.23 tokenspeed_mla is renamed to cutedsl_mla, whose identical snap is judged by cutedsl-mla-page.""",
        fix_title="Pass --page-size {tokenspeed_mla.page_snap#0.5.22} (any {tokenspeed_mla.page_sizes#0.5.22} is taken)",
        backend="tokenspeed_mla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="flashmla-arch",
        title="flashmla needs {requires} (Hopper)",
        versions="sglang>=0.5.4.post3",
        stage="runtime",
        prevents="Dense decode MLA is only supported on SM90a architecture",
        reason="SGLang has no start-up check: FlashMLA's dense decode kernels are SM90 only and fail at the first "
        "decode (after weights load) on other GPUs, Blackwell included.",
        source="sglang: python/sglang/srt/layers/attention/flashmla_backend.py (flash_mla_with_kvcache, dense); "
        "sgl-kernel sgl_kernel/flash_mla.py and flashmla_ops (FlashMLA csrc); sgl-flash-mla flash_mla (0.5.23)",
        docs="""Checks that flashmla runs on a GPU of {requires} (Hopper).

SGLang's flashmla backend decodes dense MLA through FlashMLA (vendored in sgl-kernel up to sglang 0.5.22,
the sgl-flash-mla package in 0.5.23). FlashMLA's SM100 kernels are sparse-attention ones (DeepSeek V3.2's DSA
backends use them); dense decode has SM90 kernels only, and the kernel refuses other GPUs ("BF16 Dence MLA
is not supported on SM100" in sgl-kernel 0.3.16.post4, "Dense decode MLA is only supported on SM90a
architecture" in sglang-kernel 0.4.9). SGLang accepts the backend on any GPU at start-up, so the failure
comes at the first decode. Read from the kernel builds, not seen on a Blackwell GPU.""",
        fix_title="Use --attention-backend trtllm_mla (Blackwell) or triton",
        backend="flashmla",
        fact="archs",
        fix=MLA_FALLBACK,
        backends=("flashmla",),
        needs_gpu=True,
    ),
    Gate(
        id="flashmla-page",
        title="flashmla page size: SGLang forces {flashmla.page_snap}",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="FlashMLA only supports a page_size of 64, change page_size to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is {flashmla.page_snap} when flashmla is the attention or decode backend.

SGLang forces {flashmla.page_snap} whatever was given (logging a warning even when it was {flashmla.page_snap} already); a different explicit
size is reported as a warning.""",
        fix_title="Pass --page-size {flashmla.page_snap}",
        backend="flashmla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="cutlass-mla-arch",
        title="cutlass_mla needs an SM100 GPU (sglang <= 0.5.19)",
        versions="sglang>=0.5.0rc2",
        stage="runtime",
        reason="SGLang has no start-up check: the CUTLASS MLA decode kernel is an SM100 (tcgen05) kernel and fails at the "
        "first decode (after weights load) elsewhere.",
        source="sglang: layers/attention/cutlass_mla_backend.py (sgl-kernel cutlass_mla_decode); vllm: "
        "Sm100CutlassMLABackend / csrc/attention/mla/sm100_cutlass_mla_kernel.cu",
        docs="""Checks that cutlass_mla runs on a GPU of {cutlass_mla.archs#0.5.19}, on sglang releases that still have it
(<= 0.5.19; it is no longer an --attention-backend choice from 0.5.20).

The CUTLASS MLA decode kernel (sgl-kernel's cutlass_mla_decode, vLLM's sm100_cutlass_mla_decode) is written
for SM100's tensor-core generation; sgl-kernel's tests skip below compute capability 10.0 ("Cutlass MLA
Requires compute capability of 100 or above") and builds for SM120 have been reported failing at run time
("runMla ... Error Internal"). SGLang accepts the backend at start-up, so the failure comes at the first
decode.""",
        fix_title="Use --attention-backend trtllm_mla (Blackwell) or fa3 / flashmla (SM90)",
        backend="cutlass_mla",
        fact="archs",
        named_by=ATTENTION_OR_DECODE,
        fix=MLA_FALLBACK,
    ),
    Gate(
        id="cutlass-mla-page",
        title="cutlass_mla page size: SGLang forces {cutlass_mla.page_snap#0.5.19} (sglang <= 0.5.19)",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="Cutlass MLA only supports a page_size of 128, change page_size to 128.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints (sglang 0.5.15-0.5.19; server_args.py before)",
        docs="""Checks that `--page-size` is {cutlass_mla.page_snap#0.5.19} when cutlass_mla is the attention or decode
backend (sglang <= 0.5.19).

SGLang forces {cutlass_mla.page_snap#0.5.19} whatever was given; a different explicit size is reported as a warning.""",
        fix_title="Pass --page-size {cutlass_mla.page_snap#0.5.19}",
        backend="cutlass_mla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
)

ATTENTION_HOOK = "sglang: python/sglang/srt/arg_groups/attention_hook.py"
# Backends that decode the latent KV only: their factories refuse an MHA model (tokenspeed_mla's existed
# 0.5.12-0.5.22), or their constructors read the MLA dims without a check
MLA_ONLY_CHECKED = ("trtllm_mla", "cutedsl_mla", "tokenspeed_mla")
MLA_ONLY_UNCHECKED = ("flashmla", "cutlass_mla")


def mla_model_on(backends: tuple[str, ...]) -> tuple[Requirement, ...]:
    """An MLA model, unless every one of `backends` is declared to serve MHA models; the fix (the first failing
    requirement's) is SGLang's MHA backend of the arch: trtllm_mha on SM100, fa3 on SM90, flashinfer elsewhere."""
    served = AnyOf((Feature("mla"), All(tuple(Declares(name, "mha") for name in backends))))
    return (
        Requirement(AnyOf((served, Not(Arch((10,))))), ("--attention-backend trtllm_mha",)),
        Requirement(AnyOf((served, Not(Arch((9,))))), ("--attention-backend fa3",)),
        Requirement(served, ("--attention-backend flashinfer",)),
    )


FP8_KV = Flag("kv_cache_dtype", ("fp8_e4m3", "fp8_e5m2"))
TRTLLM_MLA_KV = Listed("trtllm_mla", "kv_dtypes", "kv_cache_dtype")
# sglang 0.5.23 renames tokenspeed_mla to cutedsl_mla (serving_hook.handle_deprecated_args), setting fp8_e4m3 itself
TOKENSPEED_AS_CUTEDSL = All(
    (
        AnyOf((Flag("prefill_backend", ("tokenspeed_mla",)), Flag("decode_backend", ("tokenspeed_mla",)))),
        Declares("tokenspeed_mla", "alias_of"),
    )
)

CONSTRAINTS = (
    Constraint(
        id="mla-backend-mha-model",
        title="trtllm_mla and cutedsl_mla need an MLA model",
        versions="sglang>=0.5.1",
        backends=MLA_ONLY_CHECKED,
        stage="init",
        prevents="trtllm_mla backend can only be used with MLA models.",
        source=f"{REGISTRY}, create_trtllm_mla_backend, create_cutedsl_mla_backend (create_tokenspeed_mla_backend, "
        "0.5.12-0.5.22)",
        docs="""Checks that trtllm_mla, cutedsl_mla and tokenspeed_mla serve an MLA model (config.json `kv_lora_rank`, or
`--feature mla`).

They decode over the compressed latent KV (kv_lora_rank + rope dims) only; their factories raise "...
backend can only be used with MLA models." when the model runner builds the attention backend, after the
weights have loaded. (flashmla and cutlass_mla: rule flashmla-mha-model.)""",
        fix_title="Use an MHA backend: trtllm_mha (SM100), fa3 (SM90), flashinfer or triton",
        when=ALWAYS,
        requires=mla_model_on(MLA_ONLY_CHECKED),
        first_only=True,
        required="an MLA model (kv_lora_rank) on " + " / ".join(MLA_ONLY_CHECKED),
    ),
    Constraint(
        id="flashmla-mha-model",
        title="flashmla and cutlass_mla need an MLA model",
        versions="sglang>=0.5.0rc2",
        backends=MLA_ONLY_UNCHECKED,
        stage="init",
        reason="SGLang has no check: the backend's constructor reads the model's MLA dims and crashes on an MHA model "
        "when the model runner builds the attention backend, after the weights have loaded.",
        prevents="AttributeError: 'ModelConfig' object has no attribute 'kv_lora_rank'",
        source="sglang: python/sglang/srt/layers/attention/flashmla_backend.py, FlashMLABackend.__init__; "
        "cutlass_mla_backend.py, CutlassMLABackend.__init__ (sglang <= 0.5.19); configs/model_config.py sets "
        "kv_lora_rank for MLA architectures only",
        docs="""Checks that flashmla and cutlass_mla serve an MLA model (config.json `kv_lora_rank`, or `--feature mla`).

Both decode over the compressed latent KV only. Their factories have no MLA check (unlike trtllm_mla's), so
SGLang accepts the flag at start-up; the backend's constructor then reads `model_config.kv_lora_rank`,
which SGLang's ModelConfig sets for MLA architectures only, and the launch dies with an AttributeError.""",
        fix_title="Use an MHA backend: trtllm_mha (SM100), fa3 (SM90), flashinfer or triton",
        when=ALWAYS,
        requires=mla_model_on(MLA_ONLY_UNCHECKED),
        first_only=True,
        required="an MLA model (kv_lora_rank) on " + " / ".join(MLA_ONLY_UNCHECKED),
    ),
    Constraint(
        id="trtllm-mla-kv-dtype",
        title="trtllm_mla KV cache: {trtllm_mla.kv_dtypes}",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks",
        docs="""Checks that trtllm_mla (attention or decode backend) is used with a `--kv-cache-dtype` its declaration
lists for the target's release: {trtllm_mla.kv_dtypes} in the newest.

SGLang refuses other values at start-up, including the spelling `bfloat16` (accepted by other backends)
and the FP4/MXFP8 caches. History: {trtllm_mla.kv_dtypes#0.5.20} through 0.5.20 (fp4_e2m1 until then),
{trtllm_mla.kv_dtypes#0.5.6} before 0.5.7 (bf16 from 0.5.7).""",
        fix_title="Pass a --kv-cache-dtype it takes: {trtllm_mla.kv_dtypes}",
        when=AnyOf((Flag("attention_backend", ("trtllm_mla",)), Flag("decode_backend", ("trtllm_mla",)))),
        requires=(
            # bfloat16 is refused as spelled: bf16 is the same cache
            Requirement(AnyOf((TRTLLM_MLA_KV, Not(Flag("kv_cache_dtype", ("bfloat16",))))), ("--kv-cache-dtype bf16",)),
            Requirement(TRTLLM_MLA_KV, ("--kv-cache-dtype fp8_e4m3",)),
        ),
        first_only=True,
    ),
    Constraint(
        id="cutedsl-mla-kv-dtype",
        title="cutedsl_mla KV cache: {cutedsl_mla.kv_dtypes}",
        versions="sglang>=0.5.13",
        backends=("cutedsl_mla", "tokenspeed_mla"),
        stage="startup",
        prevents="CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.",
        source=f"{OVERRIDES}, _cutedsl_prefill_backend_fill",
        docs="""Checks that cutedsl_mla is used with a `--kv-cache-dtype` it declares: {cutedsl_mla.kv_dtypes}.

SGLang refuses FP8 E5M2, MXFP8 and FP4 caches for it at start-up.""",
        fix_title="Pass a --kv-cache-dtype it takes: {cutedsl_mla.kv_dtypes}",
        when=AnyOf(
            (
                Flag("prefill_backend", ("cutedsl_mla",)),
                Flag("decode_backend", ("cutedsl_mla",)),
                TOKENSPEED_AS_CUTEDSL,
            )
        ),
        requires=AnyOf((Listed("cutedsl_mla", "kv_dtypes", "kv_cache_dtype"), TOKENSPEED_AS_CUTEDSL)),
        fix=("--kv-cache-dtype fp8_e4m3",),
    ),
    Constraint(
        id="trtllm-mha-sm120-fp8-prefill",
        title="trtllm_mha prefill on SM120 cannot read an FP8 KV cache",
        versions="sglang>=0.5.19",
        backends=("trtllm_mha",),
        stage="startup",
        prevents="TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.",
        source=f"{ATTENTION_HOOK}, handle_attention_backend_compatibility",
        docs="""Checks that trtllm_mha prefill on an SM12x GPU (RTX 50xx, RTX PRO 6000, GB10) does not use
`--kv-cache-dtype fp8_e4m3`.

On SM120 SGLang's trtllm_mha prefill runs the FMHAv2 kernels, which have no FP8-KV (or skip-softmax)
variant; SGLang refuses the combination at start-up. Decode (XQA) is unaffected, so a split config works.""",
        fix_title="Use --prefill-attention-backend flashinfer (keep trtllm_mha for decode), or a bf16 KV cache",
        when=All((Flag("prefill_backend", ("trtllm_mha",)), Arch((12,)))),
        requires=Not(Flag("kv_cache_dtype", ("fp8_e4m3",))),
        fix=("--prefill-attention-backend flashinfer", "--decode-attention-backend trtllm_mha"),
    ),
    Constraint(
        id="cutlass-mla-fp8-kv",
        title="cutlass_mla cannot decode from an FP8 KV cache (sglang <= 0.5.19)",
        versions="sglang>=0.5.0rc2,<0.5.20",
        stage="runtime",
        reason="SGLang casts the query to the model dtype (bf16) and sgl-kernel's cutlass_mla_decode takes its element "
        "type from the query, so an FP8 KV cache is read as bf16 (twice its bytes): the first decode, CUDA-graph "
        "capture at start-up, crashes (sglang issue #12197, 'Cutlass MLA fp8_e4m3 launch failed').",
        prevents="",
        source="sglang: python/sglang/srt/layers/attention/cutlass_mla_backend.py, CutlassMLABackend.forward_decode; "
        "sgl-project/sglang: sgl-kernel/csrc/attention/cutlass_mla_kernel.cu, cutlass_mla_decode / args_from_options",
        references=("https://github.com/sgl-project/sglang/issues/12197",),
        docs="""Checks that cutlass_mla (attention or decode backend) is not given `--kv-cache-dtype fp8_e4m3` or
`fp8_e5m2`, on sglang releases that still have it (<= 0.5.19).

CutlassMLABackend.forward_decode converts the query to the model dtype and passes the KV buffer as it is;
sgl-kernel's cutlass_mla_decode picks the kernel's element type from the query's dtype and casts the KV
cache pointer to it, with strides counted in elements. With an FP8 cache the kernel reads bf16 rows twice the
size of the stored ones, past the end of the pool, when CUDA graphs are captured at start-up. SGLang accepts
the combination at start-up (its cutlass_mla check forces the page size only).""",
        fix_title="Use --attention-backend trtllm_mla (it reads fp8_e4m3), or drop --kv-cache-dtype",
        when=AnyOf((Flag("attention_backend", ("cutlass_mla",)), Flag("decode_backend", ("cutlass_mla",)))),
        requires=Not(FP8_KV),
        fix=("--attention-backend trtllm_mla",),
    ),
    Constraint(
        id="flashmla-fp8-dcp",
        title="flashmla cannot read an FP8 KV cache under decode context parallelism",
        versions="sglang>=0.5.15",
        backends=("flashmla",),
        stage="runtime",
        prevents="FlashMLA does not support DCP for FP8 kv cache",
        source="sglang: python/sglang/srt/layers/attention/flashmla_backend.py, FlashMLABackend.forward_decode",
        docs="""Checks that flashmla decode with an FP8 KV cache (fp8_e4m3 / fp8_e5m2) does not run with decode context
parallelism (`--dcp-size` > 1).

FlashMLA's FP8 decode path asserts one DCP rank; the server loads and the first decode step fails.""",
        fix_title="Use --kv-cache-dtype auto with flashmla under DCP, or --dcp-size 1",
        when=All((Not(Range("dcp_size", 0, 1)), Flag("decode_backend", ("flashmla",)))),
        requires=Not(FP8_KV),
        fix=("--kv-cache-dtype auto", "--dcp-size 1"),
    ),
)

gate_rules(__name__, ROWS)
constraint_rules(__name__, CONSTRAINTS, worded=lambda row: declared_words(row.title, row.docs, row.fix_title))
