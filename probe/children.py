"""How probe runs other processes: import checks, smoke workers, nvcc, and the NVML query (a fork).

Each child is isolated from the working directory: Python children run with `-I` (no cwd or script directory
on sys.path, no PYTHON* variables, no user site) and get instead the explicit sys.path of the environment
being probed, without the working directory, where a stray `torch.py` or `probe/` would shadow what is
installed; the forked NVML child sets that sys.path itself and works in `/`. Each child runs in a session of
its own (no terminal: Ctrl-C reaches only us) and is killed with everything it started, as a process group,
on timeout and on every way out of the probe.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Optional, Union

# Loads this probe package from where it lives, without putting its directory on the child's sys.path (where
# it would shadow the environment's own packages, and a site-packages root would reorder them). The parent
# package is an empty stand-in: a child needs the probe, never the face (click) or the rules.
# The first lines of every Python child: die with the parent (below), whatever the parent died of.
DIE_WITH_PARENT = r"""
def _die_with_parent(parent):
    try:  # PR_SET_PDEATHSIG (1): SIGKILL when the parent's thread that started us ends, even by SIGKILL
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)
    except Exception:  # not Linux: the parent's own handlers and the child's timeout still hold
        return
    if parent and os.getppid() != parent:  # it died before the call above took effect
        os._exit(1)
    _guard_group(libc)

def _guard_group(libc):
    # PR_SET_PDEATHSIG reaches only this process: what a library starts (a compile server, a helper) stays in
    # our process group and would outlive a parent killed by SIGKILL. A guard forked now, before any library
    # is imported, waits for our end (its own parent-death signal) and then kills the whole group, itself last.
    import signal, warnings
    me = os.getpid()
    if os.getpgrp() != me:  # not a group of our own (a test's, a shell's): not ours to kill
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fork with faulthandler's watchdog thread running: the guard needs none
            if os.fork():
                return
    except OSError:
        return
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1 << 16)  # no pipe of the parent's kept open: its end of the output is the child's
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)
        while os.getppid() == me:
            signal.sigwait({signal.SIGTERM})
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(0)
"""
PROBE_BOOTSTRAP = (
    r"""
import importlib.util, json, os, sys, types
setup = json.loads(sys.argv.pop(1))
"""
    + DIE_WITH_PARENT
    + r"""
_die_with_parent(setup.get("parent"))
sys.path[:] = setup["path"]
sys.modules["attn_preflight"] = types.ModuleType("attn_preflight")
spec = importlib.util.spec_from_file_location(
    "attn_preflight.probe", setup["package"], submodule_search_locations=[os.path.dirname(setup["package"])])
sys.modules["attn_preflight.probe"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sys.modules["attn_preflight.probe"])
del importlib, json, os, setup, spec, types, _die_with_parent, _guard_group
"""
)
NEUTRAL_CWD = os.sep  # for children that write nothing: nothing there is on their sys.path

Output = Union[int, IO[Any], None]


def environment_path(pythonpath: Optional[str] = None) -> list[str]:
    """sys.path of the environment being probed, as a child gets it: absolute entries, in order, without the
    working directory (`python -c`/`-m` put it first: a `torch.py` there is not the installed torch).
    `pythonpath`: the PYTHONPATH of a child's own environment where it is not ours, its entries first."""
    try:
        cwd: Optional[str] = os.path.realpath(os.getcwd())
    except OSError:  # a deleted working directory: relative entries point nowhere
        cwd = None
    path = []
    for entry in (pythonpath.split(os.pathsep) if pythonpath else []) + sys.path:
        if not entry or (cwd is None and not os.path.isabs(entry)):
            continue
        absolute = os.path.abspath(entry)
        if os.path.realpath(absolute) != cwd:
            path.append(absolute)
    return list(dict.fromkeys(path))


def user_site_dirs() -> list[str]:
    """The user site directory when this interpreter uses it: `-I` skips it, so the child runs its .pth files."""
    import site

    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    return [user_site] if user_site and user_site in sys.path else []


def python_argv(code: str, *args: str, options: tuple[str, ...] = ()) -> list[str]:
    """`python -I OPTIONS -c CODE ARGS...` with this interpreter (`-S` too where it runs without site)."""
    return [sys.executable, "-I", *(["-S"] if sys.flags.no_site else []), *options, "-c", code, *args]


