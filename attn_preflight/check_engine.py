"""`check --ask-engine`: the installed engine's own answer about the launch line, judged beside the rules.

`request_for(...)` turns check's inputs into what the engine child is asked (the engine's arguments, the pasted
line's variables, the simulated GPU); `ask(...)` runs it (attn_preflight.probe.engine_ask.harness, imported only
here and only with --ask-engine). `engine_findings(report, answer)` is pure: from a check Report and the answer
it returns
- `engine-answer`: pass when the engine accepted (for the stages it ran: its parser, `--config` merge,
  resolution, backend selection, validation hooks, the attention-backend factory's up-front checks), fail when
  it rejected (its own exception and text, the stage), unknown when it could not be asked (never a pass);
- `engine-disagrees` (warn) where the rules and the engine differ: the engine rejects what no failing rule
  catches at the stages it ran, it accepts what a rule fails at those stages, or both accept but the backend,
  page / block size, KV-cache dtype or (where one is given) context length it resolved is not the one the rules
  judged (for vLLM: the backend the rules judge runs and the block size rules/engines/vllm/block_size.py
  resolves with it; a key the rules do not resolve is not compared).
`with_engine(report, answer)` is the report with those findings, the answer (`engine_answer` in JSON) and the
verdict recomputed: a rejection fails the check whatever the rules say, and the rules' failures and fixes stay
(they explain it); an acceptance covers only its stages, so a rule failing on kernels, memory or CUDA graphs
still fails the check.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from attn_preflight.rules.core.engine import (
    Finding,
    Report,
    ReportedCheck,
    ReportedFinding,
    Status,
    display_order,
    verdict_of,
)

ENGINE_ANSWER = ReportedCheck(
    reported_by="check --ask-engine",
    id="engine-answer",
    title="The installed engine accepts the launch line",
    stage="startup",
    source="attn-preflight check --ask-engine: the engine's own code in an isolated child on a simulated GPU "
    "(probe/engine_ask)",
    docs="""Runs the installed engine's own start-up code on the launch line, in a fenced child process (no
network, no programs, no writes outside a temp dir, no CUDA context: the GPU is simulated from this machine's
probe, --gpu or --facts): its argument parser, --config merge, the resolution of defaults, the attention
backend selection for the model, its validation hooks and the attention-backend factory's up-front checks.
Pass: the engine accepted (for those stages only). Fail: it rejected, with its own exception and text. Unknown:
it could not be asked (not installed there, internals this version cannot drive, a timeout), never a pass.

The rules are knowledge frozen at the last release someone read; the installed engine is the release that
will run. What it accepts here it accepts at start-up, minutes later on the real GPU; kernels, memory and CUDA
graphs come after these stages and stay the rules' to judge.""",
    fix_title="A rejection: the failing rules beside it name the fix; when none does, the engine's own message "
    "is the fix's guide. Could not ask: the reason says what to give (--engine-python for another venv, "
    "--gpu when this machine has no GPU)",
    references=("README.md: check --ask-engine", "probe/engine_ask/child/SCHEMA.md"),
)
ENGINE_DISAGREES = ReportedCheck(
    reported_by="check --ask-engine",
    id="engine-disagrees",
    title="The rules and the installed engine agree",
    source="attn-preflight check --ask-engine: the rules' findings against the engine's answer",
    docs="""Compares the rules with the engine's answer on the stages the engine ran: warns where the engine
rejects a config no failing rule catches there, where it accepts one a rule fails there, or where both accept
but the engine resolved another attention backend, page / block size, KV-cache dtype or context length than the
one the rules judged (each named with both sides; a key the rules do not resolve for the release is not compared).

Either way the knowledge the rules read is not this release's: a release newer than the rules, a patched
build, or a rule that is wrong. The engine's answer is what will run.""",
    fix_title="Trust the engine's answer for its stages; report the disagreement (JSON: engine_answer and "
    "this finding's engine) so the rules can be corrected",
    references=("README.md: check --ask-engine",),
)
ENGINE_CHECKS = {check.id: check for check in (ENGINE_ANSWER, ENGINE_DISAGREES)}

# The rules' stages the engine's stages cover (rules state "parse", "startup", "init", "load", "runtime").
_AFTER_RESOLUTION = "check_server_args"  # a rule on a check the launcher runs after resolution (validate stage)
_FACTORY = "attention_registry.py, create_"  # a rule on an attention-backend factory's up-front check


class EngineFinding(ReportedFinding):
    """A finding from the engine's answer; `engine` holds the answer as the report shows it."""

    __slots__ = ()
    key = "engine"
    engine = property(lambda self: self.data)


