"""Multi-GPU layouts: the GPUs TP x PP x DP takes against the target's, MIG slices, and P2P / NVLink between the
GPUs of a TP group (live probe or saved report: NVML's facts, read without a CUDA context)."""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import attention_dp_size, gpu, sglang_release
from attn_preflight.rules.checks.memory import attention_tp, flag
from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.engines.sglang.resolve import dsa_model, prefill_cp
from attn_preflight.rules.knowledge import dsa as dsa_kb
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


# --- context parallelism and attention DP (SGLang start-up checks) ------------------------------------------------


def _by_release(table, release: Version):
    """The entry of a (first release, value) table that holds in `release`; None before the first."""
    held = [value for since, value in table if release >= since]
    return held[-1] if held else None


@rule(
    id="parallel-pd-decode-dcp-transfer",
    title="A PD decode worker with decode context parallelism uses a transfer backend that carries DCP pages",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified="sglang 0.5.17-0.5.23: handle_pd_disaggregation refuses --disaggregation-mode decode with --dcp-size > "
    "1 over another transfer backend: mooncake or nixl in 0.5.17-0.5.18 (pd_disaggregation_hook.py:37-43), fake "
    "added in 0.5.19-0.5.21 (:53-65 in 0.5.19, :71-83 in 0.5.21), mori and ascend added in 0.5.22-0.5.23 (:82-96 "
    "in 0.5.22 and 0.5.23); no such check before 0.5.17 (grep 'PD decode DCP requires')",
    stage="startup",
    prevents="PD decode DCP requires --disaggregation-transfer-backend mooncake, nixl, mori, ascend, or fake for "
    "synthetic benchmarking, got '...'.",
    source=f"{kb.PD_HOOK}, handle_pd_disaggregation",
    docs="""Checks that a PD decode worker (`--disaggregation-mode decode`) with decode context parallelism
(`--dcp-size` > 1) receives its KV over a transfer backend that relays the prefill's pages out into the DCP
ranks' layout: mooncake (the default) or nixl, plus fake from 0.5.19 and mori / ascend from 0.5.22.

Each DCP rank of the decode worker holds an interleaved share of every sequence's KV; only these backends
write the pages to where each rank keeps them, and SGLang refuses the others at start-up.""",
    fix_title="Use --disaggregation-transfer-backend mooncake (or nixl) on the decode worker, or --dcp-size 1",
)
def parallel_pd_decode_dcp_transfer(cfg, target):
    dcp = cfg.flags.get("dcp_size") or 1
    if cfg.flags.get("disaggregation_mode") != "decode" or dcp <= 1:
        return skipped("applies to a PD decode worker with --dcp-size > 1")
    accepted = _by_release(kb.PD_DECODE_DCP_TRANSFERS, sglang_release(target))
    transfer = cfg.flags.get("disaggregation_transfer_backend") or kb.DEFAULT_TRANSFER_BACKEND
    required = f"a transfer backend that carries DCP pages ({', '.join(accepted)})"
    if transfer in accepted:
        return passed(f"PD decode with --dcp-size {dcp} over {transfer}", required)
    return failed(
        f"PD decode with --dcp-size {dcp} over {transfer}",
        required,
        [f"--disaggregation-transfer-backend {kb.DEFAULT_TRANSFER_BACKEND}"],
    )


