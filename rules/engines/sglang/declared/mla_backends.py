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

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"
REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"

ROWS = (
    Gate(
        id="trtllm-mha-page",
        title="trtllm_mha page size: SGLang snaps unsupported sizes to 64",
        versions="sglang>=0.5.0rc2",
        verified="sglang 0.5.0rc2-0.5.23, every release (bench/release_walk.py grep 'TensorRT-LLM MHA only supports "
        "page_size'): the page size of a launch with any phase on trtllm_mha is changed to 64 unless it is 16, "
        "32 or 64 (server_args.py 0.5.0rc2 :473, 0.5.1 :507, 0.5.5 :1248, 0.5.14 :4640; "
        "arg_groups/overrides.py 0.5.15 :1577, 0.5.16 :1739), or 16, 32, 64 or 128 from 0.5.17 (:2092; 0.5.23 "
        ":1185)",
        stage="startup",
        prevents="TensorRT-LLM MHA only supports page_size of 16, 32, 64 or 128, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning), which changes prefix-cache granularity.",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is one trtllm_mha supports when any phase (or the draft) uses it:
16, 32, 64 or 128 (sglang >= 0.5.17; 16, 32 or 64 before).

SGLang does not refuse another size: it logs a warning and uses 64. That rewrite is reported as a warning
so that what runs is what was asked for.""",
        fix_title="Pass --page-size 64 (or 16, 32, 128)",
        backend="trtllm_mha",
        fact="page_sizes",
        named_by=PHASE_OR_DRAFT,
    ),
    Gate(
        id="trtllm-mha-mla-model",
        title="An MLA model cannot use trtllm_mha",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23: 'trtllm_mha backend can only be used with non-MLA models.' when the model "
        "runner builds the backend in every release (model_runner.py _get_attention_backend_from_str through "
        "0.5.2, attention_registry.py create_trtllm_mha_backend from 0.5.3, :278-281 in 0.5.23)",
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
        title="trtllm_mla needs a Blackwell GPU (SM100/SM110/SM120)",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23 (bench/release_walk.py grep): the same ValueError in every release; the arch "
        "test is is_sm100_supported() through 0.5.4 (0.5.1 server_args.py:479-481), is_blackwell_supported() "
        "from 0.5.4.post3 (majors 10 and 12 through 0.5.8, 10/11/12 from 0.5.9), "
        "arg_groups/overrides.py:1209-1213 in 0.5.23: eras of trtllm_mla in rules/engines/sglang/capabilities.py",
        stage="startup",
        prevents="TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). Please use a different backend.",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks; utils/common.py is_blackwell",
        docs="""Checks that trtllm_mla (attention or decode backend) runs on a GPU SGLang's is_blackwell probe
accepts: compute capability 10.x, 11.x or 12.x (11.x only since sglang 0.5.9) with torch CUDA >= 12.8.

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
        title="trtllm_mla page size: SGLang snaps unsupported sizes to 64",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23: the same page_size not in [32, 64] -> 64 rewrite for --attention-backend / "
        "--decode-attention-backend trtllm_mla in every release (0.5.1 server_args.py:483-488, "
        "arg_groups/overrides.py:1154-1163 in 0.5.23; bench/release_walk.py grep)",
        stage="startup",
        prevents="TensorRT-LLM MLA only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is 32 or 64 when trtllm_mla is the attention or decode backend.

SGLang logs a warning and uses 64 for any other size; the rewrite is reported as a warning.""",
        fix_title="Pass --page-size 64 (or 32)",
        backend="trtllm_mla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="cutedsl-mla-arch",
        title="cutedsl_mla needs an SM100 GPU (B200/GB200/B300)",
        versions="sglang>=0.5.13",
        verified="sglang 0.5.13-0.5.23: raise unless is_sm100 (major 10) whenever a phase names cutedsl_mla, the block read in "
        "every wheel: in _handle_attention_backend_compatibility through 0.5.14 (server_args.py :2946 in 0.5.13, :4590 "
        "in 0.5.14), then arg_groups/overrides.py (:1647 in 0.5.15, :1269 in 0.5.19, :1307 in 0.5.20, :1246 in 0.5.23);"
        " cutedsl_mla is not a choice before 0.5.13",
        stage="startup",
        prevents="CuteDSL MLA backend is only supported on Blackwell GPUs (SM100). Please use a different backend.",
        source=f"{OVERRIDES}, _cutedsl_prefill_backend_fill; utils/common.py is_sm100_supported",
        docs="""Checks that cutedsl_mla (any phase; in sglang 0.5.23 also its deprecated alias tokenspeed_mla) runs
on a compute-capability 10.x GPU (is_sm100: major 10, torch CUDA >= 12.8).

SGLang refuses it at start-up elsewhere, including SM110 and SM12x, which trtllm_mla does accept.""",
        fix_title="Use --attention-backend trtllm_mla (SM110/SM12x), fa3 (SM90) or triton",
        backend="cutedsl_mla",
        fact="archs",
        fix=MLA_FALLBACK,
        backends=("cutedsl_mla", "tokenspeed_mla"),
    ),
    Gate(
        id="cutedsl-mla-page",
        title="cutedsl_mla page size: SGLang snaps unsupported sizes to 64",
        versions="sglang>=0.5.13",
        verified="sglang 0.5.13-0.5.23: page_size not in [32, 64] -> 64 with a warning in every release (server_args.py:2950 in "
        "0.5.13, :4594 in 0.5.14; arg_groups/overrides.py _mla_backend_page_constraints :1567 in 0.5.15, :1175 in "
        "0.5.19, :1213 in 0.5.20, :1171 in 0.5.23); cutedsl_mla is not a choice before 0.5.13",
        stage="startup",
        prevents="CuteDSL MLA only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is 32 or 64 when cutedsl_mla serves any phase.

SGLang logs a warning and uses 64 for any other size; the rewrite is reported as a warning.""",
        fix_title="Pass --page-size 64 (or 32)",
        backend="cutedsl_mla",
        fact="page_sizes",
        backends=("cutedsl_mla", "tokenspeed_mla"),
    ),
    Gate(
        id="tokenspeed-mla-arch",
        title="tokenspeed_mla needs a Blackwell GPU (sglang 0.5.12-0.5.22)",
        versions="sglang>=0.5.12",
        verified="sglang 0.5.12-0.5.22: raise unless is_blackwell when attention or decode names tokenspeed_mla, the block read "
        "in every wheel (server_args.py:2739 in 0.5.12, :4567 in 0.5.14; arg_groups/overrides.py:1609 in 0.5.15, :1231 "
        "in 0.5.19 as get_platform().is_blackwell, :1155 in 0.5.21, :1174 in 0.5.22); in 0.5.23 tokenspeed_mla is an "
        "alias of cutedsl_mla (no such check)",
        stage="startup",
        prevents="tokenspeed_mla backend is only supported on Blackwell GPUs (SM100/SM12x).",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks (sglang 0.5.12-0.5.22)",
        docs="""Checks that tokenspeed_mla runs on a Blackwell GPU (is_blackwell: compute capability 10.x, 11.x, 12.x)
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
        title="tokenspeed_mla page size: SGLang snaps unsupported sizes to 64 (sglang 0.5.12-0.5.22)",
        versions="sglang>=0.5.12",
        verified="sglang 0.5.12-0.5.22: page_size not in [32, 64] -> 64 with a warning (server_args.py:2743 in 0.5.12, :4571 in "
        "0.5.14; arg_groups/overrides.py _mla_backend_page_constraints :1557 in 0.5.15, :1165 in 0.5.19, :1092 in "
        "0.5.21, :1111 in 0.5.22), the block read in every wheel; gone in 0.5.23 (alias of cutedsl_mla)",
        stage="startup",
        prevents="tokenspeed_mla only supports page_size of 32 or 64, changing page_size from {page_size} to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints (0.5.15-0.5.22; server_args.py 0.5.12-0.5.14)",
        docs="""Checks that `--page-size` is 32 or 64 when tokenspeed_mla is the attention or decode backend, on
sglang 0.5.12-0.5.22, where it is its own backend.

SGLang logs a warning and uses 64 for any other size; the rewrite is reported as a warning. From sglang
0.5.23 tokenspeed_mla is renamed to cutedsl_mla, whose identical snap is judged by cutedsl-mla-page.""",
        fix_title="Pass --page-size 64 (or 32)",
        backend="tokenspeed_mla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="flashmla-arch",
        title="flashmla needs an SM90 (Hopper) GPU",
        versions="sglang>=0.5.4.post3",
        verified="sglang 0.5.4.post3-0.5.23: the flashmla backend decodes with FlashMLA's dense kernel and SGLang has no "
        "start-up arch check: sgl_kernel.flash_mla in 0.5.4.post3-0.5.22 (flashmla_backend.py:12, :13 from "
        "0.5.13), sglang.kernels.ops.attention.flash_mla_interface over sgl-flash-mla 1.0.0 in 0.5.23 (:14, its "
        "legacy dense kernels). The pinned kernel builds: sgl-kernel 0.3.16.post4 (0.5.4.post3) ... 0.3.21 "
        "(0.5.8-0.5.9), sglang-kernel 0.4.1 (0.5.10) ... 0.4.9 (0.5.22), sgl-flash-mla 1.0.0 (0.5.23); read "
        "(strings of flashmla_ops.abi3.so, flash_mla/_C_legacy.abi3.so) in sgl-kernel 0.3.16.post4, sglang-kernel "
        "0.4.9 and sgl-flash-mla 1.0.0: dense decode SM90 only, SM100 only sparse; the pins between not read. "
        "0.5.0rc2-0.5.4 import the standalone flash_mla package, which the wheels do not pin, so they are not judged",
        stage="runtime",
        prevents="Dense decode MLA is only supported on SM90a architecture",
        reason="SGLang has no start-up check: FlashMLA's dense decode kernels are SM90 only and fail at the first "
        "decode (after weights load) on other GPUs, Blackwell included.",
        source="sglang: python/sglang/srt/layers/attention/flashmla_backend.py (flash_mla_with_kvcache, dense); "
        "sgl-kernel sgl_kernel/flash_mla.py and flashmla_ops (FlashMLA csrc); sgl-flash-mla flash_mla (0.5.23)",
        docs="""Checks that flashmla runs on a compute-capability 9.x (Hopper) GPU.

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
        title="flashmla page size: SGLang forces 64",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23: the same flashmla page_size -> 64 rewrite for --attention-backend / "
        "--decode-attention-backend flashmla in every release (server_args.py in 0.5.1-0.5.14, "
        "arg_groups/overrides.py:1146-1152 in 0.5.23; bench/release_walk.py grep)",
        stage="startup",
        prevents="FlashMLA only supports a page_size of 64, change page_size to 64.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints",
        docs="""Checks that `--page-size` is 64 when flashmla is the attention or decode backend.

SGLang forces 64 whatever was given (logging a warning even when it was 64 already); a different explicit
size is reported as a warning.""",
        fix_title="Pass --page-size 64",
        backend="flashmla",
        fact="page_sizes",
        named_by=ATTENTION_OR_DECODE,
    ),
    Gate(
        id="cutlass-mla-arch",
        title="cutlass_mla needs an SM100 GPU (sglang <= 0.5.19)",
        versions="sglang>=0.5.0rc2",
        verified="sglang 0.5.0rc2-0.5.19: CutlassMLABackend.forward_decode calls sgl-kernel's cutlass_mla_decode in every "
        "release that has the backend (cutlass_mla_backend.py :277 in 0.5.0rc2-0.5.12.post1, :242-243 after), and "
        "no release checks the arch for cutlass_mla at start-up (server_args.py / arg_groups: the page size only, "
        "read in 0.5.0rc2, 0.5.1, 0.5.3, 0.5.4, 0.5.5, 0.5.10, 0.5.15, 0.5.19); from 0.5.20 it is not a choice",
        stage="runtime",
        reason="SGLang has no start-up check: the CUTLASS MLA decode kernel is an SM100 (tcgen05) kernel and fails at the "
        "first decode (after weights load) elsewhere.",
        source="sglang: layers/attention/cutlass_mla_backend.py (sgl-kernel cutlass_mla_decode); vllm: "
        "Sm100CutlassMLABackend / csrc/attention/mla/sm100_cutlass_mla_kernel.cu",
        docs="""Checks that cutlass_mla runs on a compute-capability 10.x GPU, on sglang releases that still have it
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
        title="cutlass_mla page size: SGLang forces 128 (sglang <= 0.5.19)",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.19: the same cutlass_mla page_size -> 128 rewrite in every release that has the "
        "backend (server_args.py, then arg_groups/overrides.py; bench/release_walk.py grep); cutlass_mla is "
        "no longer a choice from 0.5.20 (general-backend-removed)",
        stage="startup",
        prevents="Cutlass MLA only supports a page_size of 128, change page_size to 128.",
        reason="SGLang silently changes the page size (a logged warning).",
        source=f"{OVERRIDES}, _mla_backend_page_constraints (sglang 0.5.15-0.5.19; server_args.py before)",
        docs="""Checks that `--page-size` is 128 when cutlass_mla is the attention or decode backend (sglang <= 0.5.19).

SGLang forces 128 whatever was given; a different explicit size is reported as a warning.""",
        fix_title="Pass --page-size 128",
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
        verified="sglang 0.5.1-0.5.23: 'trtllm_mla backend can only be used with MLA models.' when the model runner "
        "builds the backend in every release (model_runner.py through 0.5.2, attention_registry.py "
        "create_trtllm_mla_backend from 0.5.3, :97 in 0.5.23; cutedsl_mla's :121 from its first release)",
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
    ),
    Constraint(
        id="flashmla-mha-model",
        title="flashmla and cutlass_mla need an MLA model",
        versions="sglang>=0.5.0rc2",
        verified="sglang 0.5.0rc2-0.5.23, every release: FlashMLABackend.__init__ reads model_runner.model_config."
        "kv_lora_rank (flashmla_backend.py :70 in 0.5.0rc2, :90 in 0.5.23), CutlassMLABackend.__init__ too "
        "(cutlass_mla_backend.py :73 to 0.5.12.post1, :75-76 0.5.13-0.5.19); configs/model_config.py sets "
        "kv_lora_rank in its MLA branches only (0.5.1 :205-230), and 0.5.0rc2-0.5.2's model_runner.py builds "
        "either backend for an MHA model without a check (0.5.1 :1534-1555)",
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
    ),
    Constraint(
        id="trtllm-mla-kv-dtype",
        title="trtllm_mla KV cache: fp8_e4m3, bf16 or auto",
        versions="sglang>=0.5.1",
        verified="sglang 0.5.1-0.5.23 (bench/release_walk.py grep): the KV-dtype ValueError in every release, its list "
        "by release: fp8_e4m3/auto through 0.5.4 (0.5.1 server_args.py:492), + fp4_e2m1 from 0.5.4.post3, + "
        "bf16 from 0.5.7, fp4_e2m1 gone from 0.5.21 (arg_groups/overrides.py:1214-1217 in 0.5.23): eras of "
        "trtllm_mla",
        stage="startup",
        prevents="TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.",
        source=f"{OVERRIDES}, _mla_kv_cache_dtype_checks",
        docs="""Checks that trtllm_mla (attention or decode backend) is used with a `--kv-cache-dtype` its declaration
lists for the target's release: fp8_e4m3, bf16 or auto in the newest.

SGLang refuses other values at start-up, including the spelling `bfloat16` (accepted by other backends)
and the FP4/MXFP8 caches. History: fp4_e2m1 was accepted until 0.5.20; bf16 from 0.5.7.""",
        fix_title="Pass --kv-cache-dtype fp8_e4m3 (or bf16 / auto)",
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
        title="cutedsl_mla KV cache: fp8_e4m3, bf16 or auto",
        versions="sglang>=0.5.13",
        verified="sglang 0.5.13-0.5.23: raise unless kv_cache_dtype in fp8_e4m3/bf16/bfloat16/auto, the same list in "
        "every release, the block read in every wheel: server_args.py _handle_attention_backend_compatibility "
        "through 0.5.14 (:2960 in 0.5.13, :4604 in 0.5.14), then arg_groups/overrides.py (:1656 in 0.5.15, :1255 in "
        "0.5.23); cutedsl_mla is not a choice before 0.5.13",
        backends=("cutedsl_mla", "tokenspeed_mla"),
        stage="startup",
        prevents="CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.",
        source=f"{OVERRIDES}, _cutedsl_prefill_backend_fill",
        docs="""Checks that cutedsl_mla is used with `--kv-cache-dtype` fp8_e4m3, bf16, bfloat16 or auto.

SGLang refuses FP8 E5M2, MXFP8 and FP4 caches for it at start-up.""",
        fix_title="Pass --kv-cache-dtype fp8_e4m3 (or bf16 / auto)",
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
        verified="sglang 0.5.19-0.5.23: the same raise for prefill trtllm_mha on is_sm120 with fp8_e4m3 KV (or the "
        "SGLANG_SKIP_SOFTMAX_PREFILL_THRESHOLD_SCALE_FACTOR env, not modelled) in every wheel (arg_groups/"
        "attention_hook.py:152 in 0.5.19, :150 in 0.5.20-0.5.21, :218 in 0.5.22, :219 in 0.5.23); before 0.5.19 "
        "trtllm_mha prefill is refused off SM100 altogether (rule trtllm-mha-arch)",
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
        verified="sglang 0.5.0rc2-0.5.19: CutlassMLABackend.forward_decode casts the query to model_runner.dtype and "
        "hands the KV buffer to cutlass_mla_decode in every release that has the backend (cutlass_mla_backend.py "
        ":79, :269-270, :277 in 0.5.0rc2-0.5.12.post1; :82, :235-236, :243 in 0.5.14-0.5.17); no release checks "
        "the KV dtype for cutlass_mla (server_args.py 0.5.4 :1085-1092 forces the page size only); gone from 0.5.20",
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
        verified="sglang 0.5.15-0.5.23, every release (bench/release_walk.py grep 'FlashMLA does not support DCP for "
        "FP8 kv cache'): flashmla_backend.py forward_decode (0.5.15 :343, 0.5.23 :457-460); --dcp-size first "
        "appears in 0.5.15",
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
constraint_rules(__name__, CONSTRAINTS)
