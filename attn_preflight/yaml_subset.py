"""The YAML of an engine's `--config FILE`, read without PyYAML: a strict subset, as those files are written.

Accepted: a mapping at the top (`key: value` lines, `#` comments, an optional leading `---`), whose values are
scalars, block lists (`- item`), flow lists (`[a, b]`), JSON flow mappings, or nested block mappings (vLLM's
`compilation-config:` / `speculative-config:` blocks). Scalars resolve as PyYAML's `safe_load` does (YAML 1.1):
true/yes/on and false/no/off are booleans, null/~/empty is None, decimal integers and floats with a dot are
numbers, quoted strings are strings; anything else is the plain string. What the subset cannot read exactly
(anchors, tags, block scalars, octal/hex/sexagesimal numbers, .inf/.nan, duplicate keys) is an error naming the
line, never a guess.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import deque
from typing import Any

from attn_preflight.probe.limits import MAX_YAML_BYTES
from attn_preflight.rules.core import jsontext

MAX_BYTES = MAX_YAML_BYTES
MAX_DEPTH = 64  # nested block mappings (an engine config nests 2-3 deep); each level is a Python call

# PyYAML's resolver.py (Resolver.add_implicit_resolver for bool, null, int, float)
_TRUE = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}
_FALSE = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}
_NULL = {"", "~", "null", "Null", "NULL"}
_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?$|^\.[0-9_]+([eE][-+][0-9]+)?$")
_UNSUPPORTED_NUMBER = re.compile(
    r"^[-+]?(0[0-7_]+|0b[01_]+|0x[0-9a-fA-F_]+|[0-9][0-9_]*(:[0-5]?[0-9])+|\.(inf|Inf|INF|nan|NaN|NAN))$"
)
_KEY = re.compile(r"^([^\s#'\"{}\[\],&*!|>%@`][^:#]*?|'[^']*'|\"[^\"]*\")\s*:(\s|$)")


class YamlSubsetError(ValueError):
    """A config file the subset cannot read; the message names the file and line."""


def read_yaml_mapping(path: str, flag: str = "--config") -> dict[str, Any]:
    """The mapping in the YAML file at `path` (given as `flag`): a regular file of at most MAX_BYTES, UTF-8."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise YamlSubsetError(f"{flag} {path}: not a regular file")
        if info.st_size > MAX_BYTES:
            raise YamlSubsetError(f"{flag} {path}: larger than {MAX_BYTES // 1024} KiB, not a config file")
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise YamlSubsetError(f"{flag} {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise YamlSubsetError(f"{flag} {path}: cannot be read ({err.__class__.__name__})") from None
    return parse_yaml_mapping(text, path)


def parse_yaml_mapping(text: str, where: str = "<config>") -> dict[str, Any]:
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise YamlSubsetError(f"{where}:{number}: a tab in the indentation (YAML allows spaces only)")
        body = _strip_comment(line, where, number).rstrip()
        if body.strip():
            lines.append((number, len(body) - len(body.lstrip()), body.strip()))
    if lines and lines[0][2] == "---":
        lines = lines[1:]
    if not lines:
        return {}
    if lines[0][1] != 0:
        raise YamlSubsetError(f"{where}:{lines[0][0]}: the top level must start at column 1")
    mapping, rest = _mapping(deque(lines), 0, where)  # a deque: each line is taken once (linear)
    if rest:
        number = rest[0][0]
        raise YamlSubsetError(f"{where}:{number}: not a `key: value` line of the top-level mapping")
    return mapping


def _strip_comment(line: str, where: str, number: int) -> str:
    quote = ""
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"" and (index == 0 or line[index - 1] in " :[{,-"):
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            return line[:index]
    if quote:
        raise YamlSubsetError(f"{where}:{number}: an unclosed {quote} quote")
    return line


def _mapping(lines: deque, indent: int, where: str, depth: int = 1) -> tuple[dict[str, Any], deque]:
    if depth > MAX_DEPTH:
        raise YamlSubsetError(f"{where}:{lines[0][0]}: nested more than {MAX_DEPTH} levels deep")
    result: dict[str, Any] = {}
    while lines and lines[0][1] == indent:
        number, _, body = lines[0]
        match = _KEY.match(body)
        if not match:
            raise YamlSubsetError(f"{where}:{number}: expected `key: value`, got {body[:40]!r}")
        key = _scalar(match.group(1).strip(), where, number)
        if not isinstance(key, str):
            key = str(key)
        if key in result:
            raise YamlSubsetError(f"{where}:{number}: {key!r} is given twice")
        value_text = body[match.end() :].strip()
        lines.popleft()
        if value_text:
            result[key] = _value(value_text, where, number)
        elif lines and lines[0][1] > indent and lines[0][2].startswith("- "):
            result[key], lines = _list(lines, lines[0][1], where)
        elif lines and lines[0][1] > indent:
            result[key], lines = _mapping(lines, lines[0][1], where, depth + 1)
        else:
            result[key] = None
    if lines and lines[0][1] > indent:
        raise YamlSubsetError(f"{where}:{lines[0][0]}: unexpected indentation")
    return result, lines


def _list(lines: deque, indent: int, where: str) -> tuple[list[Any], deque]:
    items = []
    while lines and lines[0][1] == indent and (lines[0][2] == "-" or lines[0][2].startswith("- ")):
        number, _, body = lines[0]
        text = body[1:].strip()
        if not text or _KEY.match(text):
            raise YamlSubsetError(f"{where}:{number}: a list item must be a scalar here")
        items.append(_value(text, where, number))
        lines.popleft()
    return items, lines


def _value(text: str, where: str, number: int) -> Any:
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlSubsetError(f"{where}:{number}: a flow list must close on its line")
        inner = text[1:-1].strip()
        return [_scalar(part.strip(), where, number) for part in _split_flow(inner, where, number)] if inner else []
    if text.startswith("{"):
        try:
            value = jsontext.loads(text)
        except ValueError as err:
            raise YamlSubsetError(f"{where}:{number}: a flow mapping must be JSON on one line ({err})") from None
        return value
    return _scalar(text, where, number)


def _split_flow(inner: str, where: str, number: int) -> list[str]:
    parts, current, quote = [], "", ""
    for char in inner:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[]{}":
            raise YamlSubsetError(f"{where}:{number}: nested flow collections are not supported")
        elif char == ",":
            parts.append(current)
            current = ""
            continue
        current += char
    return [*parts, current]


def _scalar(text: str, where: str, number: int) -> Any:
    if text[:1] in ("&", "*", "!", "|", ">", "%", "@", "`"):
        raise YamlSubsetError(f"{where}:{number}: {text[:1]!r} (anchors, tags, block scalars) is not supported")
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            return json.loads(text)
        except ValueError:
            raise YamlSubsetError(f"{where}:{number}: an escape in {text[:40]} that JSON does not read") from None
    if text[:1] in ("'", '"'):
        raise YamlSubsetError(f"{where}:{number}: text after a closing quote")
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _NULL:
        return None
    if _UNSUPPORTED_NUMBER.match(text):
        raise YamlSubsetError(f"{where}:{number}: {text!r} is a YAML 1.1 number form the subset does not read")
    if _INT.match(text):
        try:
            return int(text.replace("_", ""))
        except ValueError:  # more digits than sys.get_int_max_str_digits() (4,300)
            raise YamlSubsetError(f"{where}:{number}: an integer of {len(text)} digits") from None
    if _FLOAT.match(text):
        return float(text.replace("_", ""))
    return text
