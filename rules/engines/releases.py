"""Each engine's releases, one data file per release: rules/engines/<engine>/releases/<version>.json holds what
that release's wheel says, generated from it by bench/new_release.py (read with ast, never imported):
- flags: every option string of the server parser -> [dest, nargs] (nargs: 0 no value, 1 one value, '?', '*',
  '+' or a count, as argparse consumes them), and allow_abbrev;
- choices (SGLang): the argparse choices of the attention, KV-cache and speculative flags (null: any value), each
  with the file that defines it;
<version>.sites.json (SGLang, from 0.5.23), which no check reads, is its check-site census (bench/check_sites.py).
index.json, derived from them (bench/release_files.py), lists the releases, those with choices, those with
capability deltas, and the flags only older releases have: a check opens it and the release files it needs.
capability_deltas.json, derived too, gathers every release's capability_deltas (what the backend declarations had
before that release): read only when a release older than the newest with a delta is judged.
"""

from __future__ import annotations

import json
from functools import cache

from attn_preflight.rules.knowledge import data_text


@cache
def index(engine: str) -> dict:
    return release(engine, "index")


@cache
def capability_deltas(engine: str) -> dict[str, list]:
    """release -> its capability deltas, newest release first (capability_deltas.json, derived from the files)."""
    return release(engine, "capability_deltas")["releases"]


@cache
def release(engine: str, version: str) -> dict:
    """The file of `version`, one of `index(engine)["releases"]`."""
    return json.loads(data_text(f"{version}.json", f"attn_preflight.rules.engines.{engine}.releases"))
