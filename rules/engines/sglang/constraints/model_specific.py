"""Model families SGLang serves only on some attention backends: one row per family, judged by one check.

A row names the architectures (config.json `architectures[0]`, or `model_type`), the backends each release range
allows (or refuses), and the backend its fix suggests per GPU generation; `model_backend_rules` registers one rule
per row with the row's id. Verified against the sglang wheels 0.5.0rc2 ... 0.5.23 (each row's `verified`); a row
follows the target's installed (or pinned) SGLang release, and the newest when it is unknown.
"""

from typing import Collection, NamedTuple, Sequence

from packaging.version import Version

from attn_preflight.rules.checks.common import blackwell_majors, gpu, sglang_release
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Arch,
    Capability,
    Constraint,
    Env,
    EnvTrue,
    Feature,
    Flag,
    Model,
    ModelField,
    Not,
    Range,
    Requirement,
    Resolved,
    Since,
    Speculative,
    constraint_rules,
    unset_or,
)
from attn_preflight.rules.core.engine import Outcome, failed, generated_rule, passed, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.capabilities import INKLING_ARCHITECTURES, LLAMA4_DEFAULT_FROM
from attn_preflight.rules.engines.sglang.resolve import (
    EXAONE_ARCHITECTURES,
    LFM2_ARCHITECTURES,
    OLMO_ARCHITECTURES,
    RAGGED_VERIFY_ENV,
    attention_dp_on,
    effective_page_size,
    minimax_m3_nvfp4,
    on_blackwell,
)

MODEL_HOOK = "sglang: python/sglang/srt/arg_groups/model_hook.py"
OVERRIDES_DIR = "sglang: python/sglang/srt/arg_groups/model_overrides"
REGISTRY = "sglang: python/sglang/srt/layers/attention/attention_registry.py"

# SGLang's own default for these models: trtllm_mha on SM100, fa3 on SM90, triton elsewhere
SM100_SM90_DEFAULT = ((10, "trtllm_mha"), (9, "fa3"))
# EXAONE / OLMo: fa3 only where fa3 runs (SM8x/SM90)
SWA_DEFAULT = ((10, "trtllm_mha"), (9, "fa3"), (8, "fa3"))

GPT_OSS_BACKENDS = ("triton", "trtllm_mha", "fa3", "fa4", "ascend", "intel_amx", "intel_xpu", "aiter")
HYBRID_GDN_MODEL_TYPES = frozenset(
    {
        "qwen3_next",
        "qwen3_5",
        "qwen3_5_text",
        "qwen3_5_moe",
        "qwen3_5_moe_text",
        "intern_s2_preview",
        "jet_nemotron",
        "jet_vlm",
    }
)


class Allowed(NamedTuple):
    """The backends listed from release `since` on (on GPUs of these compute-capability majors only, when given)."""

    since: Version
    backends: tuple[str, ...]
    majors: tuple[int, ...] = ()


class ModelBackends(NamedTuple):
    id: str
    title: str
    versions: str
    stage: str
    prevents: str
    source: str
    docs: str
    fix_title: str
    family: str  # how a finding names the model
    models: Collection[str]  # architectures[0], or model_type with `by_model_type`
    allowed: tuple[Allowed, ...]  # newest first: the first whose release (and GPU) holds is the list
    fix: tuple[tuple[int, str], ...] = ()  # (compute-capability major, the backend the fix names there)
    fix_elsewhere: str = "triton"
    refused: bool = False  # the list names the backends refused, not those allowed
    by_model_type: bool = False
    named_until: Version = Version("0")  # before it SGLang asserts --attention-backend as given, before its default
    asserted_since: tuple[tuple[str, Version], ...] = ()  # an architecture the check covers from a later release
    blackwell_only: bool = False  # judged on Blackwell-class GPUs only (as the target's release counts them)
    prefill_only: bool = False  # the list holds for the prefill backend only


