"""`check --smoke`: a serving config's attention kernels at the model's real shapes.

`plan(config, target)` reads the config as the engine resolved it (attn_preflight.rules.core.engine.Report.config) and returns
what to run: for each phase (prefill, decode), its attention backend's kernels (BACKEND_KERNELS) with the
shape one GPU sees (head dims, heads divided by the attention TP size, dtype, KV dtype, softcap, window,
page size), or why that phase cannot be smoked. Pure: nothing runs, no torch. `run(plan)` runs every job
once, each kernel in its own worker (runner.py), as one SmokeReport.

Phases pick kernels by role (paged decode vs. prefill) and may need different shapes (MLA prefill runs the
model's head dims, MLA decode the absorbed latent ones), so the plan builds each case itself instead of
calling run_for_shape per backend; one Runner run then keeps the kernels side by side.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

from attn_preflight.probe.smoke import BACKEND_KERNELS, ModelShape, kernels_for_backend
from attn_preflight.probe.smoke.cases import DTYPE_ALIASES, Case
from attn_preflight.probe.smoke.kernels import Kernel
from attn_preflight.probe.smoke.results import SmokeReport
from attn_preflight.probe.smoke.runner import DEFAULT_TIMEOUT_S, Progress, Runner
from attn_preflight.rules.engines.sglang import capabilities as backend_kb

PREFILL = "prefill"
DECODE = "decode"
LINEAR = "linear attention"  # a hybrid model's GDN layers (FLA's Triton kernels), beside its full attention
LINEAR_BACKEND = "fla"

# Engine backend names -> attn_preflight.probe.smoke.BACKEND_KERNELS keys. SGLang's names are the keys themselves (the declared
# backends smoke has kernels for); vLLM's FLASH_ATTN runs vLLM's own vllm_flash_attn build, which no smoke kernel
# calls, so it is not mapped.
SGLANG_BACKENDS = frozenset(BACKEND_KERNELS) & frozenset(backend_kb.SGLANG_BACKENDS)
VLLM_BACKENDS = {"FLASHINFER": "flashinfer", "FLASHMLA": "flashmla"}

# Absorbed-MLA decode (q_nope folded into the latent space): (head_dim, head_dim_v) from (rope dim, kv_lora_rank).
# FA4 takes the rope part as q/k and the latent part as `qv`/V (rules fa4-mla-arch; SGLang's
# flashattention_backend.py forward_decode passes qv), so the case sets qv; FlashMLA takes one 576 = latent + rope
# KV head (probe/smoke/kernels/flashmla.py).
ABSORBED_DIMS = {
    "fa4": lambda rope, latent: (rope, latent),
    "flashmla": lambda rope, latent: (latent + rope, latent),
}

# SGLang's dtype="auto" (python/sglang/srt/configs/model_config.py, _get_and_verify_dtype): the config's dtype,
# except that float32 (or none given) is served in float16, or bfloat16 for Gemma.
_MODEL_DTYPES = {**DTYPE_ALIASES, "float": "fp32"}
# KV-cache dtypes the smoke inputs can hold (None: the model dtype). The smoke layer has e4m3 inputs only.
_KV_DTYPES = {
    "auto": None,
    "bf16": "bf16",
    "bfloat16": "bf16",
    "float16": "fp16",
    "fp8": "fp8_e4m3",
    "fp8_e4m3": "fp8_e4m3",
    "fp8_e5m2": "fp8_e4m3",
}


def _casts_q_to_fp8(key: str) -> bool:
    """Whether the backend's FlashAttention path casts q to an FP8 KV dtype (declared feature "fp8_q_cast": sglang
    flashattention_backend.py, prepare_paged_mha_query: head_dim <= 256, non-MLA, and on fa4 only for decode)."""
    return key in backend_kb.SGLANG_BACKENDS and "fp8_q_cast" in backend_kb.SGLANG_BACKENDS[key].features


# Backends whose absorbed-MLA decode passes the latent part as `qv`.
_ABSORBED_QV = frozenset({"fa4"})
# What a model may need that no smoke kernel's API can express (sinks and score_mod go into the case: a kernel
# without the argument is skipped as unable to express it).
_NOT_EXPRESSIBLE = {
    "rel_bias": "rel_bias",
    "chunked_local": "chunked local attention",
    "cross_attention": "cross attention",
}


@dataclass(frozen=True)
class Job:
    """One kernel at one shape, for the phases (of one backend) that call it."""

    kernel: Kernel
    backend: str  # the engine's name: "fa4", "FLASHINFER"
    phases: tuple[str, ...]
    case: Case
    absorbed: bool = False  # MLA decode at the absorbed (latent) head dims, not the model's


@dataclass(frozen=True)
class Unsmokable:
    """A phase (or the whole config) that cannot be smoked, and why."""

    backend: Optional[str]
    phases: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class SmokePlan:
    jobs: tuple[Job, ...] = ()
    unsmokable: tuple[Unsmokable, ...] = ()
    notes: tuple[str, ...] = ()  # what the shapes leave out or stand in for


def phase_label(phases: Sequence[str]) -> str:
    return " and ".join(phases)


def attention_tp_size(config) -> int:
    """--tp-size, divided by --dp-size under --enable-dp-attention (as rule general-tp-heads reads it)."""
    tp = config.tp_size
    if config.flags.get("enable_dp_attention") and config.flags.get("dp_size"):
        tp = max(1, tp // int(config.flags["dp_size"]))
    return tp


def model_dtype(config) -> Optional[str]:
    """The activation dtype as a smoke dtype, or None when the smoke inputs cannot hold it."""
    if config.dtype.lower() != "auto":
        return _MODEL_DTYPES.get(config.dtype.lower())
    model = config.model
    dtype = _MODEL_DTYPES.get(model.dtype.lower()) if model.dtype else "fp32"
    if dtype == "fp32":
        return "bf16" if (model.model_type or "").startswith("gemma") else "fp16"
    return dtype


def smoke_backend(engine: str, backend: str) -> Optional[str]:
    """The BACKEND_KERNELS key for an engine's backend name, or None when smoke has no kernel for it."""
    if engine == "vllm":
        return VLLM_BACKENDS.get(backend)
    return backend if backend in SGLANG_BACKENDS else None


