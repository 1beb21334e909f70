"""vLLM: what the model and its dtypes ask of the GPU and the release: bfloat16 and float16, the KV-cache dtype
choices, tensor-parallel heads, Inkling's paged KV, DeepSeek sparse attention's backends per arch, and the
checkpoint's quantization method."""

from __future__ import annotations

from attn_preflight.rules.checks.common import gpu
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.knowledge import quantization as kb_quant


@rule(
    id="vllm-bf16-arch",
    title="bfloat16 needs compute capability 8.0",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.13.0 read: the worker raises it for --dtype bfloat16 below SM80 (v1/worker/gpu_worker.py:601 in "
        "0.10.0, :629 in 0.10.1.1; platforms/cuda.py:577 in 0.10.2, :510 in 0.11.0, :478 in 0.11.2, :463 in 0.12.0, "
        ":439 in 0.13.0) and --dtype auto resolves from the platform's supported dtypes (config.py _resolve_auto_dtype "
        ":3357-3373 in 0.10.0). "
        "vllm>=0.15.0: the upstream message is in every vllm release read from 0.10.2 to 0.33.0 (0.10.2: "
        "vllm/platforms/cuda.py; bench/release_walk.py prevents). The range's start was set from the earlier "
        "reading and the condition was not re-read release by release"
    ),
    stage="startup",
    prevents=kb.BF16_ARCH_MESSAGE.format(gpu="Tesla T4", cc="7.5"),
    source=kb.BF16_ARCH_SOURCE,
    docs="""Checks that bfloat16 is not asked of a GPU older than Ampere (V100, T4).

With `--dtype bfloat16` vLLM's worker raises "Bfloat16 is only supported on GPUs with compute capability of
at least 8.0. …" before the model loads. With `--dtype auto` a bfloat16 checkpoint is silently run in
float16 instead ("Your device … doesn't support torch.bfloat16. Falling back to torch.float16 for
compatibility."), which this rule reports as a warning: some models overflow in float16.""",
    fix_title="Use --dtype half (or a GPU with compute capability 8.0 or newer)",
    needs_gpu=True,
)
def vllm_bf16_arch(cfg, target):
    explicit = kb.MODEL_DTYPES.get(cfg.dtype) == "bfloat16"
    declared = cfg.model.dtype if cfg.model else None
    if not explicit and not (cfg.dtype == "auto" and declared == "bfloat16"):
        return skipped("bfloat16 is not requested")
    if target.cc >= (8, 0):
        return passed(f"bfloat16 on {gpu(target)}", "compute capability >= 8.0")
    if explicit:
        return failed(f"--dtype {cfg.dtype} on {gpu(target)}", "compute capability >= 8.0", ["--dtype half"])
    return warned(
        f"a bfloat16 checkpoint on {gpu(target)}",
        "compute capability >= 8.0",
        ["--dtype half"],
        reason="vLLM falls back to float16",
    )


@rule(
    id="vllm-fp16-model",
    title="The model accepts float16",
    engine="vllm",
    versions="vllm>=0.10.2",
    verified=(
        "vllm 0.10.2-0.16.0 read: _FLOAT16_NOT_SUPPORTED_MODELS has gemma2, gemma3, gemma3_text, plamo2 and glm4 "
        "(config/__init__.py:2615-2622 in 0.10.2, config/model.py:1581-1588 in 0.11.0, :1937-1943 in 0.12.0, :1853 in "
        "0.13.0; the same in 0.14.0-0.16.0), 0.33.0 gemma2, gemma3, gemma3_text and glm4: the rule omits plamo2 (lax "
        "for "
        "it). 0.10.0 and 0.10.1.1 lack gemma3_text (config.py:3293-3298, config/__init__.py:2669-2674), so the range "
        "starts at 0.10.2. "
        "vllm>=0.15.0: not walked release by release (no upstream message in the vllm wheels to grep: the "
        "check is a reason, a kernel library's or worded in parts); the range is from the earlier reading"
    ),
    stage="startup",
    prevents=kb.FLOAT16_MODEL_MESSAGE.format(model_type="gemma2", reason=kb.FLOAT16_UNSUPPORTED_MODELS["gemma2"]),
    source=kb.FLOAT16_MODEL_SOURCE,
    docs="""Checks that `--dtype half` / `float16` is not asked of a model vLLM refuses to run in float16:
Gemma 2, Gemma 3 and GLM-4 (numerical instability).

Below SM80 these models have no half-precision dtype vLLM accepts (no bfloat16, no float16), so they run
in float32, which only TRITON_ATTN and FLEX_ATTENTION take.""",
    fix_title="Use --dtype bfloat16 (float32 below SM80)",
)
def vllm_fp16_model(cfg, target):
    model_type = cfg.model.model_type if cfg.model else None
    if model_type not in kb.FLOAT16_UNSUPPORTED_MODELS:
        return skipped("applies to gemma2, gemma3, gemma3_text and glm4 models")
    if kb.MODEL_DTYPES.get(cfg.dtype) != "float16":
        return passed(f"{model_type} with --dtype {cfg.dtype}", "not float16")
    fix = "--dtype bfloat16" if target.cc is None or target.cc >= (8, 0) else "--dtype float32"
    return failed(f"{model_type} with --dtype {cfg.dtype}", "bfloat16 or float32", [fix])


