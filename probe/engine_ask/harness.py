"""Ask the installed engine itself about a launch line: run its driver in an isolated child and read its answer.

A probe: what the engine answered is a fact, judged by nobody here. The child is
`PYTHON -I probe/engine_ask/child/<engine>_driver.py` (PYTHON: this interpreter or the `--engine-python` one),
with the request (child/SCHEMA.md) on stdin; it writes its answer to a file in a fresh temp dir, which is also
its HOME, TMPDIR, working directory and every cache directory, and which is removed after. The child is run as
probe/children.py runs every child: a process session of its own, killed with everything it started when it is
done or past the timeout, and on SIGTERM/SIGHUP/SIGQUIT of ours (TerminateAsExit); its output capped
(OutputTail); its temp dir a scratch_directory, which a later run sweeps when a SIGKILL left it. The driver dies
with us even by SIGKILL, and what it started with it (child/fence.py's tie_to_parent). Its
environment is built from nothing: offline switches for the hub and the engines, the temp dirs, and of the
pasted line's `KEY=VALUE` prefixes only the engines' own variables (ENV_PREFIXES, ENV_NAMES). The driver fences
itself (child/fence.py: no network, no programs, no writes outside the temp dir). Whatever goes wrong (no
such interpreter, a crash, a traceback, a hang, a malformed answer) is an answer with status "could_not_ask" and
why, never an exception of ours.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from typing import Any, Mapping, Optional, Sequence

from attn_preflight.probe.children import OutputTail, TerminateAsExit, kill_group, scratch_directory, spawn

SCHEMA = 1
ENGINES = ("sglang", "vllm")
STATUSES = ("accepted", "rejected", "could_not_ask")
CHILD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child")
DEFAULT_TIMEOUT = 180.0
DEADLINE_MARGIN_S = 30.0  # the driver's own watchdog fires this long after our timeout (we kill it at the timeout)
POLL_S = 0.05  # how often a running child's output is read and its exit looked for
ENV_PREFIXES = ("SGLANG_", "SGL_", "VLLM_", "FLASHINFER_")
ENV_NAMES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TORCH_CUDA_ARCH_LIST")
# Switches the child always gets, whatever was pasted: no hub, no telemetry, no downloads.
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "SGLANG_USE_MODELSCOPE": "false",
    "VLLM_USE_MODELSCOPE": "False",
    "VLLM_NO_USAGE_STATS": "1",
    "VLLM_DO_NOT_TRACK": "1",
    "DO_NOT_TRACK": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}
ANSWER_KEYS = (
    "schema",
    "engine",
    "engine_version",
    "status",
    "stage",
    "error_type",
    "error",
    "resolved",
    "warnings",
    "reason",
    "seconds",
)


def allowed_env(pasted: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the pasted variables that reach the child, the names of those that do not)."""
    kept, dropped = {}, []
    for name, value in pasted.items():
        if name.startswith(ENV_PREFIXES) or name in ENV_NAMES:
            kept[name] = str(value)
        else:
            dropped.append(name)
    return kept, sorted(dropped)


def driver_path(engine: str) -> str:
    return os.path.join(CHILD_DIR, f"{engine}_driver.py")


