"""A merged fleet as table, markdown or JSON: node groups with their verdict and why, then the spread.

Table/markdown: a header (nodes, reports skipped, the config), one row per group of identical nodes (GPU,
driver, torch, the library states that differ between groups, verdict, the rules it fails, the backends
that would pass instead), each distinct problem once with the groups it hits and its fix, the nodes of each
group, the spread of every dimension (`*` marks one that is not uniform), then the fleet verdict. JSON
carries everything, with every node name.
"""

from __future__ import annotations

from typing import Any

from attn_preflight.fleet import (
    Fleet,
    NodeGroup,
    differing_dimensions,
    driver_summary,
    gpu_summary,
    library_state,
    torch_summary,
)
from attn_preflight.render import PLAIN, Screen, heading, status_word, table, to_json, wrap_lines
from attn_preflight.render.findings import config_line, report_to_dict
from attn_preflight.rules.checks.parallel import gpus_needed
from attn_preflight.rules.core.engine import FLAGGED

FLEET_SCHEMA_VERSION = 1
_NAMES_SHOWN = 6


def _problems(group: NodeGroup) -> list[Any]:
    return [f for f in group.report.findings if f.status in FLAGGED]


def _rules_cell(group: NodeGroup) -> str:
    """The rules a group fails or warns on, by id (the Why section says what each means)."""
    ids = list(dict.fromkeys(f.rule_id for f in _problems(group)))
    if not ids and group.report.verdict != "pass":  # the engine's warn for "nothing could be judged"
        return "nothing could be judged"
    return ", ".join(ids)


def _instead(group: NodeGroup) -> str:
    return ", ".join(a.value for a in group.report.alternatives if a.picks_backend and a.verdict == "pass")


def _why(fleet: Fleet, fmt: str, screen: Screen) -> str:
    """Each distinct problem once, with the groups and nodes it hits: a fleet of hundreds fails for few reasons."""
    hits: dict[tuple[str, str, str], list[NodeGroup]] = {}
    details: dict[tuple[str, str, str], Any] = {}
    for group in fleet.groups:
        for finding in _problems(group):
            key = (finding.status.value, finding.rule_id, finding.message)
            hits.setdefault(key, []).append(group)
            details[key] = finding
        if group.report.verdict != "pass" and not _problems(group):
            key = ("warn", "nothing judged", group.report.target.describe().split(": ", 1)[-1])
            hits.setdefault(key, []).append(group)
    lines = []
    for key, groups in sorted(hits.items(), key=lambda kv: (kv[0][0] != "fail", -sum(len(g.nodes) for g in kv[1]))):
        status, rule_id, message = key
        nodes = sum(len(g.nodes) for g in groups)
        finding = details.get(key)
        fix = f" Fix: {' '.join(finding.fix)}" if finding is not None and finding.fix else ""
        where = "all groups" if len(groups) == len(fleet.groups) else ", ".join(g.id for g in groups)
        text = f"{status_word(status.upper(), screen)} {rule_id} [{where}; {nodes} node(s)]: {message}.{fix}"
        lines.append(f"- {text}")
    return wrap_lines("\n".join(lines), screen)


def _gpu(facts) -> str:
    return gpu_summary(facts).replace("NVIDIA ", "")


def _names(group: NodeGroup) -> str:
    names = group.node_names
    shown = ", ".join(names[:_NAMES_SHOWN])
    return shown + (f", … (+{len(names) - _NAMES_SHOWN} more)" if len(names) > _NAMES_SHOWN else "")


def _gpu_counts(fleet: Fleet) -> str:
    """'8 per launch (TP 8 x PP 1); enough: G1, G3; too few: G2 (4)'."""
    needed = gpus_needed(fleet.config)
    enough = [g.id for g in fleet.groups if g.report.target.gpu_count >= needed]
    short = [f"{g.id} ({g.report.target.gpu_count})" for g in fleet.groups if g.report.target.gpu_count < needed]
    layout = f"TP {fleet.config.tp_size} x PP {fleet.config.pp_size}"
    return f"{needed} per launch ({layout}); enough: {', '.join(enough) or 'none'}" + (
        f"; too few: {', '.join(short)}" if short else ""
    )