@rule(
    id="parallel-dsa-prefill-cp-decode",
    title="A DSA model's prefill context parallelism is not asked of a PD decode worker",
    engine="sglang",
    versions="sglang>=0.5.13",
    verified="sglang 0.5.13-0.5.23: the DeepSeek-family adjustments assert disaggregation_mode != 'decode' for a "
    "DSA model under prefill CP: --enable-dsa-prefill-context-parallel in 0.5.13 (server_args.py:1953-1956), "
    "--enable-prefill-cp (or the legacy flags mapped to it) in 0.5.14-0.5.18 (server_args.py:3631-3634 in 0.5.14), "
    "arg_groups/model_hook.py:220-223 in 0.5.19, :263-265 in 0.5.20, :323-325 in 0.5.21, :355-357 in 0.5.22, :361-363 in 0.5.23. 0.5.8-0.5.12.post1 assert "
    "it for --enable-nsa-prefill-context-parallel (server_args.py:1191-1194 in 0.5.8), a flag not modelled here "
    "(general-unmodelled-flags reports it)",
    needs_model=True,
    stage="startup",
    prevents="CP is only supported for prefill when PD disaggregation, please remove --enable-prefill-cp.",
    source="sglang: python/sglang/srt/arg_groups/model_hook.py, handle_model_specific_adjustments",
    docs="""Checks that a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5) served by a PD decode worker
(`--disaggregation-mode decode`) does not ask for prefill context parallelism (`--enable-prefill-cp`).

DSA prefill CP splits each prompt over the CP ranks of a prefill worker; a decode worker runs no prompt, and
SGLang's DeepSeek adjustments assert it away at start-up.""",
    fix_title="Drop --enable-prefill-cp from the decode worker (keep it on the prefill worker)",
)
def parallel_dsa_prefill_cp_decode(cfg, target):
    if not dsa_model(cfg, target):
        return skipped("applies to DeepSeek sparse attention models (DeepSeek-V3.2, GLM-5: index_topk)")
    if cfg.flags.get("disaggregation_mode") != "decode":
        return skipped("applies to a PD decode worker (--disaggregation-mode decode)")
    required = "no prefill context parallelism on a PD decode worker"
    if not prefill_cp(cfg, target)[0]:
        return passed(f"{cfg.model.name} on a PD decode worker without prefill CP", required)
    return failed(
        f"--enable-prefill-cp on a PD decode worker of {cfg.model.name}",
        required,
        reason="prefill CP belongs on the prefill worker: drop --enable-prefill-cp here",
    )


@rule(
    id="parallel-attn-dp-size",
    title="--attn-dp-size is positive and not combined with --dp-size replicas",
    engine="sglang",
    versions="sglang>=0.5.22",
    verified="sglang 0.5.22-0.5.23: handle_data_parallelism refuses --attn-dp-size < 1 and --attn-dp-size > 1 with "
    "--dp-size > 1 (arg_groups/parallel_hook.py:279-286 in 0.5.22, :285-292 in 0.5.23), after "
    "handle_deprecated_dp_attention turned --dp-size N --enable-dp-attention into --attn-dp-size N --dp-size 1 "
    "when --attn-dp-size is 1 (:39-61 in 0.5.23); context_parallel_attn_dp_size asserts the same pair for the "
    "DeepSeek CP layouts (model_override_base.py:235-239). --attn-dp-size is new in 0.5.22 (no check before)",
    stage="startup",
    prevents="--attn-dp-size must be positive (got 0).; --dp-size 2 with --attn-dp-size 2: data-parallel replicas "
    "combined with attention data parallelism are not supported.",
    source=f"{kb.PARALLEL_HOOK}, handle_data_parallelism",
    docs="""Checks that `--attn-dp-size` is at least 1 and, above 1, that `--dp-size` (data-parallel replicas of the
whole model) stays 1. The deprecated `--dp-size N --enable-dp-attention` counts as `--attn-dp-size N` when
`--attn-dp-size` is not given, as SGLang rewrites it.

Attention DP splits the TP group into attention groups inside one replica; SGLang does not lay replicas of
that out beside each other and refuses the pair at start-up.""",
    fix_title="Use --attn-dp-size N alone (drop --dp-size), or --dp-size N alone for whole-model replicas",
)
def parallel_attn_dp_size(cfg, target):
    given = cfg.flags.get("attn_dp_size")
    dp = cfg.flags.get("dp_size") or 1
    if given is None and not (cfg.flags.get("enable_dp_attention") and dp > 1):
        return skipped("applies to attention DP (--attn-dp-size, or --dp-size with --enable-dp-attention)")
    required = "--attn-dp-size >= 1, and --dp-size 1 beside --attn-dp-size > 1"
    if given is not None and given < 1:
        return failed(f"--attn-dp-size {given}", required, ["--attn-dp-size 1"])
    attn_dp = attention_dp_size(cfg)
    replicas = dp if given not in (None, 1) else 1  # the deprecated spelling moves --dp-size into attn_dp_size
    if attn_dp > 1 and replicas > 1:
        return failed(f"--attn-dp-size {attn_dp} with --dp-size {replicas}", required, ["--dp-size 1"])
    return passed(f"attention DP {attn_dp}" + (f" with --dp-size {replicas}" if replicas > 1 else ""), required)


