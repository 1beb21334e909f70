"""Speculative decoding (`--speculative-algorithm`): draft-tree top-k, page size and backend limits.

Read in the sglang wheels 0.5.0rc2 ... 0.5.23 (python/sglang/srt/arg_groups/speculative_hook.py, earlier
server_args.py and model_runner.py; each rule's verified note names the releases). SGLang resolves the
attention backend and page size before its speculative hook runs, so the checks here read the resolved
backend and attn_preflight.rules.engines.sglang.resolve.effective_page_size.
"""

from __future__ import annotations

from dataclasses import replace

from packaging.version import Version

from attn_preflight.rules.checks.common import choice_check, sglang_release
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.registry import registry
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang.capabilities import DRAFT_ATTENTION_BACKENDS
from attn_preflight.rules.engines.sglang.resolve import eagle_topk

SPEC_HOOK = "sglang: python/sglang/srt/arg_groups/speculative_hook.py"
# --speculative-draft-window-size (0.5.12+): checked for DFLASH only in 0.5.12 (server_args.py:3647-3653), for any
# algorithm from 0.5.13; the algorithms that honour it, by the first release (speculative_hook.py:87-92 in 0.5.13,
# :145 in 0.5.20, :177 in 0.5.21, :213 in 0.5.23); --speculative-draft-sink-size from 0.5.21.
DRAFT_WINDOW_ANY_ALGORITHM_FROM = Version("0.5.13")
DRAFT_WINDOW_EAGLE_FROM = Version("0.5.21")
DRAFT_SINK_FROM = Version("0.5.21")


def _algorithm(cfg) -> str:
    return (cfg.speculative_algorithm or "").upper()


def _topk_label(cfg) -> str:
    given = cfg.speculative_eagle_topk is not None
    return f"--speculative-eagle-topk {eagle_topk(cfg)}" if given else f"top-k {eagle_topk(cfg)} (SGLang's auto choice)"


@rule(
    id="spec-algorithm-choice",
    title="The speculative algorithm is a choice of the engine's release",
    engine="sglang",
    versions="",  # every release: one older than the tables is judged with the oldest (it says so)
    stage="parse",
    prevents="argument --speculative-algorithm: invalid choice: 'STANDALONE' (choose from ...)",
    source=f"{choices_kb.SOURCE}; sglang: python/sglang/srt/server_args.py --speculative-algorithm; CPython "
    "Lib/argparse.py _check_value",
    docs="""Checks --speculative-algorithm against the choices of the target's SGLang release, as argparse compares
them: case and all.

sglang 0.5.1 lists EAGLE, EAGLE3 and NEXTN; STANDALONE came in 0.5.2, NGRAM in 0.5.3, DFLASH in 0.5.11. From
0.5.12 the flag takes any name (plugins register algorithms) and SpeculativeAlgorithm.from_string judges
it at start-up instead, so this check passes there. When the release is unknown the newest choices are
used, and the finding says so.""",
    fix_title="Use an algorithm that release lists (the nearest is offered)",
)
def spec_algorithm_choice(cfg, target):
    if not cfg.speculative_algorithm:
        return skipped("no speculative algorithm")
    check = choice_check(target, {"--speculative-algorithm": cfg.speculative_algorithm})
    required = f"an algorithm sglang {check.release} lists{check.said}"
    if not check.refused:
        return passed(f"--speculative-algorithm {cfg.speculative_algorithm}", required)
    (refused,) = check.refused
    return failed(
        f"--speculative-algorithm {refused.value} is not a choice of sglang {check.release}",
        required,
        [f"--speculative-algorithm {choice}" for choice in refused.closest],
    )


@rule(
    id="spec-hybrid-backend",
    title="Before sglang 0.5.2 a prefill backend other than decode's cannot be used with speculative decoding",
    engine="sglang",
    versions="sglang>=0.5.0rc2,<0.5.2",
    stage="init",
    prevents="Currently HybridAttentionBackend does not support speculative decoding.",
    source="sglang: python/sglang/srt/model_executor/model_runner.py, ModelRunner._get_attention_backend",
    references=("https://github.com/sgl-project/sglang/issues/9330", "https://github.com/sgl-project/sglang/pull/9573"),
    docs="""Checks that `--speculative-algorithm` is not combined with different prefill and decode attention
backends (`--prefill-attention-backend` / `--decode-attention-backend` naming another backend than the other
phase's) on sglang before 0.5.2.

Different backends for the two phases make SGLang wrap them in HybridAttnBackend, which in 0.5.0 and 0.5.1
had no target-verify or draft-extend path: the model runner asserts against any speculative algorithm when it
builds the attention backend. sglang 0.5.2 added both paths (PR #9573).""",
    fix_title="Use one backend for both phases, or upgrade to sglang >= 0.5.2",
)
def spec_hybrid_backend(cfg, target):
    if not cfg.speculative_algorithm:
        return skipped("applies to speculative decoding")
    if cfg.prefill_backend == cfg.decode_backend:
        return passed(f"{_algorithm(cfg)} on {cfg.backend_label()}", "one backend for prefill and decode")
    return failed(
        f"{_algorithm(cfg)} speculative decoding with {cfg.backend_label()} on sglang {sglang_release(target)}",
        "one backend for prefill and decode (sglang >= 0.5.2 for two)",
        [f"--prefill-attention-backend {cfg.decode_backend}"],
    )


