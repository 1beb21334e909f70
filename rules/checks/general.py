"""Rules about the backend choice itself and the launch line: platform, removed and deprecated names, the flag
table, HPC-Ops shapes and page size, tensor-parallel heads, chunked prefill pages, triton under DCP, diffusion LLMs,
score_mod, FlashInfer's SM90 decode over an FP8 KV cache. The flag constraints and declared gates of the subject
are rows: attn_preflight.rules.engines.sglang.constraints.general."""

from __future__ import annotations

from packaging.version import Version

from attn_preflight.rules.checks.common import (
    attention_dp_size,
    backend_kv_dtype,
    choice_check,
    chunked_prefill_per_rank,
    declared,
    gpu,
    kv_found,
    kv_unquantised_fix,
    phases_using,
    running_flashinfer,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.versions import table_for
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang import flashinfer as sglang_fi
from attn_preflight.rules.engines.sglang.capabilities import CHOICES, SGLANG_BACKENDS
from attn_preflight.rules.engines.sglang.resolve import backend_page_size, dllm_block_size, effective_page_size
from attn_preflight.rules.kernels import flashinfer as flashinfer_kb
from attn_preflight.rules.knowledge import NEWEST_KNOWN, OLDEST_KNOWN
from attn_preflight.rules.knowledge import flags as flag_kb
from attn_preflight.rules.knowledge.kv_dtypes import FP8

OVERRIDES = "sglang: python/sglang/srt/arg_groups/overrides.py"


@rule(
    id="general-model-config",
    title="The model's config.json can be read",
    engine="any",
    versions="",
    stage="load",
    reason="Without the model's config.json every rule about the model (head dims, MLA, sinks, softcap, sliding "
    "window, head counts vs TP) is a guess; a PASS would not mean the server starts.",
    source="huggingface/huggingface_hub: src/huggingface_hub/constants.py (HF_HUB_CACHE, HF_HOME), file_download.py "
    "(models--ORG--NAME/refs/main, snapshots/REVISION/config.json)",
    docs="""Checks that a model given by hub id (`--model Qwen/Qwen2.5-32B-Instruct`, a pasted `--model-path` or
`vllm serve ID`) was read: from the local Hugging Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
~/.cache/huggingface/hub; the snapshot `refs/main` names, else the newest) or from a preset of that exact
name or hub id.

attn-preflight never downloads. When the config.json is found nowhere, the rules that need the model answer
unknown rather than pass, and this finding warns with the commands that make it readable.""",
    fix_title="Fetch the config (hf download ID config.json) or pass --model DIR",
)
def general_model_config(cfg, target):
    if cfg.model_missing:
        return warned(
            f"--model {cfg.model_missing}: no config.json in the Hugging Face cache ({cfg.model_looked_in}) and "
            f"no preset of that name",
            "the model's config.json (a local directory, the Hugging Face cache or a preset)",
            [f"hf download {cfg.model_missing} config.json", "--model DIR"],
        )
    if cfg.model is None:
        return skipped("no model given")
    return passed(f"{cfg.model.name} from {cfg.model.source}", "the model's config.json")


@rule(
    id="general-engine-version",
    title="The engine's version is one the rules were checked against",
    engine="any",
    versions="",
    stage="startup",
    reason="Outside the releases the rules were read in, a limit may have been added or lifted: a PASS made "
    "mostly of skips, or of a newer release's unknown behaviour, would not mean the server starts.",
    source="rules/knowledge/__init__.py OLDEST_KNOWN / NEWEST_KNOWN (the releases each rule's range was read in)",
    docs="""Checks that the target's sglang or vllm version (probed, from a facts file or --engine-version) lies
between the oldest and the newest release the rules were checked against, and can be read.

Older than the oldest, every rule is judged as for the oldest release (Target.as_oldest_known: its ranges,
its flag and choice tables, its defaults), never as a PASS of skips, and this finding warns, naming both
versions: a limit added or lifted before the oldest release is not known. Newer than the newest, the newest
known behaviour is applied and changes since are not known: this finding warns too. An installed engine whose version cannot be read (a dist-info without `Version`,
a report saying "unknown") is unknown too: every rule is judged as for the newest release, each saying so.""",
    fix_title="Check against a known release (--engine-version), or upgrade the engine",
)
def general_engine_version(cfg, target):
    installed = target.versions.get(cfg.engine)
    oldest, newest = OLDEST_KNOWN[cfg.engine], NEWEST_KNOWN[cfg.engine]
    checked = f"{cfg.engine} {oldest} to {newest} (the releases these rules were checked against)"
    older = target.judged_from.get(cfg.engine)
    if older is not None:  # the rules saw the oldest known release in its place
        return warned(
            f"{cfg.engine} {older}, older than {oldest}: every rule judged as {cfg.engine} {oldest}, the oldest "
            "known behaviour",
            checked,
            [f"pip install '{cfg.engine}>={oldest}'"],
            reason=f"a limit added or lifted before {cfg.engine} {oldest} is not known to the rules",
        )
    if installed is None:
        unreadable = target.unreadable_versions.get(cfg.engine)
        if unreadable is not None:
            return unknown(
                f"{cfg.engine} is installed, but its version {unreadable!r} cannot be read: no rule can be keyed on "
                f"it (newest known behaviour applied; pin one with --engine-version {cfg.engine}==X)"
            )
        return skipped(f"{cfg.engine} version unknown: the newest known behaviour applies (each finding says so)")
    version = Version(installed)  # Target keeps readable versions only
    if version.release > Version(newest).release:
        return warned(
            f"{cfg.engine} {installed}, newer than {newest}",
            checked,
            [f"--engine-version {cfg.engine}=={newest}"],
            reason=f"what changed after {newest} is not known to the rules",
        )
    return passed(f"{cfg.engine} {installed}", checked)


@rule(
    id="general-unmodelled-flags",
    title="Every flag that bears on attention is one the rules model",
    engine="any",
    versions="",
    stage="parse",
    reason="A flag that changes attention or the KV cache (context length, pipeline or data "
    "parallelism, model overrides) but is not modelled would be dropped silently: the PASS would not be about "
    "the command given.",
    source="rules/core/flag_tables.py UNMODELLED_BEARING_FLAGS and NOT_BEARING_FLAGS, by the dest each engine's argparse "
    "stores a flag under (rules/knowledge/flags.py: sglang server_args.py and arg_groups/fields, vllm "
    "engine/arg_utils.py)",
    docs="""Checks that a pasted launch command carries no flag that bears on attention or the KV cache without
being modelled by the rules (`--context-length`, `--pp-size`, vLLM's
`--data-parallel-size`, `--hf-overrides`, ...).

Such a flag is listed by name and the check is reported incomplete (a warning), so a PASS never hides it. A
flag the rules have not classified either way is listed too: it is never dropped silently.""",
    fix_title="Judge the command without the flag, or pass its effect as flags the rules read",
)
def general_unmodelled_flags(cfg, target):
    unmodelled = cfg.unmodelled
    if not unmodelled:
        return passed("no flag bearing on attention left unmodelled", "every bearing flag modelled")
    return warned(
        f"{', '.join(unmodelled)} in the launch command, not modelled by the rules",
        "every flag that bears on attention modelled",
        reason="the check is incomplete: what these flags change was not judged",
    )


@rule(
    id="general-flags-known",
    title="Every flag of the launch command is one the engine's release has",
    engine="any",
    versions="",
    stage="parse",
    reason='argparse exits before anything loads when a flag is unknown to the release ("unrecognized '
    'arguments") or an abbreviation matches more than one flag ("ambiguous option"); docs written for another '
    "release carry such flags (sglang 0.5.20 split --cuda-graph-max-bs into -decode and -prefill).",
    source="rules/knowledge/{sglang,vllm}_flags.json (bench/flag_tables.py: each release's server_args.py / "
    "arg_utils.py argparse definitions); CPython Lib/argparse.py _parse_optional",
    prevents="error: unrecognized arguments: --flag / error: ambiguous option: --x could match --x-a, --x-b",
    docs="""Checks each option of a pasted launch command against the flag table of the target's release of the
engine (probed, from a facts file or --engine-version; a .postN or unlisted patch uses its release's table),
resolved as argparse does: exact, `--flag=value`, or a unique prefix (`--tp` is `--tp-size`).

When the release is unknown the newest table is used, and the finding says so; a release older than every
table is judged with the oldest one, also said.""",
    fix_title="Use the flag's name in that release (see `--help` of that release)",
)
def general_flags_known(cfg, target):
    if not cfg.options:
        return skipped("no pasted command")
    release, said = table_for(flag_kb.releases(cfg.engine), target.versions.get(cfg.engine))
    table = flag_kb.flag_table(cfg.engine, release)
    refused = []
    for option in cfg.options:
        try:
            table.resolve(option)
        except flag_kb.FlagError as err:
            refused.append(str(err))
    required = f"flags {cfg.engine} {release} has{said}"
    if not refused:
        return passed(f"every flag is one {cfg.engine} {release} has{said}", required)
    return failed("; ".join(refused), required)


@rule(
    id="general-backend-platform",
    title="The attention backend is built for NVIDIA CUDA",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23: ATTENTION_BACKEND_CHOICES groups the same foreign backends under '# AMD specific' "
        "(aiter, wave) and '# Other platforms' (intel_amx, ascend, and intel_xpu from 0.5.4) in every release "
        "(server_args.py:1376-1381 in 0.5.1, :113-119 in 0.5.4; arg_groups/choices.py:92-98 in 0.5.23); the "
        "choices of each of the 33 wheels are in rules/engines/sglang/choices.json (bench/sglang_choices.py), "
        "and a backend a release does not list is general-backend-removed's"
    ),
    stage="load",
    reason="A ROCm, NPU, XPU or CPU backend on an NVIDIA GPU fails at import or kernel launch, after weights load.",
    source=CHOICES,
    docs="""Checks that each chosen attention backend is one SGLang builds for NVIDIA CUDA GPUs.

ATTENTION_BACKEND_CHOICES mixes platforms: aiter and wave are AMD ROCm, ascend is Huawei NPU, intel_xpu
is Intel GPU, intel_amx is CPU. On an NVIDIA GPU they fail when their kernels are imported or launched.""",
    fix_title="Pick a CUDA backend (fa3, fa4, flashinfer, triton, trtllm_mha, ...)",
)
def general_backend_platform(cfg, target):
    if not cfg.backends:
        return skipped("no attention backend chosen")
    if target.cc is None:
        return unknown("no NVIDIA GPU on the target")
    foreign = sorted(b for b in cfg.backends if SGLANG_BACKENDS[b].platform not in ("cuda", "any"))
    if not foreign:
        return passed(", ".join(sorted(cfg.backends)), "NVIDIA CUDA backends")
    platforms = ", ".join(f"{b} ({SGLANG_BACKENDS[b].platform})" for b in foreign)
    return failed(f"{platforms} on an NVIDIA GPU", "a CUDA attention backend", ["--attention-backend triton"])


