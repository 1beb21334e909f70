"""A check Report as table, markdown or JSON.

Table/markdown: a header (target, config, ignored flags), the findings table (status, rule, found vs
required, fix), what each failing rule prevents (the upstream message), the alternatives, notes, and the
verdict line. Passed and skipped rules are counted, and listed with show_all (findings asked for, such as
`check --smoke`'s, are listed even when skipped). JSON carries everything.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from attn_preflight.render import PLAIN, Screen, heading, status_word, table, to_json, wrap_lines
from attn_preflight.rules.checks.memory import memory_figures

CHECK_SCHEMA_VERSION = 1
_COMMAND_WIDTH = 100  # columns a corrected command's lines fill when the screen sets no width


def prevents_for(finding, config) -> str:
    """The upstream message a finding prevents, in the words of the backend the config uses: a row shared by
    several backends (trtllm_mla, cutedsl_mla) quotes one's message, and each factory raises it with its own name."""
    text = finding.prevents
    backends: frozenset[str] = getattr(finding.rule, "backends", frozenset())
    if not text or len(backends) < 2:
        return text
    used = sorted(backends & config.backends)
    named = [b for b in backends if re.search(rf"\b{re.escape(b)}\b", text)]
    if len(used) == 1 and named and used[0] not in named:
        for other in named:
            text = re.sub(rf"\b{re.escape(other)}\b", used[0], text)
    return text


def _finding_dict(finding, config) -> dict[str, Any]:
    out = finding.to_dict()
    if "prevents" in out:
        out["prevents"] = prevents_for(finding, config)
    return out


def report_to_dict(report) -> dict[str, Any]:
    out = {
        "schema_version": CHECK_SCHEMA_VERSION,
        "verdict": report.verdict,
        "counts": report.counts(),
        "target": report.target.to_dict(),
        "config": report.config.to_dict(),
        "findings": [_finding_dict(f, report.config) for f in report.findings],
        "alternatives": [a.to_dict() for a in report.alternatives],
        "memory": _memory(report),
        "correction": report.correction.to_dict() if report.correction else None,
        "ignored_rules": [{"rule_id": rule_id, "status": status} for rule_id, status in report.ignored_rules],
    }
    if report.engine_answer is not None:  # check --ask-engine
        out["engine_answer"] = report.engine_answer
    return out


def _memory(report) -> Any:
    figures = memory_figures(report.config, report.target)
    return figures.to_dict() if figures else None


def memory_lines(report) -> list[tuple[str, str]]:
    """("memory", "weights 15.0 GiB per GPU of a 70.3 GiB budget"), ("kv capacity", "bf16 0.41 M tokens; ...")."""
    figures = memory_figures(report.config, report.target)
    if figures is None:
        return []
    lines = [
        (
            "memory",
            f"weights {figures.weights_gib:.1f} GiB per GPU ({figures.weight_format}) of a {figures.budget_gib:.1f} "
            f"GiB budget ({figures.gpu_memory_gib:g} GiB{f' of {figures.memory_origin}' if figures.memory_origin else ''} x "
            f"{figures.fraction:.3f}, {figures.fraction_origin})",
        )
    ]
    if figures.fits:
        lines.append(("kv capacity", figures.capacity_line()))
    return lines


def engine_line(answer: dict[str, Any]) -> str:
    """`check --ask-engine`'s header line: who was asked, on what, and how long it took."""
    who = f"{answer.get('engine')} {answer.get('engine_version') or ''}".strip()
    stages = ", ".join(answer.get("stages") or []) or "no stage"
    status = {"accepted": "accepted", "rejected": "rejected", "could_not_ask": "could not be asked"}.get(
        str(answer.get("status")), str(answer.get("status"))
    )
    if answer.get("stage") and answer.get("status") != "accepted":
        status += f" at {answer['stage']}"
    sim = answer.get("sim") or {}
    on = f" on a simulated {sim['name']}" if sim.get("name") else ""
    return f"{who} {status}{on} (asked: {stages}; {float(answer.get('seconds') or 0):.1f} s, {answer.get('python')})"


