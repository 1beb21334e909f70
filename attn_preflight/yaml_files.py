"""YAML files the user hands us (a pasted command's `--config FILE`, `--dllm-algorithm-config FILE`, a Kubernetes
manifest for `check --manifest`), read with PyYAML's safe loader as both engines read their `--config`
(sglang srt/utils/server_args_config_parser.py and vllm utils/argparse_utils.py: yaml.safe_load), so the two
never disagree. PyYAML is imported here only, and this module only when a YAML file is read.

Within issue 19's limits: a regular file of at most MAX_BYTES, UTF-8; no aliases (a YAML bomb is many aliases of
one anchor); nesting at most MAX_DEPTH. Every failure is YamlFileError naming the file and, where PyYAML says it,
the line.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from attn_preflight.probe.limits import MAX_YAML_BYTES as MAX_BYTES
from attn_preflight.probe.limits import MAX_YAML_DEPTH as MAX_DEPTH


class YamlFileError(ValueError):
    """A YAML file that cannot be read; the message names the file (and line)."""


def _loader_class():
    """PyYAML's pure-Python SafeLoader (the C one composes in C, past these limits) refusing aliases and nesting
    deeper than MAX_DEPTH."""
    import yaml  # lazily: `check` without a YAML file never pays for it

    class BoundedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise yaml.composer.ComposerError(
                    None, None, "an alias (*name) is not read: write the value out", self.peek_event().start_mark
                )
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark
                )
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader, yaml


def _text(path: str, flag: str) -> str:
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise YamlFileError(f"{flag} {path}: not a regular file")
        if info.st_size > MAX_BYTES:
            raise YamlFileError(f"{flag} {path}: larger than {MAX_BYTES // 1024} KiB, not a config file")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        return raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise YamlFileError(f"{flag} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise YamlFileError(f"{flag} {path}: cannot be read ({err.__class__.__name__})") from None


def parse_yaml_documents(text: str, where: str = "<yaml>") -> list[Any]:
    """Every document of `text`, as yaml.safe_load_all reads it, within the limits."""
    loader_class, yaml = _loader_class()
    loader = loader_class(text)
    try:
        documents = []
        while loader.check_data():
            documents.append(loader.get_data())
        return documents
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise YamlFileError(f"{where}{line}: {problem}") from None
    except RecursionError:
        raise YamlFileError(f"{where}: nested too deeply") from None
    except ValueError as err:  # a value Python will not build: an integer past its 4,300-digit limit
        raise YamlFileError(f"{where}: {str(err).split(':')[0]}") from None
    finally:
        loader.dispose()


def parse_yaml_mapping(text: str, where: str = "<config>") -> dict[str, Any]:
    """The mapping of a one-document YAML text (empty: {}), as the engines' yaml.safe_load gives it."""
    documents = parse_yaml_documents(text, where)
    if len(documents) > 1:
        raise YamlFileError(f"{where}: {len(documents)} YAML documents; a config file is one mapping")
    mapping = documents[0] if documents else None
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise YamlFileError(f"{where}: the top level is a {type(mapping).__name__}, not a `key: value` mapping")
    return {str(key): value for key, value in mapping.items()}


def read_yaml_mapping(path: str, flag: str = "--config") -> dict[str, Any]:
    """The mapping in the YAML file at `path` (given as `flag`)."""
    return parse_yaml_mapping(_text(path, flag), path)


def read_yaml_documents(path: str, flag: str) -> list[Any]:
    """Every document of the YAML file at `path` (a manifest may hold several, `---` between them)."""
    return parse_yaml_documents(_text(path, flag), path)
