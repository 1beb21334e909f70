"""One self-contained HTML page: the machine, its libraries, what it can serve, and smoke results.

No network and no external assets: CSS is inline, there is no script, fonts are the system's. Every status is
a colour *and* a word and a symbol (legible in grey print and for colour-blind readers); every matrix cell
carries its reasons in a `title` (hover) and in numbered notes under the table (print, screen readers).
Input is data (Matrix, SmokeTable) that the report command builds from the rules grid (attn_preflight.rules.core.grid cells) and a
smoke result, so this module reads Facts, the grid's cells and nothing else of the program.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape
from string import Template
from typing import TYPE_CHECKING, Iterable, Optional

from attn_preflight.probe import __version__
from attn_preflight.probe.environ import redact
from attn_preflight.probe.facts import (
    HEALTH_BROKEN,
    HEALTH_CRASHED,
    HEALTH_ERROR,
    HEALTH_NOT_INSTALLED,
    HEALTH_OK,
    HEALTH_SKIPPED,
    HEALTH_TIMEOUT,
    Facts,
    LibraryFacts,
)
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.grid import Cell, Reason
from attn_preflight.rules.knowledge.cuda_arch import torch_arch_coverage
from attn_preflight.rules.knowledge.import_diagnosis import component_notes, diagnose

if TYPE_CHECKING:  # the figures come from the report command
    from attn_preflight.rules.checks.memory import MemoryFigures

# status -> (css class, symbol, word shown)
STATUS_STYLE = {
    Status.PASS: ("pass", "✓", "pass"),
    Status.WARN: ("warn", "!", "warn"),
    Status.FAIL: ("fail", "✕", "fail"),
    Status.SKIP: ("none", "–", "skip"),
    Status.UNKNOWN: ("none", "?", "unknown"),
}
HEALTH_STYLE = {
    HEALTH_OK: ("pass", "✓", "imports"),
    HEALTH_ERROR: ("fail", "✕", "import error"),
    HEALTH_CRASHED: ("fail", "✕", "crashed"),
    HEALTH_TIMEOUT: ("fail", "✕", "timed out"),
    HEALTH_SKIPPED: ("none", "–", "not checked"),
    HEALTH_NOT_INSTALLED: ("none", "–", "not installed"),
}


# A cell the matrix lacks: never judged, so never counted as serving.
_UNJUDGED = Cell(Status.WARN, Status.UNKNOWN)


@dataclass
class Matrix:
    """Backends (rows) × KV-cache dtypes (columns) for one model on this target: attn_preflight.rules.core.grid cells."""

    subject: str  # the model, or "no model (backend defaults)"
    rows: list[tuple[str, str]]  # (backend, title)
    columns: list[str]  # KV dtypes
    cells: dict[tuple[str, str], Cell]  # (backend, KV dtype) -> the grid's cell
    note: str = ""  # the rest of the config evaluated, in words


@dataclass(frozen=True)
class SmokeRow:
    name: str
    status: Status  # the kernel run judged: pass (ran within tolerance), fail, skip (check_smoke.result_status)
    first_call_s: Optional[float] = None
    steady_ms: Optional[float] = None
    max_error: Optional[float] = None
    detail: str = ""


@dataclass
class SmokeTable:
    source: str  # the result file
    rows: list[SmokeRow] = field(default_factory=list)
    note: str = ""


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _badge(style: tuple[str, str, str]) -> str:
    css, symbol, word = style
    return f'<span class="badge {css}"><span class="sym" aria-hidden="true">{symbol}</span>{_e(word)}</span>'


def _dash(value: object) -> str:
    return _e(value) if value not in (None, "", []) else '<span class="muted">—</span>'


def _kv_table(pairs: Iterable[tuple[str, object]], css: str = "kv") -> str:
    rows = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_dash(v)}</td></tr>' for k, v in pairs)
    return f'<table class="{css}"><tbody>{rows}</tbody></table>'


# --- the parts of the page --------------------------------------------------------------------------


def _gib(mib: Optional[int]) -> str:
    return f"{mib / 1024:.1f} GiB" if mib else "—"


def _cards(facts: Facts, matrix: Optional[Matrix], memory: Optional[MemoryFigures] = None) -> str:
    devices = facts.gpus.devices
    if devices:
        first = devices[0]
        names = sorted({d.name or "unknown GPU" for d in devices})
        gpu_value = (f"{len(devices)}× " if len(devices) > 1 else "") + " + ".join(names)
        gpu_sub = (
            f"compute capability {first.compute_capability or '?'} · {first.sm or '?'} · {_gib(first.memory_total_mib)}"
        )
    else:
        gpu_value, gpu_sub = "No GPU", facts.gpus.error or "NVML reported no device"
    driver_value = facts.gpus.driver_version or "—"
    driver_sub = f"CUDA {facts.gpus.cuda_driver_version}" if facts.gpus.cuda_driver_version else "CUDA unknown"
    if facts.cuda_toolkit.nvcc_version:
        driver_sub += f" · nvcc {facts.cuda_toolkit.nvcc_version}"
    torch = facts.torch
    if torch.installed:
        torch_value = torch.version or "installed"
        coverage = sorted(torch_arch_coverage(facts).items())
        covered = [sm for sm, ok in coverage if ok]
        missing = [sm for sm, ok in coverage if not ok]
        torch_sub = f"CUDA {torch.cuda}" if torch.cuda else ("ROCm " + torch.hip if torch.hip else "CPU build")
        if missing:
            torch_sub += f" · no kernels for {', '.join(missing)}"
        elif covered:
            torch_sub += f" · covers {', '.join(covered)}"
    else:
        torch_value, torch_sub = "not installed", torch.error or "torch is optional for probe and check"
    installed = [lib for lib in facts.libraries if lib.installed]
    broken = [lib for lib in installed if lib.health.status in HEALTH_BROKEN]
    lib_value = f"{len(installed)} installed"
    if not facts.imports_checked:
        lib_sub, lib_css = "imports not checked (--no-imports)", "none"
    elif broken:
        lib_sub, lib_css = f"{len(broken)} fail to import: " + ", ".join(lib.key for lib in broken), "fail"
    else:
        lib_sub, lib_css = "all import cleanly", "pass"
    cards = [
        ("GPU", gpu_value, gpu_sub, ""),
        ("Driver", driver_value, driver_sub, ""),
        ("torch", torch_value, torch_sub, "fail" if torch.installed and missing else ""),
        ("Libraries", lib_value, lib_sub, lib_css),
    ]
    if matrix is not None:
        counts = {s: sum(1 for c in matrix.cells.values() if c.status == s) for s in STATUS_STYLE}
        total = len(matrix.cells)
        runs = sum(1 for c in matrix.cells.values() if c.serves)
        cards.append(
            (
                "Configs that run",
                f"{runs} of {total}",
                " · ".join(f"{n} {s}" for s, n in counts.items() if n or s in ("pass", "fail")),
                "pass" if runs == total else ("fail" if runs == 0 else "warn"),
            )
        )
    if memory is not None:
        cards.append(
            (
                "Memory per GPU",
                f"{memory.weights_gib:.1f} of {memory.budget_gib:.1f} GiB",
                f"kv capacity: {memory.capacity_line()}" if memory.fits else "the weights do not fit",
                "pass" if memory.fits else "fail",
            )
        )
    html = []
    for label, value, sub, css in cards:
        html.append(
            f'<div class="card {css}"><div class="card-label">{_e(label)}</div>'
            f'<div class="card-value">{_e(value)}</div><div class="card-sub">{_e(sub)}</div></div>'
        )
    return f'<section class="cards" aria-label="Summary">{"".join(html)}</section>'


def _fix(reason: Reason) -> str:
    return " or ".join(reason.fix)


def _matrix(matrix: Matrix) -> str:
    # One numbered note per rule: a cell's own found-vs-required is in its hover text; the note says what the
    # rule is, its fix, and the message itself when every cell it fails says the same.
    notes: dict[str, int] = {}
    noted: dict[str, list[Reason]] = {}
    for backend, _ in matrix.rows:
        for dtype in matrix.columns:
            for reason in matrix.cells.get((backend, dtype), _UNJUDGED).reasons:
                if reason.rule_id not in notes:
                    notes[reason.rule_id] = len(notes) + 1
                noted.setdefault(reason.rule_id, []).append(reason)
    head = "".join(f'<th scope="col"><code>{_e(c)}</code></th>' for c in matrix.columns)
    body = []
    for backend, title in matrix.rows:
        cells = []
        for dtype in matrix.columns:
            cell = matrix.cells.get((backend, dtype), _UNJUDGED)
            css, symbol, word = STATUS_STYLE.get(cell.status, STATUS_STYLE[Status.UNKNOWN])
            lines = [f"{backend} × {dtype}: {word}"] + [
                f"• {r.status} [{r.rule_id}] {r.message}" + (f" — fix: {_fix(r)}" if r.fix else "")
                for r in cell.reasons
            ]
            refs = sorted({notes[r.rule_id] for r in cell.reasons})
            sup = "".join(f'<a href="#why-{n}">{n}</a>' for n in refs)
            cells.append(
                f'<td class="cell {css}" data-backend="{_e(backend)}" data-kv="{_e(dtype)}" '
                f'data-status="{_e(cell.status)}" title="{_e(chr(10).join(lines))}">'
                f'<span class="sym" aria-hidden="true">{symbol}</span>{_e(word)}'
                + (f'<sup class="refs">{sup}</sup>' if sup else "")
                + "</td>"
            )
        body.append(
            f'<tr><th scope="row"><code>{_e(backend)}</code><span class="sub">{_e(title)}</span></th>'
            + "".join(cells)
            + "</tr>"
        )
    first_column = matrix.columns[0] if matrix.columns else None
    runs = [b for b, _ in matrix.rows if first_column and matrix.cells.get((b, first_column), _UNJUDGED).serves]
    verdict = (
        (
            f'<p class="lede">Runs here with <code>--kv-cache-dtype {_e(first_column)}</code>: '
            + (", ".join(f"<code>{_e(b)}</code>" for b in runs) if runs else "<strong>no backend</strong>")
            + ".</p>"
        )
        if first_column
        else ""
    )
    items = []
    for rule, number in notes.items():
        reasons = noted[rule]
        first = reasons[0]
        style = STATUS_STYLE.get(first.status, STATUS_STYLE[Status.UNKNOWN])
        messages = {r.message for r in reasons}
        fixes = list(dict.fromkeys(_fix(r) for r in reasons if r.fix))
        message = f'<span class="msg">{_e(first.message)}</span>' if len(messages) == 1 else ""
        fix = "".join(f'<div class="fix">Fix: <code>{_e(f)}</code></div>' for f in fixes[:3])
        items.append(
            f'<li id="why-{number}">{_badge(style)} <strong>{_e(first.title)}</strong> '
            f'<code class="rule">{_e(rule)}</code> <span class="count">({len(reasons)} '
            f"cell{'s' if len(reasons) != 1 else ''})</span>{message}{fix}</li>"
        )
    why = (f'<h3>Why</h3><ol class="why">{"".join(items)}</ol>') if items else ""
    note = f'<p class="muted">{_e(matrix.note)}</p>' if matrix.note else ""
    legend = (
        '<p class="legend" aria-label="Legend">'
        + " ".join(_badge(style) for style in STATUS_STYLE.values())
        + ' <span class="muted">Hover a cell for its reasons; numbers point to the notes below.</span></p>'
    )
    return (
        f'<section id="matrix"><h2>Attention backend × KV-cache dtype <span class="h-sub">{_e(matrix.subject)}'
        f'</span></h2>{verdict}{note}{legend}<div class="scroll"><table class="matrix">'
        f'<thead><tr><th scope="col">backend</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f"</div>{why}</section>"
    )


def _library_row(library: LibraryFacts, facts: Facts) -> str:
    status = library.health.status if facts.imports_checked else HEALTH_SKIPPED
    style = HEALTH_STYLE.get(status, ("none", "?", status))
    dists = ", ".join(f"{name} {version}" for name, version in sorted(library.distributions.items()))
    detail = []
    if library.health.error and status in HEALTH_BROKEN:
        detail.append(f'<div class="err"><code>{_e(library.health.error)}</code></div>')
    diagnosis = diagnose(library, facts)
    if diagnosis:
        detail.append(f'<div class="diag">{_e(diagnosis)}</div>')
    notes = library.notes + component_notes(library, facts)
    detail.extend(f'<div class="note">{_e(note)}</div>' for note in notes)
    seconds = f"{library.health.seconds:.2f} s" if library.health.seconds is not None and status == HEALTH_OK else ""
    module = _dash(library.import_name)
    return (
        f'<tr data-library="{_e(library.key)}" data-health="{_e(status)}"><th scope="row">{_e(library.title)}'
        f'<span class="sub"><code>{_e(library.key)}</code></span></th>'
        f'<td><strong>{_dash(library.version)}</strong><span class="sub">{_e(dists)}</span></td>'
        f'<td><code>{module}</code><span class="sub">{_e(seconds)}</span></td>'
        f'<td>{_badge(style)}</td><td class="details">{"".join(detail) or _dash(None)}</td></tr>'
    )


def _libraries(facts: Facts) -> str:
    installed = [lib for lib in facts.libraries if lib.installed]
    order = {HEALTH_ERROR: 0, HEALTH_CRASHED: 0, HEALTH_TIMEOUT: 0, HEALTH_OK: 1}
    installed.sort(key=lambda lib: (order.get(lib.health.status, 2), lib.key))
    absent = sorted(lib.key for lib in facts.libraries if not lib.installed)
    rows = "".join(_library_row(lib, facts) for lib in installed)
    table = (
        (
            f'<table class="grid libs"><thead><tr><th scope="col">library</th><th scope="col">version</th>'
            f'<th scope="col">import</th><th scope="col">health</th><th scope="col">details</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )
        if installed
        else '<p class="muted">No attention library installed.</p>'
    )
    missing = (
        (
            '<p class="absent"><span class="muted">Not installed:</span> '
            + ", ".join(f"<code>{_e(k)}</code>" for k in absent)
            + "</p>"
        )
        if absent
        else ""
    )
    checked = (
        ""
        if facts.imports_checked
        else (
            '<p class="callout">Imports were not checked (<code>--no-imports</code>): health is unknown, not healthy.</p>'
        )
    )
    return f'<section id="libraries"><h2>Libraries and import health</h2>{checked}<div class="scroll">{table}</div>{missing}</section>'


def _smoke(smoke: SmokeTable) -> str:
    rows = []
    for row in smoke.rows:
        style = STATUS_STYLE.get(row.status, STATUS_STYLE[Status.UNKNOWN])
        first = f"{row.first_call_s:.2f} s" if row.first_call_s is not None else None
        steady = f"{row.steady_ms:.2f} ms" if row.steady_ms is not None else None
        error = f"{row.max_error:.2g}" if row.max_error is not None else None
        rows.append(
            f'<tr data-smoke="{_e(row.name)}" data-status="{_e(row.status)}"><th scope="row">{_e(row.name)}</th>'
            f'<td>{_badge(style)}</td><td class="num">{_dash(first)}</td><td class="num">{_dash(steady)}</td>'
            f'<td class="num">{_dash(error)}</td><td class="details">{_dash(row.detail)}</td></tr>'
        )
    note = f'<p class="muted">{_e(smoke.note)}</p>' if smoke.note else ""
    body = "".join(rows) or '<tr><td colspan="6" class="muted">The result holds no kernel runs.</td></tr>'
    return (
        f'<section id="smoke"><h2>Smoke results <span class="h-sub">{_e(smoke.source)}</span></h2>{note}'
        f'<div class="scroll"><table class="grid"><thead><tr><th scope="col">kernel</th><th scope="col">result</th>'
        f'<th scope="col" class="num">first call</th><th scope="col" class="num">steady</th>'
        f'<th scope="col" class="num">max error vs fp32</th><th scope="col">details</th></tr></thead>'
        f"<tbody>{body}</tbody></table></div></section>"
    )


def _machine(facts: Facts) -> str:
    gpu_rows = "".join(
        f'<tr><td class="num">{d.index}</td><td>{_dash(d.name)}</td><td>{_dash(d.compute_capability)} '
        f'<span class="sub-inline">{_e(d.sm or "")}</span></td><td class="num">{_e(_gib(d.memory_total_mib))}</td>'
        f'<td>{_dash(d.mig_mode)}</td><td>{_dash(d.persistence_mode)}</td><td class="num">{_dash(d.nvlink_links_up)}</td>'
        f"<td>{_dash(d.error)}</td></tr>"
        for d in facts.gpus.devices
    )
    gpus = (
        (
            f'<table class="grid"><thead><tr><th scope="col" class="num">#</th><th scope="col">name</th>'
            f'<th scope="col">compute capability</th><th scope="col" class="num">memory</th><th scope="col">MIG</th>'
            f'<th scope="col">persistence</th><th scope="col" class="num">NVLink up</th><th scope="col">error</th>'
            f"</tr></thead><tbody>{gpu_rows}</tbody></table>"
        )
        if facts.gpus.devices
        else (f'<p class="callout">No GPU: {_e(facts.gpus.error or "NVML reported no device")}</p>')
    )
    host, toolkit, torch = facts.host, facts.cuda_toolkit, facts.torch
    arch_list = " ".join(torch.arch_list) if torch.arch_list else None
    software = [
        ("driver", facts.gpus.driver_version),
        ("CUDA (driver)", facts.gpus.cuda_driver_version),
        ("NVML", facts.gpus.nvml_version),
        ("nvcc", f"{toolkit.nvcc_version} ({toolkit.nvcc_path})" if toolkit.nvcc_version else toolkit.error),
        ("CUDA_HOME", toolkit.cuda_home),
        ("torch", torch.version if torch.installed else "not installed"),
        ("torch CUDA", torch.cuda),
        ("cuDNN", torch.cudnn),
        ("torch arch list", arch_list),
        (
            "CUTLASS headers",
            f"{facts.cutlass_headers.version} ({facts.cutlass_headers.path})"
            if facts.cutlass_headers.version
            else facts.cutlass_headers.error,
        ),
    ]
    machine = [
        ("host", host.hostname),
        ("OS", host.os),
        ("CPU", host.cpu_arch),
        ("Python", host.python_version),
        ("executable", host.python_executable),
        ("virtualenv", host.virtualenv),
    ]
    # masked again: a report from elsewhere (edited by hand, another tool) may carry unmasked secrets
    env = (
        _kv_table(sorted((k, redact(k, v)) for k, v in facts.environment.items()), "kv env")
        if facts.environment
        else '<p class="muted">No variable that changes backend selection is set.</p>'
    )
    return (
        f'<section id="machine"><h2>Machine</h2><div class="scroll">{gpus}</div>'
        f'<div class="two"><div><h3>Software</h3>{_kv_table(software)}</div>'
        f"<div><h3>Host</h3>{_kv_table(machine)}</div></div>"
        f"<h3>Environment</h3>{env}</section>"
    )


_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="attn-preflight $version">
<title>$title</title>
<style>$css</style>
</head>
<body>
<header class="top">
<div class="brand">attn-preflight · capability report</div>
<h1>$heading</h1>
<p class="meta">$meta</p>
<nav aria-label="Sections">$nav</nav>
</header>
<main>
$body
</main>
<footer>Generated by attn-preflight $version from $source. Self-contained: no network, no external assets.</footer>
</body>
</html>
""")

