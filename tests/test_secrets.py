"""Secrets in the environment — tokens, keys, passwords, URL credentials — never appear in any output of any
verb, in any format: probe (table, json, markdown, nfd), check (live, --facts, a pasted command with secret
assignments), fleet, report (HTML), smoke, matrix; nor in files written with --output, nor in the import cache.

Every secret value carries the marker SeCrEt, so one search finds any of them, whole or in part.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_run import assert_clean_outcome, run_cli
from probe_fakes import h200, use_fake_pynvml

MARKER = "SeCrEt"
SECRETS = {
    "HF_TOKEN": "hf_SeCrEt0001",
    "HUGGING_FACE_HUB_TOKEN": "hf_SeCrEt0002",
    "SGLANG_API_KEY": "sk-SeCrEt0003",
    "VLLM_API_KEY": "SeCrEt0004",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/SeCrEt0005",
    "AWS_ACCESS_KEY_ID": "AKIASeCrEt0006",
    "OPENAI_API_KEY": "sk-proj-SeCrEt0007",
    "SGLANG_X": "https://user:pa55w0rd@host/",  # the password of a URL in a variable that is reported
    "SGLANG_DB_URL": "postgresql://admin:SeCrEt0008@db.internal:5432/serving",
    "VLLM_S3_ENDPOINT": "s3://AKIA:SeCrEt0009@minio:9000/models",
    "TRITON_CACHE_URL": "redis://:SeCrEt0010@cache:6379/0",  # empty user
    "NCCL_SOCKET_PASSWORD": "SeCrEt0011",
    "CUDA_MPS_PASSWD": "SeCrEt0012",
    "FLASHINFER_CREDENTIALS": "SeCrEt0013",
    "SGLANG_TOKEN_FILE_CONTENT": "SeCrEt0014",
    "VLLM_HF_TOKEN": "hf_SeCrEt0015",
}
NEEDLES = (MARKER, "pa55w0rd")


def assert_no_secret(text: str, where: str) -> None:
    for needle in NEEDLES:
        assert needle not in text, (
            f"{needle!r} leaked in {where}: ...{text[max(0, text.find(needle) - 200) :][:400]}..."
        )


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    """One import cache for the module: the environment is the same in every test, so checks are reused."""
    return tmp_path_factory.mktemp("secrets-cache")


@pytest.fixture
def secret_env(monkeypatch, tmp_path, cache_dir):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_dir))
    monkeypatch.setenv("VLLM_ATTENTION_BACKEND", "FLASH_ATTN")  # a relevant variable that is not a secret
    use_fake_pynvml(monkeypatch, tmp_path / "nvml", [h200(0), h200(1)])
    return tmp_path


def cli(argv, where=None):
    run = run_cli(argv)
    assert_clean_outcome(run, argv)
    assert_no_secret(run.out, f"stdout of {where or argv}")
    assert_no_secret(run.err, f"stderr of {where or argv}")
    return run


@pytest.fixture
def saved_facts(secret_env) -> Path:
    """A report probed in the secret environment (import checks included), as `probe -o` writes it."""
    path = secret_env / "facts.json"
    cli(["probe", "--format", "json", "-o", str(path)])
    text = path.read_text()
    assert_no_secret(text, "the saved probe report")
    environment = json.loads(text)["environment"]
    # Reported, with the secret parts masked (not silently dropped): the reader sees the variable is set.
    assert environment["SGLANG_API_KEY"] == "***" and environment["SGLANG_X"] == "https://user:***@host/"
    assert environment["VLLM_ATTENTION_BACKEND"] == "FLASH_ATTN"
    return path


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "nfd"])
def test_probe_every_format(secret_env, fmt):
    cli(["probe", "--format", fmt, "--no-imports"])


def test_probe_with_import_checks_and_its_cache(saved_facts, cache_dir):
    cli(["probe", "--format", "markdown"])  # the second run answers from the cache
    assert any(path.is_file() for path in cache_dir.rglob("*"))
    for path in cache_dir.rglob("*"):
        if path.is_file():
            assert_no_secret(path.read_text(errors="replace"), f"cache file {path}")


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_check_live_and_from_facts(saved_facts, fmt):
    cli(["check", "--attention-backend", "fa3", "--format", fmt, "--all"])
    cli(
        [
            "check",
            "--facts",
            str(saved_facts),
            "--attention-backend",
            "fa4",
            "--kv-cache-dtype",
            "mxfp8",
            "--format",
            fmt,
            "--all",
        ]
    )


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_check_pasted_command_with_secret_assignments(secret_env, fmt):
    """`KEY=VALUE` prefixes of a pasted command are environment too; their secrets are masked."""
    assignments = [f"{name}={value}" for name, value in SECRETS.items()]
    for command in (
        [
            *assignments,
            "python",
            "-m",
            "sglang.launch_server",
            "--model-path",
            "llama-3.1-8b",
            "--attention-backend",
            "fa3",
            "--api-key",
            "sk-SeCrEt0100",
        ],
        [
            *assignments,
            "VLLM_ATTENTION_BACKEND=FLASHINFER",
            "vllm",
            "serve",
            "llama-3.1-8b",
            "--api-key",
            "SeCrEt0101",
            "--hf-token",
            "hf_SeCrEt0102",
        ],
    ):
        run = cli(["check", "--gpu", "H100", "--format", fmt, "--", *command])
        if fmt == "json":
            env = json.loads(run.out)["config"]["env"]
            assert env.get("SGLANG_API_KEY", "***") == "***"
            assert env.get("SGLANG_X", "https://user:***@host/") == "https://user:***@host/"


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_fleet(saved_facts, fmt):
    cli(["fleet", str(saved_facts), str(saved_facts), "--attention-backend", "fa3", "--format", fmt])


def test_report_html(saved_facts, secret_env):
    for extra in ([], ["--facts", str(saved_facts)]):
        page = secret_env / "report.html"
        cli(["report", "-o", str(page), "--model", "llama-3.1-8b", *extra])
        text = page.read_text()
        assert "SGLANG_API_KEY" in text  # the environment is on the page, masked
        assert_no_secret(text, "the HTML report")


def test_matrix_and_output_files(secret_env):
    out = secret_env / "matrix.md"
    cli(["matrix", "--model", "llama-3.1-8b", "--gpu", "H100", "--format", "markdown", "-o", str(out)])
    assert_no_secret(out.read_text(), "matrix --output")


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_smoke(secret_env, fmt):
    # FA4 and FlashInfer are not installed here: reported skipped, with the machine summary (GPUs, libraries).
    run = cli(["smoke", "--kernel", "fa4", "--kernel", "flashinfer", "--format", fmt])
    assert run.code == 0


def test_secrets_in_a_facts_file_written_by_hand_are_not_reprinted(secret_env):
    """A customer's report edited by hand (or from another tool) may carry unmasked values: every verb that
    shows a report's environment masks them again."""
    facts = json.loads((Path(__file__).parent / "fixtures" / "probe-cpu-ci.json").read_text())
    facts["environment"] = dict(SECRETS)
    path = secret_env / "unmasked.json"
    path.write_text(json.dumps(facts))
    cli(["check", "--facts", str(path), "--attention-backend", "fa3", "--format", "json", "--all"])
    cli(["fleet", str(path), "--format", "json"])
    page = secret_env / "unmasked.html"
    cli(["report", "-o", str(page), "--facts", str(path)])
    assert_no_secret(page.read_text(), "the HTML report of a hand-written facts file")


def test_the_marker_would_be_found():
    """The search itself works: an unmasked secret in output is caught."""
    with pytest.raises(AssertionError):
        assert_no_secret("SGLANG_API_KEY=" + SECRETS["SGLANG_API_KEY"], "a sample")
    with pytest.raises(AssertionError):
        assert_no_secret(SECRETS["SGLANG_X"], "a sample")
    assert os.environ.get("HF_TOKEN") != SECRETS["HF_TOKEN"]  # the fixture's values do not outlive a test