@rule(
    id="spec-dflash-draft-backend",
    title="DFLASH's draft worker silently switches unsupported attention backends",
    engine="sglang",
    versions="sglang>=0.5.11",
    stage="startup",
    reason="SGLang rewrites the DFLASH draft backend with only a log line; the draft then runs on a backend the "
    "user did not choose (flashinfer).",
    prevents="DFLASH draft worker does not support attention_backend {backend!r} on {platform}. "
    "Falling back to 'flashinfer'.",
    source=f"{SPEC_HOOK}, _resolve_dflash_draft_attention_backend; choices.py DRAFT_ATTENTION_BACKEND_CHOICES; "
    f"{backend_kb.DFLASH_DRAFT_SOURCE}",
    docs="""Checks the attention backend of the DFLASH draft worker: `--speculative-draft-attention-backend`,
else the prefill backend, must be one of flashinfer, fa3, fa4, triton, trtllm_mha (or ascend, intel_xpu).

Otherwise SGLang logs a warning and runs the draft on flashinfer (triton on ROCm/XPU): a silent rewrite,
reported as a warning. A trtllm_mha draft is kept only when every draft layer is sliding-window or the
draft config says `is_causal`; that depends on the draft checkpoint, which attn-preflight does not read,
so it is reported as unknown; before sglang 0.5.17 a trtllm_mha draft is always replaced. History: 0.5.11-0.5.20
logged "DFLASH draft worker only supports attention_backend in ... for now"; ascend was added in 0.5.13,
intel_xpu in 0.5.20.""",
    fix_title="Pass --speculative-draft-attention-backend flashinfer (or fa3 / fa4 / triton)",
)
def spec_dflash_draft_backend(cfg, target):
    if _algorithm(cfg) != "DFLASH":
        return skipped("applies to DFLASH speculative decoding")
    draft = cfg.draft_attention_backend or cfg.prefill_backend
    if draft is None:
        return passed("no draft backend: SGLang uses flashinfer", "a supported draft backend")
    kept = backend_kb.dflash_draft_backends(sglang_release(target))
    if draft == "trtllm_mha" and draft in kept:
        return unknown(
            "a trtllm_mha DFLASH draft is kept only for all-sliding or causal drafts (draft config not read)"
        )
    if draft in kept:
        return passed(f"DFLASH draft on {draft}", "one of " + ", ".join(kept))
    return warned(
        f"DFLASH draft on {draft}, which SGLang replaces with flashinfer",
        "one of " + ", ".join(kept),
        ["--speculative-draft-attention-backend flashinfer"],
    )


@rule(
    id="spec-rejection-sampling-topk",
    title="Rejection sampling needs EAGLE with top-k 1",
    engine="sglang",
    versions="sglang>=0.5.14",
    stage="startup",
    prevents="--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.",
    source=f"{SPEC_HOOK}, _handle_eagle_family",
    docs="""Checks that `--speculative-use-rejection-sampling` is used with EAGLE / EAGLE3 / NEXTN and a top-k of 1.

The rejection-sampling kernel verifies a linear draft chain (top-k 1) from the EAGLE draft worker only;
SGLang refuses a draft tree and, among the EAGLE family, STANDALONE ("... is only supported for EAGLE /
EAGLE3 / NEXTN, not speculative_algorithm=...") at start-up; UNO refuses the flag too. NGRAM, DFLASH and
DSPARK never read it: the flag is silently ignored there, reported as a warning.""",
    fix_title="Pass --speculative-eagle-topk 1 with --speculative-algorithm EAGLE/EAGLE3/NEXTN",
)
def spec_rejection_sampling_topk(cfg, target):
    if not cfg.flags.get("speculative_use_rejection_sampling"):
        return skipped("applies to --speculative-use-rejection-sampling")
    algorithm = _algorithm(cfg)
    if algorithm in ("STANDALONE", "UNO"):
        return failed(
            f"rejection sampling with {algorithm}",
            "--speculative-algorithm EAGLE, EAGLE3 or NEXTN",
            ["--speculative-algorithm EAGLE"],
        )
    if algorithm not in ("EAGLE", "EAGLE3", "NEXTN"):
        return warned(
            f"rejection sampling with {algorithm or 'no speculative algorithm'}, which ignores it",
            "--speculative-algorithm EAGLE, EAGLE3 or NEXTN",
            ["--speculative-algorithm EAGLE"],
        )
    if eagle_topk(cfg) == 1:
        return passed(f"{algorithm}, {_topk_label(cfg)}", "top-k 1")
    return failed(
        f"rejection sampling with {_topk_label(cfg)}", "--speculative-eagle-topk 1", ["--speculative-eagle-topk 1"]
    )


