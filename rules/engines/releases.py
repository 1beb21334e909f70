"""Each engine's releases, one data file per release: rules/engines/<engine>/releases/<version>.json holds what
that release's wheel says, generated from it by bench/new_release.py (read with ast, never imported):
- flags: every option string of the server parser -> [dest, nargs] (nargs: 0 no value, 1 one value, '?', '*',
  '+' or a count, as argparse consumes them), and allow_abbrev;
- choices (SGLang): the argparse choices of the attention, KV-cache and speculative flags (null: any value), each
  with the file that defines it;
- check_sites (SGLang, from 0.5.23): each raise, assert and declared rewrite of the files bench/check_sites.py
  audits, with covered_by: the rows of tests/fixtures/sglang-0.5.23-check-coverage.json that hold it, or
  "not attention"; empty when not yet covered.
index.json is derived from the release files (bench/release_files.py): the releases oldest first, those with a
choice table, and the flags only older releases have. A check opens the index and the release files it needs.
"""

from __future__ import annotations

import json
from functools import cache

from attn_preflight.rules.knowledge import data_text


def _package(engine: str) -> str:
    return f"attn_preflight.rules.engines.{engine}.releases"


@cache
def index(engine: str) -> dict:
    return json.loads(data_text("index.json", _package(engine)))


@cache
def release(engine: str, version: str) -> dict:
    """The file of `version`, one of `index(engine)["releases"]`."""
    return json.loads(data_text(f"{version}.json", _package(engine)))