@rule(
    id="vllm-kv-cache-dtype-choice",
    title="The --kv-cache-dtype value is one the vLLM release has",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.33.0, every release's wheel read (0.10.1.x not: 0.10.0 and 0.10.2 hold the same "
        "five): CacheDType's Literal (vllm/config.py:1609 in 0.10.0; vllm/config/cache.py from 0.10.2, :44-67 in "
        "0.33.0) gains values and loses none "
        "(vllm_backends.KV_CACHE_DTYPE_SINCE); EngineArgs.kv_cache_dtype is typed CacheDType through 0.32.0, so "
        "argparse refuses any other value (engine/arg_utils.py:282 in 0.10.0, :500 in 0.32.0), and "
        "CacheDType | str in 0.33.0, refused by CacheConfig._validate_cache_dtype (config/cache.py:468-474)"
    ),
    stage="parse",
    prevents="argument --kv-cache-dtype: invalid choice: 'nvfp4' (choose from auto, bfloat16, fp8, ...); "
    "Invalid kv_cache_dtype: 'X'. Valid values are: [...]",
    source=kb.KV_CACHE_DTYPE_SOURCE,
    docs="""Checks that `--kv-cache-dtype` names a KV-cache dtype the target's vLLM release has. Each release's
CacheDType lists them, and the list only grows: bfloat16 from 0.11.0, fp8_ds_mla from 0.11.2, float16 from 0.18.0,
nvfp4, the turboquant and per-token-head dtypes from 0.20.0, int4_per_token_head from 0.25.0, nvfp4_4over6 from
0.28.0, nvfp4_ds_mla from 0.30.0, ultraquant_4bit from 0.32.0 and the octave dtypes from 0.33.0.

Through 0.32.x argparse refuses another value before anything loads; 0.33.0 takes any string on the command line
(a platform may register its own dtype) and CacheConfig refuses an unknown one when the engine config is built.""",
    fix_title="Use a KV-cache dtype of this release (auto, fp8, ...), or a newer vLLM",
)
def vllm_kv_cache_dtype_choice(cfg, target):
    release = vllm.release_of(target)
    accepted = kb.kv_cache_dtypes_at(release)
    required = f"one of vllm {release or kb.VLLM_VERSION}'s {len(accepted)} KV-cache dtypes"
    if cfg.kv_cache_dtype in accepted:
        return passed(f"--kv-cache-dtype {cfg.kv_cache_dtype}", required)
    since = kb.KV_CACHE_DTYPE_SINCE.get(cfg.kv_cache_dtype)
    newer = f" (from vllm {since})" if since else ""
    return failed(
        f"--kv-cache-dtype {cfg.kv_cache_dtype}{newer} at vllm {release}", required, ["--kv-cache-dtype auto"]
    )


