"""Generate rules/kernels/binary_tables/<library>.json: per release, per compiled module, the SM archs it ships.

    PYTHONPATH=$PWD python bench/kernel_tables.py sgl-kernel 0.4.11          # one new release
    PYTHONPATH=$PWD python bench/kernel_tables.py sgl-kernel --pinned         # the releases the engines pin
    PYTHONPATH=$PWD python bench/kernel_tables.py vllm --pinned --newest 1    # ... plus the newest on the index
    PYTHONPATH=$PWD python bench/kernel_tables.py --pins-of sglang==0.5.24   # what an engine release pins

Each release's x86_64 wheel is fetched with `pip download --no-deps` into ~/.cache/attn-preflight-wheels/ (a
wheel already there is reused and kept; one fetched here is deleted after reading unless --keep), every compiled
module in it (`*.so`, `*.cubin`) is read with attn_preflight/probe/fatbin.py (headers only; checked against cuobjdump
by bench/fatbin_vs_cuobjdump.py), and the table is rewritten after each release, so an interrupted run keeps what
it read. `--pins-of ENGINE==V` reads the engine wheel's METADATA (`pip install --dry-run --report`, metadata
only) and prints the kernel libraries it requires.

The releases the engines pin (PINS) were read from the engines' METADATA Requires-Dist: sglang's sgl-kernel /
sglang-kernel pins are those rules/engines/sglang/rules/fa3.py (FA3_KERNEL_WALK) lists; vLLM bundles its own
kernels in its wheel (vllm/_C, vllm_flash_attn, FlashMLA, DeepGEMM copies), so every vLLM release the rules know is
its own pin; vLLM's flashinfer-cubin follows its flashinfer-python pin (rules/engines/vllm/flashinfer.py PINS,
from 0.6.x also a Requires-Dist of its own).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any

from packaging.version import Version

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from attn_preflight.probe.fatbin import FatbinError, ModuleArchs, module_key, read_entries, summarise  # noqa: E402

TABLES = os.path.join(REPO, "rules", "kernels", "binary_tables")
CACHE = os.path.expanduser("~/.cache/attn-preflight-wheels")
PLATFORM_ARGS = [
    "--only-binary=:all:",
    "--python-version",
    "3.12",
    "--implementation",
    "cp",
    *("--platform", "manylinux_2_35_x86_64"),  # vllm 0.12.0-0.20.2 are manylinux_2_31
    *("--platform", "manylinux_2_34_x86_64"),
    *("--platform", "manylinux_2_31_x86_64"),
    *("--platform", "manylinux_2_28_x86_64"),
    *("--platform", "manylinux_2_27_x86_64"),
    *("--platform", "manylinux_2_24_x86_64"),
    *("--platform", "manylinux_2_17_x86_64"),
    *("--platform", "manylinux2014_x86_64"),
    *("--platform", "manylinux1_x86_64"),
]
_SGL_0_3 = "0.3.5 0.3.7 0.3.9.post2 0.3.14.post1 0.3.15 0.3.16.post3 0.3.16.post4 0.3.16.post5 0.3.17.post1 0.3.18.post2 0.3.19 0.3.20 0.3.21"
_SGL_0_4 = "0.4.1 0.4.2 0.4.2.post2 0.4.3 0.4.4 0.4.5 0.4.6.post1 0.4.7 0.4.9 0.4.10"


def _vllm_releases() -> list[str]:
    names = os.listdir(os.path.join(REPO, "rules", "engines", "vllm", "releases"))
    return sorted((n[:-5] for n in names if re.match(r"^\d[\d.]*\.json$", n)), key=Version)


LIBRARIES: dict[str, dict[str, Any]] = {
    "sgl-kernel": {
        "distributions": ["sgl-kernel", "sglang-kernel"],
        "dist_for": lambda v: "sglang-kernel" if Version(v) >= Version("0.4.0") else "sgl-kernel",
        "pinned": lambda: (_SGL_0_3 + " " + _SGL_0_4).split(),
        "pins_source": "sglang wheels' METADATA Requires-Dist sgl-kernel / sglang-kernel (0.5.0rc2-0.5.23), as "
        "rules/engines/sglang/rules/fa3.py FA3_KERNEL_WALK lists them",
        "installed_as": "sgl_kernel",
    },
    "vllm": {
        "distributions": ["vllm"],
        "dist_for": lambda v: "vllm",
        "pinned": _vllm_releases,
        "pins_source": "vLLM ships its kernels in its own wheel: every release in rules/engines/vllm/releases/",
        "installed_as": "vllm",
    },
    "flashinfer-cubin": {
        "distributions": ["flashinfer-cubin"],
        "dist_for": lambda v: "flashinfer-cubin",
        # vLLM's flashinfer-python pins (rules/engines/vllm/flashinfer.py) that have a flashinfer-cubin (>= 0.4.0)
        "pinned": lambda: "0.5.2 0.5.3 0.6.1 0.6.3 0.6.4 0.6.6 0.6.8.post1 0.6.11.post2 0.6.12 0.6.13".split(),
        "pins_source": "vllm wheels' METADATA Requires-Dist flashinfer-python (rules/engines/vllm/flashinfer.py "
        "PINS) and flashinfer-cubin; flashinfer-python checks the cubin package's version at import",
        "installed_as": "flashinfer_cubin",
        # thousands of standalone cubins, grouped by kernel family (attn_preflight/probe/fatbin.py module_key)
        "group": module_key,
    },
}


def pins_of(requirement: str) -> list[str]:
    """The Requires-Dist lines of an engine release that name a kernel library (metadata only)."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed", "--quiet",
         "--report", "-", requirement],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    requires = report["install"][0]["metadata"].get("requires_dist", [])
    keep = ("sgl-kernel", "sglang-kernel", "flashinfer", "flash-attn", "quack", "triton", "deep-gemm", "fla", "torch")
    return [r for r in requires if r.lower().replace("_", "-").startswith(keep)]


