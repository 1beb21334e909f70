"""Multi-GPU layouts: the GPUs TP x PP x DP takes against the target's, MIG slices, and P2P / NVLink between the
GPUs of a TP group (live probe or saved report: NVML's facts, read without a CUDA context)."""

from __future__ import annotations

from attn_preflight.rules.checks.common import attention_dp_size, sglang_release
from attn_preflight.rules.checks.memory import attention_tp, flag
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, warned
from attn_preflight.rules.engines.sglang.resolve import dsa_model, prefill_cp
from attn_preflight.rules.knowledge import parallel as kb

CUSTOM_ALL_REDUCE = (
    "sglang: python/sglang/srt/distributed/device_communicators/custom_all_reduce_utils.py:442-510 "
    "can_use_custom_all_reduce_with_nvlink; custom_all_reduce.py:41 _SUPPORTED_WORLD_SIZES = [2, 4, 6, 8]"
)


def gpus_needed(cfg: Config) -> int:
    """GPUs one launch takes: TP x PP, times DP replicas (SGLang's DP attention lives inside TP)."""
    dp = cfg.flags.get("dp_size")
    replicas = dp if isinstance(dp, int) and dp > 1 else 1
    if cfg.engine == "sglang" and cfg.flags.get("enable_dp_attention"):
        replicas = 1
    return cfg.tp_size * cfg.pp_size * replicas


