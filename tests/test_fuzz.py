"""Property-based fuzzing of everything a user can hand the CLI: arguments of check (flags, values and pasted
launch commands after --), matrix, explain, fleet and smoke; config.json contents; facts files.

The property, for every generated case: the real CLI (attn_preflight.cli.main, in this process) ends in a result
(exit 0 or 1) or in exactly one error line on stderr with exit 2, and never prints a traceback.
Derandomized, so CI runs the same cases every time; the total is asserted by the last test.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import errno
import glob
import io
import json
import os
import string
from pathlib import Path
from unittest import mock

import pytest
from cli_run import Run, assert_clean_outcome, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from probe_fakes import NVML_ERROR_LIBRARY_NOT_FOUND, NVMLError, use_fake_pynvml

from attn_preflight.cli import main
from attn_preflight.rules.core.models import FEATURES, presets
from attn_preflight.rules.core.registry import all_rules
from attn_preflight.rules.core.validation import kv_dtype_choices
from attn_preflight.rules.engines import backends
from attn_preflight.rules.knowledge import gpus, kv_dtypes

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
MODEL_DIRS = sorted(str(p.parent) for p in FIXTURES.glob("models/*/config.json"))
FACTS_FILES = sorted(glob.glob(str(FIXTURES / "probe-*.json")) + glob.glob(str(FIXTURES / "facts" / "*.json")))
REAL_CONFIGS = [json.loads(Path(d, "config.json").read_text()) for d in MODEL_DIRS]
REAL_FACTS = [json.loads(Path(f).read_text()) for f in FACTS_FILES]

# Cases per test; their sum (asserted at the end) is the suite's claim in the README.
EXAMPLES = {
    "check_flags": 600,
    "pasted_command": 400,
    "matrix": 80,
    "explain": 100,
    "fleet": 100,
    "smoke": 100,
    "random_config": 300,
    "mutated_config": 300,
    "mutated_facts": 300,
    "report": 60,
    "deep_json": 60,
    "big_numbers": 100,
    "special_files": 60,
    "cache_entries": 300,
    "stdout_sinks": 120,
    "secrets": 300,
}
GENERATED: dict[str, int] = {}
MARKER = "SeCrEt"  # in every generated secret: one search finds any of them


def fuzz(name: str):
    """Derandomized, no deadline (the CLI's speed is the bench's business), hypothesis' health checks on."""
    return settings(max_examples=EXAMPLES[name], derandomize=True, deadline=None, database=None, print_blob=False)


def outcome(argv: list[str], test: str) -> int:
    GENERATED[test] = GENERATED.get(test, 0) + 1
    run = run_cli(argv)
    assert_clean_outcome(run, argv)
    return run.code


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


# ------------------------------------------------------------------------------------------ vocabularies

SGLANG_BACKENDS = list(backends.choices("sglang"))
VLLM_BACKENDS = list(backends.choices("vllm"))
KV_DTYPES = sorted(set(kv_dtypes.KV_DTYPES) | set(kv_dtype_choices("vllm")))
GPU_NAMES = gpus.names() + [
    "NVIDIA H100 80GB HBM3",
    "nvidia b200",
    "sm_90",
    "sm90a",
    "90",
    "9.0",
    "12.1",
    "sm_100f",
    "10.3",
    "0.0",
    "99.9",
    "sm_",
    "gb10 / dgx spark",
    "DGX Spark",
]
PRESETS = list(presets())
JUNK = st.one_of(
    st.text(max_size=24),
    st.sampled_from(
        [
            "",
            " ",
            "-",
            "--",
            "=",
            "==",
            "0",
            "-1",
            "+1",
            "1e999",
            "-0",
            "nan",
            "NaN",
            "inf",
            "-inf",
            "None",
            "null",
            "true",
            "0x10",
            "9" * 400,
            "💥",
            "a" * 300,
            "../../etc/passwd",
            "/",
            ".",
            "~",
            "{}",
            "[]",
            "%s%n",
            "$(touch /tmp/x)",
            "\t",
            "é",
            "FA3",
            "fa3 ",
            " fa3",
            "fa3,fa4",
        ]
    ),
)
INTS = st.one_of(
    st.integers(-3, 300).map(str),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["1.5", "1e3", "0x40", "", "٣", "NaN", "9" * 400]),
)