def _role(kernel: Kernel) -> str:
    return DECODE if kernel.quick.seqlen_q == 1 else PREFILL


def _page_size(config, target) -> Optional[int]:
    if config.engine == "sglang":
        from attn_preflight.rules.engines.sglang.resolve import effective_page_size

        return effective_page_size(config, target)
    return config.page_size  # vLLM --block-size; None: each kernel's own


def plan(config, target) -> SmokePlan:
    """What `check --smoke` runs for `config` (as resolved) on `target` (this machine)."""
    phases = [(PREFILL, config.prefill_backend), (DECODE, config.decode_backend)]
    everything = (PREFILL, DECODE)
    if not any(backend for _, backend in phases):
        why = (
            "vLLM picks its backend at start-up: name one with --attention-backend"
            if config.engine == "vllm"
            else "no attention backend resolved (SGLang picks one by GPU, and none was found): name one with "
            "--attention-backend"
        )
        return SmokePlan(unsmokable=(Unsmokable(None, everything, why),))
    model = config.model
    if model is None or not model.head_dim or not model.num_attention_heads:
        return SmokePlan(
            unsmokable=(
                Unsmokable(
                    config.backend_label(), everything, "needs the model's head dims and head counts (give --model)"
                ),
            )
        )
    tp = attention_tp_size(config)
    heads = model.num_attention_heads
    kv_heads = model.num_key_value_heads or heads
    if heads % tp or (kv_heads >= tp and kv_heads % tp and not model.mla):
        return SmokePlan(
            unsmokable=(
                Unsmokable(
                    config.backend_label(),
                    everything,
                    f"{heads} query / {kv_heads} KV heads do not split over attention "
                    f"TP size {tp} (rule general-tp-heads)",
                ),
            )
        )
    dtype = model_dtype(config)
    kv_dtype = _KV_DTYPES.get(config.kv_cache_dtype.lower())
    problem = None
    if dtype is None:
        problem = f"the smoke inputs cannot hold dtype {config.dtype if config.dtype != 'auto' else model.dtype}"
    elif config.kv_cache_dtype.lower() not in _KV_DTYPES:
        problem = f"the smoke inputs cannot hold a {config.kv_cache_dtype} KV cache"
    if problem:
        return SmokePlan(unsmokable=(Unsmokable(config.backend_label(), everything, problem),))

    notes = []
    if config.kv_cache_dtype.lower() == "fp8_e5m2":
        notes.append("the fp8_e5m2 KV cache is smoked as fp8_e4m3 (the smoke inputs are e4m3 only)")
    missing = [text for feature, text in _NOT_EXPRESSIBLE.items() if feature in config.features]
    softcap = model.softcap or 0.0
    if "softcap" in config.features and not softcap:
        missing.append("softcap (no value in the model config)")
    window = model.sliding_window
    if "sliding_window" in config.features and window is None:
        missing.append("the sliding window (no size in the model config)")
    if missing:
        notes.append("not smoked (no smoke kernel can express it): " + ", ".join(missing))
    score_mod = "rel_bias" if "score_mod" in config.features else None
    if score_mod:
        notes.append(
            "the model's score_mod is smoked as a stand-in relative bias (score - 0.01 |q_idx - kv_idx|): "
            "the kernel's custom score_mod path, not the model's own function"
        )

    base = dict(
        heads_q=heads // tp,
        heads_kv=kv_heads // tp if kv_heads >= tp else 1,
        dtype=dtype,
        kv_dtype=kv_dtype,
        softcap=softcap,
        window_left=window,
        page_size=_page_size(config, target),
        sinks="sinks" in config.features,
        score_mod=score_mod,
    )
    jobs: dict[tuple[str, Case], Job] = {}
    unsmokable = []
    for phase, backend in phases:
        key = smoke_backend(config.engine, backend) if backend else None
        if backend is None:
            unsmokable.append(
                Unsmokable(
                    None,
                    (phase,),
                    f"no {phase} backend resolved: name it with --{phase}-attention-backend or --attention-backend",
                )
            )
            continue
        if key is None:
            unsmokable.append(Unsmokable(backend, (phase,), f"smoke has no kernel for the {backend} backend"))
            continue
        kernels = kernels_for_backend(key)
        chosen = [k for k in kernels if _role(k) == phase]
        if not chosen and phase == DECODE:
            chosen = kernels  # the same kernel serves decode (torch SDPA)
        if not chosen:
            unsmokable.append(Unsmokable(backend, (phase,), f"smoke has no {phase} kernel for the {backend} backend"))
            continue
        shape, absorbed, why = _phase_shape(phase, key, model, base)
        if shape is None:
            unsmokable.append(Unsmokable(backend, (phase,), why))
            continue
        for kernel in chosen:
            try:
                case = kernel.with_shape(**shape.case_fields())
            except ValueError as err:
                unsmokable.append(Unsmokable(backend, (phase,), f"{kernel.name} cannot take this shape: {err}"))
                continue
            merged = jobs.get((kernel.name, case))
            jobs[(kernel.name, case)] = Job(
                kernel, backend, (merged.phases if merged else ()) + (phase,), case, absorbed
            )
    if model.hybrid_linear:
        linear_jobs, linear_skip, linear_notes = _linear_jobs(model, tp, dtype)
        jobs.update({(job.kernel.name, job.case): job for job in linear_jobs})
        unsmokable.extend(linear_skip)
        notes.extend(linear_notes)
    if any(job.absorbed and job.case.kv_dtype is None for job in jobs.values()) and kv_dtype == "fp8_e4m3":
        notes.append("absorbed-MLA decode on fa4 dequantizes the FP8 KV cache: smoked in the model dtype")
    return SmokePlan(tuple(jobs.values()), _merge_phases(unsmokable), tuple(notes))


