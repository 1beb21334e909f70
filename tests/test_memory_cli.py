"""Will it fit, through the CLI (issue 13): the weights and KV figures in `check`, the what-if GPU count, the
memory flags of pasted commands, and a saved H200 report's figures. Expected numbers are computed here by hand
from the engines' formulas (see tests/test_memory.py for the formulas' sources)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import check_json, finding, run_cli

from attn_preflight.probe.facts import Facts
from attn_preflight.rules.core.target import Target

FIXTURES = Path(__file__).parent / "fixtures"
GIB = 1 << 30
LLAMA_8B_PARAMETERS = 8030261248 - 65 * 4096  # the published count less its norms, which the estimate leaves out


def test_deepseek_v3_on_a_t4_fails_and_no_layout_of_t4s_holds_it():
    result, data = check_json(["--gpu", "T4", "--model", "deepseek-v3"])
    assert result.code == 1 and data["verdict"] == "fail"
    weights = finding(data, "memory-weights-fit")
    assert weights["status"] == "fail" and weights["fix"] == []
    assert data["memory"]["weights_gib_per_gpu"] > 600  # 671B parameters, a byte each (FP8 blocks)


def test_llama_70b_on_an_rtx_4090_fails_with_a_layout_that_fits():
    result, data = check_json(["--gpu", "RTX 4090", "--model", "llama-3.1-70b"])
    assert result.code == 1 and data["verdict"] == "fail"
    weights = finding(data, "memory-weights-fit")
    assert weights["status"] == "fail" and weights["fix"] == ["--tp-size 8 --pp-size 2"]
    fixed = check_json(["--gpu", "RTX 4090", "--model", "llama-3.1-70b", "--tp-size", "8", "--pp-size", "2"])[1]
    assert finding(fixed, "memory-weights-fit")["status"] == "pass"


def test_vllms_weights_fix_is_the_smallest_tp_that_also_holds_the_context():
    """Qwen2.5-72B on H100s with vLLM 0.19.0 at 0.95: TP 2 holds the 68 GiB of weights per GPU but leaves ~3 GiB of
    KV (the llm-d-planner v0.19.0 log: 3.04 GiB, 19,920 tokens), short of the 32768 vLLM must hold for one request;
    TP 4 is the fix, not TP 2. From 0.20.0 the CUDA graphs (~1.9 GiB at TP 2) come off the budget too and at the
    default 0.92 TP 2 leaves no KV cache at all."""
    engine = ["--engine", "vllm", "--engine-version", "vllm==0.19.0", "--gpu", "H100", "--model", "qwen2.5-72b"]
    engine += ["--gpu-memory-utilization", "0.95"]
    data = check_json(engine)[1]
    assert finding(data, "vllm-memory-weights-fit")["fix"] == ["--tensor-parallel-size 4"]
    at_tp2 = check_json([*engine, "--tp-size", "2"])[1]
    assert finding(at_tp2, "vllm-memory-weights-fit")["status"] == "pass"
    assert finding(at_tp2, "vllm-memory-kv-context")["status"] == "fail"
    assert finding(check_json([*engine, "--tp-size", "4"])[1], "vllm-memory-kv-context")["status"] == "pass"
    newest = check_json(["--engine", "vllm", "--gpu", "H100", "--model", "qwen2.5-72b", "--tp-size", "2"])[1]
    assert finding(newest, "vllm-memory-weights-fit")["fix"] == ["--tensor-parallel-size 4"]
    assert any(t["term"].startswith("CUDA graphs") for t in newest["memory"]["subtracted"])
    # SGLang shortens its context instead: the smallest TP that holds the weights stays the fix
    sglang = check_json(["--engine", "sglang", "--gpu", "H100", "--model", "llama-4-scout"])[1]
    assert finding(sglang, "memory-weights-fit")["fix"] == ["--tp-size 4"]


def test_a_layout_that_needs_more_gpus_than_the_target_has_is_said_not_offered():
    """DeepSeek-V3's 627 GiB of FP8 weights need TP 8 x PP 2 of 80 GiB cards: not a fix on a node of eight."""
    _, eight_h100 = check_json(["--gpu", "8xH100", "--model", "deepseek-v3"])
    weights = finding(eight_h100, "memory-weights-fit")
    assert weights["status"] == "fail" and weights["fix"] == []
    assert "they fit from TP 8 x PP 2: 16 GPUs, more than the 8 of the target" in weights["message"]
    _, eight_h200 = check_json(["--gpu", "8xH200", "--model", "deepseek-v3"])
    assert finding(eight_h200, "memory-weights-fit")["fix"] == ["--tp-size 8"]