def _dcp_comm_backend(cfg, target, dcp: int) -> str:
    """The --dcp-comm-backend SGLang's DCP checks read: the given one, else the release's default (CUDA)."""
    given = cfg.flags.get("dcp_comm_backend")
    if given:
        return given
    if sglang_release(target) < kb.DCP_COMM_BACKEND_RESOLVED_FROM or dcp <= 1:
        return kb.DCP_COMM_BACKEND_OLD_DEFAULT
    return "a2a or fi_a2a (resolved)"


@rule(
    id="parallel-dcp-options",
    title="Decode context parallelism's flags agree: --dcp-size >= 1, no prefill CP beside it, its comm options "
    "only with it",
    engine="sglang",
    versions="sglang>=0.5.15",
    verified="sglang 0.5.15-0.5.23: --dcp-size < 1 refused (server_args.py:2841 in 0.5.15, :3155 in 0.5.16, "
    "arg_groups/parallel_hook.py:132 in 0.5.19, :245 in 0.5.23); from 0.5.17 --dcp-comm-backend a2a / fi_a2a and "
    "--dcp-replicate-q-proj need --dcp-size > 1, and --dcp-replicate-q-proj an all-to-all backend "
    "(server_args.py:3817-3847 in 0.5.17, parallel_hook.py:137-158 in 0.5.19, :251-273 in 0.5.23), the backend "
    "'ag_rs' by default through 0.5.19 and resolved to a2a / fi_a2a on CUDA from 0.5.20 (overrides.py:1430 "
    "_dcp_comm_backend_default); --dcp-size > 1 with --enable-prefill-cp refused from 0.5.22 (parallel_hook.py:"
    "243-244, :249-250 in 0.5.23). The fi_a2a branch refuses only non-CUDA platforms",
    stage="startup",
    prevents="Decode context parallel size (--dcp-size / --decode-context-parallel-size) must be >= 1, but got "
    "dcp_size=0.; --dcp-size > 1 does not support --enable-prefill-cp.; --dcp-comm-backend a2a only affects the "
    "decode context-parallel attention reduction and therefore requires --dcp-size / "
    "--decode-context-parallel-size > 1, but got dcp_size=1.; --dcp-replicate-q-proj requires --dcp-size > 1.; "
    "--dcp-replicate-q-proj only applies to the a2a/fi_a2a DCP communication backend (it removes the head-dim Q "
    "all-gather); got --dcp-comm-backend=ag_rs.",
    source=f"{kb.PARALLEL_HOOK}, handle_decode_context_parallelism",
    docs="""Checks decode context parallelism's flags: `--dcp-size` is at least 1; above 1, not with
`--enable-prefill-cp` (0.5.22+); `--dcp-comm-backend a2a` / `fi_a2a` and `--dcp-replicate-q-proj` only with
`--dcp-size` > 1, and `--dcp-replicate-q-proj` only with an all-to-all backend (a2a / fi_a2a: given, or
SGLang's CUDA default from 0.5.20; ag_rs was the default through 0.5.19).

The comm backend and the Q replication reshape only the DCP attention reduction; SGLang refuses them without
it rather than ignore them, and runs decode CP and prefill CP as two layouts of one group that do not stack.""",
    fix_title="Give --dcp-size > 1 with the DCP options (or drop them); drop --enable-prefill-cp beside DCP",
)
def parallel_dcp_options(cfg, target):
    dcp = cfg.flags.get("dcp_size")
    given_backend = cfg.flags.get("dcp_comm_backend")
    replicate = cfg.flags.get("dcp_replicate_q_proj")
    if dcp is None and given_backend is None and not replicate:
        return skipped("applies to decode context parallelism (--dcp-size, --dcp-comm-backend, --dcp-replicate-q-proj)")
    dcp = 1 if dcp is None else dcp
    required = "--dcp-size >= 1; DCP without prefill CP; a2a/fi_a2a and Q replication only with --dcp-size > 1"
    if dcp < 1:
        return failed(f"--dcp-size {dcp}", required, ["--dcp-size 1"])
    release = sglang_release(target)
    if dcp > 1 and release >= kb.DCP_WITHOUT_PREFILL_CP_FROM and prefill_cp(cfg, target)[0]:
        return failed(f"--dcp-size {dcp} with --enable-prefill-cp", required, ["--dcp-size 1"])
    backend = _dcp_comm_backend(cfg, target, dcp)
    if given_backend in kb.DCP_ALL_TO_ALL and dcp <= 1:
        return failed(f"--dcp-comm-backend {given_backend} with --dcp-size 1", required, ["--dcp-comm-backend ag_rs"])
    if replicate:
        if dcp <= 1:
            return failed("--dcp-replicate-q-proj with --dcp-size 1", required, ["--no-dcp-replicate-q-proj"])
        if given_backend not in kb.DCP_ALL_TO_ALL and backend == kb.DCP_COMM_BACKEND_OLD_DEFAULT:
            return failed(
                f"--dcp-replicate-q-proj with --dcp-comm-backend {backend}", required, ["--dcp-comm-backend a2a"]
            )
    return passed(f"--dcp-size {dcp}" + (f", comm backend {backend}" if dcp > 1 else ""), required)


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
    verified="sglang 0.5.20-0.5.23: handle_context_parallelism refuses DeepSeek-V3.2 (DeepseekV32ForCausalLM) prefill "
    "CP with --cp-strategy zigzag and MiMo V2 prefill CP with another strategy (arg_groups/parallel_hook.py:45-62 "
    "in 0.5.20, :73-90 in 0.5.21, :117-134 in 0.5.22, :123-139 in 0.5.23); from 0.5.21 _boundary_parallelism_overrides refuses a Nemotron-H model_type "
    "(nemotron_h, nemotron_h_puzzle) with attn_cp_size > 1 and LongCat-Flash (longcat_flash) with prefill CP over "
    "attn_cp_size > 1 (:32-40 in 0.5.21, :64-76 in 0.5.22, :64-80 in 0.5.23), the size after the DeepSeek-family override set it "
    "(model_overrides/deepseek_v2.py). None of these checks before 0.5.20 (grep each message)",
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
    verified="sglang 0.5.14-0.5.23: --enable-prefill-cp without --cp-strategy refused (server_args.py:4986-4989 in "
    "0.5.14, arg_groups/parallel_hook.py:66-68 in 0.5.19, :72-74 in 0.5.20, :151-153 in 0.5.23); attn_cp_size > 1 asserts tp_size % "
    "attn_cp_size == 0 and tp_size % (dp_size x attn_cp_size) == 0 (server_args.py:5004-5011 in 0.5.14, "
    "parallel_hook.py:82-89 in 0.5.19, :78-84 in 0.5.20, :106-112 in 0.5.21), attn_dp_size for dp_size from 0.5.22 "
    "(:151-157 in 0.5.22, :157-163 in 0.5.23). The asserts are older (server_args.py:2084-2091 in 0.5.9), over "
    "--attn-cp-size's 0.5.9-0.5.13 dest attention_context_parallel_size, not modelled (general-unmodelled-flags)",
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
    verified="sglang 0.5.22-0.5.23: resolve_cp_tp_group_sharing (arg_groups/cp_tp_group_sharing_hook.py, called from "
    "handle_context_parallelism) for Glm5NextForConditionalGeneration from 0.5.22 and "
    "Qwen4ExpForConditionalGeneration from 0.5.23, under --enable-prefill-cp with attn_cp_size > 1: attn_cp_size "
    "== tp_size and the strategy (:32-43 in 0.5.22, :36-47 in 0.5.23); speculative decoding native MTP top-k 1 "
    "only on GLM-5-Next (:48-54 in 0.5.22), DFLASH too from 0.5.23 (:53-65); no --enable-dsa-cache-layer-split "
    "(:56-65 in 0.5.22, :67-72 in 0.5.23; its --dcp-size > 1 refusal is never reached: handle_decode_context_"
    "parallelism refuses decode CP with prefill CP first, parallel-dcp-options); no PD disaggregation in 0.5.22 (:61); in 0.5.23 "
    "Qwen4-Exp no --pp-size > 1 or PD decode (:73-83), a PD GLM-5-Next no decode worker, mooncake only, DFLASH "
    "only, no --pp-size / --dp-size > 1 (:84-99), a PD prefill worker without SGLANG_DISAGG_STAGING_BUFFER "
    "(:100-105); the linear-attention head counts divisible by tp_size (:67-80 in 0.5.22, :107-120 in 0.5.23). "
    "No such hook before 0.5.22",
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


