"""`check --smoke` findings: what the kernels did at the model's shapes, judged beside the rules.

`smoke_findings(report, smoke)` is pure: from a check Report and the SmokeReport of the plan
(attn_preflight.smoke_plan) it returns
- one `smoke-kernel` finding per kernel run (pass: ran within tolerance; fail: wrong, error, timeout,
  crashed, or refused this config; skip: not run here, with the reason), and one per phase that cannot be
  smoked (skip, never pass);
- `smoke-disagrees` (warn) where the rules and the kernel disagree: the rules passed the config but a kernel
  failed, or a kernel-level rule failed but the kernel it stands for ran at the shape it judged. Either way
  the knowledge is wrong for this machine.
`with_smoke(report, smoke)` is the report with those findings in it and the verdict recomputed. The smoke report
is judged against the kernels' documented limits first (attn_preflight/smoke_judged.py): a kernel's error that
confirms one is its refusal of the config.
"""

from __future__ import annotations

from typing import Any, Optional

from attn_preflight.probe.smoke.results import (
    SKIP_ENVIRONMENT,
    SKIP_KERNEL,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_TIMEOUT,
    STATUS_WRONG,
    KernelResult,
    SmokeReport,
)
from attn_preflight.rules.core.engine import Report, ReportedCheck, ReportedFinding, Status, display_order, verdict_of
from attn_preflight.smoke_judged import judged
from attn_preflight.smoke_plan import Job, SmokePlan, phase_label, plan

# Rules whose failure is a kernel's own refusal at the first forward, with the smoke kernels that make the same
# call and whether the rule judges the absorbed-MLA decode dims (True), the model's dims (False) or any run
# (None). One of those kernels running within tolerance contradicts the rule on this machine.
KERNEL_RULES: dict[str, tuple[frozenset[str], Optional[bool]]] = {
    "fa4-arch": (frozenset({"fa4-dense", "fa4-paged"}), None),
    "fa4-paged-kv-sm8x": (frozenset({"fa4-paged"}), None),
    "fa4-fp8-sm100": (frozenset({"fa4-paged"}), False),  # decode: q cast to FP8 (prefill keeps the model dtype)
    "fa4-head-dim-sm90": (frozenset({"fa4-dense", "fa4-paged"}), False),
    "fa4-head-dim-sm100": (frozenset({"fa4-dense", "fa4-paged"}), False),
    "fa4-hd256-sm100": (frozenset({"fa4-paged"}), False),
    "fa4-mla-arch": (frozenset({"fa4-paged"}), True),
    "fa3-fp8-sm8x": (frozenset({"fa3-dense", "sgl-fa3-kvcache"}), False),
    "fa3-head-dim": (frozenset({"fa3-dense", "sgl-fa3-kvcache"}), False),
    "fa3-dtype": (frozenset({"fa3-dense", "sgl-fa3-kvcache"}), False),
    "flashinfer-arch": (frozenset({"flashinfer-prefill", "flashinfer-decode"}), None),
    "flashmla-arch": (frozenset({"flashmla-decode"}), True),
}

SMOKE_KERNEL = ReportedCheck(
    reported_by="check --smoke",
    id="smoke-kernel",
    title="The backend's kernel runs at the model's shapes on this machine",
    stage="runtime",
    source="attn-preflight smoke: each kernel once in its own process, against an fp32 reference",
    docs="""Runs the attention backend's kernels (prefill and decode, when they differ) at the model's real shapes
on this machine: head dims, heads per GPU, dtype, KV dtype, softcap, sliding window, page size. Pass: the
result is within tolerance of an fp32 reference. Fail: a wrong result, an error, a timeout, a crash, or the
kernel refused this config. Skip: the kernel cannot run here, or the backend has no smoke kernel; never a pass.

The rules judge from what is known about a backend; the kernel is the ground truth for this machine, its
build and its driver. A kernel that fails here fails the engine at its first forward pass or CUDA-graph
capture, after the weights have loaded.""",
    fix_title="Run the reproduce command in the finding's note (JSON: smoke.reproduce) for the kernel's own "
    "error; then use a backend or KV dtype whose kernel passes (check --smoke with the alternative), or "
    "repair the library it names (attn-preflight probe shows each one's import health). A timeout "
    "during JIT compilation: raise --smoke-timeout",
    references=("README.md: check --smoke", "README.md: smoke (the same kernels, without a config)"),
)
SMOKE_DISAGREES = ReportedCheck(
    reported_by="check --smoke",
    id="smoke-disagrees",
    title="The rules and the kernel agree on this machine",
    source="attn-preflight check --smoke: the rules' findings against the kernel's run",
    docs="""Compares the rules' findings with the kernels' run: warns where the rules passed the config but a
kernel failed, or where a kernel-level rule failed it but a kernel that rule stands for ran within tolerance
at the shape it judged.

Either way the knowledge the rules read (a backend's limits on this GPU) is wrong for this machine: a newer
or patched kernel build, or a limit attn-preflight does not know. The kernel-level rules, each judged
against its own kernels: """
    + ", ".join(KERNEL_RULES)
    + ".",
    fix_title="Rules passed, kernel failed: do not ship the config; fix it as the smoke-kernel finding says. "
    "Rule failed, kernel ran: confirm with a real launch before relying on it, and report the rule and "
    "kernel (JSON: smoke.rules, smoke.kernels) with `attn-preflight probe --format json`, so the "
    "knowledge can be corrected",
    references=("README.md: check --smoke",),
)
# The check --smoke findings `explain` answers for, beside the rules.
SMOKE_CHECKS = {check.id: check for check in (SMOKE_KERNEL, SMOKE_DISAGREES)}

