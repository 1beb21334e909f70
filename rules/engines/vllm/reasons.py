"""vLLM's backend validation as one generated family: one rule per reason that validate_configuration (or a
backend's supports_combination) gives against a named backend, with the ids users see.

A row states the reason's key in the validator (capabilities.REASONS, read through `select.rejections`), what
must be known for it to apply, how the finding words what was found and what the declaration requires, and the
fix as a policy: `instead` is the backend vLLM's own priority list picks for the same config, the KV and dtype
policies re-validate the query with each other value, and a step that is no policy name is the fix itself.
`judge` is the one check of every row: it never decides a reason, it asks the validator.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Callable, Collection, NamedTuple

from attn_preflight.rules.checks.common import gpu, kv_found, kv_unquantised_fix
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import Outcome, failed, generated_rule, passed, skipped, unknown
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.engines.vllm import capabilities as kb
from attn_preflight.rules.engines.vllm import select as vllm
from attn_preflight.rules.engines.vllm import wording


class ReasonRule(NamedTuple):
    id: str
    keys: tuple[str, ...]  # the validator's reason keys this rule reports (capabilities.REASONS)
    title: str
    versions: str
    stage: str
    source: str
    docs: str
    found: str  # what was found, formatted with the query's fields, `kv` (as given or resolved) and `sparsity`
    required: str  # what the declaration requires, formatted with DECLARED
    fix: tuple[str, ...]  # FIXES policy names; any other step is the fix as written
    fix_title: str
    applies: tuple[str, ...] = ()  # APPLIES names: what must hold (be known) before the validator is asked
    fallback: str = ""  # the backend to name when the policies give no fix
    every_layer: bool = False  # validated for each distinct head size of the model's layers
    unmodelled_unknown: bool = False  # a CUDA backend whose constraints are not modelled: unknown, not skipped
    prevents: str = ""  # "": the reason's own text
    backends: Collection[str] = ()
    references: tuple[str, ...] = ()


class Needed(NamedTuple):
    holds: Callable[[Config, Target, kb.VllmBackend, kb.VllmQuery], bool]
    text: str
    status: Callable[[str], Outcome] = skipped  # unknown: it should be known and is not


# What a row may need before the validator is asked; the finding is skipped (or unknown) where it does not hold.
APPLIES: dict[str, Needed] = {
    "mla": Needed(lambda cfg, target, b, q: vllm.uses_mla(cfg), "applies to MLA models (vLLM runs them as MLA)"),
    "mla_known": Needed(
        lambda cfg, target, b, q: cfg.model is not None or "mla" in cfg.features,
        "needs the model (--model) to know whether it uses MLA",
    ),
    "dense_mla": Needed(
        lambda cfg, target, b, q: not q.use_sparse, "a sparse MLA model (rule vllm-sparse-mla-backend)"
    ),
    "sinks": Needed(lambda cfg, target, b, q: "sinks" in cfg.features, "the model has no attention sinks"),
    "sliding_window": Needed(
        lambda cfg, target, b, q: "sliding_window" in cfg.features, "the model has no sliding-window layers"
    ),
    "block_size": Needed(
        lambda cfg, target, b, q: cfg.page_size is not None, "no --block-size given: vLLM picks one the backend accepts"
    ),
    "quantised_kv": Needed(
        lambda cfg, target, b, q: kb.is_quantised_kv(cfg.kv_cache_dtype), "the KV cache is not quantised"
    ),
    "nvfp4_kv": Needed(
        lambda cfg, target, b, q: cfg.kv_cache_dtype.startswith("nvfp4"), "applies to an NVFP4 KV cache"
    ),
    "nvfp4_fa2": Needed(
        lambda cfg, target, b, q: kb.flashinfer_nvfp4_fa2(q), "the GPU does not use FlashInfer's FA2 path for NVFP4"
    ),
    "head_size": Needed(lambda cfg, target, b, q: q.head_size is not None, "needs the model's head size (--model)"),
    "qk_nope_head_dim": Needed(
        lambda cfg, target, b, q: q.qk_nope_head_dim is not None, "needs the model's qk_nope_head_dim (--model)"
    ),
    "qk_nope_checked": Needed(
        lambda cfg, target, b, q: b.qk_nope_head_dims is not None, "the release checks no qk_nope_head_dim"
    ),
    "mla_dims": Needed(
        lambda cfg, target, b, q: None not in (q.qk_nope_head_dim, q.qk_rope_head_dim, q.v_head_dim),
        "needs the model's MLA dimensions (--model)",
    ),
    # a --dtype vLLM does not have cannot be judged; with --dtype auto, only a model's config says the dtype
    "dtype_readable": Needed(
        lambda cfg, target, b, q: cfg.dtype == "auto" or vllm.model_dtype(cfg, q.cc) is not None,
        f"--dtype is not one of vLLM's dtypes ({', '.join(kb.MODEL_DTYPES)})",
        unknown,
    ),
    "dtype": Needed(
        lambda cfg, target, b, q: vllm.model_dtype(cfg, q.cc) is not None,
        "needs the model's dtype (--model or --dtype)",
    ),
}


def _clearing(backend: kb.VllmBackend, q: kb.VllmQuery, target: Target, key: str, field: str, values) -> list:
    """The values of a query field with which the validator no longer gives `key`, in the order given."""
    return [v for v in values if key not in vllm.rejections(backend, replace(q, **{field: v}), target)]


def _usable_dtype(cfg: Config, target: Target, backend: kb.VllmBackend, q: kb.VllmQuery) -> list[str]:
    """--dtype of the first half-precision dtype the backend takes that vLLM runs this model and GPU in."""
    assert target.cc is not None, "judged after named_backend"
    model_type = cfg.model.model_type if cfg.model else None
    runnable = [
        d
        for d in ("bfloat16", "float16")
        if (d != "bfloat16" or target.cc >= (8, 0))
        and not (d == "float16" and model_type in kb.FLOAT16_UNSUPPORTED_MODELS)
    ]
    return [f"--dtype {d}" for d in _clearing(backend, q, target, "dtype", "dtype", runnable)][:1]


def _accepted_unquantised_kv(cfg: Config, target: Target, backend: kb.VllmBackend, q: kb.VllmQuery) -> list[str]:
    accepted = _clearing(backend, q, target, "kv_cache_dtype", "kv_dtype", sorted(backend.kv_dtypes or ()))
    return [f for f in kv_unquantised_fix(cfg, target, q.dtype) if f.split()[-1] in accepted]


FIXES: dict[str, Callable[[Config, Target, kb.VllmBackend, kb.VllmQuery], list[str]]] = {
    "instead": lambda cfg, target, b, q: vllm.instead(q, target, b.name),
    # float32 is taken by no backend of the default's kind but TRITON_ATTN / FLEX_ATTENTION: vLLM's own pick
    "instead_for_float32": lambda cfg, target, b, q: (
        vllm.instead(q, target, b.name) if q.dtype == "float32" and not q.use_mla else []
    ),
    "unquantised_kv": lambda cfg, target, b, q: kv_unquantised_fix(cfg, target, q.dtype),
    "accepted_unquantised_kv": _accepted_unquantised_kv,
    "dtype": _usable_dtype,
}


class _Declared(dict):
    """What the backend's declaration admits, worded on demand for a row's `required`."""

    def __init__(self, backend: kb.VllmBackend, q: kb.VllmQuery, target: Target):
        super().__init__()
        self.backend, self.q, self.target = backend, q, target

    def __missing__(self, name: str) -> str:
        b, q = self.backend, self.q
        if name == "archs":
            return b.archs.describe()
        if name == "head_sizes":
            return b.head_sizes.describe(q.cc)
        if name == "dtypes":
            return " or ".join(sorted(b.dtypes))
        if name == "block_sizes":
            return b.describe_block_sizes()
        if name == "kv_dtypes":
            return ", ".join(_clearing(b, q, self.target, "kv_cache_dtype", "kv_dtype", sorted(b.kv_dtypes or ())))
        if name == "qk_nope_head_dims":
            return " or ".join(map(str, b.qk_nope_head_dims or ()))
        if name == "tokenspeed_dims":
            return wording.tokenspeed_dims()
        raise KeyError(name)


def judge(row: ReasonRule, cfg: Config, target: Target) -> Outcome:
    """The one check of every reason row: the named backend, what the row needs, then the validator's answer."""
    if row.unmodelled_unknown:
        named = kb.BY_NAME.get(cfg.attention_backend or "")
        if named is not None and named.platform == "cuda" and not named.modelled:
            return unknown(
                f"{named.name}: attn-preflight does not model this backend's constraints; vLLM validates it at start-up"
            )
    backend, outcome = vllm.named_backend(cfg, target)
    if outcome is not None:
        return outcome
    assert backend is not None, "named_backend gives a backend or an outcome"
    queries = vllm.layer_queries(cfg, target) if row.every_layer else (vllm.query(cfg, target),)
    for name in row.applies:
        needed = APPLIES[name]
        if not needed.holds(cfg, target, backend, queries[0]):
            return needed.status(needed.text)
    refused = [(q, [r for key, r in vllm.rejections(backend, q, target).items() if key in row.keys]) for q in queries]
    q, hits = next(((q, hits) for q, hits in refused if hits), (queries[0], []))
    words = {**asdict(q), "kv": kv_found(cfg, target), "sparsity": "a sparse-attention" if q.use_sparse else "a dense"}
    found = f"{row.found.format_map(words)} on {backend.name}, {gpu(target)}"
    required = row.required.format_map(_Declared(backend, q, target))
    if not hits:
        return passed(found, required)
    fix = [
        step for policy in row.fix for step in (FIXES[policy](cfg, target, backend, q) if policy in FIXES else [policy])
    ]
    if not fix and row.fallback:
        fix = [vllm.use_backend(row.fallback, target)]
    return failed(found, required, fix, reason=hits[0].text)


