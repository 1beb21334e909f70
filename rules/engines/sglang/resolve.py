"""What the engine will actually run: its default backend, its silent rewrites, its effective page size.

Rules judge the resolved config, so a config without `--attention-backend` is judged on the backend SGLang
would pick, and a rewrite SGLang makes (fa3 + fp8_e5m2 -> triton) is judged as rewritten and reported as a
warning. SGLang 0.5.23 sources: python/sglang/srt/arg_groups/overrides.py (`_deterministic_attention_backend`,
`_attention_backend_default`, `_attention_backend_fa3_fp8_fallback`, `_mla_backend_page_constraints`,
`_cutedsl_prefill_backend_fill`, `_fa4_page_constraint`, `_page_size_default`, `_hrm_text_attention_force`,
`_dllm_attention_backend`), arg_groups/model_overrides/*.py, and arg_groups/model_override_base.py
`get_default_attn_backend`. Platform probes test the compute-capability major only (utils/common.py
`_check_cuda_device_version`): SM103 resolves like SM100, SM121 like SM120.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from packaging.version import InvalidVersion, Version

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.sglang import capabilities as kb
from attn_preflight.rules.knowledge import NEWEST_KNOWN
from attn_preflight.rules.knowledge import dsa as dsa_kb

SOURCE = "sglang: python/sglang/srt/arg_groups/model_override_base.py, get_default_attn_backend"
DETERMINISTIC_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _deterministic_attention_backend"
HRM_TEXT_SOURCE = "sglang: python/sglang/srt/arg_groups/overrides.py, _hrm_text_attention_force"
DSA_ARCHITECTURES = frozenset({"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})
QWEN_HYBRID_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "InternS2MobiusForConditionalGeneration",
    }
)
EXAONE_ARCHITECTURES = frozenset({"Exaone4ForCausalLM", "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"})
# sglang's configs/olmo3.py serves Olmo3ForCausalLM configs as Olmo2ForCausalLM.
OLMO_ARCHITECTURES = frozenset({"Olmo2ForCausalLM", "Olmo3ForCausalLM"})
LFM2_ARCHITECTURES = frozenset({"Lfm2ForCausalLM", "Lfm2MoeForCausalLM"})


# _auto_choose_speculative_params: (steps, topk, draft tokens) = (5, 4, 8) for these when nothing is given.
AUTO_TOPK_4 = frozenset({"LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"})


def eagle_topk(config: Config) -> int:
    """The draft-tree top-k SGLang settles on for the EAGLE family (its auto choice when none is given)."""
    if config.speculative_eagle_topk is not None:
        return config.speculative_eagle_topk
    algorithm = (config.speculative_algorithm or "").upper()
    if algorithm == "STANDALONE" or config.flags.get("speculative_num_steps") is not None:
        return 1
    architecture = config.model.architecture if config.model else None
    return 4 if architecture in AUTO_TOPK_4 else 1


def _topk_one(config: Config) -> bool:
    """utils/common.py is_no_spec_infer_or_topk_one: no top-k given, or top-k 1 on page size 1."""
    topk = config.speculative_eagle_topk
    return topk is None or (topk == 1 and config.page_size in (None, 1))


def _sm80_swa_default(target: Target) -> str:
    """exaone.py / olmo2.py: trtllm_mha on SM100, fa3 on any other GPU of device_sm >= 80 (SM110/SM12x too,
    where fa3 then refuses to start), triton below."""
    if target.major == 10:
        return "trtllm_mha"
    return "fa3" if (target.arch or 0) >= 80 else "triton"


def _model_overrides(config: Config, target: Target) -> dict[str, Any]:
    """The backend fields an architecture's override declares (arg_groups/model_overrides/*.py), as SGLang
    applies them before its deterministic fallback and generic default; {} when none applies.

    DeepSeek-V4's replaces --attention-backend and --page-size whatever they are. Some overrides act only when no
    backend flag is given (is_attention_backend_not_set: DeepSeek, GPT-OSS, Inkling, Moss-VL); the others whenever
    --attention-backend is unset, so a named phase keeps its backend and the override fills the other one."""
    arch = config.model.architecture if config.model else None
    if not arch:
        return {}
    major = target.major or 0  # 0: no GPU, which no override names
    none_set = not config.backend_given
    if arch == dsa_kb.DSV4_ARCHITECTURE and _release(target) >= dsa_kb.DSV4_FROM:
        # deepseek_v4.py (deepseek_v4_hook.py before 0.5.15): dsv4 at page 256, whatever the flags say; auto KV is
        # fp8_e4m3 (_deepseek_v4_kv_cache_dtype)
        declared = {"attention_backend": dsa_kb.DSV4_BACKEND, "page_size": dsa_kb.DSV4_PAGE_SIZE}
        return declared | ({"kv_cache_dtype": dsa_kb.DSV4_AUTO_KV} if config.kv_cache_dtype == "auto" else {})
    if minimax_m3_nvfp4(config, target):
        return _minimax_m3_nvfp4_overrides(config, major in kb.blackwell_majors(_release(target)))
    if none_set:
        if dsa_model(config, target):
            return {"attention_backend": "dsa"}  # deepseek_v2.py: DeepSeek V3.2 / GLM-5
        if arch == "DeepseekV3ForCausalLM" and major == 10:
            return {"attention_backend": "trtllm_mla"}  # deepseek_v2.py: DeepSeek V3/R1/V3.1 on SM100
        if arch == "GptOssForCausalLM":
            return {"attention_backend": {10: "trtllm_mha", 9: "fa3"}.get(major, "triton")}  # gpt_oss.py
        if arch.startswith("Inkling"):
            # inkling.py: models/inkling_common/attn.py only has fa4 and triton paths
            return {"attention_backend": "fa4" if major in (9, 10) else "triton"}
        if arch == "MossVLForConditionalGeneration":
            # moss_vl.py: cross-attention prefill needs FlashInfer's custom mask; decode keeps the default
            return {"prefill_attention_backend": "flashinfer"}
    iquest = arch in kb.IQUEST_Q1_ARCHITECTURES and _release(target) >= kb.IQUEST_Q1_FROM
    if iquest and none_set:
        return {"attention_backend": "fa3"}  # iquest_q1.py
    if config.attention_backend is not None:
        return {}
    if iquest:  # iquest_q1.py: an unnamed phase gets fa3
        phases = ("prefill_attention_backend", "decode_attention_backend")
        return {phase: "fa3" for phase in phases if getattr(config, phase) is None}
    if arch.startswith("Llama4") and _release(target) >= kb.LLAMA4_DEFAULT_FROM:
        return {"attention_backend": {10: "trtllm_mha", 9: "fa3"}.get(major, "triton")}  # llama4.py
    if arch.startswith("Gemma4"):
        return {"attention_backend": "trtllm_mha" if major == 10 else "triton"}  # gemma4.py
    if arch in EXAONE_ARCHITECTURES or arch in OLMO_ARCHITECTURES:
        # exaone.py keys on hf_config.sliding_window_pattern, which transformers' Exaone4/ExaoneMoe configs
        # always set (4 by default, 0 without a window); olmo2.py applies to every OLMo 2/3.
        return {"attention_backend": _sm80_swa_default(target)}
    if arch in LFM2_ARCHITECTURES and major == 10:
        return {"attention_backend": "flashinfer"}  # lfm2.py
    if arch in QWEN_HYBRID_ARCHITECTURES and major == 10:
        # qwen3_5.py: triton with page 1 keeps the mamba radix cache; trtllm_mha with page 64 where the generic
        # default is trtllm_mha and speculative decoding, --disable-radix-cache or an extra-buffer strategy is on
        # (an explicit one: auto is resolved after this override)
        plain = (
            config.speculative_algorithm is None
            and not config.flags.get("disable_radix_cache")
            and config.flags.get("mamba_radix_cache_strategy") not in kb.MAMBA_EXTRA_BUFFER_STRATEGIES
        )
        if not plain and _generic_default(config, major, _release(target)) == "trtllm_mha":
            return {"attention_backend": "trtllm_mha", "page_size": 64}
        return {"attention_backend": "triton", "page_size": 1}
    return {}


def _dllm_backend(config: Config, release: Version) -> Config:
    """overrides.py _dllm_attention_backend on CUDA (rules/engines/sglang/capabilities.py DLLM_*): an algorithm's required
    backend for every phase, or flashinfer for --attention-backend while decode CUDA graphs are on."""
    algorithm = config.flags.get("dllm_algorithm")
    if not algorithm or release < kb.DLLM_FLASHINFER_FROM:
        return config
    phases = (config.prefill_attention_backend, config.decode_attention_backend)
    declared = kb.DLLM_ALGORITHM_BACKENDS.get(algorithm) if release >= kb.DLLM_REQUIRED_BACKEND_FROM else None
    if declared is not None:
        required, supported = declared
        if release >= kb.DLLM_SUPPORTED_BACKENDS_FROM and (
            config.attention_backend in supported and all(p in (None, *supported) for p in phases)
        ):
            return config
        every_phase = True
        backend = required
    elif config.flags.get("disable_cuda_graph"):
        return config
    else:
        every_phase = False
        backend = kb.DLLM_CUDA_GRAPH_BACKEND
    before = {"attention_backend": config.attention_backend}
    if every_phase:
        before.update(prefill_attention_backend=phases[0], decode_attention_backend=phases[1])
    changed = {field: value for field, value in before.items() if value != backend}
    if not changed:
        return config
    # what the user asked for (a model override's own choice is no request)
    asked = {field: value for field, value in changed.items() if value is not None and config.backend_given}
    return replace(
        config,
        attention_backend=backend,
        prefill_attention_backend=backend if every_phase else config.prefill_attention_backend,
        decode_attention_backend=backend if every_phase else config.decode_attention_backend,
        rewrites={**config.rewrites, **asked},
        auto_backend=config.auto_backend
        or ("" if config.backend_given else f"SGLang's diffusion-LLM backend ({kb.DLLM_SOURCE})"),
    )


def _cutedsl_prefill_backend_fill(config: Config, release: Version) -> Config:
    """overrides.py _cutedsl_prefill_backend_fill (server_args.py in 0.5.13-0.5.15): cutedsl_mla serves decode
    only, so with no --prefill-attention-backend SGLang's prefill is trtllm_mla."""
    named = (config.attention_backend, config.prefill_attention_backend, config.decode_attention_backend)
    if release < kb.CUTEDSL_PREFILL_FILL_FROM or "cutedsl_mla" not in named or config.prefill_attention_backend:
        return config
    return replace(config, prefill_attention_backend="trtllm_mla")


