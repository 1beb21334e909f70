"""`check`: will this serving config work on this machine, a saved report, or a named GPU?

Also exports the reusable pieces other verbs take the same flags with:
- `target_options` / `target_from_options(...)`: --facts FILE | --gpu NAME | (live probe), --engine-version;
  `check` adds --probe-timeout for the live probe's import checks;
- `config_options` / `config_from_options(...)`: SGLang's own flag names, --model, --feature, and a pasted
  launch command after `--`.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any, Optional, Sequence

import click

from attn_preflight.cli import EXIT_FAIL, InputError, close_ids, did_you_mean
from attn_preflight.commands.common import (
    check_output_writable,
    format_option,
    not_blank,
    note,
    output_option,
    positive_seconds,
    screen_for,
    stderr_width,
    write_output,
)
from attn_preflight.commands.probe_cmd import DEFAULT_TIMEOUT_S as PROBE_TIMEOUT_S
from attn_preflight.commands.upgrade import upgrade_option
from attn_preflight.rules.core.errors import RulesInputError

_CONFIG_KEYS = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "mm_attention_backend",
    "kv_cache_dtype",
    "page_size",
    "deterministic",
    "speculative_algorithm",
    "speculative_eagle_topk",
    "tp_size",
    "pp_size",
    "mem_fraction",
    "context_length",
    "dtype",
    "model",
    "features",
    "engine",
)


SERVING_MACHINE = "not on this machine: a path of the machine that serves it"


def input_error(err: RulesInputError) -> InputError:
    """RulesInputError -> the CLI's one-line error, with did-you-mean when the valid values are known."""
    if err.choices is not None and err.word is not None:
        return InputError(err.message + did_you_mean(err.word, err.choices))
    return InputError(err.message)


def redacted_tokens(tokens: Sequence[str]) -> tuple[str, ...]:
    """A pasted command's tokens with secrets redacted (environment values and flag values named like a secret,
    URL passwords anywhere), as the corrected command prints them."""
    from attn_preflight.probe.environ import REDACTED, is_secret_flag, redact, redact_url

    out: list[str] = []
    secret_value_next = False
    for token in tokens:
        name, has_value, value = token.partition("=")
        if secret_value_next:
            out.append(REDACTED)
        elif has_value and name.startswith("-"):
            out.append(f"{name}={REDACTED if is_secret_flag(name) else redact_url(value)}")
        elif has_value:  # an environment prefix, NAME=VALUE
            out.append(f"{name}={redact(name, value)}")
        else:
            out.append(redact_url(token))
        secret_value_next = token.startswith("-") and not has_value and is_secret_flag(token)
    return tuple(out)