def newest(distribution: str, count: int) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", distribution], capture_output=True, text=True, check=False
    )
    match = re.search(r"Available versions: (.*)", out.stdout)
    versions = [v.strip() for v in match.group(1).split(",")] if match else []
    finals = [v for v in versions if not Version(v).is_prerelease]
    return finals[:count]


def fetch(distribution: str, version: str) -> tuple[str, bool]:
    """The wheel's path, and whether it was fetched now (and may be deleted)."""
    stem = distribution.replace("-", "_")
    pattern = os.path.join(CACHE, f"{stem}-{version}-*.whl")
    existing = [p for p in glob.glob(pattern) if "x86_64" in p or p.endswith("-any.whl")]
    if existing:
        return sorted(existing)[0], False
    os.makedirs(CACHE, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *PLATFORM_ARGS, "-d", CACHE,
         f"{distribution}=={version}"],
        check=True, capture_output=True,
    )  # fmt: skip
    fetched = [p for p in glob.glob(pattern) if "x86_64" in p or p.endswith("-any.whl")]
    if not fetched:
        raise RuntimeError(f"pip downloaded no x86_64 wheel of {distribution}=={version}")
    return sorted(fetched)[0], True


def _compiled(member: str) -> bool:
    name = os.path.basename(member)
    return name.endswith((".so", ".cubin")) or ".so." in name


def read_wheel(path: str, group=None) -> dict[str, dict[str, Any]]:
    """module -> {sass, ptx, ptx_isa[, files]} for every compiled module of a wheel."""
    modules: dict[str, dict[str, Any]] = {}
    grouped: dict[str, list] = {}
    with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        for info in archive.infolist():
            if not _compiled(info.filename):
                continue
            if info.filename.endswith(".cubin"):  # the arch is in the first 64 bytes: no extraction
                with archive.open(info) as handle, open(os.path.join(tmp, "h.cubin"), "wb") as out:
                    out.write(handle.read(64))
                target = os.path.join(tmp, "h.cubin")
            else:
                target = archive.extract(info, tmp)
            try:
                entries, how = read_entries(target)
            except FatbinError as err:
                if info.filename.endswith(".cubin"):
                    print(f"  skip {info.filename}: {err}", file=sys.stderr)
                entries, how = [], "none"
            finally:
                os.remove(target)
            key = group(info.filename) if group else info.filename
            if group:
                grouped.setdefault(key, []).extend(entries)
            elif entries:
                modules[key] = _row(summarise(entries, how))
        for key, entries in grouped.items():
            if entries:
                row = _row(summarise(entries, "cubin"))
                row["files"] = sum(1 for e in entries)
                modules[key] = row
    return dict(sorted(modules.items()))