SGLANG_ROPE_CACHE = 131072 * 128 * 4


def test_check_shows_the_kv_capacity_per_kv_dtype_computed_by_hand():
    # H100: NVML's 81559 MiB (79.65 GiB); SGLang's default fraction there: (81559 - 13904) / 81559 -> 0.830
    # (test_memory.py), of the memory free at init: NVML's total less the driver's 0.60 and the context's 0.51 GiB;
    # less the weights and SGLang's FP32 rotary cache (131072 positions x 128 x 4 B: rotary_embedding/base.py)
    budget = (79.65 - 0.60 - 0.51) * 0.830 * GIB - LLAMA_8B_PARAMETERS * 2 - SGLANG_ROPE_CACHE
    bf16, fp8 = int(budget // 131072), int(budget // 65536)  # 8 kv heads x 256 x 32 layers x 2 / 1 bytes
    result, data = check_json(["--gpu", "H100", "--model", "llama-3.1-8b"])
    memory = data["memory"]
    assert memory["memory_fraction"] == 0.83 and memory["page_size"] == 1
    assert [(c["kv_cache_dtype"], c["tokens"]) for c in memory["kv_capacity"]] == [("auto", bf16), ("fp8_e4m3", fp8)]
    table = run_cli(["check", "--gpu", "H100", "--model", "llama-3.1-8b"]).out
    assert f"kv capacity: bf16 {bf16 / 1e6:.2f} M tokens; fp8_e4m3 {fp8 / 1e6:.2f} M" in table


def test_a_saved_h200_report_gives_its_memory_figures():
    # NVML's 143771 MiB (140.4 GiB): chunk 8192, decode max_bs 256, 58 prefill graph sizes -> 13904 MiB reserved
    gpu_mib = 140.4 * 1024
    fraction = round((gpu_mib - 13904) / gpu_mib, 3)
    budget = (140.4 - 0.60 - 0.51) * fraction * GIB - LLAMA_8B_PARAMETERS * 2 - SGLANG_ROPE_CACHE  # free at init
    _, data = check_json(["--facts", str(FIXTURES / "probe-h200.json"), "--model", "llama-3.1-8b"])
    memory = data["memory"]
    assert memory["gpu_memory_gib"] == 140.4 and memory["memory_fraction"] == fraction == 0.903
    assert memory["kv_capacity"][0]["tokens"] == int(budget // 131072)
    assert finding(data, "memory-kv-context")["status"] == "pass"  # 131072 tokens fit ~0.9 M
    assert finding(data, "parallel-gpu-count")["status"] == "pass"  # TP 1 on its one GPU


def test_vllm_takes_its_default_utilization_and_fails_a_context_that_cannot_fit():
    # L4 24 GiB x 0.92 - 15 GiB of weights: ~7 GiB, 57k bf16 tokens, short of the 131072 one request needs
    _, data = check_json(["--gpu", "L4", "--", "vllm", "serve", "llama-3.1-8b"])
    assert data["memory"]["memory_fraction"] == 0.92
    context = finding(data, "vllm-memory-kv-context")
    assert context["status"] == "fail" and data["verdict"] == "fail"
    assert "--kv-cache-dtype fp8" not in context["fix"]  # fp8 halves it to 115k tokens: still short
    assert context["fix"][0] == f"--max-model-len {data['memory']['kv_capacity'][0]['tokens'] // 16 * 16}"
    _, shorter = check_json(["--gpu", "L4", "--", "vllm", "serve", "llama-3.1-8b", "--max-model-len", "32768"])
    assert finding(shorter, "vllm-memory-kv-context")["status"] == "pass"


def test_vllm_before_0_20_takes_0_9_and_subtracts_what_it_profiles():
    # vllm 0.19.1 vllm/config/cache.py: gpu_memory_utilization default 0.9 (0.92 from 0.20.0); below 70 GiB the
    # API server profiles 2048 tokens and min(2048, 256) sampler rows (arg_utils get_batch_defaults), the native
    # sampler's Triton top-k/top-p (0.17.0-0.19.x; FlashInfer's is opt-in there) at 15.3 B per logits element,
    # 0.25 GiB of non-torch memory at TP 1 (vLLM 0.19.0 logs)
    argv = ["--gpu", "L4", "--engine-version", "vllm==0.19.1", "--", "vllm", "serve", "llama-3.1-8b"]
    _, data = check_json([*argv, "--max-model-len", "16384"])
    memory = data["memory"]
    assert memory["memory_fraction"] == 0.9
    assert memory["memory_fraction_origin"] == "vLLM 0.19.1's default --gpu-memory-utilization"
    sampler = 256 * 128256 * 15.3 / GIB
    expected = (24 - 0.60) * 0.9 - memory["weights_gib_per_gpu"] - sampler - 0.25
    assert memory["kv_gib_per_gpu"] == pytest.approx(expected, abs=0.01)
    assert [t["term"] for t in memory["subtracted"]] == [
        "weights",
        "profiled peak: sampler warm-up of 256 x 128256 logits (native-triton)",
        "non-torch memory at TP 1",
    ]
    assert finding(data, "vllm-memory-kv-context")["status"] == "pass"
    assert "sampler warm-up of 256 x 128256 logits" in finding(data, "vllm-memory-weights-fit")["message"]


def test_vllm_splits_the_experts_over_tp_x_dp():
    """vllm-project/recipes DeepSeek/DeepSeek-V3.md#L70 (8xH200): `vllm serve deepseek-ai/DeepSeek-R1-0528
    --data-parallel-size 8 --enable-expert-parallel`. vLLM's fused MoE layer flattens TP across DP
    (fused_moe/config.py flatten_tp_across_dp): each of the 8 GPUs holds 1/8 of the routed experts and a whole copy
    of the rest, so the weights fit; counted whole per GPU they were 627 GiB and failed. The split is the same
    without EP (experts TP-sharded over TP x DP)."""
    figures = []
    for ep in (["--enable-expert-parallel"], []):
        run, report = check_json(["--gpu", "8xH200", "--", "vllm", "serve", "deepseek-r1", "-dp", "8", *ep])
        fit = finding(report, "vllm-memory-weights-fit")
        assert fit["status"] == "pass" and "the experts over TP x DP = 8 GPUs" in fit["message"], fit
        figures.append(fit["message"].split(" GiB")[0])
    assert figures[0] == figures[1]
    run, report = check_json(["--gpu", "8xH200", "--", "vllm", "serve", "deepseek-r1", "-tp", "8"])
    assert "experts over" not in finding(report, "vllm-memory-weights-fit")["message"]  # TP alone: as before


def test_pasted_memory_flags_are_modelled_not_ignored():
    _, data = check_json(
        [
            "--gpu",
            "H100",
            "--",
            "python -m sglang.launch_server --model-path llama-3.1-8b --mem-fraction-static 0.5 "
            "--context-length 4096 --pp-size 2",
        ]
    )
    config = data["config"]
    assert (config["mem_fraction"], config["context_length"], config["pp_size"]) == (0.5, 4096, 2)
    assert config["ignored"] == [] and data["memory"]["memory_fraction_origin"] == "--mem-fraction-static"


@pytest.mark.parametrize("value", ["0", "1.5", "lots"])
def test_a_memory_fraction_outside_0_to_1_is_a_usage_error(value):
    result = run_cli(["check", "--gpu", "H100", "--", "sglang", "serve", "--mem-fraction-static", value])
    assert result.code == 2 and len(result.err_lines) == 1


def test_gpu_count_what_if_two_spellings_one_target():
    assert Target.from_gpu("8xH100") == Target.from_gpu("H100", 8)
    for argv in (["--gpu", "8xH100"], ["--gpu", "H100", "--gpu-count", "8"]):
        _, data = check_json([*argv, "--model", "llama-3.1-70b", "--tp-size", "8"])
        assert data["target"]["gpu_count"] == 8 and data["target"]["gpu_count_known"]
        assert finding(data, "parallel-gpu-count")["status"] == "pass"
    _, short = check_json(["--gpu", "4xH100", "--model", "llama-3.1-70b", "--tp-size", "8"])
    assert finding(short, "parallel-gpu-count")["status"] == "fail"
    _, unknown = check_json(["--gpu", "H100", "--model", "llama-3.1-70b", "--tp-size", "8"])
    assert finding(unknown, "parallel-gpu-count")["status"] == "skip"


@pytest.mark.parametrize(
    "argv",
    [["--gpu", "8xH100", "--gpu-count", "4"], ["--gpu-count", "4"], ["--gpu", "H100", "--gpu-count", "0"]],
)
def test_contradicting_or_orphan_gpu_counts_are_usage_errors(argv):
    result = run_cli(["check", *argv])
    assert result.code == 2 and len(result.err_lines) == 1


def test_mixed_memory_sizes_are_judged_at_the_smallest():
    raw = json.loads((FIXTURES / "probe-h200.json").read_text())
    small = {**raw["gpus"]["devices"][0], "index": 1, "memory_total_mib": 81559, "name": "NVIDIA H100 80GB HBM3"}
    raw["gpus"]["devices"].append(small)
    target = Target.from_facts(Facts.from_dict(raw))
    assert target.memory_gib == round(81559 / 1024, 1) and target.gpu_count == 2
    assert "judged at the smallest" in target.gpu_note


def test_a_model_without_its_sizes_leaves_the_memory_rules_unknown():
    _, data = check_json(["--gpu", "H100", "--model", str(FIXTURES / "models" / "synthetic-head-dim-160")])
    assert finding(data, "memory-weights-fit")["status"] == "unknown"
    assert finding(data, "memory-kv-context")["status"] == "unknown"
    assert data["memory"] is None and data["verdict"] != "pass"


def test_nextn_speculative_decoding_loads_the_mtp_layer_too():
    argv = ["--gpu", "8xH200", "--model", "deepseek-v3", "--tp-size", "8"]
    plain = check_json(argv)[1]["memory"]
    nextn = check_json([*argv, "--speculative-algorithm", "NEXTN"])[1]["memory"]
    # DeepSeek V3's MTP layer: 11.6B parameters of FP8 (a byte each plus block scales) over TP 8
    mtp_gib = nextn["weights_gib_per_gpu"] - plain["weights_gib_per_gpu"]
    assert mtp_gib == pytest.approx(11.6e9 / 8 / GIB, rel=0.02)
    assert nextn["weight_format"].endswith("+ 1 MTP layer(s)")


def test_the_html_report_shows_the_memory_per_gpu(tmp_path):
    page = tmp_path / "h200.html"
    facts = str(FIXTURES / "probe-h200.json")
    assert run_cli(["report", "-o", str(page), "--facts", facts, "--model", "llama-3.1-8b"]).code == 0
    _, data = check_json(["--facts", facts, "--model", "llama-3.1-8b"])
    html = page.read_text()
    assert "Memory per GPU" in html and f"{data['memory']['weights_gib_per_gpu']:.1f} of " in html
    assert "kv capacity: bf16 " in html


def test_an_fp4_run_of_the_deepseek_preset_fits_four_b200s():
    """sglang#9704's launch line: nvidia/DeepSeek-R1-0528-FP4 on 4 x B200 started; the preset is the FP8 release."""
    command = (
        "python3 -m sglang.launch_server --model nvidia/DeepSeek-R1-0528-FP4 --quantization modelopt_fp4 --tp-size 4"
    )
    fp8 = check_json(["--gpu", "B200", "--model", "deepseek-r1", "--tp-size", "4"])[1]
    fp4 = check_json(["--gpu", "B200", "--model", "deepseek-r1", "--", command])[1]
    assert finding(fp8, "memory-weights-fit")["status"] == "fail"
    assert finding(fp4, "memory-weights-fit")["status"] == "pass"
    assert fp4["memory"]["weight_format"] == "nvfp4 (modelopt_fp4)"


def test_a_check_computes_the_memory_figures_once_for_its_rules_and_its_rendering(monkeypatch):
    from attn_preflight.render.findings import memory_lines, report_to_dict
    from attn_preflight.rules.checks import memory as memory_checks
    from attn_preflight.rules.core.judge import evaluate
    from attn_preflight.rules.core.models import load_preset
    from attn_preflight.rules.core.validation import make_config

    computed = []
    compute = memory_checks._compute_figures
    monkeypatch.setattr(memory_checks, "_compute_figures", lambda *args: computed.append(args) or compute(*args))
    report = evaluate(make_config("sglang", model=load_preset("llama-3.1-8b")), Target.from_gpu("H100"))
    assert {f.rule_id: f.status.value for f in report.findings}["memory-kv-context"] == "pass"
    assert report_to_dict(report)["memory"] and memory_lines(report)
    assert len(computed) == 1  # two rules, the JSON and the table lines read one computation


def test_pasted_cuda_graph_flags_are_read_into_sglangs_default_fraction():
    # sglang-11948's launch line on its A800s (0.5.3.post3, TP 2, EAGLE3, --cuda-graph-max-bs 128): 512 + 8192 x 1.5
    # + 128 x 2 + 2/8 x 1024 + 2048 for EAGLE3 = 15360 MiB of 81920 -> 0.812 (the tier's max_bs 256 gives 0.809)
    command = (
        "python3 -m sglang.launch_server --model Qwen3-8B --speculative-algorithm EAGLE3 --tensor-parallel-size 2 "
        "--speculative-draft-model-path AngelSlim/Qwen3-8B_eagle3 --cuda-graph-max-bs 128"
    )
    argv = ["--gpu", "8xA800", "--engine-version", "sglang==0.5.3.post3", "--", command]
    data = check_json(argv)[1]
    assert data["config"]["unmodelled"] == [] and data["config"]["flags"]["cuda_graph_max_bs"] == 128
    assert data["memory"]["memory_fraction"] == round((81920 - 15360) / 81920, 3) == 0.812
    assert data["memory"]["memory_fraction_origin"].endswith("with --cuda-graph-max-bs 128")
    # 0.5.23 on an H100 (NVML's 81559 MiB) with --disable-prefill-cuda-graph: 512 + 8192 x 1.5 + 256 x 2 + 128,
    # no prefill graphs
    launch = "python -m sglang.launch_server --model-path llama-3.1-8b --disable-prefill-cuda-graph"
    data = check_json(["--gpu", "H100", "--", launch])[1]
    assert data["config"]["unmodelled"] == []
    assert data["memory"]["memory_fraction"] == round((81559 - 13440) / 81559, 3) == 0.835


def test_sglang_lowers_its_fraction_for_a_vision_tower_only_where_it_serves_one(tmp_path):
    # Gemma 3 27B with its SigLIP tower (huggingface.co/google/gemma-3-27b-it config.json vision_config: 27 layers,
    # hidden 1152); SGLang serves Gemma3ForConditionalGeneration text-only unless --enable-multimodal
    # (configs/model_config.py mm_disabled_models). H100, 0.5.23: (81920 - 13904) / 81920 -> 0.830, then
    # x 0.95 x (1 - 0.1 x (27 x 1152^2 / (24 x 1024^2) - 1))
    sizes = json.loads((FIXTURES / "model_sizes.json").read_text())["models"]
    config = next(m["config"] for m in sizes if m["name"] == "Gemma 3 27B")
    (tmp_path / "config.json").write_text(
        json.dumps({**config, "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27}})
    )
    launch = f"python -m sglang.launch_server --model-path {tmp_path}"
    text_only = check_json(["--gpu", "H100", "--", launch])[1]["memory"]
    assert text_only["memory_fraction"] == 0.83
    vision = check_json(["--gpu", "H100", "--", launch + " --enable-multimodal"])[1]["memory"]
    factor = 0.95 * (1 - 0.1 * (27 * 1152**2 / (24 * 1024**2) - 1))
    assert vision["memory_fraction"] == pytest.approx(0.83 * factor, abs=1e-9)
    assert vision["memory_fraction_origin"].endswith(f"x {factor:.3f} for the vision tower")


def test_a_dsa_model_counts_its_indexer_cache():
    # DeepSeek-V3.2-Exp at TP 8 on H200s: (512 + 64) x 2 B + the indexer's 128 + 4 B, for each of 61 layers
    data = check_json(["--gpu", "8xH200", "--model", "deepseek-v3.2-exp", "--tp-size", "8"])[1]
    assert data["memory"]["kv_capacity"][0]["bytes_per_token"] == (1152 + 132) * 61
    # vLLM with --kv-cache-dtype fp8_ds_mla: 656 + 132 bytes a layer
    argv = ["--gpu", "8xH200", "--engine", "vllm", "--model", "deepseek-v3.2-exp", "--tp-size", "8"]
    data = check_json([*argv, "--kv-cache-dtype", "fp8_ds_mla"])[1]
    assert data["memory"]["kv_capacity"][0]["bytes_per_token"] == (656 + 132) * 61


def test_an_older_sglang_release_is_judged_with_its_own_default_fraction():
    # sglang 0.5.5 on an H100 (NVML's 81559 MiB): 512 + 8192 x 1.5 + 256 x 2 + 128 = 13440 MiB reserved, no
    # prefill graphs
    argv = ["--gpu", "H100", "--model", "llama-3.1-8b", "--engine-version", "sglang==0.5.5"]
    data = check_json(argv)[1]
    memory = data["memory"]
    assert memory["memory_fraction"] == round((81559 - 13440) / 81559, 3) == 0.835
    assert memory["memory_fraction_origin"].startswith("SGLang 0.5.5's default")
    assert finding(data, "memory-weights-fit")["status"] == "pass"  # the rule's range reaches 0.5.5


def test_a_quantization_method_the_estimate_cannot_size_leaves_the_weights_unknown():
    # Qwen3-32B at 16 bits (61 GiB) cannot fit an RTX 5090; as a compressed-tensors checkpoint whose format
    # config.json does not give, it may: neither verdict is the tool's to give
    command = ["--", "python", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen3-32B"]
    plain = check_json(["--gpu", "RTX 5090", "--model", "qwen3-32b", *command])[1]
    assert finding(plain, "memory-weights-fit")["status"] == "fail"
    _, quantized = check_json(
        ["--gpu", "RTX 5090", "--model", "qwen3-32b", *command, "--quantization", "compressed-tensors"]
    )
    weights = finding(quantized, "memory-weights-fit")
    assert weights["status"] == "unknown" and "--quantization compressed-tensors" in weights["message"]
    _, fp8 = check_json(["--gpu", "RTX 5090", "--model", "qwen3-32b", *command, "--quantization", "fp8"])
    assert finding(fp8, "memory-weights-fit")["status"] == "fail"  # a byte a weight: 32 GiB of a 25 GiB budget


def test_on_mig_the_memory_rules_judge_the_largest_slice_or_say_they_cannot():
    slices = FIXTURES / "facts" / "h200x2-mig-slices.json"  # 3g.71gb + 2g.35gb + 1g.18gb per H200
    _, data = check_json(["--facts", str(slices), "--model", "qwen3-8b"])
    memory = data["memory"]
    assert memory["gpu_memory_gib"] == round(71 * 10**9 / 2**30, 1) == 66.1  # not the GPU's 140.4 GiB
    assert memory["gpu_memory_origin"] == "the largest MIG slice of GPU 0"
    _, old = check_json(["--facts", str(FIXTURES / "facts" / "h200x2-mig.json"), "--model", "qwen3-8b"])
    weights = finding(old, "memory-weights-fit")
    assert weights["status"] == "unknown" and "MIG mode" in weights["message"] and old["memory"] is None