def engine_sees(rule: Any, stages: Sequence[str]) -> bool:
    """Whether the engine's stages include the check `rule` stands for."""
    stage, source = getattr(rule, "stage", ""), getattr(rule, "source", "")
    if stage in ("parse", "startup"):
        return _AFTER_RESOLUTION not in source or "validate" in stages
    return stage == "init" and _FACTORY in source and "backend_init" in stages


def _who(answer: dict[str, Any]) -> str:
    return f"{answer.get('engine')} {answer.get('engine_version') or '(version unknown)'}"


def _resolved_text(resolved: dict[str, Any]) -> str:
    prefill = resolved.get("effective_prefill_attention_backend") or resolved.get("attention_backend")
    decode = resolved.get("effective_decode_attention_backend") or resolved.get("attention_backend")
    if prefill is None and decode is None:  # e.g. SGLang 0.5.1 picks its default in ModelRunner, after these stages
        backend = "not chosen yet (the engine picks it when the model loads)"
    else:
        backend = str(prefill) if prefill == decode else f"{prefill} (prefill) / {decode} (decode)"
    bits = [f"backend {backend}", f"page {resolved.get('page_size')}", f"kv {resolved.get('kv_cache_dtype')}"]
    if resolved.get("context_length") is not None:
        bits.append(f"context {resolved['context_length']}")
    return ", ".join(bits)


def _ours(report: Report) -> dict[str, Any]:
    """What the rules judged, on the keys the engine's answer resolves: the attention backend (SGLang: prefill and
    decode; vLLM: the one the rules judge runs, named or picked by its priority list), the page / block size the
    engine resolves with it (SGLang: resolve.effective_page_size; vLLM: rules/engines/vllm/block_size.py), the
    KV-cache dtype (and the --kv-cache-dtype given, where the rules resolved it from the checkpoint) and the
    context length where one is given. None: the rules do not resolve it, and it is not compared."""
    config = report.config
    out: dict[str, Any] = {
        "attention_backend": config.attention_backend,
        "prefill_attention_backend": config.prefill_backend,
        "decode_attention_backend": config.decode_backend,
        "kv_cache_dtype": config.kv_cache_dtype,
        "kv_cache_dtype_given": config.rewrites.get("kv_cache_dtype"),
        "page_size": None,
        "context_length": config.context_length,
    }
    try:  # a config the models have no answer for is compared on the rest
        if config.engine == "sglang":
            from attn_preflight.rules.engines.sglang.resolve import effective_page_size

            out["page_size"] = effective_page_size(config, report.target)
        elif config.engine == "vllm":
            from attn_preflight.rules.engines.vllm.block_size import rules_resolved

            backend, out["page_size"] = rules_resolved(config, report.target)
            out["attention_backend"] = list(backend) if isinstance(backend, tuple) else backend
    except Exception:
        pass
    return out


def _same(theirs: Any, mine: Any) -> bool:
    theirs, mine = _spelled(theirs), _spelled(mine)
    if isinstance(theirs, (list, tuple)) or isinstance(mine, (list, tuple)):
        as_set = lambda v: {str(x).lower() for x in (v if isinstance(v, (list, tuple)) else [v])}  # noqa: E731
        return as_set(theirs) == as_set(mine)
    return str(theirs).lower() == str(mine).lower()