def minimax_m3_nvfp4(config: Config, target: Target) -> bool:
    """A MiniMax-M3.1 NVFP4 launch: an M3 architecture with --quantization minimax_m3_nvfp4 (the checkpoint's own
    quantization_config, which SGLang also resolves to it, is not read here)."""
    model = config.model
    return (
        _release(target) >= kb.MINIMAX_M3_NVFP4_FROM
        and model is not None
        and model.architecture in kb.MINIMAX_M3_ARCHITECTURES
        and config.flags.get("quantization") == kb.MINIMAX_M3_NVFP4
    )


def _minimax_m3_nvfp4_overrides(config: Config, blackwell: bool) -> dict[str, Any]:
    """minimax_m3.py: page size 128, on Blackwell an fp8_e4m3 KV cache for auto; trtllm_mha (Blackwell) or fa3
    where no backend is named. A conflicting page size or KV dtype is refused there, so it is left as given."""
    declared: dict[str, Any] = {}
    if config.page_size is None:
        declared["page_size"] = kb.MINIMAX_M3_NVFP4_PAGE
    if blackwell and config.kv_cache_dtype == "auto":
        declared["kv_cache_dtype"] = kb.MINIMAX_M3_NVFP4_KV
    if not config.backend_given:
        declared["attention_backend"] = "trtllm_mha" if blackwell else "fa3"
    return declared


