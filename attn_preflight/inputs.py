"""What the user hands us, read into what rules judge: saved reports, this machine, model configs, smoke reports.

Every file goes through attn_preflight.probe.jsonfile.read_json (regular files only, size and depth bounded); every failure
is a RulesInputError naming the file, which the commands turn into one line and exit 2.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from attn_preflight.probe.jsonfile import JsonFileError, read_json, read_regular
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.models import ModelFeatures, features_from_config, load_preset, presets
from attn_preflight.rules.core.target import Target


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
    from attn_preflight.probe.facts import Facts, FactsError

    data = read_json_input(path, "facts file")
    try:
        facts = Facts.from_dict(data)
    except FactsError as err:
        raise RulesInputError(f"facts file {path}: {err}") from None
    return Target.from_facts(facts, kind="facts", label=path)


def live_target(timeout: float) -> Target:
    """This machine, probed now, each library's import check bounded by `timeout` seconds. attn_preflight.probe.collect is
    imported here only: --gpu and --facts never load it."""
    from attn_preflight.probe.collect import collect

    return Target.from_facts(collect(check_imports=True, timeout=timeout), kind="live", label="this machine")


def load_config_file(path: str) -> ModelFeatures:
    """A model directory's config.json, or a config.json path."""
    config_path = os.path.join(path, "config.json") if os.path.isdir(path) else path
    data = _with_quant_sidecar(read_json_input(config_path, "model config"), config_path)
    absolute = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(os.path.abspath(config_path)))
    return features_from_config(data, os.path.basename(absolute), config_path)


def _with_quant_sidecar(config: Any, config_path: str) -> Any:
    """config.json with ModelOpt's hf_quant_config.json beside it as its quantization_config, where config.json
    has none: vLLM reads it so (transformers_utils/config.py get_config, "ModelOpt 0.29.0 and before saves the
    quantization config in a separate hf_quant_config.json"), and SGLang too (configs/model_config.py
    _parse_quant_hf_config)."""
    sidecar = os.path.join(os.path.dirname(os.path.abspath(config_path)), "hf_quant_config.json")
    if not isinstance(config, dict) or config.get("quantization_config") is not None or not os.path.isfile(sidecar):
        return config
    return {**config, "quantization_config": read_json_input(sidecar, "model quantization config")}


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class ModelNotFound(Exception):
    """A hub id whose config.json is neither in the local Hugging Face cache nor a preset: the model's rules
    cannot be judged (never a download: attn-preflight works offline)."""

    def __init__(self, reference: str, looked_in: str):
        super().__init__(
            f"{reference}: no config.json in the Hugging Face cache ({looked_in}) and no preset of that name"
        )
        self.reference, self.looked_in = reference, looked_in


def _found_model(spec: str) -> Optional[ModelFeatures]:
    """A local directory or config.json, a hub id's cached config.json, or a preset; None when it is none here."""
    if os.path.exists(spec):
        return load_config_file(spec)
    if _HUB_ID.match(spec):
        cached = cached_config(spec)
        if cached is not None:
            config = _with_quant_sidecar(read_json_input(cached, "model config"), cached)
            return features_from_config(config, spec, cached)
    return load_preset(spec)


def load_model(spec: str) -> ModelFeatures:
    """A local directory or config.json; a hub id's config.json in the local Hugging Face cache; a preset by its
    exact name, alias or hub id. RulesInputError for a path that does not exist or a name that is none of
    these; ModelNotFound for a hub id found nowhere."""
    if not os.path.exists(spec) and (spec.startswith((".", "/", "~")) or spec.endswith(".json") or spec.count("/") > 1):
        raise RulesInputError(f"--model {spec}: no such file or directory")
    found = _found_model(spec)
    if found is not None:
        return found
    if _HUB_ID.match(spec):
        raise ModelNotFound(spec, hub_cache())
    raise RulesInputError(
        f"--model {spec!r} is neither a local model directory, a hub id nor a preset", choices=presets(), word=spec
    )


def load_draft_model(spec: str) -> Optional[ModelFeatures]:
    """A pasted command's `--speculative-draft-model-path`, read as `--model` is where it is found here; None where
    it is not (a path of the serving machine, a hub id not cached): the draft is then judged with the target's
    model. A config.json that is found but malformed is still an input error."""
    return _found_model(spec)


def hub_cache() -> str:
    """Where huggingface_hub keeps downloads: $HF_HUB_CACHE, else $HF_HOME/hub, else
    ${XDG_CACHE_HOME:-~/.cache}/huggingface/hub (huggingface_hub constants.py)."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return os.path.join(home, "hub")


def cached_config(repo_id: str) -> Optional[str]:
    """The cached config.json of `repo_id`: the snapshot `refs/main` names, else the newest snapshot holding one."""
    repo = os.path.join(hub_cache(), "models--" + repo_id.replace("/", "--"))
    snapshots = os.path.join(repo, "snapshots")
    try:  # a commit hash; the cache is the user's, so it may hold anything
        commit = read_regular(os.path.join(repo, "refs", "main"), limit=4096).decode("utf-8", "replace").strip()
        main = os.path.join(snapshots, commit, "config.json")
        if commit and os.path.isfile(main):
            return main
    except JsonFileError:
        pass
    try:
        candidates = [os.path.join(snapshots, name, "config.json") for name in os.listdir(snapshots)]
    except OSError:
        return None
    return max((path for path in candidates if os.path.isfile(path)), key=os.path.getmtime, default=None)


def read_launch_config(path: str) -> dict:
    """The mapping of a pasted command's `--config FILE`: YAML read with PyYAML's safe loader (attn_preflight/yaml_files.py). Both
    engines refuse a name not ending .yaml/.yml (sglang "Config file must be YAML format", vllm "Config file
    must be of a yaml/yml type")."""
    from attn_preflight.yaml_files import YamlFileError, read_yaml_mapping

    if not path.lower().endswith((".yaml", ".yml")):
        raise RulesInputError(f"--config {path}: the engines read only .yaml/.yml config files")
    from attn_preflight.probe.limits import MAX_CONFIG_KEYS

    try:
        mapping = read_yaml_mapping(path)
    except YamlFileError as err:
        raise RulesInputError(str(err)) from None
    if len(mapping) > MAX_CONFIG_KEYS:  # each is a flag judged as a pasted one
        raise RulesInputError(f"--config {path}: {len(mapping):,} keys, more than {MAX_CONFIG_KEYS:,}")
    return mapping


def read_dllm_algorithm_config(path: str) -> Optional[dict]:
    """A pasted command's `--dllm-algorithm-config FILE` (SGLang's dllm/config.py reads it with yaml.safe_load),
    read with PyYAML (attn_preflight/yaml_files.py) where the file is here; None where it is not (a path of the serving
    machine): what it sets is then unknown. Its `block_size` replaces the model's diffusion block, so it must be a
    positive integer (SGLang takes the page size modulo it)."""
    from attn_preflight.yaml_files import YamlFileError, read_yaml_mapping

    if not os.path.isfile(path):
        return None
    try:
        mapping = read_yaml_mapping(path, flag="--dllm-algorithm-config")
    except YamlFileError as err:
        raise RulesInputError(str(err)) from None
    block = mapping.get("block_size")
    if block is not None and (not isinstance(block, int) or isinstance(block, bool) or block < 1):
        raise RulesInputError(f"--dllm-algorithm-config {path}: block_size must be a positive integer, got {block!r}")
    return mapping
