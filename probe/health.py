"""Import health: each library imported in its own subprocess, all in parallel, each with a timeout.

A broken kernel library fails in ways that must not take the report down with it: ImportError, a hang,
a segfault. So the import runs in `sys.executable -I -c CHILD` with this environment's sys.path (what a user's
`python -c "import X"` finds, less the working directory: probe/children.py), in a fresh empty directory and
a session of its own (no terminal to disturb; the whole process group is killed on timeout), and writes one
JSON result file. Results are cached, keyed by everything installed,
because the imports cost seconds (flash_attn.cute 10.3 s, torch 3.1 s on the H200).

A failure is recorded as facts (the error chain; for "No module named X", what is installed that would
provide X); what it means is judged when the report is rendered (rules/knowledge/import_diagnosis.py).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Optional

from attn_preflight.probe import __version__
from attn_preflight.probe.children import (
    DIE_WITH_PARENT,
    OutputTail,
    environment_path,
    kill_group,
    python_argv,
    scratch_directory,
    signal_name,
    spawn,
    user_site_dirs,
)
from attn_preflight.probe.environ import cache_home, is_relevant, redact, redact_text
from attn_preflight.probe.facts import (
    HEALTH_CRASHED,
    HEALTH_ERROR,
    HEALTH_OK,
    HEALTH_TIMEOUT,
    FactsError,
    ImportHealth,
    Schema,
)
from attn_preflight.probe.jsonfile import JsonFileError, read_json

MAX_ERROR_CHARS = 2000
POLL_S = 0.01
ABORT_GRACE_S = 1.0  # after SIGABRT at the timeout: time for faulthandler's dump before the group is killed

# Runs in the child: imports one module, reads extra facts inside it, writes a JSON result file, and
# leaves with os._exit so that no atexit hook or interpreter teardown of the library can hang or crash
# after the answer is written. Standard library only.
CHILD = (
    r"""
import faulthandler, importlib, json, os, site, sys, time
faulthandler.enable()
request = json.loads(sys.argv[1])
"""
    + DIE_WITH_PARENT
    + r"""
sys.path[:] = request["path"]
for directory in request["site_dirs"]:
    site.addsitedir(directory)  # its .pth files, which -I skipped
faulthandler.dump_traceback_later(request["dump_after"], exit=False)
_die_with_parent(request["parent"])  # after the timer: its ctypes import must not delay the dump

def chain(err):
    texts = []
    while err is not None and len(texts) < 6:
        texts.append((type(err).__name__ + ": " + str(err)).strip()[:%(limit)d])
        err = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    return texts

def module_version(name):
    parts = name.split(".")
    for depth in range(len(parts), 0, -1):
        value = getattr(sys.modules.get(".".join(parts[:depth])), "__version__", None)
        if value is not None:
            return str(value)
    return None

result = {"module": request["module"]}
start = time.perf_counter()
try:
    mod = importlib.import_module(request["module"])
except BaseException as err:
    result.update(ok=False, errors=chain(err), sys_path=sys.path)
else:
    details = {"module_version": module_version(request["module"]),
               "origin": getattr(mod, "__file__", None) or next(iter(getattr(mod, "__path__", None) or []), None)}
    for name, expression in request["details"].items():
        try:
            details[name] = eval(expression, {"mod": mod, "sys": sys})
        except BaseException as err:
            details[name] = {"error": chain(err)[0]}
    components = {}
    for name, module in request["components"].items():
        try:
            importlib.import_module(module)
            components[name] = {"module": module, "status": "ok"}
        except BaseException as err:
            errors = chain(err)
            components[name] = {"module": module, "status": "error", "error": errors[0], "causes": errors[1:]}
    if components:
        details["components"] = components
    result.update(ok=True, details=details)
result["import_seconds"] = round(time.perf_counter() - start, 3)
with open(sys.argv[2], "w") as handle:
    json.dump(result, handle, default=str)
