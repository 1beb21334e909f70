"""Model families SGLang serves only on some attention backends: one row per family, judged by one check.

A row names the architectures (config.json `architectures[0]`, or `model_type`), the backends each release range
allows (or refuses), and the backend its fix suggests per GPU generation; `model_backend_rules` registers one rule
per row with the row's id. Verified against the sglang wheels 0.5.0rc2 ... 0.5.23 (each row's `verified`); a row
follows the target's installed (or pinned) SGLang release, and the newest when it is unknown.
"""

from __future__ import annotations

from typing import Collection, NamedTuple, Sequence

from packaging.version import Version

from attn_preflight.rules.checks.common import blackwell_majors, gpu, sglang_release
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang.capabilities import INKLING_ARCHITECTURES, LLAMA4_DEFAULT_FROM
from attn_preflight.rules.engines.sglang.resolve import EXAONE_ARCHITECTURES, LFM2_ARCHITECTURES, OLMO_ARCHITECTURES

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
    verified: str
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
        verified=(
            "sglang 0.5.1-0.5.23, every release (bench/release_walk.py grep 'GptOssForCausalLM requires one of'): "
            "server_args.py asserts supported_backends, triton/trtllm_mha/fa3 in 0.5.1-0.5.3, + fa4 from "
            "0.5.3.post3, + ascend (0.5.8) and the other non-CUDA names later; arg_groups/model_hook.py:536 in "
            "0.5.23"
        ),
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
        verified=(
            "sglang 0.5.0rc2-0.5.23, every release (bench/release_walk.py grep 'is required for Llama4 model'): the "
            "list asserted on the Llama 4 branch of the model adjustments grows fa3 (0.5.0rc2 server_args.py:2166), "
            "+ aiter (0.5.1 :2279-2282), + triton (0.5.2 :2494-2498), + trtllm_mha (0.5.4.post3 :988-993), + "
            "intel_xpu (0.5.5.post3 :1028-1034), + ascend (0.5.10 :1851-1858; arg_groups/model_hook.py:630 in "
            "0.5.23); before 0.5.6 no default is picked first (0.5.5 :999-1005: the assert reads --attention-backend "
            "as given; sglang 0.5.5's own resolution rejects Llama 4 without a backend on every GPU), from 0.5.6 "
            "SGLang picks trtllm_mha / fa3 / triton itself (:1125-1139)"
        ),
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
        verified=(
            "sglang 0.5.13-0.5.23: the accepted_backends tuple asserted for the three Gemma 4 architectures, read "
            "in each release: trtllm_mha, triton, intel_xpu in 0.5.13 (server_args.py:2395-2400, the first release "
            "with the branch); + ascend from 0.5.14 (:4078-4083; 0.5.17 :5459-5464, its message still naming three); "
            "+ intel_amx from 0.5.18 (:5672-5683; arg_groups/model_hook.py:484-494 in 0.5.19); + aiter from 0.5.20 "
            "(model_hook.py:546-557, 0.5.21 :606-617); + fa4 from 0.5.22 (:640-652; 0.5.23 :646-658)"
        ),
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
        verified=(
            "sglang 0.5.9-0.5.23: the accepted list ['fa3', 'triton', 'trtllm_mha'] asserted when "
            "sliding_window_pattern is set, the block read in every wheel: on self.attention_backend in "
            "_handle_model_specific_adjustments in 0.5.9-0.5.14 (server_args.py:1496-1498 in 0.5.9, :4116 in 0.5.14), "
            "which runs before _handle_attention_backend_compatibility picks the default, so an omitted flag fails "
            "('but got None'); on resolved_view(...).attention_backend from 0.5.15 (server_args.py:4159 in 0.5.15, "
            ":5702 in 0.5.18; arg_groups/model_hook.py:513 in 0.5.19, :575 in 0.5.20, :680 in 0.5.23); "
            "ExaoneMoeForCausalLM is in the branch from 0.5.22 (:674); the branch is absent in 0.5.8"
        ),
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
        verified=(
            "sglang 0.5.4-0.5.23: the same assert attention_backend != flashinfer for Olmo3 in every release from "
            "the first with it (server_args.py in 0.5.4-0.5.14, arg_groups/model_hook.py:690 in 0.5.23; "
            "bench/release_walk.py grep)"
        ),
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
        verified=(
            "sglang 0.5.9-0.5.23: the assert != 'triton' in the LFM2 branch, read in every wheel: Lfm2ForCausalLM "
            "only in 0.5.9-0.5.16 (server_args.py:1662 in 0.5.9, :2414 in 0.5.12, :4270 in 0.5.14, :4207 in 0.5.15), "
            "+ Lfm2MoeForCausalLM from 0.5.17 (:5531; arg_groups/model_hook.py:551 in 0.5.19, :720 in 0.5.23); through "
            "0.5.14 it reads --attention-backend as given, before SGLang's default (a defaulted triton is not "
            "refused there; not modelled), from 0.5.15 the resolved backend; absent in 0.5.8"
        ),
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
        verified=(
            "sglang 0.5.16-0.5.23: InklingAttention.forward asserts the backend in ('fa4', 'triton') in every release "
            "with the model (models/inkling_common/attn.py, absent before 0.5.16): on server_args.attention_backend in "
            "0.5.16 (:723) and 0.5.17 (:730), on the backend serving the batch (serving_attention_backend) from 0.5.18 "
            "(:770 through 0.5.21, :744 in 0.5.22-0.5.23); the rule judges both phases, which is what the later form "
            "asserts"
        ),
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
        verified=(
            "sglang 0.5.11-0.5.23: the same logic in every wheel (the block read in each): no backend given -> "
            "prefill flashinfer, then assert the prefill backend is flashinfer; in _handle_model_specific_adjustments "
            "in 0.5.11-0.5.14 (server_args.py:2099 in 0.5.11, :4103 in 0.5.14), _moss_vl_overrides from 0.5.15 "
            "(arg_groups/overrides.py:644 in 0.5.15, :1098 in 0.5.18; arg_groups/model_overrides/moss_vl.py:31 in "
            "0.5.19, :28 in 0.5.21-0.5.23); absent in 0.5.10.post1"
        ),
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
        verified=(
            "sglang 0.5.3-0.5.23, every release (bench/release_walk.py grep 'on Blackwell GPUs for hybrid GDN'): "
            "attention_registry.py attn_backend_wrapper asserts the allowed list from 0.5.3 (:181-188): triton or "
            "trtllm_mha in 0.5.3, triton only in 0.5.3.post3-0.5.5, triton or trtllm_mha from 0.5.5.post3, + fa4 "
            "and flashinfer from 0.5.10, flashinfer off SM100 in 0.5.16-0.5.20, SM12x without fa4 from 0.5.16 "
            "(0.5.23 :460-476); none in 0.5.1/0.5.2"
        ),
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

        check.__module__ = module
        rule(
            id=row.id,
            title=row.title,
            engine="sglang",
            versions=row.versions,
            verified=row.verified,
            source=row.source,
            docs=row.docs,
            fix_title=row.fix_title,
            prevents=row.prevents,
            needs_model=True,
            stage=row.stage,
            generated=True,
        )(check)


model_backend_rules(__name__, ROWS)
