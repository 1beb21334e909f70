"""Check probe/fatbin.py against NVIDIA's cuobjdump, entry by entry, on the compiled modules of real wheels.

    python -m venv /tmp/cuobjdump && /tmp/cuobjdump/bin/pip install nvidia-cuda-cuobjdump
    PYTHONPATH=$PWD python bench/fatbin_vs_cuobjdump.py --cuobjdump /tmp/cuobjdump/.../nvidia/cu13/bin/cuobjdump \
        WHEEL[:MEMBER-GLOB] ... [--json bench/results/fatbin-vs-cuobjdump.json]

For each `.so` (or `.cubin`) in each wheel (or only the members matching the glob), the reader's entries, in file
order, are compared with `cuobjdump --list-elf --list-ptx` (one line per entry, ELF and PTX interleaved in file
order; its file names drop the `f` of family-specific code) and, for files under 200 MB, with the `arch = ...`
lines of `cuobjdump -elf -ptx` (which print `sm_100f`), ELF and PTX entries each in order. Needs no GPU;
cuobjdump 13.5 runs offline.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

from attn_preflight.probe.fatbin import FatbinError, read_entries

_LIST = re.compile(r"^(ELF|PTX) file\s+\d+: .*\.((?:sm|compute)_\d+[af]?)\.(cubin|ptx)$")
_ARCH = re.compile(r"^arch = (sm_\d+[af]?)$")
FULL_DUMP_LIMIT = 40 * 1024 * 1024


def cuobjdump_list(tool: str, path: str) -> list[tuple[str, str]]:
    out = subprocess.run([tool, "--list-elf", "--list-ptx", path], capture_output=True, text=True, check=False)
    rows = []
    for line in out.stdout.splitlines():
        match = _LIST.match(line.strip())
        if match:
            kind = "sass" if match.group(1) == "ELF" else "ptx"
            rows.append((kind, match.group(2).replace("compute_", "sm_")))
    return rows


def cuobjdump_arch_lines(tool: str, path: str) -> dict[str, list[str]]:
    """The `arch = ` line of every ELF and PTX entry of one full dump, each kind in file order."""
    proc = subprocess.Popen([tool, "-elf", "-ptx", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    archs: dict[str, list[str]] = {"elf": [], "ptx": []}
    current = None
    assert proc.stdout is not None
    for line in proc.stdout:  # streamed: a full dump runs to gigabytes of text
        line = line.strip()
        if line.startswith("Fatbin elf code"):
            current = "elf"
        elif line.startswith("Fatbin ptx code"):
            current = "ptx"
        elif current and line.startswith("arch = "):
            match = _ARCH.match(line)
            if match:
                archs[current].append(match.group(1))
            current = None
    proc.wait()
    return archs


def _base(arch: str) -> str:
    return re.sub(r"f$", "", arch.replace("compute_", "sm_"))


def compare(tool: str, path: str) -> dict:
    started = time.perf_counter()
    try:
        entries, how = read_entries(path)
    except FatbinError as err:
        return {"error": f"reader: {err}"}
    reader_s = time.perf_counter() - started
    ours = [(e.kind, e.arch) for e in entries]  # file order, ELF and PTX interleaved as cuobjdump lists them
    if how == "cubin":  # cuobjdump prints no `arch =` for a bare cubin: see bench/results/cubin-archs-vs-names-*.txt
        return {"error": "standalone cubins are not compared here"}
    else:
        theirs = cuobjdump_list(tool, path)
        listed_match = [(k, _base(a)) for k, a in ours] == theirs
        full = None
        if os.path.getsize(path) < FULL_DUMP_LIMIT:
            sass_ours = [a for k, a in ours if k == "sass"]
            ptx_ours = [a.replace("compute_", "sm_") for k, a in ours if k == "ptx"]
            dumped = cuobjdump_arch_lines(tool, path)
            full = sass_ours == dumped["elf"] and ptx_ours == dumped["ptx"]
    row = {
        "entries_reader": len(ours),
        "entries_cuobjdump": len(theirs),
        "list_match": listed_match,
        "suffix_match": full,
        "reader_seconds": round(reader_s, 3),
        "size_mb": round(os.path.getsize(path) / 2**20, 1),
        "sass": sorted({a for k, a in ours if k == "sass"}),
        "ptx": sorted({a for k, a in ours if k == "ptx"}),
    }
    if not listed_match:
        row["first_difference"] = next(
            (
                [i, list(a), list(b)]
                for i, (a, b) in enumerate(zip(ours, theirs))
                if _base(a[1]) != b[1] or a[0] != b[0]
            ),
            None,
        )
    return row


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cuobjdump", required=True)
    parser.add_argument("--json")
    parser.add_argument("wheels", nargs="+", help="WHEEL or WHEEL:GLOB (members to compare)")
    args = parser.parse_args(argv)
    results: dict = {}
    for spec in args.wheels:
        wheel, _, pattern = spec.partition(":")
        with zipfile.ZipFile(wheel) as archive, tempfile.TemporaryDirectory() as tmp:
            members = [
                m
                for m in archive.namelist()
                if (m.endswith(".so") or ".so." in m) and (not pattern or fnmatch.fnmatch(m, pattern))
            ]
            for member in members:
                path = archive.extract(member, tmp)
                row = compare(args.cuobjdump, path)
                os.remove(path)
                results[f"{os.path.basename(wheel)}!{member}"] = row
                status = "ok" if row.get("list_match") and row.get("suffix_match") is not False else "DIFFER"
                print(f"{status:6} {row.get('entries_reader', '-'):>5} entries  {os.path.basename(wheel)}!{member}")
    summary = {
        "modules": len(results),
        "entries": sum(r.get("entries_reader", 0) for r in results.values()),
        "all_listed_match": all(r.get("list_match") for r in results.values()),
        "all_suffixes_match": all(r.get("suffix_match") is not False for r in results.values()),
        "cuobjdump": subprocess.run([args.cuobjdump, "--version"], capture_output=True, text=True)
        .stdout.strip()
        .splitlines()[-1:],
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"summary": summary, "modules": results}, handle, indent=1, sort_keys=True)
            handle.write("\n")
    return 0 if summary["all_listed_match"] and summary["all_suffixes_match"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