os._exit(0)
"""
).replace("%(limit)d", str(MAX_ERROR_CHARS))


@dataclass
class ImportRequest:
    key: str  # the library's catalogue key
    module: str
    details: dict = field(default_factory=dict)
    components: dict = field(default_factory=dict)


def check_imports(
    requests: list[ImportRequest],
    timeout: float = 60.0,
    use_cache: bool = True,
    max_parallel: Optional[int] = None,
    cancel: Optional[threading.Event] = None,
) -> dict[str, ImportHealth]:
    """Import health of each request, by catalogue key. Never raises for a library's failure. Setting
    `cancel` kills the running checks (their children run in their own sessions: Ctrl-C never reaches them)."""
    cache = ImportCache.open() if use_cache else None
    results: dict[str, ImportHealth] = {}
    to_run = []
    for request in requests:
        hit = cache.get(request) if cache else None
        if hit is not None:
            results[request.key] = hit
        else:
            to_run.append(request)
    if to_run:
        results.update(
            _run_all(to_run, timeout, max_parallel or max(8, os.cpu_count() or 1), cancel or threading.Event())
        )
        if cache:
            cache.put([(r, results[r.key]) for r in to_run if r.key in results])
    return results


@dataclass
class _Running:
    request: ImportRequest
    process: subprocess.Popen
    started: float
    result_path: str
    output: OutputTail  # the child's stdout and stderr, its last OUTPUT_CAP bytes
    aborted: Optional[float] = None  # when it was sent SIGABRT at its timeout


def _run_all(
    requests: list[ImportRequest], timeout: float, max_parallel: int, cancel: threading.Event
) -> dict[str, ImportHealth]:
    results: dict[str, ImportHealth] = {}
    waiting = list(requests)
    running: list[_Running] = []
    with scratch_directory() as workdir:
        try:
            while (waiting or running) and not cancel.is_set():
                while waiting and len(running) < max_parallel:
                    running.append(_start(waiting.pop(0), timeout, workdir))
                OutputTail.wait_readable([job.output for job in running], POLL_S)
                for job in list(running):
                    job.output.read()  # never let a child block on a full pipe, keep only its tail
                    now = time.monotonic()
                    elapsed = now - job.started
                    if job.process.poll() is None and elapsed < timeout:
                        continue
                    if job.process.returncode is None and job.aborted is None:
                        # faulthandler (enabled first thing in the child) writes where the import hangs on
                        # SIGABRT, even with the GIL held; its timer's dump may not have come yet on a busy machine
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(job.process.pid, signal.SIGABRT)
                        job.aborted = now
                    if job.aborted is not None and job.process.poll() is None and now - job.aborted < ABORT_GRACE_S:
                        continue
                    timed_out = job.aborted is not None
                    elapsed = min(elapsed, timeout) if timed_out else elapsed
                    kill_group(job.process)
                    running.remove(job)
                    results[job.request.key] = _finish(job, timed_out, timeout, elapsed)
        finally:
            for job in running:  # cancelled or interrupted: leave nothing behind
                kill_group(job.process)
                job.output.close()
    return results


def _start(request: ImportRequest, timeout: float, workdir: str) -> _Running:
    stem = os.path.join(workdir, request.key)
    payload = json.dumps(
        {
            "module": request.module,
            "path": environment_path(),
            "site_dirs": user_site_dirs(),
            "details": request.details,
            "components": request.components,
            # a Python stack of where a hanging import is, written just before it is killed
            "dump_after": max(timeout * 0.9, timeout - 1.0),
            "parent": os.getpid(),  # the child dies with us (DIE_WITH_PARENT), even when we are SIGKILLed
        }
    )
    env = {**os.environ, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}  # torch.cuda.is_available() through NVML
    output = OutputTail()
    cwd = os.path.join(workdir, "cwd")  # empty: whatever a library writes or reads relative lands nowhere
    os.makedirs(cwd, exist_ok=True)
    # -u: what a library printed before crashing reaches the output
    argv = python_argv(CHILD, payload, stem + ".json", options=("-u",))
    try:
        process = spawn(argv, cwd, stdout=output.write_end, stderr=subprocess.STDOUT, env=env)
    except BaseException:
        output.close()
        raise
    output.started()
    return _Running(request, process, time.monotonic(), stem + ".json", output)


def _finish(job: _Running, timed_out: bool, timeout: float, elapsed: float) -> ImportHealth:
    output = job.output.text()
    job.output.close()
    health = ImportHealth(module=job.request.module, seconds=round(elapsed, 3))
    result = None if timed_out else _read_result(job.result_path)
    if timed_out:
        health.status = HEALTH_TIMEOUT
        health.error = f"the import did not finish within {timeout:g} s and was killed"
        health.causes = _innermost_frames(output, fatal=False)  # "Aborted" is our SIGABRT, not the library's
    elif result is not None and result.get("ok"):
        health.status = HEALTH_OK
        health.details = result.get("details") or {}
        for part in (health.details.get("components") or {}).values():
            if isinstance(part, dict) and part.get("status") != HEALTH_OK:
                texts = [part.get("error") or ""] + list(part.get("causes") or [])
                missing = missing_module_facts(texts, [])
                if missing:
                    part["missing_module"] = missing
    elif result is not None:
        errors = result.get("errors") or ["unknown error"]
        health.status = HEALTH_ERROR
        health.error, health.causes = errors[0], errors[1:]
        missing = missing_module_facts(errors, result.get("sys_path") or [])
        health.details = {"missing_module": missing} if missing else {}
    elif job.process.returncode < 0:
        health.status = HEALTH_CRASHED
        health.error = f"killed by {signal_name(-job.process.returncode)}"
        health.causes = _innermost_frames(output)
    else:
        health.status = HEALTH_ERROR
        health.error = f"{UNREPORTED}{job.process.returncode} before reporting"
        health.causes = [line for line in output.strip().splitlines()[-3:] if line.strip()]
    return health


def _innermost_frames(output: str, fatal: bool = True) -> list[str]:
    """The innermost Python frame of each faulthandler dump ('File "...", line N in f'), most recent first."""
    frames = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if "most recent call first" in line and i + 1 < len(lines) and lines[i + 1].strip().startswith("File"):
            frames.append(lines[i + 1].strip())
    errors = [line.strip() for line in lines if line.startswith("Fatal Python error")] if fatal else []
    return errors[:1] + frames[:1]


def _read_result(path: str) -> Optional[dict]:
    try:
        data = read_json(path)
    except JsonFileError:
        return None
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------------------------------------------- cache

CACHEABLE = (HEALTH_OK, HEALTH_ERROR, HEALTH_CRASHED)  # a timeout may be a slow disk: always re-checked
# An error the import never reported (the child died without a result: a full disk, a timer it could not set)
# may be ours, not the library's: never cached, so a false error is not kept.
UNREPORTED = "the import check exited with status "
KEEP_CACHE_FILES = 16
HEALTH_SCHEMA = Schema(ImportHealth)  # a cache entry is read as typed as a saved report


def cache_dir() -> Optional[str]:
    base = cache_home()
    return os.path.join(base, "attn-preflight") if base else None


def environment_fingerprint() -> str:
    """Changes whenever anything an import could depend on changes: interpreter, sys.path entries and every
    distribution (name, version and install time) on them, .pth files, relevant variables, the driver."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode())

    add(__version__, CHILD, sys.executable, sys.version, sys.flags.no_site, user_site_dirs())
    for name in sorted(os.environ):
        if is_relevant(name) or name in ("PATH", "VIRTUAL_ENV", "CONDA_PREFIX"):
            add(name, redact(name, os.environ[name]))
    for entry in environment_path():  # the working directory is not on it: each directory shares one cache
        add(entry, _mtime(entry))
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info", ".egg-link", ".pth", ".egg")):
                add(name, _mtime(os.path.join(entry, name)))
    add(_read_first_line("/sys/module/nvidia/version"))  # a driver upgrade changes what CUDA libraries load
    return digest.hexdigest()