ROWS = (
    ReasonRule(
        id="vllm-compute-capability",
        keys=("cc",),
        title="The vLLM attention backend supports this GPU's compute capability",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supports_compute_capability",
        docs="""Checks the GPU's compute capability against the named backend's `supports_compute_capability`.

vLLM {release} declares: {each:archs}. FLASHINFER excludes SM75 until flashinfer#3621 lands; dense FlashMLA
is further limited to Hopper (rule vllm-flashmla-dense-hopper); a major of 10.x is SM100/SM103, not SM110.
Older releases: {history:archs}.

An explicitly named backend that fails raises "Selected backend … is not valid for this configuration.
Reason: ['compute capability not supported']" at start-up; vLLM does not fall back to another backend.
The FA versions inside FLASH_ATTN have their own arch limits (rule vllm-flash-attn-version).""",
        found="compute capability {cc[0]}.{cc[1]}",
        required="compute capability {archs}",
        fix=("instead",),
        fix_title="Use the backend vLLM would pick on this GPU (shown in the fix), or drop --attention-backend",
        unmodelled_unknown=True,
        references=(vllm.DOCS_URL,),
    ),
    ReasonRule(
        id="vllm-flashmla-dense-hopper",
        keys=("flashmla_dense",),
        title="Dense FlashMLA runs on Hopper only",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.FLASHMLA_DENSE_SOURCE,
        docs="""Checks that `--attention-backend FLASHMLA` with a dense (non-sparse) MLA model runs on SM90.

FlashMLABackend.supports_compute_capability accepts {archs:FLASHMLA}, but its supports_combination asks
is_flashmla_dense_supported(), which allows Hopper only; on SM100 the dense kernels are not there. Sparse
MLA models (DeepSeek-V3.2) use FLASHMLA_SPARSE, which does run on SM100. (The backends matrix of
2026-05 listed FLASHMLA as 9.x-10.x from supports_compute_capability alone; the combination check is
what decides.)""",
        applies=("dense_mla",),
        found="dense MLA",
        required="Hopper (9.x)",
        fix=("instead",),
        fix_title="Use the dense MLA backend vLLM picks: {picks:mla}",
        backends=("FLASHMLA",),
    ),
    ReasonRule(
        id="vllm-head-size",
        keys=("head_size",),
        title="The vLLM attention backend supports the model's head size",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supports_head_size / get_supported_head_sizes",
        docs="""Checks the head size of every attention layer of the model against the named backend's supported
head sizes (vLLM validates the backend for each layer: Gemma-4's full-attention layers have global_head_dim 512).

vLLM {release} declares: {each:head_sizes}. FLASH_ATTN's wider bound is where FA4 runs. MLA backends see the
latent head (kv_lora_rank + qk_rope_head_dim: 576 for DeepSeek V2/V3); the dense ones inherit theirs from
MLACommonBackend. Older releases: {history:head_sizes}.""",
        applies=("head_size",),
        found="head size {head_size}",
        required="head size {head_sizes}",
        fix=("instead",),
        fix_title="Use a backend that takes this head size (TRITON_ATTN takes {head_sizes:TRITON_ATTN})",
        every_layer=True,
    ),
    ReasonRule(
        id="vllm-dtype",
        keys=("dtype",),
        title="The vLLM attention backend supports the model dtype",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supported_dtypes",
        docs="""Checks the dtype vLLM runs the model in (`--dtype`, or the config's torch_dtype resolved as
vLLM does) against the named backend's supported_dtypes.

Only {with:dtypes=float32} take float32. vLLM {release} declares: {each:dtypes}. With `--dtype auto`, vLLM
downcasts a float32 checkpoint to bfloat16 (float16 below SM80).""",
        applies=("dtype_readable", "dtype"),
        found="{dtype}",
        required="{dtypes}",
        fix=("dtype", "instead_for_float32"),
        fix_title="Use --dtype bfloat16 (float16 below SM80), or {with:dtypes=float32} for float32",
    ),
    ReasonRule(
        id="vllm-kv-cache-dtype",
        keys=("kv_cache_dtype",),
        title="The vLLM attention backend supports the KV-cache dtype",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supported_kv_cache_dtypes / supports_kv_cache_dtype",
        docs="""Checks `--kv-cache-dtype` against the named backend's supported KV-cache dtypes on this GPU.

The quantised KV dtypes vLLM {release} declares, with the archs a dtype is limited to: {each:kv_dtypes}. Of
the model's own dtypes, {without:kv_dtypes=auto} do not take auto and {without:kv_dtypes=float16} do not take
float16. FLASH_ATTN's fp8 archs are where FA3 or FA4 resolves; FLASHINFER serves nvfp4 through its FA2 path
below SM100 and TRT-LLM on SM10x; FLASHMLA_SPARSE's fp8 is an alias of fp8_ds_mla.""",
        found="{kv}",
        required="one of {kv_dtypes}",
        fix=("accepted_unquantised_kv", "instead"),
        fix_title="Use --kv-cache-dtype auto, or a backend that stores this KV dtype (shown in the fix)",
    ),
    ReasonRule(
        id="vllm-flash-attn-fp8-kv",
        keys=("fa_fp8_kv",),
        title="FLASH_ATTN stores an FP8 KV cache only with FA3 on SM90 or FA4 on SM100",
        versions="vllm>=0.30.0",
        stage="startup",
        source=kb.FA_FP8_KV_SOURCE,
        docs="""Checks that FLASH_ATTN with `--kv-cache-dtype fp8`/`fp8_e4m3` resolves a FlashAttention version
that reads FP8 KV for this model: FA3 on SM90, FA4 with head size 512 on SM90, or FA4 on SM100.

The FA version depends on the head size: on SM100, FA4 keeps head sizes up to 128, 192/128 and 256 (the
hd256 kernel, which itself falls back to FA2 with a quantised KV cache), so e.g. head size 256 with fp8 KV
on a B200 resolves FA2 and fails. vLLM raises "Selected backend FLASH_ATTN is not valid … Reason: ['FP8 KV
cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100']".""",
        applies=("quantised_kv", "head_size"),
        found="{kv} at head size {head_size}",
        required="FA3 on SM90, FA4 with head size 512 on SM90, or FA4 on SM100",
        fix=("unquantised_kv", "instead"),
        fix_title="Use {with:kv_dtypes=fp8|mha} for FP8 KV, or --kv-cache-dtype auto",
        backends=("FLASH_ATTN",),
    ),
    ReasonRule(
        id="vllm-flashinfer-nvfp4-head64",
        keys=("fi_nvfp4_head64",),
        title="FlashInfer's FA2 path cannot read an NVFP4 KV cache at head size 64",
        versions="vllm>=0.32.0",
        stage="startup",
        source=kb.FI_NVFP4_SOURCE,
        docs="""Checks FLASHINFER with an NVFP4 KV cache and head size 64 on SM8x, SM9x or SM12x.

There FlashInfer serves NVFP4 KV through its FA2 prefill path, which misreads an NVFP4 cache at head size
64; SM10x uses TRT-LLM kernels instead and is not affected.""",
        applies=("nvfp4_kv", "nvfp4_fa2", "head_size"),
        found="{kv} at head size {head_size}",
        required="no head size 64 with NVFP4 KV below SM100",
        fix=("--kv-cache-dtype fp8",),
        fix_title="Use --kv-cache-dtype fp8 on this GPU, or run NVFP4 KV on SM100",
        backends=("FLASHINFER",),
    ),
    ReasonRule(
        id="vllm-flashinfer-nvfp4-sinks",
        keys=("fi_nvfp4_sinks",),
        title="FlashInfer's sink prefill cannot read an NVFP4 KV cache",
        versions="vllm>=0.32.0",
        stage="startup",
        source=kb.FI_NVFP4_SOURCE,
        docs="""Checks FLASHINFER with an NVFP4 KV cache for a model with attention sinks (GPT-OSS) on SM8x,
SM9x or SM12x.

Below SM100 FlashInfer serves NVFP4 KV through its FA2 path, and the prefill wrapper that applies sinks
cannot read NVFP4 pages, so vLLM rejects the combination in FlashInferBackend.supports_combination. On
SM100/SM103 the TRT-LLM kernels handle both.""",
        applies=("nvfp4_kv", "nvfp4_fa2"),
        found="{kv} with attention sinks",
        required="no attention sinks with NVFP4 KV below SM100",
        fix=("--kv-cache-dtype fp8",),
        fix_title="Use --kv-cache-dtype fp8 on this GPU, or run NVFP4 KV on SM100",
        backends=("FLASHINFER",),
    ),
    ReasonRule(
        id="vllm-sinks",
        keys=("sinks",),
        title="The vLLM attention backend supports attention sinks",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supports_sink",
        docs="""Checks that a model with learnable attention sinks (GPT-OSS) is served by a backend whose
supports_sink() holds on this GPU.

vLLM {release} declares sinks on: {each:sinks|mha}; on {with:sinks|mla} of the MLA backends. FLASH_ATTN
takes sinks only where FA3 or FA4 resolves (also "sink not supported on compute capability < 9.0"), before
vLLM 0.20.0 only FA3, so SM90 (fa_utils.flash_attn_supports_sinks: version == 3). FLASHINFER serves them
through TRT-LLM kernels on SM10x and XQA decode on its other archs (needs FlashInfer's cubins); by release:
{history:sinks:FLASHINFER} (vllm#28589: gpt-oss on a GB10 with vLLM 0.11.1). Through 0.17.x vLLM words the
refusal "sink setting not supported". Before 0.11.1 no named backend is validated (rule
vllm-sinks-unvalidated).""",
        applies=("sinks",),
        found="a model with attention sinks",
        required="a backend with sink support on this GPU",
        fix=("instead",),
        fallback="TRITON_ATTN",
        fix_title="Use the backend vLLM picks for a sink model: {picks:sinks}",
    ),
    ReasonRule(
        id="vllm-mla-model-backend",
        keys=("mla",),
        title="An MLA model needs an MLA backend",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + " (use_mla != cls.is_mla())",
        docs="""Checks that a multi-head-latent-attention model (DeepSeek V2/V3/R1, Kimi K2, GLM-4.7-Flash, …)
is not given a non-MLA backend ({backends:mha}).

vLLM runs these models' attention as MLA (unless VLLM_MLA_DISABLE=1) and validate_configuration rejects a
non-MLA backend with "MLA not supported". The dense MLA backends run on: {each:archs|dense} (dense FlashMLA
on Hopper only, rule vllm-flashmla-dense-hopper); the sparse ones ({backends:sparse}) serve
DeepSeek-V3.2-style sparse attention.""",
        applies=("mla",),
        found="an MLA model",
        required="an MLA backend",
        fix=("instead",),
        fix_title="Use an MLA backend: {picks:mla}",
    ),
    ReasonRule(
        id="vllm-non-mla-model-backend",
        keys=("non_mla",),
        title="An MLA backend needs an MLA model",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + " (use_mla != cls.is_mla())",
        docs="""Checks that an MLA backend ({backends:mla}) is not named for a model without multi-head latent
attention (Llama, Qwen, Mistral, GPT-OSS, …).

validate_configuration rejects it with "non-MLA not supported"; the same happens for an MLA model with
VLLM_MLA_DISABLE=1.""",
        applies=("mla_known",),
        found="a model without MLA",
        required="an MLA model",
        fix=("instead",),
        fix_title="Drop --attention-backend (vLLM picks {picks:mha}), or name a non-MLA backend",
        backends=kb.MLA_BACKENDS,
    ),
    ReasonRule(
        id="vllm-sparse-mla-backend",
        keys=("sparse", "non_sparse"),
        title="A sparse-attention MLA model needs a sparse MLA backend, and a dense one a dense backend",
        versions="vllm>=0.11.1rc7",
        stage="startup",
        source=kb.VALIDATE_SOURCE + " (use_sparse != cls.is_sparse()); "
        "vllm/model_executor/models/deepseek_v2.py (is_v32 = hasattr(config, 'index_topk'))",
        docs="""Checks that an MLA model with DeepSeek sparse attention (an `index_topk` indexer: DeepSeek-V3.2,
GLM-5) is on a sparse MLA backend ({backends:sparse}), and
that a dense MLA model is not ("non-sparse not supported").

vLLM marks the layers sparse when the model's config has index_topk (config.json, or the default of
transformers' GlmMoeDsaConfig for glm_moe_dsa).""",
        applies=("mla",),
        found="{sparsity} MLA model",
        required="a backend of the same sparsity",
        fix=("instead",),
        fix_title="Sparse models: {picks:sparse}; dense models: {picks:mla}",
        backends=kb.MLA_BACKENDS,
    ),
    ReasonRule(
        id="vllm-block-size",
        keys=("block_size",),
        title="--block-size is a multiple of the backend's kernel block size",
        versions="vllm>=0.20.0",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; AttentionBackend.supports_block_size; each backend's "
        "get_supported_kernel_block_sizes",
        docs="""Checks `--block-size` against the named backend's kernel block sizes: the block size must be a
multiple of one of them (vLLM splits larger blocks into kernel pages).

vLLM {release} declares: {each:block_sizes}. Older releases: {history:block_sizes}. Without --block-size vLLM
picks a size each backend accepts.""",
        applies=("block_size",),
        found="--block-size {block_size}",
        required="{block_sizes}",
        fix=("drop --block-size",),
        fix_title="Drop --block-size, or use a multiple of the backend's kernel block size",
    ),
    ReasonRule(
        id="vllm-sliding-window",
        keys=("sliding_window",),
        title="The vLLM attention backend supports sliding-window attention",
        versions="vllm>=0.26.0",
        stage="startup",
        source=kb.VALIDATE_SOURCE + "; each backend's supports_sliding_window",
        docs="""Checks that a model with sliding-window layers (Mistral, Gemma 2/3, GPT-OSS, …) is on a backend
whose supports_sliding_window() holds.

{with:sliding_window} declare it; {without:sliding_window} do not, and validate_configuration (since vllm
0.26; 0.20 had no such reason) rejects them with "sliding window not supported".""",
        applies=("sliding_window",),
        found="a sliding-window model",
        required="a backend with sliding-window support",
        fix=("instead",),
        fix_title="Use a backend that declares it: {with:sliding_window}",
    ),
    ReasonRule(
        id="vllm-flashinfer-mla-qk-nope",
        keys=("fi_mla_qk_nope",),
        title="FLASHINFER_MLA takes the model's qk_nope_head_dim",
        versions="vllm>=0.15.0",
        stage="startup",
        prevents=kb.FI_MLA_QK_NOPE_REASON.format(got=96),
        source=kb.FI_MLA_QK_NOPE_SOURCE,
        docs="""Checks the MLA model's qk_nope_head_dim (the non-rotary part of the query/key head) for
FLASHINFER_MLA, against the values the target's vLLM release accepts.

FlashInfer's TRT-LLM MLA kernels are built for a few qk_nope_head_dim values (DeepSeek V2/V3/R1 and Kimi K2
use 128); FlashInferMLABackend.supports_combination rejects any other value. By release:
{history:qk_nope_head_dims:FLASHINFER_MLA}.""",
        applies=("mla", "qk_nope_head_dim", "qk_nope_checked"),
        found="qk_nope_head_dim {qk_nope_head_dim}",
        required="qk_nope_head_dim {qk_nope_head_dims}",
        fix=("instead",),
        fix_title="Use the MLA backend vLLM picks for this model (shown in the fix)",
        backends=("FLASHINFER_MLA",),
    ),
    ReasonRule(
        id="vllm-tokenspeed-mla-dims",
        keys=("tokenspeed_dims",),
        title="TOKENSPEED_MLA needs the qk_nope/qk_rope/v head dims {tokenspeed_dims}",
        versions="vllm>=0.21.0",
        stage="startup",
        prevents=kb.TOKENSPEED_DIMS_REASON.format(got="192, 64, 128"),
        source=kb.TOKENSPEED_SOURCE,
        docs="""Checks that TOKENSPEED_MLA serves a model whose qk_nope/qk_rope/v head dims are {tokenspeed_dims}
(DeepSeek V3/R1, Kimi K2).

The tokenspeed-mla kernels exist for those dimensions only, and TokenspeedMLABackend.supports_combination
rejects others. The backend also needs a KV cache of {kv_dtypes:TOKENSPEED_MLA} (rule vllm-kv-cache-dtype)
and the tokenspeed-mla package, and runs on {archs:TOKENSPEED_MLA} only.""",
        applies=("mla", "mla_dims"),
        found="qk_nope/qk_rope/v head dims {qk_nope_head_dim}/{qk_rope_head_dim}/{v_head_dim}",
        required="{tokenspeed_dims}",
        fix=("instead",),
        fix_title="Use another MLA backend: {picks:mla}",
        backends=("TOKENSPEED_MLA",),
    ),
)

for _row in ROWS:

    def _check(cfg: Config, target: Target, row: ReasonRule = _row) -> Outcome:
        return judge(row, cfg, target)

    generated_rule(
        __name__,
        _row,
        _check,
        engine="vllm",
        prevents=_row.prevents or next(r.text for r in kb.REASONS if r.key == _row.keys[0]),
        worded=lambda row=_row: wording.words(row),
    )