_CSS = """
:root{--bg:#f6f7f9;--panel:#fff;--ink:#15181d;--muted:#5b6472;--line:#dde1e7;--accent:#3949ab;
--pass-bg:#dcf5e3;--pass-ink:#0f5132;--pass-line:#8fd3a6;--warn-bg:#fff1c2;--warn-ink:#6b4400;--warn-line:#f0c75e;
--fail-bg:#fde0e0;--fail-ink:#8a1c1c;--fail-line:#f0a3a3;--none-bg:#eef0f3;--none-ink:#3d4450;--none-line:#cfd4db}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--panel:#1a1e24;--ink:#e8ebf0;--muted:#9aa3b2;--line:#2c323b;
--accent:#9fa8ff;--pass-bg:#12351f;--pass-ink:#9de3b4;--pass-line:#24603a;--warn-bg:#3a2e0a;--warn-ink:#f5d37a;
--warn-line:#6d5515;--fail-bg:#3d1618;--fail-ink:#f5a8a8;--fail-line:#78292c;--none-bg:#23272e;--none-ink:#c3c9d3;
--none-line:#39404a}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,sans-serif}
code{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.88em}
header.top{background:var(--panel);border-bottom:1px solid var(--line);padding:24px 32px 12px}
.brand{font-size:12px;letter-spacing:.08em;text-transform:uppercase;color:var(--accent);font-weight:600}
h1{margin:4px 0 2px;font-size:28px;line-height:1.2}
.meta{margin:0;color:var(--muted);font-size:13px}
nav{margin-top:10px;display:flex;gap:16px;font-size:13px}
nav a{color:var(--accent);text-decoration:none}nav a:hover{text-decoration:underline}
main{max-width:1240px;margin:0 auto;padding:20px 32px 8px}
section{background:var(--panel);border:1px solid var(--line);border-radius:10px;padding:18px 22px;margin:0 0 18px;
min-width:0}
h2{font-size:19px;margin:0 0 10px}.h-sub{font-weight:400;color:var(--muted);font-size:15px;margin-left:8px}
h3{font-size:14px;margin:16px 0 6px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(180px,1fr));gap:12px;background:none;border:0;padding:0}
.card{background:var(--panel);border:1px solid var(--line);border-top:4px solid var(--none-line);border-radius:10px;
padding:12px 16px}
.card.pass{border-top-color:var(--pass-line)}.card.warn{border-top-color:var(--warn-line)}
.card.fail{border-top-color:var(--fail-line)}
.card-label{font-size:12px;text-transform:uppercase;letter-spacing:.06em;color:var(--muted);font-weight:600}
.card-value{font-size:20px;font-weight:650;margin:2px 0;overflow-wrap:anywhere}
.card-sub{font-size:13px;color:var(--muted);overflow-wrap:anywhere}
.lede{font-size:16px;margin:0 0 8px}
.legend{display:flex;flex-wrap:wrap;gap:8px;align-items:center;font-size:13px;margin:6px 0 12px}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top}
table.matrix{width:auto;min-width:60%}
table.matrix th,table.matrix td{border:1px solid var(--line);padding:5px 8px}
table.matrix thead th{background:var(--none-bg);font-weight:600;white-space:nowrap;position:sticky;top:0}
table.matrix tbody th{white-space:nowrap;background:var(--panel)}
.sub{display:block;font-size:12px;color:var(--muted);font-weight:400;white-space:normal}
.sub-inline{color:var(--muted);font-size:12px}
td.cell{white-space:nowrap;font-weight:600;font-size:13.5px;cursor:help;text-align:center;vertical-align:middle;min-width:76px}
.pass{background:var(--pass-bg);color:var(--pass-ink)}
.warn{background:var(--warn-bg);color:var(--warn-ink)}
.fail{background:var(--fail-bg);color:var(--fail-ink)}
.none{background:var(--none-bg);color:var(--none-ink)}
.card.pass,.card.warn,.card.fail{background:var(--panel);color:var(--ink)}
.sym{display:inline-block;width:1.1em;font-weight:800}
sup.refs{font-weight:500;margin-left:3px}sup.refs a{color:inherit;margin-left:2px}
.badge{display:inline-flex;align-items:center;gap:2px;border-radius:999px;padding:1px 9px 1px 6px;font-size:12.5px;
font-weight:600;white-space:nowrap;border:1px solid transparent}
.badge.pass{border-color:var(--pass-line)}.badge.warn{border-color:var(--warn-line)}
.badge.fail{border-color:var(--fail-line)}.badge.none{border-color:var(--none-line)}
ol.why{padding-left:26px;margin:4px 0 0}ol.why li{margin:0 0 8px}
.rule,.count{color:var(--muted);font-size:13px}.msg{display:block;margin-top:2px}
.fix{font-size:13.5px;margin-top:2px}.fix code{background:var(--none-bg);padding:1px 5px;border-radius:4px}
table.grid th,table.grid td{padding:7px 10px;border-bottom:1px solid var(--line)}
table.grid thead th{font-size:12px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted);font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.details{font-size:13.5px;max-width:520px}
table.libs tbody th{min-width:170px}
.err code{color:var(--fail-ink);overflow-wrap:anywhere}.diag{margin-top:2px}.note{color:var(--muted)}
.absent{font-size:13.5px;margin:10px 0 0}
.callout{background:var(--warn-bg);color:var(--warn-ink);border:1px solid var(--warn-line);border-radius:8px;
padding:8px 12px}
.muted{color:var(--muted)}
table.kv th{width:170px;padding:4px 12px 4px 0;color:var(--muted);font-weight:500;font-size:13.5px}
table.kv td{padding:4px 0;overflow-wrap:anywhere;font-size:14px}
.two{display:grid;grid-template-columns:1fr 1fr;gap:24px}
@media (max-width:800px){.two{grid-template-columns:1fr}main,header.top{padding-left:14px;padding-right:14px}}
footer{max-width:1240px;margin:0 auto;padding:4px 32px 28px;color:var(--muted);font-size:12.5px}
@media print{
:root{--bg:#fff;--panel:#fff}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
body{font-size:10.5pt}nav{display:none}header.top{padding:0 0 6px;border:0}
main{padding:0;max-width:none}section{border:0;border-top:1px solid #999;border-radius:0;padding:8px 0;
margin:0 0 8px}
.cards{grid-template-columns:repeat(5,1fr)}.card{padding:6px 8px}
tr,li,.card{break-inside:avoid}h2,h3{break-after:avoid}td.cell{cursor:auto}.scroll{overflow:visible}
@page{margin:12mm}}
"""


