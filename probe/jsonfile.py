"""The one way to read a file we are handed: a regular file only (a FIFO or device would block or never end),
at most MAX_BYTES (`read_regular`); a JSON one is also nested at most MAX_DEPTH (`read_json`). Every failure
is a JsonFileError whose text says why in a few words."""

from __future__ import annotations

import json
import os
import stat
from typing import Any, Iterable

from attn_preflight.probe.limits import MAX_JSON_BYTES as MAX_BYTES
from attn_preflight.probe.limits import MAX_JSON_DEPTH as MAX_DEPTH


class JsonFileError(Exception):
    """Why a JSON file could not be read. `unreadable`: the file itself (missing, not a file, too large);
    otherwise its content (not JSON, not UTF-8, nested too deeply)."""

    def __init__(self, reason: str, unreadable: bool):
        super().__init__(reason)
        self.unreadable = unreadable


def read_regular(path: str, limit: int = MAX_BYTES) -> bytes:
    """The bytes of `path` if it is a regular file of at most `limit` bytes; JsonFileError (unreadable) if not.
    Every file a user's input names is read this way (a FIFO would block, /dev/zero never end)."""
    too_large = f"larger than {limit // (1024 * 1024)} MiB" if limit >= 1024 * 1024 else f"larger than {limit} bytes"
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise JsonFileError("not a regular file", unreadable=True)
        if info.st_size > limit:
            raise JsonFileError(too_large, unreadable=True)
        # O_NONBLOCK: a FIFO swapped in after the stat must not block the open.
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(descriptor, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as err:
        raise JsonFileError(err.strerror or str(err), unreadable=True) from None
    if len(raw) > limit:
        raise JsonFileError(too_large, unreadable=True)
    return raw


def read_json(path: str) -> Any:
    raw = read_regular(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise JsonFileError(f"not UTF-8: {err}", unreadable=False) from None
    except json.JSONDecodeError as err:
        raise JsonFileError(str(err), unreadable=False) from None
    except RecursionError:
        raise JsonFileError("nested too deeply", unreadable=False) from None
    except ValueError as err:  # an integer of more digits than sys.get_int_max_str_digits() (4,300)
        raise JsonFileError(str(err).split(";")[0], unreadable=False) from None
    if _depth(data) > MAX_DEPTH:
        raise JsonFileError(f"nested more than {MAX_DEPTH} levels deep", unreadable=False)
    return data


def _depth(data: Any) -> int:
    """How deeply containers nest (iterative: the input may be deeper than the stack)."""
    deepest = 0
    stack = [(data, 1)]
    while stack:
        value, level = stack.pop()
        children: Iterable[Any]
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
