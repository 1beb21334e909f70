"""Parallel-layout flag constraints of SGLang: decode and prefill context parallelism, attention DP, PD transfer
(rows; the logic rules of the subject are attn_preflight.rules.checks.parallel)."""

from attn_preflight.rules.core.constraints import (
    All,
    AnyOf,
    Arch,
    Constraint,
    Flag,
    Model,
    Not,
    Range,
    Requirement,
    Resolved,
    Since,
    constraint_rules,
    unset_or,
)
from attn_preflight.rules.engines.sglang.resolve import dsa_model, prefill_cp_on
from attn_preflight.rules.knowledge import dsa as dsa_kb
from attn_preflight.rules.knowledge import parallel as kb

INF = float("inf")
DCP = Not(Range("dcp_size", -INF, 1))  # --dcp-size above 1
PREFILL_CP = Resolved(prefill_cp_on, "prefill context parallelism")

ROWS = (
    Constraint(
        id="parallel-cp-decode-attn-tp-model",
        title="--enable-cp-decode-attn-tp only for DeepSeek-V4 and GLM-5 (attention linears replicated across CP ranks)",
        versions="sglang>=0.5.17",
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
        when=Flag("enable_cp_decode_attn_tp"),
        requires=Model(architectures=dsa_kb.CP_DECODE_ATTN_TP_ARCHITECTURES),
    ),
    Constraint(
        id="parallel-pd-decode-dcp-transfer",
        title="A PD decode worker with decode context parallelism uses a transfer backend that carries DCP pages",
        versions="sglang>=0.5.17",
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
        when=All((Flag("disaggregation_mode", ("decode",)), DCP)),
        # the default transfer backend (mooncake) is in every release's list
        requires=AnyOf(
            tuple(
                All((Since(str(since)), unset_or("disaggregation_transfer_backend", *names)))
                for since, names in kb.PD_DECODE_DCP_TRANSFERS
            )
        ),
        fix=(f"--disaggregation-transfer-backend {kb.DEFAULT_TRANSFER_BACKEND}",),
    ),
    Constraint(
        id="parallel-dsa-prefill-cp-decode",
        title="A DSA model's prefill context parallelism is not asked of a PD decode worker",
        versions="sglang>=0.5.13",
        needs_model=True,
        stage="startup",
        prevents="CP is only supported for prefill when PD disaggregation, please remove --enable-prefill-cp.",
        source="sglang: python/sglang/srt/arg_groups/model_hook.py, handle_model_specific_adjustments",
        docs="""Checks that a DeepSeek sparse attention model (DeepSeek-V3.2, GLM-5) served by a PD decode worker
(`--disaggregation-mode decode`) does not ask for prefill context parallelism (`--enable-prefill-cp`).

DSA prefill CP splits each prompt over the CP ranks of a prefill worker; a decode worker runs no prompt, and
SGLang's DeepSeek adjustments assert it away at start-up.""",
        fix_title="Drop --enable-prefill-cp from the decode worker (keep it on the prefill worker)",
        when=All((Resolved(dsa_model, "a DeepSeek sparse attention model"), Flag("disaggregation_mode", ("decode",)))),
        requires=Not(PREFILL_CP),
    ),
    Constraint(
        id="parallel-attn-dp-size",
        title="--attn-dp-size is positive and not combined with --dp-size replicas",
        versions="sglang>=0.5.22",
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
        when=AnyOf((Flag("attn_dp_size"), All((Flag("enable_dp_attention"), Not(Range("dp_size", -INF, 1)))))),
        first_only=True,
        requires=(
            Requirement(Range("attn_dp_size", 1, INF), ("--attn-dp-size 1",)),
            # the deprecated spelling moves --dp-size into the attention DP: only --attn-dp-size > 1 keeps replicas
            Requirement(
                Not(All((Not(Range("attn_dp_size", -INF, 1)), Not(Range("dp_size", -INF, 1))))), ("--dp-size 1",)
            ),
        ),
    ),
    Constraint(
        id="parallel-dcp-options",
        title="Decode context parallelism's flags agree: --dcp-size >= 1, no prefill CP beside it, its comm options "
        "only with it",
        versions="sglang>=0.5.15",
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
        when=AnyOf((Flag("dcp_size"), Flag("dcp_comm_backend"), Flag("dcp_replicate_q_proj"))),
        first_only=True,
        requires=(
            Requirement(Range("dcp_size", 1, INF), ("--dcp-size 1",)),
            Requirement(Not(All((DCP, Since(str(kb.DCP_WITHOUT_PREFILL_CP_FROM)), PREFILL_CP))), ("--dcp-size 1",)),
            Requirement(
                Not(All((Flag("dcp_comm_backend", kb.DCP_ALL_TO_ALL), Not(DCP)))),
                (f"--dcp-comm-backend {kb.DCP_COMM_BACKEND_OLD_DEFAULT}",),
            ),
            Requirement(Not(All((Flag("dcp_replicate_q_proj"), Not(DCP)))), ("--no-dcp-replicate-q-proj",)),
            # Q replication needs an all-to-all reduction: ag_rs given, or its default before SGLang resolved one
            Requirement(
                Not(
                    All(
                        (
                            Flag("dcp_replicate_q_proj"),
                            AnyOf(
                                (
                                    Flag("dcp_comm_backend", (kb.DCP_COMM_BACKEND_OLD_DEFAULT,)),
                                    All(
                                        (
                                            Not(Flag("dcp_comm_backend")),
                                            Not(Since(str(kb.DCP_COMM_BACKEND_RESOLVED_FROM))),
                                        )
                                    ),
                                )
                            ),
                        )
                    )
                ),
                ("--dcp-comm-backend a2a",),
            ),
        ),
    ),
    Constraint(
        id="parallel-dcp-fi-a2a",
        title="--dcp-comm-backend fi_a2a runs on an SM100 GPU (FlashInfer's MNNVL all-to-all)",
        versions="sglang>=0.5.20",
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
        when=All((Flag("dcp_comm_backend", ("fi_a2a",)), DCP)),
        requires=Arch((kb.FI_A2A_MAJOR,)),
        fix=("--dcp-comm-backend a2a",),
    ),
)

constraint_rules(__name__, ROWS)