@rule(
    id="vllm-tp-heads",
    title="vLLM: attention heads split evenly over tensor-parallel ranks",
    engine="vllm",
    versions="vllm>=0.10.0",
    verified=(
        "vllm 0.10.0-0.13.0 read: ModelConfig.verify_with_parallel_config raises it (config.py:1210 in 0.10.0, "
        "config/__init__.py:1307 in 0.10.1.1, :1357 in 0.10.2, config/model.py:1051 in 0.11.0, :1153 in 0.11.2, :1146 "
        "in 0.12.0, :1036 in 0.13.0). "
        "vllm>=0.13.0: the upstream message is in every vllm release read from 0.10.2 to 0.33.0 (0.10.2: "
        "vllm/config/__init__.py; bench/release_walk.py prevents). The range's start was set from the earlier "
        "reading and the condition was not re-read release by release"
    ),
    needs_model=True,
    stage="startup",
    prevents="Total number of attention heads ({total_num_attention_heads}) must be divisible by tensor parallel "
    "size ({tensor_parallel_size}).",
    source="vllm-project/vllm: vllm/config/model.py, ModelConfig.verify_with_parallel_config",
    docs="""Checks that the model's attention-head count is divisible by `--tensor-parallel-size`.

vLLM checks it when it builds its config, before any weight loads, and refuses to start otherwise (Qwen2.5-7B's
28 heads at `--tensor-parallel-size 8`). Data parallelism replicates the whole model, so only TP counts.""",
    fix_title="Use a --tensor-parallel-size that divides the head count",
)
def vllm_tp_heads(cfg, target):
    heads = cfg.model.num_attention_heads
    if not heads:
        return skipped("the model's config gives no attention-head count")
    found = f"{heads} attention heads at --tensor-parallel-size {cfg.tp_size}"
    if heads % cfg.tp_size == 0:
        return passed(found, "the head count divisible by the TP size")
    sizes = [t for t in (1, 2, 4, 8, 16, 32) if t < cfg.tp_size and heads % t == 0]
    return failed(found, "the head count divisible by the TP size", [f"--tensor-parallel-size {sizes[-1]}"])


@rule(
    id="vllm-float-kv-dtype",
    title="A float16/bfloat16 KV cache matches the model dtype",
    engine="vllm",
    versions="vllm>=0.33.0",
    verified=(
        "vllm 0.33.0: VllmConfig._reject_mismatched_float_kv_cache (config/vllm.py:1492-1508, called at :1540); "
        "grep '_reject_mismatched_float_kv_cache' finds nothing in config/vllm.py of 0.11.1-0.32.0 "
        "(the extracted wheels of bench/release_walk.py)"
    ),
    needs_gpu=True,
    stage="startup",
    prevents='kv_cache_dtype="{cache_dtype}" is incompatible with dtype="{model_dtype}". Please set '
    "`--kv-cache-dtype` to `auto` or `{model_dtype}`.",
    source="vllm-project/vllm@v0.33.0: vllm/config/vllm.py:1492-1508, VllmConfig._reject_mismatched_float_kv_cache "
    "(called from VllmConfig.__post_init__, :1540)",
    docs="""Checks that an explicit `--kv-cache-dtype float16` or `bfloat16` is the dtype the model runs in.

vLLM 0.33.0 builds its config with VllmConfig.__post_init__, which refuses an unquantised KV dtype other
than the model's (vllm/config/vllm.py:1492-1508): `--kv-cache-dtype bfloat16` with `--dtype float16`, or
with a bfloat16 checkpoint on a GPU below SM80 (vLLM runs it in float16, or float32 for Gemma 2/3). The
model dtype is vLLM's resolution (rule vllm-bf16-arch). Not in vllm 0.32.0 or older (config/vllm.py of
0.11.1-0.32.0 has no such check); found by bench/vllm_oracle_diff.py.""",
    fix_title="Use --kv-cache-dtype auto (or the model's dtype)",
)
def vllm_float_kv_dtype(cfg, target):
    kv = cfg.kv_cache_dtype
    if kv not in ("float16", "bfloat16"):
        return skipped("applies to --kv-cache-dtype float16 / bfloat16")
    model_dtype = vllm.model_dtype(cfg, target.cc)
    if model_dtype is None:
        return unknown("the model's dtype could not be read from its config")
    found = f"--kv-cache-dtype {kv} with the model in {model_dtype} on {gpu(target)}"
    if model_dtype == kv:
        return passed(found, "the model's dtype")
    required = f"auto or {model_dtype}" if model_dtype in ("float16", "bfloat16") else "auto"
    return failed(found, required, ["--kv-cache-dtype auto"])


