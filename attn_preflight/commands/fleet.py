"""`attn-preflight fleet REPORT.json…`: many saved probe reports as one fleet, judged against one config.

Identical nodes are grouped (probe/fleet.py says what "identical" means) and the rules run once per group,
with the same config flags as `check`. A report that cannot be read (not JSON, malformed, another schema
version) is named in one line on stderr and left out; the rest are still merged and shown, and the exit code
is 2, because a node that was not judged is never a pass.
"""

from __future__ import annotations

import os
from typing import Optional

import click

from attn_preflight.cli import InputError
from attn_preflight.commands.check import config_from_options, config_options, engine_pins, engine_version_option
from attn_preflight.commands.common import (
    check_output_writable,
    format_option,
    note,
    output_option,
    screen_for,
    write_output,
)
from attn_preflight.probe.limits import MAX_FLEET_REPORTS


def expand_paths(paths: tuple[str, ...]) -> list[str]:
    """Files as given; a directory stands for the *.json files directly in it, sorted. A file named twice
    (`r.json r.json`, `dir dir/r.json`, a symbolic or hard link to it) is one node, kept where first named."""
    files: dict[object, str] = {}  # the file (device, inode; else its real path) -> the path as first named
    for path in paths:
        if os.path.isdir(path):
            try:
                names = os.listdir(path)
            except OSError as err:
                raise InputError(f"cannot read directory {path}: {err.strerror or err}") from None
            found = sorted(os.path.join(path, name) for name in names if name.endswith(".json"))
            if not found:
                raise InputError(f"directory {path} holds no *.json report")
        else:
            found = [path]
        for file in found:
            files.setdefault(_identity(file), file)
        if len(files) > MAX_FLEET_REPORTS:  # before any is read
            raise InputError(f"more than {MAX_FLEET_REPORTS:,} reports given: merge them in parts")
    return list(files.values())


def _identity(path: str) -> object:
    """What makes two names one file: its device and inode (a hard link has its own path, even its own real
    path); the real path where it cannot be stat'ed (read_report names why)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return os.path.realpath(path)
    return (info.st_dev, info.st_ino)


def read_report(path: str):
    """(Facts, None) or (None, why it cannot be read): one bad report never stops the merge."""
    from attn_preflight.probe.facts import Facts, FactsError
    from attn_preflight.probe.jsonfile import JsonFileError, read_json

    try:
        return Facts.from_dict(read_json(path)), None
    except JsonFileError as err:
        return None, f"cannot read: {err}" if err.unreadable else f"not a JSON report: {err}"
    except FactsError as err:
        return None, str(err)
    except RecursionError:
        return None, "nested too deeply to be a probe report"


@click.command("fleet")
@config_options
@engine_version_option()
@click.option("--strict", is_flag=True, help="Exit 1 when a group only warns, too.")
@format_option()
@output_option()
@click.argument("reports", nargs=-1, required=True, metavar="REPORT.json|DIR...")
def fleet_command(
    engine_versions: tuple[str, ...], strict: bool, fmt: str, output: Optional[str], reports: tuple[str, ...], **config
) -> None:
    """Merge reports saved by `probe --format json` (one per node): group identical nodes, show the fleet's
    hardware and library spread, and say which groups pass or fail a serving config, and why.

    \b
    attn-preflight fleet reports/*.json --model ./Llama-3.1-8B --attention-backend fa3 --kv-cache-dtype fp8_e4m3
    attn-preflight fleet reports/ --format json

    Takes the same config flags and --engine-version as `check`; without them, each group is judged with SGLang's default backend
    for its GPU. Exit 0 when every node passes (warnings allowed), 1 when a group fails, 2 when a report is
    unreadable (each named on stderr; the others are still merged and shown).
    """
    from attn_preflight.fleet import Node, merge
    from attn_preflight.render.fleet import render_fleet

    check_output_writable(output)
    cfg = config_from_options(config)
    pins = engine_pins(engine_versions)
    paths = expand_paths(reports)
    nodes, skipped = [], []
    for path in paths:
        facts, why = read_report(path)
        if facts is None:
            skipped.append((path, why))
            # one line per report, even for a file name with a newline or carriage return in it
            note(" ".join(f"attn-preflight: skipped {path}: {why}".split()))
        else:
            nodes.append(Node(source=path, facts=facts))
    fleet = merge(nodes, skipped, len(paths), cfg, strict=strict, engine_versions=pins)
    write_output(render_fleet(fleet, fmt.lower(), screen_for(fmt, output)), output)
    code = fleet.exit_code()
    if code:
        raise click.exceptions.Exit(code)