_HEADS = ("EAGLE", "EAGLE3", "eagle", "eagle3")


def _draft_part(config) -> str:
    """The draft checkpoint (SGLang --speculative-draft-model-path, vLLM --speculative-config's "model"): its
    architecture where it was read, else that it was not read and what it is judged as (issue 23)."""
    reference = config.flags.get("speculative_draft_model_path")
    method = config.speculative_algorithm
    if config.engine == "vllm" and isinstance(config.flags.get("speculative_config"), str):
        from attn_preflight.rules.engines.vllm.rules.speculative import spec_of

        spec = spec_of(config) or {}
        reference, method = spec.get("model"), spec.get("method")
        if method is None and isinstance(reference, str) and "eagle" in reference.lower():
            method = "eagle3" if "eagle3" in reference.lower() else "eagle"
    if not isinstance(reference, str):
        return ""
    if config.draft_model is not None:
        return f"draft {config.draft_model.name} ({config.draft_model.architecture or 'unknown architecture'})"
    if method in _HEADS:
        return f"draft {reference} (not read here: a dense {method} head, never judged as the target's layers)"
    return f"draft {reference} (not read here)"


def config_line(config) -> str:
    parts = [config.engine]
    if config.model is not None:
        model = config.model
        kind = "MLA" if model.mla else f"head_dim {model.head_dim}"
        parts.append(f"model {model.name} ({model.architecture or 'unknown architecture'}, {kind})")
    backend = config.backend_label()
    if config.backends or not config.auto_backend:
        parts.append(f"attention {backend}" + (" [engine default]" if config.auto_backend else ""))
    else:  # the engine's default, not resolved without the model (the backend line says why)
        parts.append("attention: the engine's default, not resolved")
    parts.append(f"kv {config.kv_cache_dtype}")
    if config.page_size is not None:
        parts.append(f"page {config.page_size}")
    if config.deterministic:
        parts.append("deterministic")
    if config.speculative_algorithm:
        topk = f" topk {config.speculative_eagle_topk}" if config.speculative_eagle_topk is not None else ""
        parts.append(f"speculative {config.speculative_algorithm}{topk}")
    if config.engine == "vllm" and isinstance(config.flags.get("speculative_config"), str):
        from attn_preflight.rules.engines.vllm.rules.speculative import spec_of

        spec = spec_of(config)
        if spec is not None:
            method = spec.get("method")
            if "" in spec:
                parts.append("speculative (--speculative-config not JSON)")
            else:
                parts.append(
                    f"speculative {method}" if isinstance(method, str) else "speculative (method from the draft)"
                )
    draft = _draft_part(config)
    if draft:
        parts.append(draft)
    if config.tp_size != 1:
        parts.append(f"tp {config.tp_size}")
    if config.pp_size != 1:
        parts.append(f"pp {config.pp_size}")
    extra = sorted(config.extra_features)
    if extra:
        parts.append("features " + ", ".join(extra))
    return " · ".join(parts)


def _correction_block(correction, fmt: str, screen: Screen) -> str:
    """The corrected command (or flags), re-checked; long commands continued with backslashes, one flag and its
    value per line, so that the block pastes into a shell as it is printed."""
    title = "Corrected command" if correction.pasted else "Corrected flags"
    level = 3 if fmt == "markdown" else 2
    if correction.command is None:
        return heading(title, fmt, level=level) + "\n" + wrap_lines(f"none: {correction.reason}", screen)
    count = len(correction.changes)
    head = heading(
        f"{title} ({count} change{'s' if count != 1 else ''}, re-checked: {correction.verdict.value})", fmt, level
    )
    dropped = [change.split(" ", 1)[1] for change in correction.changes if change.startswith("drop ")]
    said = f"\n\ndropped: {' '.join(dropped)} (the changed flags replace it)" if dropped else ""
    if fmt == "markdown":
        return f"{head}\n```\n{correction.command}\n```{said}"
    # each line indented 4 and continued with " \\": 6 columns of the screen's width
    lines = _command_lines(correction.command, (screen.width or _COMMAND_WIDTH) - 6)
    return head + "\n" + " \\\n".join(("  " if i == 0 else "    ") + line for i, line in enumerate(lines)) + said