BACKEND_FLAGS = (
    ("attention_backend", "--attention-backend"),
    ("prefill_attention_backend", "--prefill-attention-backend"),
    ("decode_attention_backend", "--decode-attention-backend"),
)


@rule(
    id="general-backend-removed",
    title="Each attention backend named is a choice of the engine's release",
    engine="sglang",
    versions="",  # every release: one older than the tables is judged with the oldest (it says so)
    verified=(
        "sglang 0.5.1-0.5.23: the choices of every final release and .postN wheel (0.5.1, 0.5.1.post3, 0.5.2 ... "
        "0.5.23, 33 releases) read by bench/sglang_choices.py into rules/engines/sglang/choices.json"
    ),
    stage="parse",
    prevents="argument --attention-backend: invalid choice: 'fa4' (choose from ...); the same error for "
    "--prefill-attention-backend, --decode-attention-backend and --mm-attention-backend",
    source=f"{choices_kb.SOURCE}; {CHOICES}; CPython Lib/argparse.py _check_value",
    docs="""Checks each backend of --attention-backend, --prefill-attention-backend, --decode-attention-backend
and --mm-attention-backend against the choices of the target's SGLang release (probed, from a facts file
or --engine-version; a .postN or an unlisted patch uses its release's choices).

Backends came and went: fa4 is not a choice before 0.5.3, sglang 0.5.20 no longer lists cutlass_mla or
dual_chunk_flash_attn, and argparse refuses a launch line written for another release before anything
loads. When the release is unknown the newest choices are used, and the finding says so; a release older
than every table is judged with the oldest one (0.5.1), also said.""",
    fix_title="Use a backend that release lists (the nearest CUDA one is offered)",
)
def general_backend_removed(cfg, target):
    given = {flag: cfg.rewrites.get(field, getattr(cfg, field)) for field, flag in BACKEND_FLAGS}
    if cfg.auto_backend:  # the engine chose them: no --*-attention-backend reached its argparse
        given = {}
    given["--mm-attention-backend"] = cfg.mm_attention_backend
    if not any(given.values()):
        return skipped("no attention backend named")
    check = choice_check(target, given, usable=lambda name: _cuda(target, name))
    required = f"a backend sglang {check.release} lists{check.said}"
    if not check.refused:  # the values only: a phase the engine filled in was not named on the command line
        return passed(", ".join(sorted({value for value in given.values() if value})), required)
    return failed(
        "; ".join(f"{r.flag} {r.value} is not a choice of sglang {check.release}" for r in check.refused),
        required,
        [f"{r.flag} {choice}" for r in check.refused for choice in r.closest],
    )