@rule(
    id="parallel-dcp-fi-a2a",
    title="--dcp-comm-backend fi_a2a runs on an SM100 GPU (FlashInfer's MNNVL all-to-all)",
    engine="sglang",
    versions="sglang>=0.5.20",
    verified="sglang 0.5.20-0.5.23: init_fi_a2a_workspace refuses a DCP group is_fi_a2a_supported rejects "
    "(layers/dcp/comm.py:429-442 in 0.5.20, :398-411 in 0.5.21, :433-446 in 0.5.22, :435-448 in 0.5.23; "
    "is_fi_a2a_supported: is_sm100, then MNNVL fabric or the DCP group in one node, utils/common.py:879-887 in 0.5.20, "
    ":1056-1064 in 0.5.23). 0.5.17-0.5.19 ask for MNNVL fabric memory instead (comm.py:418-422 in 0.5.17), not "
    "judged: a GPU name does not tell it",
    needs_gpu=True,
    stage="init",
    prevents="--dcp-comm-backend fi_a2a needs a Blackwell system whose DCP group shares one MNNVL domain: either "
    "MNNVL fabric memory (GB200/GB300) or a DCP group inside one node (got dcp_size=8, tp_size=8, pp_size=1, "
    "nnodes=1). Use --dcp-comm-backend a2a or ag_rs otherwise.",
    source="sglang: python/sglang/srt/layers/dcp/comm.py, init_fi_a2a_workspace; utils/common.py is_fi_a2a_supported",
    docs="""Checks that `--dcp-comm-backend fi_a2a` with decode context parallelism (`--dcp-size` > 1) runs on an
SM100 GPU (compute capability 10.x: B200, B300, GB200, GB300).

fi_a2a hands the DCP reduction's exchange to FlashInfer's MNNVL all-to-all kernel, which SGLang builds only for
SM100 and a DCP group inside one MNNVL domain; the model runner refuses the rest when it allocates the kernel's
workspace, after the weights load. Left unset, SGLang picks fi_a2a only where it is supported (a2a elsewhere).
The DCP group is taken to lie inside one node (`--nnodes` is not read).""",
    fix_title="Use --dcp-comm-backend a2a (or leave it unset) off SM100",
)
def parallel_dcp_fi_a2a(cfg, target):
    dcp = cfg.flags.get("dcp_size") or 1
    if cfg.flags.get("dcp_comm_backend") != "fi_a2a" or dcp <= 1:
        return skipped("applies to --dcp-comm-backend fi_a2a with --dcp-size > 1")
    required = "an SM100 GPU (compute capability 10.x) for FlashInfer's MNNVL all-to-all"
    if target.major == kb.FI_A2A_MAJOR:
        return passed(f"--dcp-comm-backend fi_a2a with --dcp-size {dcp} on {gpu(target)}", required)
    return failed(
        f"--dcp-comm-backend fi_a2a with --dcp-size {dcp} on {gpu(target)}", required, ["--dcp-comm-backend a2a"]
    )