def _differences(answer: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Each key both sides resolve and resolve otherwise, naming both sides."""
    resolved = answer.get("resolved") or {}
    if answer.get("engine") == "vllm":
        backends = [("backend", resolved.get("attention_backend"), ours["attention_backend"])]
    else:
        backends = [
            ("prefill backend", resolved.get("effective_prefill_attention_backend"), ours["prefill_attention_backend"]),
            ("decode backend", resolved.get("effective_decode_attention_backend"), ours["decode_attention_backend"]),
        ]
    pairs = [
        *backends,
        ("page size", resolved.get("page_size"), ours["page_size"]),
        ("kv cache dtype", resolved.get("kv_cache_dtype"), ours["kv_cache_dtype"]),
        ("context length", resolved.get("context_length"), ours.get("context_length")),
    ]
    differs = []
    for what, theirs, mine in pairs:
        if theirs is None or mine is None:
            continue
        if what == "kv cache dtype" and answer.get("engine") == "vllm" and ours.get("kv_cache_dtype_given"):
            # vLLM's answer is CacheConfig.cache_dtype: the checkpoint's where the release resolves "auto"
            # (resolve_kv_cache_dtype_string, engine/arg_utils.py:2297 in 0.33.0), else the value given
            if _same(theirs, ours["kv_cache_dtype_given"]):
                continue
        if not _same(theirs, mine):
            differs.append(f"{what}: engine {_shown(theirs)}, rules {_shown(mine)}")
    return differs


def _spelled(value: Any) -> Any:
    """vLLM 0.10's backend names end in _VLLM_V1 (TRITON_ATTN_VLLM_V1): the same backend as the rules' name."""
    if isinstance(value, (list, tuple)):
        return [_spelled(v) for v in value]
    return value[: -len("_VLLM_V1")] if isinstance(value, str) and value.endswith("_VLLM_V1") else value


def _shown(value: Any) -> str:
    return "/".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)


def _assumed(answer: dict[str, Any]) -> str:
    """What the driver assumed about the host and the engine read (the answer's notes), said beside its answer."""
    return "; ".join(n for n in answer.get("notes") or [] if isinstance(n, str) and n.startswith("host RAM assumed"))


_SHELL_VARIABLE = re.compile(r"'(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)'")


def _placeholder_rejection(answer: dict[str, Any]) -> Optional[str]:
    """The shell variable a parse-stage rejection names as the value it refused (`--port $PORT` pasted from a
    doc: argparse's "invalid int value: '$PORT'"), else None."""
    if answer.get("status") != "rejected" or answer.get("stage") != "parse":
        return None
    found = _SHELL_VARIABLE.search(str(answer.get("error") or ""))
    return found.group(1) if found else None


def engine_findings(report: Report, answer: dict[str, Any]) -> list[Finding]:
    who = _who(answer)
    status = answer.get("status")
    stages = list(answer.get("stages") or [])
    data = {key: answer.get(key) for key in ("status", "stage", "error_type", "error", "reason", "stages")}
    failing = [f for f in report.findings if f.status is Status.FAIL]
    seen = [f for f in failing if engine_sees(f.rule, stages)]
    findings: list[Finding] = []
    placeholder = _placeholder_rejection(answer)
    if placeholder:
        # The shell expands `$PORT` before the engine sees it; nothing pasted is executed here, so the engine
        # parsed the literal text. Its "invalid int value: '$PORT'" is about the paste, not the launch.
        reason = (
            f"could not ask: the pasted line has an unexpanded shell variable ({placeholder}) that the engine "
            "rejected as written; give its value to ask"
        )
        findings.append(EngineFinding(ENGINE_ANSWER, Status.UNKNOWN, f"{answer.get('engine')}: {reason}", data))
        return findings
    if status == "could_not_ask":
        reason = answer.get("reason") or "could not ask"
        findings.append(EngineFinding(ENGINE_ANSWER, Status.UNKNOWN, f"{answer.get('engine')}: {reason}", data))
        return findings
    if status == "rejected":
        where = answer.get("stage") or "?"
        text = f"{who} rejects it at {where}: {answer.get('error_type')}: {answer.get('error')}"
        findings.append(EngineFinding(ENGINE_ANSWER, Status.FAIL, text, data, _assumed(answer)))
        if not seen:
            rules = ", ".join(f.rule_id for f in failing) if failing else "none"
            findings.append(
                EngineFinding(
                    ENGINE_DISAGREES,
                    Status.WARN,
                    f"{who} rejects it at {where} ({answer.get('error_type')}); no failing rule catches that "
                    f"stage (failing rules: {rules})",
                    {**data, "rules_failing": [f.rule_id for f in failing]},
                )
            )
        return findings
    resolved = answer.get("resolved") or {}
    text = f"{who} accepts it ({', '.join(stages) or 'no stage named'}): {_resolved_text(resolved)}"
    findings.append(EngineFinding(ENGINE_ANSWER, Status.PASS, text, {**data, "resolved": resolved}, _assumed(answer)))
    ours = _ours(report)
    if seen:
        findings.append(
            EngineFinding(
                ENGINE_DISAGREES,
                Status.WARN,
                f"{who} accepts it, but {', '.join(f.rule_id for f in seen)} fail{'s' if len(seen) == 1 else ''} "
                "at a stage the engine ran",
                {**data, "rules_failing": [f.rule_id for f in seen]},
            )
        )
    else:  # no rule fails at the engine's stages: what both resolved is compared (a rule failing later, on
        # kernels or memory, judged the same resolved config)
        differs = _differences(answer, ours)
        if differs:
            findings.append(
                EngineFinding(
                    ENGINE_DISAGREES,
                    Status.WARN,
                    f"{who} resolves it otherwise than the rules judged it: " + "; ".join(differs),
                    {**data, "resolved": resolved, "rules_resolved": ours},
                )
            )
    return findings


def with_engine(report: Report, answer: dict[str, Any]) -> Report:
    findings = sorted([*report.findings, *engine_findings(report, answer)], key=display_order)
    return replace(report, findings=findings, verdict=verdict_of(findings), engine_answer=answer)


# ---------------------------------------------------------------------------------------------------------------
# The request
# ---------------------------------------------------------------------------------------------------------------

# check's config options -> the engine's flag (SGLang spelling; vLLM's where it differs)
_FLAGS = {
    "attention_backend": ("--attention-backend", "--attention-backend"),
    "prefill_attention_backend": ("--prefill-attention-backend", None),
    "decode_attention_backend": ("--decode-attention-backend", None),
    "mm_attention_backend": ("--mm-attention-backend", None),
    "kv_cache_dtype": ("--kv-cache-dtype", "--kv-cache-dtype"),
    "page_size": ("--page-size", "--block-size"),
    "deterministic": ("--enable-deterministic-inference", None),
    "speculative_algorithm": ("--speculative-algorithm", None),
    "speculative_eagle_topk": ("--speculative-eagle-topk", None),
    "tp_size": ("--tp-size", "--tensor-parallel-size"),
    "pp_size": ("--pp-size", "--pipeline-parallel-size"),
    "mem_fraction": ("--mem-fraction-static", "--gpu-memory-utilization"),
    "context_length": ("--context-length", "--max-model-len"),
    "dtype": ("--dtype", "--dtype"),
}


@dataclass(frozen=True)
class EngineRequest:
    engine: str
    argv: list[str]
    env: dict[str, str]
    gpu: Optional[dict[str, Any]]  # None: nothing to simulate
    why_no_gpu: str = ""


def engine_arguments(command: Sequence[str]) -> tuple[str, list[str], dict[str, str]]:
    """(engine, its arguments after launch_server / serve, the line's KEY=VALUE prefixes) of a pasted command.
    Nothing pasted is run: the arguments are handed to the engine's own parser in the child."""
    from attn_preflight.rules.core.launch_line import engine_arguments as split

    return split(command)


def _flags_argv(engine: str, options: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    model = options.get("model")
    if model:
        path = os.path.expanduser(model)
        if os.path.isfile(path) and os.path.basename(path) == "config.json":
            path = os.path.dirname(os.path.abspath(path))
        elif os.path.exists(path):
            path = os.path.abspath(path)
        else:
            path = model  # a hub id: the engine reads it from the local cache, offline
        argv += ["--model-path", path] if engine == "sglang" else [path]
    for key, (sglang_flag, vllm_flag) in _FLAGS.items():
        value = options.get(key)
        flag = sglang_flag if engine == "sglang" else vllm_flag
        if value is None or flag is None or value is False:
            continue
        argv += [flag] if value is True else [flag, str(value)]
    return argv


def request_for(config: Any, target: Any, options: dict[str, Any], command: Sequence[str]) -> EngineRequest:
    """What the engine child is asked for this check: the launch line's arguments (or the config options as
    the engine's flags), the pasted line's variables, and the GPU to simulate (the target's)."""
    if command:
        engine, argv, env = engine_arguments(command)
    else:
        engine, argv, env = config.engine, _flags_argv(config.engine, options), {}
    gpu: Optional[dict[str, Any]] = None
    why = ""
    if target.cc is None:
        why = "no GPU to simulate (" + (target.gpu_note or "none seen") + "): give --gpu NAME or --facts FILE"
    else:
        count = target.gpu_count if target.gpu_count_known and target.gpu_count else None
        if count is None:
            count = max(1, (config.tp_size or 1) * (config.pp_size or 1))
        gpu = {
            "name": target.gpu_name or f"NVIDIA GPU sm_{target.cc[0]}{target.cc[1]}",
            "cc": list(target.cc),
            "memory_mib": int(target.memory_gib * 1024) if target.memory_gib else None,
            "count": count,
        }
        host_mib = getattr(getattr(target.facts, "host", None), "memory_total_mib", None)
        if host_mib:  # the probed (or --facts) host's RAM; else the driver assumes one and says so
            gpu["host_memory_mib"] = int(host_mib)
    return EngineRequest(engine=engine, argv=argv, env=env, gpu=gpu, why_no_gpu=why)


def ask(request: EngineRequest, python: Optional[str], timeout: Optional[float] = None) -> dict[str, Any]:
    from attn_preflight.probe.engine_ask import harness  # only with --ask-engine

    if request.gpu is None:
        return harness.could_not_ask(request.engine, request.why_no_gpu)
    return harness.ask(
        request.engine,
        request.argv,
        request.gpu,
        env=request.env,
        python=python,
        timeout=timeout or harness.DEFAULT_TIMEOUT,
    )