ROWS = (
    ModelBackends(
        id="model-gpt-oss-backends",
        title="GPT-OSS needs a backend with attention sinks and sliding window",
        versions="sglang>=0.5.1",
        stage="startup",
        prevents="GptOssForCausalLM requires one of ['triton', 'trtllm_mha', 'fa3', 'fa4', 'ascend', 'intel_amx', "
        "'intel_xpu', 'aiter'] attention backend, but got the following backends\n- Prefill: {prefill}\n"
        "- Decode: {decode}\n",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (GptOssForCausalLM branch)",
        docs="""Checks that a GPT-OSS model (GptOssForCausalLM) is served, for prefill and decode, by one of
triton, trtllm_mha, fa3, fa4 (or the non-NVIDIA ascend, intel_amx, intel_xpu, aiter).

GPT-OSS layers alternate sliding-window and full attention and every layer adds learnable attention sinks.
FlashInfer, torch_native and flex_attention implement no sinks, so SGLang asserts the list above at
start-up (its CUDA members unchanged since 0.5.3.post3). SGLang's own default is trtllm_mha on SM100, fa3 on
SM90 and triton elsewhere (model_overrides/gpt_oss.py). fa4 is in the list from 0.5.3.post3; 0.5.1-0.5.3
allow triton, trtllm_mha and fa3 only.""",
        fix_title="Use --attention-backend fa3 (SM90), trtllm_mha (SM100) or triton",
        family="GPT-OSS",
        models=frozenset({"GptOssForCausalLM"}),
        allowed=(
            Allowed(Version("0.5.3.post3"), GPT_OSS_BACKENDS),
            Allowed(Version("0"), ("triton", "trtllm_mha", "fa3")),
        ),
        fix=SM100_SM90_DEFAULT,
    ),
    ModelBackends(
        id="model-llama4-backends",
        title="Llama 4 needs fa3, trtllm_mha or triton (chunked local attention)",
        versions="sglang>=0.5.0rc2",
        stage="startup",
        prevents="fa3, aiter, triton, ascend, trtllm_mha or intel_xpu is required for Llama4 model but got {backend}",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (Llama4 branch)",
        docs="""Checks that a Llama 4 model (Llama4ForConditionalGeneration / Llama4ForCausalLM) on a GPU is served by
fa3, trtllm_mha or triton (or the non-NVIDIA aiter, ascend, intel_xpu).

Llama 4 interleaves chunked local attention (attention_chunk_size) with global NoPE layers; only these
backends implement the chunked mask, so SGLang asserts the list at start-up. fa4 and flashinfer are not
in it. History: fa3 only in 0.5.0rc2, aiter from 0.5.1, triton from 0.5.2, trtllm_mha from 0.5.4.post3,
intel_xpu from 0.5.5.post3, ascend from 0.5.10. SGLang's default is trtllm_mha on SM100, fa3 on SM90, triton
elsewhere (model_overrides/llama4.py), from 0.5.6: before, the list is asserted on --attention-backend as
given, so a Llama 4 launch without one fails on every GPU.""",
        fix_title="Use --attention-backend fa3 (SM90), trtllm_mha (SM100) or triton",
        family="Llama 4",
        models=frozenset({"Llama4ForConditionalGeneration", "Llama4ForCausalLM"}),
        allowed=(
            Allowed(Version("0.5.10"), ("fa3", "aiter", "triton", "ascend", "trtllm_mha", "intel_xpu")),
            Allowed(Version("0.5.5.post3"), ("fa3", "aiter", "triton", "trtllm_mha", "intel_xpu")),
            Allowed(Version("0.5.4.post3"), ("fa3", "aiter", "triton", "trtllm_mha")),
            Allowed(Version("0.5.2"), ("fa3", "aiter", "triton")),
            Allowed(Version("0.5.1"), ("fa3", "aiter")),
            Allowed(Version("0"), ("fa3",)),
        ),
        fix=SM100_SM90_DEFAULT,
        named_until=LLAMA4_DEFAULT_FROM,
    ),
    ModelBackends(
        id="model-gemma4-backends",
        title="Gemma 4 needs trtllm_mha, triton or fa4",
        versions="sglang>=0.5.13",
        stage="startup",
        prevents="Gemma4 only supports trtllm_mha, triton, fa4, ascend, intel_xpu, intel_amx, or aiter attention backend, "
        "got prefill={prefill}, decode={decode}",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (Gemma4 branch); {OVERRIDES_DIR}/gemma4.py",
        docs="""Checks that a Gemma 4 model (Gemma4ForConditionalGeneration, Gemma4ForCausalLM,
Gemma4UnifiedForConditionalGeneration) is served, for prefill and decode, by trtllm_mha, triton or fa4 (or
the non-NVIDIA ascend, intel_xpu, intel_amx, aiter).

Gemma 4 mixes sliding and global layers with different head dims; SGLang asserts this list at start-up.
History: fa4 was added in 0.5.22, aiter in 0.5.20, intel_amx in 0.5.18, ascend in 0.5.14; 0.5.13 allowed only
trtllm_mha, triton, intel_xpu. fa3 and flashinfer were never allowed. SGLang's default is trtllm_mha on
SM100 and triton elsewhere.""",
        fix_title="Use --attention-backend trtllm_mha (SM100) or triton",
        family="Gemma 4",
        models=frozenset(
            {"Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration"}
        ),
        allowed=(
            Allowed(Version("0.5.22"), ("trtllm_mha", "triton", "fa4", "ascend", "intel_xpu", "intel_amx", "aiter")),
            Allowed(Version("0.5.20"), ("trtllm_mha", "triton", "ascend", "intel_xpu", "intel_amx", "aiter")),
            Allowed(Version("0.5.18"), ("trtllm_mha", "triton", "ascend", "intel_xpu", "intel_amx")),
            Allowed(Version("0.5.14"), ("trtllm_mha", "triton", "ascend", "intel_xpu")),
            Allowed(Version("0"), ("trtllm_mha", "triton", "intel_xpu")),
        ),
        fix=((10, "trtllm_mha"),),
    ),
    ModelBackends(
        id="model-exaone-swa-backends",
        title="EXAONE 4 (sliding window) needs fa3, triton or trtllm_mha",
        versions="sglang>=0.5.9",
        stage="startup",
        prevents="One of the attention backends in ['fa3', 'triton', 'trtllm_mha'] is required for {model_arch}, "
        "but got {backend}",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (Exaone branch); {OVERRIDES_DIR}/exaone.py",
        docs="""Checks that an EXAONE 4 / EXAONE MoE model is served by fa3, triton or trtllm_mha.

SGLang applies this when the config's `sliding_window_pattern` is set, which transformers 5.19 (the release
sglang 0.5.23 pins) always does for these configs: 4 by default, 0 without a window. Its hybrid
sliding-window layers are only implemented by those backends (SGLang also disables hybrid-SWA
memory for it). SGLang's default is trtllm_mha on SM100 and fa3 on any other GPU of SM80 or newer, which
fa3's own arch check then refuses on SM110/SM120 (rule fa3-arch): pass triton there. Before sglang 0.5.15 the
assert runs before SGLang picks its default, so the flag must be given.""",
        fix_title="Use --attention-backend fa3 (SM8x/SM90), trtllm_mha (SM100) or triton",
        family="EXAONE 4 / EXAONE MoE",
        models=EXAONE_ARCHITECTURES,
        allowed=(Allowed(Version("0"), ("fa3", "triton", "trtllm_mha")),),
        fix=SWA_DEFAULT,
        # from 0.5.15 the assert reads the resolved backend; before, the flag as given, checked before SGLang's default
        named_until=Version("0.5.15"),
    ),
    ModelBackends(
        id="model-olmo-flashinfer",
        title="OLMo 2/3 must not use FlashInfer",
        versions="sglang>=0.5.4",
        stage="startup",
        prevents="FlashInfer backend can significantly degrade the performance of Olmo3 models.",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (Olmo2ForCausalLM branch); "
        "configs/olmo3.py (Olmo3ForCausalLM is served as Olmo2ForCausalLM)",
        docs="""Checks that an OLMo 2 / OLMo 3 model (Olmo2ForCausalLM; SGLang maps Olmo3ForCausalLM configs onto it)
is not served by flashinfer.

OLMo 3 uses sliding-window attention, on which FlashInfer degrades it; SGLang asserts against flashinfer
for the whole architecture at start-up. Its default is trtllm_mha on SM100, fa3 on other SM80+ GPUs,
triton elsewhere.""",
        fix_title="Use --attention-backend fa3 (SM8x/SM90), trtllm_mha (SM100) or triton",
        family="OLMo 2 / OLMo 3",
        models=OLMO_ARCHITECTURES,
        allowed=(Allowed(Version("0"), ("flashinfer",)),),
        refused=True,
        fix=SWA_DEFAULT,
    ),
    ModelBackends(
        id="model-lfm2-triton",
        title="LFM2 must not use the triton backend",
        versions="sglang>=0.5.9",
        stage="startup",
        prevents="{model_arch} does not support triton attention backend, as the first layer might not be an attention "
        "layer",
        source=f"{MODEL_HOOK}, handle_model_specific_adjustments (Lfm2 branch); {OVERRIDES_DIR}/lfm2.py",
        docs="""Checks that an LFM2 / LFM2-MoE model (Lfm2ForCausalLM, Lfm2MoeForCausalLM) is not served by triton.

LFM2 interleaves short-convolution layers with attention, and its first layer may be a convolution;
SGLang's triton backend sizes its buffers from the first layer, so SGLang asserts against it at start-up.
SGLang's default is flashinfer on SM100 and the generic choice (fa3 on SM90, flashinfer elsewhere) otherwise.""",
        fix_title="Use --attention-backend flashinfer (or fa3 on SM90)",
        family="LFM2 / LFM2-MoE",
        models=LFM2_ARCHITECTURES,
        allowed=(Allowed(Version("0"), ("triton",)),),
        refused=True,
        fix=((9, "fa3"),),
        fix_elsewhere="flashinfer",
        asserted_since=(("Lfm2MoeForCausalLM", Version("0.5.17")),),
    ),
    ModelBackends(
        id="model-inkling-backends",
        title="Inkling runs only on fa4 or triton",
        versions="sglang>=0.5.16",
        stage="runtime",
        prevents='assert attention_backend in ("fa4", "triton")',
        source="sglang: python/sglang/srt/models/inkling_common/attn.py, InklingAttention.forward; "
        f"{OVERRIDES_DIR}/inkling.py",
        docs="""Checks that an Inkling model is served by fa4 or triton, for prefill and decode.

Inkling's relative attention is a sheared bias (rel_bias) or a CuTe score_mod that only the FA4 kernels
and SGLang's triton path implement; its attention layer asserts the backend at the first forward (a bare
assert, after weights load; in every release from 0.5.16, where the model appears). SGLang's default is fa4 on SM90/SM100 and triton elsewhere; the FA4 path has
its own arch limits (rules fa4-score-mod-sm8x, fa4-rel-bias-arch).""",
        fix_title="Use --attention-backend fa4 (SM90/SM100) or triton",
        family="Inkling",
        models=INKLING_ARCHITECTURES,
        allowed=(Allowed(Version("0"), ("fa4", "triton")),),
        fix=((9, "fa4"), (10, "fa4")),
    ),
    ModelBackends(
        id="model-moss-vl-prefill",
        title="Moss-VL needs FlashInfer for prefill",
        versions="sglang>=0.5.11",
        stage="startup",
        prevents="MossVLForConditionalGeneration requires flashinfer prefill attention backend for cross-attention "
        "custom mask support.",
        source=f"{OVERRIDES_DIR}/moss_vl.py, _moss_vl_overrides",
        docs="""Checks that a Moss-VL model (MossVLForConditionalGeneration) prefills with flashinfer.

Its cross-attention prefill needs a custom attention mask, which only FlashInfer's prefill takes. SGLang
sets prefill to flashinfer when no backend flag is given and asserts it otherwise.""",
        fix_title="Use --prefill-attention-backend flashinfer",
        family="Moss-VL",
        models=frozenset({"MossVLForConditionalGeneration"}),
        allowed=(Allowed(Version("0"), ("flashinfer",)),),
        fix_elsewhere="flashinfer",
        prefill_only=True,
    ),
    ModelBackends(
        id="model-hybrid-gdn-blackwell",
        title="Hybrid GDN models (Qwen3-Next, Qwen3.5) on Blackwell need triton, trtllm_mha, fa4 or flashinfer",
        versions="sglang>=0.5.3",
        stage="init",
        prevents="Only {allowed} backends are supported on Blackwell GPUs for hybrid GDN models. "
        "Got prefill={prefill}, decode={decode}.",
        source=f"{REGISTRY}, attn_backend_wrapper (HYBRID_GDN_SM100_BACKENDS); configs/hybrid_arch.py hybrid_gdn_config",
        docs="""Checks the full-attention backend of a hybrid Gated-DeltaNet model (Qwen3-Next, Qwen3.5, Qwen3.5-MoE,
Intern-S2-Preview, Jet-Nemotron) on a Blackwell-class GPU (compute capability 10.x, 11.x or 12.x).

SGLang wraps the full-attention backend with its GDN linear-attention backend and, on Blackwell, allows
only a few full-attention backends. sglang 0.5.23: SM100/SM103/SM110 allow triton, trtllm_mha, fa4,
flashinfer; SM120/SM121 allow triton, trtllm_mha, flashinfer. History: 0.5.16-0.5.20 dropped flashinfer on
SM100; 0.5.10-0.5.15 allowed triton, trtllm_mha, fa4, flashinfer on every Blackwell; 0.5.5.post3-0.5.9 triton
or trtllm_mha; 0.5.3.post3-0.5.5 triton only; 0.5.3 (the first with the check) triton or trtllm_mha. The check runs when the model runner builds the backend, after the
weights have loaded. SM12x counts as Blackwell only from 0.5.4.post3 and SM110 from 0.5.9 (is_blackwell:
major 10 through 0.5.4, then 10 and 12, then 10, 11 and 12).""",
        fix_title="Use --attention-backend triton (or trtllm_mha)",
        family="hybrid GDN models (Qwen3-Next, Qwen3.5, ...)",
        models=HYBRID_GDN_MODEL_TYPES,
        by_model_type=True,
        blackwell_only=True,
        allowed=(
            Allowed(Version("0.5.16"), ("triton", "trtllm_mha", "flashinfer"), majors=(12,)),
            Allowed(Version("0.5.21"), ("triton", "trtllm_mha", "fa4", "flashinfer")),
            Allowed(Version("0.5.16"), ("triton", "trtllm_mha", "fa4")),
            Allowed(Version("0.5.10"), ("triton", "trtllm_mha", "fa4", "flashinfer")),
            Allowed(Version("0.5.5.post3"), ("triton", "trtllm_mha")),
            Allowed(Version("0.5.3.post3"), ("triton",)),
            Allowed(Version("0"), ("triton", "trtllm_mha")),
        ),
    ),
)


