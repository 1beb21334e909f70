"""Rules about the backend choice itself and the launch line: removed names, the flag table, HPC-Ops shapes,
tensor-parallel heads, chunked prefill pages, diffusion LLMs, score_mod, FlashInfer's SM90 decode over an FP8 KV
cache. The flag constraints and declared gates of the subject are rows:
attn_preflight.rules.engines.sglang.constraints.general."""

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
    running_flashinfer,
    sglang_release,
)
from attn_preflight.rules.core.engine import failed, passed, rule, skipped, unknown, warned
from attn_preflight.rules.core.versions import table_for
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang import choices as choices_kb
from attn_preflight.rules.engines.sglang import flashinfer as sglang_fi
from attn_preflight.rules.engines.sglang.capabilities import CHOICES
from attn_preflight.rules.engines.sglang.resolve import backend_page_size, dllm_block_size, effective_page_size
from attn_preflight.rules.kernels import flashinfer as flashinfer_kb
from attn_preflight.rules.knowledge import NEWEST_KNOWN, OLDEST_KNOWN
from attn_preflight.rules.knowledge import flags as flag_kb
from attn_preflight.rules.knowledge.kv_dtypes import FP8

# Families a hub id's name says, as a hint to the reader only: never judged on (a name is not a config.json;
# nvidia/DeepSeek-R1-FP4 and a distilled "DeepSeek-R1-Distill-Llama" differ in attention).
_FAMILIES = (
    (("deepseek-v2", "deepseek-v3", "deepseek-r1", "deepseek-v4"), "the DeepSeek family (MLA attention)"),
    (("kimi-k2", "kimi-k3"), "the Kimi K2 family (MLA attention)"),
    (("glm-5",), "the GLM-5 family (MLA attention)"),
    (("gpt-oss",), "the GPT-OSS family (attention sinks, sliding window)"),
    (("llama-4",), "the Llama 4 family (chunked local attention)"),
)


def family_hint(reference: str) -> str:
    """The family a hub id's name says ("" when none, or a distilled model of another architecture)."""
    name = reference.rsplit("/", 1)[-1].lower()
    if "distill" in name:
        return ""
    return next((family for keys, family in _FAMILIES if any(name.startswith(key) for key in keys)), "")


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
    if cfg.model_missing and cfg.model_looked_in.startswith("not on this machine"):
        return warned(
            f"--model {cfg.model_missing}: {cfg.model_looked_in}",
            "the model's config.json (copy it here and give --model DIR)",
            ["--model DIR"],
        )
    if cfg.model_missing:
        family = family_hint(cfg.model_missing)
        return warned(
            f"--model {cfg.model_missing}: no config.json in the Hugging Face cache ({cfg.model_looked_in}) and "
            f"no preset of that name"
            + (f"; the id names {family}: a hint only, nothing is judged on it" if family else ""),
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
    version, known = Version(installed), Version(newest)  # Target keeps readable versions only
    # (epoch, release): a PEP 440 epoch (1!0.5.9) sorts after every release without one, so its tables are the
    # newest; it is newer than known (its release numbers alone would read as an old release)
    if (version.epoch, version.release) > (known.epoch, known.release):
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
    unmodelled = cfg.unmodelled + _read_not_judged(cfg)
    if not unmodelled:
        return passed("no flag bearing on attention left unmodelled", "every bearing flag modelled")
    from attn_preflight.rules.core.flag_tables import routine_flags  # only when a pasted command has such flags

    routine = routine_flags(cfg.engine, unmodelled, cfg.model)
    unmodelled = tuple(flag for flag in unmodelled if flag not in routine)
    if not unmodelled:
        return passed(
            f"{', '.join(routine)}: everyday flags whose effect on attention the rules bound (listed, not judged)",
            "every bearing flag modelled",
        )
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
    fix_title="Drop the flag, use its name in that release (see `--help` of that release), or run a release that "
    "has it",
)
def general_flags_known(cfg, target):
    if not cfg.options:
        return skipped("no pasted command")
    release, said = table_for(flag_kb.releases(cfg.engine), target.versions.get(cfg.engine))
    table = flag_kb.flag_table(cfg.engine, release)
    refused, unknown_options = [], []
    for option in cfg.options:
        try:
            table.resolve(option)
        except flag_kb.FlagError as err:
            refused.append(str(err))
            # an unknown flag, or an abbreviation of several: the release has no flag of that exact name either
            unknown_options.append(option.split("=", 1)[0])
    required = f"flags {cfg.engine} {release} has{said}"
    if not refused:
        return passed(f"every flag is one {cfg.engine} {release} has{said}", required)
    return failed("; ".join(refused), required, _flag_fixes(cfg.engine, release, unknown_options))


def _read_not_judged(cfg) -> tuple[str, ...]:
    """Flags read into the config that no rule judges yet (vLLM's --speculative-config is judged by the vllm-spec-*
    rules since issue 23): vLLM's --max-num-seqs on a hybrid
    model (read for the memory figures; from 0.20.0 above the Mamba cache blocks full CUDA-graph capture fails,
    'max_num_seqs (N) exceeds available Mamba cache blocks': vllm 0.33.0 config/compilation.py:1510-1532)."""
    if cfg.engine != "vllm":
        return ()
    out = []
    if "max_num_seqs" in cfg.flags and cfg.model is not None and getattr(cfg.model, "hybrid_linear", False):
        out.append("--max-num-seqs (against the Mamba cache blocks)")
    return tuple(out)


def _flag_fixes(engine: str, release: str, options: list[str]) -> list[str]:
    """For options the release does not have: drop them, or pin the newest release that has them all (a flag that
    was removed, or one of a newer release)."""
    if not options:
        return []
    fixes = [" ".join(f"drop {option}" for option in options)]
    having = [
        other
        for other in flag_kb.releases(engine)
        if other != release and all(option in flag_kb.flag_table(engine, other).options for option in options)
    ]
    if having:
        fixes.append(f"--engine-version {engine}=={having[-1]} (a release that has {' '.join(options)})")
    return fixes


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


@rule(
    id="general-dllm-backend",
    title="Diffusion LLMs (--dllm-algorithm) silently switch the attention backend",
    engine="sglang",
    versions="sglang>=0.5.6.post2",
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
