"""Real incidents as tests (issue 11, part 3): public GitHub issues and PRs where a user's launch line met an engine
release on a GPU, and either the server started or it failed with an upstream error.

tests/fixtures/incidents.json holds each incident with its source link, a quote of the evidence and what happened
to the user; nothing in it comes from what attn-preflight says. Each is judged by the CLI at its own release
(`check --gpu GPU --engine-version ENGINE==VER [--model M] -- COMMAND`), and scored strictly:

- a `failed` incident is caught only when the verdict is FAIL (a WARN or an unknown does not stop the launch);
- a `started` incident is judged right when the verdict is not FAIL, and the command is not refused as bad input
  (exit 2: e.g. a backend name that release accepted).

MISSES names every incident the tool gets wrong today, each with why. The test fails both ways: a miss that is
now judged right says "remove it from MISSES", a hit that regresses says what the tool answered. README.md states
the score, and test_readme_states_the_score keeps that sentence true.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from cli_run import assert_clean_outcome, check_json

FIXTURES = Path(__file__).resolve().parent / "fixtures"
INCIDENTS = json.loads((FIXTURES / "incidents.json").read_text())["incidents"]
BY_ID = {incident["id"]: incident for incident in INCIDENTS}
UPSTREAM_REPOS = ("sgl-project/sglang", "vllm-project/vllm", "flashinfer-ai/flashinfer", "Dao-AILab/flash-attention")
README = Path(__file__).resolve().parent.parent / "README.md"

# Incident id -> why attn-preflight judges it wrong today. Fixing the cause turns the incident into a hit, and the
# test then asks for its line here to go.
MISSES: dict[str, str] = {
    "vllm-29531-gemma3-1b-hopper-flashinfer-fp8kv": "unknown by design (issue 23): gemma-3-1b-it's config.json is not at hand, and whether the model is MLA decides whether vllm-flashinfer-fp8-kv-sm90 applies (an MLA model takes FlashInfer's MLA path), so the check answers unknown (WARN) instead of guessing a non-MLA model; with the config.json read it fails",
    "sglang-18135-glm46-fp8kv-hopper-flashinfer-jit": "unknown by design (issue 23): GLM-4.6-FP8's config.json is not at hand (no preset: glm-4.5 is not 4.6), and whether the model is MLA decides whether flashinfer-fp8-kv-sm90 applies, so the check answers unknown (WARN) instead of guessing; with the config.json read it fails",
    "sglang-21736-qwen3-32b-b200-decode-fa3": "evidence disputed by the code: sglang 0.5.9's create_flashattention_v3_backend asserts SM8x/SM90 (attention_registry.py:130-135) and the hybrid backend builds both phases (model_runner.py:1762-1766), so fa3 on B200 cannot start; the benchmark table is a Codex-generated PR comment",
    "sglang-21736-qwen3-32b-b200-prefill-fa3": "evidence disputed by the code: sglang 0.5.9's create_flashattention_v3_backend asserts SM8x/SM90 (attention_registry.py:130-135) and the hybrid backend builds both phases (model_runner.py:1762-1766), so fa3 on B200 cannot start; the benchmark table is a Codex-generated PR comment",
    "sglang-10618-qwen3next-sm89-fa3": "version evidence and code disagree: the 0.5.3 wheel already has PR #10816 (model_runner.py picks flashinfer on SM89, attention_registry.py attn_backend_wrapper), the report (2025-09-18) ran main between 0.5.2 and 0.5.3, and 0.5.2's hard-coded FlashAttentionBackend (model_runner.py:311, :1696-1712) has no SM89 gate (FA3 admits SM8x MHA), so no rule read from a wheel fails it",
    "sglang-23985-qwen36-27b-rtx5090-fa3-fp8e5m2": "evidence disputed by the code: the posted line names fa3, which sglang 0.5.10 switches to triton for an fp8_e5m2 KV cache (server_args.py:2397-2402; 0.5.10.post1 the same, 0.5.11 :2653) and nothing in 0.5.10 builds FA4 for fa3 (fa_impl_ver=4 only for fa4: attention_registry.py:141-145, speculative/draft_utils.py); the SM100-only FP8 assert is FA4's, reached with --attention-backend fa4, which the issue text names ('with the FA4 backend') and fa4-fp8-sm100 fails",
    "vllm-50331-qwen36-gb10-fp8kv-flashinfer": "rule missing, and no source states the limit: FLASHINFER with an FP8 KV cache at head_dim 256 passes vLLM 0.26.0's validation on SM121 and FlashInfer 0.6.14's FA2 paged prefill fails to launch at the first request (invalid resource handle, also on 0.6.15.post1); the FA2 shared-memory fixes found (flashinfer#3526 SM70/75 head_dim 256, #3863 FP8 head_dim 512 ragged on 99 KB-smem GPUs, which says the paged kernel fits) are other shapes or errors, and nothing upstream confirms this one",
    "vllm-55509-qwen38-27b-sm120-flashinfer": "not modelled, and the needed KV bytes do not differ in the code: vllm 0.28.0's _align_hybrid_block_size (platforms/interface.py:767-938) sizes the hybrid block from max(smallest kernel block, block) = 16 for both FLASH_ATTN (MultipleOf(16)) and FLASHINFER ([16, 32, 64] off SM100: flashinfer.py:420-439), so check_enough_kv_cache_memory asks the same bytes of both (align mode: 2 mamba pages per layer, kv_cache_interface.py:693-694); the difference is the budget, FlashInfer's profiled non-KV memory (its prefill workspace, max(394 MiB, max_num_batched_tokens x q heads x head_dim x bytes): flashinfer.py:1027-1050), which the memory rules only bound from above; and RTX 5060 Ti 16 GB is no GPU profile, Qwen3.8-27B-INT4's config.json is not at hand",
}


def model_argument(reference: str) -> str:
    """A preset name or hub id as is; `incident-models/NAME` is a config.json excerpt kept in tests/fixtures."""
    if reference.startswith("incident-models/"):
        return str(FIXTURES / reference)
    return reference


def judge(incident: dict) -> tuple[str, str]:
    """The verdict (pass, warn, fail, or refused for an exit-2 input error) and what explains it."""
    argv = ["--gpu", incident["gpu"], "--engine-version", f"{incident['engine']}=={incident['version']}"]
    if incident.get("model"):
        argv += ["--model", model_argument(incident["model"])]
    argv += ["--", *shlex.split(incident["command"])]
    run, report = check_json(argv)
    assert_clean_outcome(run, argv)
    if run.code == 2:
        return "refused", run.err.strip()
    assert report is not None, f"{incident['id']}: exit {run.code} without a report"
    failing = [f["rule_id"] for f in report["findings"] if f["status"] == "fail"]
    return report["verdict"], f"failing rules {failing}"


def judged_right(incident: dict, verdict: str) -> bool:
    if incident["outcome"] == "failed":
        return verdict == "fail"
    return verdict not in ("fail", "refused")


@pytest.fixture(scope="module")
def verdicts() -> dict[str, str]:
    return {incident["id"]: judge(incident)[0] for incident in INCIDENTS}


def test_incidents_are_sourced_and_complete():
    assert len(INCIDENTS) == len(BY_ID), "incident ids must be unique"
    for incident in INCIDENTS:
        where = incident["id"]
        assert re.match(r"^https://github\.com/([^/]+/[^/]+)/(issues|pull)/\d+", incident["source"]), where
        assert incident["source"].split("/")[3] + "/" + incident["source"].split("/")[4] in UPSTREAM_REPOS, where
        assert incident["quote"].strip() and incident["version_basis"].strip(), where
        assert incident["engine"] in ("sglang", "vllm"), where
        assert incident["outcome"] in ("started", "failed"), where
        assert (incident["outcome"] == "failed") == bool(incident.get("error")), f"{where}: a failure has its error"
        assert incident.get("stage") in (None, "config", "init", "forward"), where
        if incident.get("model", "").startswith("incident-models/"):
            config = json.loads(Path(model_argument(incident["model"]), "config.json").read_text())
            assert config.get("_source"), f"{where}: the model excerpt names its source"


def test_about_a_third_of_the_incidents_started():
    started = sum(incident["outcome"] == "started" for incident in INCIDENTS)
    assert started >= len(INCIDENTS) // 4, (len(INCIDENTS), started)


def test_misses_name_real_incidents():
    assert set(MISSES) <= set(BY_ID), set(MISSES) - set(BY_ID)
    assert all(reason.strip() for reason in MISSES.values())


@pytest.mark.parametrize("incident", INCIDENTS, ids=[incident["id"] for incident in INCIDENTS])
def test_each_incident_is_judged_as_it_happened(incident):
    verdict, why = judge(incident)
    right = judged_right(incident, verdict)
    said = f"verdict {verdict}: {why}"
    if incident["id"] in MISSES:
        assert not right, f"{incident['id']} is now judged right ({said}): remove it from MISSES"
    else:
        assert right, f"{incident['id']} ({incident['outcome']}: {incident.get('error', 'server started')}): {said}"


def score(verdicts: dict[str, str]) -> tuple[int, int]:
    hits = sum(judged_right(BY_ID[name], verdict) for name, verdict in verdicts.items())
    return hits, len(verdicts)


def test_readme_states_the_score(verdicts):
    hits, total = score(verdicts)
    failed = [incident["id"] for incident in INCIDENTS if incident["outcome"] == "failed"]
    started = [incident["id"] for incident in INCIDENTS if incident["outcome"] == "started"]
    caught = sum(verdicts[name] == "fail" for name in failed)
    passed = sum(judged_right(BY_ID[name], verdicts[name]) for name in started)
    statement = (
        f"{hits} of {total} real incidents** judged right; {caught} of {len(failed)} failures caught, "
        f"{passed} of {len(started)} working configs passed"
    )
    print(f"\n{statement}")
    assert statement in README.read_text(), f"README.md must state: {statement}"
