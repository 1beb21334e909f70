"""A smoke report as it is shown and judged: each result classified against its kernel's documented limits.

The runner records what happened (probe/smoke/runner.py: raw statuses, and the machine the kernels ran on); the
rules judge it against the documented limits (rules/core/smoke.py). `judged(report)` writes that judgement into the
report's results, the form every reader of a smoke report sees (`smoke` in every format, `check --smoke`,
`report --smoke`):
- an error on a case crossing a documented limit becomes a skip (skip_basis "kernel"): the kernel confirmed it;
- an ok result crossing one keeps its status and gets the note "ran although documented as unsupported here";
- every result the kernel answered (ok, wrong, error) or died on (crashed) names the limit it crosses
  (documented_limit).
Reports saved before the runner stopped judging already carry these fields (a result with documented_limit
set is judged): they are read as they are, so an old classified report and a new raw one read the same.
"""

from __future__ import annotations

from dataclasses import replace

from attn_preflight.probe.smoke.results import (
    SKIP_KERNEL,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_WRONG,
    KernelResult,
    MachineSummary,
    SmokeReport,
)
from attn_preflight.rules.core.smoke import CONFIRMED, CONTRADICTED, judge_limits
from attn_preflight.rules.kernels.limits import MachineView

# What the kernel itself answered or died on: the statuses a documented limit is judged for. (A timeout says
# nothing of the limit; a skip never reached the kernel, or was judged already.)
ANSWERED = frozenset({STATUS_OK, STATUS_WRONG, STATUS_ERROR, STATUS_CRASHED})


def machine_view(machine: MachineSummary) -> MachineView:
    """What the limits read of the machine a smoke run's kernels ran on."""
    return MachineView.of(machine.device_capability, machine.cudnn_version)


def judged_result(result: KernelResult, machine: MachineSummary) -> KernelResult:
    """`result` classified against its kernel's documented limits on `machine` (the same result when it crosses
    none, or was judged already)."""
    if result.documented_limit is not None or result.case is None or result.status not in ANSWERED:
        return result
    judgement = judge_limits(
        result.kernel,
        result.family,
        result.case,
        machine_view(machine),
        raised=result.status == STATUS_ERROR,
        ran=result.status == STATUS_OK,
        message=result.message,
    )
    if judgement is None:
        return result
    if judgement.verdict == CONFIRMED:
        return replace(
            result,
            status=STATUS_SKIPPED,
            skip_basis=SKIP_KERNEL,
            message=judgement.message,
            details=[result.message or ""] + result.details,
            documented_limit=judgement.limit,
        )
    if judgement.verdict == CONTRADICTED and judgement.note:
        return replace(result, notes=[*result.notes, judgement.note], documented_limit=judgement.limit)
    return replace(result, documented_limit=judgement.limit)


def judged(report: SmokeReport) -> SmokeReport:
    """`report` with every result classified against its kernel's documented limits (see the module docs)."""
    results = [judged_result(result, report.machine) for result in report.results]
    if all(new is old for new, old in zip(results, report.results)):
        return report
    return replace(report, results=results)