def _mtime(path: str) -> Optional[int]:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _read_first_line(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().strip()
    except OSError:
        return None


class ImportCache:
    """One file per installed-environment fingerprint: {request -> ImportHealth}. Any I/O error just
    means no cache."""

    def __init__(self, path: Optional[str], entries: dict):
        self.path = path  # None: no cache directory (attn_preflight.probe.environ.cache_home), nothing is kept
        self.entries = entries

    @classmethod
    def open(cls) -> ImportCache:
        directory = cache_dir()
        if directory is None:
            return cls(None, {})
        path = os.path.join(directory, f"imports-{environment_fingerprint()[:32]}.json")
        try:
            entries = read_json(path)
        except JsonFileError:
            entries = {}
        if not isinstance(entries, dict):
            entries = {}
        return cls(path, entries)

    @staticmethod
    def _key(request: ImportRequest) -> str:
        """The request and the files its import loads first (module_files): a library replaced in place (its
        dist-info untouched) is checked again."""
        return json.dumps({**asdict(request), "files": module_files(request.module)}, sort_keys=True)

    def get(self, request: ImportRequest) -> Optional[ImportHealth]:
        data = self.entries.get(self._key(request))
        try:
            health = HEALTH_SCHEMA.read(data, "cached import health")
        except FactsError:  # written by another version of this model, or by hand: checked again
            return None
        if health.status not in CACHEABLE:
            return None
        health.cached = True
        return health

    def put(self, results: list[tuple[ImportRequest, ImportHealth]]) -> None:
        if self.path is None:
            return
        for request, health in results:
            if health.status in CACHEABLE and not (health.error or "").startswith(UNREPORTED):
                if not resource_limited(health):
                    key = self._key(request)
                    request_only = _request_part(key)
                    for stale in [k for k in self.entries if _request_part(k) == request_only]:
                        del self.entries[stale]  # the same request, other files: replaced in place
                    self.entries[key] = asdict(health)
        tmp = None
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".imports-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(redact_text(json.dumps(self.entries)))  # a library's error may quote a token
            os.replace(tmp, self.path)
            tmp = None
            _prune(os.path.dirname(self.path))
        except OSError:
            pass
        finally:
            if tmp is not None:  # not moved into place (the cache path is a directory, the disk is full)
                with contextlib.suppress(OSError):
                    os.remove(tmp)


def _request_part(key: str) -> Optional[str]:
    try:
        data = json.loads(key)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    data.pop("files", None)
    return json.dumps(data, sort_keys=True)


# What an import fails with when the machine, not the library, is short at that moment (memory, processes, file
# descriptors, disk, a CPU or file-size limit): never the library's cached state, so the next run checks again.
_RESOURCE = re.compile(
    r"MemoryError|Cannot allocate memory|ENOMEM|out of memory|Resource temporarily unavailable|EAGAIN|"
    r"Too many open files|EMFILE|ENFILE|No space left on device|ENOSPC|Disk quota exceeded|RLIMIT|"
    r"can't start new thread|File too large",
    re.IGNORECASE,
)
# killed by SIGKILL (the OOM killer), SIGXCPU (RLIMIT_CPU), SIGXFSZ (RLIMIT_FSIZE)
_RESOURCE_SIGNALS = ("SIGKILL", "SIGXCPU", "SIGXFSZ")


def resource_limited(health: ImportHealth) -> bool:
    """Whether a failed import check failed for want of a resource (above), not because of the library."""
    if health.status == HEALTH_OK:
        return False
    if health.status == HEALTH_CRASHED and any(name in (health.error or "") for name in _RESOURCE_SIGNALS):
        return True
    return any(_RESOURCE.search(text or "") for text in [health.error, *(health.causes or [])])


_EXTENSIONS = (".so", ".pyd", ".dylib")
_FILES_DEPTH = 3  # torch/lib/*.so, flash_attn/cute/*.so: where extension modules live


def module_files(module: str) -> list:
    """[name, size, mtime_ns] of what an import of `module` loads first and what can change without a dist-info
    change: on each sys.path entry of this environment, the top-level module (`top.py`, `top/__init__.py`) and
    every extension module in the package (to depth 3), and top-level extension modules named after it
    (flash_attn_2_cuda*.so beside flash_attn). Only directory listings and stats: no import."""
    top = module.split(".")[0]
    found: list = []
    for entry in environment_path():
        try:
            names = sorted(n for n in os.listdir(entry) if n == top or n.startswith(top))
        except OSError:
            continue
        for name in names:
            path = os.path.join(entry, name)
            if name == top and os.path.isdir(path):
                found += _stat_entry(os.path.join(path, "__init__.py"))
                found += _extension_files(path, _FILES_DEPTH)
            elif name in (top + ".py",) or (name.startswith(top) and name.endswith(_EXTENSIONS)):
                found += _stat_entry(path)
    return found


def _stat_entry(path: str) -> list:
    try:
        info = os.stat(path)
    except OSError:
        return []
    return [[path, info.st_size, info.st_mtime_ns]]


def _extension_files(directory: str, depth: int) -> list:
    found: list = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth > 1 and entry.name != "__pycache__":
                    found += _extension_files(entry.path, depth - 1)
            elif entry.name.endswith(_EXTENSIONS):
                info = entry.stat()
                found.append([entry.path, info.st_size, info.st_mtime_ns])
        except OSError:
            continue
    return found


def _prune(directory: str) -> None:
    files = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith("imports-")]
    files.sort(key=lambda p: _mtime(p) or 0, reverse=True)
    for stale in files[KEEP_CACHE_FILES:]:
        try:
            os.remove(stale)
        except OSError:
            pass


