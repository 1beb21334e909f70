"""Every registered rule is a complete declarative unit with a pass and a fail fixture that hold."""

import json

import pytest

from attn_preflight.rules.core.engine import RULE_ENGINES, STAGES, Status, provenance
from attn_preflight.rules.core.registry import all_rules, get_rule
from tests.rule_fixtures import all_fixtures, run_case

FIXTURES = all_fixtures()
RULES = all_rules()


def _cases():
    for rule_id, buckets in sorted(FIXTURES.items()):
        for bucket in ("pass", "fail"):
            for index, case in enumerate(buckets.get(bucket, [])):
                yield pytest.param(rule_id, bucket, case, id=f"{rule_id}-{bucket}-{index}")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_is_complete(rule):
    assert rule.title and rule.docs.strip() and rule.source and rule.fix_title
    assert rule.prevents or rule.reason, "a rule names the upstream message it prevents, or why it exists"
    assert rule.engine in RULE_ENGINES
    assert rule.why, "docs: a first paragraph (what it checks), then why"
    assert rule.id == rule.id.lower() and " " not in rule.id


@pytest.mark.parametrize("rule", [r for r in RULES if r.versions], ids=lambda r: r.id)
def test_rule_says_how_its_range_was_verified(rule):
    """Each range carries a note of the releases read (issue 11: verified release by release), naming every bound."""
    assert rule.verified, f"{rule.id}: versions={rule.versions!r} with no provenance"
    read = json.dumps(rule.verified)
    for _, bound in rule.version_range.clauses:
        assert str(bound) in read, f"{rule.id}: the provenance does not mention {bound}"


@pytest.mark.parametrize("engine", ["sglang", "vllm", "any"])
def test_provenance_is_rows_not_prose(engine):
    """Issue 19: each site read is a row naming its file and line; what prose is left is short (a note each)."""
    for rule_id, entry in provenance(engine).items():
        assert set(entry) <= {"read", "rows", "notes"}, rule_id
        for row in entry["rows"]:
            assert row["file"].endswith(".py") and isinstance(row["line"], int) and row["line"] > 0, (rule_id, row)
            assert row.get("release") or row.get("releases"), (rule_id, row)
            assert len(row.get("note", "")) <= 300, (rule_id, row)
            if row.get("wheel"):  # read from the wheel: its function and message (null: the line raises nothing)
                assert row["wheel"].endswith(".whl") and "function" in row and "message" in row, (rule_id, row)
        assert all(len(note) <= 300 for note in entry.get("notes", ())), rule_id


def _validator(rule) -> object:
    """What judges a rule: the code of its check (a generated rule's check closes over its row)."""
    return rule.check.__code__


def test_a_generated_rule_is_judged_by_a_shared_validator():
    """`generated` means a row or a declaration read by a validator shared with other rules, never a function
    written for one rule."""
    judged_by: dict[object, list[str]] = {}
    for rule in RULES:
        judged_by.setdefault(_validator(rule), []).append(rule.id)
    alone = [r.id for r in RULES if r.generated and len(judged_by[_validator(r)]) < 2]
    assert alone == []


def test_most_rules_are_made_from_declarations_and_rows():
    """Knowledge is data (issue 19): a function written for one rule is for what a table cannot say, at most ~45%
    of the registry; the rest are declarations and constraint rows read by shared validators."""
    hand_written = [r.id for r in RULES if not r.generated]
    assert len(hand_written) <= 0.45 * len(RULES), f"{len(hand_written)} of {len(RULES)} rules are hand-written"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_states_when_the_engine_would_fail(rule):
    """explain, the JSON and bench/oracle_diff.py read it: a runtime failure is not one start-up resolution sees."""
    assert rule.stage in STAGES, f"{rule.id} ({rule.engine}) states no stage"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_has_pass_and_fail_fixtures(rule):
    buckets = FIXTURES.get(rule.id, {})
    assert buckets.get("pass"), f"{rule.id} has no pass fixture (tests/rule_fixtures/{rule.subject}.py)"
    assert buckets.get("fail"), f"{rule.id} has no fail fixture (tests/rule_fixtures/{rule.subject}.py)"


def test_every_fixture_names_a_rule():
    assert sorted(set(FIXTURES) - {r.id for r in RULES}) == []


def test_fixtures_come_in_pass_and_fail_buckets_only():
    """A case under any other key (a "warn" bucket) would never run: a warning is a fail case with expect."""
    stray = {rule_id: sorted(set(buckets) - {"pass", "fail"}) for rule_id, buckets in FIXTURES.items()}
    assert {rule_id: keys for rule_id, keys in stray.items() if keys} == {}


@pytest.mark.parametrize("rule_id,bucket,case", list(_cases()))
def test_fixture_gives_expected_status(rule_id, bucket, case):
    report = run_case(case)
    finding = next(f for f in report.findings if f.rule_id == rule_id)
    expected = case.get("expect", bucket)
    assert finding.status == Status(expected), f"{finding.status}: {finding.message}"
    if bucket == "fail":
        assert expected in ("fail", "warn"), "a fail fixture shows the rule catching something"
        assert finding.message.startswith("found ") and "required" in finding.message
        if expected == "fail":
            assert report.verdict == "fail"
    else:
        assert finding.status == Status.PASS
        assert get_rule(rule_id) is not None


def test_each_rule_module_holds_the_engine_it_is_loaded_for():
    """attn_preflight.rules.core.registry loads only an engine's modules for its check (and "any" ones for both): a vLLM rule in a
    module named for SGLang would never run."""
    from attn_preflight.rules.checks import MODULES

    for rule in RULES:
        module_engine = MODULES[rule.check.__module__]
        assert module_engine == "any" or rule.engine == module_engine, (rule.id, rule.check.__module__)


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_an_engine_index_is_every_rule_of_that_engine_in_registry_order(engine):
    from attn_preflight.rules.core.registry import registry

    assert list(registry(engine).by_id.values()) == [r for r in RULES if r.engine in (engine, "any")]


def test_an_sglang_check_does_not_load_vllm_declarations():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from attn_preflight.cli import main\n"
        "try:\n"
        "    main(['check', '--gpu', 'H100', '--model', 'llama-3.1-8b', '--attention-backend', 'fa3'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if 'vllm' in m), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