def judge(row: ModelBackends, cfg: Config, target: Target) -> Outcome:
    """The one check of every row: skip another model, else fail on a backend outside the row's list."""
    assert cfg.model is not None, "needs_model"
    model = (cfg.model.model_type if row.by_model_type else cfg.model.architecture) or ""
    if model not in row.models:
        return skipped(f"applies to {row.family}")
    release = sglang_release(target)
    since = dict(row.asserted_since).get(model)
    if since is not None and release < since:
        return skipped(f"SGLang asserts this for {model} from sglang {since}")
    if row.blackwell_only:
        if target.major is None:
            return unknown("compute capability unknown")
        if target.major not in blackwell_majors(target):
            return skipped(f"applies on Blackwell GPUs ({gpu(target)} is not one for sglang {release})")
    listed = next(a.backends for a in row.allowed if release >= a.since and (not a.majors or target.major in a.majors))
    backend = dict(row.fix).get(target.major or 0, row.fix_elsewhere)
    if not row.refused and backend not in listed:
        backend = listed[0]
    option = "--prefill-attention-backend" if row.prefill_only else "--attention-backend"
    fix = [f"{option} {backend}"]
    required = ("any backend but " if row.refused else "one of ") + ", ".join(listed)
    if cfg.auto_backend and release < row.named_until:
        return failed(
            f"{row.family} without {option} on sglang {release} (its assert reads the flag as given)", required, fix
        )
    phases = (cfg.prefill_backend,) if row.prefill_only else (cfg.prefill_backend, cfg.decode_backend)
    used = {backend for backend in phases if backend}
    if not used:
        return unknown("no attention backend chosen and none can be derived for this target")
    bad = sorted(b for b in used if (b in listed) == row.refused)
    if not bad:
        return passed(cfg.backend_label() + (" (auto-selected)" if cfg.auto_backend else ""), required)
    return failed(
        f"{row.family} on {', '.join(bad)}" + (f" on {gpu(target)}" if row.blackwell_only else ""), required, fix
    )