def _cuda(target, name: str) -> bool:
    """Whether an attention backend is one SGLang builds for NVIDIA GPUs (a vision backend: always)."""
    info = target.sglang_backends.get(name)
    return info is None or info.platform in ("cuda", "any")


@rule(
    id="general-backend-alias",
    title="The attention backend is not a deprecated alias",
    engine="sglang",
    versions="sglang>=0.5.12",
    verified=(
        "sglang 0.5.12-0.5.23: ATTENTION_BACKEND_CHOICES' '# Deprecated alias for' comments read in each release: "
        "compressed -> dsv4 from 0.5.12 (server_args.py:154), nsa -> dsa from 0.5.13 (server_args.py:176-178; "
        "in 0.5.3-0.5.12 nsa is the backend itself and there is no dsa: its era in rules/engines/sglang/capabilities.py), "
        "the same through 0.5.19 (server_args.py:177-179) and arg_groups/choices.py from 0.5.20 (:80-83; 0.5.23 "
        ":75-78), tokenspeed_mla -> cutedsl_mla only in 0.5.23 (choices.py:87); 0.5.1-0.5.11 list no alias"
    ),
    stage="parse",
    reason="Deprecated aliases still start, but name a backend under another name and will be removed.",
    source=f"{CHOICES} (comments: nsa -> dsa, compressed -> dsv4, tokenspeed_mla -> cutedsl_mla)",
    docs="""Warns when a backend is given by a deprecated alias: nsa (dsa, from sglang 0.5.13), compressed (dsv4),
tokenspeed_mla (cutedsl_mla, from 0.5.23).

ATTENTION_BACKEND_CHOICES keeps them for old launch lines; the launch line should name the backend that
actually runs.""",
    fix_title="Use the backend's current name",
)
def general_backend_alias(cfg, target):
    if not cfg.backends:
        return skipped("no attention backend chosen")
    aliases = sorted(b for b in cfg.backends if declared(target, b).alias_of)
    if not aliases:
        return passed(", ".join(sorted(cfg.backends)), "current names")
    return warned(
        ", ".join(f"{b} (alias of {declared(target, b).alias_of})" for b in aliases),
        "the current name",
        [f"--attention-backend {declared(target, b).alias_of}" for b in aliases],
    )


@rule(
    id="hpc-ops-page-size",
    title="hpc_ops silently forces page size 64",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23 (hpc_ops arrives in 0.5.17): the same page_size != 64 rewrite for any phase "
        "naming hpc_ops, arg_groups/overrides.py:2096-2102 in 0.5.17, :1189-1195 in 0.5.23"
    ),
    backends=("hpc_ops",),
    stage="startup",
    prevents="HPC-Ops attention only supports a page_size of 64, changing page_size from {page_size} to 64.",
    source=f"{OVERRIDES}, _mla_backend_page_constraints",
    docs="""Warns when hpc_ops (any phase) runs with a page size other than 64: SGLang logs a warning and uses 64.

The rewrite changes prefix-cache granularity; --page-size 64 makes it explicit.""",
    fix_title="Pass --page-size 64",
)
def hpc_ops_page_size(cfg, target):
    hpc = declared(target, "hpc_ops")
    if cfg.page_size in hpc.page_sizes:
        return passed(f"--page-size {cfg.page_size}", " or ".join(str(p) for p in hpc.page_sizes))
    given = "no --page-size" if cfg.page_size is None else f"--page-size {cfg.page_size}"
    return warned(
        f"{given}; SGLang changes it to {effective_page_size(cfg, target)}",
        f"--page-size {hpc.page_snap}",
        [f"--page-size {hpc.page_snap}"],
    )


# hpc_ops_backend.py (sglang 0.5.17-0.5.23): _SUPPORTED_HEAD_DIM, _SUPPORTED_GQA_GROUP_SIZES,
# FP8_ROPE_SUPPORTED_HEAD_CONFIGS (per-rank (q heads, kv heads) of the fused RoPE+FP8 kernel).
HPC_OPS_HEAD_DIM = 128
HPC_OPS_GQA_GROUPS = (4, 8)
HPC_OPS_FP8_HEADS = ((8, 1), (64, 8))
HPC_OPS_KV_DTYPES = ("bfloat16", "fp8_e4m3")
HPC_OPS_SOURCE = "sglang: python/sglang/srt/layers/attention/hpc_ops_backend.py, HpcOpsAttnBackend.__init__"


def _kv_dtype_run(cfg):
    """The KV dtype SGLang stores: --kv-cache-dtype, or the model's dtype for auto (None when unknown)."""
    if cfg.kv_cache_dtype not in ("auto", None):
        return {"bf16": "bfloat16"}.get(cfg.kv_cache_dtype, cfg.kv_cache_dtype)
    dtype = cfg.dtype if cfg.dtype not in (None, "auto") else (cfg.model.dtype if cfg.model else None)
    return {"bf16": "bfloat16", "half": "float16", "fp16": "float16"}.get(dtype, dtype)


