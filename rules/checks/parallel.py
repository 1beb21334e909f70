"""Multi-GPU layouts: the GPUs TP x PP x DP takes against the target's, MIG slices, and P2P / NVLink between the
GPUs of a TP group (live probe or saved report: NVML's facts, read without a CUDA context)."""

from __future__ import annotations

from rules.checks.memory import attention_tp, flag
from rules.config import Config
from rules.engine import failed, passed, rule, skipped, unknown, warned
from rules.knowledge import dsa as dsa_kb

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
    needed = gpus_needed(cfg)
    found = f"TP {cfg.tp_size} x PP {cfg.pp_size}" + (
        f" x DP {needed // (cfg.tp_size * cfg.pp_size)}" if needed > cfg.tp_size * cfg.pp_size else ""
    )
    found += f" = {needed} GPUs; the target has {target.gpu_count}"
    if needed <= target.gpu_count:
        return passed(found, f"at most {target.gpu_count} GPUs")
    widest = 1 << (target.gpu_count.bit_length() - 1)  # TP sizes are powers of two in practice (head counts)
    fix = [f"{flag(cfg, 'tp')} {widest}"] if cfg.pp_size == 1 and needed == cfg.tp_size else []
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
    mig = [d for d in target.facts.gpus.devices if d.index in target.visible_gpus and d.mig_mode == "enabled"]
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
    verified="sglang 0.5.0rc2-0.5.23: the same three gates in every release (grep 'lacks GPU P2P capability' and "
    "'more than two PCIe-only GPUs' of each wheel's device_communicators/): world size in [2, 4, 6, 8], world size > 2 "
    "needs full NVLink, and the P2P test; in CustomAllreduce.__init__ through 0.5.9 (custom_all_reduce.py:59, "
    ":110-116, :146-151, :159 in 0.5.0rc2), in custom_all_reduce_utils.py can_use_custom_all_reduce_with_nvlink "
    "from 0.5.10 (:402-455 in 0.5.10, :442-510 in 0.5.23; _SUPPORTED_WORLD_SIZES custom_all_reduce.py:37 in 0.5.10, "
    ":41 in 0.5.23)",
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


@rule(
    id="parallel-cp-decode-attn-tp-model",
    title="--enable-cp-decode-attn-tp only for DeepSeek-V4 and GLM-5 (attention linears replicated across CP ranks)",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23 (bench/release_walk.py grep 'enable-cp-decode-attn-tp is only supported'): the flag "
        "is new in 0.5.17; _handle_model_specific_adjustments refuses an architectures[0] outside "
        "CP_DECODE_ATTN_TP_SUPPORTED_ARCHS (server_args.py:5062-5072 in 0.5.17, :5277 in 0.5.18; "
        "arg_groups/model_hook.py:93-104 in 0.5.19, :193-205 in 0.5.23); the tuple (layers/cp/cp_decode_attn_tp.py"
        ":29-37, read from each wheel) is the same in every release"
    ),
    stage="startup",
    prevents="--enable-cp-decode-attn-tp is only supported for models whose attention linears are replicated "
    "across CP ranks (attn_tp_size=1). Got {model_arch}; supported: [...].",
    source="sglang: python/sglang/srt/arg_groups/model_hook.py, handle_model_specific_adjustments; "
    "python/sglang/srt/layers/cp/cp_decode_attn_tp.py CP_DECODE_ATTN_TP_SUPPORTED_ARCHS",
    docs="""Checks that `--enable-cp-decode-attn-tp` serves an architecture SGLang lists for it: DeepSeek-V4
(DeepseekV4ForCausalLM and its NextN / DSpark drafts) or GLM-5 (GlmMoeDsaForCausalLM, its NextN).

Slicing the attention linears to a rank's CP partition during decode is only equivalent to a TP GEMM where
those linears are replicated under context parallelism; SGLang refuses any other model at start-up.""",
    fix_title="Drop --enable-cp-decode-attn-tp for this model",
)
def parallel_cp_decode_attn_tp_model(cfg, target):
    if not cfg.flags.get("enable_cp_decode_attn_tp"):
        return skipped("applies to --enable-cp-decode-attn-tp")
    architecture = cfg.model.architecture if cfg.model else None
    if architecture is None:
        return unknown("the model's architecture is unknown")
    required = "one of " + ", ".join(dsa_kb.CP_DECODE_ATTN_TP_ARCHITECTURES)
    if architecture in dsa_kb.CP_DECODE_ATTN_TP_ARCHITECTURES:
        return passed(f"--enable-cp-decode-attn-tp on {architecture}", required)
    return failed(f"--enable-cp-decode-attn-tp on {architecture}", required)
