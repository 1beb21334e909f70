"""Which GPU architectures each installed kernel library's compiled modules ship, read before any import.

The files come from each installed distribution's RECORD (what pip installed; a source install without one is
walked from its package directory), and each `.so` / `.cubin` is read with probe/fatbin.py: ELF and fatbin
headers only. Results are cached by path, size and mtime (a group of standalone cubins by its distribution's
RECORD), so a second probe only stats the files. What the archs mean for this GPU is judged in rules/
(attn_preflight.rules.kernels.binaries).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Optional

from attn_preflight.probe.environ import cache_home
from attn_preflight.probe.facts import CompiledModule, LibraryFacts
from attn_preflight.probe.jsonfile import JsonFileError, read_json
from attn_preflight.probe.libraries import SHIPS_GPU_CODE

# probe/fatbin.py is imported only on a cache miss: a probe whose files are all cached only stats them.
CACHE_FILE = "binaries.json"
CACHE_VERSION = 1
MAX_FILES = 50_000  # a RECORD listing more compiled files than this is not read (never seen: flashinfer-cubin ~16k)
MAX_RECORD_BYTES = 64 << 20  # a RECORD larger than this is not read (flashinfer-cubin's: ~3 MB)


class ScanLimit(Exception):
    """A distribution past what is read (MAX_FILES compiled files, a MAX_RECORD_BYTES RECORD): its modules are
    not read, and the library says why (a note; its binaries stay unknown)."""


def _compiled(path: str) -> bool:
    name = os.path.basename(path)
    return name.endswith((".so", ".cubin")) or ".so." in name


def record_files(entry: str, dist_dir: str) -> Optional[list[str]]:
    """The compiled files a distribution installed, as paths relative to its sys.path entry; None without a
    RECORD (an egg-info or a source install)."""
    path = os.path.join(entry, dist_dir, "RECORD")
    found: list[str] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > MAX_RECORD_BYTES:
                raise ScanLimit(f"{dist_dir}/RECORD is {size:,} bytes, more than {MAX_RECORD_BYTES:,}: not read")
            for line in handle:
                row = line.split(",", 1)[0]
                if _compiled(row) and not row.startswith(("../", "/")):
                    found.append(row)
                    if len(found) > MAX_FILES:
                        raise ScanLimit(f"{dist_dir}/RECORD lists more than {MAX_FILES:,} compiled files: not read")
    except OSError:
        return None
    return found


def walk_files(root: str, base: str) -> list[str]:
    """Compiled files under a package directory, relative to `base` (the sys.path entry)."""
    found: list[str] = []
    for folder, _, names in os.walk(root):
        found.extend(os.path.relpath(os.path.join(folder, n), base) for n in names if _compiled(n))
        if len(found) > MAX_FILES:
            break
    return found


class BinaryCache:
    """{absolute path: [size, mtime_ns, row]} for `.so` files; {"dist:" RECORD path: [size, mtime_ns, {rows, so}]}
    for a whole distribution (its rows, and the stat of each `.so` it read). Any I/O error means no cache."""

    def __init__(self, path: Optional[str]):
        self.path = path
        self.entries: dict = {}
        self.dirty = False
        if path:
            with contextlib.suppress(JsonFileError):
                data = read_json(path)
                if isinstance(data, dict) and data.get("version") == CACHE_VERSION:
                    self.entries = data.get("entries") or {}

    @classmethod
    def open(cls, use_cache: bool = True) -> BinaryCache:
        base = cache_home() if use_cache else None
        return cls(os.path.join(base, "attn-preflight", CACHE_FILE) if base else None)

    def get(self, key: str, stat: os.stat_result):
        hit = self.entries.get(key)
        if isinstance(hit, list) and len(hit) == 3 and hit[0] == stat.st_size and hit[1] == stat.st_mtime_ns:
            return hit[2]
        return None

    def put(self, key: str, stat: os.stat_result, value) -> None:
        self.entries[key] = [stat.st_size, stat.st_mtime_ns, value]
        self.dirty = True

    def save(self) -> None:
        if not (self.path and self.dirty):
            return
        import tempfile

        tmp = None
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".binaries-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": CACHE_VERSION, "entries": self.entries}, handle)
            os.replace(tmp, self.path)
            tmp = None
        except OSError:
            pass
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.remove(tmp)


def _row(path: str) -> dict:
    from attn_preflight.probe.fatbin import FatbinError, read_entries, summarise

    try:
        entries, how = read_entries(path)
    except (FatbinError, OSError) as err:
        return {"error": str(err)}
    archs = summarise(entries, how)
    row: dict = {"sass": archs.sass, "ptx": archs.ptx}
    if archs.ptx_isa:
        row["ptx_isa"] = archs.ptx_isa
    return row


def _module(row: dict) -> CompiledModule:
    return CompiledModule(
        sass=list(row.get("sass", [])),
        ptx=list(row.get("ptx", [])),
        ptx_isa=row.get("ptx_isa"),
        files=row.get("files"),
        error=row.get("error"),
    )


def _read_group(base: str, files: list[str]) -> dict[str, dict]:
    """Standalone cubins grouped by module_key: the union of their archs, and how many files."""
    from attn_preflight.probe.fatbin import module_key

    groups: dict[str, dict] = {}
    for rel in files:
        key = module_key(rel)
        row = _row(os.path.join(base, rel))
        group = groups.setdefault(key, {"sass": [], "ptx": [], "files": 0})
        group["files"] += 1
        for kind in ("sass", "ptx"):
            group[kind] = sorted(set(group[kind]) | set(row.get(kind, [])))
    return groups


def distribution_binaries(entry: str, dist_dir: str, package_dir: Optional[str], cache: BinaryCache) -> dict:
    """module key -> row for one installed distribution. A distribution read before is served by the stat of its
    RECORD and of each of its `.so` files (a RECORD of 16,000 cubins is not parsed again)."""
    base = entry or "."
    record = os.path.abspath(os.path.join(base, dist_dir, "RECORD"))
    try:
        record_stat: Optional[os.stat_result] = os.stat(record)
    except OSError:
        record_stat = None
    if record_stat is not None:
        hit = cache.get("dist:" + record, record_stat)
        if isinstance(hit, dict) and all(_same_stat(path, size, mtime) for path, size, mtime in hit.get("so", [])):
            return dict(hit.get("rows", {}))
    from attn_preflight.probe.fatbin import module_key

    files = record_files(base, dist_dir)
    if files is None:
        files = walk_files(package_dir, base) if package_dir and os.path.isdir(package_dir) else []
    if len(files) > MAX_FILES:
        raise ScanLimit(f"more than {MAX_FILES:,} compiled files under {package_dir}: not read")
    rows: dict[str, dict] = {}
    cubins = [f for f in files if f.endswith(".cubin")]
    if cubins:
        rows.update(_read_group(base, cubins))
    so_stats = []
    for rel in files:
        if rel.endswith(".cubin"):
            continue
        path = os.path.abspath(os.path.join(base, rel))
        try:
            stat = os.stat(path)
        except OSError:
            continue
        so_stats.append([path, stat.st_size, stat.st_mtime_ns])
        row = cache.get(path, stat)
        if row is None:
            row = _row(path)
            cache.put(path, stat, row)
        if row.get("sass") or row.get("ptx") or row.get("error"):  # host-only .so files are left out
            rows[module_key(rel)] = row
    if record_stat is not None:
        cache.put("dist:" + record, record_stat, {"rows": rows, "so": so_stats})
    return rows


def _same_stat(path: str, size: int, mtime: int) -> bool:
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return stat.st_size == size and stat.st_mtime_ns == mtime


def library_binaries(
    lib: LibraryFacts, found: dict, canonical, cache: BinaryCache
) -> Optional[dict[str, CompiledModule]]:
    """The compiled modules of every installed distribution of `lib`; None when it has none to read.
    `found`: DistributionIndex.found (name -> [(sys.path entry, metadata dir)])."""
    modules: dict[str, dict] = {}
    package_dir = None
    if lib.module_path:
        package_dir = lib.module_path if os.path.isdir(lib.module_path) else os.path.dirname(lib.module_path)
    for name in lib.distributions:
        places = found.get(canonical(name))
        if not places:
            continue
        entry, dist_dir = places[0]
        modules.update(distribution_binaries(entry, dist_dir, package_dir, cache))
    if not modules:
        return None
    return {key: _module(row) for key, row in sorted(modules.items())}


def collect_binaries(libraries: list[LibraryFacts], index, use_cache: bool = True) -> None:
    """Fills `binaries` of each installed library in SHIPS_GPU_CODE (index: probe.libraries.DistributionIndex)."""
    from attn_preflight.probe.libraries import canonical

    cache = BinaryCache.open(use_cache)
    for lib in libraries:
        if lib.key in SHIPS_GPU_CODE and lib.installed:
            try:
                lib.binaries = library_binaries(lib, index.found, canonical, cache)
            except (OSError, ScanLimit) as err:
                lib.notes.append(f"compiled modules not read: {err}")
    cache.save()
