"""Facts as a terminal report or markdown (for a support ticket). JSON is `to_json(facts.to_dict())`.

What is broken comes first ("Problems"), each with its diagnosis; then host, GPUs, CUDA toolkit, torch,
libraries and environment.
"""

from __future__ import annotations

from typing import Optional

from attn_preflight.probe.facts import (
    HEALTH_BROKEN,
    HEALTH_CRASHED,
    HEALTH_NOT_INSTALLED,
    HEALTH_OK,
    HEALTH_SKIPPED,
    Facts,
    LibraryFacts,
)
from attn_preflight.probe.libraries import SHIPS_GPU_CODE, SKEW_NOTE
from attn_preflight.render import PLAIN, Screen, heading, key_values, table, wrap_lines
from attn_preflight.rules.knowledge.cuda_arch import INSTALL_CUDA_TORCH, torch_arch_coverage
from attn_preflight.rules.knowledge.import_diagnosis import component_notes, diagnose


def render_facts(facts: Facts, fmt: str, screen: Screen = PLAIN) -> str:
    title = f"attn-preflight probe: {facts.host.hostname or 'this machine'}"
    when = f"collected {facts.collected_at} by attn-preflight {facts.tool_version}"
    sections = [
        heading(title, fmt, level=1),
        f"_{when}_" if fmt == "markdown" else when,
        _problems(facts, fmt, screen),
        _host(facts, fmt, screen),
        _gpus(facts, fmt, screen),
        _toolkit(facts, fmt, screen),
        _torch(facts, fmt, screen),
        _libraries(facts, fmt, screen),
        _environment(facts, fmt, screen),
    ]
    return "\n\n".join(sections) + "\n"


# What each machine problem means, in the words of the rules that judge it (rules/checks/install.py); a
# command on a line of its own, after "$ ", is never wrapped.
NO_DEVICES = "NVML reports no devices"
NO_GPU_FIX = "run on a GPU node; in a container pass --gpus all (NVIDIA Container Toolkit)"
CPU_ONLY_TORCH = (
    "every CUDA call fails ('Torch not compiled with CUDA enabled', torch/cuda/__init__.py _lazy_init); "
    f"install a CUDA build:\n  $ {INSTALL_CUDA_TORCH}"
)
ARCH_NOT_BUILT = (
    "torch says it 'does not include kernels for this GPU' and every CUDA kernel fails with 'no kernel image is "
    "available for execution on the device' (torch/cuda/__init__.py _check_capability); install a build that "
    f"covers it:\n  $ {INSTALL_CUDA_TORCH}"
)


def problems(facts: Facts) -> list[str]:
    """One line per broken thing, with what it means: the machine (no GPU, a CPU-only torch) first."""
    found = []
    if not facts.gpus.devices:
        found.append(f"no NVIDIA GPU seen: {facts.gpus.error or NO_DEVICES}\n  → {NO_GPU_FIX}")
    if facts.torch.installed and not facts.torch.error and facts.torch.cuda is None and facts.torch.hip is None:
        found.append(f"torch {facts.torch.version} is a CPU-only build (no CUDA): {CPU_ONLY_TORCH}")
    for lib in facts.libraries:
        health = lib.health
        if health.status in HEALTH_BROKEN:
            line = f"{lib.title} ({lib.label}): import {health.status}: {health.error or 'no message'}"
            diagnosis = diagnose(lib, facts)
            if diagnosis:
                line += f"\n  → {diagnosis}"
            elif health.causes:
                line += f"\n  caused by: {health.causes[-1]}"
            found.append(line)
        found.extend(f"{lib.title}: {note}" for note in lib.notes if note.startswith(SKEW_NOTE))
        found.extend(f"{lib.title}: {note}" for note in component_notes(lib, facts))
    for device in facts.gpus.devices:
        if device.error:
            found.append(f"GPU {device.index} ({device.name or 'unknown'}): NVML query failed: {device.error}")
    if facts.gpus.devices and facts.gpus.error:
        found.append(f"NVML: {facts.gpus.error}")
    if facts.torch.installed and facts.torch.error:
        found.append(f"torch: {facts.torch.error}")
    if _may_cover(facts):
        from attn_preflight.rules.kernels.binaries import coverage_problems

        found.extend(coverage_problems(facts))
    for sm, covered in sorted(torch_arch_coverage(facts).items()):
        if not covered:
            found.append(
                f"torch {facts.torch.version} has no kernels for {sm} (arch list: "
                f"{' '.join(facts.torch.arch_list or []) or 'empty'})\n  → {ARCH_NOT_BUILT}"
            )
    return found