# ------------------------------------------------------------------ what a missing module would come from

_NO_MODULE = re.compile(r"No module named '([\w.]+)'")


def missing_module_facts(texts: list[str], sys_path: list) -> Optional[dict]:
    """For an error chain saying "No module named 'X'": what is installed that would provide X, recorded for
    the diagnosis (rules/knowledge/import_diagnosis.py): {"module", "providers", "pth"}; None otherwise."""
    match = _NO_MODULE.search("\n".join(texts))
    if match is None:
        return None
    top = match.group(1).split(".")[0]
    return {"module": match.group(1), "providers": module_providers(top), "pth": pth_facts(top, sys_path)}


def module_providers(top: str) -> list[str]:
    """'<distribution> <version>' of each installed distribution that ships top-level module `top`."""
    import importlib.metadata

    try:
        names = importlib.metadata.packages_distributions().get(top) or []
    except Exception:
        return []
    found = []
    for name in names:
        try:
            found.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def pth_facts(top: str, sys_path: list) -> Optional[dict]:
    """An installed distribution's .pth file that would put `top` on sys.path while the failing import's
    sys.path lacks that directory (a --target / PYTHONPATH install: Python runs .pth files only in site dirs),
    or whose .pth file its RECORD lists but is gone: {distribution, version, pth, pth_path, pth_missing, adds}."""
    seen = {os.path.normpath(p) for p in sys_path if p}
    for site_dir, dist_info, pth in _recorded_pth_files(sys_path):
        path = os.path.join(site_dir, pth)
        missing = not os.path.isfile(path)
        if missing:
            candidates = sorted(glob.glob(os.path.join(glob.escape(site_dir), "*", "*", top))) + sorted(
                glob.glob(os.path.join(glob.escape(site_dir), "*", top))
            )
            added = [os.path.dirname(c) for c in candidates if os.path.isdir(c)]
        else:
            added = [a for a in pth_added_paths(path, site_dir) if _provides(a, top)]
        if not added or os.path.normpath(added[0]) in seen:
            continue
        name, version = _dist_name_version(dist_info)
        return {
            "distribution": name,
            "version": version,
            "pth": pth,
            "pth_path": path,
            "pth_missing": missing,
            "adds": added[0],
        }
    return None