@rule(
    id="vllm-inkling-paged-kv",
    title="vLLM's Inkling attention pages its KV cache, which its FA4 kernel cannot read on SM8x/SM12x",
    engine="vllm",
    versions="vllm>=0.26.0,<0.28.0",
    verified=(
        "vllm 0.26.0, 0.27.0 and 0.27.1 wheels: Inkling registered from 0.26.0 (model_executor/models/"
        "registry.py:162-165; not in 0.25.1); fa4_rel_attention.py _use_sheared_bias is major in (10, 11) and "
        "inkling_fa4_rel_attention passes page_table=block_table (0.26.0 :152, 0.27.0/0.27.1 :159); the "
        "vendored FA4 asserts page_table is None on SM12x (vllm_flash_attn/cute/interface.py:1091 in 0.26.0, "
        ":1101 in 0.27.0/0.27.1) and SM8x (:942 in 0.26.0, :952 in 0.27.0/0.27.1). 0.28.0 has a new SM120 "
        "forward without that assert (not judged)"
    ),
    needs_model=True,
    needs_gpu=True,
    stage="runtime",
    prevents="Paged KV not supported on SM 12.0 in this PR",
    source=kb.INKLING_SOURCE + "; vllm/vllm_flash_attn/cute/interface.py, _flash_attn_fwd",
    references=("https://github.com/vllm-project/vllm/issues/51405",),
    docs="""Checks that an Inkling model (InklingForConditionalGeneration / InklingForCausalLM) is served by
vLLM 0.26-0.27 on a GPU whose Inkling attention kernel reads a paged KV cache: SM90, SM100, SM110.

Inkling brings its own relative attention, whatever --attention-backend names: on SM10x/SM11x the bundled
tml_fa4 with a sheared bias, elsewhere vLLM's vendored FA4 with a score_mod, and always with the paged KV
cache's block table. The vendored FA4 has no paged KV on SM12x ("Paged KV not supported on SM 12.0 in this
PR") or SM8x ("paged KV not supported on SM 8.0"), so on an RTX 50xx / RTX PRO 6000 / GB10 or an A100 the
server dies in its first forward (the start-up profile run). vLLM 0.28.0 replaces the SM120 forward.""",
    fix_title="Serve Inkling on SM90/SM100 with vLLM 0.26-0.27, or use another engine release",
)
def vllm_inkling_paged_kv(cfg, target):
    if cfg.model.architecture not in kb.INKLING_ARCHITECTURES:
        return skipped("applies to Inkling models")
    found = f"Inkling on {gpu(target)}"
    required = "SM90, SM100 or SM110 (a kernel that reads the paged KV cache)"
    if target.major in kb.INKLING_PAGED_KV_MAJORS:
        return passed(found, required)
    return failed(found, required, [])


@rule(
    id="vllm-sparse-mla-arch",
    title="A DeepSeek sparse attention (DSA) model needs a GPU one of the release's sparse MLA backends runs on",
    engine="vllm",
    versions="vllm>=0.11.2",
    verified=(
        "vllm 0.11.2-0.33.0: the sparse MLA entries of platforms/cuda.py _get_backend_priorities and each sparse "
        "backend's supports_compute_capability, read in 0.11.2, 0.12.0, 0.13.0, 0.14.1, 0.16.0, 0.17.0, 0.19.1, "
        "0.20.0, 0.22.1, 0.23.0 (FLASHMLA_SPARSE majors 9/10, FLASHINFER_MLA_SPARSE 10: no SM12x branch) and "
        "0.24.0, 0.25.0, 0.26.0, 0.30.0, 0.33.0 (an SM12x branch with FLASHINFER_MLA_SPARSE_SM120, major 12); "
        "rules/engines/vllm/capabilities.py SPARSE_MLA_ARCHS"
    ),
    needs_gpu=True,
    needs_model=True,
    stage="startup",
    prevents=kb.NONE_VALID.format(
        config="AttentionSelectorConfig(head_size=576, use_mla=True, use_sparse=True)",
        reasons="{FLASHMLA_SPARSE: [compute capability not supported]}",
    ),
    source=kb.SPARSE_MLA_ARCHS_SOURCE + "; " + kb.VALIDATE_SOURCE + " (use_sparse != cls.is_sparse())",
    docs="""Checks that a model with DeepSeek sparse attention (an `index_topk` indexer: DeepSeek-V3.2(-Exp),
GLM-5/5.1) runs on a GPU where some sparse MLA backend of the target's vLLM release runs.

vLLM marks such layers sparse, and only a sparse MLA backend validates them ("sparse not supported" for the
dense ones). Through vLLM 0.23 the sparse backends were FLASHMLA_SPARSE (SM90, SM100) and, from 0.17,
FLASHINFER_MLA_SPARSE (SM100), so an SM12x GPU (RTX PRO 6000, RTX 5090, GB10 / DGX Spark) or anything below
SM90 gets "No valid attention backend found" when the layers are built (vllm#31480 on 0.13, vllm#45317 on
0.22). vLLM 0.24.0 added FLASHINFER_MLA_SPARSE_SM120 to the SM12x list.""",
    fix_title="Run on SM90/SM100, or upgrade to vllm >= 0.24.0 on SM12x (FLASHINFER_MLA_SPARSE_SM120)",
)
def vllm_sparse_mla_arch(cfg, target):
    if not cfg.model.dsa or not vllm.uses_mla(cfg):
        return skipped("applies to models with DeepSeek sparse attention (index_topk) run as MLA")
    entry = kb.sparse_mla_archs(vllm.release_of(target))
    need = "compute capability " + " or ".join(f"{m}.x" for m in sorted(entry.majors))
    if target.major in entry.majors:
        return passed(f"a DSA model on {gpu(target)}", need)
    newer = kb.SPARSE_MLA_ARCHS[-1]
    fix = [f"upgrade to vllm >= {newer.since}"] if target.major in newer.majors else ["run on an SM90 or SM100 GPU"]
    release = vllm.release_of(target) or f"{kb.VLLM_VERSION} (newest read)"
    return failed(f"a DSA model on {gpu(target)} with vllm {release}", f"{need} ({entry.backends})", fix)