DRAFT_WORKER = "sglang: python/sglang/srt/speculative/draft_worker_common.py"


def _failing(cfg, target) -> dict[str, str]:
    """rule id -> message of every failure `cfg` meets on `target` (the draft's own backend left out, also the one
    SGLang itself fills: attn_preflight.rules.engines.sglang.resolve.hybrid_spec_defaults)."""
    from attn_preflight.rules.core.engine import Status
    from attn_preflight.rules.core.judge import Judge
    from attn_preflight.rules.engines.sglang.resolve import resolve

    judge = Judge(target)
    judged = replace(resolve(replace(cfg, draft_attention_backend=None), judge.target), draft_attention_backend=None)
    return {f.rule_id: f.outcome.found for f in judge.findings(judged) if f.status is Status.FAIL}


@rule(
    id="spec-draft-backend",
    title="The speculative draft attention backend passes the backend rules the target's backend is judged by",
    engine="sglang",
    versions="sglang>=0.5.7",
    stage="init",
    reason="The draft worker builds its own attention backend from --speculative-draft-attention-backend, through "
    "the same factory (attention_registry.py), KV-cache dtype and page size as the target's: a backend that "
    "cannot run here fails when the draft worker starts, after the target's weights load.",
    source=f"{DRAFT_WORKER}, resolve_draft_worker_attention_backend; sglang: "
    "python/sglang/srt/model_executor/model_runner.py, _get_attention_backend",
    docs="""Checks `--speculative-draft-attention-backend` with the same rules as the target's attention
backend: the config is judged again with the draft backend as the attention backend, the draft checkpoint
(`--speculative-draft-model-path`, read like `--model` when it is found) as the model, and
`--speculative-draft-kv-cache-dtype`, when given, as the KV dtype; every failure of a rule about that
backend (its arch, KV dtype, page size, head dims, ...) or of its construction and kernels (stage init or
runtime) that the target's own config does not have is reported here.

SGLang's draft worker (EAGLE, EAGLE3, NEXTN/MTP, STANDALONE, DFLASH) runs its own model runner whose
attention backend is the named draft backend (DFLASH replaces one outside DRAFT_ATTENTION_BACKEND_CHOICES
with flashinfer: spec-dflash-draft-backend).""",
    fix_title="Name the target's decode backend (or triton) as --speculative-draft-attention-backend",
)
def spec_draft_backend(cfg, target):
    draft = cfg.draft_attention_backend
    if draft is None:
        return skipped("no --speculative-draft-attention-backend")
    if cfg.speculative_algorithm is None:
        return skipped("no speculative decoding")
    if cfg.draft_model is None and _algorithm(cfg) == "DSPARK":
        # a DSPARK draft is its own checkpoint (Kimi's is dense MQA, kimi_k3_hook.py), never the target's layers
        return unknown(
            f"draft backend {draft}: the DSPARK draft checkpoint is not read here (--speculative-draft-model-path)"
        )
    draft_kv = cfg.flags.get("speculative_draft_kv_cache_dtype")
    # the draft checkpoint's own attention when --speculative-draft-model-path was read (EAGLE heads); MTP/NextN
    # drafts are layers of the target model and share its attention
    draft_cfg = replace(cfg.with_backend(draft), model=cfg.draft_model or cfg.model)
    head_not_read = (
        cfg.draft_model is None
        and _algorithm(cfg) in ("EAGLE", "EAGLE3")
        and isinstance(cfg.flags.get("speculative_draft_model_path"), str)
    )
    if head_not_read:
        # an EAGLE/EAGLE3 draft is a checkpoint of its own, a dense Llama-style head (sglang models/llama_eagle.py
        # LlamaForCausalLMEagle, llama_eagle3.py LlamaForCausalLMEagle3), never the target's MLA layers: judged as
        # a dense model whose dims are not read (the rules that need them do not apply)
        draft_cfg = replace(draft_cfg, model=None, model_missing="", extra_features=cfg.extra_features - {"mla"})
    if isinstance(draft_kv, str):
        draft_cfg = draft_cfg.with_kv_dtype(draft_kv)
    judged_by = {r.id for r in registry().by_engine["sglang"] if draft in r.backends or r.stage in ("init", "runtime")}
    target_fails = _failing(cfg, target)
    draft_fails = {
        rule_id: message
        for rule_id, message in _failing(draft_cfg, target).items()
        if rule_id in judged_by and rule_id not in target_fails
    }
    judged = f"draft backend {draft}"
    if cfg.draft_model is not None:
        judged += f" with the draft model {cfg.draft_model.name}"
    elif head_not_read:
        judged += (
            f" (the {_algorithm(cfg)} draft head is not found here: judged as a dense head, not the target's model)"
        )
    elif isinstance(cfg.flags.get("speculative_draft_model_path"), str):
        judged += " (the draft model is not found here: judged with the target's model)"
    if not draft_fails:
        return passed(judged, "the backend rules pass for the draft backend")
    # the target's own decode backend passes here by construction; triton where that is no draft choice
    same = cfg.decode_backend if cfg.decode_backend in DRAFT_ATTENTION_BACKENDS else "triton"
    fix = [f"--speculative-draft-attention-backend {same}"]
    return failed(
        f"{judged}: " + "; ".join(f"{rule_id}: {message}" for rule_id, message in draft_fails.items()),
        "a draft backend that passes the backend rules here",
        fix,
    )