def valid_or_junk(values):
    """Mostly valid values (so that most cases reach the rules), sometimes junk."""
    valid = st.sampled_from(list(values))
    return st.one_of(valid, valid, valid, JUNK)


CONFIG_FLAGS = {
    "--attention-backend": valid_or_junk(SGLANG_BACKENDS + VLLM_BACKENDS),
    "--backend": valid_or_junk(SGLANG_BACKENDS),
    "--prefill-attention-backend": valid_or_junk(SGLANG_BACKENDS),
    "--decode-attention-backend": valid_or_junk(SGLANG_BACKENDS),
    "--mm-attention-backend": valid_or_junk(["fa3", "fa4", "triton_attn", "sdpa", "flashinfer_cudnn", "aiter_attn"]),
    "--kv-cache-dtype": valid_or_junk(KV_DTYPES),
    "--page-size": INTS,
    "--speculative-algorithm": valid_or_junk(["EAGLE", "EAGLE3", "NEXTN", "NGRAM", "DFLASH", "STANDALONE", "eagle"]),
    "--speculative-eagle-topk": INTS,
    "--tp-size": INTS,
    "--tp": INTS,
    "--dtype": valid_or_junk(["auto", "bfloat16", "float16", "half", "float32", "fp8", "bf16"]),
    "--model": valid_or_junk(PRESETS + MODEL_DIRS + [d + "/config.json" for d in MODEL_DIRS]),
    "--feature": valid_or_junk(list(FEATURES)),
    "--engine": valid_or_junk(["sglang", "vllm"]),
    "--format": valid_or_junk(["table", "json", "markdown", "JSON", "nfd"]),
}
TARGET_FLAGS = {
    "--gpu": valid_or_junk(GPU_NAMES),
    "--facts": valid_or_junk(FACTS_FILES + [str(TESTS), str(FIXTURES / "models" / "phi-2" / "config.json")]),
    "--engine-version": valid_or_junk(
        [
            "sglang==0.5.23",
            "sglang==0.5.5",
            "vllm==0.13.0",
            "flash-attn-4==4.0.0b36",
            "flashinfer==0.5.3",
            "sglang==x",
            "torch==2.9",
            "sglang>=0.5",
            "sglang==",
        ]
    ),
}
CHECK_SWITCHES = ["--enable-deterministic-inference", "--deterministic", "--strict", "--all"]
STRAY = ["--no-such-flag", "-x", "--help", "--", "-"]  # rare: each ends the case in a usage error (or help)


def flag_pairs(flags: dict, switches=()):
    """Up to 6 options: `--flag value`, `--flag=value`, a switch the verb has, or (rarely) a stray token."""
    pair = st.sampled_from(sorted(flags)).flatmap(lambda f: flags[f].map(lambda v: [f, v]))
    joined = st.sampled_from(sorted(flags)).flatmap(lambda f: flags[f].map(lambda v: [f"{f}={v}"]))
    options = [pair, pair, joined]
    if switches:
        options.append(st.sampled_from(list(switches)).map(lambda f: [f]))
    chosen = st.one_of(*options)
    stray = st.sampled_from(STRAY).map(lambda f: [f])
    one = st.integers(0, 24).flatmap(lambda n: stray if n == 0 else chosen)
    return st.lists(one, max_size=6).map(lambda pairs: [token for pair in pairs for token in pair])


# ------------------------------------------------------------------------------------------ check flags


@fuzz("check_flags")
@given(
    target=st.sampled_from(["--gpu", "--facts"]),
    flags=flag_pairs({**CONFIG_FLAGS, **TARGET_FLAGS}, CHECK_SWITCHES),
    data=st.data(),
)
def test_check_flags(target, flags, data):
    value = data.draw(st.sampled_from(GPU_NAMES if target == "--gpu" else FACTS_FILES))
    outcome(["check", target, value, *flags], "check_flags")


# ------------------------------------------------------------------------------------ pasted launch commands

LAUNCHERS = [
    ["python", "-m", "sglang.launch_server"],
    ["python3", "-m", "sglang.launch_server"],
    ["/usr/bin/python3.12", "-m", "sglang.launch_server"],
    ["sglang", "serve"],
    ["vllm", "serve"],
    ["vllm", "serve", "llama-3.1-8b"],
    ["python", "-m", "vllm.entrypoints.openai.api_server"],
    ["python", "-m", "http.server"],
    ["sh", "-c", "touch MARK"],
    ["torchrun", "--nproc-per-node", "8"],
    [],
]
ENVIRONMENT = [
    "VLLM_ATTENTION_BACKEND=FLASH_ATTN",
    "VLLM_ATTENTION_BACKEND=FLASHINFER",
    "VLLM_ATTENTION_BACKEND=",
    "CUDA_VISIBLE_DEVICES=0,1",
    "SGLANG_FLASHATTENTION_VERSION=3",
    "HF_TOKEN=hf_x",
    "env",
    "=x",
    "A=B=C",
]
SERVER_FLAGS = {
    **CONFIG_FLAGS,
    "--model-path": valid_or_junk(PRESETS + MODEL_DIRS),
    "--tensor-parallel-size": INTS,
    "--port": INTS,
    "--host": JUNK,
    "--mem-fraction-static": JUNK,
    "--attention-config.backend": valid_or_junk(VLLM_BACKENDS),
    "--max-model-len": INTS,
}


@fuzz("pasted_command")
@given(
    gpu=st.sampled_from(GPU_NAMES[:29]),
    env=st.lists(st.sampled_from(ENVIRONMENT), max_size=2),
    launcher=st.sampled_from(LAUNCHERS),
    model=st.sampled_from(PRESETS + MODEL_DIRS),
    flags=flag_pairs(SERVER_FLAGS, ["--enable-deterministic-inference", "--trust-remote-code"]),
    tail=st.lists(JUNK, max_size=1),
    fmt=st.sampled_from(["table", "json"]),
)
def test_pasted_launch_command(gpu, env, launcher, model, flags, tail, fmt):
    command = [*env, *launcher, "--model-path", model, *flags, *tail]
    outcome(["check", "--gpu", gpu, "--format", fmt, "--", *command], "pasted_command")


# ------------------------------------------------------------------------------- matrix, explain, fleet, smoke

MATRIX_FLAGS = {
    "--model": CONFIG_FLAGS["--model"],
    "--kv-cache-dtype": CONFIG_FLAGS["--kv-cache-dtype"],
    "--gpu": TARGET_FLAGS["--gpu"],
    "--backend": valid_or_junk(SGLANG_BACKENDS + VLLM_BACKENDS),
    "--engine": CONFIG_FLAGS["--engine"],
    "--page-size": INTS,
    "--tp": INTS,
    "--feature": CONFIG_FLAGS["--feature"],
    "--format": CONFIG_FLAGS["--format"],
}


@fuzz("matrix")
@given(
    model=st.sampled_from(PRESETS + MODEL_DIRS),
    gpu=st.sampled_from(GPU_NAMES[:29]),
    flags=flag_pairs(MATRIX_FLAGS, ["--deterministic"]),
)
def test_matrix(model, gpu, flags):
    # One GPU profile first keeps each case fast; the flags may add more, or junk.
    outcome(["matrix", "--model", model, "--gpu", gpu, *flags], "matrix")


@fuzz("explain")
@given(
    rule=valid_or_junk(sorted(rule.id for rule in all_rules())),
    extra=st.lists(st.one_of(JUNK, st.sampled_from(["--format", "json", "markdown", "table", "--help"])), max_size=3),
)
def test_explain(rule, extra):
    outcome(["explain", rule, *extra], "explain")


FLEET_FLAGS = {k: v for k, v in CONFIG_FLAGS.items() if k != "--model"}
FLEET_FLAGS["--model"] = valid_or_junk(PRESETS)


@fuzz("fleet")
@given(
    reports=st.lists(st.sampled_from(FACTS_FILES + [str(FIXTURES / "facts")]), min_size=1, max_size=4),
    junk=st.one_of(st.just([]), st.just([]), st.just([]), st.lists(JUNK, min_size=1, max_size=1)),
    flags=flag_pairs(FLEET_FLAGS, ["--deterministic", "--strict"]),
)
def test_fleet(reports, junk, flags):
    outcome(["fleet", *reports, *junk, *flags], "fleet")


REPORT_FLAGS = {k: v for k, v in FLEET_FLAGS.items() if k != "--format"}
REPORT_FLAGS["--smoke"] = valid_or_junk(sorted(glob.glob(str(FIXTURES / "smoke-*.json"))) + FACTS_FILES[:1])


@fuzz("report")
@given(facts=st.sampled_from(FACTS_FILES), flags=flag_pairs(REPORT_FLAGS, ["--deterministic"]))
def test_report(scratch, facts, flags):
    outcome(["report", "-o", str(scratch / "report.html"), "--facts", facts, *flags], "report")


@pytest.fixture(scope="module")
def no_gpu(tmp_path_factory):
    """No GPU, whatever this machine has: every GPU kernel is skipped at once, so only the arguments are fuzzed.
    Module-scoped: hypothesis' health check refuses a function-scoped fixture shared by generated cases."""
    no_library = NVMLError(NVML_ERROR_LIBRARY_NOT_FOUND, "NVML Shared Library Not Found")
    with pytest.MonkeyPatch.context() as patch:
        use_fake_pynvml(patch, tmp_path_factory.mktemp("nvml"), [], init_error=no_library)
        yield


def _gpu_only_kernel_names():
    from attn_preflight.probe.smoke.kernels import families, registry

    kernels = registry()
    names = [name for name, kernel in kernels.items() if kernel.needs_gpu]
    return names + [family for family, members in families(kernels).items() if all(m in names for m in members)]


SMOKE_FLAGS = {
    "--timeout": st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), INTS, JUNK),
    "--level": valid_or_junk(["quick", "full", "QUICK"]),
    "--dtype": valid_or_junk(["bf16", "fp16", "fp8", "fp32", "FP8"]),
    "--jobs": INTS,
    "--format": CONFIG_FLAGS["--format"],
}


@fuzz("smoke")
@given(kernels=st.lists(valid_or_junk(_gpu_only_kernel_names()), min_size=1, max_size=3), flags=flag_pairs(SMOKE_FLAGS))
def test_smoke_arguments(no_gpu, kernels, flags):
    outcome(["smoke", *[token for name in kernels for token in ("--kernel", name)], *flags], "smoke")


# ------------------------------------------------------------------------------------------ config.json

CONFIG_KEYS = [
    "architectures",
    "model_type",
    "num_attention_heads",
    "num_key_value_heads",
    "hidden_size",
    "head_dim",
    "v_head_dim",
    "kv_lora_rank",
    "qk_nope_head_dim",
    "qk_rope_head_dim",
    "sliding_window",
    "use_sliding_window",
    "layer_types",
    "sliding_window_pattern",
    "attn_logit_softcapping",
    "attention_chunk_size",
    "is_encoder_decoder",
    "cross_attention_layers",
    "torch_dtype",
    "dtype",
    "text_config",
    "dual_chunk_attention_config",
    "full_attention_interval",
    "decoder_attention_heads",
    "d_model",
    "attention_sinks",
    "num_hidden_layers",
    "mamba_chunk_size",
    "chunk_size",
]
WEIRD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.sampled_from([0, -1, 10**30, 10**400, 2**63]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.one_of(st.integers(), st.text(max_size=8), st.none()), max_size=4),
    st.dictionaries(st.sampled_from(CONFIG_KEYS), st.integers(), max_size=3),
)
JSON_VALUES = st.recursive(
    WEIRD,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(CONFIG_KEYS), st.text(max_size=8)), inner, max_size=6),
    ),
    max_leaves=24,
)


def write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, allow_nan=True))


@fuzz("random_config")
@given(
    config=st.one_of(st.dictionaries(st.sampled_from(CONFIG_KEYS), JSON_VALUES, max_size=10), JSON_VALUES),
    backend=st.sampled_from(["fa3", "fa4", "flashinfer", "triton", "trtllm_mha", "flashmla"]),
    gpu=st.sampled_from(["H100", "B200", "A100", "RTX 5090"]),
    fmt=st.sampled_from(["table", "json", "markdown"]),
)
def test_random_config_json(scratch, config, backend, gpu, fmt):
    model = scratch / "random-model"
    model.mkdir(exist_ok=True)
    write_json(model / "config.json", config)
    outcome(
        ["check", "--gpu", gpu, "--model", str(model), "--attention-backend", backend, "--format", fmt], "random_config"
    )


@st.composite
def mutated_config(draw):
    config = copy.deepcopy(draw(st.sampled_from(REAL_CONFIGS)))
    for _ in range(draw(st.integers(1, 4))):
        operation = draw(st.sampled_from(["set", "delete", "nest", "nest-twice"]))
        holder = (
            config.get("text_config") if isinstance(config.get("text_config"), dict) and draw(st.booleans()) else config
        )
        if operation == "set":
            holder[draw(st.sampled_from(CONFIG_KEYS))] = draw(WEIRD)
        elif operation == "delete" and holder:
            holder.pop(draw(st.sampled_from(sorted(holder))), None)
        elif operation == "nest":
            config = {"architectures": config.get("architectures"), "text_config": config}
        else:
            config = {"text_config": {"text_config": config}}
    return config


@fuzz("mutated_config")
@given(
    config=mutated_config(),
    backend=st.sampled_from(["fa3", "fa4", "flashinfer", "triton", "trtllm_mla", "fa4"]),
    gpu=st.sampled_from(["H100", "B200", "A100", "RTX 5090", "L40S"]),
    extra=st.lists(
        st.sampled_from(
            [
                "--deterministic",
                "--kv-cache-dtype=fp8_e4m3",
                "--page-size=64",
                "--tp=8",
                "--speculative-algorithm=EAGLE",
                "--format=json",
            ]
        ),
        max_size=3,
    ),
)
def test_mutated_config_json(scratch, config, backend, gpu, extra):
    model = scratch / "mutated-model"
    model.mkdir(exist_ok=True)
    write_json(model / "config.json", config)
    outcome(["check", "--gpu", gpu, "--model", str(model), "--attention-backend", backend, *extra], "mutated_config")


# ------------------------------------------------------------------------------------------ facts files


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


FACT_TEXTS = [
    "",
    "x",
    "9.0",
    "10.0",
    "12.1",
    "sm_90",
    "sm_100a",
    "compute_120",
    "12.8",
    "12.4",
    "13.0",
    "cpu",
    "2.9.1+cu128",
    "2.6.0+cu124",
    "4.0.0b36",
    "0.5.23",
    "not-a-version",
    "ok",
    "error",
    "timeout",
    "crashed",
    "skipped",
    "not_installed",
    "fa4",
    "NVIDIA B200",
    "enabled",
]


def same_kind(value):
    """A value of the same JSON type (so the report still loads and the odd value reaches the rules)."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.one_of(st.integers(-300, 300), st.sampled_from([0, -1, 10**30, 10**400, 2**63]))
    if isinstance(value, float):
        return st.floats(allow_nan=True, allow_infinity=True)
    if isinstance(value, str):
        return st.one_of(st.sampled_from(FACT_TEXTS), st.text(max_size=16))
    if isinstance(value, list):
        return (
            st.one_of(st.just([]), st.lists(st.sampled_from(value), max_size=8))
            if value
            else st.lists(st.sampled_from(FACT_TEXTS), max_size=3)
        )
    if isinstance(value, dict):
        return (
            st.just(value)
            if not value
            else st.sampled_from(sorted(value)).map(lambda key: {k: v for k, v in value.items() if k != key})
        )
    return JSON_VALUES


@st.composite
def mutated_facts(draw):
    facts = copy.deepcopy(draw(st.sampled_from(REAL_FACTS)))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from([p for p in _paths(facts) if p]))
        parent = facts
        for step in path[:-1]:
            parent = parent[step]
        operation = draw(st.sampled_from(["same-kind", "same-kind", "same-kind", "replace", "delete", "duplicate"]))
        if operation == "same-kind":
            parent[path[-1]] = draw(same_kind(parent[path[-1]]))
        elif operation == "replace":
            parent[path[-1]] = draw(JSON_VALUES)
        elif operation == "delete":
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
    text = json.dumps(facts, allow_nan=True)
    if draw(st.integers(0, 9)) == 0:  # a report cut short (a full disk, a killed copy)
        text = text[: draw(st.integers(0, len(text)))]
    return text


@fuzz("mutated_facts")
@given(
    text=mutated_facts(),
    backend=st.sampled_from(["fa3", "fa4", "flashinfer", "triton", "trtllm_mha"]),
    fmt=st.sampled_from(["table", "json", "markdown"]),
)
def test_mutated_facts_file(scratch, text, backend, fmt):
    path = scratch / "mutated-facts.json"
    path.write_text(text)
    outcome(["check", "--facts", str(path), "--attention-backend", backend, "--format", fmt], "mutated_facts")
    outcome(
        ["fleet", str(path), FACTS_FILES[0], "--attention-backend", backend, "--format", fmt], "mutated_facts_fleet"
    )


# ------------------------------------------------------------------- attacks (issue 12): shapes of input

DEEP_OPENERS = {"list": ("[", "]"), "object": ('{"a":', "}")}


@fuzz("deep_json")
@given(
    depth=st.integers(1, 100_000),
    kind=st.sampled_from(sorted(DEEP_OPENERS)),
    balanced=st.booleans(),
    where=st.sampled_from(["facts", "config", "matrix", "report", "fleet"]),
)
def test_deep_json(scratch, depth, kind, balanced, where):
    opener, closer = DEEP_OPENERS[kind]
    text = opener * depth + ("1" if kind == "object" else "") + (closer * depth if balanced else "")
    model = scratch / "deep-model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(text)
    facts = scratch / "deep-facts.json"
    facts.write_text(text)
    argv = {
        "facts": ["check", "--facts", str(facts)],
        "config": ["check", "--gpu", "H100", "--model", str(model)],
        "matrix": ["matrix", "--model", str(model)],
        "report": ["report", "--facts", str(facts), "-o", str(scratch / "deep.html")],
        "fleet": ["fleet", str(facts), FACTS_FILES[0]],
    }[where]
    code = outcome(argv, "deep_json")
    assert code == 2 or depth <= 64 and balanced  # deeper than any report or config nests: refused


BIG_FIELDS = ["num_attention_heads", "head_dim", "hidden_size", "attn_logit_softcapping", "sliding_window"]


@fuzz("big_numbers")
@given(
    digits=st.integers(1, 10_000),
    sign=st.sampled_from(["", "-"]),
    field=st.sampled_from(BIG_FIELDS),
    in_report=st.booleans(),
)
def test_big_numbers(scratch, digits, sign, field, in_report):
    number = sign + "9" * digits
    if in_report:
        path = scratch / "big-facts.json"
        text = Path(FACTS_FILES[0]).read_text()
        path.write_text(text.replace('"gpus": {', f'"gpus": {{"{field}": {number}, ', 1))
        outcome(["check", "--facts", str(path)], "big_numbers")
        outcome(["fleet", str(path)], "big_numbers")
    else:
        model = scratch / "big-model"
        model.mkdir(exist_ok=True)
        config = dict(REAL_CONFIGS[0])
        text = json.dumps(config)[:-1] + f', "{field}": {number}}}'
        (model / "config.json").write_text(text)
        outcome(["check", "--gpu", "H100", "--model", str(model)], "big_numbers")


def special_file(scratch: Path, kind: str) -> Path:
    """A path that is not a readable regular file holding JSON, of one kind."""
    path = scratch / f"special-{kind.replace('/', '-')}"
    if os.path.lexists(path):
        return path
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling-link":
        path.symlink_to(scratch / "nowhere")
    elif kind == "link-loop":
        path.symlink_to(path)
    elif kind == "empty":
        path.write_text("")
    else:  # a device
        path.symlink_to(kind)
    return path


SPECIAL_KINDS = ["fifo", "directory", "dangling-link", "link-loop", "empty", "/dev/zero", "/dev/null", "/dev/urandom"]


@fuzz("special_files")
@given(
    kind=st.sampled_from(SPECIAL_KINDS),
    role=st.sampled_from(["facts", "config", "matrix", "report", "report-smoke", "fleet"]),
)
def test_special_files(scratch, kind, role):
    path = special_file(scratch, kind)
    model = scratch / f"special-model-{kind.replace('/', '-')}"
    if not model.exists():
        model.mkdir()
        (model / "config.json").symlink_to(path)
    argv = {
        "facts": ["check", "--facts", str(path)],
        "config": ["check", "--gpu", "H100", "--model", str(model)],
        "matrix": ["matrix", "--model", str(model / "config.json")],
        "report": ["report", "--facts", str(path), "-o", str(scratch / "special.html")],
        "report-smoke": ["report", "--facts", FACTS_FILES[0], "--smoke", str(path), "-o", str(scratch / "s.html")],
        "fleet": ["fleet", str(path), FACTS_FILES[0]],
    }[role]
    assert outcome(argv, "special_files") == 2 or kind == "directory" and role == "fleet"


HEALTH_FIELDS = ["status", "module", "seconds", "error", "causes", "details", "cached"]


@fuzz("cache_entries")
@given(
    entry=st.one_of(
        JSON_VALUES,
        st.fixed_dictionaries(
            {"status": st.sampled_from(["ok", "error", "crashed", "timeout", "skipped", "bogus"])},
            optional={name: JSON_VALUES for name in HEALTH_FIELDS if name != "status"},
        ),
    )
)
def test_cache_entries(scratch, entry):
    """Whatever an import cache file holds for a request, reading it gives a typed, cacheable ImportHealth or a
    miss (checked again); the CLI-level attacks are in test_attacks.py."""
    from attn_preflight.probe.health import CACHEABLE, HEALTH_SCHEMA, ImportCache, ImportRequest

    GENERATED["cache_entries"] = GENERATED.get("cache_entries", 0) + 1
    request = ImportRequest(key="quack", module="quack")
    cache = ImportCache(str(scratch / "imports.json"), {ImportCache._key(request): entry})
    health = cache.get(request)
    if health is not None:
        assert health.status in CACHEABLE and health.cached
        assert HEALTH_SCHEMA.read(dataclasses.asdict(health), "read back") == health


class _Unwritable(io.TextIOWrapper):
    """A stdout whose writes fail as a full disk or a closed pipe makes them fail."""

    def __init__(self, error: OSError):
        super().__init__(io.BytesIO(), encoding="utf-8")
        self.error = error

    def write(self, text):
        raise self.error


SINK_ARGV = [
    ["check", "--gpu", "H100", "--model", "llama-3.1-8b"],
    ["check", "--gpu", "H100", "--kv-cache-dtype", "mxfp8"],
    ["matrix", "--model", "gemma-2-9b", "--gpu", "B200"],
    ["explain", "fa3-arch"],
    ["rules", "--subject", "fa4"],
    ["gpus"],
    ["fleet", FACTS_FILES[0]],
    ["report", "--facts", FACTS_FILES[0], "-o", "-"],
]


@fuzz("stdout_sinks")
@given(
    argv=st.sampled_from(SINK_ARGV),
    sink=st.sampled_from(["closed", "full", "broken-pipe", "ascii", "latin-1", "cp1252", "utf-8"]),
    fmt=st.sampled_from([[], ["--format", "json"], ["--format", "markdown"]]),
)
def test_stdout_sinks(argv, sink, fmt):
    """Every verb against a stdout that is closed, full, a closed pipe, or of a narrow encoding (a locale)."""
    argv = argv + (fmt if argv[0] != "report" else [])
    if sink == "closed":
        stdout = None
    elif sink == "full":
        stdout = _Unwritable(OSError(errno.ENOSPC, "No space left on device"))
    elif sink == "broken-pipe":
        stdout = _Unwritable(BrokenPipeError(errno.EPIPE, "Broken pipe"))
    else:
        stdout = io.TextIOWrapper(io.BytesIO(), encoding=sink, errors="strict")
    err = io.StringIO()
    GENERATED["stdout_sinks"] = GENERATED.get("stdout_sinks", 0) + 1
    with mock.patch("sys.stdout", stdout), contextlib.redirect_stderr(err), mock.patch("os.dup2"):
        try:
            main(list(argv))
        except SystemExit as stop:
            code = stop.code
    run = Run(int(code or 0), "", err.getvalue())
    assert_clean_outcome(run, argv)
    if sink in ("closed", "full"):
        assert code == 2 and "stdout" in run.err_lines[0], run.err
    else:
        assert code in (0, 1), run.err


SECRET_CHARS = st.text(alphabet=string.ascii_letters + string.digits + "/+=_-.~!$&'()*,;:@%", min_size=1, max_size=16)


@st.composite
def secret_command(draw):
    """A pasted command or a --model holding a secret (with the marker) where a user would put it."""
    secret = MARKER + draw(SECRET_CHARS).replace("@", "")
    password = draw(SECRET_CHARS) + MARKER + draw(SECRET_CHARS)  # may hold '/', '@', ':' or a quote
    url = f"{draw(st.sampled_from(['s3', 'https', 'redis', 'postgresql']))}://user:{password}@host/models"
    launcher = draw(st.sampled_from([["python", "-m", "sglang.launch_server"], ["sglang", "serve"], ["vllm", "serve"]]))
    shape = draw(st.sampled_from(["env", "sudo", "env-i", "assign", "api-key-first", "api-key", "model-url", "flag"]))
    if shape in ("env", "sudo", "env-i", "assign"):
        prefix = {"env": ["env"], "sudo": ["sudo"], "env-i": ["env", "-i"], "assign": []}[shape]
        name = draw(st.sampled_from(["HF_TOKEN", "SGLANG_API_KEY", "AWS_SECRET_ACCESS_KEY", "SGLANG_STORE"]))
        value = url if name == "SGLANG_STORE" else secret
        return ["check", "--gpu", "H100", "--", *prefix, f"{name}={value}", *launcher, "llama-3.1-8b"]
    if shape == "api-key-first":
        return ["check", "--gpu", "H100", "--", "python", "--api-key", secret, "-m", "sglang.launch_server"]
    if shape == "api-key":
        return ["check", "--gpu", "H100", "--", *launcher, "llama-3.1-8b", "--api-key", secret]
    if shape == "model-url":
        return ["check", "--gpu", "H100", "--model", url]
    return ["check", "--gpu", "H100", "--", *launcher, "--model-path", url, "--attention-backend", url]


@fuzz("secrets")
@given(argv=secret_command(), fmt=st.sampled_from(["table", "json", "markdown"]))
def test_secrets_never_echoed(argv, fmt):
    GENERATED["secrets"] = GENERATED.get("secrets", 0) + 1
    run = run_cli(argv + ["--format", fmt] if "--" not in argv else argv[:3] + ["--format", fmt] + argv[3:])
    assert_clean_outcome(run, argv)
    assert MARKER not in run.out and MARKER not in run.err, (argv, run.out[-2000:], run.err)


# ------------------------------------------------------------------------------ what the fuzzer found

# Each was a traceback (or a broken one-line error) before its fix; kept as plain regression tests.
FOUND_ARGV = {
    "vllm-auto-selection-without-a-model": ["check", "--gpu", "T4", "--engine", "vllm"],  # head size None
    "fleet-report-name-with-a-carriage-return": ["fleet", str(FIXTURES / "probe-cpu-ci.json"), "\r"],
}


@pytest.mark.parametrize("name", sorted(FOUND_ARGV))
def test_found_by_fuzzing_argv(name):
    run = run_cli(FOUND_ARGV[name])
    assert_clean_outcome(run, FOUND_ARGV[name])


FOUND_CONFIGS = {
    "architecture-not-a-string": {"architectures": [1], "num_attention_heads": 32, "hidden_size": 4096},
    "architecture-a-list": {"architectures": [["LlamaForCausalLM"]]},
    "model-type-a-list": {"model_type": ["llama"], "num_attention_heads": 32, "hidden_size": 4096},
    "layer-types-a-number": {"layer_types": 5, "num_attention_heads": 32, "hidden_size": 4096},
}


@pytest.mark.parametrize("name", sorted(FOUND_CONFIGS))
def test_found_by_fuzzing_config(scratch, name):
    """A wrongly typed field is read as absent (like the other fields of that kind), never a traceback."""
    model = scratch / name
    model.mkdir()
    write_json(model / "config.json", FOUND_CONFIGS[name])
    run = run_cli(["check", "--gpu", "H100", "--model", str(model), "--attention-backend", "fa3", "--format", "json"])
    assert_clean_outcome(run)
    assert run.code in (0, 1)
    model_facts = json.loads(run.out)["config"]["model"]
    assert model_facts["architecture"] is None or isinstance(model_facts["architecture"], str)
    assert model_facts["model_type"] is None or isinstance(model_facts["model_type"], str)


def test_generated_case_count():
    """The claim in the README: 3,305 generated cases per run (counted, not configured; a generator whose space
    is smaller than its budget stops early, so the floor is 3,200)."""
    if set(GENERATED) < set(EXAMPLES):
        pytest.skip("only part of the fuzz suite ran")
    total = sum(count for name, count in GENERATED.items() if name in EXAMPLES)
    assert total >= 3200, GENERATED
