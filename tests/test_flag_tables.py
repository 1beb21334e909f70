"""The engines' flag tables (rules/engines/<engine>/releases/<version>.json, from the wheels) and argparse's
reading of a flag."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from cli_run import assert_clean_outcome, check_json, finding, run_cli

from attn_preflight.rules.core.launch_line import parse_command
from attn_preflight.rules.engines import releases
from attn_preflight.rules.knowledge import flags as flag_kb


class _Refused(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits on ambiguity whatever exit_on_error says
        raise _Refused(message)


def argparse_of(table: flag_kb.FlagTable) -> argparse.ArgumentParser:
    """CPython's own argparse holding the table's options: the reference `resolve` must agree with."""
    parser = _Parser(allow_abbrev=table.allow_abbrev, add_help=False)
    for option, spec in table.options.items():
        if spec.nargs == 0:
            parser.add_argument(option, dest=spec.dest, action="store_const", const=option)
        else:
            parser.add_argument(option, dest=spec.dest, nargs=None if spec.nargs == 1 else spec.nargs)
    return parser


def tokens_to_try(table: flag_kb.FlagTable) -> list[str]:
    """Every prefix of every long option (unique, ambiguous or exact), -xVALUE forms, and unknown names."""
    found = {"--no-such-flag", "-Z"}
    for option in table.options:
        if option.startswith("--"):
            found.update(option[:n] for n in range(3, len(option) + 1))
        else:
            found.update({option, option + "7"})
    return sorted(found)


@pytest.mark.parametrize("engine, release", [("sglang", None), ("sglang", "0.5.5"), ("vllm", None), ("vllm", "0.13.0")])
def test_resolve_agrees_with_argparse(engine, release):
    table = flag_kb.flag_table(engine, release)
    parser = argparse_of(table)
    checked = 0
    for token in tokens_to_try(table):
        try:
            resolved = table.resolve(token)
        except flag_kb.FlagError as err:
            with pytest.raises(_Refused) as refused:
                parser.parse_args([token, "1"] if token.startswith("--") else [token])
            assert str(err).split(":")[0] in str(refused.value), token
            continue
        value = [] if resolved.spec.nargs == 0 or resolved.attached is not None else ["1"]
        if resolved.spec.nargs not in (0, 1, "?", "*", "+"):
            value = ["1"] * resolved.spec.nargs
        namespace = vars(parser.parse_args([token, *value]))
        assert namespace[resolved.spec.dest] is not None, token
        checked += 1
    assert checked > 500


def test_the_tables_hold_what_the_wheels_define():
    """Facts read in the wheels: sglang 0.5.23 arg_groups/fields/parallel.py gives --ep-size the aliases
    --expert-parallel-size and --ep; --tp and --dp are no flags there, but unique prefixes of --tp-size and
    --dp-size; vllm 0.16.0's FrontendArgs has disable_log_requests, 0.17.0's does not; -tp is vLLM's alias."""
    sglang = flag_kb.flag_table("sglang", "0.5.23")
    assert sglang.options["--ep"] == sglang.options["--expert-parallel-size"] == flag_kb.Option("ep_size", 1)
    assert "--tp" not in sglang.options and sglang.resolve("--tp").option == "--tp-size"
    assert sglang.resolve("--dp=8") == flag_kb.Resolved("--dp-size", flag_kb.Option("dp_size", 1), "8")
    assert sglang.options["--enable-dp-attention"].nargs == 0
    assert "--disable-log-requests" in flag_kb.flag_table("vllm", "0.16.0").options
    assert "--disable-log-requests" not in flag_kb.flag_table("vllm", "0.17.0").options
    vllm = flag_kb.flag_table("vllm", "0.33.0")
    assert vllm.options["-tp"] == vllm.options["--tensor-parallel-size"]
    assert vllm.options["--no-enable-prefix-caching"] == flag_kb.Option("enable_prefix_caching", 0)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_the_index_is_what_the_release_files_imply(engine):
    """index.json is derived (bench/release_files.py), never edited: a release file added or changed by hand
    without rewriting it would leave a check reading stale flags."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import release_files

    assert releases.index(engine) == release_files.index(engine)


def test_a_release_maps_to_its_table():
    assert flag_kb.table_release("sglang", "0.5.23.post1") == "0.5.23"
    assert flag_kb.table_release("sglang", "0.5.9") == "0.5.9"
    assert flag_kb.table_release("sglang", "0.4.6") is None
    assert flag_kb.table_release("vllm", "9.0.0") == "0.33.0"
    assert flag_kb.table_release("vllm", "garbage") is None


def test_a_flag_split_after_the_docs_were_written_fails_on_the_release():
    """SGLang's speculative-decoding docs pass --cuda-graph-max-bs 8; sglang 0.5.20 split it into -decode and
    -prefill, so argparse there refuses it as ambiguous; 0.5.13 has it."""
    command = ["sglang", "serve", "--model-path", "llama-3.1-8b", "--cuda-graph-max-bs", "8"]
    run, new = check_json(["--gpu", "H100", "--engine-version", "sglang==0.5.23", "--", *command])
    assert run.code == 1 and finding(new, "general-flags-known")["status"] == "fail"
    assert "ambiguous option: --cuda-graph-max-bs could match" in finding(new, "general-flags-known")["message"]
    _, old = check_json(["--gpu", "H100", "--engine-version", "sglang==0.5.13", "--", *command])
    assert finding(old, "general-flags-known")["status"] == "pass"


def test_an_unknown_version_is_judged_with_the_newest_table_and_says_so():
    _, report = check_json(["--gpu", "H100", "--", "vllm", "serve", "llama-3.1-8b", "--no-such-flag"])
    known = finding(report, "general-flags-known")
    assert known["status"] == "fail" and "unrecognized arguments: --no-such-flag" in known["message"]
    assert "version unknown: the newest table" in known["message"] + known.get("required", "")


@pytest.mark.parametrize(
    "launcher",
    [
        ["python", "-X", "faulthandler", "-m", "sglang.launch_server"],
        ["python", "-W", "ignore", "-m", "sglang.launch_server"],
        ["python3.12", "-u", "-m", "sglang.launch_server"],
        ["/usr/bin/python3", "-m", "sglang.launch_server"],
        ["python3", "-Wignore", "-um", "sglang.launch_server"],
        ["python", "--check-hash-based-pycs", "never", "-m", "sglang.launch_server"],
    ],
)
def test_interpreter_options_are_accepted(launcher):
    """Issue 12 item 8: CPython's options before -m (those taking a value, -X and -W, with it)."""
    run, report = check_json(["--gpu", "H100", "--", *launcher, "--model-path", "llama-3.1-8b", "--tp", "2"])
    assert run.code in (0, 1) and report["config"]["tp_size"] == 2
    assert report["config"]["origin"] == "python -m sglang.launch_server"


def test_python_running_code_is_not_a_launch_command():
    run = run_cli(["check", "--gpu", "H100", "--", "python", "-c", "import sglang", "-m", "sglang.launch_server"])
    assert run.code == 2 and "not a launch command" in run.err


@pytest.mark.parametrize(
    "argv, reason",
    [
        (["--page-size", "9" * 30], "--page-size: 99999999999999999999… is beyond any real launch"),
        (["--", "sglang", "serve", "--model-path", "llama-3.1-8b", "--page-size", "9" * 30], "--page-size: 9999"),
        (["--speculative-algorithm", "rm -rf /"], "unknown sglang speculative algorithm 'rm -rf /'"),
        (
            ["--", "sglang", "serve", "--model-path", "llama-3.1-8b", "--speculative-algorithm", "rm -rf /"],
            "'rm -rf /'",
        ),
        (["--", "sglang", "serve", "--model-path", "llama-3.1-8b", "--enable-dp-attention=yes"], "takes no value"),
    ],
)
def test_bad_values_are_one_line_and_exit_2(argv, reason):
    """Issue 12 item 7. SGLang's from_string upper-cases the name (speculative/spec_info.py), so eagle3 is EAGLE3."""
    run = run_cli(["check", "--gpu", "H100", *argv])
    assert_clean_outcome(run, argv)
    assert run.code == 2 and reason in run.err
    assert run_cli(["check", "--gpu", "H100", "--speculative-algorithm", "eagle3"]).code in (0, 1)


def test_vllm_reads_an_abbreviation_as_its_flag():
    """vLLM's Qwen3-VL recipe passes --tensor-parallel 4: argparse's unique prefix of --tensor-parallel-size."""
    parsed = parse_command(
        ["vllm serve Qwen/Qwen3-VL-235B-A22B-Instruct --tensor-parallel 4 --mm-encoder-tp-mode data"]
    )
    assert parsed.values["tp_size"] == 4 and parsed.unmodelled == ["--mm-encoder-tp-mode"]
    assert parsed.tokens[:3] == ["vllm", "serve", "Qwen/Qwen3-VL-235B-A22B-Instruct"]


CORPUS_LINES = [
    line["command"]
    for line in __import__("json").loads(
        (__import__("pathlib").Path(__file__).parent / "fixtures" / "launch_lines.json").read_text(encoding="utf-8")
    )["lines"]
]


@pytest.mark.parametrize("command", CORPUS_LINES, ids=[str(i) for i in range(len(CORPUS_LINES))])
def test_a_corpus_line_reads_as_argparse_reads_it(command):
    """CPython's argparse, holding the newest release's options (and vLLM's positional model), reads each real
    line to the same model, backend, TP, KV dtype and page size as the parser; lines argparse refuses are
    refused by general-flags-known too. vLLM lines with FlexibleArgumentParser rewrites (dotted keys, `_` in
    names, -O) are left to the corpus test: plain argparse does not do those."""
    parsed = parse_command([command])
    words = parsed.tokens
    start = (
        next(
            i
            for i, w in enumerate(words)
            if w in ("sglang.launch_server", "serve", "vllm.entrypoints.openai.api_server")
        )
        + 1
    )
    args = words[start:]
    if parsed.engine == "vllm" and any(
        "." in a.partition("=")[0] or "_" in a.partition("=")[0] for a in args if a.startswith("-")
    ):
        pytest.skip("FlexibleArgumentParser rewrites")
    table = flag_kb.flag_table(parsed.engine)
    parser = argparse_of(table)
    if parsed.engine == "vllm":
        parser.add_argument("model_tag", nargs="?")
    try:
        namespace = vars(parser.parse_args(args))
    except _Refused:
        refused = []
        for option in parsed.options:
            try:
                table.resolve(option)
            except flag_kb.FlagError:
                refused.append(option)
        assert refused, command
        return
    fields = {
        "model": namespace.get("model_path") or namespace.get("model_tag") or namespace.get("model"),
        # vLLM reads VLLM_ATTENTION_BACKEND when no flag names a backend (parse_command does too)
        "attention_backend": namespace.get("attention_backend") or parsed.env.get("VLLM_ATTENTION_BACKEND"),
        "tp_size": namespace.get("tp_size") or namespace.get("tensor_parallel_size"),
        "kv_cache_dtype": namespace.get("kv_cache_dtype"),
        "page_size": namespace.get("page_size") or namespace.get("block_size"),
    }
    for key, value in fields.items():
        ours = parsed.values.get(key)
        assert (str(ours) if ours is not None else None) == value, (key, command)
