"""What the user hands us, read into what rules judge: saved reports, this machine, model configs, smoke reports.

Every file goes through probe.jsonfile.read_json (regular files only, size and depth bounded); every failure
is a RulesInputError naming the file, which the commands turn into one line and exit 2.
"""

from __future__ import annotations

import os

from probe.jsonfile import JsonFileError, read_json
from rules.errors import RulesInputError
from rules.models import ModelFeatures, features_from_config, load_preset, presets
from rules.target import Target


def read_json_input(path: str, what: str):
    """The parsed JSON of `path`; RulesInputError 'cannot read <what> <path>: ...' or '<what> <path> is not
    valid JSON: ...'."""
    try:
        return read_json(path)
    except JsonFileError as err:
        if err.unreadable:
            raise RulesInputError(f"cannot read {what} {path}: {err}") from None
        raise RulesInputError(f"{what} {path} is not valid JSON: {err}") from None


def load_facts_file(path: str) -> Target:
    """A saved report (`probe --format json`) as a target."""
    from probe.facts import Facts, FactsError

    data = read_json_input(path, "facts file")
    try:
        facts = Facts.from_dict(data)
    except FactsError as err:
        raise RulesInputError(f"facts file {path}: {err}") from None
    return Target.from_facts(facts, kind="facts", label=path)


def live_target(timeout: float) -> Target:
    """This machine, probed now, each library's import check bounded by `timeout` seconds. probe.collect is
    imported here only: --gpu and --facts never load it."""
    from probe.collect import collect

    return Target.from_facts(collect(check_imports=True, timeout=timeout), kind="live", label="this machine")


def load_config_file(path: str) -> ModelFeatures:
    """A model directory's config.json, or a config.json path."""
    config_path = os.path.join(path, "config.json") if os.path.isdir(path) else path
    data = read_json_input(config_path, "model config")
    absolute = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(config_path)))
    return features_from_config(data, os.path.basename(absolute), config_path)


def load_model(spec: str) -> ModelFeatures:
    """A local directory / config.json, else a preset; RulesInputError naming the presets otherwise."""
    if os.path.exists(spec):
        return load_config_file(spec)
    preset = load_preset(spec)
    if preset is not None:
        return preset
    if spec.startswith((".", "/", "~")) or spec.endswith(".json"):
        raise RulesInputError(f"--model {spec}: no such file or directory")
    raise RulesInputError(
        f"--model {spec!r} is neither a local model directory nor a preset", choices=presets(), word=spec
    )
