"""Many saved probe reports as one fleet: identical nodes grouped, and the spread of hardware and libraries.

Pure: reports come in as Facts already read (probe/commands/fleet.py does the I/O and names bad files).
Two nodes are identical when everything the rules can read of them is equal: GPUs (model, compute capability,
memory, count, MIG), driver and CUDA, nvcc, the torch build, every library's installed distributions and
import health, CUTLASS headers, the relevant environment, and whether imports were checked. What differs per
machine without bearing on a verdict (hostname, time, UUIDs, paths, import timings, error wording) is left
out, so one rules evaluation per group answers for all of its nodes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from attn_preflight.probe.facts import HEALTH_BROKEN, HEALTH_NOT_INSTALLED, Facts

INCOMPLETE = "incomplete"  # the fleet verdict when a report could not be read: a node not judged never passes


@dataclass(frozen=True)
class Node:
    source: str  # the report file
    facts: Facts

    @property
    def name(self) -> str:
        return self.facts.host.hostname or self.source


@dataclass
class NodeGroup:
    key: str  # the canonical signature (JSON), equal for identical nodes
    nodes: list[Node] = field(default_factory=list)
    id: str = ""  # "G1", "G2", ... largest group first
    report: Any = None  # the rules Report for the fleet's config on this group (set by judge_groups)

    @property
    def facts(self) -> Facts:
        """The representative report: rules judged on it hold for every node of the group."""
        return self.nodes[0].facts

    @property
    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]


# Import details that name where a module was loaded from: a path, different per venv, never a verdict.
_PER_MACHINE_DETAILS = frozenset({"origin"})


def signature(facts: Facts) -> str:
    """What the rules can read of a node, canonical; equal strings mean one verdict for both nodes."""
    gpus = facts.gpus
    data = {
        "gpus": [[d.name, d.cc_major, d.cc_minor, d.memory_total_mib, d.mig_mode] for d in gpus.devices],
        "gpu_error": bool(gpus.error) and not gpus.devices,
        "driver": gpus.driver_version,
        "cuda": gpus.cuda_driver_version,
        "nvcc": facts.cuda_toolkit.nvcc_version,
        "torch": [
            facts.torch.installed,
            facts.torch.version,
            facts.torch.cuda,
            facts.torch.hip,
            facts.torch.arch_list,
        ],
        "libraries": sorted(
            [
                lib.key,
                sorted(lib.distributions.items()),
                lib.version,
                lib.health.status,
                {k: v for k, v in lib.health.details.items() if k not in _PER_MACHINE_DETAILS},
            ]
            for lib in facts.libraries
        ),
        "cutlass_headers": facts.cutlass_headers.version,
        "environment": sorted(facts.environment.items()),
        "imports_checked": facts.imports_checked,
    }
    return json.dumps(data, sort_keys=True, default=str)


def group_nodes(nodes: Iterable[Node]) -> list[NodeGroup]:
    """Identical nodes together; groups largest first, ties by their first node's name (stable output)."""
    groups: dict[str, NodeGroup] = {}
    for node in sorted(nodes, key=lambda n: (n.name, n.source)):
        key = signature(node.facts)
        groups.setdefault(key, NodeGroup(key)).nodes.append(node)
    ordered = sorted(groups.values(), key=lambda g: (-len(g.nodes), g.nodes[0].name, g.nodes[0].source))
    for number, group in enumerate(ordered, 1):
        group.id = f"G{number}"
    return ordered


@dataclass
class Fleet:
    groups: list[NodeGroup]
    spread: list[SpreadRow]
    skipped: list[tuple[str, str]]  # (report file, why it could not be read)
    reports_given: int
    config: Any  # the rules Config as the user gave it (each group's report holds it with its default backend)
    strict: bool = False

    @property
    def node_count(self) -> int:
        return sum(len(g.nodes) for g in self.groups)

    @property
    def verdict(self) -> str:
        """incomplete when a report was skipped (a node not judged is never a pass); else the worst group's."""
        from attn_preflight.rules.core.engine import verdict_from

        if self.skipped or not self.groups:
            return INCOMPLETE
        return verdict_from(g.report.verdict for g in self.groups)

    def exit_code(self) -> int:
        """2 when a report was unreadable (the rest are still merged and shown), 1 when a group fails (or warns
        with strict), else 0."""
        if self.verdict == INCOMPLETE:
            return 2
        return max(g.report.exit_code(self.strict) for g in self.groups)


