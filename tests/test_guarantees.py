"""Attacks of issue 24 (the guarantees' second round), each through the real CLI in a subprocess where the process
itself is under attack (its streams, its signals, its children, the files it writes).

Each test failed on the code before its fix. The property is the README's: a result (exit 0/1) or one error
line with exit 2, never a traceback, a hang, a clobbered file, a leftover process, an unknown read as a pass,
or outside text acting on the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_attacks import GEMMA, SGLANG_FACTS, VERBS, assert_one_error_line, attn_preflight

REPO = Path(__file__).resolve().parents[1]

# every verb, and what click itself prints (help, version): the earlier suites covered only the verbs
ALL = [*VERBS, ["models"], ["models", "--format", "json"], ["--help"], ["--version"], ["check", "--help"], []]
LISTINGS = [["models"], ["--help"], ["--version"], ["rules"], ["gpus"], ["check", "--help"], []]


def ids(argv) -> str:
    if not isinstance(argv, list):
        return str(argv)
    return " ".join(map(str, argv))[:40] or "(bare)"


# ------------------------------------------------------------------------------- streams that cannot be written


@pytest.mark.parametrize("argv", ALL, ids=ids)
def test_stdout_on_dev_full_is_one_error_line_for_every_verb_help_and_version(argv):
    with open("/dev/full", "w") as full:
        done = attn_preflight(*argv, stdout=full)
    assert_one_error_line(done, "cannot write to stdout", "No space left on device")


@pytest.mark.parametrize("argv", ALL, ids=ids)
def test_closed_stdout_is_the_same_error_for_every_verb(argv):
    done = attn_preflight(*argv, stdout=None, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert_one_error_line(done, "stdout is closed")


@pytest.mark.parametrize("argv", LISTINGS, ids=ids)
def test_a_reader_that_went_away_never_turns_a_listing_into_a_failure(argv):
    reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
    reader.wait()
    done = attn_preflight(*argv, stdout=reader.stdin)
    reader.stdin.close()
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.parametrize("stderr", ["full", "closed"])
@pytest.mark.parametrize(
    "argv, code",
    [
        (["check", "--gpu", "H999"], 2),  # an input error stays 2 when it cannot be told
        (["check", "--gpu", "H100", "--nonsense"], 2),
        (["check", "--gpu", "H100", "--kv-cache-dtype", "mxfp8"], 1),
        (["check", "--gpu", "H100"], 0),
        (["fleet", SGLANG_FACTS, "/nonexistent/x.json"], 2),
        (["fleet", SGLANG_FACTS, "--format", "json"], 1),  # its verdict: fail
        (["report", "--facts", SGLANG_FACTS, "-o", "{tmp}/r.html"], 0),  # its "wrote FILE" line cannot be written
        (["probe", "--no-imports"], 0),
    ],
    ids=ids,
)
def test_an_unwritable_stderr_keeps_the_exit_code_and_the_result(argv, code, stderr, tmp_path):
    argv = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "attn_preflight", *argv],
            stdout=subprocess.PIPE,
            stderr=full if stderr == "full" else None,
            preexec_fn=None if stderr == "full" else lambda: os.close(2),
            env={**os.environ, "PYTHONPATH": str(REPO)},
            timeout=120,
        )
    assert done.returncode == code
    assert code == 2 or done.stdout or (tmp_path / "r.html").is_file()  # the result is not lost


# ------------------------------------------------------------------------------------------- -o FILE


def test_a_failed_run_never_clobbers_an_earlier_report(tmp_path):
    out = tmp_path / "report.txt"
    assert attn_preflight("check", "--gpu", "H100", "-o", out).returncode == 0
    good = out.read_text()
    # the run fails while writing: a file-size limit smaller than the report
    done = attn_preflight(
        "check",
        "--gpu",
        "H100",
        "--format",
        "json",
        "-o",
        out,
        preexec_fn=lambda: __import__("resource").setrlimit(__import__("resource").RLIMIT_FSIZE, (100, 100)),
    )
    assert_one_error_line(done, f"cannot write --output {out}")
    assert out.read_text() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt"]  # no temporary file left


def test_output_through_a_link_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert attn_preflight("check", "--gpu", "H100", "-o", link).returncode == 0
    assert link.is_symlink() and "verdict: PASS" in real.read_text()


def test_output_to_a_device_is_written_in_place(tmp_path):
    done = attn_preflight("check", "--gpu", "H100", "-o", "/dev/null")
    assert done.returncode == 0 and done.stderr == ""
    assert Path("/dev/null").is_char_device()


def test_bytes_that_are_not_utf8_reach_an_output_file_escaped(tmp_path):
    model = tmp_path / b"m\xff\xfe".decode("utf-8", "surrogateescape")
    model.mkdir()
    (model / "config.json").write_text(GEMMA.read_text())
    out = tmp_path / "out.json"
    env = {"SGLANG_X": b"v\xff".decode("utf-8", "surrogateescape"), "LANG": "C.UTF-8"}
    for argv in (
        ["probe", "--no-imports", "--format", "json", "-o", out],
        ["check", "--gpu", "H100", "--model", model, "--format", "json", "-o", out],
        ["check", "--gpu", "H100", "--format", "json", "-o", out, "--", "vllm", "serve", model, "--x\udcff", "1"],
        ["check", "--gpu", "H100", "-o", out, "--", "python", "-m", "sglang.launch_server", "--model-path", model],
        ["check", "--facts", SGLANG_FACTS, "--model", model, "--format", "markdown", "-o", out],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "attn_preflight", *[os.fsencode(a) for a in map(str, argv)]],
            capture_output=True,
            env={
                **os.environ,
                "PYTHONPATH": str(REPO),
                **{k: v.encode("utf-8", "surrogateescape") for k, v in env.items()},
            },
            timeout=120,
        )
        assert b"Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 1), (argv, done.stderr)
        text = out.read_bytes().decode("utf-8")  # valid UTF-8, whatever the bytes were
        if "json" in argv:
            json.loads(text)


# ------------------------------------------------------------------------------------------- terminal injection

# colour that fakes a PASS, an OSC window title, a one-byte CSI (C1), a right-to-left override and an isolate
PAYLOAD = "X\x1b[32mPASS\x1b[0m\x1b]0;owned\x07\x9b2J\u202eevil\u2066Y"
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


def injected_facts(tmp_path: Path) -> Path:
    facts = json.loads(SGLANG_FACTS.read_text())
    facts["host"]["hostname"] = "node" + PAYLOAD
    facts["gpus"]["devices"][0]["name"] = "NVIDIA H200" + PAYLOAD
    facts["gpus"]["error"] = "NVML" + PAYLOAD
    library = next(lib for lib in facts["libraries"] if lib["key"] == "torch")
    library["import_health"] = {"module": "torch", "status": "error", "error": "ImportError: " + PAYLOAD}
    path = tmp_path / "node.json"
    path.write_text(json.dumps(facts))
    return path


def test_outside_text_never_acts_on_the_terminal_in_tables_markdown_and_error_lines(tmp_path):
    facts = injected_facts(tmp_path)
    model = tmp_path / ("model" + PAYLOAD)
    model.mkdir()
    config = json.loads(GEMMA.read_text())
    config["architectures"] = ["Gemma2ForCausalLM" + PAYLOAD]
    (model / "config.json").write_text(json.dumps(config))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text(json.dumps({**config, "head_dim": PAYLOAD}))
    for argv in (
        ["check", "--facts", facts],
        ["check", "--facts", facts, "--format", "markdown"],
        ["check", "--facts", facts, "--model", model],
        ["check", "--gpu", "H100", "--model", model, "--format", "markdown"],
        ["check", "--gpu", "H100", "--model", bad],  # the error line quotes the value
        ["check", "--gpu", "H100" + PAYLOAD],
        ["explain", "x" + PAYLOAD],
        ["fleet", facts],
        ["fleet", facts, "--format", "markdown"],
        ["check", "--gpu", "H100", "--", "vllm", "serve", "m" + PAYLOAD, "--bogus" + PAYLOAD, "1"],
    ):
        done = attn_preflight(*argv)
        assert "Traceback" not in done.stderr
        shown = done.stdout + done.stderr
        assert not any(raw in shown for raw in RAW), (argv, shown[-800:])
    assert "\\u202eevil" in attn_preflight("fleet", facts).stdout  # spelled out, not dropped


def strings(data) -> list[str]:
    if isinstance(data, dict):
        return [s for value in data.values() for s in strings(value)]
    if isinstance(data, list):
        return [s for value in data for s in strings(value)]
    return [data] if isinstance(data, str) else []


def test_json_keeps_outside_strings_exact_and_html_shows_them_inert(tmp_path):
    facts = injected_facts(tmp_path)
    done = attn_preflight("check", "--facts", facts, "--format", "json")
    assert not any(raw in done.stdout for raw in RAW)  # escaped as JSON escapes ...
    assert any(PAYLOAD in text for text in strings(json.loads(done.stdout)))  # ... that read back exactly
    html = tmp_path / "r.html"
    assert attn_preflight("report", "--facts", facts, "-o", html).returncode == 0
    text = html.read_text()
    assert not any(raw in text for raw in RAW) and "&lt;" not in PAYLOAD


# ------------------------------------------------------------------------------ absurd numbers and nesting


def absurd_values() -> list[str]:
    return [
        "9" * 5000,  # past Python's int-string limit (4,300 digits)
        "-" + "9" * 4301,
        "{" + '"a": {' * 5000 + "}" * 5001,
        '{"a": ' + "[" * 100000 + "]" * 100000 + "}",
        '{"num_speculative_tokens": ' + "9" * 5000 + "}",
        '{"a": 1e999999}',
    ]


@pytest.mark.parametrize("value", absurd_values(), ids=lambda v: v[:12])
def test_absurd_numbers_and_nesting_in_config_files_and_json_arguments(tmp_path, value):
    from cli_run import assert_clean_outcome, run_cli

    for key in ("page_size", "block_size", "x"):
        (tmp_path / f"{key}.yaml").write_text(f"{key}: {value}\n")
    argvs = [
        ["--", "python", "-m", "sglang.launch_server", "--config", str(tmp_path / "page_size.yaml")],
        ["--", "vllm", "serve", "m", "--config", str(tmp_path / "x.yaml")],
        ["--", "python", "-m", "sglang.launch_server", "--dllm-algorithm-config", str(tmp_path / "block_size.yaml")],
        *(
            ["--", "vllm", "serve", "m", flag, value]
            for flag in ("--attention-config", "--speculative-config", "--compilation-config.x", "--hf-overrides")
        ),
        *(
            ["--", "python", "-m", "sglang.launch_server", flag, value]
            for flag in ("--radix-eviction-policy-config", "--cuda-graph-config", "--json-model-override-args")
        ),
    ]
    for argv in argvs:
        argv = ["check", "--gpu", "H100", "--model", "llama-3.1-8b", *argv]
        assert_clean_outcome(run_cli(argv), argv)


# ------------------------------------------------------------------------------------------ unknown as pass


@pytest.mark.parametrize("value", [8192.0, "8192", 8192.5, True, -1, [8192], {"a": 1}], ids=repr)
@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_a_max_position_embeddings_that_is_not_an_integer_is_unknown_never_a_pass(tmp_path, value, engine):
    from cli_run import check_json, finding

    config = json.loads(GEMMA.read_text())
    config["max_position_embeddings"] = value
    (tmp_path / "config.json").write_text(json.dumps(config))
    run, report = check_json(["--gpu", "H100", "--model", str(tmp_path), "--engine", engine])
    assert report is not None, run.err
    rule_id = "memory-kv-context" if engine == "sglang" else "vllm-memory-kv-context"
    kv = finding(report, rule_id)
    assert kv["status"] == "unknown" and "max_position_embeddings" in kv["message"], kv
    assert report["verdict"] != "pass"
    # the same model with the context given: sized as usual
    context = "--context-length" if engine == "sglang" else "--max-model-len"
    run, report = check_json(["--gpu", "H100", "--model", str(tmp_path), "--engine", engine, context, "4096"])
    assert finding(report, rule_id)["status"] == "pass", run.err


@pytest.mark.parametrize("version", ["1!0.5.9", "1!0.1", "2!0.5.23"])
def test_a_pep440_epoch_version_is_newer_than_known(version):
    from cli_run import check_json, finding

    run, report = check_json(["--gpu", "H100", "--engine-version", f"sglang=={version}"])
    assert report is not None, run.err
    engine = finding(report, "general-engine-version")
    assert engine["status"] == "warn" and "newer than" in engine["message"], engine
    assert report["verdict"] != "pass"


def test_a_report_reached_under_two_names_by_a_hard_link_is_one_node(tmp_path):
    from cli_run import run_cli

    report = tmp_path / "node.json"
    report.write_text(SGLANG_FACTS.read_text())
    os.link(report, tmp_path / "same.json")
    (tmp_path / "other").mkdir()
    os.link(report, tmp_path / "other" / "again.json")
    run = run_cli(["fleet", str(tmp_path), str(tmp_path / "other"), "--format", "json"])
    assert json.loads(run.out)["nodes"] == 1, run.err
    copy = tmp_path / "copy.json"  # a copy is another node's report: two nodes
    copy.write_text(SGLANG_FACTS.read_text())
    assert json.loads(run_cli(["fleet", str(tmp_path), "--format", "json"]).out)["nodes"] == 2


# --------------------------------------------------------------------------------------- the import cache


def probe_libraries(tmp_path: Path, env: dict) -> dict:
    done = attn_preflight("probe", "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return {lib["key"]: lib["health"] for lib in json.loads(done.stdout)["libraries"]}


def cache_env(tmp_path: Path) -> dict:
    return {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path / 'site'}",
    }


@pytest.mark.parametrize(
    "replaced",
    ["quack/__init__.py", "quack/lib/_C.cpython-311-x86_64-linux-gnu.so", "quack_ext.cpython-311-x86_64-linux-gnu.so"],
)
def test_a_library_replaced_in_place_is_checked_again(tmp_path, replaced):
    from probe_fakes import make_dist

    (tmp_path / "tmp").mkdir()
    files = {
        "quack/__init__.py": "import os\nif os.path.getsize(os.path.join(os.path.dirname(__file__), '..', "
        f"{replaced!r})) > 1000:\n    raise ImportError('undefined symbol: _ZN3c10')\n",
        "quack/lib/_C.cpython-311-x86_64-linux-gnu.so": "elf",
        "quack_ext.cpython-311-x86_64-linux-gnu.so": "elf",
    }
    make_dist(tmp_path / "site", "quack-kernels", "0.6.5", files)
    env = cache_env(tmp_path)
    first = probe_libraries(tmp_path, env)["quack"]
    assert first["status"] == "ok" and not first["cached"]
    assert probe_libraries(tmp_path, env)["quack"]["cached"]
    # same dist-info, same version: another build copied over one file (a `pip install --no-deps` of a
    # different wheel of the same version, a hand-built .so)
    (tmp_path / "site" / replaced).write_text("x" * 2000 + (tmp_path / "site" / replaced).read_text())
    again = probe_libraries(tmp_path, env)["quack"]
    assert again["status"] == "error" and not again["cached"], again
    (cache,) = (tmp_path / "cache" / "attn-preflight").glob("imports-*.json")
    assert sum(json.loads(key)["module"] == "quack" for key in json.loads(cache.read_text())) == 1


@pytest.mark.parametrize(
    "failure",
    [
        "raise MemoryError()",
        "raise OSError(12, 'Cannot allocate memory')",
        'raise RuntimeError("can\'t start new thread")',
        "raise OSError(24, 'Too many open files')",
        "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",  # what the OOM killer does
        "import os, signal; os.kill(os.getpid(), signal.SIGXCPU)",
    ],
)
def test_a_failure_for_want_of_a_resource_is_not_kept_as_the_librarys_state(tmp_path, failure):
    from probe_fakes import make_dist

    (tmp_path / "tmp").mkdir()
    make_dist(tmp_path / "site", "quack-kernels", "0.6.5", {"quack/__init__.py": failure + "\n"})
    env = cache_env(tmp_path)
    assert probe_libraries(tmp_path, env)["quack"]["status"] in ("error", "crashed")
    again = probe_libraries(tmp_path, env)["quack"]  # the same files: only the cache could answer at once
    assert not again["cached"], again


def test_a_noisy_library_cannot_fill_the_temp_directory(tmp_path):
    from probe_fakes import make_dist

    (tmp_path / "tmp").mkdir()
    noisy = (
        "import sys\nfor _ in range(2000):\n    sys.stdout.write('x' * 100000)\nraise ImportError('after the noise')\n"
    )
    make_dist(tmp_path / "site", "quack-kernels", "0.6.5", {"quack/__init__.py": noisy})
    make_dist(tmp_path / "site", "triton", "3.3.0", {"triton/__init__.py": ""})
    env = {**cache_env(tmp_path), "XDG_CACHE_HOME": ""}
    watcher_stop = []
    largest = [0]

    import threading

    def watch():
        while not watcher_stop:
            total = 0
            for root, _, files in os.walk(tmp_path / "tmp"):
                for name in files:
                    try:
                        total += os.path.getsize(os.path.join(root, name))
                    except OSError:
                        pass
            largest[0] = max(largest[0], total)
            time.sleep(0.02)

    thread = threading.Thread(target=watch)
    thread.start()
    try:
        health = probe_libraries(tmp_path, env)
    finally:
        watcher_stop.append(True)
        thread.join()
    assert health["quack"]["status"] == "error" and "after the noise" in health["quack"]["error"]
    assert health["triton"]["status"] == "ok"
    assert largest[0] < 1 << 20, f"{largest[0]} bytes written under TMPDIR for 200 MB of output"


# ------------------------------------------------------------------------------------------ size limits


def bench_inputs():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_inputs", REPO / "bench" / "bench_inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("kind", sorted(bench_inputs().KINDS))
def test_every_input_kind_at_its_limit_ends_in_a_result_in_seconds(tmp_path, kind):
    from cli_run import assert_clean_outcome, run_cli

    _, limit, _, make = bench_inputs().KINDS[kind]
    argv = [str(a) for a in make(str(tmp_path), limit)]
    started = time.monotonic()
    run = run_cli(argv)
    assert_clean_outcome(run, argv[:8])
    assert run.code in (0, 1), run.err[-500:]
    assert time.monotonic() - started < 60, "linear work at the limit takes seconds (bench/bench_inputs.py)"


def test_the_facts_model_enforces_the_stated_gpu_limit():
    from attn_preflight.probe import facts, limits

    assert facts.MAX_GPUS == limits.MAX_GPUS


def test_one_past_each_limit_is_one_error_line_before_parsing(tmp_path):
    from cli_run import run_cli

    from attn_preflight.probe import limits

    def refused(argv, *words):
        run = run_cli([str(a) for a in argv])
        assert run.code == 2 and len(run.err_lines) == 1, (argv[:6], run.err[-300:])
        for word in words:
            assert word in run.err_lines[0], run.err_lines[0]

    sglang = ["--", "python", "-m", "sglang.launch_server"]
    refused(["check", "--gpu", "H100", *sglang, *["--x"] * (limits.MAX_COMMAND_TOKENS - 2)], "more than 1,024")
    refused(["check", "--gpu", "H100", *sglang, "--served-model-name", "m" * (limits.MAX_TOKEN_CHARS + 1)], "65,536")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(GEMMA.read_text() + " " * limits.MAX_JSON_BYTES)
    refused(["check", "--gpu", "H100", "--model", model], "larger than 16 MiB")
    facts = json.loads(SGLANG_FACTS.read_text())
    facts["gpus"]["devices"] *= limits.MAX_GPUS + 1
    (tmp_path / "facts.json").write_text(json.dumps(facts))
    refused(["check", "--facts", tmp_path / "facts.json"], "1,025 GPUs, more than 1,024")
    refused(["fleet", tmp_path / "facts.json"], "1,025 GPUs")
    (tmp_path / "serve.yaml").write_text("a: 1\n" + "#" * limits.MAX_YAML_BYTES)
    refused(["check", "--gpu", "H100", *sglang, "--config", tmp_path / "serve.yaml"], "larger than 1024 KiB")
    keys = "".join(f"key-{i}: {i}\n" for i in range(limits.MAX_CONFIG_KEYS + 1))
    (tmp_path / "keys.yaml").write_text(keys)
    refused(["check", "--gpu", "H100", *sglang, "--config", tmp_path / "keys.yaml"], "1,025 keys, more than 1,024")
    (tmp_path / "deep.yaml").write_text("".join(" " * i + f"k{i}:\n" for i in range(200)))
    refused(["check", "--gpu", "H100", *sglang, "--config", tmp_path / "deep.yaml"], "nested more than 64")
    many = tmp_path / "many"
    many.mkdir()
    for i in range(limits.MAX_FLEET_REPORTS + 1):
        (many / f"{i}.json").write_text("")  # refused by their number, before any is read
    refused(["fleet", many], "more than 2,048 reports")


# ------------------------------------------------------------------------------- wheel scans: hostile files


def _hostile_reader_run(path: str) -> str:
    """module_archs(path) in a child with a deadline and an address-space cap (a read that allocates what a header
    claims, or a loop that never ends, shows as a kill): 'ok ...' or 'error <reason>'."""
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from attn_preflight.probe.fatbin import FatbinError, module_archs\n"
        "try:\n"
        "    print('ok', module_archs(sys.argv[1]))\n"
        "except FatbinError as err:\n"
        "    print('error', err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, path],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-800:]
    return done.stdout


def _elf_with_fatbin(fatbin: bytes) -> bytes:
    from test_kernel_binaries import elf

    return elf({".nv_fatbin": fatbin})


def _patched(data: bytes, offset: int, fmt: str, *values) -> bytes:
    import struct

    out = bytearray(data)
    struct.pack_into(fmt, out, offset, *values)
    return bytes(out)


def _nested_magics(count: int) -> bytes:
    import struct

    end = 64 + (count + 1) * 64
    body = bytearray()
    for i in range(count):
        head = bytearray(64)
        struct.pack_into("<HxxIQ", head, 0, 2, 64, 0)
        struct.pack_into("<I", head, 0x1C, 90)
        struct.pack_into("<IHHQ", head, 0x30, 0xBA55ED50, 1, 16, end - (64 + i * 64 + 0x30 + 16))
        body += head
    return b"\x7fELF\x02\x01\x01\x00" + b"\0" * 56 + bytes(body) + b"\0" * 64  # the last entry: kind 0


def _hostile_file(kind: str) -> bytes:
    import struct

    from test_kernel_binaries import FATBIN, container, entry

    good = _elf_with_fatbin(FATBIN)
    magic = good.index(struct.pack("<I", 0xBA55ED50))
    (shoff,) = struct.unpack_from("<Q", good, 0x28)
    files = {
        # the section table claims 65535 headers of 65535 bytes (4 GiB) at an offset past 2**63
        "huge section table": lambda: (
            _patched(good, 0x28, "<Q", (1 << 64) - 64)[:0x3A] + struct.pack("<HHH", 65535, 65535, 65534) + good[0x40:]
        ),
        "huge section count": lambda: _patched(good, 0x3A, "<HHH", 64, 65535, 2),
        "name table of 2**63 bytes": lambda: _patched(good, shoff + 2 * 64 + 0x20, "<Q", 1 << 63),
        "fatbin section of 2**63 bytes": lambda: _patched(good, shoff + 64 + 0x20, "<Q", 1 << 63),
        "container claiming gigabytes": lambda: _patched(good, magic + 8, "<Q", 8 << 30),
        "container header of size 0": lambda: _patched(good, magic + 6, "<HQ", 0, 0),
        "entry claiming gigabytes": lambda: _patched(good, magic + 16 + 8, "<Q", 1 << 62),
        # no section table, so the file is scanned for container magics: each of 20,000 entries holds one whose
        # walk runs over every entry after it to a bad one at the end (a quadratic scan before the budget)
        "nested container magics": lambda: _nested_magics(20_000),
        "300,000 entries": lambda: _elf_with_fatbin(container(*[entry(2, 90, payload=b"")] * 300_000)),
    }
    return files[kind]()


HOSTILE = [
    "huge section table",
    "huge section count",
    "name table of 2**63 bytes",
    "fatbin section of 2**63 bytes",
    "container claiming gigabytes",
    "container header of size 0",
    "entry claiming gigabytes",
    "nested container magics",
    "300,000 entries",
]


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_compiled_file_is_a_value_with_a_reason_in_bounded_time_and_memory(tmp_path, kind):
    path = tmp_path / "hostile.so"
    path.write_bytes(_hostile_file(kind))
    started = time.monotonic()
    out = _hostile_reader_run(str(path))
    assert out.startswith(("ok ", "error ")), out
    assert time.monotonic() - started < 30


def test_every_truncation_of_a_compiled_file_is_a_value(tmp_path):
    from attn_preflight.probe.fatbin import FatbinError, module_archs

    good = _elf_with_fatbin(__import__("test_kernel_binaries").FATBIN)
    path = tmp_path / "cut.so"
    reasons = set()
    for size in range(0, len(good), 7):
        path.write_bytes(good[:size])
        try:
            module_archs(str(path))
        except FatbinError as err:
            reasons.add(str(err).split(" at ")[0][:40])
    assert reasons  # each a FatbinError (any other exception fails the test)


def test_a_fifo_named_like_a_library_never_blocks_the_scan(tmp_path):
    from attn_preflight.probe.fatbin import FatbinError, module_archs

    fifo = tmp_path / "kernels.so"
    os.mkfifo(fifo)
    with pytest.raises(FatbinError, match="not a regular file"):
        module_archs(str(fifo))  # before: open() waited for a writer for ever


def test_a_distribution_past_the_file_limits_is_unknown_with_a_note(tmp_path, monkeypatch):
    from attn_preflight.probe import binaries
    from attn_preflight.probe.facts import LibraryFacts

    site = tmp_path / "site"
    package, dist = site / "flashinfer", site / "flashinfer_python-0.6.0.dist-info"
    package.mkdir(parents=True)
    dist.mkdir()
    for i in range(3000):  # thousands of files that are not ELF: each a row with its reason, in seconds
        (package / f"k{i}.so").write_bytes(b"junk")
    (dist / "RECORD").write_text("".join(f"flashinfer/k{i}.so,,\n" for i in range(3000)))

    class Index:
        found = {"flashinfer-python": [(str(site), dist.name)]}

    def scan() -> LibraryFacts:
        lib = LibraryFacts(key="flashinfer", title="FlashInfer", distributions={"flashinfer-python": "0.6.0"})
        lib.module_path = str(package / "__init__.py")
        started = time.monotonic()
        binaries.collect_binaries([lib], Index(), use_cache=False)
        assert time.monotonic() - started < 30
        return lib

    lib = scan()
    assert lib.binaries is not None and len(lib.binaries) == 3000
    assert all(module.error == "not an ELF file" for module in lib.binaries.values())
    monkeypatch.setattr(binaries, "MAX_FILES", 2999)
    lib = scan()
    assert lib.binaries is None and any("more than 2,999 compiled files" in note for note in lib.notes), lib.notes
    monkeypatch.setattr(binaries, "MAX_RECORD_BYTES", 100)
    lib = scan()
    assert lib.binaries is None and any("RECORD is" in note for note in lib.notes), lib.notes