@rule(
    id="spec-draft-window",
    title="The draft's sliding window: a positive window, a non-negative sink only with it, DFLASH's window >= its "
    "block",
    engine="sglang",
    versions="sglang>=0.5.12",
    stage="startup",
    prevents="--speculative-draft-window-size must be positive, got {window_size}.; --speculative-draft-sink-size "
    "must be non-negative, got {sink_size}.; --speculative-draft-sink-size requires --speculative-draft-window-size.; "
    "--speculative-draft-window-size must be >= --speculative-num-draft-tokens (block_size).",
    source=f"{SPEC_HOOK}, handle_speculative_decoding, _handle_dflash (server_args.py before 0.5.13)",
    docs="""Checks `--speculative-draft-window-size` and `--speculative-draft-sink-size`, the sliding window (and
StreamingLLM sink) the draft attends over: the window positive, the sink non-negative and only with a window, and
for DFLASH the window at least its block (`--speculative-num-draft-tokens`). Warns when the algorithm ignores
the window (SGLang logs "has no effect"): only DFLASH, EAGLE3 and, from 0.5.21, EAGLE / NEXTN honour it.

DFLASH's block comes from the draft model's config when `--speculative-num-draft-tokens` is not given; the rule
then judges the window's sign only.""",
    fix_title="Give a positive --speculative-draft-window-size (at least the DFLASH block), the sink only with it",
)
def spec_draft_window(cfg, target):
    window = cfg.flags.get("speculative_draft_window_size")
    sink = cfg.flags.get("speculative_draft_sink_size")
    if window is None and sink is None:
        return skipped("applies to --speculative-draft-window-size / --speculative-draft-sink-size")
    release, algorithm = sglang_release(target), _algorithm(cfg)
    checked = algorithm == "DFLASH" or release >= DRAFT_WINDOW_ANY_ALGORITHM_FROM
    required = "a positive window, a non-negative sink with it, DFLASH's window >= its block"
    if window is not None and window <= 0 and checked:
        return failed(f"--speculative-draft-window-size {window}", required)
    if sink is not None and release >= DRAFT_SINK_FROM:
        if sink < 0:
            return failed(f"--speculative-draft-sink-size {sink}", required)
        if window is None:
            return failed(
                f"--speculative-draft-sink-size {sink} without --speculative-draft-window-size",
                required,
                ["--speculative-draft-window-size 1024"],
            )
    tokens = cfg.flags.get("speculative_num_draft_tokens")
    if algorithm == "DFLASH" and window is not None and isinstance(tokens, int) and window < tokens:
        return failed(
            f"--speculative-draft-window-size {window} below DFLASH's block of {tokens} draft tokens",
            required,
            [f"--speculative-draft-window-size {tokens}"],
        )
    honoured = {"DFLASH", "EAGLE3"} | ({"EAGLE", "NEXTN"} if release >= DRAFT_WINDOW_EAGLE_FROM else set())
    if window is not None and release >= DRAFT_WINDOW_ANY_ALGORITHM_FROM and algorithm not in honoured:
        return warned(
            f"--speculative-draft-window-size {window} with {algorithm or 'no speculative algorithm'}: SGLang "
            "ignores it",
            "an algorithm that honours it: " + ", ".join(sorted(honoured)),
        )
    return passed(f"--speculative-draft-window-size {window} with {algorithm}", required)