def _problems(facts: Facts, fmt: str, screen: Screen) -> str:
    found = problems(facts)
    if found:
        if fmt == "markdown":  # list items; the diagnosis on its own line (a hard break: two spaces)
            body = "\n".join("- " + line.replace("\n  ", "  \n  ") for line in found)
        else:
            body = "\n".join("✗ " + line for line in found)
        if not facts.imports_checked:
            body += "\nImport health is unknown: imports were not checked (--no-imports)."
    elif not facts.imports_checked:
        body = "None found, but import health is unknown: imports were not checked (--no-imports)."
    else:
        checked = sum(1 for lib in facts.libraries if lib.health.status == HEALTH_OK)
        body = f"None found: every installed library imports ({checked} checked)."
    return heading(f"Problems ({len(found)})", fmt) + "\n" + wrap_lines(body, screen)


def _host(facts: Facts, fmt: str, screen: Screen) -> str:
    host = facts.host
    return (
        heading("Host", fmt)
        + "\n"
        + key_values(
            [
                ("OS", host.os),
                ("CPU", host.cpu_arch),
                ("Python", host.python_version),
                ("executable", host.python_executable),
                ("virtualenv", host.virtualenv),
            ],
            fmt,
            screen,
        )
    )


def _gpus(facts: Facts, fmt: str, screen: Screen) -> str:
    gpus = facts.gpus
    out = [heading(f"GPUs ({len(gpus.devices)})", fmt)]
    if gpus.driver_version or gpus.cuda_driver_version:
        out.append(
            key_values(
                [
                    ("driver", gpus.driver_version),
                    ("CUDA (driver)", gpus.cuda_driver_version),
                    ("NVML", gpus.nvml_version),
                ],
                fmt,
                screen,
            )
        )
    if not gpus.devices:
        out.append(wrap_lines(f"None: {gpus.error or 'NVML reports no devices'}", screen))
        return "\n".join(out)
    rows = [
        [
            d.index,
            d.name,
            d.compute_capability,
            d.sm,
            _mib(d.memory_total_mib),
            d.mig_mode,
            d.persistence_mode,
            d.nvlink_links_up,
            d.error,
        ]
        for d in gpus.devices
    ]
    headers = ["#", "name", "CC", "arch", "memory", "MIG", "persistence", "NVLink up", "error"]
    if not any(d.error for d in gpus.devices):
        headers, rows = headers[:-1], [row[:-1] for row in rows]
    out.append(table(headers, rows, fmt, width=screen.width))
    # UUIDs apart: 40 columns that would not leave the table room at 100
    out.append(table(["#", "UUID"], [[d.index, d.uuid] for d in gpus.devices], fmt, width=screen.width))
    return out[0] + "\n" + "\n\n".join(out[1:])


