"""vLLM: what the model and its dtypes ask of the GPU and the release that rows cannot state (constraints/model.py
holds the rest): bfloat16, a float KV cache against the model dtype, tensor-parallel heads, DeepSeek sparse
attention's backends per arch, and the checkpoint's quantization method."""

from __future__ import annotations

from attn_preflight.rules.checks.common import gpu, quantization_gate
from attn_preflight.rules.core.engine import Outcome, failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.knowledge import quantization as kb_quant


@rule(
    id="vllm-bf16-arch",
    title="bfloat16 needs compute capability 8.0",
    engine="vllm",
    versions="vllm>=0.10.0",
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


DCP_SOURCE = "vllm-project/vllm@v0.33.0: vllm/config/model.py, ModelConfig.verify_with_parallel_config (`if dcp > 1 and not self.use_mla`)"


@rule(
    id="vllm-dcp-gqa-tp",
    title="vLLM: decode context parallelism on a GQA/MQA model needs TP above its KV heads",
    engine="vllm",
    versions="vllm>=0.33.0",
    needs_model=True,
    stage="startup",
    prevents="Decode context parallelism for GQA/MQA requires --tensor-parallel-size ({tp}) to be greater than the "
    "model's total number of KV heads ({kv_heads}).",
    source=DCP_SOURCE + "; tp_size=N must be divisible by dcp_size=M.",
    docs="""Checks `--decode-context-parallel-size` / `-dcp` above 1 on a model without MLA: TP must exceed the model's
KV-head count and divide by the DCP size.

vLLM shards the KV cache by sequence across the ranks that hold a replica of the same KV head, so each KV head
must be replicated (TP above the KV heads); it refuses either condition when it builds its config, before any
weight loads. An MLA model (one latent KV head) takes the other branch and is not judged here.""",
    fix_title="Drop -dcp (1), or raise --tensor-parallel-size above the KV-head count",
)
def vllm_dcp_gqa_tp(cfg, target):
    dcp = cfg.flags.get("vllm_dcp_size") or 1
    if dcp <= 1:
        return skipped("no --decode-context-parallel-size above 1")
    if cfg.mla:
        return skipped("an MLA model: the GQA/MQA condition does not apply")
    kv_heads = cfg.model.num_key_value_heads or cfg.model.num_attention_heads
    if not kv_heads:
        return unknown("the model's config gives no KV-head count")
    found = f"-dcp {dcp} at --tensor-parallel-size {cfg.tp_size} with {kv_heads} KV heads"
    required = f"--tensor-parallel-size above {kv_heads} and divisible by {dcp}"
    if cfg.tp_size > kv_heads and cfg.tp_size % dcp == 0:
        return passed(found, required)
    return failed(found, required, ["--decode-context-parallel-size 1"])


@rule(
    id="vllm-tp-heads",
    title="vLLM: attention heads split evenly over tensor-parallel ranks",
    engine="vllm",
    versions="vllm>=0.10.0",
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
    id="vllm-sparse-mla-arch",
    title="A DeepSeek sparse attention (DSA) model needs a GPU one of the release's sparse MLA backends runs on",
    engine="vllm",
    versions="vllm>=0.11.2",
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
    gated = quantization_gate(cfg, target, "vllm", vllm.release_of(target))
    if isinstance(gated, Outcome):
        return gated
    method, gate = gated
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
