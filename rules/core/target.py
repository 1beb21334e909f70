"""Target: what the rules see of hardware and software.

Three constructors, one shape:
- `Target.from_facts(facts, kind="live"|"facts", label=...)`: a live probe or a saved report; software known.
  With GPUs of different memory sizes, the memory is the smallest (the engine sizes every rank by it).
- `Target.from_gpu(name, count)`: a GPU profile (`--gpu H100`, `--gpu sm_90`, `--gpu 8xH100`, or a count from
  `--gpu-count`); software facts are unknown, so rules that need them answer skip, never pass. Without a count
  the number of GPUs is unknown (gpu_count_known False) and rules about it skip.
Files and the live probe are the face's (attn_preflight/inputs.py): rules only see their result.
`with_engine_versions({"sglang": "0.5.23"})` pins versions (`--engine-version`), overriding what facts say.
Everything rules read is computed once here, so evaluating a rule is attribute access.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping, Optional

from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.versions import parse_version
from attn_preflight.rules.engines.sglang import capabilities as backend_kb
from attn_preflight.rules.engines.sglang.capabilities import BackendInfo
from attn_preflight.rules.knowledge import OLDEST_KNOWN, gpus

if TYPE_CHECKING:  # the facts model is only needed for live/facts targets
    from attn_preflight.probe.facts import Facts

# Versions rules may be keyed on: name -> (facts library key, distributions that carry it, in order).
VERSIONED = {
    "sglang": ("sglang", ("sglang",)),
    "vllm": ("vllm", ("vllm",)),
    "flash-attn-4": ("fa4", ("flash-attn-4",)),
    "flashinfer": ("flashinfer", ("flashinfer-python", "flashinfer")),
    "torch": ("torch", ("torch",)),
}
_VERSION_ALIASES = {
    "flash_attn_4": "flash-attn-4",
    "fa4": "flash-attn-4",
    "flashinfer-python": "flashinfer",
    "flashinfer_python": "flashinfer",
}


@dataclass(frozen=True)
class Target:
    kind: str  # "live" | "facts" | "gpu"
    label: str  # what the user named: "this machine", the facts file, the GPU profile
    gpu_name: Optional[str]
    cc: Optional[tuple[int, int]]
    memory_gib: Optional[float] = None
    gpu_count: int = 0
    gpu_count_known: bool = True  # False for a --gpu profile given without a count
    software_known: bool = False  # False for --gpu: installs, torch build and versions are unknown
    versions: Mapping[str, str] = field(default_factory=dict)  # installed: sglang, vllm, flash-attn-4, flashinfer
    # Installed, but the metadata's version is no version (missing, "unknown", "garbage"): name -> what it says.
    unreadable_versions: Mapping[str, str] = field(default_factory=dict)
    version_origin: str = ""  # "probe" | "facts file" | "--engine-version"
    facts: Optional[Facts] = None
    gpu_note: str = ""  # e.g. mixed GPU models, or why there is no GPU
    visible_gpus: tuple[int, ...] = ()  # NVML indices of the GPUs a process sees (CUDA_VISIBLE_DEVICES), in order
    # Engine releases older than every release the rules were read in: name -> the installed version, which
    # `versions` then holds as the oldest known one (as_oldest_known).
    judged_from: Mapping[str, str] = field(default_factory=dict)
    # Derived: every SGLang backend as declared for the target's release (the newest verified one when unknown).
    sglang_backends: Mapping[str, BackendInfo] = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        release = self.versions.get("sglang")
        object.__setattr__(self, "sglang_backends", MappingProxyType(backend_kb.declarations(release)))

    # Derived once (compute-capability major/minor/arch), read by every rule.
    @property
    def major(self) -> Optional[int]:
        return self.cc[0] if self.cc else None

    @property
    def arch(self) -> Optional[int]:
        """major * 10 + minor, as flash_attn.cute's _get_device_arch computes it (90, 100, 103, 120)."""
        return self.cc[0] * 10 + self.cc[1] if self.cc else None

    @property
    def sm(self) -> str:
        return f"SM{self.cc[0]}{self.cc[1]}" if self.cc else "no GPU"

    def describe(self) -> str:
        if self.cc is None:
            return f"{self.label}: no CUDA GPU" + (f" ({self.gpu_note})" if self.gpu_note else "")
        name = self.gpu_name or self.sm
        return f"{name} (compute capability {self.cc[0]}.{self.cc[1]}, {self.sm})"

    @classmethod
    def from_gpu(cls, name: str, count: Optional[int] = None) -> Target:
        counted = _COUNTED_GPU.match(name)
        if counted:
            if count is not None and count != int(counted["count"]):
                raise RulesInputError(f"--gpu {name} says {counted['count']} GPUs but --gpu-count says {count}")
            count, name = int(counted["count"]), counted["name"]
        if count is not None and count < 1:
            raise RulesInputError(f"GPU count: expected a positive integer, got {count}")
        profile = gpus.lookup(name)
        if profile is None:
            cc = gpus.parse_compute_capability(name)
            vendor = gpus.other_vendor(name)
            if cc is None and vendor is not None:
                raise RulesInputError(
                    f"GPU {name!r} ({vendor}) is not profiled (NVIDIA only); "
                    "`attn-preflight gpus` lists the GPUs the rules know"
                )
            if cc is None:
                raise RulesInputError(
                    f"unknown GPU {name!r} (a product name or a compute capability such as sm_90 or 12.1)",
                    choices=gpus.names(),
                    word=name,
                )
            profile = gpus.profile_for_cc(cc)
        return cls(
            kind="gpu",
            label=f"--gpu {count}x{name}" if count else f"--gpu {name}",
            gpu_name=profile.name,
            cc=profile.cc,
            memory_gib=profile.memory_gib,
            gpu_count=count or 1,
            gpu_count_known=count is not None,
            software_known=False,
        )

    @classmethod
    def from_facts(cls, facts: Facts, kind: str = "live", label: str = "this machine") -> Target:
        listed = [d for d in facts.gpus.devices if d.cc_major is not None and d.cc_minor is not None]
        devices, note = visible_devices(listed, facts.environment.get("CUDA_VISIBLE_DEVICES"))
        if devices:
            first = devices[0]
            assert first.cc_major is not None and first.cc_minor is not None  # devices are filtered on both
            cc: Optional[tuple[int, int]] = (first.cc_major, first.cc_minor)
            kinds = {(d.name, d.cc_major, d.cc_minor) for d in devices}
            if len(kinds) > 1:
                mixed = ", ".join(sorted(f"{n} ({a}.{b})" for n, a, b in kinds))
                note = "; ".join(filter(None, (note, f"mixed GPUs: {mixed}; judged as GPU 0 ({first.name})")))
            name = first.name
            sizes = [d.memory_total_mib for d in devices if d.memory_total_mib]
            memory = round(min(sizes) / 1024, 1) if sizes else None
            if len(set(sizes)) > 1:
                note = "; ".join(filter(None, (note, f"memory sizes differ: judged at the smallest ({memory:g} GiB)")))
        else:
            cc, name, memory = None, None, None
            note = note or facts.gpus.error or "NVML reported no GPU"
        from packaging.version import InvalidVersion, Version

        versions, unreadable = {}, {}
        for key, (library_key, distributions) in VERSIONED.items():
            library = facts.library(library_key)
            if library is None or not library.installed:
                continue
            version = next(
                (library.distributions[d] for d in distributions if d in library.distributions), library.version
            )
            try:
                Version(str(version))
                versions[key] = str(version)
            except InvalidVersion:
                unreadable[key] = str(version or "")
        return cls(
            kind=kind,
            label=label,
            gpu_name=name,
            cc=cc,
            memory_gib=memory,
            gpu_count=len(devices),
            software_known=True,
            versions=versions,
            unreadable_versions=unreadable,
            version_origin="probe" if kind == "live" else "facts file",
            facts=facts,
            gpu_note=note,
            visible_gpus=tuple(d.index for d in devices),
        )

    def with_engine_versions(self, pins: Mapping[str, str]) -> Target:
        if not pins:
            return self
        versions = dict(self.versions)
        versions.update(pins)
        unreadable = {name: text for name, text in self.unreadable_versions.items() if name not in pins}
        return replace(self, versions=versions, unreadable_versions=unreadable, version_origin="--engine-version")

    def as_oldest_known(self) -> Target:
        """The target as the rules judge it (issue 10): an engine release older than the oldest the rules were
        read in (OLDEST_KNOWN) is judged with that oldest release's behaviour; `judged_from` keeps the release
        installed, for general-engine-version to warn about and for what is shown."""
        older = {
            name: version
            for name, version in self.versions.items()
            if name in OLDEST_KNOWN and parse_version(version) < parse_version(OLDEST_KNOWN[name])
        }
        if not older:
            return self
        return replace(
            self,
            versions={**self.versions, **{name: OLDEST_KNOWN[name] for name in older}},
            judged_from={**self.judged_from, **older},
        )

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "label": self.label,
            "gpu": self.gpu_name,
            "compute_capability": f"{self.cc[0]}.{self.cc[1]}" if self.cc else None,
            "sm": self.sm if self.cc else None,
            "memory_gib": self.memory_gib,
            "gpu_count": self.gpu_count,
            "gpu_count_known": self.gpu_count_known,
            "software_known": self.software_known,
            "versions": dict(sorted({**self.versions, **self.judged_from}.items())),
            "judged_as": {name: self.versions[name] for name in sorted(self.judged_from)} or None,
            "version_origin": self.version_origin or None,
            "note": self.gpu_note or None,
        }


