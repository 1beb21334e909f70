"""The capability matrix: one model's verdict on every GPU profile x backend (x KV dtype)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, NamedTuple, Optional, Sequence

from rules.config import Config
from rules.engine import Status, evaluate
from rules.knowledge import backends as backend_kb
from rules.knowledge import gpus as gpu_kb
from rules.target import Target


class Reason(NamedTuple):
    rule_id: str
    status: str  # fail | warn | unknown
    message: str  # found vs required, as `check` prints it


@dataclass(frozen=True)
class Cell:
    verdict: str
    failed: tuple[str, ...] = ()  # rule ids that failed
    warned: tuple[str, ...] = ()  # rule ids that warned or could not judge
    reasons: tuple[Reason, ...] = ()  # why: one per rule above


@dataclass
class Matrix:
    config: Config
    gpus: list[str]
    backends: list[str]
    kv_dtypes: list[str]
    cells: dict[tuple[str, str, str], Cell] = field(default_factory=dict)  # (kv, gpu, backend) -> Cell


def default_backends(engine: str) -> list[str]:
    """The columns: every general-purpose backend of the engine on NVIDIA GPUs."""
    return backend_kb.offered(engine)


def build_matrix(
    config: Config,
    kv_dtypes: Sequence[str],
    gpus: Optional[Iterable[str]] = None,
    backends: Optional[Iterable[str]] = None,
) -> Matrix:
    targets = [Target.from_gpu(name) for name in (gpus or gpu_kb.names())]
    columns = list(backends or default_backends(config.engine))
    matrix = Matrix(config=config, gpus=[t.gpu_name for t in targets], backends=columns, kv_dtypes=list(kv_dtypes))
    for kv in kv_dtypes:
        for target in targets:
            for backend in columns:
                report = evaluate(config.with_backend(backend).with_kv_dtype(kv), target, alternatives=False)
                flagged = [f for f in report.findings if f.status in (Status.FAIL, Status.WARN, Status.UNKNOWN)]
                matrix.cells[(kv, target.gpu_name, backend)] = Cell(
                    report.verdict,
                    tuple(f.rule_id for f in flagged if f.status is Status.FAIL),
                    tuple(f.rule_id for f in flagged if f.status is not Status.FAIL),
                    tuple(Reason(f.rule_id, f.status.value, f.message) for f in flagged),
                )
    return matrix
