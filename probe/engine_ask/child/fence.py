"""The fence an engine driver installs first, before it imports anything of the engine (stdlib only).

The driver runs in an interpreter where attn-preflight may not be installed (`--engine-python`), so this file
is loaded from its path beside the driver, never imported as part of the package. It installs one audit hook
(PEP 578: it cannot be removed, and it sees what C code reached from Python does through `socket`, `os` and
`subprocess`), which refuses:

- the network: a socket connecting or sending anywhere but loopback or a Unix socket, and a DNS lookup of any
  name but localhost (`socket.getaddrinfo`, `gethostbyname`, ...);
- other programs: `subprocess.Popen`, `os.system`, `os.exec*`, `os.posix_spawn`, `os.spawn*`, `os.fork` (no
  `nvidia-smi` on a GPU that may be serving, nothing the engine would start), unless the driver itself opens
  `permit("fork")` around its own fork;
- writes outside the temp dir the harness gave (and `/dev/null`): `open` for writing, `os.mkdir`, `os.remove`,
  `os.rename`, `os.rmdir`, `os.symlink`, `os.link`, `os.chmod`, `os.truncate`, `os.utime`, `shutil.rmtree`;
- Python loading a CUDA driver or NVML library through ctypes (`libcuda`, `libnvidia-ml`).

Each refusal raises `FenceError`, a `PermissionError`: code that copes with "no network" or "no permission"
(an offline hub, `platform.processor()` asking `uname`) copes with it, and whatever does not ends the ask as
could-not-ask with the fence named. Every refusal is also recorded in `EVENTS` for the answer.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys

__all__ = ["EVENTS", "FenceError", "install", "installed", "permit"]

EVENTS: list = []  # one line per refusal, in order
_STATE: dict = {"roots": (), "installed": False, "permits": set()}
_MAX_EVENTS = 200


class FenceError(PermissionError):
    """Something the engine child may not do (network, another program, a write outside its temp dir)."""


def _refuse(what: str) -> None:
    if len(EVENTS) < _MAX_EVENTS:
        EVENTS.append(what[:300])
    raise FenceError(f"attn-preflight engine fence: {what}")


_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback", ""}


def _local_host(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    host = str(host).strip().lower()
    if host in _LOOPBACK_NAMES or host in ("0.0.0.0", "::", "::1", "0:0:0:0:0:0:0:1"):
        return True
    return host.startswith("127.") or host.startswith("::ffff:127.")


def _numeric(host) -> bool:
    """An IP address written out: resolving it asks no name server (connecting to it is judged on its own)."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, str(host))
            return True
        except (OSError, ValueError):
            pass
    return False


def _local_address(address) -> bool:
    if isinstance(address, (str, bytes, bytearray)):  # AF_UNIX path (or abstract name)
        return True
    if isinstance(address, tuple) and address:
        return _local_host(address[0])
    return False  # AF_NETLINK and stranger families: not needed by an engine's argument parsing


def _is_write(mode, flags) -> bool:
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    if isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
        return True
    return False


_WRITABLE_DEVICES = ("/dev/null", "/dev/tty", "/dev/stdout", "/dev/stderr")


def _inside(path) -> bool:
    """Whether a path lies inside one of the writable roots (links resolved, relative to the cwd)."""
    if isinstance(path, int):  # an open descriptor: it was checked when it was opened
        return True
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        path = os.fspath(path)
    except TypeError:
        return True
    if path in _WRITABLE_DEVICES:
        return True
    full = os.path.realpath(os.path.abspath(path))
    return any(full == root or full.startswith(root + os.sep) for root in _STATE["roots"])


_SPAWN_EVENTS = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.startfile",
    "pty.spawn",
}
_FORK_EVENTS = {"os.fork", "os.forkpty"}
# event -> the argument positions that are paths written to
_PATH_EVENTS = {
    "os.mkdir": (0,),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.rename": (0, 1),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "os.chflags": (0,),
    "shutil.rmtree": (0,),
    "shutil.move": (1,),
    "shutil.copyfile": (1,),
}
_GPU_LIBRARIES = ("libcuda.so", "libnvidia-ml.so", "nvcuda", "nvml.dll")