def probe_argv(statement: str, *args: str, pythonpath: Optional[str] = None) -> list[str]:
    """A Python child that runs `statement` with this probe package importable (`from attn_preflight.probe.x import y`) and
    environment_path(pythonpath) as its sys.path."""
    import attn_preflight.probe

    setup = {
        "path": environment_path(pythonpath),
        "package": os.path.abspath(attn_preflight.probe.__file__),
        "parent": os.getpid(),
    }
    return python_argv(PROBE_BOOTSTRAP + statement, json.dumps(setup), *args)


def spawn(
    argv: list[str],
    cwd: str,
    stdout: Output = subprocess.DEVNULL,
    stderr: Output = subprocess.DEVNULL,
    env: Optional[dict] = None,
    stdin: Output = subprocess.DEVNULL,
) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=cwd,
        env=env,
        start_new_session=True,  # no controlling terminal; its own process group, killed as a whole
    )


def kill_group(process: subprocess.Popen) -> None:
    """Kills the child and whatever it started (compile servers, workers, a wrapper's real nvcc) and reaps it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


class Child:
    """A quick child with a deadline counted from its start: started at once, its output read when wanted."""

    def __init__(self, argv: list[str], timeout: float, env: Optional[dict] = None):
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.process = spawn(argv, NEUTRAL_CWD, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    def communicate(self) -> Optional[tuple[str, str]]:
        """(stdout, stderr) once it has exited; None when it ran past its deadline (then it has been killed)."""
        try:
            out, err = self.process.communicate(timeout=max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None
        finally:
            self.close()  # anything it left running in its session
        return out.decode("utf-8", "replace"), err.decode("utf-8", "replace")

    @property
    def returncode(self) -> Optional[int]:
        return self.process.returncode

    def close(self) -> None:
        kill_group(self.process)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


class ForkedCall:
    """`call()` in a forked child of this process, in a session of its own, its answer (text) sent back through a
    pipe, with a deadline counted from its start. Forked, not started afresh: the child repeats no interpreter
    start-up and none of our imports, most of what a fresh `python` would cost a quick probe run every time
    (NVML's). Fork before starting any thread (a thread's locks are not the child's to take)."""

    def __init__(self, call: Callable[[], str], timeout: float):
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.returncode: Optional[int] = None
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            _answer_and_exit(call, read_end, write_end)
        os.close(write_end)
        self._answer: Optional[int] = read_end

    def communicate(self) -> Optional[str]:
        """Its answer once it has exited; None when it ran past its deadline (then it has been killed)."""
        chunks: list[bytes] = []
        try:
            while self._answer is not None and self._wait_readable(self._answer):
                chunk = os.read(self._answer, 65536)
                if not chunk:  # it closed the pipe: exiting
                    while self._reap(os.WNOHANG) is None:
                        if time.monotonic() >= self.deadline:
                            return None
                        time.sleep(0.001)
                    return b"".join(chunks).decode("utf-8", "replace")
                chunks.append(chunk)
            return None
        finally:
            self.close()

    def _wait_readable(self, fd: int) -> bool:
        import select

        remaining = self.deadline - time.monotonic()
        return remaining > 0 and bool(select.select([fd], [], [], remaining)[0])

    def _reap(self, flags: int = 0) -> Optional[int]:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, flags)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def close(self) -> None:
        if self._answer is not None:
            os.close(self._answer)
            self._answer = None
        if self.returncode is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self._reap()


def _answer_and_exit(call: Callable[[], str], read_end: int, write_end: int) -> None:
    """The forked child: no terminal, nothing of ours written to (fds 0-2 are /dev/null), never back into the
    parent's code (os._exit, whatever happens)."""
    try:
        os.setsid()
        die_with_parent()
        os.chdir(NEUTRAL_CWD)  # where a crash's core file would go: not the user's directory
        os.close(read_end)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        data = call().encode("utf-8", "replace")
        while data:
            data = data[os.write(write_end, data) :]
    finally:
        os._exit(0)