def _deterministic_fallback(config: Config, major: int, release: Version) -> str:
    if major in (10, 12):
        deepseek = config.model is not None and config.model.deepseek_family
        return "triton" if deepseek and release >= kb.DETERMINISTIC_DEEPSEEK_TRITON_FROM else "flashinfer"
    return "fa3"


def _generic_default(config: Config, major: int, release: Version) -> str:
    """get_default_attn_backend for CUDA GPUs, as the target's SGLang release has it (rules/engines/sglang/capabilities.py
    DEFAULT_BACKEND_SOURCE: what changed before 0.5.23)."""
    model = config.model
    architecture = model.architecture if model is not None else None
    if architecture == "WhisperForConditionalGeneration" and release >= kb.WHISPER_FLASHINFER_DEFAULT_FROM:
        return "flashinfer"
    if config.mla:
        return {9: "fa3", 10: "flashinfer"}.get(major, "triton")
    fa3_architectures = kb.fa3_default_architectures(release)
    if major == 9 and _topk_one(config) and (fa3_architectures is None or architecture in fa3_architectures):
        return "fa3"
    dflash = release >= kb.DFLASH_TOPK_ONE_DEFAULT_FROM and (config.speculative_algorithm or "").upper() == "DFLASH"
    if (
        major == 10
        and release >= kb.TRTLLM_MHA_DEFAULT_FROM
        and _topk_one(config)
        and (config.speculative_algorithm is None or config.speculative_eagle_topk is not None or dflash)
    ):
        asymmetric = "asymmetric_kv" in config.features and release >= kb.ASYMMETRIC_KV_FA4_DEFAULT_FROM
        return "fa4" if asymmetric else "trtllm_mha"
    sinks = "sinks" in config.features and release >= kb.SINKS_TRITON_DEFAULT_FROM
    return "triton" if sinks else "flashinfer"


