"""Attacks from issue 12 (items 1, 4, 5, 7, 9, 10), each through the real CLI in a subprocess: the process is
the thing under attack (its stdout, its working directory, its environment, the files it is handed).

Each test failed on the code before the fix it guards; the property is always the same: a result (exit 0/1)
or one error line with exit 2, never a traceback, a hang or a secret in what it writes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from probe_fakes import make_dist

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
SGLANG_FACTS = FIXTURES / "facts" / "h200-sglang-0.5.23.json"
GEMMA = FIXTURES / "models" / "gemma-2-9b" / "config.json"
TIMEOUT = 120


def attn_preflight(
    *argv, env=None, cwd=None, stdout=subprocess.PIPE, encoding="utf-8", **kwargs
) -> subprocess.CompletedProcess:
    environ = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "attn_preflight", *map(str, argv)],
        stdout=stdout,
        stderr=subprocess.PIPE,
        encoding=encoding,
        env=environ,
        cwd=cwd,
        timeout=TIMEOUT,
        **kwargs,
    )


def assert_one_error_line(done: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2 with exactly one `attn-preflight:` line on stderr (containing each of `words`); smoke's progress
    lines (`smoke  1.2s  KERNEL: ok`, on stderr as it runs) may precede it."""
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("smoke ")]
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("attn-preflight: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def assert_result(done: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in done.stderr and "Traceback" not in (done.stdout or ""), done.stderr
    assert done.returncode in (0, 1), done.stderr


def sglang_facts(tmp_path: Path, version, name="facts.json") -> Path:
    """The H200 + sglang 0.5.23 report with sglang's version replaced (None: a dist-info with no Version)."""
    facts = json.loads(SGLANG_FACTS.read_text())
    library = next(lib for lib in facts["libraries"] if lib["key"] == "sglang")
    library["version"] = version
    library["distributions"] = {"sglang": "unknown" if version is None else version}
    path = tmp_path / name
    path.write_text(json.dumps(facts))
    return path


def model_dir(tmp_path: Path, name: str, **changes) -> Path:
    config = json.loads(GEMMA.read_text())
    config.update(changes)
    directory = tmp_path / name
    directory.mkdir()
    (directory / "config.json").write_text(json.dumps(config))
    return directory


# ------------------------------------------------------------------------------- stdout that cannot be written

VERBS = [
    ["probe", "--no-imports"],
    ["check", "--gpu", "H100", "--model", "llama-3.1-8b"],
    ["matrix", "--model", "llama-3.1-8b"],
    ["explain", "general-engine-version"],
    ["fleet", SGLANG_FACTS],
    ["gpus"],
    ["rules"],
    ["report", "--facts", SGLANG_FACTS, "-o", "-"],
    ["smoke", "--kernel", "sdpa-math"],
]


@pytest.mark.parametrize("argv", VERBS, ids=lambda argv: argv[0])
def test_stdout_on_dev_full_is_one_error_line(argv):
    with open("/dev/full", "w") as full:
        done = attn_preflight(*argv, stdout=full)
    assert_one_error_line(done, "cannot write to stdout", "No space left on device")


@pytest.mark.parametrize("argv", VERBS, ids=lambda argv: argv[0])
def test_closed_stdout_is_one_error_line_before_any_work(argv):
    done = attn_preflight(*argv, stdout=None, pass_fds=(), preexec_fn=lambda: os.close(1))
    assert_one_error_line(done, "stdout is closed")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("argv", VERBS, ids=lambda argv: argv[0])
def test_a_stdout_that_cannot_encode_unicode_gets_a_result_in_every_verb(argv, encoding):
    # PYTHONIOENCODING stands for a latin-1 or ASCII locale (this machine may have neither installed)
    done = attn_preflight(*argv, env={"PYTHONIOENCODING": encoding}, encoding=encoding)  # decoding fails otherwise
    assert_result(done)


def test_output_relative_to_a_deleted_working_directory(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    # the child deletes its own working directory before Python starts
    done = attn_preflight("check", "--gpu", "H100", "-o", "out.txt", cwd=gone, preexec_fn=lambda: os.rmdir(gone))
    assert_one_error_line(done, "--output out.txt", "working directory")


# ----------------------------------------------------------------------------------------- files we are handed


def test_integer_of_5000_digits_in_a_report_or_config(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(SGLANG_FACTS.read_text().replace('"gpus": {', '"gpus": {"x": ' + "9" * 5000 + ", ", 1))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": ' + "9" * 5000 + "}")
    for argv in (["check", "--facts", report], ["report", "--facts", report, "-o", tmp_path / "r.html"]):
        assert_one_error_line(attn_preflight(*argv), "4300 digits")
    assert_one_error_line(attn_preflight("check", "--gpu", "H100", "--model", model), "4300 digits")
    fleet = attn_preflight("fleet", report, SGLANG_FACTS)
    assert fleet.returncode == 2 and "Traceback" not in fleet.stderr
    assert f"skipped {report}: not a JSON report: Exceeds the limit (4300 digits)" in fleet.stderr


def test_json_100000_deep_in_a_report_or_config(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    for argv in (
        ["check", "--facts", deep],
        ["report", "--facts", deep, "-o", tmp_path / "r.html"],
        ["check", "--gpu", "H100", "--model", model],
        ["matrix", "--model", model],
    ):
        assert_one_error_line(attn_preflight(*argv), "nested too deeply")


def test_a_report_listing_a_library_twice_is_refused_by_name(tmp_path):
    facts = json.loads(SGLANG_FACTS.read_text())
    facts["libraries"].append({**facts["libraries"][3], "distributions": {"flash-attn-4": "4.0.0b36"}})
    report = tmp_path / "twice.json"
    report.write_text(json.dumps(facts))
    key = facts["libraries"][3]["key"]
    for argv in (["check", "--facts", report], ["report", "--facts", report, "-o", tmp_path / "r.html"]):
        assert_one_error_line(attn_preflight(*argv), f"libraries: key {key!r} appears more than once")
    fleet = attn_preflight("fleet", report, SGLANG_FACTS)
    assert fleet.returncode == 2 and f"skipped {report}: facts.libraries: key {key!r}" in fleet.stderr


# ------------------------------------------------------------------------------- item 1: unknown never passes


def fake_node(tmp_path: Path, sglang_metadata: str) -> dict:
    """An environment whose probe sees one H200 (a fake NVML module on PYTHONPATH) and an sglang dist-info
    with `sglang_metadata` as its METADATA."""
    site = tmp_path / "site"
    (site / "sglang-0.5.23.dist-info").mkdir(parents=True)
    (site / "sglang-0.5.23.dist-info" / "METADATA").write_text(sglang_metadata)
    (site / "sglang").mkdir()
    (site / "sglang" / "__init__.py").write_text("")
    (site / "pynvml.py").write_text(
        "import sys\nfrom probe_fakes import fake_pynvml, h200\nsys.modules[__name__] = fake_pynvml([h200(0)])\n"
    )
    path = os.pathsep.join([str(REPO), str(site), str(REPO / "tests")])
    return {"PYTHONPATH": path, "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.parametrize(
    "metadata",
    [
        "Metadata-Version: 2.1\nName: sglang\n",  # no Version header
        "Metadata-Version: 2.1\nName: sglang\nVersion: garbage\n",
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.0.1\n",  # older than any release the rules know
    ],
    ids=["no-version", "garbage", "0.0.1"],
)
def test_an_engine_of_unreadable_or_unknown_version_never_passes_nor_labels_a_capability(tmp_path, metadata):
    env = fake_node(tmp_path, metadata)
    labels = attn_preflight("probe", "--no-imports", "--format", "nfd", env=env)
    assert_result(labels)
    backend_labels = [line for line in labels.stdout.splitlines() if "/backend." in line or "/kv." in line]
    assert backend_labels and all(line.endswith("=false") for line in backend_labels), labels.stdout
    check = attn_preflight("check", "--model", "llama-3.1-8b", "--format", "json", env=env)
    assert_result(check)
    report = json.loads(check.stdout)
    assert report["verdict"] != "pass"
    version = next(f for f in report["findings"] if f["rule_id"] == "general-engine-version")
    # unreadable: unknown; older than every release known: judged as the oldest, and warned about
    assert version["status"] == ("warn" if "0.0.1" in metadata else "unknown"), version


@pytest.mark.parametrize("version", ["unknown", "garbage", "", None])
def test_a_report_with_an_unreadable_engine_version_is_judged_with_an_unknown_finding(tmp_path, version):
    done = attn_preflight(
        "check", "--facts", sglang_facts(tmp_path, version), "--model", "llama-3.1-8b", "--format", "json"
    )
    assert_result(done)
    report = json.loads(done.stdout)
    assert report["verdict"] != "pass"
    finding = next(f for f in report["findings"] if f["rule_id"] == "general-engine-version")
    assert finding["status"] == "unknown" and "cannot be read" in finding["message"], finding


@pytest.mark.parametrize(
    "key,value,reason",
    [
        ("head_dim", "512", "head_dim must be an integer, got str"),
        ("num_attention_heads", "30", "num_attention_heads must be an integer, got str"),
        ("num_attention_heads", 0, "num_attention_heads must be at least 1, got 0"),
        ("head_dim", -128, "head_dim must be at least 1, got -128"),
        ("head_dim", 128.0, "head_dim must be an integer, got float"),
        ("num_key_value_heads", True, "num_key_value_heads must be an integer, got bool"),
        ("attn_logit_softcapping", float("nan"), "attn_logit_softcapping must be a positive finite number, got nan"),
        ("attn_logit_softcapping", int("9" * 400), "attn_logit_softcapping is too large to be a number"),
        ("attn_logit_softcapping", "50.0", "attn_logit_softcapping must be a number, got str"),
    ],
)
def test_a_config_value_of_the_wrong_type_or_range_is_named_not_read_as_absent(tmp_path, key, value, reason):
    # transformers stores config.json values as given (no coercion): these would reach the engine as they are
    model = model_dir(tmp_path, "model", **{key: value})
    for argv in (["check", "--gpu", "H100", "--model", model], ["matrix", "--model", model]):
        assert_one_error_line(attn_preflight(*argv), f"{model / 'config.json'}: {reason}")


# ------------------------------------------------------------------------------------------- item 9: secrets

SLASHED = "s3://AKIA:abc/SeCrEtSlash@minio:9000/models"  # a URL password holding '/'


def assert_no_secret(text: str, where: str) -> None:
    assert "SeCrEt" not in text, f"leaked in {where}: {text[max(0, text.find('SeCrEt') - 200) :][:400]}"


def test_a_url_password_with_a_slash_is_masked_in_every_format_and_file(tmp_path):
    env = {"SGLANG_MODEL_STORE": SLASHED, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for fmt in ("table", "json", "markdown", "nfd"):
        done = attn_preflight("probe", "--no-imports", "--format", fmt, env=env)
        assert_result(done)
        assert_no_secret(done.stdout + done.stderr, f"probe --format {fmt}")
    saved = tmp_path / "facts.json"
    assert_result(attn_preflight("probe", "--no-imports", "--format", "json", "-o", saved, env=env))
    assert_no_secret(saved.read_text(), "the saved facts")
    assert "s3://AKIA:***@minio:9000/models" in saved.read_text()
    # a report hand-edited back to the secret is masked in the HTML page (the live one: the import-error test)
    facts = json.loads(saved.read_text())
    facts["environment"]["SGLANG_MODEL_STORE"] = SLASHED
    saved.write_text(json.dumps(facts))
    page = tmp_path / "report.html"
    assert_result(attn_preflight("report", "--facts", saved, "-o", page, env=env))
    assert_no_secret(page.read_text(), "report HTML")


@pytest.mark.parametrize(
    "command",
    [
        ["env", "HF_TOKEN=hf_SeCrEt0001", "foo", "-m", "bar"],
        ["sudo", "HF_TOKEN=SeCrEt0002", "python", "-x"],
        ["env", "-i", "HF_TOKEN=SeCrEt0003", "python", "foo"],
        ["python", "--api-key", "SeCrEt0004", "-m", "sglang.launch_server"],
        ["python", "-m", "sglang.launch_server", "--model-path", "https://u:SeCrEt0005@host/m"],
        ["VLLM_ATTENTION_BACKEND=https://u:SeCrEt0006@host", "vllm", "serve", "llama-3.1-8b"],
    ],
    ids=["env", "sudo", "env-i", "api-key-before-m", "model-path-url", "backend-url"],
)
def test_a_pasted_command_never_echoes_its_secrets(command):
    done = attn_preflight("check", "--gpu", "H100", "--", *command)
    assert "Traceback" not in done.stderr
    assert_no_secret(done.stdout + done.stderr, " ".join(command))


def test_a_model_url_password_is_not_echoed():
    done = attn_preflight("check", "--gpu", "H100", "--model", "https://user:SeCrEt0007@host/model")
    assert_one_error_line(done, "https://user:***@host/model")


def test_a_token_in_a_library_import_error_reaches_no_output_nor_the_cache(tmp_path):
    site = tmp_path / "site"
    # a library that quotes a token in its error, and one that quotes a secret variable's value
    make_dist(site, "quack-kernels", "0.6.5", {"quack/__init__.py": "raise RuntimeError('bad hf_SeCrEt0008abcd')"})
    make_dist(site, "xformers", "0.0.30", {"xformers/__init__.py": "import os\nraise OSError(os.environ['MY_KEY'])"})
    cache = tmp_path / "cache"
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "XDG_CACHE_HOME": str(cache)}
    env["MY_KEY"] = "opaque-SeCrEt0009"
    for fmt in ("table", "json", "markdown"):
        done = attn_preflight("probe", "--format", fmt, env=env)
        assert_result(done)
        assert_no_secret(done.stdout + done.stderr, f"probe --format {fmt}")
        assert "RuntimeError: bad ***" in done.stdout
    page = tmp_path / "report.html"
    assert_result(attn_preflight("report", "-o", page, env=env))
    assert_no_secret(page.read_text(), "report HTML")
    written = [path for path in cache.rglob("*") if path.is_file()]
    assert written, "the import cache was written"
    for path in written:
        assert_no_secret(path.read_text(), f"the cache file {path}")


# ------------------------------------------------------------------------- the import cache (items 4, 5, 10)


@pytest.fixture
def cached(tmp_path) -> tuple[dict, Path]:
    """An environment with its own cache and a library that imports at once (a fake quack-kernels), and the
    import cache file a first probe wrote there."""
    make_dist(tmp_path / "site", "quack-kernels", "0.6.5", {"quack/__init__.py": ""})
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path / 'site'}"}
    assert_result(attn_preflight("probe", "--format", "json", env=env))
    (path,) = (tmp_path / "cache" / "attn-preflight").glob("imports-*.json")
    return env, path


WRONG_TYPES = [("status", 5), ("seconds", "fast"), ("error", ["x"]), ("causes", "boom"), ("details", [1, 2])]


@pytest.mark.parametrize("argv", [["probe"], ["probe", "--format", "markdown"], ["report", "-o", "-"]], ids=str)
def test_wrong_typed_values_in_the_import_cache_are_checked_again(cached, argv):
    env, path = cached
    entries = json.loads(path.read_text())
    key = next(k for k in entries if json.loads(k)["module"] == "quack")
    for field, value in WRONG_TYPES:
        path.write_text(json.dumps({**entries, key: {**entries[key], field: value}}))
        assert_result(attn_preflight(*argv, env=env))
        assert json.loads(path.read_text())[key][field] != value, "checked again and rewritten"


def test_a_directory_or_fifo_where_the_cache_file_goes_leaves_no_temporary_file_and_never_blocks(cached):
    env, path = cached
    path.unlink()
    path.mkdir()
    for _ in range(2):
        assert_result(attn_preflight("probe", "--format", "json", env=env))
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".imports-")] == []
    path.rmdir()
    os.mkfifo(path)
    assert_result(attn_preflight("probe", "--format", "json", env=env))  # TIMEOUT would end a blocked read