# Backends that call torch SDPA without forcing one of its backends: torch dispatches each call to one that
# accepts the inputs, so a forced backend refusing this shape does not fail the config.
DISPATCHED = frozenset({"torch_native"})

_FAILED = {
    STATUS_WRONG: "gave a wrong result",
    STATUS_ERROR: "raised",
    STATUS_TIMEOUT: "timed out",
    STATUS_CRASHED: "crashed",
}


class SmokeFinding(ReportedFinding):
    """A finding from the smoke run; `smoke` holds the run's numbers."""

    __slots__ = ()
    key = "smoke"
    smoke = property(lambda self: self.data)


def result_status(result: KernelResult) -> Status:
    """A kernel run judged on its own: pass when it ran within tolerance, fail when it went wrong (wrong, error,
    timeout, crashed), skip when it did not run. (`check --smoke` also fails a kernel's refusal of the config.)"""
    if result.status == STATUS_OK:
        return Status.PASS
    return Status.FAIL if result.failed else Status.SKIP


def _describe(result: KernelResult) -> str:
    return result.case.label() if result.case else "its shape"


def _numbers(result: KernelResult) -> str:
    bits = []
    if result.max_abs_error is not None and result.tolerance is not None:
        relation = "within" if result.max_abs_error <= result.tolerance else "above"
        bits.append(f"max error {result.max_abs_error:.1e} {relation} tolerance {result.tolerance:.0e}")
    if result.first_call_s is not None:
        bits.append(f"first call {result.first_call_s:.2f} s (JIT included)")
    if result.steady_ms is not None:
        bits.append(f"steady {result.steady_ms:.3g} ms")
    return ", ".join(bits)


def _kernel_finding(job: Job, result: Optional[KernelResult], note: str) -> SmokeFinding:
    who = f"{job.kernel.name} ({phase_label(job.phases)}, backend {job.backend})"
    data: dict[str, Any] = {
        "backend": job.backend,
        "phases": list(job.phases),
        "kernel": job.kernel.name,
        "api": job.kernel.api,
        "absorbed_mla": job.absorbed,
        "case": job.case.to_dict(),
    }
    if result is None:
        return SmokeFinding(SMOKE_KERNEL, Status.SKIP, f"{who}: no result in the smoke run", data, note)
    data.update(
        case=result.case.to_dict() if result.case else None,
        result=result.status,
        skip_basis=result.skip_basis,
        message=result.message,
        max_abs_error=result.max_abs_error,
        tolerance=result.tolerance,
        first_call_s=result.first_call_s,
        steady_ms=result.steady_ms,
        tflops=result.tflops,
        device=result.device,
        documented_limit=result.documented_limit,
        reproduce=result.reproduce,
    )
    numbers = _numbers(result)
    status = result_status(result)
    if status is Status.PASS:
        text = f"{who} ran at {_describe(result)}: {numbers}"
    elif status is Status.FAIL:
        text = f"{who} {_FAILED[result.status]} at {_describe(result)}: {result.message or 'no message'}"
        if result.status == STATUS_WRONG and numbers:
            text += f" ({numbers})"
    elif result.skip_basis == SKIP_KERNEL and job.backend not in DISPATCHED:
        status, text = Status.FAIL, f"{who} refused {_describe(result)}: {result.message}"
    elif result.skip_basis == SKIP_KERNEL:
        status = Status.SKIP
        text = f"{who} refused {_describe(result)} (torch dispatches to another SDPA backend): {result.message}"
    elif result.skip_basis == SKIP_ENVIRONMENT or result.case is None:
        status, text = Status.SKIP, f"{who} not run here: {result.message}"
    else:
        status, text = Status.SKIP, f"{who} cannot express {_describe(result)}: {result.message}"
    if result.notes:
        text += " [" + "; ".join(result.notes) + "]"
    if status is Status.FAIL and result.reproduce:
        note = "; ".join(n for n in (note, f"reproduce {job.kernel.name}: {result.reproduce}") if n)
    return SmokeFinding(SMOKE_KERNEL, status, text, data, note)


