"""Facts (and what the rules say this node can serve) as a Node Feature Discovery local feature file.

Format: NFD's `local` source reads `/etc/kubernetes/node-feature-discovery/features.d/*`, one
`<namespace>/<name>=<value>` a line, `#` lines are comments, files over 64 kB are ignored
(kubernetes-sigs/node-feature-discovery: docs/usage/customization-guide.md "Local feature source";
source/local/local.go MaxFeatureFileSize). Every key here is fully qualified: NFD still auto-prefixes bare
names with `feature.node.kubernetes.io/`, but its DisableAutoPrefix gate will end that.

Prefix: `attn-preflight.feature.node.kubernetes.io/`. nfd-master denies `kubernetes.io` and its
sub-namespaces except `feature.node.kubernetes.io` and *its* sub-namespaces, which are always allowed and
cannot be denied by `-deny-label-ns` (pkg/apis/nfd/validate/validate.go, Label; docs/reference/
master-commandline-reference.md "-deny-label-ns"). A vendor domain such as `attn-preflight.io/` would need a
domain we own and can be denied per cluster; a sub-namespace of NFD's own works on every cluster unchanged
and keeps our labels apart from NFD's built-ins (Intel's device plugins do the same:
`intel.feature.node.kubernetes.io/gpu`).

Names mirror NVIDIA GPU Feature Discovery (NVIDIA/k8s-device-plugin: internal/lm/nvml.go, resource.go):
`gpu.compute.major`, `gpu.product` (GFD's sanitised NVML name, so `NVIDIA-H200` equals GFD's value on the
same node), `gpu.memory` (MiB), `gpu.count`, `cuda.driver-version.*` (the driver) and
`cuda.runtime-version.*` (the CUDA version the driver supports) — swap `nvidia.com/` for our prefix.
Identifiers we own (library keys, backend and KV-dtype names) appear verbatim, as in `--attention-backend`
and the JSON report. No timestamp: the file is a pure function of the facts, sorted, so config management
and NFD do not churn (GFD needs `--no-timestamp` for that).

Kubernetes limits (kubernetes/apimachinery: pkg/util/validation/validation.go, IsQualifiedName and
IsValidLabelValue): name ≤ 63 chars of `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, prefix a DNS-1123
subdomain ≤ 253, value empty or ≤ 63 chars of the same pattern.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Mapping, Optional

from attn_preflight.probe import __version__
from attn_preflight.probe.facts import HEALTH_NOT_INSTALLED, Facts
from attn_preflight.rules.core.engine import SERVES
from attn_preflight.rules.knowledge.cuda_arch import torch_arch_coverage

PREFIX = "attn-preflight.feature.node.kubernetes.io"
FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"
MAX_FILE_BYTES = 65536  # NFD ignores a larger feature file

NAME_MAX = 63
VALUE_MAX = 63
PREFIX_MAX = 253
NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
VALUE_RE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

_INVALID_RUN = re.compile(r"[^A-Za-z0-9_.-]+")
_EDGE = "-_."


@dataclass(frozen=True)
class NodeServing:
    """What the rules say this node can serve: attn_preflight.rules.core.engine.Status values, from one attn_preflight.rules.core.grid Grid
    (attn_preflight.fleet.node_serving)."""

    backends: Mapping[str, str] = field(default_factory=dict)  # backend -> its cell's status, default config
    kv_dtypes: Mapping[str, str] = field(default_factory=dict)  # KV dtype -> its best cell over the backends


def is_valid_key(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > PREFIX_MAX or not DNS_SUBDOMAIN_RE.match(prefix)):
        return False
    return len(name) <= NAME_MAX and bool(NAME_RE.match(name))


def is_valid_value(value: str) -> bool:
    return len(value) <= VALUE_MAX and bool(VALUE_RE.match(value))


def sanitise_value(text: object) -> str:
    """Any text as a valid label value: runs of other characters become '-' (so 'NVIDIA H200' gives GFD's
    'NVIDIA-H200' and '2.11.0+cu130' gives '2.11.0-cu130'), ends trimmed to alphanumerics, ≤ 63 chars."""
    return _clean(text)[:VALUE_MAX].rstrip(_EDGE)


def _clean(text: object) -> str:
    return _INVALID_RUN.sub("-", str(text)).strip(_EDGE)


def label_name(*parts: str) -> str:
    """'lib', 'fa4', 'version' -> 'lib.fa4.version'; too long a name keeps its head and a digest of the whole,
    so two long names never collide."""
    name = ".".join(part for part in map(_clean, parts) if part)
    if len(name) <= NAME_MAX:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: NAME_MAX - len(digest) - 1].rstrip(_EDGE)}-{digest}"


def _bool(value: bool) -> str:
    return "true" if value else "false"


def node_labels(facts: Facts, serving: Optional[NodeServing] = None) -> dict[str, str]:
    """The labels, fully qualified, values sanitised; unknown facts are left out rather than guessed."""
    raw: dict[tuple[str, ...], object] = {("version",): __version__}
    devices = [d for d in facts.gpus.devices if d.cc_major is not None and d.cc_minor is not None]
    raw[("gpu", "present")] = _bool(bool(devices))
    raw[("gpu", "count")] = len(devices)
    if devices:
        # GPU 0, as the rules judge a node (rules/core/target.py); mixed nodes say so.
        first = devices[0]
        raw[("gpu", "product")] = first.name
        raw[("gpu", "compute", "major")] = first.cc_major
        raw[("gpu", "compute", "minor")] = first.cc_minor
        raw[("gpu", "sm")] = first.sm
        raw[("gpu", "memory")] = first.memory_total_mib
        raw[("gpu", "mixed")] = _bool(len({(d.name, d.cc_major, d.cc_minor) for d in devices}) > 1)
    driver = facts.gpus.driver_version
    if driver:
        pieces = driver.split(".")
        raw[("cuda", "driver-version", "full")] = driver
        for name, piece in zip(("major", "minor", "revision"), pieces):
            raw[("cuda", "driver-version", name)] = piece
    runtime = facts.gpus.cuda_driver_version
    if runtime:
        raw[("cuda", "runtime-version", "full")] = runtime
        for name, piece in zip(("major", "minor"), runtime.split(".")):
            raw[("cuda", "runtime-version", name)] = piece
    if facts.cuda_toolkit.nvcc_version:
        raw[("nvcc", "version")] = facts.cuda_toolkit.nvcc_version
    torch = facts.torch  # its version and health are a library's (lib.torch.*); these are its build
    if torch.installed:
        raw[("torch", "cuda")] = torch.cuda or "none"
        coverage = torch_arch_coverage(facts)
        if devices and first.sm in coverage:
            raw[("torch", "gpu-arch-covered")] = _bool(coverage[first.sm])
    for library in facts.libraries:
        status = library.health.status if library.installed else HEALTH_NOT_INSTALLED
        raw[("lib", library.key, "health")] = status
        if library.installed:
            raw[("lib", library.key, "version")] = library.version
    if serving is not None:
        for backend, status in serving.backends.items():
            raw[("backend", backend)] = _bool(status in SERVES)  # a warning still runs; skip/unknown never do
        for dtype, status in serving.kv_dtypes.items():
            raw[("kv", dtype)] = _bool(status in SERVES)
    labels = {}
    for parts, value in raw.items():
        if value is None:
            continue
        value = sanitise_value(value)
        if value:
            labels[f"{PREFIX}/{label_name(*parts)}"] = value
    return dict(sorted(labels.items()))


def render_nfd(facts: Facts, serving: Optional[NodeServing] = None) -> str:
    """The feature file text: a comment header, then `key=value` lines sorted by key."""
    labels = node_labels(facts, serving)
    header = [
        f"# attn-preflight {__version__}: NFD local feature file for {FEATURES_DIR}/",
        "# generated by `attn-preflight probe --format nfd`; regenerate rather than edit",
    ]
    if serving is None:
        header.append("# backend.* and kv.* labels absent: the rules were not evaluated")
    return "\n".join(header + [f"{key}={value}" for key, value in labels.items()]) + "\n"