def fleet_to_dict(fleet: Fleet) -> dict[str, Any]:
    differing = [d for d in differing_dimensions(fleet.spread) if d.startswith("lib ")]
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "verdict": fleet.verdict,
        "nodes": fleet.node_count,
        "reports": fleet.reports_given,
        "skipped": [{"file": path, "reason": reason} for path, reason in fleet.skipped],
        "config": fleet.config.to_dict(),
        "gpus_needed": gpus_needed(fleet.config),
        "groups": [
            {
                "id": group.id,
                "verdict": group.report.verdict,
                "node_count": len(group.nodes),
                "nodes": [{"name": node.name, "file": node.source} for node in group.nodes],
                "gpu": gpu_summary(group.facts),
                "gpu_count": group.report.target.gpu_count,
                "enough_gpus": group.report.target.gpu_count >= gpus_needed(fleet.config),
                "driver_version": group.facts.gpus.driver_version,
                "cuda_driver_version": group.facts.gpus.cuda_driver_version,
                "torch": group.facts.torch.version,
                "libraries": {d[4:]: library_state(group.facts, d[4:]) for d in differing},
                "check": report_to_dict(group.report),
            }
            for group in fleet.groups
        ],
        "spread": [{"dimension": r.dimension, "value": r.value, "nodes": r.nodes} for r in fleet.spread],
    }


def render_fleet(fleet: Fleet, fmt: str, screen: Screen = PLAIN) -> str:
    if fmt == "json":
        return to_json(fleet_to_dict(fleet))
    out = [heading("attn-preflight fleet", fmt, level=1)]
    skipped = f" ({len(fleet.skipped)} unreadable, skipped: see stderr)" if fleet.skipped else ""
    pairs = [
        (
            "nodes",
            f"{fleet.node_count} in {len(fleet.groups)} group(s) of identical nodes, from "
            f"{fleet.reports_given} report(s){skipped}",
        )
    ]
    pairs.append(("config", config_line(fleet.config)))
    if fleet.groups:
        pairs.append(("gpus", _gpu_counts(fleet)))
    out.append(
        wrap_lines("\n".join(f"{k}: {v}" for k, v in pairs), screen)
        if fmt != "markdown"
        else "\n".join(f"- **{k}**: {v}" for k, v in pairs)
    )
    if fleet.groups:
        # torch is its own column; other libraries only where groups differ
        differing = [d for d in differing_dimensions(fleet.spread) if d.startswith("lib ") and d != "lib torch"]
        backends = {g.report.config.backend_label() for g in fleet.groups}
        newline = "<br>" if fmt == "markdown" else "\n"
        headers = ["group", "nodes", "GPU", "driver", "torch"] + (["libraries that differ"] if differing else [])
        headers += ["backend"] if len(backends) > 1 else []
        headers += ["verdict", "rules", "passes instead"]
        rows = []
        for group in fleet.groups:
            facts = group.facts
            row = [
                group.id,
                len(group.nodes),
                _gpu(facts),
                driver_summary(facts),
                torch_summary(facts),
            ]
            row += [newline.join(f"{d[4:]} {library_state(facts, d[4:])}" for d in differing)] if differing else []
            row += [group.report.config.backend_label()] if len(backends) > 1 else []
            row += [status_word(group.report.verdict.upper(), screen), _rules_cell(group), _instead(group)]
            rows.append(row)
        out.append(heading("Node groups", fmt))
        out.append(table(headers, rows, fmt, width=screen.width, detail=len(headers) - 1))  # passes instead
        why = _why(fleet, fmt, screen)
        if why:
            out.append(heading("Why", fmt))
            out.append(why)
        out.append(heading("Nodes", fmt))
        out.append(
            wrap_lines(
                "\n".join(f"{'- ' if fmt == 'markdown' else ''}{g.id}: {_names(g)}" for g in fleet.groups), screen
            )
        )
        marked = set(differing_dimensions(fleet.spread))
        spread_rows = [[r.dimension + (" *" if r.dimension in marked else ""), r.value, r.nodes] for r in fleet.spread]
        out.append(heading("Spread (* = differs across the fleet)", fmt))
        out.append(table(["dimension", "value", "nodes"], spread_rows, fmt, width=screen.width))
    failing = [g for g in fleet.groups if g.report.verdict == "fail"]
    failing_nodes = sum(len(g.nodes) for g in failing)
    summary = (
        f"{len(failing)} of {len(fleet.groups)} group(s), {failing_nodes} of {fleet.node_count} node(s) fail"
        if fleet.groups
        else "no readable report"
    )
    if fleet.skipped:
        summary += f"; {len(fleet.skipped)} report(s) skipped, never counted as passing"
    verdict = f"verdict: {status_word(fleet.verdict.upper(), screen)} ({summary})"
    out.append(f"**{verdict}**" if fmt == "markdown" else verdict)
    return "\n\n".join(out)