def _toolkit(facts: Facts, fmt: str, screen: Screen) -> str:
    kit, headers = facts.cuda_toolkit, facts.cutlass_headers
    cutlass = f"{headers.version} at {headers.path} (from {headers.source})" if headers.version else None
    pairs = [
        ("nvcc", f"{kit.nvcc_version or '?'} ({kit.nvcc_path})" if kit.nvcc_path else kit.error),
        ("CUDA_HOME", kit.cuda_home),
        ("CUTLASS headers", cutlass or headers.error),
    ]
    if kit.nvcc_path and kit.error:
        pairs.append(("nvcc problem", kit.error))
    if headers.version and headers.error:
        pairs.append(("CUTLASS note", headers.error))
    return heading("CUDA toolkit", fmt) + "\n" + key_values(pairs, fmt, screen)


def _torch(facts: Facts, fmt: str, screen: Screen) -> str:
    torch = facts.torch
    if not torch.installed:
        return (
            heading("torch", fmt)
            + "\n"
            + wrap_lines(f"Not installed: {torch.error or 'no torch distribution'}", screen)
        )
    if torch.arch_list is None:
        arch = "unknown (read inside the import check)" if not facts.imports_checked else "unknown"
    else:
        arch = " ".join(torch.arch_list) or "none (CPU-only build)"
    coverage = torch_arch_coverage(facts)
    covered = ", ".join(f"{sm}: {'yes' if ok else 'NO'}" for sm, ok in sorted(coverage.items()))
    pairs = [
        ("version", torch.version),
        ("CUDA build", torch.cuda or ("—" if torch.hip else "none (CPU-only)")),
        ("cuDNN", torch.cudnn),
        ("HIP", torch.hip),
        ("arch list", arch),
        ("covers GPUs", covered or None),
    ]
    if torch.error:
        pairs.append(("problem", torch.error))
    return heading("torch", fmt) + "\n" + key_values(pairs, fmt, screen)


def _libraries(facts: Facts, fmt: str, screen: Screen) -> str:
    shown = [lib for lib in facts.libraries if lib.health.status != HEALTH_NOT_INSTALLED]
    missing = [lib.title for lib in facts.libraries if lib.health.status == HEALTH_NOT_INSTALLED]
    out = []
    if shown:
        rows = [
            [
                lib.title,
                _distributions(lib),
                lib.version or "unknown",
                lib.import_name,
                _health_cell(lib),
            ]
            for lib in shown
        ]
        headers = ["library", "distributions", "version", "import", "import health"]
        out.append(table(headers, rows, fmt, width=screen.width))
    notes = [f"{lib.title}: {note}" for lib in shown for note in lib.notes if not note.startswith(SKEW_NOTE)]
    if notes:
        out.append(wrap_lines("Notes:\n" + "\n".join(f"- {note}" for note in notes), screen))
    compiled = compiled_code_lines(facts, shown)
    if compiled:
        out.append(
            wrap_lines("Compiled GPU code (fatbin headers):\n" + "\n".join(f"- {line}" for line in compiled), screen)
        )
    if missing:
        out.append(wrap_lines("Not installed: " + ", ".join(missing), screen))
    return heading(f"Libraries ({len(shown)} installed)", fmt) + "\n" + "\n\n".join(out)


def _arch_order(arch: str) -> tuple[int, str]:
    digits = "".join(ch for ch in arch.split("_", 1)[-1] if ch.isdigit())
    return int(digits or 0), arch


def compiled_code_lines(facts: Facts, shown: list) -> list[str]:
    """ "sgl-kernel: 6 modules, SASS sm_80 ... sm_120a; for sm_90 1 module has none (sgl_kernel/x.so)" per library
    whose compiled modules the probe read."""
    lines = []
    for lib in shown:
        if not lib.binaries:
            continue
        sass = sorted({a for m in lib.binaries.values() for a in m.sass}, key=_arch_order)
        ptx = sorted({a for m in lib.binaries.values() for a in m.ptx}, key=_arch_order)
        count = len(lib.binaries)
        line = f"{lib.title}: {count} module{'s' if count != 1 else ''}, SASS {' '.join(sass) or 'none'}"
        if ptx:
            line += f", PTX {' '.join(ptx)}"
        for sm, cover in binaries_cover(lib, facts).items():
            without = cover["modules_without_code"]
            if without:
                shown_names = ", ".join(without[:3]) + (f" and {len(without) - 3} more" if len(without) > 3 else "")
                line += f"; no code for {sm} in {len(without)} of them ({shown_names})"
        lines.append(line)
    return lines


