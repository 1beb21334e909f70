"""The engine child's harness and fence (probe/engine_ask), and check --ask-engine's findings, without an engine.

The harness is run against stand-in drivers (a file named `<engine>_driver.py` in a temp CHILD_DIR, beside the
real fence.py) that hang, crash, print a traceback, write a bad answer, start a grandchild, or try the network,
programs and writes outside their temp dir; the real SGLang driver is run where sglang is not installed. The
real engines are asked in tests/test_engine_ask_sglang.py.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attn_preflight.check_engine import ENGINE_ANSWER, ENGINE_DISAGREES, engine_findings, request_for, with_engine
from attn_preflight.commands.check import config_from_options, target_from_options
from attn_preflight.probe.engine_ask import harness
from attn_preflight.rules.core.engine import Status
from attn_preflight.rules.core.judge import evaluate
from tests.cli_run import run_cli

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "tests" / "fixtures" / "models"
H200 = {"name": "NVIDIA H200", "cc": [9, 0], "memory_mib": 143771, "count": 8}

PRELUDE = """
import importlib.util, json, os, sys, time
request = json.loads(sys.stdin.read())
spec = importlib.util.spec_from_file_location("fence", os.path.join(os.path.dirname(__file__), "fence.py"))
fence = importlib.util.module_from_spec(spec); spec.loader.exec_module(fence)
def answer(**fields):
    out = {"schema": 1, "engine": request["engine"], "engine_version": "9.9", "status": "accepted",
           "stage": None, "error_type": None, "error": None, "resolved": {}, "warnings": [], "reason": None,
           "seconds": 0.0}
    out.update(fields)
    with open(request["answer_path"], "w") as f:
        json.dump(out, f)
