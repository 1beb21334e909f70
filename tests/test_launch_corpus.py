"""The corpus of real launch lines (tests/fixtures/launch_lines.json, issue 10): each is read as written by hand
from the line itself, and no flag that bears on attention or the KV cache is dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attn_preflight.rules.core.flag_tables import (
    NOT_BEARING_FLAGS,
    NOT_BEARING_GROUPS,
    UNMODELLED_BEARING_FLAGS,
    UNMODELLED_BEARING_GROUPS,
)
from attn_preflight.rules.core.launch_line import parse_command
from attn_preflight.rules.knowledge import flags as flag_kb

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "launch_lines.json").read_text(encoding="utf-8"))["lines"]


def test_the_corpus_is_real_and_mixed():
    commands = [line["command"] for line in CORPUS]
    assert len(CORPUS) >= 40 and all(line["source"] for line in CORPUS)
    assert {line["expect"]["engine"] for line in CORPUS} == {"sglang", "vllm"}
    for form in (
        "python -m sglang.launch_server",
        "python3 -m sglang.launch_server",
        "sglang serve",
        "vllm serve",
        "\\\n",
        "=",
        "-m vllm",
    ):
        assert any(form in command for command in commands), form
    assert any(command.split()[0].count("=") for command in commands)  # an environment prefix


@pytest.mark.parametrize("line", CORPUS, ids=[f"{i}:{line['source'][-40:]}" for i, line in enumerate(CORPUS)])
def test_each_line_reads_as_written(line):
    expect = line["expect"]
    parsed = parse_command([line["command"]])
    assert parsed.engine == expect["engine"]
    assert parsed.values == expect["values"]
    assert parsed.flags == expect["flags"]
    assert parsed.env == expect["env"]
    assert sorted(parsed.unmodelled) == sorted(expect["unmodelled"])
    assert sorted(parsed.ignored) == sorted(expect["not_bearing"])


@pytest.mark.parametrize("line", CORPUS, ids=[f"{i}" for i in range(len(CORPUS))])
def test_no_flag_of_a_line_is_unclassified(line):
    """Every flag is modelled, listed as bearing-but-unmodelled, or in the documented not-bearing set."""
    engine = line["expect"]["engine"]
    parsed = parse_command([line["command"]])
    known = flag_kb.any_release(engine)
    table = flag_kb.flag_table(engine)
    for flag in parsed.unmodelled:
        try:
            dest = table.resolve(flag).spec.dest
        except flag_kb.FlagError:
            dest = known[flag.partition("=")[0]].dest
        assert dest in UNMODELLED_BEARING_FLAGS[engine], flag
    for flag in parsed.ignored:
        if flag.startswith("-"):
            dest = table.resolve(flag).spec.dest if flag in table.options else known[flag].dest
            assert dest in NOT_BEARING_FLAGS[engine], flag


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_the_classification_names_real_flags_once(engine):
    """Each classified dest is one some release's argparse stores (no typo can hide a flag), in one set only."""
    dests = {
        spec.dest
        for release in flag_kb.releases(engine)
        for spec in flag_kb.flag_table(engine, release).options.values()
    }
    assert not UNMODELLED_BEARING_FLAGS[engine] & NOT_BEARING_FLAGS[engine]
    assert UNMODELLED_BEARING_FLAGS[engine] <= dests, UNMODELLED_BEARING_FLAGS[engine] - dests
    assert NOT_BEARING_FLAGS[engine] <= dests, NOT_BEARING_FLAGS[engine] - dests


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_the_groups_list_each_dest_once(engine):
    """A dest in two groups would carry two reasons, one of them wrong."""
    words = [
        dest
        for groups in (UNMODELLED_BEARING_GROUPS, NOT_BEARING_GROUPS)
        for dests in groups[engine].values()
        for dest in dests.split()
    ]
    assert sorted(words) == sorted(set(words)), sorted({w for w in words if words.count(w) > 1})


LAUNCHERS = {"sglang": ["sglang", "serve", "--model-path", "m"], "vllm": ["vllm", "serve", "m"]}


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_every_flag_of_the_newest_release_is_classified(engine):
    """Each dest the newest release's parser stores, passed alone, is read by the rules, listed as bearing or set
    aside as not bearing (issue 10): none is left for general-unmodelled-flags to report unclassified, and a flag
    the rules read is in neither set (read_flags would never consult them)."""
    table = flag_kb.flag_table(engine)
    option_of: dict[str, tuple[str, flag_kb.Option]] = {}
    for option, spec in sorted(table.options.items(), key=lambda item: item[0].startswith("--no-")):
        option_of.setdefault(spec.dest, (option, spec))
    assert len(option_of) > (450 if engine == "sglang" else 300)
    unclassified, read_and_listed = [], []
    for dest, (option, spec) in sorted(option_of.items()):
        values = [] if spec.nargs in (0, "?", "*") else ["1"] * (spec.nargs if isinstance(spec.nargs, int) else 1)
        parsed = parse_command([*LAUNCHERS[engine], option, *values])
        listed = dest in UNMODELLED_BEARING_FLAGS[engine] or dest in NOT_BEARING_FLAGS[engine]
        if option in parsed.unmodelled and dest not in UNMODELLED_BEARING_FLAGS[engine]:
            unclassified.append(option)
        elif option not in parsed.unmodelled and option not in parsed.ignored and listed:
            read_and_listed.append(option)
    assert unclassified == [] and read_and_listed == []
