"""The capability grid: one config judged on each target x attention backend x KV-cache dtype.

One pure function, `judge_grid(config, targets, backends, kv_dtypes) -> Grid`, and one Cell: the engine's
verdict, the cell's status and the reasons. Everything that shows such a grid reads it: `matrix` (GPU
profiles x backends, a table per KV dtype), the HTML report (backends x KV dtypes on one machine) and the NFD
labels (what this node serves: attn_preflight.fleet.node_serving).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, NamedTuple, Optional, Sequence

from attn_preflight.rules.core.config import Config
from attn_preflight.rules.core.engine import FLAGGED, SERVES, Report, Status
from attn_preflight.rules.core.judge import Judge, default_backends, default_kv_dtypes
from attn_preflight.rules.core.target import Target
from attn_preflight.rules.knowledge import gpus as gpu_kb

__all__ = ["Cell", "Grid", "Reason", "cell_of", "default_backends", "default_kv_dtypes", "gpu_targets", "judge_grid"]

# Of a KV dtype's cells over the backends, the one that says most for serving it.
_BEST_FIRST = (Status.PASS, Status.WARN, Status.UNKNOWN, Status.FAIL)


class Reason(NamedTuple):
    """Why a cell is not a plain pass: one fail, warn or unknown finding."""

    rule_id: str
    status: Status  # fail | warn | unknown
    message: str  # found vs required, as `check` prints it
    title: str = ""  # the rule's title
    fix: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    verdict: Status  # the engine's verdict for the config with this backend and KV dtype: pass | warn | fail
    status: Status  # fail; unknown when a needed fact was missing (the verdict is then warn); else the verdict
    reasons: tuple[Reason, ...] = ()  # every fail / warn / unknown finding, in display order

    @property
    def failed(self) -> tuple[str, ...]:
        """The rule ids that failed."""
        return tuple(r.rule_id for r in self.reasons if r.status is Status.FAIL)

    @property
    def warned(self) -> tuple[str, ...]:
        """The rule ids that warned or could not judge."""
        return tuple(r.rule_id for r in self.reasons if r.status is not Status.FAIL)

    @property
    def serves(self) -> bool:
        """Whether the config runs here: pass or warn (unknown is never counted as serving)."""
        return self.status in SERVES


def cell_of(report: Report) -> Cell:
    """One evaluation as a cell."""
    flagged = [f for f in report.findings if f.status in FLAGGED]
    if report.verdict is Status.FAIL or not any(f.status is Status.UNKNOWN for f in flagged):
        status = report.verdict
    else:
        status = Status.UNKNOWN
    reasons = tuple(Reason(f.rule_id, f.status, f.message, f.title, tuple(f.fix)) for f in flagged)
    return Cell(report.verdict, status, reasons)


def gpu_targets(gpus: Optional[Iterable[str]] = None) -> list[Target]:
    """A --gpu target for each GPU profile named; every known profile when none is."""
    return [Target.from_gpu(name) for name in (gpus or gpu_kb.names())]


@dataclass(frozen=True)
class Grid:
    config: Config  # as given: each cell sets its backend and KV dtype
    targets: tuple[Target, ...]
    backends: tuple[str, ...]
    kv_dtypes: tuple[str, ...]
    cells: Mapping[tuple[int, str, str], Cell]  # (target index, backend, KV dtype) -> Cell

    def cell(self, backend: str, kv_dtype: str, target: int = 0) -> Cell:
        return self.cells[(target, backend, kv_dtype)]

    def best(self, kv_dtype: str, target: int = 0) -> Status:
        """The KV dtype on its best backend: pass, else warn, else unknown, else fail."""
        statuses = {self.cell(b, kv_dtype, target).status for b in self.backends}
        return next((s for s in _BEST_FIRST if s in statuses), Status.FAIL)


def judge_grid(
    config: Config, targets: Sequence[Target], backends: Sequence[str] = (), kv_dtypes: Sequence[str] = ()
) -> Grid:
    """`config` with each backend and KV dtype, judged on each target (no alternatives); empty axes mean every
    general backend (default_backends) and every accepted KV dtype (default_kv_dtypes)."""
    backends = tuple(backends or default_backends(config.engine))
    kv_dtypes = tuple(kv_dtypes or default_kv_dtypes(config.engine))
    cells = {}
    for index, target in enumerate(targets):
        judge = Judge(target)  # the target's version gates, once for all its cells
        for backend in backends:
            with_backend = config.with_backend(backend)
            for kv in kv_dtypes:
                report = judge.evaluate(with_backend.with_kv_dtype(kv), alternatives=False)
                cells[(index, backend, kv)] = cell_of(report)
    return Grid(config=config, targets=tuple(targets), backends=backends, kv_dtypes=kv_dtypes, cells=cells)