def _command_lines(command: str, width: int) -> list[str]:
    """`command` cut into lines of at most `width` where it can be, only between a flag's group (the flag and
    its value) and the next: never inside a word."""
    words = shlex.split(command)
    quoted = [shlex.quote(w) for w in words]
    groups: list[str] = []
    for i, word in enumerate(quoted):
        if groups and not word.startswith("-") and words[i - 1].startswith("-") and "=" not in words[i - 1]:
            groups[-1] += " " + word  # a flag's value stays with its flag
        else:
            groups.append(word)
    lines = [groups[0]]
    for group in groups[1:]:
        if len(lines[-1]) + 1 + len(group) > width:
            lines.append(group)
        else:
            lines[-1] += " " + group
    return lines


def _collapsed(shown: list) -> list:
    """`shown` with the unknowns of a model never read folded into general-model-config's row: one line says what
    is missing, how to get it and how many rules wait for it (--all lists them)."""
    from attn_preflight.rules.core.engine import Finding
    from attn_preflight.rules.core.judge import NEEDS_MODEL

    waiting = [f for f in shown if f.status.value == "unknown" and f.message.startswith(NEEDS_MODEL)]
    head = next((f for f in shown if f.rule_id == "general-model-config"), None)
    if not waiting or head is None:
        return shown
    count = len(waiting)
    waits = f"{count} rule{'s' if count != 1 else ''} that depend on the model answer unknown, listed by --all"
    outcome = head.outcome._replace(reason=f"{head.outcome.reason}; {waits}" if head.outcome.reason else waits)
    folded = Finding(head.rule, outcome, head.note)
    return [folded if f is head else f for f in shown if f not in waiting]


def _verdict_line(report, fmt: str, screen: Screen) -> str:
    counts = report.counts()
    summary = ", ".join(
        f"{counts[s]} {label}"
        for s, label in (
            ("fail", "failed"),
            ("warn", "warnings"),
            ("unknown", "unknown"),
            ("pass", "passed"),
            ("skip", "skipped"),
        )
        if counts[s]
    )
    if report.ignored_rules:
        count = len(report.ignored_rules)
        summary += f"; {count} rule{'s' if count != 1 else ''} ignored"
    verdict = f"verdict: {status_word(report.verdict.upper(), screen)} ({summary})"
    return f"**{verdict}**" if fmt == "markdown" else verdict


def _ignored_line(report, screen: Screen) -> str:
    """The rules --ignore / --select left out, those that did not pass first: one wrapped line."""
    order = {"fail": 0, "unknown": 1, "warn": 2, "pass": 3, "skip": 4}
    ranked = sorted(report.ignored_rules, key=lambda item: order.get(item[1], 5))
    named = [f"{rule_id} ({status})" for rule_id, status in ranked if status not in ("pass", "skip")]
    quiet = len(ranked) - len(named)
    text = (
        "ignored rules: "
        + ", ".join(named)
        + (f"{' and ' if named else ''}{quiet} that passed or did not apply" if quiet else "")
    )
    return wrap_lines(text, screen)


def _quiet_report(report, fmt: str, screen: Screen) -> str:
    """--quiet: the failures (rule, found vs required, fix) and the verdict, nothing else."""
    failures = [f for f in report.findings if f.status.value == "fail"]
    out = []
    if failures:
        rows = [[f.rule_id, f.message, "\n".join(f.fix)] for f in failures]
        out.append(
            table(
                ["rule", "found vs required", "fix"],
                rows,
                fmt,
                width=screen.width,
                whole={2},
                title_columns=1,
                detail=1,
            )
        )
    if report.ignored_rules:
        out.append(_ignored_line(report, screen))
    out.append(_verdict_line(report, fmt, screen))
    return "\n\n".join(out)