@rule(
    id="vllm-quantization-arch",
    title="The checkpoint's quantization method runs on this GPU and in this model dtype",
    engine="vllm",
    versions="vllm>=0.10.1",
    verified=(
        "vllm 0.10.1-0.33.0: VllmConfig._get_quantization_config raises both messages (config/__init__.py:3455 "
        "in 0.10.1, :264 in 0.11.0; config/vllm.py:374 in 0.12.0, :393 in 0.13.0, :422 in 0.15.0, :513 in 0.17.0, :525 in 0.19.1, :940 in 0.33.0); each method's "
        "get_min_capability / get_supported_act_dtypes per range in rules/knowledge/vllm_quantization.py, read in "
        "0.10.1, 0.11.0, 0.12.0, 0.13.0, 0.14.1, 0.15.0, 0.17.0, 0.19.1 and 0.33.0 (a release in no range read is unknown)"
    ),
    needs_gpu=True,
    needs_model=True,
    stage="startup",
    prevents=kb_quant.MIN_CAPABILITY_MESSAGE.format(method="mxfp4", minimum=80, current=75),
    source=kb_quant.SOURCE["vllm"],
    docs="""Checks that the checkpoint's quantization method (config.json `quantization_config`, or
`--quantization`) accepts this GPU's compute capability and the model dtype vLLM runs in.

vLLM refuses, when it builds its config and before any weight loads, a GPU below the method's minimum
capability (gpt-oss's mxfp4 needs SM80, fp8 SM75 from vllm 0.14.1 and SM80 in 0.13, ModelOpt FP8 SM89
before 0.20 and SM80 in 0.33, ModelOpt NVFP4 SM75) and a model dtype the method cannot take ("torch.float16
is not supported for quantization method gpt_oss_mxfp4": mxfp4 runs in bfloat16 only).""",
    fix_title="Use a GPU of the method's minimum compute capability, or a dtype it supports (--dtype bfloat16)",
)
def vllm_quantization_arch(cfg, target):
    flag = cfg.flags.get("quantization")
    method = flag.lower() if isinstance(flag, str) else cfg.model.quant_method
    if method is None:
        return skipped("the checkpoint is not quantized")
    gate, known = kb_quant.gate_for("vllm", method, vllm.release_of(target))
    if not known:
        return skipped(f"quantization method {method} is not modelled")
    if gate is None:
        return unknown(f"quantization method {method}: vllm {vllm.release_of(target)} was not read")
    assert target.cc is not None, "needs_gpu"
    current = target.cc[0] * 10 + target.cc[1]
    if current < gate.min_capability:
        return failed(
            f"quantization {method} on {gpu(target)} (capability {current})",
            f"capability {gate.min_capability} or newer",
            [],
            reason=kb_quant.MIN_CAPABILITY_MESSAGE.format(method=method, minimum=gate.min_capability, current=current),
        )
    dtype = vllm.model_dtype(cfg, target.cc)
    if dtype is None:
        return unknown("the model's dtype could not be read from its config")
    dtypes = ", ".join(sorted(gate.act_dtypes))
    if dtype not in gate.act_dtypes:
        fix = ["--dtype bfloat16"] if "bfloat16" in gate.act_dtypes and target.cc >= (8, 0) else []
        return failed(
            f"quantization {method} with the model in {dtype}",
            f"a dtype of {dtypes}",
            fix,
            reason=kb_quant.ACT_DTYPE_MESSAGE.format(dtype=f"torch.{dtype}", method=method, dtypes=dtypes),
        )
    return passed(f"quantization {method} on {gpu(target)} in {dtype}", f"capability >= {gate.min_capability}")
