"""A pasted launch command is parsed, never run: not the server module, not the console script, not a shell.

Everything that could run leaves a mark file when it does: a fake `sglang` package on PYTHONPATH (its
launch_server module and its __init__, which only the live probe's import check may load), fake `sglang` / `vllm` / `python` executables first on
PATH, and shell syntax (`;`, `$(...)`, backticks) inside the pasted text. Each check runs as a real
`python -m attn_preflight` process, then the marks must be absent.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from probe_fakes import make_dist

REPO = Path(__file__).resolve().parents[1]
LLAMA = REPO / "tests" / "fixtures" / "models" / "Llama-3.1-8B-Instruct" / "config.json"


@pytest.fixture
def trap(tmp_path):
    """A directory where anything executed leaves a mark; returns (run, marks)."""
    marks = tmp_path / "marks"
    marks.mkdir()

    def mark(name: str) -> str:
        return f"open({str(marks / name)!r}, 'w').write('ran')\n"

    site = tmp_path / "site"
    make_dist(
        site,
        "sglang",
        "0.5.23",
        {
            "sglang/__init__.py": mark("sglang-imported"),
            "sglang/launch_server.py": mark("sglang.launch_server"),
            "sglang/cli.py": mark("sglang.cli"),
        },
    )
    binaries = tmp_path / "bin"
    binaries.mkdir()
    for program in ("sglang", "vllm", "python", "python3", "torchrun"):
        script = binaries / program
        script.write_text(f"#!/bin/sh\ntouch {marks / ('bin-' + program)}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    model = tmp_path / "m"
    model.mkdir()
    shutil.copy(LLAMA, model / "config.json")
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(binaries), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "attn_preflight", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )

    return run, marks


def no_marks(marks: Path, allowed: tuple[str, ...] = ()) -> None:
    ran = sorted(p.name for p in marks.iterdir() if p.name not in allowed)
    assert ran == [], f"something in the pasted command ran: {ran}"


def test_the_trap_works(trap, tmp_path):
    """Each trap does leave its mark when it is really run (so an absent mark means something)."""
    run, marks = trap
    env = {
        "PATH": os.pathsep.join([str(tmp_path / "bin"), os.environ.get("PATH", "")]),
        "PYTHONPATH": str(tmp_path / "site"),
    }
    subprocess.run(["vllm", "serve", "./m"], env=env, check=True)
    subprocess.run([sys.executable, "-m", "sglang.launch_server", "--model-path", "./m"], env=env, check=True)
    assert {p.name for p in marks.iterdir()} == {"bin-vllm", "sglang-imported", "sglang.launch_server"}


@pytest.mark.parametrize(
    "command",
    [
        [
            "python",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "./m",
            "--attention-backend",
            "fa3",
            "--kv-cache-dtype",
            "mxfp8",
        ],
        ["python3", "-m", "sglang.launch_server", "--model-path", "./m", "--attention-backend", "fa4"],
        ["sglang", "serve", "--model-path", "./m", "--attention-backend", "fa3"],
        ["VLLM_ATTENTION_BACKEND=FLASH_ATTN", "vllm", "serve", "./m", "--tensor-parallel-size", "2"],
        ["env", "SGLANG_FLASHATTENTION_VERSION=4", "python", "-m", "sglang.launch_server", "--model-path", "./m"],
    ],
    ids=["python-m-sglang", "python3-m-sglang", "sglang-serve", "vllm-serve", "env-prefix"],
)
def test_pasted_launch_command_is_parsed_not_run(trap, command):
    run, marks = trap
    done = run("check", "--gpu", "H100", "--format", "json", "--", *command)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["config"]["model"]["name"] == "m"  # it was read: the parse reached the model
    no_marks(marks)


@pytest.mark.parametrize(
    "pasted",
    [
        "python -m sglang.launch_server --model-path ./m --attention-backend fa3; touch MARK",
        "python -m sglang.launch_server --model-path ./m --attention-backend fa3 && vllm serve ./m",
        "python -m sglang.launch_server --model-path $(touch MARK) --attention-backend fa3",
        "python -m sglang.launch_server --model-path `touch MARK` --attention-backend fa3",
        "sh -c 'touch MARK'",
        "bash -c 'python -m sglang.launch_server --model-path ./m'",
        "torchrun --nproc-per-node 8 -m sglang.launch_server --model-path ./m",
    ],
    ids=["semicolon", "and-then", "dollar-paren", "backticks", "sh-c", "bash-c", "torchrun"],
)
def test_shell_syntax_in_a_pasted_string_is_never_interpreted(trap, pasted, tmp_path):
    """A command pasted as one quoted string is split like a shell would split it, but never handed to one."""
    run, marks = trap
    done = run("check", "--gpu", "H100", "--", pasted)
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2)
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    no_marks(marks)
    assert not (tmp_path / "MARK").exists()


def test_live_check_never_runs_the_server_module(trap):
    """On this machine (live probe), the import checks may import `sglang` to see that it loads; the pasted
    command's module, sglang.launch_server, is still never run."""
    run, marks = trap
    done = run("check", "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", "./m")
    assert done.returncode in (0, 1), done.stderr
    assert json.loads(done.stdout)["target"]["kind"] == "live"
    no_marks(marks, allowed=("sglang-imported",))