def _release(target: Target) -> Version:
    """The target's SGLang release; the newest known one when unknown or unreadable."""
    try:
        return kb.release_of(target)
    except InvalidVersion:
        return Version(NEWEST_KNOWN["sglang"])


def _apply_model_overrides(config: Config, target: Target) -> Config:
    declared = _model_overrides(config, target)
    if not declared:
        return config
    rewrites = dict(config.rewrites)
    if "page_size" in declared and config.page_size is not None and config.page_size != declared["page_size"]:
        rewrites["page_size"] = str(config.page_size)  # a declaration wins over the flag
    asked = config.attention_backend
    if "attention_backend" in declared and asked is not None and asked != declared["attention_backend"]:
        rewrites["attention_backend"] = asked  # DeepSeek-V4's override replaces a named backend
    why = config.auto_backend
    if not config.backend_given:
        chosen = ", ".join(
            f"{k.replace('_attention_backend', '')} {v}" if k != "attention_backend" else v
            for k, v in declared.items()
            if k.endswith("attention_backend")
        )
        why = (
            f"SGLang's default for {config.model.architecture if config.model else 'the model'} on "
            f"SM{target.major}x: {chosen} "
            f"(arg_groups/model_overrides)"
        )
    return replace(config, **declared, rewrites=rewrites, auto_backend=why)


def hybrid_spec_defaults(config: Config, target: Target) -> Config:
    """The speculative and linear-attention backends SGLang fills, when none is given, for Kimi's hybrid models
    (kimi_k3_hook.py apply_kimi_k3_linear_attn_defaults, apply_kimi_k3_spec_backend_defaults) and GLM-5-Next
    (glm5_next_hook.py apply_glm5_next_spec_backend_defaults); rules/engines/sglang/capabilities.py says when."""
    architecture = config.model.architecture if config.model else None
    release, sm100 = _release(target), target.major == 10
    kimi = architecture in kb.KIMI_HYBRID_ARCHITECTURES and release >= kb.KIMI_HYBRID_DEFAULTS_FROM
    glm5_next = architecture == kb.GLM5_NEXT_ARCHITECTURE and release >= kb.GLM5_NEXT_DEFAULTS_FROM
    if not (kimi or glm5_next):
        return config
    flags, draft = dict(config.flags), config.draft_attention_backend
    speculative = config.speculative_algorithm is not None
    if (
        kimi
        and sm100
        and flags.get("linear_attn_decode_backend") is None
        and flags.get("mamba_ssm_dtype") == "bfloat16"
    ):
        flags["linear_attn_decode_backend"] = kb.KIMI_BF16_DECODE_BACKEND
    if speculative and flags.get("linear_attn_verify_backend") is None and (kimi or sm100):
        flags["linear_attn_verify_backend"] = kb.HYBRID_SPEC_VERIFY_BACKEND
    if kimi and sm100 and draft is None and (config.speculative_algorithm or "").upper() == "DSPARK":
        draft = kb.KIMI_DSPARK_DRAFT_BACKEND
    return replace(config, flags=flags, draft_attention_backend=draft)


# --kv-cache-dtype nvfp4 (kv_cache_hook.handle_nvfp4_prefill_kv_dequant_dtype, before the generic default):
# prefill reads an FP8 E4M3 workspace (flashinfer) or native NVFP4 (trtllm_mha, SM100 only); decode is trtllm_mha.
NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}
NVFP4_SOURCE = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py, handle_nvfp4_prefill_kv_dequant_dtype"


