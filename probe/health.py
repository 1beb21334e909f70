"""Import health: each library imported in its own subprocess, all in parallel, each with a timeout.

A broken kernel library fails in ways that must not take the report down with it: ImportError, a hang,
a segfault. So the import runs in `sys.executable -c CHILD` (same interpreter flags and environment as
a user's `python -c "import X"`), in its own session (no terminal to disturb; the whole process group is
killed on timeout), and writes one JSON result file. Results are cached, keyed by everything installed,
because the imports cost seconds (flash_attn.cute 10.3 s, torch 3.1 s on the H200).

`diagnose` turns a failure into what it means, naming both sides ("built against a different torch than
the installed 2.11.0+cu130").
"""

from __future__ import annotations

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

from probe import __version__
from probe.environ import is_relevant, redact
from probe.facts import (
    HEALTH_CRASHED,
    HEALTH_ERROR,
    HEALTH_OK,
    HEALTH_TIMEOUT,
    Facts,
    ImportHealth,
    LibraryFacts,
)
from probe.jsonfile import JsonFileError, read_json
from probe.libraries import label

MAX_ERROR_CHARS = 2000
POLL_S = 0.01

# Runs in the child: imports one module, reads extra facts inside it, writes a JSON result file, and
# leaves with os._exit so that no atexit hook or interpreter teardown of the library can hang or crash
# after the answer is written. Standard library only.
CHILD = r"""
import faulthandler, importlib, json, os, sys, time
request = json.loads(sys.argv[1])
faulthandler.dump_traceback_later(request["dump_after"], exit=False)

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
""".replace("%(limit)d", str(MAX_ERROR_CHARS))


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
    output_path: str
    output: object  # the open file the child writes stdout and stderr to


def _run_all(
    requests: list[ImportRequest], timeout: float, max_parallel: int, cancel: threading.Event
) -> dict[str, ImportHealth]:
    results: dict[str, ImportHealth] = {}
    waiting = list(requests)
    running: list[_Running] = []
    with tempfile.TemporaryDirectory(prefix="attn-preflight-") as workdir:
        try:
            while (waiting or running) and not cancel.is_set():
                while waiting and len(running) < max_parallel:
                    running.append(_start(waiting.pop(0), timeout, workdir))
                time.sleep(POLL_S)
                for job in list(running):
                    elapsed = time.monotonic() - job.started
                    if job.process.poll() is None and elapsed < timeout:
                        continue
                    timed_out = job.process.returncode is None
                    _kill_group(job.process)
                    running.remove(job)
                    results[job.request.key] = _finish(job, timed_out, timeout, elapsed)
        finally:
            for job in running:  # cancelled or interrupted: leave nothing behind
                _kill_group(job.process)
                job.output.close()
    return results


