"""A SmokeReport as table, markdown or JSON, and the progress line printed while a run goes on.

Table/markdown: where it ran, one row per kernel case (status, error vs tolerance, first call, steady time,
TFLOP/s, why), then the kernel's own words and a reproducing command for each failure, then the counts.
Skipped rows say why and are counted apart: a skip is never an ok. JSON is SmokeReport.to_dict(). Every format
shows the report judged against the kernels' documented limits (attn_preflight/smoke_judged.py), whether it
comes raw from the runner or was saved already judged.
"""

from __future__ import annotations

from typing import Optional

from attn_preflight.probe.smoke.results import FAILED_STATUSES, STATUS_OK, STATUS_SKIPPED, MachineSummary
from attn_preflight.render import PLAIN, Screen, heading, key_values, status_word, table, to_json, wrap_lines
from attn_preflight.smoke_judged import judged, judged_result

_TONE = {STATUS_OK: "pass", **{status: "fail" for status in FAILED_STATUSES}}  # how a case's status is coloured


def _seconds(value) -> str:
    return "" if value is None else f"{value:.2f} s"


def _millis(value) -> str:
    return "" if value is None else f"{value:.3g} ms"


def _error(result) -> str:
    if result.max_abs_error is None:
        return ""
    return f"{result.max_abs_error:.1e} / {result.tolerance:.0e}"


def shown_status(status: str) -> str:
    """A case's status as every format but JSON words it: a case that ran within tolerance is "pass", as in the
    HTML report and `check` (JSON keeps the schema's "ok")."""
    return "pass" if status == STATUS_OK else status


def _why(result) -> str:
    text = result.message or ""
    if result.notes:
        text = "; ".join([text] + result.notes) if text else "; ".join(result.notes)
    return text


def _ran_on(report) -> str:
    machine = report.machine
    if machine.device_name:
        where = (
            f"{machine.device_name} (sm_{machine.device_capability.replace('.', '')})"
            if machine.device_capability
            else machine.device_name
        )
    else:
        where = "CPU only" + (f" ({machine.gpu_error})" if machine.gpu_error else "")
    return where


def summary(report) -> str:
    counts = report.counts()
    words = ", ".join(f"{n} {shown_status(status)}" for status, n in counts.items()) or "nothing ran"
    failed = len(report.failed)
    verdict = f"{failed} failed" if failed else ("no failures" if report.ran else "nothing ran: no kernel was tested")
    return f"{words} — {verdict} ({report.wall_s:.1f} s)" if report.wall_s is not None else f"{words} — {verdict}"


def render_smoke(report, fmt: str, screen: Screen = PLAIN) -> str:
    report = judged(report)
    if fmt == "json":
        return to_json(report.to_dict())
    machine = report.machine
    parts = [heading(f"attn-preflight smoke ({report.level})", fmt, level=1)]
    parts.append(
        key_values(
            [
                ("ran on", _ran_on(report)),
                (
                    "torch",
                    " ".join(
                        x
                        for x in (
                            machine.torch_version,
                            f"CUDA {machine.torch_cuda}" if machine.torch_cuda else None,
                            f"cuDNN {machine.cudnn_version}" if machine.cudnn_version else None,
                        )
                        if x
                    ),
                ),
                ("driver", machine.driver_version),
                (
                    "caches",
                    machine.cache_dir + ("; " + "; ".join(machine.cache_notes) if machine.cache_notes else "")
                    if machine.cache_dir
                    else None,
                ),
                ("timeout", f"{report.timeout_s:g} s per case, {report.jobs} at once" if report.timeout_s else None),
            ],
            fmt,
            screen,
        )
    )
    rows = []
    previous = None
    for r in report.results:
        why = _why(r)
        rows.append(
            [
                r.kernel,
                r.case.label() if r.case else "",
                status_word(r.status.upper() if r.failed else shown_status(r.status), screen, _TONE.get(r.status)),
                _error(r),
                _seconds(r.first_call_s),
                _millis(r.steady_ms),
                "" if r.tflops is None else f"{r.tflops:.3g}",
                "(as above)" if why and why == previous else why,  # each reason once
            ]
        )
        previous = why
    parts.append(
        table(
            ["kernel", "case", "status", "max err / tol", "first call", "steady", "TFLOP/s", "why / notes"],
            rows,
            fmt,
            width=screen.width,
            detail=7,  # why / notes: under its row when the table is too wide
        )
    )
    failed = report.failed
    if failed:
        parts.append(heading("Failures", fmt))
        for r in failed:
            lines = [f"{r.kernel} [{r.case.label() if r.case else 'all cases'}]: {r.status}: {r.message}"]
            lines += [f"    {line}" for line in r.details[:12]]
            if fmt == "markdown":
                lines += [f"    reproduce: {r.reproduce}"] if r.reproduce else []
                parts.append("```\n" + "\n".join(lines) + "\n```")
                continue
            text = wrap_lines("\n".join(lines), screen)
            parts.append(text + (f"\n    reproduce: {r.reproduce}" if r.reproduce else ""))  # a command stays whole
    parts.append(summary(report))
    return "\n\n".join(parts)


def progress_line(result, elapsed: float, machine: Optional[MachineSummary] = None, width: Optional[int] = None) -> str:
    """One line per finished case, on stderr while the run goes on; judged against the kernel's documented limits
    on `machine` (the run's MachineSummary as known so far) when given. A skip's reason is left to the report
    (said once there); `width` wraps the line, continued under the kernel's name."""
    if machine is not None:
        result = judged_result(result, machine)
    case = f" [{result.case.label()}]" if result.case else ""
    head = f"smoke {elapsed:6.1f}s  {result.kernel}{case}: {shown_status(result.status)}"
    if result.status == STATUS_OK:
        bits = [
            f"err {result.max_abs_error:.1e} <= {result.tolerance:.0e}" if result.max_abs_error is not None else "",
            f"first {result.first_call_s:.2f} s" if result.first_call_s is not None else "",
            f"steady {result.steady_ms:.3g} ms" if result.steady_ms is not None else "",
            f"{result.tflops:.3g} TFLOP/s" if result.tflops is not None else "",
        ]
        line = head + "  " + "  ".join(b for b in bits if b)
    elif result.message and result.status != STATUS_SKIPPED:
        line = f"{head}: {result.message}"
    else:
        line = head
    if width and len(line) > width:
        import textwrap

        line = "\n".join(textwrap.wrap(line, width=width, subsequent_indent=" " * 15, break_on_hyphens=False))
    return line