def nvfp4_plan(config: Config, target: Target) -> tuple[Optional[str], str]:
    """(prefill backend SGLang will use, "") for an NVFP4 KV cache, or (None, the error SGLang raises)."""
    requested = config.flags.get("prefill_kv_cache_dequant_dtype", "auto")
    explicit = config.prefill_attention_backend or config.attention_backend
    if requested == "auto":
        by_backend = {b: d for d, b in NVFP4_PREFILL_BACKEND.items()}
        if explicit in by_backend:
            requested = by_backend[explicit]
        elif explicit is not None:
            return None, (
                f"NVFP4 prefill supports an FP8 E4M3 workspace or native NVFP4, but backend {explicit!r} "
                "provides neither."
            )
        else:
            requested = "nvfp4" if target.major == 10 else "fp8_e4m3"
    if requested == "nvfp4" and target.major != 10:
        return None, (
            "Native NVFP4 prefill currently requires SM100; use --prefill-kv-cache-dequant-dtype=fp8_e4m3 "
            "on this platform."
        )
    prefill = NVFP4_PREFILL_BACKEND.get(requested)
    if prefill is None:
        return None, f"--prefill-kv-cache-dequant-dtype {requested!r} is not fp8_e4m3 or nvfp4"
    if config.prefill_attention_backend is not None and config.prefill_attention_backend != prefill:
        return None, (
            f"--prefill-kv-cache-dequant-dtype={requested} requires prefill backend {prefill!r}, but "
            f"--prefill-attention-backend={config.prefill_attention_backend!r} was set. Remove the backend "
            "option and select the KV dtype only."
        )
    if config.decode_attention_backend not in (None, "trtllm_mha"):
        return None, (
            f"NVFP4 decode requires --decode-attention-backend=trtllm_mha; got "
            f"{config.decode_attention_backend!r}. Remove the backend option; NVFP4 selects the supported "
            "decode implementation automatically."
        )
    return prefill, ""


UNRESOLVED = "not resolved"


def _default_without_model(config: Config, major: int, release: Version) -> Config:
    """The default backend of a model named but never read (issue 23): get_default_attn_backend and the model
    overrides read the model (MLA or MHA, its architecture), so none is assumed: the backend stays unset and the
    config says why, naming what a plain MHA and a plain MLA model would get. Rules that need the backend answer
    unknown through the model (attn_preflight.rules.core.judge); the others still judge."""
    mha = _generic_default(config, major, release)
    mla = _generic_default(replace(config, extra_features=config.extra_features | {"mla"}), major, release)
    return replace(
        config,
        auto_backend=f"{UNRESOLVED}: SGLang's default on SM{major}x depends on the model and its config.json was not "
        f"read ({mha} for a plain MHA model, {mla} for a plain MLA one, unless its architecture chooses; {SOURCE})",
    )


def resolve(config: Config, target: Target) -> Config:
    """The config as the engine will run it: default backend filled in, silent rewrites applied (each recorded
    in Config.rewrites as field -> the value asked for)."""
    if config.engine == "vllm":
        from attn_preflight.rules.engines.vllm import resolve as vllm_resolve  # an SGLang check loads no vLLM pack

        return vllm_resolve.resolve(config, target)
    if config.engine != "sglang" or target.cc is None:
        return config
    major = target.cc[0]
    given = config.backend_given
    config = hybrid_spec_defaults(_apply_model_overrides(config, target), target)
    release = _release(target)
    config = _dllm_backend(config, release)
    if config.flags.get("rl_on_policy_target") is not None and not config.deterministic:
        # handle_deterministic_inference: "Enable deterministic inference because of rl_on_policy_target."
        config = replace(config, deterministic=True, rewrites={**config.rewrites, "deterministic": "false"})
    if config.deterministic and config.attention_backend is None and kb.deterministic_fallback_runs(release):
        # _deterministic_attention_backend: fills --attention-backend; a named phase keeps its backend
        config = replace(
            config,
            attention_backend=_deterministic_fallback(config, major, release),
            auto_backend=config.auto_backend
            or ("" if given else f"SGLang's deterministic-inference fallback on SM{major}x ({DETERMINISTIC_SOURCE})"),
        )
    if config.kv_cache_dtype == "nvfp4" and release >= kb.NVFP4_PLAN_FROM:
        prefill, error = nvfp4_plan(config, target)
        if not error and (config.prefill_backend, config.decode_backend) != (prefill, "trtllm_mha"):
            asked = {
                field: value
                for field, value, new in (
                    ("prefill_attention_backend", config.prefill_backend, prefill),
                    ("decode_attention_backend", config.decode_backend, "trtllm_mha"),
                )
                if value is not None and value != new
            }
            config = replace(
                config,
                prefill_attention_backend=prefill,
                decode_attention_backend="trtllm_mha",
                rewrites={**config.rewrites, **asked},
                auto_backend=config.auto_backend
                or ("" if given else f"NVFP4 KV: prefill {prefill}, decode trtllm_mha ({NVFP4_SOURCE})"),
            )
    if config.attention_backend is None:
        if config.prefill_attention_backend and config.prefill_attention_backend == config.decode_attention_backend:
            config = replace(config, attention_backend=config.prefill_attention_backend)
        elif not config.backend_given and config.model is None and config.model_missing:
            config = _default_without_model(config, major, release)
        elif not config.backend_given:
            config = config.with_backend(
                _generic_default(config, major, release),
                auto_reason=(f"SGLang's default for {'MLA' if config.mla else 'MHA'} models on SM{major}x ({SOURCE})"),
            )
        else:
            # one phase named: the other inherits the engine default (_attention_backend_default)
            config = replace(config, attention_backend=_generic_default(config, major, release))
    elif (
        config.prefill_attention_backend
        and config.prefill_attention_backend == config.decode_attention_backend
        and config.attention_backend != config.prefill_attention_backend
    ):
        # _attention_backend_default: equal phase backends override --attention-backend.
        config = replace(config, attention_backend=config.prefill_attention_backend)
    config = _cutedsl_prefill_backend_fill(config, release)
    if config.attention_backend == "fa3" and config.kv_cache_dtype == "fp8_e5m2":
        # _attention_backend_fa3_fp8_fallback: logged, then triton runs instead.
        config = replace(
            config,
            attention_backend="triton",
            prefill_attention_backend=None,
            decode_attention_backend=None,
            rewrites={**config.rewrites, "attention_backend": "fa3"},
        )
    before_hrm = config.attention_backend
    if hrm_text(config) and release >= kb.HRM_TEXT_TRITON_FROM and before_hrm not in (None, "triton"):
        # _hrm_text_attention_force, the last attention declaration: --attention-backend becomes triton (a named
        # phase keeps its backend); logged only when a backend was asked for.
        config = replace(
            config,
            attention_backend="triton",
            rewrites={**config.rewrites, "attention_backend": before_hrm} if given and before_hrm else config.rewrites,
            auto_backend=config.auto_backend and f"SGLang forces triton for HRM-Text ({HRM_TEXT_SOURCE})",
        )
    return config