def _environment(facts: Facts, fmt: str, screen: Screen) -> str:
    out = heading("Environment", fmt) + "\n"
    if not facts.environment:
        return out + "No variables that affect backend selection are set."
    pairs = [(name, _shorten(value)) for name, value in sorted(facts.environment.items())]
    return out + key_values(pairs, fmt, screen)


ENV_VALUE_SHOWN = 160  # characters; the H200 image's NVIDIA_REQUIRE_CUDA is ~2,000 (JSON keeps it whole)


def _shorten(value: str) -> str:
    if len(value) <= ENV_VALUE_SHOWN:
        return value
    return f"{value[:ENV_VALUE_SHOWN]}… ({len(value)} characters; --format json has it all)"


def _distributions(lib: LibraryFacts) -> str:
    if not lib.distributions:
        return "(no metadata)"
    return ", ".join(
        name if version == lib.version else f"{name} {version}" for name, version in lib.distributions.items()
    )


def _health_cell(lib: LibraryFacts) -> str:
    health = lib.health
    if health.status == HEALTH_SKIPPED:
        return "not checked" + (f": {health.error}" if health.error else "")
    text = health.status
    if health.status == HEALTH_CRASHED and health.error:
        text = f"crashed ({health.error.replace('killed by ', '').split(' ')[0]})"
    if health.seconds is not None:
        text += f" {health.seconds:.1f} s"
    if health.cached:
        text += " (cached)"
    return text


def _mib(value: Optional[int]) -> Optional[str]:
    return None if value is None else f"{value / 1024:.1f} GiB"


def facts_document(facts: Facts) -> dict:
    """The report `probe --format json` writes: the facts, and beside them today's judgements for readers of
    the JSON (attn_preflight.probe.facts.DERIVED_KEYS: ignored when the report is read back)."""
    document = facts.to_dict()
    document["torch"]["gpu_arch_covered"] = torch_arch_coverage(facts)
    for lib, written in zip(facts.libraries, document["libraries"]):
        written["health"]["diagnosis"] = diagnose(lib, facts)
        written["component_notes"] = component_notes(lib, facts)
        cover = binaries_cover(lib, facts)
        if cover:
            written["binaries_cover"] = cover
    return document


def _may_cover(facts: Facts, lib=None) -> bool:
    """Whether any GPU of the report and any installed library (or `lib`) ships compiled GPU code to judge: the
    rules that judge it are not imported otherwise (most probes: a GPU with torch and triton alone)."""
    libs = facts.libraries if lib is None else [lib]
    return bool(facts.gpus.devices) and any(
        one.installed and (one.binaries is not None or one.key in SHIPS_GPU_CODE) for one in libs
    )


def binaries_cover(lib, facts: Facts) -> dict:
    """sm -> whether the module the library's import loads has code for that GPU, and the modules without code
    for it (judged by rules/kernels/binaries.py); empty when nothing says what the library ships."""
    if not _may_cover(facts, lib):
        return {}
    from attn_preflight.rules.kernels.binaries import driver_cuda_of, library_coverage

    out = {}
    for device in facts.gpus.devices:
        if device.sm is None or device.cc_major is None or device.cc_minor is None or device.sm in out:
            continue
        coverage = library_coverage(
            lib, (device.cc_major, device.cc_minor), driver_cuda_of(facts.gpus.cuda_driver_version), facts.host.cpu_arch
        )
        if coverage is not None:
            out[device.sm] = {
                "import_module_covered": coverage.primary_covered,
                "modules_without_code": sorted(coverage.uncovered),
                "read_from": coverage.source,
            }
    return out
