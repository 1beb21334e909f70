"""What a smoke run found, as one typed, JSON-serialisable value: facts about kernels, never judgements.

`SmokeReport.to_dict()` is what `smoke --format json` writes; `SmokeReport.from_dict` reads it back (the
HTML report and `check --smoke` load saved runs) and refuses another schema version or a malformed file.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from attn_preflight.probe.facts import FactsError, Schema, to_jsonable
from attn_preflight.probe.smoke.cases import Case

SMOKE_SCHEMA_VERSION = 1
REPORT_KIND = "smoke"

STATUS_OK = "ok"
STATUS_WRONG = "wrong"  # ran, but the output is off the fp32 reference by more than the tolerance (or not finite)
STATUS_ERROR = "error"  # the kernel raised: `message` is its own last line
STATUS_TIMEOUT = "timeout"  # no result within --timeout; its process group was killed
STATUS_CRASHED = "crashed"  # the process died (a signal) or CUDA reported a sticky error (illegal memory access)
STATUS_SKIPPED = "skipped"  # did not run (or, once judged, the kernel refused a case its documentation excludes)
STATUSES = (STATUS_OK, STATUS_WRONG, STATUS_ERROR, STATUS_TIMEOUT, STATUS_CRASHED, STATUS_SKIPPED)
FAILED_STATUSES = (STATUS_WRONG, STATUS_ERROR, STATUS_TIMEOUT, STATUS_CRASHED)

# Why a result is skipped: the machine lacks something (library, GPU), the kernel's API cannot express the
# case (torch SDPA has no softcap), or the kernel itself refused a case its documented limits exclude. The runner
# records the first two; SKIP_KERNEL (with documented_limit) is written when a report is judged against the
# kernels' documented limits (rules/core/smoke.py, attn_preflight/smoke_judged.py) and read back from saved reports.
SKIP_ENVIRONMENT = "environment"
SKIP_API = "api"
SKIP_KERNEL = "kernel"
SKIP_BASES = (SKIP_ENVIRONMENT, SKIP_API, SKIP_KERNEL)


class SmokeReportError(FactsError):
    """A saved smoke report that cannot be read (malformed, another schema version, not a smoke report)."""


@dataclass
class KernelResult:
    kernel: str  # e.g. "fa4-dense"
    family: str  # e.g. "fa4"
    title: str
    status: str  # one of STATUSES
    case: Optional[Case] = None  # None when the kernel was skipped as a whole (not installed, no GPU)
    library: Optional[str] = None  # probe library key ("fa4", "flashinfer", ...); None for torch's own SDPA
    message: Optional[str] = None  # error: the kernel's last line; crashed: the signal; skipped/wrong: why
    details: list[str] = field(default_factory=list)  # more of the kernel's own words (stderr tail, reasons)
    skip_basis: Optional[str] = None  # skipped only: one of SKIP_BASES
    documented_limit: Optional[str] = None  # judged, not run: the documented limit this case crosses here
    max_abs_error: Optional[float] = None
    tolerance: Optional[float] = None
    first_call_s: Optional[float] = None  # the first call, synchronized: includes JIT / compile
    steady_ms: Optional[float] = None  # median of the later calls, synchronized
    steady_calls: Optional[int] = None
    flops: Optional[int] = None  # attention kernels: 2 matmuls over the pairs the mask keeps
    tflops: Optional[float] = None  # flops / steady time
    import_s: Optional[float] = None  # importing the library in the worker (before the first call)
    device: Optional[str] = None  # "cuda:0 NVIDIA H200 (sm_90)" or "cpu"
    notes: list[str] = field(default_factory=list)
    reproduce: Optional[str] = None  # a shell command that runs this case alone

    @property
    def failed(self) -> bool:
        return self.status in FAILED_STATUSES


@dataclass
class GpuSummary:
    index: int
    name: Optional[str] = None
    compute_capability: Optional[str] = None  # "9.0"


@dataclass
class MachineSummary:
    hostname: Optional[str] = None
    platform: Optional[str] = None
    python_version: Optional[str] = None
    python_executable: Optional[str] = None
    driver_version: Optional[str] = None
    gpus: list[GpuSummary] = field(default_factory=list)  # NVML's view: every GPU of the host
    gpu_error: Optional[str] = None  # why there are no GPUs
    torch_version: Optional[str] = None  # the worker's torch, as it ran the kernels
    torch_cuda: Optional[str] = None
    cudnn_version: Optional[int] = None
    device_name: Optional[str] = None  # the CUDA device the kernels ran on (torch device 0)
    device_capability: Optional[str] = None  # "9.0"
    libraries: dict[str, str] = field(default_factory=dict)  # installed distribution -> version
    cache_dir: Optional[str] = None  # where the compile caches live
    cache_notes: list[str] = field(default_factory=list)  # a cache that could not be used, and why


@dataclass
class SmokeReport:
    schema_version: int = SMOKE_SCHEMA_VERSION
    kind: str = REPORT_KIND
    tool_version: Optional[str] = None
    created_at: Optional[str] = None  # ISO-8601 UTC
    level: str = "quick"  # "quick", "full", or "shape" (check --smoke: a model's own shapes)
    timeout_s: Optional[float] = None  # per case
    jobs: Optional[int] = None  # kernels run at once
    wall_s: Optional[float] = None
    machine: MachineSummary = field(default_factory=MachineSummary)
    results: list[KernelResult] = field(default_factory=list)

    @property
    def failed(self) -> list[KernelResult]:
        return [r for r in self.results if r.failed]

    @property
    def ran(self) -> list[KernelResult]:
        """The cases a kernel was actually called for: all but the skipped ones."""
        return [r for r in self.results if r.status != STATUS_SKIPPED]

    def counts(self) -> dict[str, int]:
        counted = Counter(r.status for r in self.results)
        return {status: counted[status] for status in STATUSES if counted[status]}

    def to_dict(self) -> dict[str, Any]:
        return to_jsonable(self)

    @classmethod
    def from_dict(cls, data: Any) -> SmokeReport:
        if not isinstance(data, dict):
            raise SmokeReportError("a smoke report must be a JSON object")
        if data.get("kind") != REPORT_KIND:
            raise SmokeReportError(f"not a smoke report (kind {data.get('kind')!r}, expected {REPORT_KIND!r})")
        version = data.get("schema_version")
        if version != SMOKE_SCHEMA_VERSION:
            raise SmokeReportError(
                f"smoke schema_version {version!r} is not supported (this attn-preflight reads "
                f"{SMOKE_SCHEMA_VERSION}); re-run `attn-preflight smoke --format json` with this version"
            )
        try:
            report = SMOKE_SCHEMA.read(data, "smoke")
        except FactsError as err:
            raise SmokeReportError(str(err)) from None
        except (TypeError, ValueError) as err:  # a case that Case.validate refuses
            raise SmokeReportError(f"smoke: {err}") from None
        for i, result in enumerate(report.results):
            where = f"smoke.results[{i}]"
            if result.status not in STATUSES:
                raise SmokeReportError(f"{where}.status: {result.status!r} is not one of {', '.join(STATUSES)}")
            if result.skip_basis is not None and result.skip_basis not in SKIP_BASES:
                raise SmokeReportError(
                    f"{where}.skip_basis: {result.skip_basis!r} is not one of {', '.join(SKIP_BASES)}"
                )
            if result.case is not None:
                try:
                    result.case.validate()
                except ValueError as err:
                    raise SmokeReportError(f"{where}.case: {err}") from None
        return report


SMOKE_SCHEMA = Schema(SmokeReport)