def _recorded_pth_files(sys_path: list) -> list[tuple[str, str, str]]:
    """(site dir, dist-info dir, .pth name) for every .pth file a distribution's RECORD lists."""
    found = []
    for entry in dict.fromkeys(os.path.abspath(p) for p in list(sys_path) + sys.path if p):
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            try:
                with open(os.path.join(entry, name, "RECORD"), encoding="utf-8", errors="replace") as handle:
                    record = handle.read()
            except OSError:
                continue
            for pth in re.findall(r"^([^/,\n]+\.pth),", record, re.M):
                found.append((entry, os.path.join(entry, name), pth))
    return found


def _dist_name_version(dist_info: str) -> tuple[str, str]:
    import importlib.metadata
    import pathlib

    dist = importlib.metadata.PathDistribution(pathlib.Path(dist_info))
    try:
        return dist.metadata["Name"] or os.path.basename(dist_info), dist.version or "unknown"
    except UnicodeDecodeError:  # a METADATA that is not UTF-8: the directory still names the distribution
        name, _, version = os.path.basename(dist_info).removesuffix(".dist-info").partition("-")
        return name, version or "unknown"


def pth_added_paths(pth_path: str, site_dir: str) -> list[str]:
    """Directories a .pth file adds: its plain path lines, and `import` lines of the form
    os.path.join(<package>.__path__[0], '<sub>') (how nvidia_cutlass_dsl_packages.pth does it)."""
    try:
        with open(pth_path, encoding="utf-8", errors="replace") as handle:  # site.py reads it as locale text
            lines = handle.read().splitlines()
    except OSError:
        return []
    added = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("import ", "import\t")):
            for package, sub in re.findall(r"(\w+)\.__path__\[0\]\s*,\s*['\"]([^'\"]+)['\"]", line):
                added.append(os.path.join(site_dir, package, sub))
        else:
            added.append(os.path.join(site_dir, line))
    return added


def _provides(directory: str, top: str) -> bool:
    base = os.path.join(directory, top)
    return os.path.isdir(base) or os.path.isfile(base + ".py")