def model_backend_rules(module: str, rows: Sequence[ModelBackends]) -> None:
    """Registers each row as the rule of its id, judged by `judge`, reported under `module`'s subject."""
    for row in rows:

        def check(cfg: Config, target: Target, row: ModelBackends = row) -> Outcome:
            return judge(row, cfg, target)

        generated_rule(module, row, check, engine="sglang", needs_model=True)


model_backend_rules(__name__, ROWS)


# --- Flag constraints of single model families (rows judged by the constraint evaluator) -------------------------

INF = float("inf")
FA_BACKEND = "sglang: python/sglang/srt/layers/attention/flashattention_backend.py"
DCP = Not(Range("dcp_size", -INF, 1))  # --dcp-size above 1
DP_ATTENTION = Resolved(attention_dp_on, "DP attention")
# the fix that turns DP attention off, where a flag value can (a store-true flag cannot be unset), then the refusal
NO_DP_ATTENTION = (
    Requirement(Not(All((DP_ATTENTION, Flag("attn_dp_size")))), ("--attn-dp-size 1",)),
    Requirement(Not(All((DP_ATTENTION, Flag("dp_size"), Flag("enable_dp_attention")))), ("--dp-size 1",)),
    Requirement(Not(DP_ATTENTION)),
)
AUTO_BACKEND = Not(Flag("auto_backend", ("",)))  # the reason SGLang picked the backend, "" when one was named
NAMED_BACKENDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
IQUEST_Q1 = Model(architectures=tuple(sorted(backend_kb.IQUEST_Q1_ARCHITECTURES)))
ATTN_CP = Not(Range("attn_cp_size", -INF, 1))
MINICPM_SPARSE_BACKENDS = ("minicpm_flashattn", "minicpm_flashinfer")
MINICPM_FORCE_DENSE = EnvTrue("SGLANG_MINICPM_FORCE_DENSE")
MINICPM_SALA = AnyOf((ModelField("minicpm_sparse_attention"), ModelField("minicpm_lightning_layers")))
# no backend named (SGLang's default is the sparse one), or a sparse backend among those named
MINICPM_ON_SPARSE = AnyOf(
    (
        AUTO_BACKEND,
        Not(AnyOf(tuple(Flag(name) for name in NAMED_BACKENDS))),
        *(Flag(name, MINICPM_SPARSE_BACKENDS) for name in NAMED_BACKENDS),
    )
)
KIMI_K3 = Model(architectures=(backend_kb.KIMI_K3_ARCHITECTURE,))