@pytest.mark.parametrize(
    "xdg,home",
    [("relative/cache", "HOME"), ("", ""), ("", "relative-home")],
    ids=["relative-xdg", "empty", "relative-home"],
)
def test_no_cache_is_written_relative_to_the_working_directory_or_at_the_root(tmp_path, xdg, home):
    # XDG Base Directory spec: a relative XDG_CACHE_HOME is invalid and ignored; HOME='' is no home
    env = {"XDG_CACHE_HOME": xdg, "HOME": str(tmp_path / "home") if home == "HOME" else home}
    work = tmp_path / "work"
    work.mkdir()
    before = os.path.exists("/.cache")
    done = attn_preflight("probe", "--format", "json", env=env, cwd=work)
    assert_result(done)
    assert list(work.iterdir()) == []
    assert os.path.exists("/.cache") == before


# --------------------------------------------------------------------------------------- item 7: bad values


@pytest.mark.parametrize(
    "argv,option",
    [
        (["probe", "--timeout", "1e10"], "--timeout"),
        (["check", "--probe-timeout", "1e10"], "--probe-timeout"),
        (["check", "--gpu", "H100", "--smoke", "--smoke-timeout", "1e10"], "--smoke-timeout"),
        (["smoke", "--timeout", "1e10"], "--timeout"),
        (["check", "--gpu", ""], "--gpu"),
        (["check", "--facts", ""], "--facts"),
        (["check", "--gpu", "H100", "--model", ""], "--model"),
        (["check", "--gpu", "H100", "--model", "  "], "--model"),
        (["matrix", "--model", ""], "--model"),
        (["matrix", "--model", "llama-3.1-8b", "--gpu", ""], "--gpu"),
        (["report", "--facts", "", "-o", "-"], "--facts"),
        (["fleet", SGLANG_FACTS, "--model", ""], "--model"),
    ],
    ids=lambda value: value if isinstance(value, str) else str(value[0]),
)
def test_a_bad_value_is_one_error_line_before_any_work(tmp_path, argv, option):
    # before: 1e10 made every import check fail (and that false error was cached); '' meant "not given"
    done = attn_preflight(*argv, env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert_one_error_line(done, f"'{option}'")
    assert not (tmp_path / "cache").exists()


# ------------------------------------------------------------------------------------ fleet (items 4 and 10)


def unreadable_directory(tmp_path: Path) -> Path:
    """A directory os.listdir refuses: mode 000 for a user; as root (who reads anything) /proc/1/map_files,
    which needs CAP_SYS_ADMIN in the init process's namespace."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    for candidate in (locked, Path("/proc/1/map_files")):
        try:
            os.listdir(candidate)
        except OSError:
            return candidate
    pytest.skip("no directory here refuses a listing")


def test_an_unreadable_directory_given_to_fleet_is_one_error_line(tmp_path):
    directory = unreadable_directory(tmp_path)
    assert_one_error_line(attn_preflight("fleet", directory), f"cannot read directory {directory}")


def test_a_report_named_twice_is_one_node(tmp_path):
    report = tmp_path / "node.json"
    report.write_text(SGLANG_FACTS.read_text())
    (tmp_path / "link.json").symlink_to(report)
    done = attn_preflight("fleet", report, report, tmp_path, "--format", "json")
    assert_result(done)
    assert json.loads(done.stdout)["nodes"] == 1


def test_control_characters_in_a_report_never_reach_the_terminal(tmp_path):
    facts = json.loads(SGLANG_FACTS.read_text())
    facts["host"]["hostname"] = "node\x1b]0;owned\x07\x1b[2J\r"
    report = tmp_path / "node.json"
    report.write_text(json.dumps(facts))
    for argv in (["fleet", report], ["fleet", report, "--format", "markdown"], ["check", "--facts", report]):
        done = attn_preflight(*argv)
        assert_result(done)
        assert not any(c in done.stdout + done.stderr for c in "\x1b\x07\r"), argv
    assert "node\\x1b]0;owned\\x07" in attn_preflight("fleet", report).stdout


def test_a_closed_pipe_keeps_the_verdicts_exit_code(tmp_path):
    # `attn-preflight check ... | true`: the reader is gone before we write; click turned that into exit 1
    for argv, code in (
        (["rules"], 0),
        (["check", "--gpu", "H100"], 0),
        (["check", "--gpu", "H100", "--kv-cache-dtype", "mxfp8"], 1),
    ):
        reader = subprocess.Popen(["true"], stdin=subprocess.PIPE)
        reader.wait()
        done = attn_preflight(*argv, stdout=reader.stdin)
        reader.stdin.close()
        assert done.returncode == code and done.stderr == "", (argv, done.stderr)


# ------------------------------------------------------------------------------------------- smoke (item 10)


def test_smoke_says_when_nothing_ran_and_strict_fails_it():
    # sdpa-cudnn needs a GPU: skipped here; on a GPU machine pick a kernel that is surely missing
    kernel = "sdpa-cudnn" if not os.path.exists("/dev/nvidiactl") else "flash-mla"
    results = json.loads(attn_preflight("smoke", "--kernel", kernel, "--format", "json").stdout)["results"]
    if any(r["status"] != "skipped" for r in results):
        pytest.skip(f"{kernel} runs here")
    plain = attn_preflight("smoke", "--kernel", kernel)
    assert plain.returncode == 0 and "nothing ran: no kernel was tested" in plain.stdout, plain.stdout
    assert attn_preflight("smoke", "--kernel", kernel, "--strict").returncode == 1


def test_the_reproduce_command_names_the_interpreter_that_ran_the_kernel(tmp_path):
    done = attn_preflight("smoke", "--kernel", "sdpa-math", "--format", "json", env={"XDG_CACHE_HOME": str(tmp_path)})
    assert_result(done)
    commands = [r["reproduce"] for r in json.loads(done.stdout)["results"] if r.get("reproduce")]
    assert commands and all(
        c.startswith(f"{sys.executable} -m attn_preflight.probe.smoke.worker ") for c in commands
    ), commands


def test_non_utf8_metadata_and_pth_files_still_show_the_library_installed(tmp_path):
    site = tmp_path / "site"
    dist_info = make_dist(site, "quack-kernels", "0.6.5", {"quack/__init__.py": "", "quack.pth": "quack\n# Ren\xe9\n"})
    (dist_info / "METADATA").write_bytes(
        b"Metadata-Version: 2.1\nName: quack-kernels\nVersion: 0.6.5\nAuthor: Ren\xe9\n"
    )
    (site / "quack.pth").write_bytes(b"# Ren\xe9 \xff\n")
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = attn_preflight("probe", "--format", "json", env=env)
    assert_result(done)
    quack = next(lib for lib in json.loads(done.stdout)["libraries"] if lib["key"] == "quack")
    assert quack["distributions"] == {"quack-kernels": "0.6.5"} and quack["health"]["status"] == "ok", quack


# ------------------------------------------------------------------------------- item 5: hangs and memory


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "/dev/urandom"])
def test_a_special_file_as_config_or_report_is_refused_at_once(tmp_path, special):
    if special == "fifo":
        target = tmp_path / "pipe"
        os.mkfifo(target)
    else:
        target = Path(special)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").symlink_to(target)
    report = tmp_path / "report.json"
    report.symlink_to(target)
    for argv in (
        ["check", "--gpu", "H100", "--model", model],
        ["matrix", "--model", model / "config.json"],
        ["check", "--facts", report],
        ["report", "--facts", report, "-o", tmp_path / "page.html"],
    ):
        done = attn_preflight(*argv)  # a blocked read or a growing one ends in TIMEOUT, failing the test
        assert_one_error_line(done, "not a regular file")
    fleet = attn_preflight("fleet", report, SGLANG_FACTS)
    assert fleet.returncode == 2 and f"skipped {report}: cannot read: not a regular file" in fleet.stderr


@pytest.mark.parametrize("refs_main", ["fifo", "/dev/zero", "not-utf8"])
def test_a_hub_cache_whose_refs_main_is_special_still_finds_the_snapshot(tmp_path, refs_main):
    repo = tmp_path / "hub" / "models--someone--model"
    snapshot = repo / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(GEMMA.read_text())
    (repo / "refs").mkdir()
    main = repo / "refs" / "main"
    if refs_main == "fifo":
        os.mkfifo(main)
    elif refs_main == "not-utf8":
        main.write_bytes(b"\xff\xfe\n")
    else:
        main.symlink_to(refs_main)
    done = attn_preflight(
        "check", "--gpu", "H100", "--model", "someone/model", env={"HF_HUB_CACHE": str(tmp_path / "hub")}
    )
    assert_result(done)  # a blocked or endless read runs into TIMEOUT
    assert "Gemma2ForCausalLM" in done.stdout


def test_an_import_check_that_never_reported_is_not_cached(tmp_path):
    # the child died without a result (here the library's os._exit; also a full disk or a timer it could not
    # set, as --timeout 1e10 did): the error may be ours, so it is checked again next time, never kept
    make_dist(tmp_path / "site", "quack-kernels", "0.6.5", {"quack/__init__.py": "import os\nos._exit(3)\n"})
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": f"{REPO}{os.pathsep}{tmp_path / 'site'}"}
    for _ in range(2):
        done = attn_preflight("probe", "--format", "json", env=env)
        assert_result(done)
        quack = next(lib for lib in json.loads(done.stdout)["libraries"] if lib["key"] == "quack")
        assert quack["health"]["error"] == "the import check exited with status 3 before reporting"
        assert quack["health"]["cached"] is False