def hub_cache() -> Optional[str]:
    """The user's Hugging Face hub cache (read there, offline; the fence refuses writes to it)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return os.path.join(home, "hub")


def absolute_paths(argv: Sequence[str], cwd: str) -> list[str]:
    """The launch arguments with each existing relative path (a model dir, a --config file) made absolute: the
    child works in its temp dir. A value that names nothing here (a hub id, a number) is left as it is."""
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
        if arg.startswith("-") and not eq:
            out.append(arg)
            continue
        if value and not os.path.isabs(value) and os.path.exists(os.path.join(cwd, value)):
            value = os.path.abspath(os.path.join(cwd, value))
        out.append(f"{flag}={value}" if eq else value)
    return out


def child_env(temp_dir: str, pasted: Mapping[str, str], gpu_count: int) -> dict[str, str]:
    def under(*parts: str) -> str:
        path = os.path.join(temp_dir, *parts)
        os.makedirs(path, exist_ok=True)
        return path

    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": under("home"),
        "TMPDIR": under("tmp"),
        "XDG_CACHE_HOME": under("cache"),
        "XDG_CONFIG_HOME": under("config"),
        "XDG_DATA_HOME": under("data"),
        "HF_HOME": under("hf"),
        "TORCH_HOME": under("cache", "torch"),
        "TRITON_CACHE_DIR": under("cache", "triton"),
        "TORCHINDUCTOR_CACHE_DIR": under("cache", "inductor"),
        "CUDA_CACHE_PATH": under("cache", "nv"),
        "VLLM_CACHE_ROOT": under("cache", "vllm"),
        "VLLM_CONFIG_ROOT": under("config", "vllm"),
        "FLASHINFER_WORKSPACE_BASE": under("cache"),
        "SGLANG_CACHE_DIR": under("cache", "sglang"),
        **OFFLINE,
    }
    cache = hub_cache()
    if cache and os.path.isdir(cache):
        env["HF_HUB_CACHE"] = cache
    env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(max(1, gpu_count)))
    env.update(pasted)
    return env


def could_not_ask(engine: str, reason: str, seconds: float = 0.0, **extra: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "schema": SCHEMA,
        "engine": engine,
        "engine_version": None,
        "status": "could_not_ask",
        "stage": None,
        "error_type": None,
        "error": None,
        "resolved": None,
        "warnings": [],
        "reason": reason if reason.startswith("could not ask") else f"could not ask: {reason}",
        "seconds": round(seconds, 3),
    }
    answer.update(extra)
    return answer


def well_formed(answer: Any, engine: str) -> Optional[str]:
    """None for an answer the schema allows; else what is wrong with it."""
    if not isinstance(answer, dict):
        return "the answer is not a JSON object"
    missing = [key for key in ANSWER_KEYS if key not in answer]
    if missing:
        return f"the answer lacks {', '.join(missing)}"
    if answer["schema"] != SCHEMA:
        return f"the answer is of schema {answer['schema']!r}, not {SCHEMA}"
    if answer["engine"] != engine:
        return f"the answer is about {answer['engine']!r}, not {engine}"
    if answer["status"] not in STATUSES:
        return f"the answer's status {answer['status']!r} is none of {', '.join(STATUSES)}"
    if answer["status"] == "accepted" and not isinstance(answer["resolved"], dict):
        return "an acceptance without what was resolved"
    if not isinstance(answer["warnings"], list):
        return "the answer's warnings are not a list"
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "(it printed nothing)"


def _gpu(gpu: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "name": gpu.get("name"),
        "cc": [int(x) for x in gpu["cc"]],
        "memory_mib": int(gpu["memory_mib"]) if gpu.get("memory_mib") else None,
        "count": int(gpu.get("count") or 1),
        **({"host_memory_mib": int(gpu["host_memory_mib"])} if gpu.get("host_memory_mib") else {}),
    }


def _refusal(engine: str, interpreter: str, extra: dict[str, Any]) -> Optional[dict[str, Any]]:
    if engine not in ENGINES:
        return could_not_ask(engine, f"no driver for {engine!r} (only {', '.join(ENGINES)})", **extra)
    driver = driver_path(engine)
    if not os.path.isfile(driver):
        return could_not_ask(engine, f"the {engine} driver is missing ({driver})", **extra)
    if not (os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)):
        return could_not_ask(engine, f"{interpreter} is not an executable file", **extra)
    return None


def _run_child(
    engine: str, interpreter: str, request: dict[str, Any], environment: dict[str, str], timeout: float
) -> tuple[str, Optional[int], str]:
    """Runs the driver on `request` in the temp dir's work/ directory, the way probe/children.py runs every child
    (a session of its own, the last OUTPUT_CAP bytes of its output kept, killed as a process group): ("exited" |
    "timeout" | "no start", its exit status, the tail of what it printed). The request is its stdin from a file,
    so a child that never reads it cannot block us. The child and everything it started are killed before this
    returns, whatever happened."""
    work = os.path.join(request["temp_dir"], "work")
    os.makedirs(work, exist_ok=True)
    request_path = os.path.join(request["temp_dir"], "request.json")
    with open(request_path, "w", encoding="utf-8") as handle:
        json.dump(request, handle)
    output = OutputTail()
    try:
        try:
            with open(request_path, "rb") as stdin:
                process = spawn(
                    [interpreter, "-I", driver_path(engine)],
                    work,
                    stdout=output.write_end,
                    stderr=subprocess.STDOUT,
                    env=environment,
                    stdin=stdin,
                )
        except OSError as exc:
            return "no start", None, f"{interpreter} does not start: {exc}"
        output.started()
        deadline = time.monotonic() + timeout
        timed_out = False
        try:
            while process.poll() is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                OutputTail.wait_readable([output], min(remaining, POLL_S))
                output.read()  # never let it block on a full pipe; keep only the tail
        finally:
            kill_group(process)  # the child and whatever it started, always
        return ("timeout" if timed_out else "exited"), process.returncode, output.text()
    finally:
        output.close()


def ask(
    engine: str,
    argv: Sequence[str],
    gpu: Mapping[str, Any],
    *,
    cuda_version: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    python: Optional[str] = None,
    timeout: float = DEFAULT_TIMEOUT,
    backend_init: bool = True,
    cwd: Optional[str] = None,
) -> dict[str, Any]:
    """The engine's answer (child/SCHEMA.md) about launching it with `argv` (the arguments after
    `launch_server` / `serve`) on the simulated `gpu` ({"name", "cc": [major, minor], "memory_mib", "count"}).
    `env`: the pasted line's variables (only the engines' own reach the child). Never raises for the child's
    failures: they are could-not-ask answers."""
    import sys

    started = time.monotonic()
    interpreter = python or sys.executable
    kept, dropped = allowed_env(env or {})
    extra: dict[str, Any] = {"env": kept, "env_dropped": dropped, "python": interpreter}
    refusal = _refusal(engine, interpreter, extra)
    if refusal is not None:
        return refusal
    with scratch_directory(prefix=f"attn-preflight-{engine}-") as scratch, TerminateAsExit():
        temp_dir = os.path.realpath(scratch)
        answer_path = os.path.join(temp_dir, "answer.json")
        simulated = _gpu(gpu)
        request = {
            "schema": SCHEMA,
            "engine": engine,
            "argv": absolute_paths(argv, cwd or os.getcwd()),
            "env": kept,
            "gpu": simulated,
            "cuda_version": cuda_version,
            "answer_path": answer_path,
            "temp_dir": temp_dir,
            "backend_init": backend_init,
            "parent_pid": os.getpid(),  # fence.tie_to_parent: the driver dies with us, even by SIGKILL
            "deadline_s": timeout + DEADLINE_MARGIN_S,
        }
        how, code, log = _run_child(
            engine, interpreter, request, child_env(temp_dir, kept, simulated["count"]), timeout
        )
        seconds = time.monotonic() - started
        if how != "exited" or code is None:
            why = log if how == "no start" else f"timed out after {timeout:g} s"
            return could_not_ask(engine, why, seconds, log_tail=log[-2000:], **extra)
        return _read_answer(engine, answer_path, code, log, seconds, extra)


def _read_answer(
    engine: str, answer_path: str, code: int, log: str, seconds: float, extra: dict[str, Any]
) -> dict[str, Any]:
    try:
        with open(answer_path, encoding="utf-8") as handle:
            answer = json.load(handle)
    except FileNotFoundError:
        return could_not_ask(
            engine,
            f"the child exited {code} without an answer: {_last_line(log)}",
            seconds,
            log_tail=log[-2000:],
            **extra,
        )
    except (OSError, ValueError) as exc:
        return could_not_ask(engine, f"the child's answer is unreadable: {exc}", seconds, **extra)
    return _checked(engine, answer, log, seconds, extra)


def _checked(engine: str, answer: Any, log: str, seconds: Optional[float], extra: dict[str, Any]) -> dict[str, Any]:
    problem = well_formed(answer, engine)
    if problem:
        return could_not_ask(engine, problem, seconds or 0.0, log_tail=log[-2000:], **extra)
    if seconds is not None:
        answer["seconds"] = round(seconds, 3)
    answer.update(extra)
    if answer["status"] == "could_not_ask":
        answer["log_tail"] = log[-2000:]
        if not str(answer.get("reason") or "").startswith("could not ask"):
            answer["reason"] = f"could not ask: {answer.get('reason') or 'the driver gave no reason'}"
        missing = _MISSING_MODULE.findall(log)
        if missing and f"'{missing[-1]}'" not in answer["reason"]:
            # vLLM imports a model's module in its registry and logs the ImportError, then raises only "failed to
            # be inspected" (Qwen3-VL's module imports transformers' image processor, which needs torchvision):
            # the module missing from the engine's environment is the reason to name.
            answer["reason"] += (
                f" (the engine's environment lacks the module {missing[-1]!r}, which the engine's code imported: "
                "install it in that interpreter's environment)"
            )
    return answer


_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z0-9_.]+)'")


def ask_batch(
    engine: str,
    items: Sequence[Mapping[str, Any]],
    *,
    python: Optional[str] = None,
    item_timeout: float = 120.0,
    cuda_version: Optional[str] = None,
    cwd: Optional[str] = None,
) -> list[dict[str, Any]]:
    """Many configs in one child (bench/ask_engine.py): the engine imported once, one fork per config, each
    answer as `ask` gives it plus its item's "id". `items`: {"id", "argv", "gpu"}. Not for the product: a
    batch shares one child's environment (no per-config variables)."""
    import sys

    interpreter = python or sys.executable
    extra: dict[str, Any] = {"env": {}, "env_dropped": [], "python": interpreter}
    refusal = _refusal(engine, interpreter, extra)
    if refusal is not None:
        return [{**refusal, "id": item.get("id")} for item in items]
    with scratch_directory(prefix=f"attn-preflight-{engine}-batch-") as scratch, TerminateAsExit():
        temp_dir = os.path.realpath(scratch)
        answer_path = os.path.join(temp_dir, "answers.jsonl")
        batch = [
            {
                "id": item.get("id"),
                "argv": absolute_paths(item["argv"], cwd or os.getcwd()),
                "gpu": _gpu(item["gpu"]),
                "cuda_version": item.get("cuda_version", cuda_version),
            }
            for item in items
        ]
        count = max((b["gpu"]["count"] for b in batch), default=1)
        request = {
            "schema": SCHEMA,
            "engine": engine,
            "argv": [],
            "env": {},
            "gpu": batch[0]["gpu"] if batch else {"cc": [9, 0], "count": 1},
            "cuda_version": cuda_version,
            "answer_path": answer_path,
            "temp_dir": temp_dir,
            "batch": batch,
            "item_timeout": item_timeout,
        }
        timeout = 300.0 + item_timeout * len(batch)
        request.update(parent_pid=os.getpid(), deadline_s=timeout + DEADLINE_MARGIN_S)  # as ask's: tied to us
        _how, code, log = _run_child(engine, interpreter, request, child_env(temp_dir, {}, count), timeout)
        try:
            with open(answer_path, encoding="utf-8") as handle:
                lines = [json.loads(line) for line in handle if line.strip()]
        except (OSError, ValueError) as exc:
            why = f"the batch child (exit {code}) gave no answers: {exc}: {_last_line(log)}"
            return [{**could_not_ask(engine, why, **extra), "id": item.get("id")} for item in items]
        return [{**_checked(engine, line, log, None, extra), "id": line.get("id")} for line in lines]
