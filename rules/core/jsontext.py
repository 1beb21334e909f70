"""JSON text from a launch line or a config file (`--speculative-config '{...}'`, a YAML flow mapping), read with
the bounds every input has: nested at most MAX_DEPTH levels (checked by one linear scan before parsing, so a
100,000-deep value never reaches the parser's recursion) and numbers of at most Python's integer-string limit
(4,300 digits: json.loads refuses more). Either way a ValueError, as json.loads raises for text that is not JSON,
so a caller that reads a non-JSON value as text keeps doing so."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # as attn_preflight.probe.jsonfile: a real engine config nests 3-4 deep


def nesting(text: str) -> int:
    """How deeply [ and { nest in `text`, outside strings (linear; never recursive)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif char in "]}":
            depth -= 1
    return deepest


def loads(text: str) -> Any:
    """json.loads(text), or ValueError saying why: not JSON, nested more than MAX_DEPTH deep, a number too long."""
    if ("[" in text or "{" in text) and nesting(text) > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable below MAX_DEPTH; kept so no input can raise it
        raise ValueError("nested too deeply") from None