def hrm_text(config: Config) -> bool:
    """arg_groups/model_hook.py is_hrm_text (prefix_lm, which defaults to true, is not read here)."""
    model = config.model
    return model is not None and (
        model.model_type == kb.HRM_TEXT_MODEL_TYPE or model.architecture == kb.HRM_TEXT_ARCHITECTURE
    )


def dsa_checkpoint(config: Config, target: Target) -> bool:
    """Whether the target's release counts the checkpoint as DSA (configs/model_config.py is_deepseek_dsa, named
    is_deepseek_nsa before the rename: the architecture listed, and index_topk in its config), as the checks that
    call it directly read it (validate_hisparse)."""
    model = config.model
    if model is None or not model.dsa:
        return False
    since = dsa_kb.DSA_ARCHITECTURES_SINCE.get(model.architecture or "")
    return since is not None and _release(target) >= Version(since)


def dsa_model(config: Config, target: Target) -> bool:
    """Whether SGLang runs the model on its DeepSeek sparse attention path in the target's release: a DSA checkpoint
    outside the releases whose model adjustments leave its architecture off that path (dsa_kb.DSA_PATH_GAPS)."""
    if not dsa_checkpoint(config, target):
        return False
    gap = dsa_kb.DSA_PATH_GAPS.get(config.model.architecture or "") if config.model else None
    return not (gap and gap[0] <= _release(target) < gap[1])


def prefill_cp(config: Config, target: Target) -> tuple[bool, Optional[str]]:
    """Whether the launch asks for prefill context parallelism, and the CP strategy SGLang resolves for it in the
    target's release (rules/knowledge/dsa.py CP_LEGACY_MODES: the legacy flags and their default modes)."""
    flags = config.flags
    release = _release(target)
    dsa_legacy = bool(flags.get("enable_dsa_prefill_context_parallel"))
    dsa_mode = dsa_kb.CP_LEGACY_MODES.get(flags.get("dsa_prefill_cp_mode") or "round-robin-split")
    if release < dsa_kb.CP_STRATEGY_FLAG_FROM:
        return dsa_legacy, dsa_mode
    enabled, strategy = bool(flags.get("enable_prefill_cp")), flags.get("cp_strategy")
    if release >= dsa_kb.CP_LEGACY_FLAGS_GONE_FROM:
        return enabled, strategy
    legacy = bool(flags.get("enable_prefill_context_parallel"))
    if strategy is None and legacy:
        strategy = dsa_kb.CP_LEGACY_MODES.get(flags.get("prefill_cp_mode") or "in-seq-split")
    if strategy is None and dsa_legacy:
        strategy = dsa_mode
    return enabled or legacy or dsa_legacy, strategy