def die_with_parent() -> None:
    """In a forked child: SIGKILL when the parent ends (PR_SET_PDEATHSIG), as DIE_WITH_PARENT in a Python child."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)
    except Exception:
        pass


def signal_name(number: int) -> str:
    """'SIGSEGV (Segmentation fault)' for 11."""
    try:
        sig = signal.Signals(number)
    except ValueError:
        return f"signal {number}"
    description = signal.strsignal(sig) if hasattr(signal, "strsignal") else None
    return f"{sig.name} ({description})" if description else sig.name


# The ways the tool can be ended that can be caught: `kill`/`timeout`/a CI job cancelled (SIGTERM), the terminal
# closed or an ssh session dropped (SIGHUP), Ctrl-\\ (SIGQUIT). Ctrl-C is KeyboardInterrupt already.
CAUGHT_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT")


class TerminateAsExit:
    """SIGTERM, SIGHUP and SIGQUIT unwind like Ctrl-C, so that the children, which live in sessions of their own
    and would outlive us, are killed and temporary directories removed. A signal that was ignored when we
    started (`nohup` ignores SIGHUP) stays ignored."""

    def __enter__(self) -> TerminateAsExit:
        self.previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for name in CAUGHT_SIGNALS:
                number = getattr(signal, name, None)
                if number is None or signal.getsignal(number) == signal.SIG_IGN:
                    continue
                self.previous[number] = signal.signal(number, self._exit)
        return self

    @staticmethod
    def _exit(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    def __exit__(self, *exc: object) -> None:
        for number, previous in self.previous.items():
            signal.signal(number, previous)


# ------------------------------------------------------------------------------------- output a child may write

OUTPUT_CAP = 64 * 1024  # bytes of a child's output kept: its last ones (a crash's or a hang's Python stack)


class OutputTail:
    """A child's stdout and stderr through a pipe, read without blocking into its last OUTPUT_CAP bytes: a
    library that prints without end costs memory and disk for none of it (a file it wrote to could fill TMPDIR
    and fail every other check). `read()` takes what is there; the child never blocks for long as the caller
    reads each poll; `wait_readable` waits for any of several tails or a timeout."""

    def __init__(self, cap: int = OUTPUT_CAP):
        self.cap = cap
        self._read_end, self.write_end = os.pipe()
        os.set_blocking(self._read_end, False)
        self._tail = bytearray()
        self.dropped = 0  # bytes written beyond the cap

    @property
    def fileno(self) -> int:
        return self._read_end

    def started(self) -> None:
        """The child has its copy of the write end: ours goes, so that the pipe ends when the child's does."""
        if self.write_end >= 0:
            os.close(self.write_end)
            self.write_end = -1

    def read(self) -> None:
        while self._read_end >= 0:
            try:
                chunk = os.read(self._read_end, 65536)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:  # every writer has closed it: nothing more will come
                os.close(self._read_end)
                self._read_end = -1
                return
            self._tail += chunk
            if len(self._tail) > self.cap:
                self.dropped += len(self._tail) - self.cap
                del self._tail[: len(self._tail) - self.cap]

    def text(self) -> str:
        self.read()
        return self._tail.decode("utf-8", "replace")

    def close(self) -> None:
        for fd in (self._read_end, self.write_end):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._read_end = self.write_end = -1

    @staticmethod
    def wait_readable(tails: list[OutputTail], timeout: float) -> None:
        import select

        fds = [tail.fileno for tail in tails if tail.fileno >= 0]
        if fds:
            with contextlib.suppress(OSError, ValueError):
                select.select(fds, [], [], timeout)
        else:
            time.sleep(timeout)


# ---------------------------------------------------------------------------------------- temporary directories

SCRATCH_PREFIX = "attn-preflight-"
_LOCK = ".in-use"


@contextlib.contextmanager
def scratch_directory(prefix: str = SCRATCH_PREFIX):
    """A temporary directory for a run's children, removed on the way out; while it is used, a lock (flock)
    held on a file in it says so. A run killed before it could remove it (SIGKILL, a power cut) leaves it
    unlocked, and the next run's sweep_stale_scratch removes it. flock, not a pid: a pid is reused and means
    nothing across containers sharing /tmp; the kernel drops a lock with the process that held it."""
    import fcntl
    import shutil
    import tempfile

    sweep_stale_scratch()
    directory = tempfile.mkdtemp(prefix=prefix)
    lock = None
    try:
        # locked under another name, then renamed: a sweep finds the lock file only once it is held
        lock = os.open(os.path.join(directory, _LOCK + ".new"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(os.path.join(directory, _LOCK + ".new"), os.path.join(directory, _LOCK))
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        if lock is not None:
            os.close(lock)


def sweep_stale_scratch(root: Optional[str] = None) -> list[str]:
    """Removes this user's attn-preflight temporary directories in `root` (the temp directory) that a run made
    with scratch_directory and no living run holds; returns them. One without the lock file (being made, or
    not ours to judge) is left; a link is never followed; another user's directory never touched."""
    import fcntl
    import shutil
    import stat
    import tempfile

    root = root or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [name for name in os.listdir(root) if name.startswith(SCRATCH_PREFIX)]
    except OSError:
        return removed
    for name in names:
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        try:
            lock = os.open(os.path.join(path, _LOCK), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: a run is using it
            continue
        finally:
            os.close(lock)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed
