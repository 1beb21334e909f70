"""Variables that change backend selection are reported; secrets never are."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attn_preflight.probe.environ import REDACTED, is_secret_flag, redact, relevant_environment


def test_relevant_variables_are_kept_and_others_dropped():
    env = {
        "SGLANG_ENABLE_DETERMINISTIC_INFERENCE": "1",
        "VLLM_ATTENTION_BACKEND": "FLASHINFER",
        "CUDA_VISIBLE_DEVICES": "0,1",
        "FLASH_ATTENTION_TRITON_AMD_ENABLE": "TRUE",
        "CUTE_DSL_ARCH": "sm_90a",
        "TORCH_CUDA_ARCH_LIST": "9.0a",
        "FLASHINFER_CUDA_ARCH_LIST": "9.0a",
        "CUTLASS_PATH": "/opt/cutlass",
        "NVIDIA_VISIBLE_DEVICES": "all",
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
        "HOME": "/root",
        "EDITOR": "vim",
        "HF_TOKEN": "hf_secret",
    }
    got = relevant_environment(env)
    assert set(got) == set(env) - {"HOME", "EDITOR", "HF_TOKEN"}
    assert got["VLLM_ATTENTION_BACKEND"] == "FLASHINFER" and list(got) == sorted(got)


def test_secret_names_are_redacted():
    env = {
        "SGLANG_API_KEY": "sk-1",
        "VLLM_HF_TOKEN": "hf_x",
        "NVIDIA_NGC_PASSWORD": "p",
        "CUDA_SECRET": "s",
        "VLLM_DB_PASSWD": "x",
        "SGLANG_CREDENTIALS_FILE": "/c",
        "VLLM_api_key": "k",
    }
    assert set(relevant_environment(env).values()) == {REDACTED}


def test_passwords_inside_urls_are_redacted():
    assert redact("VLLM_URL", "https://user:hunter2@example.com:8080/x") == "https://user:***@example.com:8080/x"
    assert redact("SGLANG_PROXY", "http://proxy:3128") == "http://proxy:3128"
    assert redact("VLLM_X", "redis://:pw@host/0 and s3://u:p@b") == "redis://:***@host/0 and s3://u:***@b"


@given(
    user=st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True),
    password=st.from_regex(r"[A-Za-z0-9!$%^&*()_+=-]{6,20}", fullmatch=True),
)
def test_no_url_password_survives(user, password):
    value = f"postgresql://{user}:{password}@db.internal:5432/app"
    assert redact("VLLM_DATABASE_URL", value) == f"postgresql://{user}:***@db.internal:5432/app"


@pytest.mark.parametrize(
    ("flag", "secret"),
    [
        ("--api-key", True),
        ("--hf-token", True),
        ("--aws-credentials", True),
        ("--ssl-keyfile-password", True),
        ("--max-num-batched-tokens", False),
        ("--speculative-num-draft-tokens", False),
        ("--max-total-tokens", False),
        ("--kv-cache-dtype", False),
    ],
)
def test_a_flag_is_secret_by_its_words(flag, secret):
    assert is_secret_flag(flag) is secret