def config_options(func):
    """The config flags, in SGLang's spelling, shared by `check`, `matrix` and `fleet`."""
    options = [
        click.option(
            "--engine",
            type=click.Choice(["sglang", "vllm"]),
            default=None,
            help="Serving engine whose rules apply (default: sglang, or the pasted command's).",
        ),
        click.option(
            "--attention-backend",
            "--backend",
            "attention_backend",
            metavar="NAME",
            help="Attention backend for prefill and decode (SGLang names; vLLM names with --engine vllm).",
        ),
        click.option("--prefill-attention-backend", metavar="NAME", help="Backend for prefill only."),
        click.option("--decode-attention-backend", metavar="NAME", help="Backend for decode only."),
        click.option("--mm-attention-backend", metavar="NAME", help="Vision-encoder attention backend."),
        click.option(
            "--kv-cache-dtype",
            metavar="DTYPE",
            help="auto, bf16, fp8_e4m3, fp8_e5m2, mxfp8, nvfp4, fp4_mx_block16, ...",
        ),
        click.option("--page-size", type=int, metavar="N", help="KV-cache page size in tokens."),
        click.option(
            "--enable-deterministic-inference",
            "--deterministic",
            "deterministic",
            is_flag=True,
            default=None,
            help="Batch-invariant (deterministic) inference.",
        ),
        click.option("--speculative-algorithm", metavar="NAME", help="EAGLE, EAGLE3, NEXTN, NGRAM, DFLASH, ..."),
        click.option("--speculative-eagle-topk", type=int, metavar="K", help="EAGLE draft tree top-k."),
        click.option("--tp-size", "--tp", "tp_size", type=int, metavar="N", help="Tensor-parallel size."),
        click.option(
            "--pp-size", "--pipeline-parallel-size", "pp_size", type=int, metavar="N", help="Pipeline-parallel size."
        ),
        click.option(
            "--mem-fraction-static",
            "--gpu-memory-utilization",
            "mem_fraction",
            type=float,
            metavar="F",
            help="Share of GPU memory for weights and KV cache (SGLang --mem-fraction-static, vLLM "
            "--gpu-memory-utilization) [default: the engine's].",
        ),
        click.option(
            "--context-length",
            "--max-model-len",
            "context_length",
            type=int,
            metavar="N",
            help="Longest request in tokens (SGLang --context-length, vLLM --max-model-len) [default: the model's].",
        ),
        click.option("--dtype", metavar="DTYPE", help="Model dtype (auto, bfloat16, float16, ...)."),
        click.option(
            "--model",
            metavar="DIR|CONFIG|PRESET",
            callback=not_blank,
            help="Local HF model directory, its config.json, a hub id (read from the local Hugging Face cache, "
            "never downloaded) or a preset's name, hub id or alias (`attn-preflight models` lists them).",
        ),
        click.option(
            "--feature",
            "features",
            multiple=True,
            metavar="NAME",
            help="Model feature config.json cannot say (repeatable): score_mod, rel_bias, sinks, softcap, "
            "sliding_window, mla, cross_attention, chunked_local, asymmetric_kv.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def command_within_limits(command: Sequence[str]) -> None:
    """A pasted command's size, before it is parsed (attn_preflight/probe/limits.py): InputError above it."""
    from attn_preflight.probe.limits import MAX_COMMAND_TOKENS, MAX_TOKEN_CHARS

    if len(command) > MAX_COMMAND_TOKENS:
        raise InputError(f"the pasted command has {len(command):,} tokens, more than {MAX_COMMAND_TOKENS:,}")
    longest = max(range(len(command)), key=lambda i: len(command[i]), default=None)
    if longest is not None and len(command[longest]) > MAX_TOKEN_CHARS:
        raise InputError(
            f"token {longest + 1} of the pasted command has {len(command[longest]):,} characters, more than "
            f"{MAX_TOKEN_CHARS:,}"
        )


def config_from_options(options: dict[str, Any], command: Sequence[str] = ()):
    """A validated attn_preflight.rules.core.config.Config from the config options and an optional pasted command.

    Explicit options win over the pasted command's flags; raises InputError (exit 2) on bad input."""
    from attn_preflight.inputs import (
        ModelNotFound,
        load_draft_model,
        load_model,
        read_dllm_algorithm_config,
        read_launch_config,
    )
    from attn_preflight.probe.environ import redact
    from attn_preflight.rules.core.validation import make_config

    try:
        values: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        engine = options.get("engine")
        if command:
            from attn_preflight.rules.core.launch_line import parse_command  # read only a pasted command

            command_within_limits(command)

            parsed = parse_command(command)
            if parsed.config_file is not None:  # the engine reads it: its flags are judged like pasted ones
                parsed = parse_command(command, config=read_launch_config(parsed.config_file))
            if engine and engine != parsed.engine:
                raise InputError(f"--engine {engine} contradicts the pasted {parsed.origin} command")
            engine = parsed.engine
            values.update(parsed.values)
            extra = {
                "env": {name: redact(name, value) for name, value in parsed.env.items()},
                "flags": parsed.flags,
                "ignored": tuple(parsed.ignored),
                "unmodelled": tuple(parsed.unmodelled),
                "options": tuple(parsed.options),
                "origin": parsed.origin,
                "command": redacted_tokens(parsed.tokens),
            }
        for key in _CONFIG_KEYS:
            value = options.get(key)
            if key == "features":
                values["features"] = tuple(value or ()) + tuple(values.get("features", ()))
            elif value is not None and key != "engine":
                values[key] = value
        reference = values.pop("model", None)
        model, missing = None, {}
        if reference:
            try:
                model = load_model(reference)
            except ModelNotFound as err:  # judged without the model: its rules answer unknown, never pass
                missing = {"model_missing": err.reference, "model_looked_in": err.looked_in}
            except RulesInputError:
                if options.get("model") is not None or not command:
                    raise
                # a pasted command's model path is the serving machine's (a container's /mnt/models): unread here
                missing = {"model_missing": reference, "model_looked_in": SERVING_MACHINE}
        draft_reference = extra.get("flags", {}).get("speculative_draft_model_path")
        if draft_reference is None and isinstance(extra.get("flags", {}).get("speculative_config"), str):
            draft_reference = _vllm_draft_reference(extra["flags"]["speculative_config"])
        if isinstance(draft_reference, str):
            values["draft_model"] = load_draft_model(draft_reference)
        dllm_config = extra.get("flags", {}).get("dllm_algorithm_config")
        if isinstance(dllm_config, str):
            values["dllm_algorithm_yaml"] = read_dllm_algorithm_config(dllm_config)
        return make_config(engine=engine or "sglang", model=model, **missing, **values, **extra)
    except RulesInputError as err:
        raise input_error(err) from None


def _vllm_draft_reference(text: str) -> Optional[str]:
    """The draft model vLLM's --speculative-config names (its "model"), read like --model where it is found here
    (attn_preflight.rules.engines.vllm.rules.speculative judges with it); None when there is none to read."""
    from attn_preflight.rules.core.jsontext import loads

    try:
        spec = loads(text)
    except ValueError:
        return None
    model = spec.get("model") if isinstance(spec, dict) else None
    return model if isinstance(model, str) and model.strip() else None


def target_options(func):
    options = [
        click.option(
            "--gpu",
            metavar="NAME",
            callback=not_blank,
            help="Judge for a GPU profile (H100, B200, RTX 5090, ...) or a compute capability (sm_90, 12.1) "
            "instead of this machine, optionally with a count (8xH100). Software facts are then unknown "
            "(reported as skipped).",
        ),
        click.option(
            "--gpu-count",
            type=click.IntRange(min=1),
            metavar="N",
            help="How many GPUs of the --gpu profile the node has (same as --gpu NxNAME).",
        ),
        click.option(
            "--facts",
            "facts_file",
            metavar="FILE",
            type=click.Path(dir_okay=False),
            callback=not_blank,
            help="Judge a report saved by `attn-preflight probe --format json`.",
        ),
        engine_version_option(),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def engine_version_option():
    """--engine-version, shared by `check`, `fleet` and `report`; `engine_pins` reads it."""
    return click.option(
        "--engine-version",
        "engine_versions",
        multiple=True,
        metavar="NAME==VER",
        help="Pin an installed version (repeatable): sglang==0.5.23, vllm==..., flash-attn-4==...",
    )


def engine_pins(engine_versions: Sequence[str]) -> dict[str, str]:
    """{package: version} from --engine-version; InputError (exit 2) on a bad one."""
    from attn_preflight.rules.core.target import parse_engine_versions

    try:
        return parse_engine_versions(engine_versions)
    except RulesInputError as err:
        raise input_error(err) from None


def target_from_options(
    gpu: Optional[str],
    facts_file: Optional[str],
    engine_versions: Sequence[str] = (),
    probe_timeout: float = PROBE_TIMEOUT_S,
    gpu_count: Optional[int] = None,
):
    """The target the options name; with neither --gpu nor --facts, this machine, its imports each checked
    within `probe_timeout` seconds."""
    from attn_preflight.inputs import live_target, load_facts_file
    from attn_preflight.rules.core.target import Target

    if gpu and facts_file:
        raise InputError("--gpu and --facts name two different targets; give one")
    if gpu_count is not None and not gpu:
        raise InputError("--gpu-count is the number of --gpu GPUs (a probe or --facts counts its own); add --gpu")
    pins = engine_pins(engine_versions)
    try:
        if gpu:
            target = Target.from_gpu(gpu, gpu_count)
        elif facts_file:
            target = load_facts_file(facts_file)
        else:
            from attn_preflight.commands.common import slow_note

            with slow_note(
                f"probing this machine (each library's import up to {probe_timeout:g} s; cached afterwards)…"
            ):
                target = live_target(probe_timeout)
    except RulesInputError as err:
        raise input_error(err) from None
    return target.with_engine_versions(pins)


def _optional_seconds(ctx: click.Context, param: click.Parameter, value: Optional[float]) -> Optional[float]:
    return None if value is None else positive_seconds(ctx, param, value)


def _smoke(report, timeout: Optional[float]):
    """`report` with the smoke findings of its config, run here (kernels in worker processes, never in this one)."""
    from attn_preflight import smoke_plan
    from attn_preflight.check_smoke import with_smoke
    from attn_preflight.probe.smoke.runner import DEFAULT_TIMEOUT_S
    from attn_preflight.render.smoke import progress_line

    started = time.monotonic()

    def progress(result, machine) -> None:
        note(progress_line(result, time.monotonic() - started, machine, stderr_width()))

    jobs = smoke_plan.plan(report.config, report.target)
    return with_smoke(report, smoke_plan.run(jobs, timeout or DEFAULT_TIMEOUT_S, progress))


def _ask_engine(cfg, target, options: dict[str, Any], command: Sequence[str], engine_python: Optional[str]):
    """The installed engine's answer about this launch line (attn_preflight.check_engine)."""
    from attn_preflight.check_engine import ask, request_for

    try:
        request = request_for(cfg, target, options, command)
    except RulesInputError as err:
        raise input_error(err) from None
    note(f"asking {request.engine} itself (its own code, in an isolated child; importing it takes a while)")
    return ask(request, engine_python)


# --- rule selection (issue 23): --select / --ignore, as ruff's; ATTN_PREFLIGHT_SELECT / ATTN_PREFLIGHT_IGNORE for CI

SELECT_ENV, IGNORE_ENV = "ATTN_PREFLIGHT_SELECT", "ATTN_PREFLIGHT_IGNORE"


def _rule_patterns(given: Sequence[str], env_name: str) -> tuple[str, ...]:
    """The rule ids / prefixes of an option (repeatable, comma-separated too) and of its environment variable,
    each checked against the rules: a pattern matching none is exit 2 with up to three close ids."""
    import os

    from attn_preflight.rules.core.registry import rule_ids

    words = [w for text in (*given, os.environ.get(env_name, "")) for w in re.split(r"[,\s]+", text) if w]
    if not words:
        return ()
    known = rule_ids()  # every engine's rules: only when a pattern is given
    for word in words:
        if not any(rule_id.startswith(word) for rule_id in known):
            raise InputError(f"no rule id is or starts with {word!r}{close_ids(word, known)}")
    return tuple(words)


def _selected(report, select: tuple[str, ...], ignore: tuple[str, ...]):
    """`report` with the findings of rules not selected, or ignored, left out and listed; the verdict re-judged
    from what is left, never a plain pass where a left-out rule was unknown, failed or warned."""
    from attn_preflight.rules.core.engine import Status, verdict_of

    def kept(rule_id: str) -> bool:
        chosen = not select or rule_id.startswith(select)
        return chosen and not (ignore and rule_id.startswith(ignore))

    left_out = tuple((f.rule_id, f.status.value) for f in report.findings if not kept(f.rule_id))
    if not left_out:
        return report
    findings = [f for f in report.findings if kept(f.rule_id)]
    verdict = verdict_of(findings)
    if verdict is Status.PASS and any(status in ("unknown", "fail", "warn") for _, status in left_out):
        verdict = Status.WARN  # what was left out is not known to pass
    report.findings, report.verdict, report.ignored_rules = findings, verdict, left_out
    if verdict is not Status.FAIL:
        report.alternatives, report.correction = [], None
    return report


# --- container forms (issue 23): `-- docker run …` and `--manifest FILE`; attn_preflight.containers loads only then


def _container_form(command: Sequence[str], manifest: Optional[str], container: Optional[str]):
    """The engine command a `docker run …` or a manifest holds (attn_preflight.containers.Unwrapped), else None."""
    first = command[0].split(None, 1)[0] if command and command[0].strip() else ""
    if manifest is None and container is None and "docker" not in first and first not in ("podman",):
        if not (command and "=" in first and any("docker" in word for word in command[:8])):
            return None
    from attn_preflight.containers import unwrap

    try:
        return unwrap(command, manifest, container)
    except RulesInputError as err:
        raise input_error(err) from None


def _with_image_pins(engine_versions: Sequence[str], pins: dict[str, str]) -> tuple[str, ...]:
    """--engine-version with the image tag's version added for an engine not pinned by the user."""
    pinned = {spec.split("==", 1)[0].strip().lower() for spec in engine_versions}
    return tuple(engine_versions) + tuple(f"{name}=={version}" for name, version in pins.items() if name not in pinned)


def _in_container(correction, form):
    """The corrected command put back in the pasted `docker run …` (its options and image as they were)."""
    import shlex
    from dataclasses import replace

    return replace(correction, command=shlex.join(form.around(shlex.split(correction.command))))


def _from_container(cfg, form):
    """`cfg` saying which container form it came from, with the form's options left out listed as ignored."""
    from dataclasses import replace

    origin = f"{form.form} → {cfg.origin}" + ("" if form.pins else " (the image tag names no engine version)")
    left_out = [f"[{form.form.split()[0]}] {' '.join(form.ignored)}"] if form.ignored else []
    flags = cfg.flags
    if form.nnodes and form.nnodes > 1 and "nnodes" not in flags:  # a LeaderWorkerSet group spans its pods
        flags = {**flags, "nnodes": form.nnodes}
    return replace(cfg, origin=origin, ignored=tuple(cfg.ignored) + tuple(left_out) + tuple(form.notes), flags=flags)


@click.command("check", context_settings={"ignore_unknown_options": False})
@target_options
@config_options
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also list the rules that passed or did not apply (table, markdown); by default only failures, "
    "warnings and unknowns are listed.",
)
@click.option(
    "--smoke",
    is_flag=True,
    help="Also run the backend's kernels on this machine at the model's shapes (each in its own process, "
    "against an fp32 reference) and say where the kernel and the rules disagree.",
)
@click.option(
    "--smoke-timeout",
    type=float,
    default=None,
    metavar="SECONDS",
    callback=_optional_seconds,
    help="Time limit per kernel with --smoke, imports and JIT included [default: 180].",
)
@click.option(
    "--probe-timeout",
    type=float,
    default=None,
    metavar="SECONDS",
    callback=_optional_seconds,
    help="Time limit for each library's import check when probing this machine (not with --gpu or "
    f"--facts) [default: {PROBE_TIMEOUT_S:g}].",
)
@click.option(
    "--ask-engine",
    is_flag=True,
    help="Also ask the installed engine itself: its own parser, resolution, backend selection and validation "
    "run on the launch line in an isolated child (no network, GPU simulated from the target), its answer "
    "beside the rules'.",
)
@click.option(
    "--engine-python",
    metavar="PATH",
    type=click.Path(dir_okay=False),
    callback=not_blank,
    help="With --ask-engine: the interpreter of the venv the engine is installed in [default: this one].",
)
@upgrade_option()
@click.option(
    "--manifest",
    metavar="FILE.yaml",
    type=click.Path(dir_okay=False),
    callback=not_blank,
    help="Read the launch command from a Kubernetes manifest (Deployment, LeaderWorkerSet, KServe "
    "ServingRuntime / InferenceService, ...): its container's command, args, env and image tag.",
)
@click.option("--container", metavar="NAME", callback=not_blank, help="The --manifest container to read.")
@click.option(
    "--select",
    "select_rules",
    multiple=True,
    metavar="RULE",
    help=f"Judge only these rules (repeatable; a prefix selects a family: kv-, fa4-) [env: {SELECT_ENV}].",
)
@click.option(
    "--ignore",
    "ignore_rules",
    multiple=True,
    metavar="RULE",
    help=f"Leave these rules out (repeatable, prefixes as --select); they are listed and a verdict left with an "
    f"ignored unknown is not a pass [env: {IGNORE_ENV}].",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only the failures and the verdict (table, markdown).")
@format_option()
@output_option()
@click.argument("command", nargs=-1, type=click.UNPROCESSED, metavar="[-- LAUNCH COMMAND]")
def check_command(
    gpu,
    gpu_count,
    facts_file,
    engine_versions,
    upgrade_to,
    strict,
    show_all,
    smoke,
    smoke_timeout,
    probe_timeout,
    ask_engine,
    engine_python,
    fmt,
    output,
    command,
    manifest=None,
    container=None,
    select_rules=(),
    ignore_rules=(),
    quiet=False,
    **config,
):
    """Check a serving config against every rule: found vs required, the fix, the upstream error it prevents.

    \b
    attn-preflight check --model deepseek-ai/DeepSeek-V3 --attention-backend fa4 --enable-deterministic-inference
    attn-preflight check --gpu B200 --model ./Llama-3.1-8B --attention-backend fa4 --kv-cache-dtype mxfp8
    attn-preflight check --gpu H100 -- python -m sglang.launch_server --model-path ./m --attention-backend fa3
    attn-preflight check --smoke --model ./Llama-3.1-8B --attention-backend fa4

    Exit 0 pass or warn, 1 fail (or warn with --strict), 2 bad input.
    """
    from attn_preflight.render.findings import render_report
    from attn_preflight.rules.core.judge import evaluate

    if smoke and (gpu or facts_file):
        raise InputError(
            f"--smoke runs the kernels on this machine; it cannot judge {'--gpu' if gpu else '--facts'} (drop one)"
        )
    if smoke_timeout is not None and not smoke:
        raise InputError("--smoke-timeout needs --smoke")
    if probe_timeout is not None and (gpu or facts_file):
        raise InputError(
            f"--probe-timeout bounds the import checks of this machine's probe; with "
            f"{'--gpu' if gpu else '--facts'} nothing is probed (drop one)"
        )
    if engine_python is not None and not ask_engine:
        raise InputError("--engine-python names the interpreter --ask-engine asks; add --ask-engine")
    if engine_python is not None and not (os.path.isfile(engine_python) and os.access(engine_python, os.X_OK)):
        raise InputError(f"--engine-python {engine_python}: not an executable file")
    check_output_writable(output)
    select, ignore = _rule_patterns(select_rules, SELECT_ENV), _rule_patterns(ignore_rules, IGNORE_ENV)
    form = _container_form(command, manifest, container)
    if form is not None:
        command = form.command
        engine_versions = _with_image_pins(engine_versions, form.pins)
        if form.model is not None and config.get("model") is None:  # KServe storageUri hf://: the mounted model
            config = {**config, "model": form.model}
        if form.gpus_per_pod and gpu and gpu_count is None and not re.match(r"^\s*\d+\s*[xX]", gpu):
            gpu_count = form.gpus_per_pod  # the pod's nvidia.com/gpu: one node's GPUs
    cfg = config_from_options(config, command)
    if form is not None:
        cfg = _from_container(cfg, form)
    target = target_from_options(gpu, facts_file, engine_versions, probe_timeout or PROBE_TIMEOUT_S, gpu_count)
    if upgrade_to is not None:  # attn_preflight.commands.upgrade: the check at that release, and what changes
        if smoke or ask_engine:
            raise InputError(
                "--upgrade-to judges releases that are not installed; it cannot run --smoke or --ask-engine (drop one)"
            )
        from attn_preflight.commands.upgrade import run_upgrade

        if run_upgrade(cfg, target, upgrade_to, fmt, output, show_all, strict):
            raise click.exceptions.Exit(EXIT_FAIL)
        return
    answer = None
    if ask_engine:
        answer = _ask_engine(cfg, target, config, command, engine_python)
        version = answer.get("engine_version")
        if version and cfg.engine not in engine_pins(engine_versions):  # judge the release that was asked
            target = target.with_engine_versions({cfg.engine: version})
    report = evaluate(cfg, target)
    if smoke:
        report = _smoke(report, smoke_timeout)
    if answer is not None:
        from attn_preflight.check_engine import with_engine

        report = with_engine(report, answer)
    if select or ignore:
        report = _selected(report, select, ignore)
    if form is not None and form.prefix and report.correction is not None and report.correction.command:
        report.correction = _in_container(report.correction, form)
    rendered = render_report(report, fmt.lower(), show_all=show_all, screen=screen_for(fmt, output), quiet=quiet)
    write_output(rendered, output)
    code = report.exit_code(strict)
    if code:
        raise click.exceptions.Exit(EXIT_FAIL)
