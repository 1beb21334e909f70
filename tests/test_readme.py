"""The README is a contract: its JSON schema names every facts key, and .ci/run runs its test command."""

import dataclasses
import re
from pathlib import Path

from attn_preflight.probe import facts

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _keys(cls):
    for field in dataclasses.fields(cls):
        yield field.name
        nested = field.type if isinstance(field.type, type) else getattr(facts, str(field.type), None)
        if dataclasses.is_dataclass(nested):
            yield from _keys(nested)


def test_every_facts_key_is_documented():
    documented = set(re.findall(r"`([a-z_]+)(?:\[\])?`", README))
    keys = (
        set(_keys(facts.Facts))
        | set(_keys(facts.GpuDevice))
        | set(_keys(facts.LibraryFacts))
        | set(_keys(facts.ImportHealth))
    )
    missing = sorted(keys - documented)
    assert not missing, f"README's JSON schema lacks {missing}"


def set_up_commands():
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", section, flags=re.S)


def test_readme_has_exactly_two_set_up_commands_and_ci_runs_the_test_one():
    commands = set_up_commands()
    assert len(commands) == 2, commands
    install_and_run, install_and_test = commands
    assert "attn-preflight probe" in install_and_run and "pytest" in install_and_test
    assert install_and_test in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def check_examples():
    """The `attn-preflight check …` lines of README's code blocks, runnable as written (no [optional] parts)."""
    lines = []
    for block in re.findall(r"```\w*\n(.*?)\n```", README, flags=re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("attn-preflight check") and "[" not in part and "--smoke" not in part:
                    lines.append(part)
    return lines


def test_readme_check_examples_do_not_exit_2(tmp_path, monkeypatch):
    """Issue 23: an example pasted as written is judged (0 or 1), never refused. A --facts file is the one the
    example's own `probe --format json -o probe.json` writes: the CI probe fixture stands in for it."""
    import shlex
    import shutil

    from tests.cli_run import run_cli

    shutil.copy(ROOT / "tests" / "fixtures" / "probe-cpu-ci.json", tmp_path / "probe.json")
    monkeypatch.chdir(tmp_path)
    examples = check_examples()
    assert len(examples) >= 6
    for example in examples:
        run = run_cli(shlex.split(example)[1:])
        assert run.code in (0, 1), (example, run.err)