def prefill_cp_on(config: Config, target: Target) -> bool:
    """Whether the launch asks for prefill context parallelism in the target's release (prefill_cp)."""
    return prefill_cp(config, target)[0]


def prefill_cp_strategy(config: Config, target: Target) -> Optional[str]:
    """The prefill CP strategy SGLang resolves in the target's release (prefill_cp)."""
    return prefill_cp(config, target)[1]


def hisparse_model(config: Config, target: Target) -> bool:
    """Whether validate_hisparse's model assert admits the model in the target's release: a DSA checkpoint (its
    is_deepseek_dsa, not the DSA serving path: DeepSeek-V3.2 is admitted in 0.5.10-0.5.11 too, where the model
    adjustments leave it off that path; the 0.5.10 oracle accepts it), or one of HISPARSE_ARCHITECTURES_SINCE
    (DeepSeek-V4, MiniMax-M3)."""
    since = dsa_kb.HISPARSE_ARCHITECTURES_SINCE.get(config.model.architecture or "") if config.model else None
    return dsa_checkpoint(config, target) or (since is not None and _release(target) >= since)


def dsa_index_sharing(config: Config, target: Target) -> str:
    """How the model's DSA layers reuse an earlier layer's top-k indices ("" when each runs its own indexer):
    index_topk_freq, index_topk_pattern, and indexer_types from the release that reads it."""
    if config.model is None:
        return ""
    return config.model.shared_index_topk(read_indexer_types=_release(target) >= dsa_kb.SHARED_INDEXER_TYPES_FROM)


def pooled_index_key(config: Config, target: Target) -> bool:
    """The checkpoint's DSA indexer pools keys (index_kpool above 1), so one key spans several positions."""
    return config.model is not None and (config.model.index_kpool or 1) > 1


def effective_page_size(config: Config, target: Target) -> int:
    """The KV page size SGLang settles on, applying its snaps in pipeline order (see module docstring); the sizes
    each backend accepts and snaps to are its declaration's (rules/engines/sglang/capabilities.py) in the target's release.
    A diffusion LLM's block alignment comes last (a post-process pass after every page declaration)."""
    return dllm_page_size(config, target, backend_page_size(config, target))


def dllm_block_size(config: Config, target: Target) -> Optional[int]:
    """The diffusion block SGLang's DllmConfig settles on in the target's release: the checkpoint's by architecture
    (rules/engines/sglang/capabilities.py DLLM_BLOCK_SIZES), or --dllm-algorithm-config's `block_size`; None where it cannot
    be known here (no model, an architecture SGLang does not list, a --dllm-algorithm-config file not read)."""
    model = config.model
    listed = kb.DLLM_BLOCK_SIZES.get(model.architecture or "") if model else None
    if model is None or listed is None or _release(target) < listed[0]:
        return None
    if config.flags.get("dllm_algorithm_config") is not None:
        if config.dllm_algorithm_yaml is None:
            return None
        given = config.dllm_algorithm_yaml.get("block_size")
        if given is not None:
            return given
    return listed[1] or model.canvas_length or kb.DLLM_CANVAS_DEFAULT


def dllm_page_size(config: Config, target: Target, page: int) -> int:
    """overrides.py _dllm_page_size (server_args.py _handle_dllm_inference before 0.5.15): the page size a
    diffusion LLM runs with, given the page size the rest of the pipeline settled on; `page` when its block size
    is not known here."""
    release = _release(target)
    if not config.flags.get("dllm_algorithm") or release < kb.DLLM_PAGE_ALIGN_FROM:
        return page
    block = dllm_block_size(config, target)
    if block is None:
        return page
    misaligned = not config.flags.get("disable_radix_cache") and page % block != 0
    return block if misaligned or (release >= kb.DLLM_PAGE_CAP_FROM and page > block) else page