def kimi_k3_decode_in(backends: tuple[str, ...]) -> AnyOf:
    """No decode backend given (or SGLang picks it), or the one given (--decode-attention-backend, else
    --attention-backend) is one of `backends`."""
    inherited = All((Not(Flag("decode_attention_backend")), unset_or("attention_backend", *backends)))
    return AnyOf((AUTO_BACKEND, Flag("decode_attention_backend", backends), inherited))


QSA_FP8 = All((Flag("qsa_indexer_dtype", ("fp8_e4m3",)), Since("0.5.22")))  # the flag is new in 0.5.22
M3_NVFP4 = Resolved(minimax_m3_nvfp4, "MiniMax-M3.1 NVFP4 (--quantization minimax_m3_nvfp4)")
PAGE_1 = Resolved(effective_page_size, "page size 1 (as SGLang settles it)", (1,))
PAGE_NAMED = All((Flag("page_size"), Not(Flag("page_size", (1,)))))

CONSTRAINTS = (
    Constraint(
        id="model-llama4-chunk-size",
        title="Llama 4 on fa3/fa4 needs attention_chunk_size in its config",
        versions="sglang>=0.5.8",
        backends=("fa3", "fa4"),
        needs_model=True,
        stage="init",
        prevents="Attention chunk size is required for local attention",
        source=f"{FA_BACKEND}, FlashAttentionBackend._maybe_init_local_attn_builder; "
        "configs/model_config.py is_local_attention_model",
        docs="""Checks that a Llama4ForConditionalGeneration config served by fa3 or fa4 carries
`attention_chunk_size` (in its text_config).

SGLang treats Llama4ForConditionalGeneration as a local-attention model; the FlashAttention backend builds
its chunked-attention metadata from `attention_chunk_size` and asserts it is set. A converted or trimmed
config without the field fails when the backend is constructed, after the weights have loaded.""",
        fix_title="Restore attention_chunk_size (8192 for Llama 4 Scout/Maverick) in text_config, or use triton",
        when=Model(architectures=("Llama4ForConditionalGeneration",)),
        requires=ModelField("attention_chunk_size"),
        fix=("--attention-backend triton",),
    ),
    Constraint(
        id="model-fa-swa-cross-attention",
        title="fa3, fa4, flashinfer and triton cannot serve sliding window together with cross attention",
        versions="sglang>=0.5.1",
        backends=("fa3", "fa4", "flashinfer", "triton"),
        stage="init",
        prevents="Sliding window and cross attention are not supported together",
        source=f"{FA_BACKEND}, FlashAttentionBackend.__init__; flashinfer_backend.py and triton_backend.py, __init__",
        docs="""Checks that a model with both cross attention and sliding-window layers is not served by fa3, fa4,
flashinfer or triton.

SGLang's FlashAttention (fa3 and fa4), FlashInfer and Triton backends each assert at construction that a
model is not both encoder-decoder and sliding-window (SGLang derives the window from the model, or from
Llama 4's attention_chunk_size). torch_native has no such assert and handles both (torch_native_backend.py
:293-330 in sglang 0.5.23), so it is the backend left.""",
        fix_title="Use --attention-backend torch_native",
        when=Feature("cross_attention"),
        requires=Not(AnyOf((Feature("sliding_window"), Feature("chunked_local")))),
        fix=("--attention-backend torch_native",),
    ),
    Constraint(
        id="model-iquest-q1-fa3",
        title="IQuestQ1 runs on fa3 only, its MTP draft too, with EAGLE top-k 1",
        versions="sglang>=0.5.21",
        needs_model=True,
        stage="startup",
        prevents="IQuestQ1 applies its attention sink from the softmax LSE and requires FA3 attention for both "
        "prefill and decode.",
        source=f"{OVERRIDES_DIR}/iquest_q1.py, _iquest_q1_overrides",
        docs="""Checks an IQuestQ1 model (IQuestQ1ForCausalLM, its IQuestQ1MTP draft): every named attention backend is
fa3, the MTP draft's too, and EAGLE top-k is 1.

SGLang's override refuses anything else at start-up (iquest_q1.py:13-35 in sglang 0.5.23: "requires FA3 attention
for both prefill and decode", "requires FA3 attention for the MTP draft", "requires --speculative-eagle-topk 1")
and sets fa3 itself where no backend is named, so the model needs a GPU fa3 runs on (SM90, or SM8x).""",
        fix_title="Use --attention-backend fa3 (on SM90)",
        when=IQUEST_Q1,
        requires=All(
            (
                *(unset_or(name, "fa3") for name in (*NAMED_BACKENDS, "draft_attention_backend")),
                Range("speculative_eagle_topk", -INF, 1),
            )
        ),
        fix=("--attention-backend fa3",),
    ),
    Constraint(
        id="model-iquest-q1-parallel",
        title="IQuestQ1 drafts with serial EAGLE / NEXTN only and takes no context, DP-attention or pipeline "
        "parallelism",
        versions="sglang>=0.5.21",
        needs_model=True,
        stage="startup",
        prevents="IQuest Q1 MTP requires serial EAGLE or NEXTN drafting.; IQuestQ1 does not support context "
        "parallelism.; IQuest Q1 MTP drafting does not support multi-layer EAGLE.; IQuest Q1 does not support DP "
        "attention.; IQuest Q1 does not support pipeline parallelism.",
        source=f"{OVERRIDES_DIR}/iquest_q1.py, _iquest_q1_overrides",
        docs="""Checks an IQuestQ1 model (IQuestQ1ForCausalLM, its IQuestQ1MTP draft) for what its override refuses
beside the backend (model-iquest-q1-fa3): a speculative algorithm other than EAGLE or NEXTN, context parallelism
(`--attn-cp-size` or `--dcp-size` above 1, `--enable-prefill-cp`), `--enable-multi-layer-eagle`, DP attention
(`--attn-dp-size` above 1; until 0.5.21 `--enable-dp-attention`) and `--pp-size` above 1.

SGLang's IQuestQ1 override raises each of these at start-up (iquest_q1.py:24-40 in sglang 0.5.23), after the
backend checks; the MTP draft is a single-layer serial head (`--speculative-eagle-topk 1`, model-iquest-q1-fa3).""",
        fix_title="Serve IQuestQ1 on plain TP: EAGLE drafting, no CP, DP attention or PP",
        when=IQUEST_Q1,
        first_only=True,
        requires=(
            Requirement(
                Speculative(("NONE", "EAGLE", "NEXTN")),
                ("--speculative-algorithm EAGLE",),
            ),
            Requirement(Not(Flag("enable_prefill_cp"))),  # a store-true flag, which no flag of a fix turns off
            Requirement(Not(All((ATTN_CP, DCP))), ("--attn-cp-size 1 --dcp-size 1",)),
            Requirement(Not(ATTN_CP), ("--attn-cp-size 1",)),
            Requirement(Not(DCP), ("--dcp-size 1",)),
            Requirement(Not(Flag("enable_multi_layer_eagle"))),
            *NO_DP_ATTENTION,
            Requirement(Range("pp_size", -INF, 1), ("--pp-size 1",)),
        ),
    ),
    Constraint(
        id="model-ernie45-vl-dp-attention",
        title="ERNIE 4.5 VL MoE takes no DP attention",
        versions="sglang>=0.5.22",
        needs_model=True,
        stage="startup",
        prevents="ERNIE 4.5 VL MoE does not support DP attention: its attention heads are split over the full TP "
        "group.",
        source=f"{OVERRIDES_DIR}/ernie45_vl.py, _ernie45_vl_overrides",
        docs="""Checks that an ERNIE 4.5 VL MoE model (Ernie4_5_VLMoeForConditionalGeneration) runs without DP attention
(`--attn-dp-size` 1, or `--dp-size N --enable-dp-attention`, which SGLang reads as `--attn-dp-size N`).

The model splits its attention heads over the whole TP group, not over an attention-TP subgroup, so SGLang
refuses attention DP at start-up (ernie45_vl.py:14-18 in sglang 0.5.22 and 0.5.23; no such check before 0.5.22).""",
        fix_title="Use --attn-dp-size 1 (plain TP)",
        when=Model(architectures=("Ernie4_5_VLMoeForConditionalGeneration",)),
        first_only=True,
        requires=NO_DP_ATTENTION,
    ),
    Constraint(
        id="model-minicpm-serving",
        title="MiniCPM takes no DP attention; MiniCPM-SALA no HiCache, and its sparse attention no PD disaggregation",
        versions="sglang>=0.5.19",
        needs_model=True,
        stage="startup",
        prevents="MiniCPM does not support DP attention; MiniCPM SALA does not support hierarchical cache; MiniCPM "
        "sparse attention does not support PD disaggregation",
        source=f"{OVERRIDES_DIR}/minicpm.py, _minicpm_sala_overrides",
        docs="""Checks a MiniCPM model (MiniCPMForCausalLM, MiniCPMSALAForCausalLM): no DP attention; for MiniCPM-SALA
(model_type minicpm_sala) with sparse-attention or lightning layers, no `--enable-hierarchical-cache`; with
sparse attention on its sparse backend (no backend named, or minicpm_flashattn / minicpm_flashinfer), no
`--disaggregation-mode` prefill or decode unless `SGLANG_MINICPM_FORCE_DENSE` is set.

SGLang's MiniCPM override raises each at start-up (minicpm.py:17-56 in sglang 0.5.23). MiniCPM-SALA's layers are
sparse (sparse_config on minicpm4 mixers) or lightning (linear) attention, read from config.json mixer_types as
sglang's MiniCPMHybridConfig reads them; SGLang also turns the radix cache off for them. SGLANG_MINICPM_FORCE_DENSE
turns the sparse backends into dense ones (fa3 / fa4, flashinfer) and lifts the PD refusal; it changes the model's
attention, so it is not offered as a fix.""",
        fix_title="Use --attn-dp-size 1, drop --enable-hierarchical-cache; serve MiniCPM-SALA's sparse attention "
        "colocated",
        when=Model(architectures=("MiniCPMForCausalLM", "MiniCPMSALAForCausalLM")),
        first_only=True,
        requires=(
            *NO_DP_ATTENTION,
            Requirement(Not(All((MINICPM_SALA, Flag("enable_hierarchical_cache"))))),
            Requirement(
                Not(
                    All(
                        (
                            ModelField("minicpm_sparse_attention"),
                            Not(MINICPM_FORCE_DENSE),
                            MINICPM_ON_SPARSE,
                            Not(unset_or("disaggregation_mode", "null")),
                        )
                    )
                )
            ),
        ),
    ),
    Constraint(
        id="model-kimi-k3-dcp",
        title="Kimi-K3 with decode context parallelism decodes on cutedsl_mla only",
        versions="sglang>=0.5.17",
        needs_model=True,
        stage="startup",
        prevents="Decode attention backend for Kimi-K3 DCP must be 'cutedsl_mla' or 'aiter', got {decode_backend!r}.",
        source=backend_kb.KIMI_K3_DCP_SOURCE,
        docs="""Checks that Kimi-K3 (KimiK3ForConditionalGeneration) with `--dcp-size` > 1 is given no decode backend,
or cutedsl_mla (tokenspeed_mla through 0.5.22; aiter on ROCm).

Kimi-K3's override then sets prefill trtllm_mla and decode cutedsl_mla itself, whatever prefill backend
was named (cutedsl_mla's decode kernel implements the DCP signature); any other decode backend, including
one inherited from `--attention-backend`, is an AssertionError at start-up. (attn-preflight judges the
other rules on the backends as given, not on that pair.)""",
        fix_title="Pass --decode-attention-backend cutedsl_mla (or name no backend)",
        when=All((KIMI_K3, DCP)),
        requires=AnyOf(
            (
                kimi_k3_decode_in(backend_kb.KIMI_K3_DCP_DECODE_BACKENDS),
                All(
                    (
                        Not(Since(str(backend_kb.TOKENSPEED_MLA_ALIAS_FROM))),
                        kimi_k3_decode_in((*backend_kb.KIMI_K3_DCP_DECODE_BACKENDS, "tokenspeed_mla")),
                    )
                ),
            )
        ),
        fix=("--decode-attention-backend cutedsl_mla",),
    ),
    Constraint(
        id="model-kimi-k3-dcp-dspark",
        title="Kimi-K3 DCP with DSPARK needs SGLANG_RAGGED_VERIFY_MODE=static",
        versions="sglang>=0.5.17",
        needs_model=True,
        stage="startup",
        prevents="Kimi-K3 DCP + DSPARK currently requires SGLANG_RAGGED_VERIFY_MODE=static; compact/cap-accept are "
        "not validated under DCP (got {mode!r}).",
        source=f"{backend_kb.KIMI_K3_DCP_SOURCE}; sglang: python/sglang/srt/speculative/ragged_verify.py, "
        "read_ragged_verify_mode",
        docs="""Checks that Kimi-K3 with `--dcp-size` > 1 and `--speculative-algorithm DSPARK` keeps
SGLANG_RAGGED_VERIFY_MODE at static (its default).

The compact and cap-accept ragged-verify modes are not validated under decode context parallelism, so Kimi-K3's
override refuses them at start-up (and routes DSPARK's verify to the decode backend).""",
        fix_title="Unset SGLANG_RAGGED_VERIFY_MODE (or set it to static)",
        when=All((KIMI_K3, DCP, Speculative(("DSPARK",)))),
        requires=AnyOf((Not(Env(RAGGED_VERIFY_ENV)), Env(RAGGED_VERIFY_ENV, ("static",)))),
        fix=(f"{RAGGED_VERIFY_ENV}=static",),
    ),
    Constraint(
        id="model-prefill-aware-swa-page",
        title="Unlimited-OCR on fa3/fa4 (prefill-aware sliding window) needs page size 1 and no unified memory",
        versions="sglang>=0.5.15",
        needs_model=True,
        backends=("fa3", "fa4"),
        stage="init",
        prevents="Prefill-aware SWA requires page_size=1, got page_size={page_size}",
        source=f"{FA_BACKEND}, FlashAttentionBackend.__init__",
        docs="""Checks that Unlimited-OCR (UnlimitedOCRForCausalLM), whose sliding window keeps the prompt's tokens
during decode ("prefill-aware SWA"), runs fa3/fa4 with page size 1 (after SGLang's page-size snaps:
fa4 on SM100 forces 128) and, from 0.5.19, without `--enable-unified-memory`.

SGLang's FlashAttention backend builds the prefill-aware window's page table token by token; it asserts
both when the backend is constructed ("--enable-unified-memory does not support the prefill-aware SWA
decode mode; disable it for this model.").""",
        fix_title="Use --page-size 1 (fa3), or drop --enable-unified-memory",
        when=Model(architectures=tuple(sorted(backend_kb.PREFILL_AWARE_SWA_ARCHITECTURES))),
        first_only=True,
        # a page named other than 1 is fixed by naming 1; a page SGLang snapped to another size, by fa3
        requires=(
            Requirement(AnyOf((PAGE_1, Not(PAGE_NAMED))), ("--page-size 1",)),
            Requirement(AnyOf((PAGE_1, PAGE_NAMED)), ("--attention-backend fa3",)),
            Requirement(
                Not(All((Flag("enable_unified_memory"), Since(str(backend_kb.PREFILL_AWARE_SWA_UNIFIED_FROM))))),
                ("--enable-unified-memory false",),
            ),
        ),
    ),
    Constraint(
        id="model-qwen4-exp-serving",
        title="Qwen4-Exp: PD over MORI needs PP 1, no unified memory; an fp8 QSA indexer needs SM90 / SM100 and the "
        "compressed indexer",
        versions="sglang>=0.5.20",
        needs_model=True,
        stage="startup",
        prevents="Qwen4-Exp PD with MORI requires --pp-size 1; MORI does not yet exchange the global QSA layer "
        "metadata needed to pair compact state descriptors across pipeline stages.; Qwen4-Exp does not support "
        "--enable-unified-memory yet; --qsa-indexer-dtype fp8_e4m3 requires a CUDA SM90/SM100 GPU; "
        "--qsa-indexer-dtype fp8_e4m3 requires the compressed QSA indexer",
        source=f"{OVERRIDES_DIR}/qwen4_exp.py, _qwen4_exp_overrides",
        docs="""Checks a Qwen4-Exp model (Qwen4ExpForConditionalGeneration): PD disaggregation over
`--disaggregation-transfer-backend mori` runs with `--pp-size 1`; no `--enable-unified-memory`; and
`--qsa-indexer-dtype fp8_e4m3` (sglang 0.5.22+) runs on an SM90 or SM100-class GPU (compute capability 9.x or
10.x) with a checkpoint whose text config has the compressed QSA indexer (`indexer_n_heads`).

MORI does not exchange the QSA layer metadata across pipeline stages, unified memory is not wired for QSA, and
the fp8 indexer scores blocks with TileLang fp8 GEMMs validated on Hopper and Blackwell only: SGLang's override
raises each at start-up (qwen4_exp.py:28-88 in sglang 0.5.23). SGLang's platform test also wants a torch built
for CUDA 12.3 (SM90) or 12.8 (SM100), which the install rules judge.""",
        fix_title="Use --pp-size 1 with MORI, drop --enable-unified-memory, --qsa-indexer-dtype bfloat16 elsewhere",
        when=Model(architectures=("Qwen4ExpForConditionalGeneration",)),
        first_only=True,
        requires=(
            Requirement(
                Not(
                    All(
                        (
                            Not(unset_or("disaggregation_mode", "null")),
                            Flag("disaggregation_transfer_backend", ("mori",)),
                            Not(Range("pp_size", -INF, 1)),
                        )
                    )
                ),
                ("--pp-size 1",),
            ),
            Requirement(Not(Flag("enable_unified_memory"))),
            # get_platform().is_sm90 / is_sm100: majors 9 and 10; the GPU is judged before the checkpoint
            Requirement(AnyOf((Not(QSA_FP8), Arch((9, 10)))), ("--qsa-indexer-dtype bfloat16",)),
            Requirement(
                AnyOf((Not(QSA_FP8), ModelField("qsa_indexer"), Not(Capability((0, 0))))),
                ("--qsa-indexer-dtype bfloat16",),
            ),
        ),
    ),
    Constraint(
        id="model-minimax-m3-nvfp4",
        title="MiniMax-M3.1 NVFP4 needs page size 128, an fp8_e4m3 KV cache on Blackwell, and DSPARK/DFLASH "
        "speculation",
        versions="sglang>=0.5.23",
        needs_model=True,
        stage="startup",
        prevents="M3.1 NVFP4 requires --page-size 128",
        source=backend_kb.MINIMAX_M3_SOURCE,
        docs="""Checks a MiniMax-M3.1 NVFP4 launch (a MiniMaxM3Sparse architecture with `--quantization
minimax_m3_nvfp4`): `--page-size` 128 or none, on Blackwell `--kv-cache-dtype fp8_e4m3` or auto, and
`--speculative-algorithm` DSPARK, DFLASH or none.

SGLang's M3 override refuses each other value at start-up ("M3.1 NVFP4 requires --kv-cache-dtype
fp8_e4m3", "M3.1 NVFP4 only supports DSPARK or DFLASH speculation") and otherwise sets page size 128,
the fp8_e4m3 KV cache (Blackwell) and trtllm_mha (Blackwell) or fa3 where no backend is named: the rest
of the config is judged on those. A checkpoint whose own quantization_config makes it M3.1 NVFP4 is
recognised only with the --quantization flag (attn-preflight does not read that field).""",
        fix_title="Drop --page-size (or 128), use --kv-cache-dtype fp8_e4m3, DSPARK/DFLASH speculation",
        when=M3_NVFP4,
        first_only=True,
        requires=(
            Requirement(
                unset_or("page_size", backend_kb.MINIMAX_M3_NVFP4_PAGE),
                (f"--page-size {backend_kb.MINIMAX_M3_NVFP4_PAGE}",),
            ),
            Requirement(
                unset_or("speculative_algorithm", *backend_kb.MINIMAX_M3_NVFP4_SPECULATIVE),
                (f"--speculative-algorithm {backend_kb.MINIMAX_M3_NVFP4_SPECULATIVE[0]}",),
            ),
            Requirement(
                Not(
                    All(
                        (
                            Resolved(on_blackwell, "a Blackwell GPU"),
                            Not(Flag("kv_cache_dtype", (backend_kb.MINIMAX_M3_NVFP4_KV,))),
                        )
                    )
                ),
                (f"--kv-cache-dtype {backend_kb.MINIMAX_M3_NVFP4_KV}",),
            ),
        ),
    ),
)

constraint_rules(__name__, CONSTRAINTS)
