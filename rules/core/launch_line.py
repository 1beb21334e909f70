"""parse_command: a pasted launch command (`python -m sglang.launch_server …`, `sglang serve …`, `vllm serve
MODEL …`, with `KEY=VALUE` environment prefixes, interpreter options and a `--config FILE`) tokenised with
shlex and read, never run, as the engine reads it; its flags are read with
attn_preflight.rules.core.flag_tables.read_flags (modelled, bearing but unmodelled, or not bearing).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from attn_preflight.rules.core.config import ENV_PREFIXES
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.flag_tables import ENV_ASSIGNMENT, read_flags
from attn_preflight.rules.knowledge import flags as flag_kb

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


_LAUNCHERS = "`python -m sglang.launch_server …`, `sglang serve …` or `vllm serve MODEL …`"


# CPython's command-line options that take a value (Python/getopt.c: "bBc:dEhiIm:OPqRsStuvVW:xX:?"), and the one
# long option that does; -c runs code instead of a module.
_PYTHON_VALUE_OPTIONS = frozenset("WX")


_PYTHON_LONG_VALUE_OPTIONS = frozenset({"--check-hash-based-pycs"})


@dataclass
class ParsedCommand:
    """What a pasted command says, before validation: `values` feed make_config (explicit flags win).

    `tokens` is the whole pasted command as split; `options` each option the engine's parser is given, as
    written (a vLLM name with its underscores turned into dashes, a dotted `--x.key` as `--x`), for the release
    check (general-flags-known); `unmodelled` the bearing flags no rule models and `ignored` those that do not
    bear on attention, as written. A `--config FILE` not given its mapping stays an unmodelled flag."""

    engine: str
    origin: str
    tokens: list[str] = field(default_factory=list)  # the whole command as split, environment prefixes included
    values: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    flags: dict[str, Any] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    unmodelled: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    config_file: Optional[str] = None  # `--config FILE`: the face reads it and parses again with its mapping


def _split(argv: Sequence[str]) -> list[str]:
    if len(argv) == 1 and any(c.isspace() for c in argv[0]):
        try:  # a backslash-newline is a line continuation to the shell: it joins, never becomes a word
            return shlex.split(argv[0].replace("\\\n", ""))
        except ValueError as err:
            raise RulesInputError(f"cannot parse the pasted command: {err}") from None
    return list(argv)


def _python_module(tokens: Sequence[str]) -> tuple[str, list[str]]:
    """`python [interpreter options] -m MODULE ARGS…` -> (MODULE, ARGS). Interpreter options are skipped, those
    that take a value with it (-X faulthandler, -W ignore, -Wignore, --check-hash-based-pycs never); `-m` may
    close a group of letters (-um MODULE), as CPython's getopt reads it."""
    rest = list(tokens[1:])
    while rest and rest[0].startswith("-") and rest[0] != "-":
        option = rest.pop(0)
        if option.startswith("--"):
            if option in _PYTHON_LONG_VALUE_OPTIONS and rest:
                rest.pop(0)
            continue
        letters = option[1:]
        for position, letter in enumerate(letters):
            attached = letters[position + 1 :]
            if letter == "m":
                return attached or (rest.pop(0) if rest else ""), rest
            if letter == "c":  # runs code, not a module
                rest = []
                break
            if letter in _PYTHON_VALUE_OPTIONS:
                if not attached and rest:
                    rest.pop(0)
                break
    raise RulesInputError(f"not a launch command: {' '.join(tokens[:3])} (expected {_LAUNCHERS})")


def _config_args(engine: str, config: Mapping[str, Any]) -> list[str]:
    """A `--config` YAML mapping as the engine turns it into arguments. SGLang (0.5.23 srt/utils/
    server_args_config_parser.py ConfigArgumentMerger._convert_config_to_args): a store_true flag is given for
    true and left out for false, another flag gets `true`/`false`; a list gives its items after the flag, a
    mapping its JSON, anything else str(value). vLLM (0.33.0 utils/argparse_utils.py load_config_file): true
    gives the flag, false its `--no-` twin where it has one (else nothing), lists, mappings and scalars as
    SGLang does."""
    table = flag_kb.flag_table(engine)
    args: list[str] = []
    for key, value in config.items():
        flag = f"--{key}"
        if isinstance(value, bool):
            if engine == "vllm":
                args += [flag] if value else [f"--no-{key}"] if f"--no-{key}" in table.options else []
            elif _store_true(table, key):
                args += [flag] if value else []
            else:
                args += [flag, str(value).lower()]
        elif isinstance(value, list):
            args += [flag, *map(str, value)] if value else []
        elif isinstance(value, dict):
            args += [flag, json.dumps(value)]
        else:
            args += [flag, str(value)]
    return args


def _store_true(table: flag_kb.FlagTable, key: str) -> bool:
    """SGLang's _config_keys: a key names an action by its dest or a long option, dashes as underscores."""
    wanted = key.replace("-", "_")
    return any(
        spec.nargs == 0 and wanted in (spec.dest, option[2:].replace("-", "_"))
        for option, spec in table.options.items()
        if option.startswith("--")
    )


def _with_config(engine: str, rest: list[str], config: Mapping[str, Any]) -> list[str]:
    """`rest` with `--config FILE` replaced by the file's arguments where the engine puts them: first for SGLang
    (merge_config_with_args), after the positional model for vLLM (_pull_args_from_config); the command line
    comes after them and wins, as argparse keeps the last value."""
    index = rest.index("--config")
    head = rest[:1] if engine == "vllm" and rest and not rest[0].startswith("-") else []
    return [*head, *_config_args(engine, config), *rest[len(head) : index], *rest[index + 2 :]]


def _launcher(tokens: Sequence[str]) -> tuple[dict[str, str], str, str, list[str]]:
    """(every KEY=VALUE prefix, engine, origin, the arguments its parser gets) of a split launch command."""
    words = list(tokens)
    env: dict[str, str] = {}
    while words and (words[0] == "env" or ENV_ASSIGNMENT.match(words[0])):
        word = words.pop(0)
        if word == "env":
            continue
        key, _, assigned = word.partition("=")
        env[key] = assigned
    if not words:
        raise RulesInputError(f"empty command after --: paste {_LAUNCHERS}")
    program = posixpath.basename(words[0])
    if _PYTHON.match(program):
        module, rest = _python_module(words)
        if module == "sglang.launch_server":
            engine, origin = "sglang", "python -m sglang.launch_server"
        elif module in ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.cli.main"):
            engine, origin = "vllm", f"python -m {module}"
            if rest and rest[0] == "serve":
                rest = rest[1:]
        else:
            raise RulesInputError(f"not a launch command: python -m {module} (expected {_LAUNCHERS})")
    elif program in ("sglang", "vllm") and len(words) > 1 and words[1] == "serve":
        engine, origin, rest = program, f"{program} serve", words[2:]
        if engine == "sglang" and rest and not rest[0].startswith("-"):
            rest = ["--model-path", *rest]  # sglang/cli/serve.py _normalize_positional_model_path
    else:
        raise RulesInputError(f"not a launch command: {' '.join(words[:2])} (expected {_LAUNCHERS})")

    return env, engine, origin, list(rest)


def engine_arguments(argv: Sequence[str]) -> tuple[str, list[str], dict[str, str]]:
    """(engine, the arguments its parser gets, every KEY=VALUE prefix) of a pasted launch command, as written:
    `--config` not merged (the engine merges it), for `check --ask-engine` to hand to the engine's own parser."""
    env, engine, _origin, rest = _launcher(_split(argv))
    return engine, rest, env


def parse_command(argv: Sequence[str], config: Optional[Mapping[str, Any]] = None) -> ParsedCommand:
    """A pasted command read as its engine reads it; `config` is the mapping of its `--config FILE`, when the
    face has read it (ParsedCommand.config_file says which file)."""
    tokens = _split(argv)
    assigned_env, engine, origin, rest = _launcher(tokens)
    env = {key: value for key, value in assigned_env.items() if key.startswith(ENV_PREFIXES)}
    ignored = [key for key in assigned_env if not key.startswith(ENV_PREFIXES)]

    config_file = None
    if rest.count("--config") > 1:  # SGLang: "Multiple config files specified!"; vLLM asserts the same
        raise RulesInputError("--config is given more than once; each engine reads one config file")
    if "--config" in rest:  # only the exact token: `--config=FILE` is stored and never read by either engine
        index = rest.index("--config")
        if index + 1 >= len(rest):
            raise RulesInputError("--config in the pasted command has no file")
        config_file = rest[index + 1]
        if origin == "sglang serve" and not any(
            arg in ("--model-path", "--model") or arg.startswith(("--model-path=", "--model=")) for arg in rest
        ):  # sglang/cli/utils.py get_model_path reads the command line only (sgl-project/sglang#36105)
            raise RulesInputError(
                "sglang serve reads --model-path from the command line only: with the model in --config it exits "
                "'Error: --model-path is required' (give --model-path, or use python -m sglang.launch_server)"
            )
        if config is not None:
            rest = _with_config(engine, rest, config)
    values, flags, unmodelled, not_bearing, options = read_flags(engine, rest)
    parsed = ParsedCommand(
        engine=engine,
        origin=origin,
        tokens=tokens,
        values=values,
        env=env,
        flags=flags,
        options=options,
        unmodelled=unmodelled,
        ignored=ignored + not_bearing,
        config_file=config_file,
    )
    if engine == "vllm" and "attention_backend" not in parsed.values and env.get("VLLM_ATTENTION_BACKEND"):
        parsed.values["attention_backend"] = env["VLLM_ATTENTION_BACKEND"]
    return parsed