def render_report(report, fmt: str, show_all: bool = False, screen: Screen = PLAIN, quiet: bool = False) -> str:
    if fmt == "json":
        return to_json(report_to_dict(report))
    if quiet:
        return _quiet_report(report, fmt, screen)
    config, target = report.config, report.target
    out = [heading("attn-preflight check", fmt, level=1)]
    pairs = [("target", f"{target.describe()} [{target.label}]"), ("config", config_line(config))]
    if config.auto_backend:
        chosen = f"{config.attention_backend}: " if config.attention_backend else ""
        pairs.append(("backend", chosen + config.auto_backend))
    if config.origin != "flags":
        pairs.append(("command", f"{config.origin} (parsed, not run)"))
    if config.unmodelled:
        pairs.append(("not modelled", "bear on attention, not judged: " + " ".join(config.unmodelled)))
    if config.ignored:
        pairs.append(("ignored", "do not bear on attention: " + " ".join(config.ignored)))
    if report.engine_answer is not None:
        pairs.append(("engine", engine_line(report.engine_answer)))
    if target.gpu_note and target.cc is not None:
        pairs.append(("gpu note", target.gpu_note))
    pairs.extend(memory_lines(report))
    out.append(
        wrap_lines("\n".join(f"{k}: {v}" for k, v in pairs), screen)
        if fmt != "markdown"
        else "\n".join(f"- **{k}**: {v}" for k, v in pairs)
    )

    # Failures first, and by default only what needs attention; --all adds the rules that passed or did not apply.
    shown = [
        f
        for f in report.findings
        if show_all or f.status.value not in ("pass", "skip") or getattr(f, "listed_when_skipped", False)
    ]
    hidden = sum(1 for f in report.findings if f.status.value == "pass") if not show_all else 0
    if not show_all:
        shown = _collapsed(shown)
    if shown:
        rows = [
            [
                status_word(f.status.value.upper(), screen),
                f.rule_id,
                f.message,
                "\n".join(f.fix) if fmt != "markdown" else "<br>".join(f"`{x}`" for x in f.fix),
            ]
            for f in shown
        ]
        headers = ["status", "rule", "found vs required", "fix"]
        out.append(table(headers, rows, fmt, width=screen.width, whole={3}, title_columns=2, detail=2))
    if hidden:
        out.append(f"{hidden} rule{'s' if hidden != 1 else ''} passed (--all lists them)")
    prevents = [f for f in report.findings if f.status.value in ("fail", "warn") and f.prevents]
    if prevents:
        lines = [heading("Prevents", fmt, level=3 if fmt == "markdown" else 2)]
        for f in prevents:
            lines.append(f'- {f.rule_id}: "{prevents_for(f, report.config)}"  ({f.source})')
        out.append(wrap_lines("\n".join(lines), screen))
    if report.alternatives:
        lines = [heading("Would pass instead", fmt, level=3 if fmt == "markdown" else 2)]
        for option in dict.fromkeys(a.option for a in report.alternatives):
            engine = "SGLang" if report.config.engine == "sglang" else "vLLM"
            values = [
                a.value
                + (f" → {engine} runs {a.becomes}" if a.becomes else "")
                + ("" if a.verdict == "pass" else f" ({a.verdict})")
                for a in report.alternatives
                if a.option == option
            ]
            label = option if option.startswith("-") else f"{option}=… (environment variable)"
            lines.append(f"- {label}: {', '.join(values)}")
        out.append(wrap_lines("\n".join(lines), screen))
    if report.correction:
        out.append(_correction_block(report.correction, fmt, screen))
    notes = list(dict.fromkeys(f.note for f in report.findings if f.note))
    if notes:
        out.append(wrap_lines("\n".join(f"note: {n}" for n in notes), screen))
    if report.ignored_rules:
        out.append(_ignored_line(report, screen))
    out.append(_verdict_line(report, fmt, screen))
    return "\n\n".join(out)