@rule(
    id="parallel-gpu-count",
    title="The target has the GPUs TP x PP x DP needs",
    engine="any",
    versions="",
    stage="init",
    reason="A launch that asks for more GPUs than the node has dies at distributed initialisation (a rank "
    "without a device: 'invalid device ordinal' / CUDA error), after minutes of start-up.",
    source="sglang: python/sglang/srt/entrypoints/engine.py (one scheduler process per TP x PP rank, DP replicas "
    "beside them unless --enable-dp-attention); vllm: vllm/config/parallel.py world_size = pp x tp (x dp)",
    docs="""Checks that the GPUs one launch takes (TP x PP, times --dp-size replicas; SGLang's DP attention lives
inside TP) are no more than the target has: a live machine's visible GPUs, a facts file's, or a what-if
`--gpu 8xH100` / `--gpu H100 --gpu-count 8`.

A --gpu profile without a count says nothing about how many GPUs there are, so the rule skips there.""",
    fix_title="Use as many GPUs as the node has (a smaller --tp-size / --pp-size / --dp-size) or a bigger node",
)
def parallel_gpu_count(cfg, target):
    if not target.gpu_count_known:
        return skipped("the GPU count is not given (--gpu 8xH100 or --gpu-count N)")
    if target.cc is None:
        return skipped("no CUDA GPU")
    total = gpus_needed(cfg)
    nodes = cfg.flags.get("nnodes")
    nodes = nodes if isinstance(nodes, int) and nodes > 1 else 1
    needed = -(-total // nodes)  # --nnodes N: each node runs its share of the ranks (the target is one node)
    found = f"TP {cfg.tp_size} x PP {cfg.pp_size}" + (
        f" x DP {total // (cfg.tp_size * cfg.pp_size)}" if total > cfg.tp_size * cfg.pp_size else ""
    )
    found += f" = {total} GPUs over --nnodes {nodes}: {needed} per node" if nodes > 1 else f" = {needed} GPUs"
    found += f"; the target has {target.gpu_count}"
    if needed <= target.gpu_count:
        return passed(found, f"at most {target.gpu_count} GPUs")
    widest = 1 << (target.gpu_count.bit_length() - 1)  # TP sizes are powers of two in practice (head counts)
    fix = [f"{flag(cfg, 'tp')} {widest}"] if cfg.pp_size == 1 and total == cfg.tp_size and nodes == 1 else []
    return failed(found, f"at most {target.gpu_count} GPUs", fix)


def _tp_group(cfg: Config, target):
    """The probed GPUs the first TP group runs on: the first attention-TP visible GPUs (None without facts)."""
    if target.facts is None:
        return None
    by_index = {d.index: d for d in target.facts.gpus.devices}
    return [by_index[i] for i in target.visible_gpus[: attention_tp(cfg)] if i in by_index]


@rule(
    id="parallel-mig-tp",
    title="Tensor parallelism does not span MIG slices",
    engine="any",
    versions="",
    stage="init",
    reason="A CUDA process sees one MIG instance, and NCCL has no transport between MIG slices: a TP or PP group "
    "over MIG slices fails at distributed initialisation.",
    source="NVIDIA MIG user guide, 'CUDA Device Enumeration' (a process enumerates one MIG compute instance) and "
    "NCCL release notes (no multi-MIG communication); probe/gpus.py mig_mode / mig_devices (NVML)",
    docs="""Checks that a config with TP x PP above 1 does not run on GPUs in MIG mode (a live probe or a saved
report says so through NVML).

A MIG slice also has only its share of the GPU's memory, which NVML's GPU total does not show: the memory
rules judge the largest slice a probe recorded (probe/gpus.py _mig_instances), and answer unknown for a
report that has no slice sizes.""",
    fix_title="Turn MIG off for multi-GPU serving (nvidia-smi -mig 0), or serve on one slice with TP 1",
)
def parallel_mig_tp(cfg, target):
    if target.facts is None:
        return skipped("MIG mode is known only from a probe or a saved report")
    visible = set(target.visible_gpus)  # a set: a report may list thousands of GPUs
    mig = [d for d in target.facts.gpus.devices if d.index in visible and d.mig_mode == "enabled"]
    if not mig:
        return passed("no visible GPU in MIG mode", "full GPUs for TP x PP")
    found = f"MIG mode on GPU {', '.join(str(d.index) for d in mig)}"
    if cfg.tp_size * cfg.pp_size == 1:
        return passed(found + " with TP 1 x PP 1", "one GPU (or one MIG slice) per process")
    return failed(
        f"{found} with TP {cfg.tp_size} x PP {cfg.pp_size}",
        "full GPUs (MIG off) for TP x PP above 1",
        [f"{flag(cfg, 'tp')} 1"] if cfg.pp_size == 1 else [],
    )


@rule(
    id="parallel-p2p",
    title="The GPUs of a TP group can reach each other peer to peer (custom all-reduce)",
    engine="sglang",
    versions="sglang>=0.5.0rc2",
    stage="init",
    prevents="CustomAllreduce is disabled because your platform lacks GPU P2P capability or P2P test failed.",
    references=(
        "sglang: custom_all_reduce_utils.py:493-498 'CustomAllreduce is disabled because it's not supported on more "
        "than two PCIe-only GPUs.'",
    ),
    source=CUSTOM_ALL_REDUCE,
    docs="""Checks that the GPUs the first TP group would use (the first attention-TP visible GPUs) read from each
other peer to peer (NVML P2P status, READ) and, above two GPUs, are NVLink-connected; and that the TP size is
one custom all-reduce supports (2, 4, 6, 8).

Otherwise SGLang disables its custom all-reduce at start-up and every TP all-reduce goes through NCCL: the
server runs, decode at small batches is slower (custom all-reduce exists for the latency of small messages).
A warning, with the cost; NVLink is read as 'every GPU of the group has active NVLink links' (SGLang asks NVML
for NVLink P2P per pair). Reports from before P2P facts (no peer_to_peer) cannot be judged: skip.""",
    fix_title="Pick GPUs with P2P (CUDA_VISIBLE_DEVICES), enable P2P (IOMMU/ACS off), or accept NCCL all-reduce",
)
def parallel_p2p(cfg, target):
    group = _tp_group(cfg, target)
    if group is None:
        return skipped("P2P between GPUs is known only from a probe or a saved report")
    tp = attention_tp(cfg)
    if tp == 1:
        return skipped("TP 1: no all-reduce")
    if len(group) < tp or any(d.peer_to_peer is None for d in group):
        return skipped("the report has no P2P facts for the TP group's GPUs")
    indices = [d.index for d in group]
    found = f"TP {tp} on GPUs {', '.join(map(str, indices))}"
    required = "GPU P2P between every pair (NVLink above two GPUs), TP 2, 4, 6 or 8"
    missing = [(d.index, o) for d in group for o in indices if o != d.index and o not in (d.peer_to_peer or [])]
    if tp not in (2, 4, 6, 8):
        return warned(f"{found}: custom all-reduce supports TP 2, 4, 6 and 8", required, [])
    if missing:
        pairs = ", ".join(f"{a}->{b}" for a, b in missing[:4])
        return warned(
            f"{found}: no P2P for {pairs}; all-reduce falls back to NCCL (slower small-batch decode)", required
        )
    if tp > 2 and any(not d.nvlink_links_up for d in group):
        return warned(f"{found}: PCIe-only GPUs (no active NVLink); all-reduce falls back to NCCL", required)
    return passed(found + " with P2P" + (" over NVLink" if tp > 2 else ""), required)


# --- context parallelism and attention DP (SGLang start-up checks) ------------------------------------------------


def _cp_dp_width(cfg, target, set_by_model: bool = False) -> int:
    """The data-parallel width prefill CP's tp_size divisibility reads: dp_size through 0.5.21, the attention-DP
    size from 0.5.22 (rules/knowledge/parallel.py CP_DIVISOR_ATTN_DP_FROM), where the DeepSeek CP layouts still
    read --dp-size alone as attention DP (model_override_base.py context_parallel_attn_dp_size, deprecated)."""
    dp = cfg.flags.get("dp_size") or 1
    if sglang_release(target) < kb.CP_DIVISOR_ATTN_DP_FROM:
        return dp
    attn_dp = attention_dp_size(cfg)
    return dp if set_by_model and attn_dp == 1 else attn_dp


def attention_cp_size(cfg, target) -> tuple[int, bool]:
    """The attn_cp_size SGLang's CP checks see, and whether the model set it: a DeepSeek-family (or DeepSeek-V4)
    model under prefill CP takes tp_size // its DP width, but a DSA model with --cp-strategy interleave keeps a
    given --attn-cp-size > 1 from 0.5.22; otherwise --attn-cp-size as given (rules/knowledge/parallel.py
    CP_SIZE_SET_BY_MODEL, the 0.5.23 family list)."""
    given = cfg.flags.get("attn_cp_size") or 1
    enabled, strategy = prefill_cp(cfg, target)
    model = cfg.model
    if not enabled or model is None or model.architecture not in kb.CP_SIZE_SET_BY_MODEL:
        return given, False
    dsa = dsa_model(cfg, target)
    if not (dsa or model.mla or model.architecture == "DeepseekV4ForCausalLM"):
        return given, False  # the MLA CP layout needs an MLA model
    if (
        dsa
        and strategy == "interleave"
        and given > 1
        and sglang_release(target) >= kb.DSA_INTERLEAVE_KEEPS_CP_SIZE_FROM
    ):
        return given, False
    return cfg.tp_size // _cp_dp_width(cfg, target, set_by_model=True), True


@rule(
    id="parallel-cp-model",
    title="The model takes the context parallelism asked of it (Nemotron-H, LongCat-Flash, DeepSeek-V3.2, MiMo V2)",
    engine="sglang",
    versions="sglang>=0.5.20",
    needs_model=True,
    stage="startup",
    prevents="Nemotron-H does not support --attn-cp-size > 1; LongCat-Flash does not support --enable-prefill-cp "
    "with --attn-cp-size > 1; DeepSeek V3.2 prefill CP does not support --cp-strategy zigzag; use interleave.; "
    "MiMo V2 prefill CP only supports --cp-strategy zigzag.",
    source=f"{kb.PARALLEL_HOOK}, handle_context_parallelism and _boundary_parallelism_overrides",
    docs="""Checks the context parallelism a model's port supports: Nemotron-H none (`--attn-cp-size` 1),
LongCat-Flash no prefill CP over more than one rank (its MLA CP layout takes the whole TP group, so any
`--enable-prefill-cp` at TP > 1), DeepSeek-V3.2 prefill CP with `--cp-strategy interleave` only, MiMo V2
prefill CP with `zigzag` only.

These models' forwards implement one CP layout or none; SGLang refuses the others at start-up. MiMo V2's
other refusal, multimodal serving without `--language-only`, reads the model config's multimodal resolution and
is not judged here.""",
    fix_title="Use the CP layout the model supports (interleave for DeepSeek-V3.2, zigzag for MiMo V2) or none",
)
def parallel_cp_model(cfg, target):
    release = sglang_release(target)
    model = cfg.model
    enabled, strategy = prefill_cp(cfg, target)
    cp, _ = attention_cp_size(cfg, target)
    since = kb.NO_CP_MODEL_TYPES.get(model.model_type or "")
    if since is not None and release >= since:
        required = f"no context parallelism for {model.model_type}"
        if cp > 1:
            return failed(f"--attn-cp-size {cp} for {model.name} (Nemotron-H)", required, ["--attn-cp-size 1"])
        return passed(f"{model.name} without context parallelism", required)
    since = kb.NO_PREFILL_CP_MODEL_TYPES.get(model.model_type or "")
    if since is not None and release >= since and enabled:
        required = f"no prefill CP over more than one rank for {model.model_type}"
        if cp > 1:
            return failed(
                f"prefill CP over {cp} ranks for {model.name} (LongCat-Flash)",
                required,
                reason="drop --enable-prefill-cp",
            )
        return passed(f"{model.name} prefill CP over one rank", required)
    refused = kb.CP_STRATEGY_REFUSED.get(model.architecture or "")
    needed = kb.CP_STRATEGY_REQUIRED.get(model.architecture or "")
    if not enabled or (refused is None or release < refused[2]) and (needed is None or release < needed[1]):
        return skipped("applies to prefill CP of Nemotron-H, LongCat-Flash, DeepSeek-V3.2 or MiMo V2")
    if refused is not None:
        bad, good, _ = refused
        required = f"--cp-strategy {good} for {model.architecture} prefill CP"
        if strategy == bad:
            return failed(
                f"{model.architecture} prefill CP with --cp-strategy {bad}", required, [f"--cp-strategy {good}"]
            )
        return passed(f"{model.architecture} prefill CP with --cp-strategy {strategy}", required)
    assert needed is not None, "one of the two tables named it"
    required = f"--cp-strategy {needed[0]} for {model.architecture} prefill CP"
    if strategy != needed[0]:
        found = f"--cp-strategy {strategy}" if strategy else "no --cp-strategy"
        return failed(f"{model.architecture} prefill CP with {found}", required, [f"--cp-strategy {needed[0]}"])
    return passed(f"{model.architecture} prefill CP with --cp-strategy {strategy}", required)


@rule(
    id="parallel-cp-layout",
    title="Prefill context parallelism names a --cp-strategy, and --tp-size divides by the CP x DP layout",
    engine="sglang",
    versions="sglang>=0.5.14",
    stage="startup",
    prevents="--cp-strategy must be set when --enable-prefill-cp is enabled.; AssertionError: tp_size must be "
    "divisible by attn_cp_size; AssertionError: tp_size must be divisible by attn_dp_size * attn_cp_size",
    source=f"{kb.PARALLEL_HOOK}, handle_context_parallelism",
    docs="""Checks that `--enable-prefill-cp` names a `--cp-strategy` (zigzag or interleave) and that, with an
attention-CP size above 1, `--tp-size` divides by it and by attention DP x CP (`--dp-size` x CP through 0.5.21).
The CP size is `--attn-cp-size`, except where the DeepSeek family's (and DeepSeek-V4's) CP layout sets it to
`--tp-size` / DP itself.

The TP group is SGLang's whole world: the CP and attention-DP groups are carved out of it, and a size that does
not divide leaves ranks without a group.""",
    fix_title="Pass --cp-strategy (zigzag or interleave); use an --attn-cp-size that divides --tp-size / DP",
)
def parallel_cp_layout(cfg, target):
    enabled, strategy = prefill_cp(cfg, target)
    cp, set_by_model = attention_cp_size(cfg, target)
    if not enabled and cp <= 1:
        return skipped("applies to context parallelism (--enable-prefill-cp, --attn-cp-size > 1)")
    dp = _cp_dp_width(cfg, target, set_by_model)
    required = "a --cp-strategy with --enable-prefill-cp; --tp-size divisible by CP and by DP x CP"
    if enabled and strategy is None:
        return failed("--enable-prefill-cp without --cp-strategy", required, ["--cp-strategy interleave"])
    said = f"attention CP {cp}" + (" (set by the model's CP layout)" if set_by_model else "")
    if cp > 1 and (cfg.tp_size % cp or cfg.tp_size % (dp * cp)):
        fits = cfg.tp_size // dp if cfg.tp_size % dp == 0 else 0
        fix = [f"--attn-cp-size {fits}"] if fits > 1 and not set_by_model else []
        return failed(f"{said} x DP {dp} over --tp-size {cfg.tp_size}", required, fix)
    return passed(f"{said} x DP {dp} over --tp-size {cfg.tp_size}" + (f", {strategy}" if enabled else ""), required)


def _cp_tp_speculative_refusal(cfg, target, arch: str) -> str:
    """What CP-TP group sharing refuses of the speculative decoding asked ("" when nothing)."""
    algorithm = cfg.speculative_algorithm
    if algorithm is None:
        return ""
    if arch != kb.GLM5_NEXT:
        return f"--speculative-algorithm {algorithm}"
    if algorithm == "DFLASH" and sglang_release(target) >= kb.CP_TP_DFLASH_FROM:
        return ""
    draft = cfg.flags.get("speculative_draft_model_path")
    own = draft is None or draft in (cfg.model.name, cfg.model.source)
    if algorithm.upper() in kb.CP_TP_NATIVE_MTP and own and cfg.speculative_eagle_topk in (None, 1):
        return ""
    return (
        f"--speculative-algorithm {algorithm}"
        + ("" if own else " with another draft checkpoint")
        + (
            f" with --speculative-eagle-topk {cfg.speculative_eagle_topk}"
            if cfg.speculative_eagle_topk not in (None, 1)
            else ""
        )
    )


def _linear_heads(cfg, arch: str) -> tuple[tuple[str, int], ...]:
    """The linear-attention head counts CP-TP group sharing divides by --tp-size (GLM-5-Next's default when absent)."""
    if cfg.model.linear_heads or arch != kb.GLM5_NEXT:
        return cfg.model.linear_heads
    return (("num_heads", kb.GLM5_NEXT_DEFAULT_LINEAR_HEADS),)


@rule(
    id="parallel-cp-tp-group-sharing",
    title="CP-TP group sharing (GLM-5-Next, Qwen4-Exp prefill CP): CP over the whole TP group, its strategy, and "
    "the features it takes",
    engine="sglang",
    versions="sglang>=0.5.22",
    needs_model=True,
    stage="startup",
    prevents="CP-TP group sharing requires --attn-cp-size == --tp-size, got attn_cp_size=4, tp_size=8.; CP-TP group "
    "sharing requires --cp-strategy interleave.; CP/TP group sharing only supports DFLASH or native MTP with top-k "
    "1.; --speculative-algorithm is not supported with CP-TP group sharing.; --speculative-algorithm != DFLASH is not "
    "supported with CP-TP group sharing.; SGLANG_DISAGG_STAGING_BUFFER is not supported with CP-TP group sharing.; "
    "num_heads=64 must be divisible by --tp-size=3.",
    source=f"{kb.CP_TP_HOOK}, resolve_cp_tp_group_sharing",
    docs="""Checks prefill context parallelism of the models that share their CP group with the TP group
(GLM-5-Next from 0.5.22, Qwen4-Exp from 0.5.23): the attention-CP size equals `--tp-size` (no attention DP or
attention TP beside it), `--cp-strategy` is interleave (GLM-5-Next) or zigzag (Qwen4-Exp), speculative decoding
is GLM-5-Next's native MTP with top-k 1 (or DFLASH, 0.5.23), no DSA cache layer split, the PD layouts each
release takes, and every linear-attention head count divides by `--tp-size`.

These ports CP-shard the residual stream, attention and indexer while MoE and linear attention keep their TP
partition, so the CP group must be the TP group; SGLang refuses the rest at start-up. `--enable-mixed-chunk`,
`--moe-dp-size`, expert parallelism, the MoE all-to-all backend and `--enable-waterfill`, also refused there, are
flags this tool does not model (general-unmodelled-flags reports them).""",
    fix_title="Run prefill CP over the whole TP group with the model's --cp-strategy, and drop what it refuses",
)
def parallel_cp_tp_group_sharing(cfg, target):
    arch = cfg.model.architecture or ""
    listed = kb.CP_TP_GROUP_SHARING.get(arch)
    release = sglang_release(target)
    if listed is None or release < listed[0]:
        return skipped("applies to GLM-5-Next and Qwen4-Exp (CP-TP group sharing)")
    enabled, strategy = prefill_cp(cfg, target)
    cp, set_by_model = attention_cp_size(cfg, target)
    if not enabled or cp <= 1:
        return skipped("applies to prefill CP over more than one rank")
    tp = cfg.tp_size
    problems: list[str] = []
    fix: list[str] = []
    if cp != tp:
        problems.append(f"attention CP {cp} under --tp-size {tp}")
        fix += [] if set_by_model else [f"--attn-cp-size {tp}"]
    if strategy != listed[1]:
        problems.append(f"--cp-strategy {strategy or 'none'}")
        fix.append(f"--cp-strategy {listed[1]}")
    speculative = _cp_tp_speculative_refusal(cfg, target, arch)
    if speculative:
        problems.append(speculative)
        fix += ["--speculative-eagle-topk 1"] if speculative.endswith(f"topk {cfg.speculative_eagle_topk}") else []
    if cfg.flags.get("enable_dsa_cache_layer_split"):
        problems.append("--enable-dsa-cache-layer-split")
    mode = cfg.flags.get("disaggregation_mode") or "null"
    if mode != "null" and release < kb.CP_TP_NO_PD_UNTIL:
        problems.append(f"--disaggregation-mode {mode}")
    elif mode == "decode":
        problems.append("a PD decode worker")
    if release >= kb.CP_TP_NO_PD_UNTIL and (arch != kb.GLM5_NEXT or mode != "null") and cfg.pp_size > 1:
        problems.append(f"--pp-size {cfg.pp_size}")
        fix.append("--pp-size 1")
    if release >= kb.CP_TP_NO_PD_UNTIL and arch == kb.GLM5_NEXT and mode != "null":
        transfer = cfg.flags.get("disaggregation_transfer_backend") or kb.DEFAULT_TRANSFER_BACKEND
        if transfer != kb.CP_TP_PD_TRANSFER:
            problems.append(f"--disaggregation-transfer-backend {transfer}")
            fix.append(f"--disaggregation-transfer-backend {kb.CP_TP_PD_TRANSFER}")
        if cfg.speculative_algorithm != "DFLASH" and not speculative:
            problems.append("PD without DFLASH speculative decoding")
            fix.append("--speculative-algorithm DFLASH")
        dp = cfg.flags.get("dp_size") or 1
        if dp > 1:
            problems.append(f"--dp-size {dp}")
            fix.append("--dp-size 1")
    staging = cfg.env.get(kb.STAGING_BUFFER_ENV, "").lower() in kb.ENV_TRUE
    if release >= kb.CP_TP_NO_PD_UNTIL and mode == "prefill" and staging:
        problems.append(f"{kb.STAGING_BUFFER_ENV} on a PD prefill worker")
        fix.append(f"unset {kb.STAGING_BUFFER_ENV}")
    uneven = [f"{name}={count}" for name, count in _linear_heads(cfg, arch) if count % tp]
    if uneven:
        problems.append(f"linear attention {', '.join(uneven)} not divisible by --tp-size {tp}")
    required = f"CP over the whole TP group ({tp}), --cp-strategy {listed[1]}, none of the features it refuses"
    if problems:
        return failed(f"CP-TP group sharing of {arch} with {'; '.join(problems)}", required, fix)
    return passed(f"CP-TP group sharing of {arch}: CP {tp} = TP, {strategy}", required)
