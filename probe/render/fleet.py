"""A merged fleet as table, markdown or JSON: node groups with their verdict and why, then the spread.

Table/markdown: a header (nodes, reports skipped, the config), one row per group of identical nodes (GPU,
driver, torch, the library states that differ between groups, verdict, failing rules with their fix and
what would pass instead), the nodes of each group, the spread of every dimension (`*` marks one that is
not uniform), then the fleet verdict. JSON carries everything, with every node name.
"""
from __future__ import annotations

import textwrap
from typing import Any

from probe.fleet import (Fleet, NodeGroup, differing_dimensions, driver_summary, gpu_summary, library_state,
                         torch_summary)
from probe.render import heading, table, to_json
from probe.render.findings import _config_line, report_to_dict

FLEET_SCHEMA_VERSION = 1
_NAMES_SHOWN = 6
_WIDTH = 60


def _problems(group: NodeGroup) -> list[Any]:
    return [f for f in group.report.findings if f.status.value in ("fail", "warn", "unknown")]


def _why(group: NodeGroup, fmt: str) -> str:
    lines = []
    for finding in _problems(group):
        fix = f" (fix: {' '.join(finding.fix)})" if finding.fix else ""
        lines.append(f"{finding.status.value}: {finding.rule_id}: {finding.message}{fix}")
    if not lines and group.report.verdict != "pass":  # the engine's warn for "nothing could be judged"
        lines.append(f"nothing could be judged on {group.report.target.describe()}")
    alternatives = [a.value for a in group.report.alternatives if a.option == "--attention-backend"
                    and a.verdict == "pass"]
    if alternatives:
        lines.append("passes instead: --attention-backend " + " | ".join(alternatives))
    if fmt == "markdown":
        return "<br>".join(lines)
    return "\n".join(textwrap.fill(line, _WIDTH, subsequent_indent="  ") for line in lines)


def _names(group: NodeGroup) -> str:
    names = group.node_names
    shown = ", ".join(names[:_NAMES_SHOWN])
    return shown + (f", … (+{len(names) - _NAMES_SHOWN} more)" if len(names) > _NAMES_SHOWN else "")


def fleet_to_dict(fleet: Fleet) -> dict[str, Any]:
    differing = [d for d in differing_dimensions(fleet.spread) if d.startswith("lib ")]
    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "verdict": fleet.verdict,
        "nodes": fleet.node_count,
        "reports": fleet.reports_given,
        "skipped": [{"file": path, "reason": reason} for path, reason in fleet.skipped],
        "config": fleet.config.to_dict(),
        "groups": [{
            "id": group.id,
            "verdict": group.report.verdict,
            "node_count": len(group.nodes),
            "nodes": [{"name": node.name, "file": node.source} for node in group.nodes],
            "gpu": gpu_summary(group.facts),
            "driver_version": group.facts.gpus.driver_version,
            "cuda_driver_version": group.facts.gpus.cuda_driver_version,
            "torch": group.facts.torch.version,
            "libraries": {d[4:]: library_state(group.facts, d[4:]) for d in differing},
            "check": report_to_dict(group.report),
        } for group in fleet.groups],
        "spread": [{"dimension": r.dimension, "value": r.value, "nodes": r.nodes} for r in fleet.spread],
    }


def render_fleet(fleet: Fleet, fmt: str) -> str:
    if fmt == "json":
        return to_json(fleet_to_dict(fleet))
    out = [heading("attn-preflight fleet", fmt, level=1)]
    skipped = f" ({len(fleet.skipped)} unreadable, skipped: see stderr)" if fleet.skipped else ""
    pairs = [("nodes", f"{fleet.node_count} in {len(fleet.groups)} group(s) of identical nodes, from "
                       f"{fleet.reports_given} report(s){skipped}")]
    pairs.append(("config", _config_line(fleet.config)))
    out.append("\n".join(f"{k}: {v}" for k, v in pairs) if fmt != "markdown"
               else "\n".join(f"- **{k}**: {v}" for k, v in pairs))
    if fleet.groups:
        differing = [d for d in differing_dimensions(fleet.spread) if d.startswith("lib ")]
        rows = []
        for group in fleet.groups:
            facts = group.facts
            libraries = [f"{d[4:]} {library_state(facts, d[4:])}" for d in differing]
            backend = group.report.config.backend_label()
            rows.append([group.id, len(group.nodes), gpu_summary(facts), driver_summary(facts), torch_summary(facts),
                         ("<br>" if fmt == "markdown" else "\n").join(libraries), backend,
                         group.report.verdict.upper(), _why(group, fmt)])
        out.append(heading("Node groups", fmt))
        out.append(table(["group", "nodes", "GPU", "driver", "torch", "libraries that differ", "backend", "verdict",
                          "why"], rows, fmt))
        out.append(heading("Nodes", fmt))
        out.append("\n".join(f"{'- ' if fmt == 'markdown' else ''}{g.id}: {_names(g)}" for g in fleet.groups))
        marked = set(differing_dimensions(fleet.spread))
        spread_rows = [[r.dimension + (" *" if r.dimension in marked else ""), r.value, r.nodes] for r in fleet.spread]
        out.append(heading("Spread (* = differs across the fleet)", fmt))
        out.append(table(["dimension", "value", "nodes"], spread_rows, fmt))
    failing = [g for g in fleet.groups if g.report.verdict == "fail"]
    failing_nodes = sum(len(g.nodes) for g in failing)
    summary = (f"{len(failing)} of {len(fleet.groups)} group(s), {failing_nodes} of {fleet.node_count} node(s) fail"
               if fleet.groups else "no readable report")
    if fleet.skipped:
        summary += f"; {len(fleet.skipped)} report(s) skipped, never counted as passing"
    verdict = f"verdict: {fleet.verdict.upper()} ({summary})"
    out.append(f"**{verdict}**" if fmt == "markdown" else verdict)
    return "\n\n".join(out)