def _result_for(job: Job, smoke: SmokeReport) -> Optional[KernelResult]:
    """The job's result: by kernel name; by case too when the run holds that kernel more than once."""
    results = [r for r in smoke.results if r.kernel == job.kernel.name]
    exact = [r for r in results if r.case == job.case]
    return next(iter(exact or results), None)


def _kernel_findings(smoke_plan: SmokePlan, smoke: SmokeReport) -> list[tuple[Job, SmokeFinding]]:
    note = "; ".join(smoke_plan.notes)
    return [(job, _kernel_finding(job, _result_for(job, smoke), note)) for job in smoke_plan.jobs]


def _disagreements(report: Report, ran: list[tuple[Job, SmokeFinding]]) -> list[SmokeFinding]:
    rule_failures = [f for f in report.findings if f.status is Status.FAIL]
    failed = [f for _, f in ran if f.status is Status.FAIL]
    out = []
    if not rule_failures and failed:
        out.append(
            SmokeFinding(
                SMOKE_DISAGREES,
                Status.WARN,
                "the knowledge is wrong for this machine: the rules passed this config but the kernel failed: "
                + "; ".join(f.message for f in failed),
                {"rules": [], "kernels": [f.smoke["kernel"] for f in failed]},
            )
        )
    for finding in rule_failures:
        scope = KERNEL_RULES.get(finding.rule_id)
        if scope is None:
            continue
        kernels, absorbed = scope
        contradicting = [
            (job, f)
            for job, f in ran
            if f.status is Status.PASS and job.kernel.name in kernels and (absorbed is None or job.absorbed == absorbed)
        ]
        if contradicting:
            where = "; ".join(
                f"{job.kernel.name} ({phase_label(job.phases)}) at {job.case.label()}" for job, _ in contradicting
            )
            out.append(
                SmokeFinding(
                    SMOKE_DISAGREES,
                    Status.WARN,
                    f"the knowledge is wrong for this machine: rule {finding.rule_id} predicts failure but the kernel "
                    f"ran: {where}",
                    {"rules": [finding.rule_id], "kernels": [job.kernel.name for job, _ in contradicting]},
                )
            )
    return out


def smoke_findings(report: Report, smoke: SmokeReport) -> list[SmokeFinding]:
    """The smoke-kernel findings for `report`'s config and the smoke-disagrees ones (see the module docs)."""
    smoke_plan = plan(report.config, report.target)
    ran = _kernel_findings(smoke_plan, judged(smoke))
    skipped = [
        SmokeFinding(
            SMOKE_KERNEL,
            Status.SKIP,
            (f"{entry.backend} ({phase_label(entry.phases)})" if entry.backend else phase_label(entry.phases))
            + f": cannot be smoked: {entry.reason}",
            {
                "backend": entry.backend,
                "phases": list(entry.phases),
                "kernel": None,
                "result": STATUS_SKIPPED,
                "message": entry.reason,
            },
        )
        for entry in smoke_plan.unsmokable
    ]
    return [f for _, f in ran] + skipped + _disagreements(report, ran)


def with_smoke(report: Report, smoke: SmokeReport) -> Report:
    """`report` with the smoke findings added, in display order, and the verdict recomputed over all of them."""
    findings = sorted([*report.findings, *smoke_findings(report, smoke)], key=display_order)
    return Report(
        config=report.config,
        target=report.target,
        findings=findings,
        verdict=verdict_of(findings),
        alternatives=report.alternatives,
    )