def merge(
    nodes: Iterable[Node],
    skipped: Sequence[tuple[str, str]],
    reports_given: int,
    config,
    strict: bool = False,
    engine_versions: Optional[Mapping[str, str]] = None,
) -> Fleet:
    """Groups the nodes and judges `config` once per group with the rules engine, each group's installed
    versions overridden by `engine_versions` (--engine-version's pins)."""
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.core.target import Target

    groups = group_nodes(nodes)
    for group in groups:
        target = Target.from_facts(group.facts, kind="facts", label=f"group {group.id} ({len(group.nodes)} nodes)")
        target = target.with_engine_versions(engine_versions or {})
        group.report = evaluate(config, target)
    return Fleet(
        groups=groups,
        spread=spread(groups),
        skipped=list(skipped),
        reports_given=reports_given,
        config=config,
        strict=strict,
    )


# --- describing a node in a few words ------------------------------------------------------------------


def gpu_summary(facts: Facts) -> str:
    """'8x NVIDIA H200 (9.0)', 'NVIDIA H200 (9.0) + NVIDIA A100 (8.0)', or 'no GPU'."""
    counts = Counter((d.name or "unknown GPU", d.compute_capability) for d in facts.gpus.devices)
    if not counts:
        return "no GPU"
    parts = []
    for (name, cc), count in sorted(counts.items(), key=lambda kv: str(kv[0])):
        label = f"{name} ({cc})" if cc else name
        parts.append(f"{count}x {label}" if count > 1 else label)
    return " + ".join(parts)


def compute_capability(facts: Facts) -> str:
    ccs = sorted({d.compute_capability for d in facts.gpus.devices if d.compute_capability})
    return ", ".join(ccs) if ccs else "—"


def driver_summary(facts: Facts) -> str:
    driver, cuda = facts.gpus.driver_version, facts.gpus.cuda_driver_version
    if not driver:
        return "—"
    return f"{driver} (CUDA {cuda})" if cuda else driver


def torch_summary(facts: Facts) -> str:
    torch = facts.torch
    if not torch.installed:
        return "not installed"
    version = torch.version or "installed (version unknown)"
    library = facts.library("torch")  # the import check: a torch that does not import is not a torch
    if facts.imports_checked and library is not None and library.health.status in HEALTH_BROKEN:
        return f"{version} (import {library.health.status})"
    return version


def library_state(facts: Facts, key: str) -> str:
    """'4.0.0b36 ok', '4.8.1 error', 'not installed'."""
    library = facts.library(key)
    if library is None or not library.installed:
        return "not installed"
    status = library.health.status if facts.imports_checked else "import unchecked"
    return f"{library.version or '?'} {status}"


# --- the fleet's spread -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpreadRow:
    dimension: str  # "GPU", "compute capability", "driver", "torch", "lib fa4", ...
    value: str
    nodes: int


def spread(groups: Iterable[NodeGroup]) -> list[SpreadRow]:
    """How many nodes have each GPU, compute capability, driver, torch and library state; every dimension,
    most common value first, so a fleet that is not uniform shows where it differs."""
    groups = list(groups)
    dimensions: dict[str, Counter] = {}

    def count(dimension: str, value: str, nodes: int) -> None:
        dimensions.setdefault(dimension, Counter())[value] += nodes

    library_keys = sorted(
        {
            lib.key
            for g in groups
            for lib in g.facts.libraries
            if lib.installed or lib.health.status != HEALTH_NOT_INSTALLED
        }
    )
    for group in groups:
        facts, size = group.facts, len(group.nodes)
        count("GPU", gpu_summary(facts), size)
        count("compute capability", compute_capability(facts), size)
        count("driver", driver_summary(facts), size)
        count("nvcc", facts.cuda_toolkit.nvcc_version or "—", size)
        count("torch", torch_summary(facts), size)
        for key in library_keys:
            count(f"lib {key}", library_state(facts, key), size)
    rows = []
    for dimension, counter in dimensions.items():
        for value, nodes in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
            rows.append(SpreadRow(dimension, value, nodes))
    return rows


def differing_dimensions(rows: Iterable[SpreadRow]) -> list[str]:
    """Dimensions with more than one value across the fleet."""
    seen: Counter = Counter(row.dimension for row in rows)
    return [dimension for dimension, values in seen.items() if values > 1]


# --- what a node can serve ----------------------------------------------------------------------------


def node_serving(facts: Facts):
    """What this node serves with SGLang's defaults and no particular model: each backend with the default KV
    dtype, and each KV dtype with its best backend (the NFD labels), from one rules grid."""
    from attn_preflight.render.nfd import NodeServing
    from attn_preflight.rules.core.grid import judge_grid
    from attn_preflight.rules.core.target import Target
    from attn_preflight.rules.core.validation import make_config

    config = make_config(engine="sglang")
    grid = judge_grid(config, [Target.from_facts(facts, kind="live", label="this node")])
    by_backend = {b: grid.cell(b, config.kv_cache_dtype).status for b in grid.backends}
    return NodeServing(backends=by_backend, kv_dtypes={kv: grid.best(kv) for kv in grid.kv_dtypes})