def _start(request: ImportRequest, timeout: float, workdir: str) -> _Running:
    stem = os.path.join(workdir, request.key)
    payload = json.dumps(
        {
            "module": request.module,
            "details": request.details,
            "components": request.components,
            # a Python stack of where a hanging import is, written just before it is killed
            "dump_after": max(timeout * 0.9, timeout - 1.0),
        }
    )
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"  # what a library printed before crashing reaches the output file
    env["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"  # torch.cuda.is_available() through NVML: no CUDA init
    output = open(stem + ".out", "wb")
    process = subprocess.Popen(
        [sys.executable, *interpreter_flags(), "-X", "faulthandler", "-c", CHILD, payload, stem + ".json"],
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,  # no controlling terminal; its own process group, killed as a whole
    )
    return _Running(request, process, time.monotonic(), stem + ".json", stem + ".out", output)


def interpreter_flags() -> list[str]:
    """The flags that change what `import` finds, so the child sees what this interpreter sees."""
    flags = sys.flags
    if flags.isolated:
        return ["-I"]
    out = []
    if flags.ignore_environment:
        out.append("-E")
    if flags.no_user_site:
        out.append("-s")
    if flags.no_site:
        out.append("-S")
    if getattr(flags, "safe_path", False):
        out.append("-P")
    return out


def _kill_group(process: subprocess.Popen) -> None:
    """Kills the child and anything it started (compile servers, workers) that is still around."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _finish(job: _Running, timed_out: bool, timeout: float, elapsed: float) -> ImportHealth:
    job.output.close()
    health = ImportHealth(module=job.request.module, seconds=round(elapsed, 3))
    output = _read_text(job.output_path)
    result = None if timed_out else _read_result(job.result_path)
    if timed_out:
        health.status = HEALTH_TIMEOUT
        health.error = f"the import did not finish within {timeout:g} s and was killed"
        health.causes = _innermost_frames(output)
    elif result is not None and result.get("ok"):
        health.status = HEALTH_OK
        health.details = result.get("details") or {}
    elif result is not None:
        errors = result.get("errors") or ["unknown error"]
        health.status = HEALTH_ERROR
        health.error, health.causes = errors[0], errors[1:]
        # kept to explain "No module named ..." (was a .pth file processed?); dropped from the report
        health.details = {"sys_path": result.get("sys_path") or []}
    elif job.process.returncode < 0:
        health.status = HEALTH_CRASHED
        health.error = f"killed by {signal_name(-job.process.returncode)}"
        health.causes = _innermost_frames(output)
    else:
        health.status = HEALTH_ERROR
        health.error = f"the import check exited with status {job.process.returncode} before reporting"
        health.causes = [line for line in output.strip().splitlines()[-3:] if line.strip()]
    return health


def signal_name(number: int) -> str:
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    description = signal.strsignal(sig) if hasattr(signal, "strsignal") else None
    return f"{sig.name} ({description})" if description else sig.name


def _innermost_frames(output: str) -> list[str]:
    """The innermost Python frame of each faulthandler dump ('File "...", line N in f'), most recent first."""
    frames = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if "most recent call first" in line and i + 1 < len(lines) and lines[i + 1].strip().startswith("File"):
            frames.append(lines[i + 1].strip())
    fatal = [line.strip() for line in lines if line.startswith("Fatal Python error")]
    return fatal[:1] + frames[:1]


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 65536))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _read_result(path: str) -> Optional[dict]:
    try:
        data = read_json(path)
    except JsonFileError:
        return None
    return data if isinstance(data, dict) else None


# ---------------------------------------------------------------------------------------------------- cache

CACHEABLE = (HEALTH_OK, HEALTH_ERROR, HEALTH_CRASHED)  # a timeout may be a slow disk: always re-checked
KEEP_CACHE_FILES = 16


def cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "attn-preflight")


def environment_fingerprint() -> str:
    """Changes whenever anything an import could depend on changes: interpreter, sys.path entries and every
    distribution (name, version and install time) on them, .pth files, relevant variables, the driver."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        digest.update(repr(parts).encode())

    add(__version__, CHILD, sys.executable, sys.version, interpreter_flags(), os.getcwd())
    for name in sorted(os.environ):
        if is_relevant(name) or name in ("PATH", "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX"):
            add(name, redact(name, os.environ[name]))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == os.getcwd():
            add(entry)  # the working directory's mtime changes with every file written there
            continue
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
        with open(path, encoding="utf-8") as handle:
            return handle.readline().strip()
    except OSError:
        return None


class ImportCache:
    """One file per installed-environment fingerprint: {request -> ImportHealth}. Any I/O error just
    means no cache."""

    def __init__(self, path: str, entries: dict):
        self.path = path
        self.entries = entries

    @classmethod
    def open(cls) -> ImportCache:
        path = os.path.join(cache_dir(), f"imports-{environment_fingerprint()[:32]}.json")
        try:
            entries = read_json(path)
        except JsonFileError:
            entries = {}
        if not isinstance(entries, dict):
            entries = {}
        return cls(path, entries)

    @staticmethod
    def _key(request: ImportRequest) -> str:
        return json.dumps(asdict(request), sort_keys=True)

    def get(self, request: ImportRequest) -> Optional[ImportHealth]:
        data = self.entries.get(self._key(request))
        if not isinstance(data, dict):
            return None
        try:
            health = ImportHealth(**data)
        except TypeError:  # written by another version of this model
            return None
        health.cached = True
        return health

    def put(self, results: list[tuple[ImportRequest, ImportHealth]]) -> None:
        for request, health in results:
            if health.status in CACHEABLE:
                self.entries[self._key(request)] = asdict(health)
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(self.path), prefix=".imports-", suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(self.entries, handle)
            os.replace(tmp, self.path)
            _prune(os.path.dirname(self.path))
        except OSError:
            pass


def _prune(directory: str) -> None:
    files = [os.path.join(directory, n) for n in os.listdir(directory) if n.startswith("imports-")]
    files.sort(key=lambda p: _mtime(p) or 0, reverse=True)
    for stale in files[KEEP_CACHE_FILES:]:
        try:
            os.remove(stale)
        except OSError:
            pass


# ---------------------------------------------------------------------------------------------- diagnosis

# Itanium-mangled names in torch's namespaces: functions (_ZN3c10...), const methods (_ZNK2at...),
# typeinfo / vtables (_ZTIN5torch...).
_TORCH_SYMBOL = re.compile(r"^_Z(?:T[ISV])?N?K?(?:3c10|2at|5torch|6caffe2)")
_CUDA_LIBRARY = re.compile(
    r"^lib(cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|nvrtc|cudnn\w*|nccl|nvJitLink|cupti|nvToolsExt)"
    r"\.so\.(\d+)"
)


def diagnose(lib: LibraryFacts, facts: Facts) -> Optional[str]:
    """What a failed import check means and what to do, naming both sides where the facts allow."""
    health = lib.health
    who = label(lib)
    if health.status == HEALTH_TIMEOUT:
        where = f" (it was at {health.causes[-1]})" if health.causes else ""
        return (
            f"{who}: the import hung{where}: it may be waiting on a lock, a network filesystem, a GPU or "
            f"a JIT build; see where with `python -X faulthandler -c 'import {health.module}'`, or raise "
            f"--timeout"
        )
    if health.status == HEALTH_CRASHED:
        return _crash_diagnosis(who, health, facts)
    if health.status != HEALTH_ERROR:
        return None
    return error_diagnosis(
        who, [health.error or ""] + list(health.causes), lib, facts, sys_path=health.details.get("sys_path")
    )


def _torch_side(facts: Facts) -> str:
    if not facts.torch.installed:
        return "torch, which is not installed here"
    return f"the installed torch {facts.torch.version}"


def _crash_diagnosis(who: str, health: ImportHealth, facts: Facts) -> str:
    error = health.error or ""
    where = next((f" at {c}" for c in health.causes if c.startswith("File")), "")
    if "SIGKILL" in error:
        return (
            f"{who}: the import was killed by SIGKILL{where}, most likely by the out-of-memory killer (check `dmesg`)"
        )
    if "SIGILL" in error:
        return (
            f"{who}: illegal instruction while loading{where}: a binary built for a newer CPU than this "
            f"one ({facts.host.cpu_arch}); install a build for this CPU"
        )
    return (
        f"{who}: the import was {error}{where}: a native extension crashed while loading, usually one built "
        f"against a different torch/CUDA/Python than {_torch_side(facts)} "
        f"(Python {facts.host.python_version}); reinstall a build for them, and see where with "
        f"`python -X faulthandler -c 'import {health.module}'`"
    )


def error_diagnosis(
    who: str, texts: list[str], lib: LibraryFacts, facts: Facts, sys_path: Optional[list] = None
) -> Optional[str]:
    """Diagnosis of an exception chain (`texts`, outermost first); the innermost cause usually says most."""
    text = "\n".join(texts)
    symbol = re.search(r"(?:([^\s:]+\.so[^\s:]*): )?undefined symbol: (\S+)", text)
    if symbol:
        return _undefined_symbol(who, symbol.group(1), symbol.group(2), facts)
    missing_lib = re.search(r"(lib[\w+.-]+\.so(?:\.[\d.]+)?): cannot open shared object file", text)
    if missing_lib:
        return _missing_shared_library(who, missing_lib.group(1), facts)
    if re.search(
        r"driver version is insufficient|driver on your system is too old|InsufficientDriver|"
        r"CUDA_ERROR_COMPAT_NOT_SUPPORTED|forward compatibility was attempted",
        text,
        re.I,
    ):
        driver = facts.gpus.driver_version or "unknown"
        supports = facts.gpus.cuda_driver_version or "unknown"
        return (
            f"{who}: the NVIDIA driver {driver} (supports CUDA up to {supports}) is older than the CUDA this "
            f"build needs (torch is built for CUDA {facts.torch.cuda or 'unknown'}); upgrade the driver or "
            f"install builds for CUDA {supports}"
        )
    glibc = re.search(r"version `((GLIBCXX|GLIBC|CXXABI)_[\d.]+)' not found", text)
    if glibc:
        library = "libstdc++" if glibc.group(2) != "GLIBC" else "glibc"
        return (
            f"{who} needs {glibc.group(1)} from {library}, newer than this system's; use a newer base image "
            f"or put a newer {library} first on LD_LIBRARY_PATH (e.g. conda's)"
        )
    missing = re.search(r"No module named '([\w.]+)'", text)
    if missing:
        return _missing_module(who, missing.group(1), lib, facts, sys_path or [])
    if re.search(r"does not match flashinfer version|flashinfer-(cubin|jit-cache).*version", text):
        pieces = ", ".join(f"{n} {v}" for n, v in lib.distributions.items())
        return (
            f"{who}: FlashInfer's pieces have different versions ({pieces}); install matching versions "
            f"(or set FLASHINFER_DISABLE_VERSION_CHECK=1 at your own risk)"
        )
    if "GPUModuleOp" in text:
        return (
            f"{who}: nvidia-cutlass-dsl-libs-base and -libs-cu13 were installed over each other "
            f"(vLLM #40082); reinstall nvidia-cutlass-dsl with only the libs piece for your CUDA"
        )
    return None


def _undefined_symbol(who: str, shared_object: Optional[str], symbol: str, facts: Facts) -> str:
    where = f"{os.path.basename(shared_object)} needs " if shared_object else "needs "
    if _TORCH_SYMBOL.search(symbol) or re.search(r"\b(c10|at|torch)::", symbol):
        fix = "reinstall a build of it for that torch"
        if facts.torch.installed and facts.torch.version:
            release = facts.torch.version.split("+")[0].rsplit(".", 1)[0]
            cuda = f", CUDA {facts.torch.cuda}" if facts.torch.cuda else ""
            fix = f"reinstall a build of it for torch {release}{cuda} (or build it from source against it)"
        return f"{who}: {where}torch symbol {symbol} → built against a different torch than {_torch_side(facts)}; {fix}"
    if symbol.startswith(("Py", "_Py")):
        return (
            f"{who}: {where}Python symbol {symbol} → built for a different Python than "
            f"{facts.host.python_version}; install the build for this Python"
        )
    if re.search(r"cuda|cublas|cudnn|nccl|nvrtc|cufft|curand|cusparse", symbol, re.I):
        return (
            f"{who}: {where}CUDA symbol {symbol} → built against a different CUDA than torch's "
            f"{facts.torch.cuda or 'CPU-only build'}; install the build for that CUDA"
        )
    return (
        f"{who}: {where}symbol {symbol} that no loaded library provides → built against different "
        f"versions of its dependencies than installed here ({_torch_side(facts)}); reinstall a matching build"
    )


def _missing_shared_library(who: str, library: str, facts: Facts) -> str:
    cuda = _CUDA_LIBRARY.match(library)
    if library.startswith("libcuda.so"):
        return (
            f"{who}: {library} (the NVIDIA driver's CUDA library) is not found: no driver here, or it is "
            f"not mounted into this container ({facts.gpus.error or 'NVML sees the driver'})"
        )
    if cuda:
        major = cuda.group(2)
        torch_cuda = facts.torch.cuda
        if torch_cuda and torch_cuda.split(".")[0] != major:
            return (
                f"{who}: {library} is missing → built for CUDA {major}, but torch here is built for CUDA "
                f"{torch_cuda} and no CUDA {major} runtime is installed; install its build for CUDA "
                f"{torch_cuda.split('.')[0]}"
            )
        return (
            f"{who}: {library} (CUDA {major}) is not on the loader path; torch is built for CUDA "
            f"{torch_cuda or 'nothing (CPU-only build)'}; install the matching nvidia-*-cu{major} wheels or "
            f"add the CUDA {major} libraries to LD_LIBRARY_PATH"
        )
    if re.match(r"lib(c10|torch)\w*\.so", library):
        return (
            f"{who}: {library} (part of torch) is not found: the extension was loaded without torch "
            f"({_torch_side(facts)})"
        )
    return (
        f"{who}: needs {library}, which is not on the loader path "
        f"(LD_LIBRARY_PATH={os.environ.get('LD_LIBRARY_PATH', '')!r})"
    )


def _missing_module(who: str, module: str, lib: LibraryFacts, facts: Facts, sys_path: list) -> str:
    top = module.split(".")[0]
    hint = pth_hint(top, sys_path)
    if hint:
        return f"No module named {module} while {hint}"
    own_top = (lib.import_name or "").split(".")[0]
    if top == own_top and lib.installed:
        return (
            f"{who} is installed but its module {module} is not importable (files missing, or a "
            f"partial install); reinstall it"
        )
    provider = _provider(top)
    if provider:
        return (
            f"{who} needs module {module}; {provider} provides it but it is not importable here (a broken "
            f"install); reinstall {provider.split()[0]}"
        )
    return f"{who} needs module {module}, which is not installed (a missing dependency): install it"


def _provider(top: str) -> Optional[str]:
    import importlib.metadata

    try:
        names = importlib.metadata.packages_distributions().get(top) or []
    except Exception:
        return None
    for name in names:
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def pth_hint(top: str, sys_path: list) -> Optional[str]:
    """'<dist> <version> is installed → its .pth file was not processed …; add <dir> to sys.path' when an
    installed distribution's .pth file would put `top` on sys.path but the failing import's sys.path lacks
    that directory (a --target / PYTHONPATH install: Python runs .pth files only in site dirs), or when
    the .pth file its RECORD lists is gone."""
    seen = {os.path.normpath(p) for p in sys_path if p}
    for site_dir, dist_info, pth in _recorded_pth_files(sys_path):
        path = os.path.join(site_dir, pth)
        if os.path.isfile(path):
            added = [a for a in pth_added_paths(path, site_dir) if _provides(a, top)]
            if not added or os.path.normpath(added[0]) in seen:
                continue
            why = (
                f"its .pth file ({pth}) was not processed (installed with --target / PYTHONPATH: Python "
                f"runs .pth files only in site-packages)"
            )
        else:
            added = [
                os.path.dirname(c)
                for c in sorted(glob.glob(os.path.join(glob.escape(site_dir), "*", "*", top)))
                + sorted(glob.glob(os.path.join(glob.escape(site_dir), "*", top)))
                if os.path.isdir(c)
            ]
            if not added or os.path.normpath(added[0]) in seen:
                continue
            why = f"its .pth file {path} is missing (a pip upgrade can delete it: NVIDIA/cutlass#3001)"
        name, version = _dist_name_version(dist_info)
        return (
            f"{name} {version} is installed → {why}; add {added[0]} to sys.path, e.g. "
            f"export PYTHONPATH={added[0]}:$PYTHONPATH"
        )
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
    return dist.metadata["Name"] or os.path.basename(dist_info), dist.version or "unknown"


def pth_added_paths(pth_path: str, site_dir: str) -> list[str]:
    """Directories a .pth file adds: its plain path lines, and `import` lines of the form
    os.path.join(<package>.__path__[0], '<sub>') (how nvidia_cutlass_dsl_packages.pth does it)."""
    try:
        with open(pth_path, encoding="utf-8") as handle:
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