def _linear_jobs(model, tp: int, dtype: Optional[str]) -> tuple[list[Job], list[Unsmokable], list[str]]:
    """A hybrid model's gated-delta-rule (GDN) layers: FLA's chunked (prefill) and fused recurrent (decode) kernels
    at the model's linear-attention heads (divided by TP) and head dims. Both engines run their own copies of these
    Triton kernels (sglang srt/layers/attention/fla/, vllm model_executor/layers/fla/ops/), so the fla package stands
    in for them: the same Triton code paths, not the engine's copy."""
    heads = dict(model.linear_heads)
    k_heads, v_heads = heads.get("linear_num_key_heads"), heads.get("linear_num_value_heads")
    if not (k_heads and v_heads and model.linear_head_dims):
        why = "smoke has kernels for gated-delta-rule (GDN) linear attention only, at the model's linear head dims"
        return [], [Unsmokable(LINEAR_BACKEND, (LINEAR,), why)], []
    if k_heads % tp or v_heads % tp:
        why = f"{k_heads} key / {v_heads} value linear-attention heads do not split over TP size {tp}"
        return [], [Unsmokable(LINEAR_BACKEND, (LINEAR,), why)], []
    jobs = []
    for kernel in kernels_for_backend(LINEAR_BACKEND):
        case = replace(
            kernel.quick,
            heads_q=v_heads // tp,
            heads_kv=k_heads // tp,
            head_dim=model.linear_head_dims[0],
            head_dim_v=model.linear_head_dims[1],
            dtype=dtype if dtype in ("bf16", "fp16") else "bf16",
        ).validate()
        jobs.append(Job(kernel, LINEAR_BACKEND, (LINEAR,), case))
    note = "linear attention is smoked with the fla package's GDN kernels, standing in for the engine's own copy"
    return jobs, [], [note]