def backend_page_size(config: Config, target: Target) -> int:
    """The page size SGLang's page declarations settle on before a diffusion LLM's block alignment."""
    # A DSA model's page is set outright, whatever --page-size says, before any backend snap (on CUDA; 64 x
    # index_kpool from 0.5.22, and no DSA config here has index_kpool): "Setting page size to 64 for DeepSeek
    # DSA" (NSA before 0.5.10), server_args.py:1075-1076 in 0.5.5, :1583-1584 in 0.5.10, arg_groups/overrides.py
    # :401-402 in 0.5.16, model_overrides/deepseek_v2.py:144-145 in 0.5.20, :170-173 in 0.5.23.
    page = dsa_kb.DSA_PAGE_SIZE if dsa_model(config, target) else config.page_size
    backends = config.backends | ({config.draft_attention_backend} if config.draft_attention_backend else set())

    declared = target.sglang_backends

    def snapped(backend: str) -> Optional[int]:
        info = declared[backend]
        return page if info.page_sizes is None or page in info.page_sizes else info.page_snap

    attention_or_decode = {config.attention_backend, config.decode_backend}
    if "flashmla" in attention_or_decode:
        page = snapped("flashmla")
    # cutlass_mla: forced to 128 through 0.5.19; no longer a choice from 0.5.20 (general-backend-removed)
    if "cutlass_mla" in attention_or_decode and not declared["cutlass_mla"].removed:
        page = snapped("cutlass_mla")
    if "trtllm_mla" in attention_or_decode:
        page = snapped("trtllm_mla")
    if "cutedsl_mla" in backends:
        page = snapped("cutedsl_mla")
    # tokenspeed_mla: its own snap through 0.5.22, renamed to cutedsl_mla (the same snap) in 0.5.23
    if "tokenspeed_mla" in attention_or_decode:
        page = snapped("tokenspeed_mla")
    if "trtllm_mha" in backends:
        page = snapped("trtllm_mha")
    if "hpc_ops" in backends:
        page = snapped("hpc_ops")
    forced = fa4_page_size(config, target)
    if forced:
        page = forced
    return 1 if page is None else page


def fa4_page_size(config: Config, target: Target) -> Optional[int]:
    """The page size SGLang's fa4 rewrite forces on this config in the target's release, or None (see
    rules/engines/sglang/capabilities.py FA4_PAGE_REWRITE_*: which phases, models and GPUs each release rewrites)."""
    release = _release(target)
    if release < kb.FA4_PAGE_REWRITE_FROM:
        return None
    if release >= kb.FA4_PAGE_REWRITE_ANY_PHASE_FROM:
        named = "fa4" in config.backends and (config.speculative_eagle_topk or 0) <= 1
    else:  # the raw --prefill-attention-backend field only
        named = config.prefill_attention_backend == "fa4"
    if not named or (config.mla and release >= kb.FA4_PAGE_REWRITE_NON_MLA_FROM):
        return None
    if release >= kb.FA4_PAGE_REWRITE_SM100_FROM:
        return target.sglang_backends["fa4"].arch_page_size.get(target.major or 0)
    return 128


RAGGED_VERIFY_ENV = "SGLANG_RAGGED_VERIFY_MODE"


def ragged_verify_mode(config: Config) -> str:
    """SGLANG_RAGGED_VERIFY_MODE as SGLang reads it (speculative/ragged_verify.py; environ.py: static when unset)."""
    return config.env.get(RAGGED_VERIFY_ENV, "static")


# where `--dp-size N --enable-dp-attention` became --attn-dp-size N (parallel_hook.py:39-61 in 0.5.23)
ATTN_DP_SIZE_FROM = Version("0.5.22")


def attention_dp_size(config: Config) -> int:
    """Attention-DP groups: --attn-dp-size (0.5.22+), or its older spelling --dp-size with --enable-dp-attention,
    which also wins over an --attn-dp-size of 1, given or not (parallel_hook.py:49-60 in 0.5.23,
    _handle_deprecated_dp_attention)."""
    size = config.flags.get("attn_dp_size") or 1
    if size == 1 and config.flags.get("enable_dp_attention"):
        size = config.flags.get("dp_size") or 1
    return int(size)


def attention_dp_on(config: Config, target: Target) -> bool:
    """DP attention as SGLang's model overrides test it: attn_dp_enabled_of (runtime_context.py: attention DP above
    1) from 0.5.22, where --dp-size N --enable-dp-attention became --attn-dp-size N; enable_dp_attention before."""
    if _release(target) >= ATTN_DP_SIZE_FROM:
        return attention_dp_size(config) > 1
    return bool(config.flags.get("enable_dp_attention"))


def on_blackwell(config: Config, target: Target) -> bool:
    """The target GPU is one SGLang's is_blackwell accepts in the target's release (False when it is not known)."""
    return target.major in kb.blackwell_majors(_release(target))