"""


@pytest.fixture
def drivers(tmp_path, monkeypatch):
    """make(body) -> installs a stand-in sglang driver running PRELUDE + body."""
    child = tmp_path / "child"
    child.mkdir()
    shutil.copy(Path(harness.CHILD_DIR) / "fence.py", child / "fence.py")
    monkeypatch.setattr(harness, "CHILD_DIR", str(child))

    def make(body: str) -> Path:
        path = child / "sglang_driver.py"
        path.write_text(PRELUDE + textwrap.dedent(body))
        return path

    return make


def ask(**kwargs):
    kwargs.setdefault("timeout", 60)
    return harness.ask("sglang", ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")], H200, **kwargs)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours is dead
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_an_answer_comes_back_with_the_request_it_was_given(drivers):
    drivers("""
        answer(resolved={"request": request, "cwd": os.getcwd()})
    """)
    got = ask(env={"SGLANG_X": "1"})
    assert got["status"] == "accepted", got
    request = got["resolved"]["request"]
    assert request["schema"] == 1 and request["engine"] == "sglang" and request["gpu"] == H200
    assert request["argv"] == ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")]
    assert request["env"] == {"SGLANG_X": "1"}
    assert got["resolved"]["cwd"].startswith(request["temp_dir"])
    assert not os.path.exists(request["temp_dir"]), "the temp dir is removed after"
    assert got["seconds"] > 0


def test_only_the_engines_variables_reach_the_child(drivers, monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "from-the-parent")
    drivers("""
        answer(resolved={"environ": dict(os.environ), "temp": request["temp_dir"]})
    """)
    pasted = {"SGLANG_ENABLE_X": "1", "VLLM_Y": "2", "FLASHINFER_Z": "3", "CUDA_VISIBLE_DEVICES": "2,3", "AWS_KEY": "s"}
    got = ask(env=pasted)
    environ, temp = got["resolved"]["environ"], got["resolved"]["temp"]
    assert {k: environ[k] for k in ("SGLANG_ENABLE_X", "VLLM_Y", "FLASHINFER_Z")} == {
        "SGLANG_ENABLE_X": "1",
        "VLLM_Y": "2",
        "FLASHINFER_Z": "3",
    }
    assert environ["CUDA_VISIBLE_DEVICES"] == "2,3"
    assert "AWS_KEY" not in environ and "AWS_SECRET_ACCESS_KEY" not in environ
    assert got["env_dropped"] == ["AWS_KEY"]
    assert environ["HF_HUB_OFFLINE"] == "1" and environ["TRANSFORMERS_OFFLINE"] == "1"
    for name in ("HOME", "TMPDIR", "XDG_CACHE_HOME", "HF_HOME", "TRITON_CACHE_DIR", "VLLM_CACHE_ROOT"):
        assert environ[name].startswith(temp), name


def test_the_gpu_count_sets_the_visible_devices_when_nothing_is_pasted(drivers):
    drivers("""
        answer(resolved={"cvd": os.environ.get("CUDA_VISIBLE_DEVICES")})
    """)
    assert ask()["resolved"]["cvd"] == "0,1,2,3,4,5,6,7"


def test_a_hang_is_killed_with_everything_it_started(drivers, tmp_path):
    pids = tmp_path / "pids"
    drivers(f"""
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pids)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
        time.sleep(600)
    """)
    started = time.monotonic()
    got = ask(timeout=5)
    assert time.monotonic() - started < 30
    assert got["status"] == "could_not_ask" and got["reason"] == "could not ask: timed out after 5 s"
    for pid in map(int, pids.read_text().split()):
        assert not _alive(pid), f"process {pid} outlived the ask"


def test_a_grandchild_left_behind_is_killed_too(drivers, tmp_path):
    pids = tmp_path / "pids"
    drivers(f"""
        import subprocess
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pids)!r}, "w").write(str(child.pid))
        answer()
    """)
    assert ask()["status"] == "accepted"
    assert not _alive(int(pids.read_text()))


def test_a_traceback_is_could_not_ask_never_ours(drivers):
    drivers("""
        raise RuntimeError("the engine blew up")
    """)
    got = ask()
    assert got["status"] == "could_not_ask"
    assert got["reason"].startswith("could not ask: the child exited 1 without an answer: RuntimeError: the engine")
    assert "Traceback" in got["log_tail"]


def test_a_module_missing_from_the_engines_environment_is_named(drivers):
    """vLLM 0.33.0's registry logs the ImportError of a model's module and raises only "failed to be inspected"
    (Qwen3-VL: transformers' qwen2_vl image processor imports torchvision, absent from a minimal venv)."""
    drivers("""
        print("ERROR [registry.py:1164] ModuleNotFoundError: No module named 'torchvision'", flush=True)
        answer(status="could_not_ask", reason="needs the real host: Model architectures ['X'] failed to be inspected")
    """)
    got = ask()
    assert got["status"] == "could_not_ask"
    assert "lacks the module 'torchvision'" in got["reason"] and got["reason"].startswith("could not ask: needs")


def test_a_crash_is_could_not_ask(drivers):
    drivers("""
        os.kill(os.getpid(), 9)
    """)
    got = ask()
    assert got["status"] == "could_not_ask" and "exited -9 without an answer" in got["reason"]


@pytest.mark.parametrize(
    "body, why",
    [
        ("open(request['answer_path'], 'w').write('{not json')", "unreadable"),
        ("json.dump([1], open(request['answer_path'], 'w'))", "not a JSON object"),
        ("answer(status='maybe')", "none of accepted, rejected, could_not_ask"),
        ("answer(schema=2)", "schema 2"),
        ("answer(resolved=None)", "an acceptance without what was resolved"),
        ("answer(engine='vllm')", "about 'vllm'"),
    ],
)
def test_a_bad_answer_is_could_not_ask(drivers, body, why):
    drivers(body)
    got = ask()
    assert got["status"] == "could_not_ask" and why in got["reason"], got["reason"]


def test_the_output_kept_is_capped(drivers):
    drivers("""
        sys.stdout.write("x" * 5_000_000); sys.stdout.flush()
        raise SystemExit(3)
    """)
    got = ask()
    assert got["status"] == "could_not_ask" and len(got["log_tail"]) <= 2000


def test_no_interpreter_and_no_driver_are_could_not_ask(tmp_path):
    assert "is not an executable file" in ask(python=str(tmp_path / "nope"))["reason"]
    got = harness.ask("tgi", [], H200)
    assert got["status"] == "could_not_ask" and "no driver for 'tgi'" in got["reason"]


def test_the_fence_refuses_network_programs_and_writes_outside(drivers, tmp_path):
    outside = tmp_path / "outside.txt"
    drivers(f"""
        fence.install(request["temp_dir"])
        import socket, subprocess
        tried = {{}}
        def attempt(name, fn):
            try:
                fn(); tried[name] = "done"
            except fence.FenceError as e:
                tried[name] = "refused"
            except OSError as e:
                tried[name] = "oserror"
        attempt("dns", lambda: socket.getaddrinfo("pypi.org", 443))
        attempt("connect", lambda: socket.create_connection(("203.0.113.7", 443), timeout=2))
        attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)))
        attempt("nvidia-smi", lambda: subprocess.run(["nvidia-smi"]))
        attempt("system", lambda: os.system("true"))
        attempt("write", lambda: open({str(outside)!r}, "w").write("x"))
        attempt("mkdir", lambda: os.mkdir({str(tmp_path / "newdir")!r}))
        attempt("write inside", lambda: open(os.path.join(request["temp_dir"], "ok"), "w").write("x"))
        attempt("libcuda", lambda: __import__("ctypes").CDLL("libcuda.so.1"))
        answer(resolved={{"tried": tried, "events": fence.EVENTS}})
    """)
    got = ask()
    tried = got["resolved"]["tried"]
    assert tried == {
        "dns": "refused",
        "connect": "refused",
        "udp": "refused",
        "nvidia-smi": "refused",
        "system": "refused",
        "write": "refused",
        "mkdir": "refused",
        "write inside": "done",
        "libcuda": "refused",
    }
    assert not outside.exists() and not (tmp_path / "newdir").exists()
    assert len(got["resolved"]["events"]) == 8


def test_the_real_driver_without_the_engine_says_so():
    """This interpreter has no sglang (the product never depends on it): the real driver answers at once."""
    if _has("sglang"):
        pytest.skip("sglang is installed in this interpreter")
    got = harness.ask("sglang", ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")], H200, timeout=60)
    assert got["status"] == "could_not_ask" and got["engine"] == "sglang"
    assert got["reason"] == f"could not ask: sglang is not installed for {sys.executable}"
    assert got["stage"] == "import" and got["fence"] == []


def _has(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_relative_paths_in_the_arguments_are_made_absolute(tmp_path):
    (tmp_path / "model").mkdir()
    (tmp_path / "launch.yaml").write_text("x: 1\n")
    argv = ["--model-path", "model", "--config=launch.yaml", "--page-size", "64", "--served-model-name", "m"]
    assert harness.absolute_paths(argv, str(tmp_path)) == [
        "--model-path",
        str(tmp_path / "model"),
        f"--config={tmp_path / 'launch.yaml'}",
        "--page-size",
        "64",
        "--served-model-name",
        "m",
    ]


# ------------------------------------------------------------------------------------------------------------
# The findings beside the rules (pure)
# ------------------------------------------------------------------------------------------------------------


def _report(argv, gpu="H200"):
    config = config_from_options({"engine": "sglang"}, ["python", "-m", "sglang.launch_server", *argv])
    target = target_from_options(gpu, None, ["sglang==0.5.23"])
    return evaluate(config, target, alternatives=False)


def _answer(status, **fields):
    out = {
        "schema": 1,
        "engine": "sglang",
        "engine_version": "0.5.23",
        "status": status,
        "stage": None,
        "error_type": None,
        "error": None,
        "resolved": None,
        "warnings": [],
        "reason": None,
        "seconds": 9.0,
        "stages": ["parse", "resolve", "backend_selection", "validate", "backend_init"],
    }
    out.update(fields)
    return out


LLAMA_FA3 = ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct"), "--attention-backend", "fa3"]
AGREEING = {
    "attention_backend": "fa3",
    "effective_prefill_attention_backend": "fa3",
    "effective_decode_attention_backend": "fa3",
    "page_size": 1,
    "kv_cache_dtype": "auto",
    "context_length": 131072,
}


def _ids(findings):
    return {(f.rule_id, f.status) for f in findings}


def test_an_acceptance_that_agrees_passes_and_says_what_was_resolved():
    report = _report(LLAMA_FA3)
    assert report.verdict is Status.PASS
    found = engine_findings(report, _answer("accepted", resolved=AGREEING))
    assert _ids(found) == {(ENGINE_ANSWER.id, Status.PASS)}
    assert "backend fa3, page 1, kv auto, context 131072" in found[0].message
    checked = with_engine(report, _answer("accepted", resolved=AGREEING))
    assert checked.verdict is Status.PASS and checked.engine_answer["status"] == "accepted"


def test_an_acceptance_that_resolves_otherwise_is_a_disagreement():
    report = _report(LLAMA_FA3)
    found = engine_findings(report, _answer("accepted", resolved={**AGREEING, "page_size": 64}))
    assert _ids(found) == {(ENGINE_ANSWER.id, Status.PASS), (ENGINE_DISAGREES.id, Status.WARN)}
    disagreement = next(f for f in found if f.rule_id == ENGINE_DISAGREES.id)
    assert "page size: engine 64, rules 1" in disagreement.message


def test_a_rejection_decides_the_verdict_and_names_both_sides():
    report = _report(LLAMA_FA3)
    answer = _answer("rejected", stage="resolve", error_type="ValueError", error="no such thing", hook="handle_x")
    checked = with_engine(report, answer)
    assert checked.verdict is Status.FAIL and checked.exit_code() == 1
    ids = _ids(checked.findings)
    assert (ENGINE_ANSWER.id, Status.FAIL) in ids and (ENGINE_DISAGREES.id, Status.WARN) in ids
    disagreement = next(f for f in checked.findings if f.rule_id == ENGINE_DISAGREES.id)
    assert (
        "rejects it at resolve (ValueError)" in disagreement.message and "failing rules: none" in disagreement.message
    )


def test_a_rejection_the_rules_also_make_is_no_disagreement():
    report = _report(
        ["--model-path", str(MODELS / "DeepSeek-V3"), "--attention-backend", "fa4", "--enable-deterministic-inference"]
    )
    assert report.verdict is Status.FAIL
    answer = _answer("rejected", stage="resolve", error_type="ValueError", error="requires SM100/SM110")
    found = engine_findings(report, answer)
    assert _ids(found) == {(ENGINE_ANSWER.id, Status.FAIL)}


def test_an_acceptance_of_what_a_rule_fails_at_a_stage_the_engine_ran_is_a_disagreement():
    report = _report(
        ["--model-path", str(MODELS / "DeepSeek-V3"), "--attention-backend", "fa4", "--enable-deterministic-inference"]
    )
    found = engine_findings(report, _answer("accepted", resolved=AGREEING))
    disagreement = next(f for f in found if f.rule_id == ENGINE_DISAGREES.id)
    assert "fa4-deterministic-mla-arch" in disagreement.message
    assert with_engine(report, _answer("accepted", resolved=AGREEING)).verdict is Status.FAIL  # the rules still fail


# vLLM: answers recorded from vllm 0.33.0 in its CPU venv (tests/test_engine_ask_vllm.py's cases, and
# bench/results/ask-engine-vllm.md for 0.34.0, the newer release the rules do not know)
def _vllm_report(argv, gpu="H200", release="0.33.0"):
    config = config_from_options({"engine": "vllm"}, ["vllm", "serve", *argv])
    target = target_from_options(gpu, None, [f"vllm=={release}"])
    return evaluate(config, target, alternatives=False)


def _vllm_answer(release="0.33.0", **resolved):
    return _answer(
        "accepted",
        engine="vllm",
        engine_version=release,
        stages=["parse", "config", "validate", "backend_selection", "resolve", "backend_init"],
        resolved={"kv_cache_dtype": "auto", "context_length": 131072, **resolved},
    )


LLAMA = str(MODELS / "Llama-3.1-8B-Instruct")


def test_vllm_answers_that_agree_are_compared_on_backend_block_and_kv():
    cases = [
        (_vllm_report([LLAMA]), _vllm_answer(attention_backend="FLASH_ATTN", page_size=16)),
        (
            _vllm_report([str(MODELS / "DeepSeek-V3"), "-tp", "8"], gpu="8xB200"),
            _vllm_answer(attention_backend="FLASHINFER_MLA", page_size=32, context_length=None),
        ),
        (
            _vllm_report([LLAMA, "--kv-cache-dtype", "nvfp4", "--block-size", "256"], gpu="A100"),
            _vllm_answer(attention_backend="FLASHINFER", page_size=256, kv_cache_dtype="nvfp4", kernel_block_size=64),
        ),
    ]
    for report, answer in cases:
        assert _ids(engine_findings(report, answer)) == {(ENGINE_ANSWER.id, Status.PASS)}, answer["resolved"]


def test_a_vllm_answer_with_another_backend_or_block_size_is_a_disagreement_naming_both():
    report = _vllm_report([LLAMA])
    found = engine_findings(report, _vllm_answer(attention_backend="FLASHINFER", page_size=16))
    disagreement = next(f for f in found if f.rule_id == ENGINE_DISAGREES.id)
    assert "backend: engine FLASHINFER, rules FLASH_ATTN" in disagreement.message
    assert disagreement.engine["rules_resolved"]["page_size"] == 16
    # vllm 0.34.0 (newer than the rules) resolves block 64 by default: judged with the newest knowledge, 16
    newer = _vllm_report([LLAMA], release="0.34.0")
    found = engine_findings(newer, _vllm_answer("0.34.0", attention_backend="FLASH_ATTN", page_size=64))
    disagreement = next(f for f in found if f.rule_id == ENGINE_DISAGREES.id)
    assert disagreement.message.endswith(
        "resolves it otherwise than the rules judged it: page size: engine 64, rules 16"
    )


def test_what_both_resolved_is_compared_when_a_rule_fails_only_after_the_engines_stages():
    report = _vllm_report([LLAMA], gpu="L4")  # vllm-memory-kv-context fails: memory, a stage the engine skips
    assert report.verdict is Status.FAIL
    found = engine_findings(report, _vllm_answer(attention_backend="FLASH_ATTN", page_size=16))
    assert not [f for f in found if f.rule_id == ENGINE_DISAGREES.id]
    found = engine_findings(report, _vllm_answer(attention_backend="FLASH_ATTN", page_size=32))
    assert "page size: engine 32, rules 16" in found[-1].message


def test_a_vllm_release_whose_block_size_is_not_modelled_is_not_compared_on_it():
    report = _vllm_report([LLAMA], release="0.19.0")  # update_block_size_for_backend's era not read before 0.20.0
    found = engine_findings(report, _vllm_answer("0.19.0", attention_backend="FLASH_ATTN", page_size=64))
    assert _ids(found) == {(ENGINE_ANSWER.id, Status.PASS)}
    found = engine_findings(report, _vllm_answer("0.19.0", attention_backend="TRITON_ATTN", page_size=64))
    assert "backend: engine TRITON_ATTN, rules FLASH_ATTN" in found[-1].message


def test_a_given_context_length_and_kv_dtype_are_compared():
    report = _vllm_report([LLAMA, "--max-model-len", "8192"])
    found = engine_findings(report, _vllm_answer(attention_backend="FLASH_ATTN", page_size=16, context_length=4096))
    assert "context length: engine 4096, rules 8192" in found[-1].message
    found = engine_findings(report, _vllm_answer(attention_backend="FLASH_ATTN", page_size=16, kv_cache_dtype="fp8"))
    assert "kv cache dtype: engine fp8, rules auto" in found[-1].message


def test_a_parse_rejection_of_an_unexpanded_shell_variable_is_could_not_ask():
    """sgl-project/sglang@7bc9946:docs/basic_usage/deepseek_v32.md (PD decode command) pastes `--port $PORT`;
    sglang 0.5.23's parser refuses the literal text ("invalid int value: '$PORT'"), which the shell would have
    expanded: unknown, not a rejection of the launch nor a disagreement."""
    report = _report(LLAMA_FA3)
    error = "sglang serve: error: argument --port: invalid int value: '$PORT'"
    checked = with_engine(report, _answer("rejected", stage="parse", error_type="ArgumentError", error=error))
    assert _ids(checked.findings) >= {(ENGINE_ANSWER.id, Status.UNKNOWN)}
    assert ENGINE_DISAGREES.id not in {f.rule_id for f in checked.findings}
    assert "$PORT" in next(f for f in checked.findings if f.rule_id == ENGINE_ANSWER.id).message
    assert checked.verdict is Status.WARN
    error = "sglang serve: error: argument --port: invalid int value: 'eighty'"
    checked = with_engine(report, _answer("rejected", stage="parse", error_type="ArgumentError", error=error))
    assert checked.verdict is Status.FAIL


def test_could_not_ask_is_unknown_never_a_pass():
    report = _report(LLAMA_FA3)
    checked = with_engine(report, _answer("could_not_ask", reason="could not ask: timed out after 5 s", stages=[]))
    assert _ids(checked.findings) >= {(ENGINE_ANSWER.id, Status.UNKNOWN)}
    assert checked.verdict is Status.WARN


def test_the_request_takes_the_pasted_arguments_and_the_targets_gpu():
    command = ["SGLANG_A=1", "HOME=/x", "python", "-m", "sglang.launch_server", *LLAMA_FA3, "--config", "c.yaml"]
    config = config_from_options({"engine": "sglang"}, command[:-2])
    target = target_from_options("8xH200", None)
    request = request_for(config, target, {}, command)
    assert request.engine == "sglang" and request.argv == [*LLAMA_FA3, "--config", "c.yaml"]
    assert request.env == {"SGLANG_A": "1", "HOME": "/x"}  # the harness keeps only SGLANG_A
    assert request.gpu == {"name": "H200", "cc": [9, 0], "memory_mib": request.gpu["memory_mib"], "count": 8}
    assert request.gpu["memory_mib"] > 140_000


def test_the_request_carries_the_hosts_ram_from_the_facts_and_none_for_a_gpu_name(tmp_path):
    facts = json.loads((REPO / "tests" / "fixtures" / "probe-h200.json").read_text())
    facts["host"]["memory_total_mib"] = 2_063_000
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts))
    config = config_from_options({"engine": "vllm", "model": str(MODELS / "Llama-3.1-8B-Instruct")})
    request = request_for(config, target_from_options(None, str(path)), {"model": str(MODELS / "x")}, ())
    assert request.gpu["host_memory_mib"] == 2_063_000
    request = request_for(config, target_from_options("H200", None), {}, ())
    assert "host_memory_mib" not in request.gpu  # the driver assumes one and says so


def test_the_probe_records_the_hosts_ram():
    from attn_preflight.probe.collect import host_facts

    mib = host_facts().memory_total_mib
    assert mib is not None and mib > 256  # this machine's physical RAM, from sysconf


def _vllm_driver_module(monkeypatch):
    import collections
    import importlib.util
    import types

    svmem = collections.namedtuple("svmem", "total available percent used free")
    fake = types.ModuleType("psutil")
    fake.virtual_memory = lambda: svmem(24 << 30, 20 << 30, 16.0, 4 << 30, 18 << 30)  # this machine: 24 GiB
    monkeypatch.setitem(sys.modules, "psutil", fake)
    path = REPO / "probe" / "engine_ask" / "child" / "vllm_driver.py"
    spec = importlib.util.spec_from_file_location("vllm_driver_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, fake


def test_an_assumed_host_the_engine_read_is_said_beside_its_answer():
    said = "host RAM assumed 1280 GiB (2 x the simulated GPUs' memory, at least 64 GiB; ...): vLLM read it (psutil)"
    answer = {**_vllm_answer(attention_backend="FLASH_ATTN", page_size=16), "notes": ["other", said]}
    found = engine_findings(_vllm_report([LLAMA]), answer)
    assert found[0].rule_id == ENGINE_ANSWER.id and found[0].note == said
    assert engine_findings(_vllm_report([LLAMA]), _vllm_answer(attention_backend="FLASH_ATTN"))[0].note == ""


def test_the_vllm_driver_answers_psutil_with_the_simulated_hosts_ram(monkeypatch):
    # vLLM 0.10 - 0.15: CacheConfig.verify_with_parallel_config reads get_cpu_memory() = psutil's total
    driver, psutil = _vllm_driver_module(monkeypatch)
    driver.set_device({"gpu": {"cc": [9, 0], "memory_mib": 81920, "count": 8, "host_memory_mib": 2 << 20}})
    driver.simulate_host_memory()
    memory = psutil.virtual_memory()
    assert memory.total == 2 << 40 and memory.available == (2 << 40) - (4 << 30) and memory.percent == 16.0
    assert not any("host RAM assumed" in n for n in driver.NOTES)
    driver.set_device({"gpu": {"cc": [9, 0], "memory_mib": 81920, "count": 8}})  # none given: assumed, and
    assert not any("host RAM assumed" in n for n in driver.NOTES)  # said once the engine reads it
    assert psutil.virtual_memory().total == 2 * 8 * 81920 << 20
    assert any(n.startswith("host RAM assumed 1280 GiB") for n in driver.NOTES)
    driver.set_device({"gpu": {"cc": [7, 5], "memory_mib": 15360, "count": 1}})
    assert psutil.virtual_memory().total == 64 << 30  # at least 64 GiB


_CUDA_IPC_EAGER = """
import ctypes
BUILT = []
class CudaRTLibrary:  # flashinfer 0.5.2 / 0.6.1 flashinfer/comm/cuda_ipc.py:70-139, 194
    def __init__(self, so_file=None):
        BUILT.append(so_file)
        raise AssertionError("libcudart is not loaded in the current process")
cudart = CudaRTLibrary()
def create_shared_buffer(size):
    return cudart.cudaMalloc(size)
"""
_CUDA_IPC_LAZY = """
class CudaRTLibrary:
    def __init__(self, so_file=None):
        raise AssertionError("built")
class _LazyCudaRTLibrary:  # flashinfer 0.7.2 cuda_ipc.py:231-242
    pass
cudart = _LazyCudaRTLibrary()
"""


def test_a_cuda_runtime_wrapper_built_at_import_is_a_stand_in_that_fails_when_used(monkeypatch, tmp_path):
    import importlib.util

    path = REPO / "probe" / "engine_ask" / "child" / "simulated.py"
    spec = importlib.util.spec_from_file_location("simulated_under_test", path)
    simulated = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(simulated)
    assert "flashinfer.comm.cuda_ipc" in simulated.CUDART_AT_IMPORT
    package = tmp_path / "fi_w2c" / "comm"
    package.mkdir(parents=True)
    (tmp_path / "fi_w2c" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "cuda_ipc.py").write_text(_CUDA_IPC_EAGER)
    (package / "lazy_ipc.py").write_text(_CUDA_IPC_LAZY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in ("fi_w2c", "fi_w2c.comm", "fi_w2c.comm.cuda_ipc", "fi_w2c.comm.lazy_ipc"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(AssertionError, match="libcudart"):  # unpatched: the import itself fails
        __import__("fi_w2c.comm.cuda_ipc")
    monkeypatch.delitem(sys.modules, "fi_w2c.comm.cuda_ipc", raising=False)

    class Refused(Exception):
        pass

    def fail(text):
        raise Refused(text)

    notes: list[str] = []
    simulated.defer_import_time_cudart(fail, notes.append, names=("fi_w2c.comm.cuda_ipc", "fi_w2c.comm.lazy_ipc"))
    simulated.defer_import_time_cudart(fail, notes.append)  # once per process
    assert sum(type(f).__name__ == "_DeferringFinder" for f in sys.meta_path) == 1
    ipc = importlib.import_module("fi_w2c.comm.cuda_ipc")
    assert ipc.BUILT == [] and isinstance(ipc.cudart, simulated.DeferredCudaRT)  # never constructed
    assert ipc.__file__ == str(package / "cuda_ipc.py") and ipc.CudaRTLibrary.__module__ == "fi_w2c.comm.cuda_ipc"
    assert notes == [
        "fi_w2c.comm.cuda_ipc.cudart (a CUDA runtime wrapper built at import) is a stand-in that fails if used"
    ]
    with pytest.raises(Refused, match=r"fi_w2c.comm.cuda_ipc.cudart.cudaMalloc was used"):
        ipc.create_shared_buffer(64)
    assert not hasattr(ipc.cudart, "__wrapped__")  # introspection is no use
    lazy = importlib.import_module("fi_w2c.comm.lazy_ipc")  # the lazy shape loads as it is, unnoted
    assert type(lazy.cudart).__name__ == "_LazyCudaRTLibrary" and len(notes) == 1


def test_without_a_gpu_there_is_nothing_to_simulate():
    config = config_from_options({"engine": "sglang", "model": str(MODELS / "Llama-3.1-8B-Instruct")})
    target = target_from_options(None, str(REPO / "tests" / "fixtures" / "probe-cpu-ci.json"))
    request = request_for(config, target, {"model": str(MODELS / "Llama-3.1-8B-Instruct")}, ())
    assert request.gpu is None and "--gpu" in request.why_no_gpu
    assert request.argv == ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")]


# ------------------------------------------------------------------------------------------------------------
# The command
# ------------------------------------------------------------------------------------------------------------


def test_check_ask_engine_without_the_engine_is_unknown_in_json(tmp_path):
    if _has("sglang"):
        pytest.skip("sglang is installed in this interpreter")
    run = run_cli(
        ["check", "--gpu", "H200", "--ask-engine", "--format", "json", "--", "python", "-m", "sglang.launch_server"]
        + LLAMA_FA3
    )
    assert run.code == 0, run.err
    report = json.loads(run.out)
    assert report["engine_answer"]["status"] == "could_not_ask"
    assert report["engine_answer"]["reason"].startswith("could not ask: sglang is not installed")
    assert report["verdict"] == "warn"
    assert {"rule_id": "engine-answer", "status": "unknown"}.items() <= next(
        f for f in report["findings"] if f["rule_id"] == "engine-answer"
    ).items()


def test_engine_python_needs_ask_engine_and_an_interpreter(tmp_path):
    run = run_cli(["check", "--gpu", "H200", "--engine-python", sys.executable, "--model", "llama-3.1-8b"])
    assert run.code == 2 and "add --ask-engine" in run.err
    run = run_cli(["check", "--gpu", "H200", "--ask-engine", "--engine-python", str(tmp_path / "no"), "--model", "x"])
    assert run.code == 2 and "not an executable file" in run.err and "Traceback" not in run.err


def test_check_without_ask_engine_never_loads_the_harness():
    import subprocess

    code = (
        "import sys; from attn_preflight.cli import main\n"
        "try:\n    main(['check', '--gpu', 'H100', '--model', 'llama-3.1-8b'])\nexcept SystemExit: pass\n"
        "bad = [m for m in sys.modules if 'engine_ask' in m or m.endswith('check_engine')]\n"
        "print(bad)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def test_the_table_names_who_was_asked_and_the_json_carries_the_answer():
    from attn_preflight.render.findings import render_report

    answer = _answer(
        "rejected",
        stage="resolve",
        error_type="ValueError",
        error="no such thing",
        sim={"name": "NVIDIA H200"},
        python="/venv/bin/python",
        stages=["parse", "resolve"],
    )
    checked = with_engine(_report(LLAMA_FA3), answer)
    text = render_report(checked, "table")
    assert "engine: sglang 0.5.23 rejected at resolve on a simulated NVIDIA H200 (asked: parse, resolve; 9.0 s" in text
    assert "engine-answer" in text and "verdict: FAIL" in text
    assert json.loads(render_report(checked, "json"))["engine_answer"]["error"] == "no such thing"
    assert "engine_answer" not in json.loads(render_report(_report(LLAMA_FA3), "json"))


def test_the_engines_own_arguments_are_the_pasted_ones_as_written():
    from attn_preflight.rules.core.launch_line import engine_arguments

    engine, argv, env = engine_arguments(
        ["SGLANG_X=1 PATH=/p sglang serve ./m --config c.yaml --attention-backend fa3"]
    )
    assert (engine, argv, env) == (
        "sglang",
        ["--model-path", "./m", "--config", "c.yaml", "--attention-backend", "fa3"],
        {"SGLANG_X": "1", "PATH": "/p"},
    )
    engine, argv, _ = engine_arguments(
        ["python", "-m", "vllm.entrypoints.cli.main", "serve", "m", "--block-size", "16"]
    )
    assert (engine, argv) == ("vllm", ["m", "--block-size", "16"])


@pytest.mark.parametrize("check_id", ["engine-answer", "engine-disagrees"])
def test_explain_answers_for_the_engine_findings(check_id):
    run = run_cli(["explain", check_id])
    assert run.code == 0 and "reported by check --ask-engine" in run.out
    assert json.loads(run_cli(["explain", check_id, "--format", "json"]).out)["reported_by"] == "check --ask-engine"


# A release the driver was never written against: a stand-in sglang (and torch) in a venv of their own.
FAKE_TORCH = """
import types
version = types.SimpleNamespace(cuda=None, hip=None)
cuda = types.SimpleNamespace()
backends = types.SimpleNamespace()
_C = types.SimpleNamespace()
"""
FAKE_SERVER_ARGS = """
import argparse, dataclasses
from typing import Optional

@dataclasses.dataclass
class ServerArgs:
    model_path: str = ""
    attention_backend: Optional[str] = None
    page_size: Optional[int] = None
    kv_cache_dtype: str = "auto"

    def __post_init__(self):
        import torch
        major = torch.cuda.get_device_capability()[0]
        if self.attention_backend == "fa9" and major < 12:
            raise ValueError(f"fa9 needs SM120, not SM{major}0")
        if self.attention_backend is None:
            self.attention_backend = "fa9" if major >= 12 else "triton"
        if self.page_size is None:
            self.page_size = 64 if self.attention_backend == "fa9" else 1

def prepare_server_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--attention-backend", choices=["triton", "fa9"])
    parser.add_argument("--page-size", type=int)
    return ServerArgs(**{k: v for k, v in vars(parser.parse_args(argv)).items()})
"""


@pytest.fixture
def unknown_release(tmp_path):
    import subprocess
    import sysconfig

    from tests.probe_fakes import make_dist

    def make(server_args: str) -> str:
        venv = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        site = venv / "lib" / f"python{version}" / "site-packages"
        assert site.is_dir(), sysconfig.get_paths()
        make_dist(site, "torch", "9.0.0", {"torch/__init__.py": FAKE_TORCH})
        files = {"sglang/__init__.py": "", "sglang/srt/__init__.py": "", "sglang/srt/server_args.py": server_args}
        make_dist(site, "sglang", "1.0.0", files)
        return str(venv / "bin" / "python")

    return make


def test_a_release_never_seen_is_tried_not_refused(unknown_release):
    python = unknown_release(FAKE_SERVER_ARGS)
    model = ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")]
    b200, rtx = {**H200, "cc": [10, 0]}, {**H200, "cc": [12, 0]}
    rejected = harness.ask("sglang", [*model, "--attention-backend", "fa9"], b200, python=python, timeout=60)
    assert rejected["engine_version"] == "1.0.0" and rejected["shape"] == "post_init"
    assert (rejected["status"], rejected["stage"], rejected["error"]) == (
        "rejected",
        "resolve",
        "fa9 needs SM120, not SM100",
    )
    assert rejected["hook"] == "__post_init__"
    accepted = harness.ask("sglang", model, rtx, python=python, timeout=60)
    assert accepted["status"] == "accepted", accepted.get("reason")
    assert (accepted["resolved"]["attention_backend"], accepted["resolved"]["page_size"]) == ("fa9", 64)
    assert "backend_init" not in accepted["stages"]  # this release has no attention registry: not claimed
    parsed = harness.ask("sglang", [*model, "--attention-backend", "fa3"], rtx, python=python, timeout=60)
    assert (parsed["status"], parsed["stage"], parsed["error_type"]) == ("rejected", "parse", "ArgumentError")


def test_a_release_whose_internals_differ_is_could_not_ask(unknown_release):
    python = unknown_release("def launch(argv):\n    pass\n")
    got = harness.ask("sglang", ["--model-path", str(MODELS / "Llama-3.1-8B-Instruct")], H200, python=python)
    assert got["status"] == "could_not_ask" and got["engine_version"] == "1.0.0"
    assert got["reason"] == "could not ask: sglang.srt.server_args has no prepare_server_args, ServerArgs"


FENCE = REPO / "probe" / "engine_ask" / "child" / "fence.py"
TIED_DRIVER = """
import importlib.util, os, sys, time
spec = importlib.util.spec_from_file_location("fence", sys.argv[1])
fence = importlib.util.module_from_spec(spec); spec.loader.exec_module(fence)
fence.tie_to_parent(int(sys.argv[2]) if sys.argv[2] != "0" else None, float(sys.argv[3]))
print(os.getpid(), flush=True)
time.sleep(120)
"""


def test_a_driver_dies_with_a_harness_killed_by_sigkill(tmp_path):
    """The harness process (here a stand-in parent) is SIGKILLed while its driver runs: the driver goes too."""
    import signal
    import subprocess

    pid_file = tmp_path / "driver.pid"
    harness_stand_in = (
        "import subprocess, sys, os, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', {TIED_DRIVER!r}, {str(FENCE)!r}, str(os.getpid()), '600'],"
        " stdout=subprocess.PIPE, text=True)\n"
        f"open({str(pid_file)!r}, 'w').write(child.stdout.readline())\n"
        "time.sleep(120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", harness_stand_in])
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        driver = int(pid_file.read_text())
        assert _alive(driver)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(driver) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(driver), "the driver outlived the harness that started it"
    finally:
        parent.kill()


def test_a_driver_ends_itself_at_its_deadline(tmp_path):
    import subprocess

    started = time.monotonic()
    driver = subprocess.run(
        [sys.executable, "-c", TIED_DRIVER, str(FENCE), "0", "1"], capture_output=True, text=True, timeout=60
    )
    assert driver.returncode == 3 and time.monotonic() - started < 30


def test_the_harness_tells_the_driver_its_parent_and_a_deadline_past_its_timeout(drivers):
    drivers("""
        answer(resolved={"parent_pid": request["parent_pid"], "deadline_s": request["deadline_s"]})
    """)
    got = ask(timeout=40)
    assert got["resolved"] == {"parent_pid": os.getpid(), "deadline_s": 40 + harness.DEADLINE_MARGIN_S}


# ------------------------------------------------------------------ the harness killed: nothing left behind

# A stand-in tool: asks through the harness with the stand-in driver in argv[1]'s directory, its temp dirs in
# TMPDIR (the test's), and waits there.
ASKING_TOOL = """
import sys
from attn_preflight.probe.engine_ask import harness
harness.CHILD_DIR = sys.argv[1]
harness.ask("sglang", [], {"name": "NVIDIA H200", "cc": [9, 0], "memory_mib": 143771, "count": 1}, timeout=300)
"""
# The driver hangs, having started a grandchild of its own that would sleep 600 s; both write their pids.
HANGING_DRIVER = """
import subprocess
fence.tie_to_parent(request["parent_pid"], request["deadline_s"])
helper = subprocess.Popen(["sleep", "600"])
with open({pids!r}, "w") as out:
    out.write(f"{{os.getpid()}} {{helper.pid}}")
time.sleep(600)
"""


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP", "SIGQUIT", "SIGKILL"])
def test_a_harness_ended_by_a_signal_leaves_no_driver_no_grandchild_and_no_temp_dir(drivers, tmp_path, signum):
    import signal
    import subprocess

    pids, temp = tmp_path / "pids", tmp_path / "tmp"
    temp.mkdir()
    driver = drivers(HANGING_DRIVER.format(pids=str(pids)))
    env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(REPO)}
    tool = subprocess.Popen([sys.executable, "-c", ASKING_TOOL, str(driver.parent)], env=env, stderr=subprocess.PIPE)
    started: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline and tool.poll() is None, "the driver never started"
            time.sleep(0.05)
        started = [int(pid) for pid in pids.read_text().split()]
        assert all(_alive(pid) for pid in started) and len(list(temp.iterdir())) == 1
        tool.send_signal(getattr(signal, signum))
        _, err = tool.communicate(timeout=60)
        assert b"Traceback" not in err, err
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in started) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(pid) for pid in started), "the driver or what it started outlived the tool"
        if signum == "SIGKILL":  # nothing could remove it; the next run's sweep does
            assert len(list(temp.iterdir())) == 1
            drivers("answer()")
            done = subprocess.run([sys.executable, "-c", ASKING_TOOL, str(driver.parent)], env=env, timeout=60)
            assert done.returncode == 0
        assert list(temp.iterdir()) == []
    finally:  # what a failing run left behind, by pid: this test's own processes
        tool.kill()
        for pid in filter(_alive, started):
            os.kill(pid, 9)