def _row(archs: ModuleArchs) -> dict[str, Any]:
    row: dict[str, Any] = {"sass": archs.sass}
    if archs.ptx:
        row["ptx"] = archs.ptx
        row["ptx_isa"] = archs.ptx_isa
    if archs.relocatable_only:
        row["relocatable_only"] = archs.relocatable_only
    return row


def compact(value: Any) -> str:
    """JSON with one module per line: lists of arch names and module rows are not spread over lines."""
    text = json.dumps(value, indent=1)
    text = re.sub(
        r"\[\s*((?:\"[^\"]*\",?\s*)*)\]", lambda m: "[" + ", ".join(re.findall(r'"[^"]*"', m.group(1))) + "]", text
    )
    return re.sub(r"\{\n\s*(\"sass\"[^{}]*?)\n\s*\}", lambda m: "{" + re.sub(r"\n\s*", " ", m.group(1)) + "}", text)


def load(library: str) -> dict[str, Any]:
    path = os.path.join(TABLES, f"{library}.json")
    if os.path.exists(path):
        with open(path) as handle:
            return json.load(handle)
    spec = LIBRARIES[library]
    return {
        "library": library,
        "distributions": spec["distributions"],
        "installed_as": spec["installed_as"],
        "source": "each release's x86_64 wheel on PyPI, its compiled modules' fatbin headers (bench/kernel_tables.py)",
        "pins_source": spec["pins_source"],
        "releases": {},
    }


def save(library: str, table: dict[str, Any]) -> None:
    table["releases"] = dict(sorted(table["releases"].items(), key=lambda kv: Version(kv[0])))
    with open(os.path.join(TABLES, f"{library}.json"), "w") as handle:
        handle.write(compact(table) + "\n")
    index_path = os.path.join(TABLES, "index.json")
    with open(index_path) as handle:
        index = json.load(handle)
    index["libraries"][library] = {
        "distributions": table["distributions"],
        "installed_as": table["installed_as"],
        "releases": len(table["releases"]),
    }
    index["libraries"] = dict(sorted(index["libraries"].items()))
    with open(index_path, "w") as handle:
        json.dump(index, handle, indent=1)
        handle.write("\n")


def run(library: str, versions: list[str], keep: bool, redo: bool) -> int:
    spec = LIBRARIES[library]
    table = load(library)
    failures = 0
    for version in versions:
        if version in table["releases"] and not redo:
            print(f"{library} {version}: in the table already")
            continue
        started = time.perf_counter()
        distribution = spec["dist_for"](version)
        try:
            wheel, fetched = fetch(distribution, version)
            modules = read_wheel(wheel, spec.get("group"))
        except (subprocess.CalledProcessError, RuntimeError, zipfile.BadZipFile, OSError) as err:
            print(f"{library} {version}: FAILED {type(err).__name__}: {err}", file=sys.stderr)
            failures += 1
            continue
        if fetched and not keep:
            os.remove(wheel)
        table["releases"][version] = {"x86_64": {"wheel": os.path.basename(wheel), "modules": modules}}
        save(library, table)
        print(
            f"{library} {version}: {len(modules)} modules in {time.perf_counter() - started:.0f} s ({os.path.basename(wheel)})"
        )
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library", nargs="?", choices=sorted(LIBRARIES))
    parser.add_argument("versions", nargs="*")
    parser.add_argument("--pinned", action="store_true", help="the releases the engines pin (PINS)")
    parser.add_argument("--newest", type=int, default=0, help="also the N newest final releases on the index")
    parser.add_argument("--newest-first", action="store_true", help="read the newest releases first")
    parser.add_argument("--keep", action="store_true", help="keep wheels fetched here in the cache")
    parser.add_argument("--redo", action="store_true", help="read releases already in the table again")
    parser.add_argument("--pins-of", metavar="ENGINE==V", help="print an engine release's kernel requirements")
    args = parser.parse_args(argv)
    if args.pins_of:
        print("\n".join(pins_of(args.pins_of)))
        return 0
    if not args.library:
        parser.error("name a library")
    spec = LIBRARIES[args.library]
    versions = list(args.versions)
    if args.newest:
        versions += [v for v in newest(spec["dist_for"]("9999"), args.newest) if v not in versions]
    if args.pinned:
        versions += [v for v in spec["pinned"]() if v not in versions]
    versions = sorted(set(versions), key=Version, reverse=args.newest_first)
    return run(args.library, versions, args.keep, args.redo)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