def _merge_phases(unsmokable: list[Unsmokable]) -> tuple[Unsmokable, ...]:
    """One entry per (backend, reason): "prefill and decode" rather than the same line twice."""
    merged: dict[tuple, Unsmokable] = {}
    for entry in unsmokable:
        key = (entry.backend, entry.reason)
        before = merged.get(key)
        merged[key] = Unsmokable(entry.backend, (before.phases if before else ()) + entry.phases, entry.reason)
    return tuple(merged.values())


def _phase_shape(phase: str, key: str, model, base: dict) -> tuple[Optional[ModelShape], bool, str]:
    """(shape, absorbed, why not) for one phase on smoke backend `key`."""
    fields = dict(base)
    head_dim, head_dim_v = model.head_dim, model.v_head_dim or model.head_dim
    absorbed = model.mla and phase == DECODE
    if absorbed:
        dims = ABSORBED_DIMS.get(key)
        if dims is None or not (model.kv_lora_rank and model.qk_rope_head_dim):
            return None, True, f"smoke has no kernel for absorbed-MLA decode on {key}"
        head_dim, head_dim_v = dims(model.qk_rope_head_dim, model.kv_lora_rank)
        fields["heads_kv"] = 1  # one latent KV head
        fields["qv"] = key in _ABSORBED_QV
        if _casts_q_to_fp8(key):
            fields["kv_dtype"] = None  # MLA decode dequantizes (rule fa4-fp8-sm100)
    elif model.mla:
        fields["heads_kv"] = fields["heads_q"]  # MLA prefill runs as multi-head attention
    elif (
        _casts_q_to_fp8(key)
        and fields["kv_dtype"] == "fp8_e4m3"
        and max(head_dim, head_dim_v) <= 256
        and (phase == DECODE or key == "fa3")
    ):
        fields["dtype"] = "fp8_e4m3"  # prepare_paged_mha_query casts q to the KV dtype
    return (
        ModelShape(head_dim=head_dim, head_dim_v=None if head_dim_v == head_dim else head_dim_v, **fields),
        absorbed,
        "",
    )


def run(
    smoke_plan: SmokePlan,
    timeout: float = DEFAULT_TIMEOUT_S,
    progress: Optional[Progress] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> SmokeReport:
    """Every job of the plan once, each kernel in its own worker; an empty report when there is nothing to run."""
    if not smoke_plan.jobs:
        return SmokeReport(level="shape", timeout_s=timeout)
    return Runner(timeout=timeout, progress=progress, environ=environ).run(
        [(job.kernel, [job.case]) for job in smoke_plan.jobs], level="shape"
    )