def _hook(event: str, args: tuple) -> None:
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        if path is not None and _is_write(mode, flags) and not _inside(path):
            _refuse(f"write to {path!r} outside the temp dir")
        return
    if event.startswith("socket."):
        if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
            address = args[-1] if args else None
            if event == "socket.sendmsg" and address is None:
                return
            if not _local_address(address):
                _refuse(f"network: {event} to {address!r}")
        elif event in ("socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"):
            if args and not _local_host(args[0]) and not _numeric(args[0]):
                _refuse(f"network: DNS lookup of {args[0]!r}")
        elif event in ("socket.gethostbyaddr", "socket.getnameinfo"):
            host = args[0][0] if args and isinstance(args[0], tuple) and args[0] else (args[0] if args else None)
            if not _local_host(host):
                _refuse(f"network: reverse DNS lookup of {host!r}")
        return
    if event in _SPAWN_EVENTS:
        shown = args[1] if event == "subprocess.Popen" and len(args) > 1 else (args[0] if args else "")
        if isinstance(shown, (list, tuple)):
            shown = " ".join(map(str, shown))
        _refuse(f"program start: {event} {str(shown)[:160]}")
    if event in _FORK_EVENTS:
        if "fork" not in _STATE["permits"]:
            _refuse(f"program start: {event}")
        return
    positions = _PATH_EVENTS.get(event)
    if positions is not None:
        for i in positions:
            if i < len(args) and args[i] is not None and not _inside(args[i]):
                _refuse(f"{event} of {args[i]!r} outside the temp dir")
        return
    if event == "ctypes.dlopen" and args:
        name = os.path.basename(str(args[0]))
        if any(name.startswith(lib) for lib in _GPU_LIBRARIES):
            _refuse(f"loading the GPU driver library {name}")


def tie_to_parent(parent, deadline_s) -> None:
    """This driver never outlives what asked it: SIGKILL when `parent` (the harness's pid) ends, however it ends
    (PR_SET_PDEATHSIG, Linux), and exit on its own after `deadline_s` seconds (the harness's timeout and a
    margin) where that signal is not available or the parent is gone already. What the engine starts (a
    compile worker, a helper) goes with it: a guard process kills the driver's process group when the driver
    ends (`guard_group`). Call it before the fence is installed (the guard is a fork) and before any thread."""
    if parent:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
        except Exception:  # not Linux: the deadline below still holds
            libc = None
        if os.getppid() != parent:  # it ended before the call above took effect
            os._exit(3)
        if libc is not None:
            guard_group(libc)
    if deadline_s:
        import threading

        watchdog = threading.Timer(float(deadline_s), os._exit, args=(3,))
        watchdog.daemon = True
        watchdog.start()


def guard_group(libc) -> None:
    """PR_SET_PDEATHSIG reaches only the driver: a process the engine started stays in the driver's process group
    and would outlive a harness killed by SIGKILL (and a driver ended by its own deadline). A guard forked now,
    before the engine is imported, waits for the driver's end (its own parent-death signal) and then kills the
    whole group, itself last. The same guard as probe/children.py's DIE_WITH_PARENT (this file is stdlib-only,
    loaded where attn-preflight is not installed)."""
    import signal

    me = os.getpid()
    if os.getpgrp() != me:  # not a group of our own (a test's, a shell's): not ours to kill
        return
    try:
        if os.fork():
            return
    except OSError:
        return
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 1 << 16)  # no pipe of the harness's kept open: the output ends with the driver's
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)
        while os.getppid() == me:
            signal.sigwait({signal.SIGTERM})
        os.killpg(0, signal.SIGKILL)
    finally:
        os._exit(0)


def install(temp_dir: str, extra_writable: tuple = ()) -> None:
    """Fence this process for good: network, program starts and writes outside `temp_dir` (and the paths in
    `extra_writable`) are refused from now on. Idempotent: a second call only adds writable roots."""
    roots = [os.path.realpath(os.path.abspath(p)) for p in (temp_dir, *extra_writable) if p]
    _STATE["roots"] = tuple(dict.fromkeys((*_STATE["roots"], *roots)))
    if _STATE["installed"]:
        return
    sys.dont_write_bytecode = True  # .pyc files beside the engine's sources are writes outside the temp dir
    sys.addaudithook(_hook)
    _STATE["installed"] = True


def installed() -> bool:
    return bool(_STATE["installed"])


@contextlib.contextmanager
def permit(kind: str):
    """Lets the driver itself do one fenced thing (only "fork": its batch mode forks one child per config)."""
    if kind != "fork":
        raise ValueError(f"nothing but 'fork' can be permitted, not {kind!r}")
    _STATE["permits"].add(kind)
    try:
        yield
    finally:
        _STATE["permits"].discard(kind)