def visible_devices(devices: list, cuda_visible: Optional[str]) -> tuple[list, str]:
    """The GPUs a CUDA process sees under CUDA_VISIBLE_DEVICES, in its order, and a note when it narrows them.

    Entries are NVML indices or GPU UUIDs (a prefix is enough); CUDA stops at the first entry naming no GPU,
    and an empty value hides every GPU. MIG-... entries name instances NVML's GPU list does not show: they are
    left to the list as NVML gives it. Integer entries follow CUDA's order, which is NVML's PCI order only with
    CUDA_DEVICE_ORDER=PCI_BUS_ID (the common setting on servers)."""
    if cuda_visible is None or any(e.strip().upper().startswith("MIG-") for e in cuda_visible.split(",")):
        return devices, ""
    seen: list = []
    for entry in (e.strip() for e in cuda_visible.split(",")):
        match = next(
            (
                d
                for d in devices
                if (entry.isdigit() and d.index == int(entry))
                or (entry.startswith("GPU-") and (d.uuid or "").startswith(entry))
            ),
            None,
        )
        if match is None or match in seen:
            break
        seen.append(match)
    if len(seen) == len(devices):
        return seen, ""
    return seen, f"CUDA_VISIBLE_DEVICES={cuda_visible!r}: {len(seen)} of {len(devices)} GPUs visible"


# `--gpu 8xH100`, `--gpu "2 x RTX 4090"`
_COUNTED_GPU = re.compile(r"^\s*(?P<count>\d+)\s*[x×*]\s*(?P<name>\S.*)$", re.IGNORECASE)


def parse_engine_versions(specs) -> dict[str, str]:
    """`sglang==0.5.23` (repeatable) -> {"sglang": "0.5.23"}; RulesInputError on anything else."""
    from packaging.version import InvalidVersion, Version

    pins = {}
    for spec in specs:
        name, sep, version = spec.partition("==")
        name = name.strip().lower()
        name = _VERSION_ALIASES.get(name, name)
        if not sep or not version.strip():
            raise RulesInputError(f"--engine-version {spec!r}: expected NAME==VERSION, e.g. sglang==0.5.23")
        if name not in VERSIONED:
            raise RulesInputError(f"--engine-version {spec!r}: unknown package {name!r}", choices=VERSIONED, word=name)
        try:
            Version(version.strip())
        except InvalidVersion:
            raise RulesInputError(f"--engine-version {spec!r}: {version.strip()!r} is not a version") from None
        pins[name] = version.strip()
    return pins