@rule(
    id="hpc-ops-shapes",
    title="hpc_ops takes head_dim 128, GQA groups of 4 or 8, and a bf16 or fp8_e4m3 KV cache",
    engine="sglang",
    versions="sglang>=0.5.17",
    verified=(
        "sglang 0.5.17-0.5.23 (hpc_ops' first release is 0.5.17; bench/release_walk.py grep): the constructor's "
        "KV-dtype, FP8 head-config and head_dim/GQA ValueErrors in every release (hpc_ops_backend.py:156, :167-176 "
        "and :187 in 0.5.17; :159, :172 and :189 in 0.5.23), FP8_ROPE_SUPPORTED_HEAD_CONFIGS ((8, 1), (64, 8)) "
        "in each"
    ),
    backends=("hpc_ops",),
    needs_model=True,
    stage="init",
    prevents="The hpc_ops attention backend requires head_dim == 128 and num_q_heads // num_kv_heads in (4, 8), got "
    "head_dim={head_dim}, num_q_heads={num_q_heads}, num_kv_heads={num_kv_heads}.",
    source=HPC_OPS_SOURCE,
    docs="""Checks the model shapes and KV dtype hpc_ops' constructor accepts: head_dim 128, per-rank query heads
per KV head 4 or 8, a bf16 or fp8_e4m3 KV cache, and with fp8_e4m3 per-rank (query, KV) heads (8, 1) or (64, 8).

HpcOpsAttnBackend.__init__ raises each of these as a ValueError when the model runner builds the backend
(hpc_ops_backend.py:156-197 in sglang 0.5.23): the HPC-Ops kernels are compiled for those shapes only. An
auto KV cache stores the model's dtype, so an fp16 model is refused too.""",
    fix_title="Use --attention-backend fa3 for this model",
)
def hpc_ops_shapes(cfg, target):
    model = cfg.model
    if model.mla:
        return skipped("MLA models: rule hpc-ops-model")
    if not model.head_dim or not model.num_attention_heads:
        return skipped("the model's config gives no head_dim or head count")
    tp = max(1, cfg.tp_size)
    q_heads = model.num_attention_heads // tp
    kv_heads = max(1, (model.num_key_value_heads or model.num_attention_heads) // tp)
    kv_dtype = _kv_dtype_run(cfg)
    problems = []
    if model.head_dim != HPC_OPS_HEAD_DIM:
        problems.append(f"head_dim {model.head_dim}")
    if q_heads // kv_heads not in HPC_OPS_GQA_GROUPS:
        problems.append(f"{q_heads} query heads per {kv_heads} KV heads per rank")
    if kv_dtype is not None and kv_dtype not in HPC_OPS_KV_DTYPES:
        problems.append(f"a {kv_dtype} KV cache")
    if kv_dtype == "fp8_e4m3" and (q_heads, kv_heads) not in HPC_OPS_FP8_HEADS:
        problems.append(f"fp8_e4m3 with per-rank heads ({q_heads}, {kv_heads})")
    required = "head_dim 128, GQA 4 or 8, bf16/fp8_e4m3 KV (FP8: per-rank heads (8, 1) or (64, 8))"
    if not problems:
        return passed(f"head_dim {model.head_dim}, per-rank heads ({q_heads}, {kv_heads}), KV {kv_dtype}", required)
    return failed(f"hpc_ops with {', '.join(problems)}", required, ["--attention-backend fa3"])


@rule(
    id="general-tp-heads",
    title="Attention heads split evenly over tensor-parallel ranks",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23: LlamaAttention.__init__ asserts total_num_heads % tp_size == 0 and the KV-head "
        "split in every release read (models/llama.py:129-139 in 0.5.1, :139-149 in 0.5.10, :183-193 in "
        "0.5.23)"
    ),
    needs_model=True,
    stage="load",
    reason="SGLang's attention layers assert the head split when the model is built, after the process group is up.",
    source="sglang: python/sglang/srt/models/llama.py, LlamaAttention.__init__ (assert total_num_heads % tp_size "
    "== 0; KV heads divide or are divided by tp_size); same in qwen2.py and most decoder models",
    docs="""Checks that the attention-head count divides by the attention tensor-parallel size (--tp-size, divided
by --dp-size with --enable-dp-attention, or by --attn-dp-size, its spelling from sglang 0.5.22: arg_groups/
fields/parallel.py), and that KV heads either divide by it or divide it (replication).

A bare assert fails at model construction otherwise. MLA models shard query heads the same way.""",
    fix_title="Pick a --tp-size that divides the number of attention heads",
)
def general_tp_heads(cfg, target):
    model = cfg.model
    if not model.num_attention_heads:
        return skipped("the model's config gives no attention-head count")
    tp = cfg.tp_size
    dp = attention_dp_size(cfg)
    tp = max(1, tp // dp)
    heads, kv = model.num_attention_heads, model.num_key_value_heads or model.num_attention_heads
    if tp == 1:
        return passed("attention TP size 1", "heads divisible by the attention TP size")
    kv_ok = kv % tp == 0 if kv >= tp else tp % kv == 0
    found = f"{heads} attention heads, {kv} KV heads, attention TP size {tp}"
    if heads % tp == 0 and (kv_ok or model.mla):
        return passed(found, "heads divisible by TP; KV heads divisible by TP or dividing it")
    good = [
        t for t in range(1, heads + 1) if heads % t == 0 and (model.mla or (kv % t == 0 if kv >= t else t % kv == 0))
    ]
    # the nearest split below (fewer GPUs) first, then the nearest above
    nearest = [max(t for t in good if t < tp)] + [t for t in good if t > tp][:1]
    return failed(
        found,
        "heads divisible by TP; KV heads divisible by TP or dividing it",
        [f"--tp-size {t * dp}" for t in nearest],
    )


FLASHINFER_BACKEND = "sglang: python/sglang/srt/layers/attention/flashinfer_backend.py"


@rule(
    id="flashinfer-fp8-kv-sm90",
    title="FlashInfer 0.6.0-0.6.3 decodes an FP8 KV cache on SM90 with its FA3 kernel, which cannot be built for a "
    "16-bit query",
    engine="sglang",
    versions="sglang<0.5.9",
    verified=(
        "sglang 0.5.0rc2-0.5.8.post1, each wheel read: FlashInferAttnBackend builds its decode wrappers with no "
        "backend (flashinfer_backend.py:188 in 0.5.0rc2, :277 and the CUDA-graph one :555 in 0.5.8), so "
        "FlashInfer's auto picks; should_use_tensor_core is True for fp8_e4m3/fp8_e5m2 in every release "
        "(:1652-1653 in 0.5.8) and plan() gets q_data_type = the model's dtype, data_type = the KV dtype "
        "(:1134-1135 in 0.5.8). The pins (METADATA): 0.2.11.post3 (0.5.0rc2, 0.5.1) ... 0.5.3 (0.5.6-0.5.7), whose "
        "tensor-core decode builds FA2 (decode.py:994 in 0.2.11.post3, :1026 in 0.5.3); 0.6.1 (0.5.8, 0.5.8.post1), "
        "whose decode resolves auto to FA3 on SM90 with no dtype test (decode.py:1037-1053, utils.py:375-411). "
        "0.5.9 names fa2 for every paged wrapper (:124-125, :266-283; sglang PR #18364), as 0.5.10-0.5.23 do: "
        "not affected whatever FlashInfer is installed. The other wrappers never reach FA3 over FP8 KV: paged "
        "prefill names fa2, ragged prefill is planned 16-bit over 16-bit, verify plans a custom mask"
    ),
    backends=("flashinfer",),
    needs_gpu=True,
    stage="runtime",
    prevents=flashinfer_kb.FA3_FP8_KV_JIT_ERROR,
    source=f"{FLASHINFER_BACKEND}, FlashInferAttnBackend.__init__ (decode_wrappers) and should_use_tensor_core; "
    f"{flashinfer_kb.FA3_TENSOR_CORE_DECODE_SOURCE}; {flashinfer_kb.FA3_DTYPE_CHECK_SOURCE}; the pins: "
    f"{sglang_fi.PINS_SOURCE}",
    references=(
        "https://github.com/sgl-project/sglang/issues/18135",
        "https://github.com/sgl-project/sglang/pull/18364",
        "https://github.com/flashinfer-ai/flashinfer/pull/2148",
        "https://github.com/flashinfer-ai/flashinfer/pull/2536",
    ),
    docs="""Checks flashinfer decode with an FP8 KV cache (fp8_e4m3, fp8_e5m2) on an SM90 GPU (H100, H200, H20) for
SGLang releases before 0.5.9, against the FlashInfer that runs it: the installed one when the target's software
is known (a probe, --facts, --engine-version flashinfer==X), else the flashinfer_python the SGLang release pins.

Through 0.5.8.post1 SGLang's flashinfer backend leaves its decode wrappers on FlashInfer's backend "auto" and
turns tensor cores on for an FP8 KV cache, so decode runs FlashInfer's prefill kernels with the query in the
model's dtype (bf16/fp16). From FlashInfer 0.6.0 (PR #2148) tensor-core decode resolves "auto" like prefill does,
and up to 0.6.3 that picks the FA3 (SM90) kernels whatever the dtypes; FA3 has no tensor-core MMA for a 16-bit
query over FP8 pages, so its JIT build fails (cute::make_tiled_mma; the log names the module's
batch_prefill_ragged_sm90 file, sglang#18135 on FlashInfer 0.6.1) the first time decode is planned: at CUDA-graph
capture, or at the first decode step with --disable-cuda-graph. FlashInfer 0.6.4 (PR #2536) sends the pair to FA2,
and SGLang 0.5.9 (PR #18364) names fa2 for every wrapper. sglang 0.5.8 and 0.5.8.post1 pin FlashInfer 0.6.1, the
older releases pin FlashInfer before 0.6.0 (fine unless a newer one is installed). MLA models decode on
flashinfer_mla_backend and are not judged here; SGLANG_FLASHINFER_USE_TENSOR_CORE=false keeps FlashInfer's decode
kernel, which reads FP8 pages.""",
    fix_title="Upgrade SGLang to 0.5.9 or newer (decode on FA2), or use --attention-backend fa3 (FP8 E4M3 on SM90) "
    "or --kv-cache-dtype auto",
)
def flashinfer_fp8_kv_sm90(cfg, target):
    if cfg.decode_backend != "flashinfer":
        return skipped("applies to flashinfer decode")
    if cfg.mla:
        return skipped("an MLA model decodes on flashinfer_mla_backend, not on these wrappers")
    if target.major != 9:
        return skipped(f"FlashInfer's FA3 kernels run on SM90 only, not on {gpu(target)}")
    kv = backend_kv_dtype(cfg, target)
    if kv not in FP8:
        return skipped("applies to an FP8 KV cache")
    tensor_cores = cfg.env.get(sglang_fi.TENSOR_CORE_ENV)
    if tensor_cores is not None and tensor_cores.lower() != "true":
        return passed(
            f"{sglang_fi.TENSOR_CORE_ENV}={tensor_cores}", "decode on FlashInfer's decode kernel (no tensor cores)"
        )
    release = str(sglang_release(target))
    run = running_flashinfer(
        target, "sglang", release, sglang_fi.pinned(release), flashinfer_kb.tensor_core_decode_takes_fa3
    )
    if run.outcome is not None:
        return run.outcome
    found = f"{kv_found(cfg, target)} with flashinfer decode on {gpu(target)}, {run.said}"
    required = (
        f"flashinfer before {flashinfer_kb.FA3_TENSOR_CORE_DECODE_FROM} or from {flashinfer_kb.FA3_DTYPE_CHECK_FROM} "
        "(FA2 decodes a 16-bit query over an FP8 KV cache)"
    )
    if not run.fa3:
        return passed(found, required)
    fa3_backend = ["--attention-backend fa3"] if kv == "fp8_e4m3" else []
    model_dtype = cfg.model.dtype if cfg.model else None
    return failed(
        found, required, [*fa3_backend, *kv_unquantised_fix(cfg, target, model_dtype), "pip install 'sglang>=0.5.9'"]
    )


DECODE_SKIPS_CHUNK_CHECK_FROM = Version("0.5.3")


@rule(
    id="general-chunked-prefill-page",
    title="--chunked-prefill-size must be a multiple of the page size SGLang settles on",
    engine="sglang",
    versions="sglang>=0.5.1",
    verified=(
        "sglang 0.5.1-0.5.23, every release (bench/release_walk.py grep 'chunked_prefill_size must be divisible "
        "by page_size'): server_args.py check_server_args (0.5.1 :2130-2131, 0.5.18 :9203-9204), "
        "arg_groups/validation_hook.py from 0.5.19 (:106-107; 0.5.23 :243-246), after the page-size rewrites; a decode "
        "server skips it from 0.5.3 ('Skip validation if disaggregation mode is decode', absent in 0.5.1-0.5.2); attention DP "
        "divides the size first in every release (bench/release_walk.py grep 'chunked prefill size is adjusted')"
    ),
    stage="startup",
    prevents="chunked_prefill_size must be divisible by page_size",
    source="sglang: python/sglang/srt/arg_groups/validation_hook.py, check_server_args (run by "
    "entrypoints/engine.py:2158 once arguments are resolved)",
    docs="""Checks that an explicit `--chunked-prefill-size` (> 0) divides by the page size SGLang ends up with.

SGLang asserts it at start-up (validation_hook.py:243-246 in sglang 0.5.23), after it has rewritten the
page size for the backend: 64 for trtllm_mha/trtllm_mla/flashmla/cutedsl_mla/hpc_ops, 128 for fa4 on SM100
or cutlass_mla. So `--chunked-prefill-size 4000` that runs on page size 1 fails once a backend forces 64.
SGLang's own default sizes are powers of two and pass; a size <= 0 turns chunked prefill off and is not
checked, nor, from 0.5.3, is a `--disaggregation-mode decode` server (validation_hook.py:243 in 0.5.23). With
`--enable-kv-cache-sharding` (0.5.22+) SGLang rounds the chunk up to a page first (kv_shard_hook.py:290-292
in 0.5.23, declared before this assert runs), which kv-sharding-page-chunk reports. Under attention DP the
size checked is each rank's share: SGLang divides it by the attention-DP size first (parallel_hook.py:326-334
in 0.5.23, server_args.py:538 in 0.5.1), so 8192 over 3 ranks is 2730, a multiple of no page size above 2.""",
    fix_title="Use a --chunked-prefill-size that is a multiple of the page size",
)
def general_chunked_prefill_page(cfg, target):
    size = cfg.flags.get("chunked_prefill_size")
    if not isinstance(size, int) or size <= 0:
        return skipped("applies to an explicit --chunked-prefill-size > 0")
    if cfg.flags.get("disaggregation_mode") == "decode" and sglang_release(target) >= DECODE_SKIPS_CHUNK_CHECK_FROM:
        return skipped("a PD decode server does not check its chunk size (validation_hook.py:243 in 0.5.23)")
    if cfg.flags.get("enable_kv_cache_sharding"):
        return skipped("KV sharding rounds the chunk up to a page before this check (kv-sharding-page-chunk)")
    page = effective_page_size(cfg, target)
    dp = attention_dp_size(cfg)
    per_rank = chunked_prefill_per_rank(cfg)
    found = f"--chunked-prefill-size {size}" + (f" ({per_rank} per attention-DP rank of {dp})" if dp > 1 else "")
    found += f" with page size {page}"
    if per_rank % page == 0:
        return passed(found, f"a multiple of {page} per rank")
    step = page * dp  # a size whose per-rank share is a whole number of pages
    return failed(found, f"a multiple of {page} per rank", [f"--chunked-prefill-size {max(step, size - size % step)}"])


# the backend fields SGLang rewrites for a diffusion LLM launch (overrides.py _dllm_attention_backend)
DLLM_BACKEND_FIELDS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")


# triton_backend.py under --dcp-size > 1: the features its DCP extend / decode paths refuse (each a
# NotImplementedError at the first forward), with the release each refusal appears in.
TRITON_DCP_REFUSES = {
    "sinks": ("DCP Triton extend does not support sinks", Version("0.5.15")),
    "sliding_window": ("DCP Triton extend does not support sliding window", Version("0.5.15")),
    "score_mod": ("DCP Triton extend does not support score_mod", Version("0.5.16")),
}


@rule(
    id="general-triton-dcp",
    title="triton under decode context parallelism has no sinks, sliding window or score_mod",
    engine="sglang",
    versions="sglang>=0.5.15",
    verified=(
        "sglang 0.5.15-0.5.23, every release (bench/release_walk.py grep): triton_backend.py's DCP extend refuses "
        "sinks and sliding-window layers from 0.5.15 (:1382-1389; 0.5.23 _forward_extend_dcp :2009-2016), "
        "score_mod in extend and decode from 0.5.16 (:1746; 0.5.23 :1789-1792, :2423-2426)"
    ),
    backends=("triton",),
    stage="runtime",
    prevents="DCP Triton extend does not support sinks",
    source="sglang: python/sglang/srt/layers/attention/triton_backend.py, TritonAttnBackend.forward_extend / "
    "_forward_extend_dcp / forward_decode",
    docs="""Checks that triton with decode context parallelism (`--dcp-size` > 1) serves a model without attention
sinks, sliding-window layers or a score_mod.

Triton's DCP path splits each sequence's KV across ranks and merges partial results; its extend kernel
has no sink, window or score-mod support under DCP, and decode none for score_mod. Each is a
NotImplementedError at the first forward, after the weights load. (A custom attention mask, as
multi-item scoring uses, is refused too.)""",
    fix_title="Use --dcp-size 1 for this model on triton, or another backend",
)
def general_triton_dcp(cfg, target):
    dcp = cfg.flags.get("dcp_size") or 1
    if dcp <= 1:
        return skipped("applies to --dcp-size > 1")
    release = sglang_release(target)
    refused = [f for f, (_, since) in TRITON_DCP_REFUSES.items() if f in cfg.features and release >= since]
    required = "no sinks, sliding window or score_mod on triton under DCP"
    if not refused:
        return passed(f"triton with --dcp-size {dcp}, none of {', '.join(TRITON_DCP_REFUSES)}", required)
    return failed(
        f"{', '.join(refused).replace('_', ' ')} on {phases_using(cfg, 'triton')} with --dcp-size {dcp}",
        required,
        ["--dcp-size 1"],
    )


@rule(
    id="general-dllm-backend",
    title="Diffusion LLMs (--dllm-algorithm) silently switch the attention backend",
    engine="sglang",
    versions="sglang>=0.5.6.post2",
    verified=(
        "sglang 0.5.6.post2-0.5.23, every release (bench/release_walk.py grep 'Attention backend is set to "
        "flashinfer because of enabling cuda graph in diffusion'): server_args.py _handle_dllm_inference "
        "(0.5.6.post2 :2082-2100) through 0.5.18, arg_groups/overrides.py _dllm_attention_backend from 0.5.19 "
        "(0.5.20, 0.5.21, 0.5.22 read; 0.5.23 :1671-1714); the per-algorithm required backend from 0.5.21 "
        "(Gemma4Renoise: triton), its supported set (triton, fa4) kept from 0.5.22 (dllm/algorithm/"
        "gemma4_renoise.py in the 0.5.21-0.5.23 wheels)"
    ),
    stage="startup",
    prevents="Attention backend is set to flashinfer because of enabling cuda graph in diffusion LLM inference",
    source=backend_kb.DLLM_SOURCE,
    docs="""Warns when a diffusion LLM launch (`--dllm-algorithm`) names an attention backend SGLang replaces: with
decode CUDA graphs on it sets `--attention-backend flashinfer` (phase flags keep their backends); an
algorithm that requires a backend (Gemma4Renoise: triton, from 0.5.21; triton or fa4 kept from 0.5.22)
gets it for every phase.

Block-diffusion decoding captures one fixed batch shape per CUDA graph, which SGLang's FlashInfer path
serves; the rest of the config is judged on the backend SGLang switches to. `--disable-cuda-graph` keeps
the backend as given for the other algorithms. (The page size SGLang then aligns to the model's block
size: general-dllm-page-size.)""",
    fix_title="Use --attention-backend flashinfer (Gemma4Renoise: triton or fa4), or --disable-cuda-graph",
)
def general_dllm_backend(cfg, target):
    algorithm = cfg.flags.get("dllm_algorithm")
    if not algorithm:
        return skipped("applies to --dllm-algorithm")
    asked = {field: cfg.rewrites[field] for field in DLLM_BACKEND_FIELDS if field in cfg.rewrites}
    label = cfg.backend_label()
    if not asked:
        return passed(f"{algorithm} on {label}", "a backend SGLang keeps for diffusion LLMs")
    given = ", ".join(f"--{field.replace('_', '-')} {value}" for field, value in asked.items())
    return warned(
        f"{given} for {algorithm} (SGLang runs {label} instead)",
        "a backend SGLang keeps for diffusion LLMs",
        [f"--attention-backend {cfg.attention_backend}"],
    )


@rule(
    id="general-dllm-architecture",
    title="A diffusion LLM launch serves an architecture SGLang's diffusion config lists",
    engine="sglang",
    versions="sglang>=0.5.6",
    verified=(
        "sglang 0.5.6-0.5.23, dllm/config.py DllmConfig.from_server_args read in every wheel (0.5.6, 0.5.6.post2, "
        "0.5.7, 0.5.8, 0.5.8.post1, 0.5.9, 0.5.10, 0.5.10.post1, 0.5.11-0.5.23 and their .post releases): 'Unknown "
        "diffusion LLM' for any architecture but LLaDA2MoeModelLM (0.5.6-0.5.8.post1; :33 in 0.5.6, :40 in 0.5.8), "
        "SDARForCausalLM and SDARMoeForCausalLM too from 0.5.9 (:46 in 0.5.9), DiffusionGemmaForBlockDiffusion too "
        "from 0.5.21 (:66 in 0.5.21, :72 in 0.5.22 and 0.5.23); the DiffusionGemma / Gemma4Renoise pairing from "
        "0.5.21 (:71-82 in 0.5.21, :77-88 in 0.5.22 and 0.5.23; 0.5.20 has neither); --dllm-algorithm first appears in 0.5.6 "
        "(rules/knowledge/sglang_flags.json). bench/sglang_release_oracle.py: Llama-3.1-8B with --dllm-algorithm "
        "LowConfidence refused in resolution in 0.5.10 (radix cache on; off, it resolves and the scheduler raises), "
        "0.5.16 and 0.5.20 either way, DiffusionGemma refused in 0.5.10, 0.5.16 and 0.5.20 (0.5.23's harness cannot "
        "import the algorithms)"
    ),
    needs_model=True,
    stage="startup",
    prevents="Unknown diffusion LLM: {arch}; {arch} requires the {required_algorithm} diffusion algorithm; "
    "{dllm_algorithm} does not support model architecture {arch}",
    source=backend_kb.DLLM_CONFIG_SOURCE,
    docs="""Checks that a `--dllm-algorithm` launch serves a diffusion LLM SGLang knows: LLaDA2-MoE (LLaDA2MoeModelLM),
SDAR and SDAR-MoE (from 0.5.9), DiffusionGemma (from 0.5.21); and, from 0.5.21, that DiffusionGemma runs
Gemma4Renoise and Gemma4Renoise runs DiffusionGemma, which require each other.

SGLang's diffusion config takes the block size and mask token of each model from a table keyed by the
architecture in config.json and refuses any other with "Unknown diffusion LLM" — during argument resolution
from 0.5.10 (0.5.10-0.5.14 only with the radix cache on, as the server starts otherwise), at scheduler start
before. A model of another architecture cannot be decoded by diffusion, whatever its weights; drop
`--dllm-algorithm` to serve it autoregressively.""",
    fix_title="Serve a diffusion LLM SGLang lists, or drop --dllm-algorithm",
)
def general_dllm_architecture(cfg, target):
    algorithm = cfg.flags.get("dllm_algorithm")
    if not algorithm:
        return skipped("applies to --dllm-algorithm")
    release = sglang_release(target)
    listed = sorted(arch for arch, (since, _) in backend_kb.DLLM_BLOCK_SIZES.items() if release >= since)
    required = f"a diffusion LLM sglang {release} lists: {', '.join(listed)}"
    architecture = cfg.model.architecture
    if architecture is None:
        return unknown(f"{cfg.model.name}: config.json names no architecture")
    if architecture not in listed:
        return failed(f"--dllm-algorithm {algorithm} with {architecture}", required)
    if release < backend_kb.DLLM_PAIRED_FROM:
        return passed(f"{algorithm} on {architecture}", required)
    paired = backend_kb.DLLM_PAIRED_ALGORITHMS
    takes = paired.get(architecture)
    serves = [arch for arch, name in paired.items() if name == algorithm]
    if takes not in (None, algorithm) or (serves and architecture not in serves):
        required = f"{architecture} with {takes}" if takes else f"{algorithm} with {', '.join(serves)}"
        other = takes or backend_kb.DLLM_GENERIC_ALGORITHM
        return failed(f"--dllm-algorithm {algorithm} with {architecture}", required, [f"--dllm-algorithm {other}"])
    return passed(f"{algorithm} on {architecture}", required)


@rule(
    id="general-dllm-algorithm",
    title="--dllm-algorithm names a diffusion algorithm of the target's SGLang release",
    engine="sglang",
    versions="sglang>=0.5.6",
    verified=(
        "sglang 0.5.6-0.5.23, every wheel's dllm/algorithm/*.py read (the class each module exports as Algorithm): "
        "LowConfidence in 0.5.6-0.5.8.post1, JointThreshold too from 0.5.9, Gemma4Renoise from 0.5.21, "
        "JointThresholdInDel from 0.5.22 (0.5.22 and 0.5.23 the same four); get_algorithm_cls raises for any other "
        "name (__init__.py:36 in 0.5.6-0.5.20, :35 in 0.5.21-0.5.23); --dllm-algorithm first appears in 0.5.6"
    ),
    stage="startup",
    prevents="Unknown diffusion LLM algorithm: {name}",
    source=backend_kb.DLLM_ALGORITHM_SOURCE,
    docs="""Checks that `--dllm-algorithm` names one of the target release's diffusion algorithms: LowConfidence,
JointThreshold (from 0.5.9), Gemma4Renoise (from 0.5.21), JointThresholdInDel (from 0.5.22).

The flag takes any string; SGLang looks the name up among the algorithm classes it ships (the name is the class's,
case and all) and refuses any other with "Unknown diffusion LLM algorithm" — during argument resolution from
0.5.21, when the algorithm is built at start before.""",
    fix_title="Pass an algorithm the release has (the names are case-sensitive)",
)
def general_dllm_algorithm(cfg, target):
    algorithm = cfg.flags.get("dllm_algorithm")
    if not algorithm:
        return skipped("applies to --dllm-algorithm")
    release = sglang_release(target)
    known = [name for name, since in backend_kb.DLLM_ALGORITHMS_SINCE.items() if release >= since]
    required = f"one of {', '.join(known)} (sglang {release})"
    if algorithm in known:
        return passed(f"--dllm-algorithm {algorithm}", required)
    spelled = [name for name in known if name.lower() == algorithm.replace("_", "").lower()]
    fix = spelled or [backend_kb.DLLM_GENERIC_ALGORITHM]
    return failed(f"--dllm-algorithm {algorithm}", required, [f"--dllm-algorithm {name}" for name in fix])


@rule(
    id="general-dllm-page-size",
    title="A diffusion LLM's page size is aligned to its block size",
    engine="sglang",
    versions="sglang>=0.5.10",
    verified=(
        "sglang 0.5.10-0.5.23, every release (bench/release_walk.py grep 'Setting page size to {'): "
        "server_args.py _handle_dllm_inference 0.5.10-0.5.14 (:3555-3559 in 0.5.10 and 0.5.10.post1, :6101-6105 in "
        "0.5.14), arg_groups/overrides.py _dllm_page_size 0.5.15-0.5.23 (:2016-2029 in 0.5.15, :1737-1749 in "
        "0.5.23) with the larger-page cap ('should not be larger than dllm block size', in managers/scheduler.py "
        ":450-456 in 0.5.10, :604-610 in 0.5.14); dllm/config.py DLLM_PARAMS and the YAML block_size read in the "
        "0.5.10-0.5.23 wheels (DiffusionGemma's canvas_length from 0.5.21); 0.5.6-0.5.9 turn the radix cache off "
        "for diffusion LLMs and leave the page size"
    ),
    needs_model=True,
    stage="startup",
    prevents="Setting page size to {block_size} for diffusion LLM inference",
    source=backend_kb.DLLM_PAGE_SOURCE,
    docs="""Warns when a diffusion LLM launch (`--dllm-algorithm`) gives a `--page-size` SGLang replaces with the
model's diffusion block size: with the radix cache on, a page size that is not a multiple of the block; from
0.5.15, also one larger than the block (with or without the radix cache).

The block size is the checkpoint's, by architecture (LLaDA2-MoE 32, SDAR 4, DiffusionGemma its config.json
`canvas_length`, 256 when absent), or `block_size` in the `--dllm-algorithm-config` YAML, which attn-preflight reads
when the file is here; when it is not, the block size is unknown and so is this finding. The rest of the config
is judged on the page size SGLang runs. Without `--page-size` SGLang's own default is aligned the same way, which
is no choice of the user's and passes.""",
    fix_title="Pass --page-size equal to the block size",
)
def general_dllm_page_size(cfg, target):
    if not cfg.flags.get("dllm_algorithm"):
        return skipped("applies to --dllm-algorithm")
    block = dllm_block_size(cfg, target)
    if block is None:
        if cfg.flags.get("dllm_algorithm_config") is not None and cfg.dllm_algorithm_yaml is None:
            return unknown(
                f"--dllm-algorithm-config {cfg.flags['dllm_algorithm_config']} is not a file here: the block_size it may set "
                "decides the page size SGLang runs"
            )
        return unknown(
            f"{cfg.model.architecture or 'the model'}: sglang {sglang_release(target)} lists no diffusion block size "
            "for it (dllm/config.py raises 'Unknown diffusion LLM'), so the page size is not judged"
        )
    before, after = backend_page_size(cfg, target), effective_page_size(cfg, target)
    required = f"a page size SGLang keeps for a diffusion block of {block}"
    if before == after:
        return passed(f"page size {after} with a diffusion block of {block}", required)
    if cfg.page_size is None:
        return passed(f"no --page-size: SGLang sets {after}, the diffusion block", required)
    return warned(
        f"--page-size {cfg.page_size} with a diffusion block of {block} (SGLang runs page size {after} instead)",
        required,
        [f"--page-size {after}"],
    )


# sglang 0.5.16-0.5.23: the attention backends whose forward_extend / forward_decode take **kwargs and so drop a
# score_mod without a word (trtllm_mha_backend.py, hpc_ops_backend.py; AttentionBackend.forward passes its
# keywords on, base_attn_backend.py:321-360 in 0.5.23).
SCORE_MOD_DROPPED = frozenset({"trtllm_mha", "hpc_ops"})


@rule(
    id="general-score-mod-backend",
    title="A model's custom score_mod reaches a backend that applies it",
    engine="sglang",
    versions="sglang>=0.5.16",
    verified=(
        "sglang 0.5.16, 0.5.18, 0.5.20, 0.5.22 and 0.5.23 read (the forward_extend / forward_decode signatures of "
        "every layers/attention/*.py class): only FlashAttentionBackend (flashattention_backend.py:1491 and :2086 "
        "in 0.5.23, where fa3 raises: rule fa3-score-mod) and TritonAttnBackend (triton_backend.py:1678) take "
        "score_mod; TRTLLMHAAttnBackend (all five) and HPCOpsAttnBackend (from 0.5.18) take **kwargs; every other "
        "backend takes neither; 0.5.15 has no backend taking score_mod (it arrives in 0.5.16)"
    ),
    stage="runtime",
    prevents="forward_extend() got an unexpected keyword argument 'score_mod'",
    source="sglang: python/sglang/srt/layers/attention/base_attn_backend.py, AttentionBackend.forward (its "
    "keywords go to forward_extend / forward_decode); flashattention_backend.py, triton_backend.py (score_mod=None)",
    docs="""Checks that a model which passes a custom `score_mod` to attention (Inkling, `--feature score_mod`) is
served in each phase by a backend that takes it: fa4 (FA4's kernels, SM90 and newer) or triton.

SGLang's attention layer hands the score_mod to the backend's forward as a keyword. FlashAttention's and Triton's
forwards take it (fa3 then raises: rule fa3-score-mod); trtllm_mha and hpc_ops take any keyword and drop it, so
attention runs without the model's score modification; every other backend's forward has no such parameter and
raises a TypeError at the first forward.""",
    fix_title="Use --attention-backend fa4 (SM90 and newer) or triton",
)
def general_score_mod_backend(cfg, target):
    if "score_mod" not in cfg.features:
        return passed("no custom score_mod", "fa4 or triton in each phase for a custom score_mod")
    phases = (("prefill", cfg.prefill_backend), ("decode", cfg.decode_backend))
    wrong = [
        (phase, name)
        for phase, name in phases
        if name in target.sglang_backends
        and "score_mod" not in declared(target, name).features
        and "score_mod" not in declared(target, name).refuses  # fa3: fa3-score-mod
    ]
    if not wrong:
        return passed("score_mod on a backend that takes it", "fa4 or triton in each phase")
    named = ", ".join(f"{phase} {name}" for phase, name in wrong)
    dropped = [name for _, name in wrong if name in SCORE_MOD_DROPPED]
    reason = (
        f"{', '.join(sorted(set(dropped)))} take any keyword and drop it: attention runs without the score_mod"
        if dropped
        else "its forward has no score_mod parameter: a TypeError at the first forward"
    )
    fix = (["--attention-backend fa4"] if target.major is not None and target.major >= 9 else []) + [
        "--attention-backend triton"
    ]
    return failed(f"a model with a custom score_mod on {named}", "fa4 or triton in each phase", fix, reason)