def _when(iso: str) -> str:
    """'2026-11-29T11:00:00Z' -> '2026-11-29 11:00 UTC'; anything else as given."""
    from datetime import datetime, timezone

    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def render_html(
    facts: Facts,
    matrix: Optional[Matrix] = None,
    smoke: Optional[SmokeTable] = None,
    source: str = "this machine",
    memory: Optional[MemoryFigures] = None,
) -> str:
    """The page. `source` names where the facts came from (this machine, or the report file); `memory` the
    weights and KV figures of the model on it (attn_preflight.rules.checks.memory.memory_figures), when known."""
    host = facts.host.hostname or source
    meta_parts = [
        f"Probed {_when(facts.collected_at)}" if facts.collected_at else "Probe time unknown",
        f"report by attn-preflight {facts.tool_version or '?'}",
        f"schema {facts.schema_version}",
        f"source: {source}",
    ]
    sections: list[tuple[str, str, str]] = []  # (id, nav label, html)
    if matrix is not None:
        sections.append(("matrix", "Backends × KV dtype", _matrix(matrix)))
    sections.append(("libraries", "Libraries", _libraries(facts)))
    if smoke is not None:
        sections.append(("smoke", "Smoke", _smoke(smoke)))
    sections.append(("machine", "Machine", _machine(facts)))
    nav = "".join(f'<a href="#{sid}">{_e(label)}</a>' for sid, label, _ in sections)
    body = _cards(facts, matrix, memory) + "\n".join(html for _, _, html in sections)
    subject = f" — {matrix.subject}" if matrix is not None else ""
    return _PAGE.substitute(
        version=_e(__version__),
        title=_e(f"{host}{subject} · attn-preflight"),
        css=_CSS,
        heading=_e(host),
        meta=" · ".join(_e(p) for p in meta_parts),
        nav=nav,
        body=body,
        source=_e(source),
    )
