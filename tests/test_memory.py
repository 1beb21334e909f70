"""Weights and KV-cache sizing (issue 13): parameter counts against the counts publishers give, and the KV bytes
per token against numbers computed by hand from the engines' formulas (sglang pool_configurator
_compute_cell_size, vllm AttentionSpec.page_size_bytes), for MHA, GQA, MLA, SWA-mixed, hybrid linear and MoE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.version import Version

from attn_preflight.rules.knowledge import memory
from attn_preflight.rules.knowledge.memory import (
    GIB,
    kv_cost,
    shape_from_config,
    total_parameters,
    weight_bytes_per_gpu,
)

SIZES = json.loads((Path(__file__).parent / "fixtures" / "model_sizes.json").read_text())["models"]
BY_NAME = {m["name"]: m for m in SIZES}


def shape(name, **changes):
    return shape_from_config({**BY_NAME[name]["config"], **changes})


def test_at_least_15_models_are_checked_each_with_its_sources():
    assert len(SIZES) >= 15
    assert all(m["config_source"] and m["published_source"] for m in SIZES)


def _to_significant_digits(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


@pytest.mark.parametrize("model", SIZES, ids=[m["name"] for m in SIZES])
def test_parameter_count_is_within_2_percent_of_the_published_count(model):
    counted = total_parameters(shape_from_config(model["config"]))
    published = model["published_parameters"]
    if "published_digits" in model:
        # a publisher's "1T" says no more than its digit: the count must round to it
        assert _to_significant_digits(counted, model["published_digits"]) == published
    else:
        assert counted == pytest.approx(published, rel=0.02)


def test_minimax_m1_counts_its_70_lightning_layers_as_linear_attention():
    s = shape("MiniMax-M1")  # attn_type_list: every eighth layer softmax attention
    assert (s.linear_layers, s.full_attention_layers) == (70, 10)
    # modeling_minimax_m1.py: qkv_proj (h -> 3 x 64 x 128), output_gate (h -> 64 x 128), out_proj (64 x 128 -> h)
    assert memory.parameters(s)["linear_attention"] == 70 * 5 * 6144 * 64 * 128
    # per request and layer one float32 64 x 128 x 128 state; only the 10 softmax layers hold KV per token
    cost = kv_cost(s, "vllm", "auto")
    assert cost.state_bytes_per_request == 70 * 64 * 128 * 128 * 4
    assert cost.bytes_per_token == 8 * 256 * 2 * 10


def test_linear_attention_layers_without_their_sizes_give_no_shape():
    config = dict(BY_NAME["Qwen3.5 35B-A3B"]["config"])
    config["text_config"] = {k: v for k, v in config["text_config"].items() if k != "linear_num_value_heads"}
    assert shape_from_config(config) is None


def test_deepseek_v3_mtp_layer_matches_its_published_size():
    # README_WEIGHTS.md: the MTP module has 11.5B unique parameters (embedding and head shared)
    assert memory.parameters(shape("DeepSeek V3"))["mtp"] == pytest.approx(11.5e9, rel=0.02)


def test_gemma_ties_its_embeddings_when_config_json_omits_the_key():
    assert shape("Gemma 2 9B").tie_word_embeddings  # Gemma2Config's default; the oracle's config.json omits it


def test_a_config_missing_a_size_gives_no_shape():
    config = dict(BY_NAME["Llama 3.1 8B"]["config"])
    del config["intermediate_size"]
    assert shape_from_config(config) is None


# --- weights per GPU ----------------------------------------------------------------------------------------


def test_llama_8b_bf16_weights_are_two_bytes_a_parameter_and_halve_under_tp2():
    s = shape("Llama 3.1 8B")
    counted = total_parameters(s)  # 8,030,261,248 published, less 65 norms of 4096 that the count leaves out
    assert counted == 8030261248 - 65 * 4096
    assert weight_bytes_per_gpu(s) == counted * 2
    assert weight_bytes_per_gpu(s, tp=2) == counted


def test_pipeline_stages_hold_their_share_of_layers_plus_the_larger_end():
    s = shape("Llama 3.1 70B")
    embed = 128256 * 8192 * 2
    layer = (total_parameters(s) * 2 - 2 * embed) / 80
    assert weight_bytes_per_gpu(s, pp=4) == pytest.approx(20 * layer + embed)


def test_deepseek_v3_fp8_block_weights_are_a_byte_plus_a_float32_scale_per_128x128_block():
    s = shape("DeepSeek V3")
    parts = memory.parameters(s)
    kept = parts["embed"] + parts["lm_head"] + parts["router"]  # bf16
    expected = (total_parameters(s) - kept) * (1 + 4 / 128**2) + kept * 2
    assert weight_bytes_per_gpu(s) == pytest.approx(expected)
    assert 620 < weight_bytes_per_gpu(s) / GIB < 640  # the FP8 checkpoint is ~642 GB (690 GB with MTP)


def test_gpt_oss_mxfp4_keeps_attention_router_and_embeddings_in_bf16():
    s = shape("gpt-oss-120b")
    assert s.quantization.method == "mxfp4" and "attention" in s.quantization.unquantized
    parts = memory.parameters(s)
    expected = parts["experts"] * (0.5 + 1 / 32) + (total_parameters(s) - parts["experts"]) * 2
    assert weight_bytes_per_gpu(s) == pytest.approx(expected)
    assert 60 < weight_bytes_per_gpu(s) / GIB < 64  # openai: gpt-oss-120b runs within one 80 GB GPU


@pytest.mark.parametrize(
    "quantization, bytes_per_weight",
    [
        ({"quant_method": "awq", "bits": 4, "group_size": 128}, 0.5 + (2 + 0.5) / 128),
        ({"quant_method": "gptq", "bits": 8, "group_size": -1}, 1.0),
        ({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16}, 0.5 + 1 / 16),
        ({"quant_method": "fp8", "activation_scheme": "dynamic"}, 1.0),
        (  # NVFP4 as llm-compressor writes it
            {
                "quant_method": "compressed-tensors",
                "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16}}},
            },
            0.5 + 1 / 16,
        ),
    ],
)
def test_quantized_linear_layers_take_their_packed_size_plus_scales(quantization, bytes_per_weight):
    s = shape("Llama 3.1 8B", quantization_config=quantization)
    assert s.quantization.bytes_per_weight == pytest.approx(bytes_per_weight)


def test_modules_to_not_convert_stay_in_the_checkpoint_dtype():
    s = shape("Llama 3.1 8B", quantization_config={"quant_method": "awq", "modules_to_not_convert": ["self_attn"]})
    assert "attention" in s.quantization.unquantized and "dense_mlp" not in s.quantization.unquantized


# --- KV bytes per token, by hand ----------------------------------------------------------------------------


def test_mha_phi3_every_head_has_its_own_kv():
    s = shape("Phi-3 mini")  # 32 kv heads, head_dim 3072 / 32 = 96, 32 layers
    assert kv_cost(s, "sglang", "auto").bytes_per_token == 32 * (96 + 96) * 2 * 32
    assert kv_cost(s, "sglang", "auto", attn_tp=2).bytes_per_token == 16 * (96 + 96) * 2 * 32


def test_gqa_llama_8b_kv_heads_shard_over_tp_and_stay_one_past_it():
    s = shape("Llama 3.1 8B")  # 8 kv heads x 128, 32 layers
    assert kv_cost(s, "sglang", "auto").bytes_per_token == 8 * 256 * 2 * 32 == 131072
    assert kv_cost(s, "sglang", "fp8_e4m3").bytes_per_token == 65536
    assert kv_cost(s, "sglang", "auto", attn_tp=16).bytes_per_token == 1 * 256 * 2 * 32
    assert kv_cost(s, "sglang", "mxfp8").bytes_per_token == 8 * 256 * 32 * (1 + 1 / 32)


def test_mla_deepseek_v3_one_latent_per_token_not_divided_by_tp():
    s = shape("DeepSeek V3")  # (512 + 64) per layer, 61 layers
    assert kv_cost(s, "sglang", "auto").bytes_per_token == 576 * 2 * 61 == 70272
    assert kv_cost(s, "sglang", "auto", attn_tp=8).bytes_per_token == 70272
    # fp4: half a byte per element plus one fp8 scale per 16 (pool_configurator.py cell_size // 2 + dim // 16)
    assert kv_cost(s, "sglang", "fp4_e2m1").bytes_per_token == 576 * 61 // 2 + 576 // 16 * 61


def test_vllm_fp8_ds_mla_packs_a_token_in_656_bytes_a_layer():
    # 512 fp8 NoPE values + 4 float32 scales + 64 bf16 RoPE values (vllm flashmla_sparse.py:76-87), 61 layers
    s = shape("DeepSeek V3.2-Exp")
    assert kv_cost(s, "vllm", "fp8_ds_mla").bytes_per_token == (512 + 4 * 4 + 64 * 2) * 61 == 656 * 61
    assert kv_cost(s, "vllm", "fp8").bytes_per_token == 576 * 61  # the plain fp8 layout: one byte an element


def test_the_dsa_indexer_adds_132_bytes_a_layer_to_deepseek_v32s_kv():
    # index_head_dim 128 fp8 keys + 128 // 128 float32 scales (0.5.23 pool_configurator.py:560-636), 61 layers,
    # on top of the latent (512 + 64) x 2 B; not divided by TP
    s = shape("DeepSeek V3.2-Exp")
    assert memory.dsa_indexer_bytes(s) == 128 + 4
    cost = kv_cost(s, "sglang", "auto", attn_tp=8, dsa_indexer=True)
    assert cost.bytes_per_token == (576 * 2 + 132) * 61 == 78324
    assert kv_cost(s, "sglang", "auto", dsa_indexer=False).bytes_per_token == 576 * 2 * 61
    # vLLM: the indexer's MLAAttentionSpec(head_size 132, uint8) page beside fp8_ds_mla's 656 bytes
    assert kv_cost(s, "vllm", "fp8_ds_mla", dsa_indexer=True).bytes_per_token == (656 + 132) * 61


def test_swa_mixed_gpt_oss_sglang_counts_sliding_layers_at_the_swa_ratio():
    s = shape("gpt-oss-20b")  # 12 full + 12 sliding layers, 8 kv heads x 64
    per_layer = 8 * (64 + 64) * 2
    assert kv_cost(s, "sglang", "auto").bytes_per_token == pytest.approx(per_layer * (12 + 0.8 * 12))
    assert kv_cost(s, "vllm", "auto").bytes_per_token == per_layer * 24


def test_hybrid_linear_qwen3_next_kv_on_full_layers_and_state_per_request():
    config = {
        "torch_dtype": "bfloat16",
        "model_type": "qwen3_next",
        "hidden_size": 2048,
        "num_hidden_layers": 48,
        "full_attention_interval": 4,
        "num_attention_heads": 16,
        "num_key_value_heads": 2,
        "head_dim": 256,
        "vocab_size": 151936,
        "moe_intermediate_size": 512,
        "shared_expert_intermediate_size": 512,
        "num_experts": 512,
        "linear_num_key_heads": 16,
        "linear_num_value_heads": 32,
        "linear_key_head_dim": 128,
        "linear_value_head_dim": 128,
        "linear_conv_kernel_dim": 4,
    }  # huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct config.json
    s = shape_from_config(config)
    assert (s.full_attention_layers, s.linear_layers) == (12, 36)
    cost = kv_cost(s, "sglang", "auto")
    assert cost.bytes_per_token == 2 * (256 + 256) * 2 * 12
    conv = (2 * 16 * 128 + 32 * 128) * 3 * 2  # conv dim x (kernel - 1) x bf16
    recurrent = 32 * 128 * 128 * 4  # value heads x key dim x value dim x float32
    assert cost.state_bytes_per_request == 36 * (conv + recurrent)
    assert total_parameters(s) == pytest.approx(80e9, rel=0.02)  # Qwen3-Next-80B-A3B


def test_moe_mixtral_kv_is_its_attention_alone():
    s = shape("Mixtral 8x7B")  # MoE changes weights, not KV: 8 kv heads x 128, 32 layers
    assert kv_cost(s, "vllm", "auto").bytes_per_token == 8 * 256 * 2 * 32


# --- the engines' memory fractions --------------------------------------------------------------------------


def test_sglang_default_mem_fraction_on_an_h100():
    # 81559 MiB; chunk 8192, max_bs 256; prefill graph sizes up to 8192: 8 + 14 + 8 + 8 + 12 + 8 = 58;
    # 512 + 8192 * 1.5 + 1/8 * 1024 + 256 * 2 + 58 * 8 = 13904 MiB (above the 10 GiB floor)
    reserved = 512 + 8192 * 1.5 + 128 + 512 + 58 * 8
    assert memory._prefill_capture_sizes(8192) == 8 + 14 + 8 + 8 + 12 + 8
    assert memory.sglang_default_mem_fraction(81559) == round((81559 - reserved) / 81559, 3)


def test_sglang_default_mem_fraction_on_a_t4_has_no_floor():
    reserved = 512 + 2048 * 1.5 + 128 + 8 * 2 + memory._prefill_capture_sizes(2048) * 8
    assert memory.sglang_default_mem_fraction(15360) == round((15360 - reserved) / 15360, 3)


H100_MIB = 81559  # what NVML reports for an H100 80GB
RTX_4090_MIB = 24564


def fraction(gpu_mib, reserved_mib):
    return round((gpu_mib - reserved_mib) / gpu_mib, 3)


@pytest.mark.parametrize(
    "release, reserved",
    [
        # sglang 0.5.1 server_args.py: H100 tier (< 90 GiB) reserves (9.5 + TP x PP / 2) GiB
        ("0.5.1", (9.5 + 0.5) * 1024),
        ("0.5.2", (9.5 + 0.5) * 1024),
        # 0.5.3-0.5.9: 512 + 8192 x 1.5 + 256 x 2 + 1/8 x 1024, no prefill graphs (piecewise off by default)
        ("0.5.3", 512 + 8192 * 1.5 + 256 * 2 + 128),
        ("0.5.9", 512 + 8192 * 1.5 + 256 * 2 + 128),
        # 0.5.10 on: plus 8 MiB for each of the 58 prefill graph sizes up to 8192
        ("0.5.10", 512 + 8192 * 1.5 + 256 * 2 + 128 + 58 * 8),
        ("0.5.19", 512 + 8192 * 1.5 + 256 * 2 + 128 + 58 * 8),
        ("0.5.23", 512 + 8192 * 1.5 + 256 * 2 + 128 + 58 * 8),
    ],
)
def test_sglang_default_mem_fraction_on_an_h100_release_by_release(release, reserved):
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release)) == fraction(H100_MIB, reserved)


@pytest.mark.parametrize(
    "release, reserved",
    [
        ("0.5.1", (2.8 + 0.1) * 1024),  # the < 35 GiB tier's fixed reserve
        ("0.5.4", 512 + 2048 * 1.5 + 16 * 2 + 128),  # chunk 2048, decode max_bs 16 at TP < 4
        ("0.5.4.post3", 512 + 2048 * 1.5 + 24 * 2 + 128),  # max_bs 24
        ("0.5.10", 512 + 2048 * 1.5 + 24 * 2 + 128 + 42 * 8),  # 42 prefill graph sizes up to 2048
        ("0.5.20", 512 + 4096 * 1.5 + 48 * 2 + 128 + 50 * 8),  # chunk 4096, max_bs 48, 50 sizes up to 4096
    ],
)
def test_sglang_default_mem_fraction_on_an_rtx_4090_follows_its_tier_changes(release, reserved):
    assert memory._prefill_capture_sizes(2048) == 8 + 14 + 8 + 8 + 4
    assert memory.sglang_default_mem_fraction(RTX_4090_MIB, release=Version(release)) == fraction(
        RTX_4090_MIB, reserved
    )


@pytest.mark.parametrize(
    "release, extra",
    [("0.5.1", 2048), ("0.5.9", 2048), ("0.5.13", 4096), ("0.5.14", 0)],  # 0.5.14 moved it out of the heuristic
)
def test_sglang_reserves_for_eagle_until_0_5_14(release, extra):
    base = 512 + 8192 * 1.5 + 256 * 2 + 128 + (58 * 8 if Version(release) >= Version("0.5.10") else 0)
    base = (9.5 + 0.5) * 1024 if release == "0.5.1" else base
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), speculative="EAGLE") == fraction(
        H100_MIB, base + extra
    )


def test_sglang_reserves_a_flat_1_5_gib_of_prefill_graphs_for_mla_from_0_5_10():
    mla = memory.sglang_default_mem_fraction(H100_MIB, mla=True, release=Version("0.5.10"))
    assert mla == fraction(H100_MIB, 512 + 8192 * 1.5 + 256 * 2 + 128 + 1536)


@pytest.mark.parametrize(
    "release, prefill_sizes",
    [
        ("0.5.13", 0),  # _handle_piecewise_cuda_graph: PP > 1 turns piecewise graphs off
        ("0.5.14", 0),  # tc_piecewise by default, incompatible with PP (server_args.py:3009)
        ("0.5.15", 74),  # breakable by default, whose incompatibilities do not name PP
        ("0.5.18", 74),
        ("0.5.19", 0),  # PP > 1 turns the default breakable graphs off (cuda_graph_hook.py:122) before the fraction
        ("0.5.23", 0),
    ],
)
def test_pipeline_parallelism_keeps_the_prefill_graphs_only_from_0_5_15_to_0_5_18(release, prefill_sizes):
    b200 = 183 * 1024  # chunk 16384, max_bs 512; 74 prefill graph sizes up to 16384
    base = 512 + 16384 * 1.5 + 512 * 2 + 2 / 8 * 1024
    assert memory._prefill_capture_sizes(16384) == 58 + 16  # 4608..16384 step 512 past 4096
    assert memory.sglang_default_mem_fraction(b200, pp=2, release=Version(release)) == fraction(
        b200, base + prefill_sizes * 8
    )


@pytest.mark.parametrize(
    "release, mla_reserve, dsa_reserve",
    [
        ("0.5.14", 1536, 1536),
        ("0.5.16", 0, 0),  # breakable prefill graphs are incompatible with MLA (0.5.15 server_args.py:3352)
        ("0.5.17", 0, 1536),  # ... but for DSA models (0.5.17 :4466-4472)
        ("0.5.18", 1536, 1536),  # no MLA rule any more
    ],
)
def test_mla_models_lose_the_prefill_graphs_under_breakable_in_0_5_15_to_0_5_17(release, mla_reserve, dsa_reserve):
    base = 512 + 8192 * 1.5 + 256 * 2 + 128
    mla = memory.sglang_default_mem_fraction(H100_MIB, mla=True, release=Version(release))
    dsa = memory.sglang_default_mem_fraction(H100_MIB, mla=True, dsa=True, release=Version(release))
    assert (mla, dsa) == (fraction(H100_MIB, base + mla_reserve), fraction(H100_MIB, base + dsa_reserve))


# --- the launch flags SGLang's default fraction reads (0.5.3 server_args.py:566-675, 0.5.23 memory_hook.py:89-399)

A800_MIB = 80 * 1024
B200_MIB = 183 * 1024
Flags = memory.SglangMemoryFlags


def test_a_cuda_graph_max_bs_replaces_the_tiers_decode_max_bs():
    # sglang-11948: 0.5.3.post3, A800 80 GiB, TP 2, EAGLE3, --cuda-graph-max-bs 128 (the tier's 256 otherwise):
    # 512 + 8192 x 1.5 + 128 x 2 + 2/8 x 1024 = 13312 (over the 10 GiB floor), + 2048 for EAGLE3
    got = memory.sglang_default_mem_fraction(
        A800_MIB, tp=2, release=Version("0.5.3.post3"), speculative="EAGLE3", flags=Flags(cuda_graph_max_bs=128)
    )
    assert got == fraction(A800_MIB, 512 + 12288 + 256 + 256 + 2048) == 0.812
    # 0.5.23 on a B200: 512 + 16384 x 1.5 + 1024 x 2 + 128 + 74 prefill graph sizes x 8
    got = memory.sglang_default_mem_fraction(B200_MIB, release=Version("0.5.23"), flags=Flags(cuda_graph_max_bs=1024))
    assert got == fraction(B200_MIB, 512 + 24576 + 2048 + 128 + 74 * 8)


def test_a_smaller_chunked_prefill_size_shrinks_activations_and_prefill_graphs_down_to_the_floor():
    # 0.5.23, H100: 512 + 4096 x 1.5 + 64 x 2 + 128 + 50 sizes up to 4096 x 8 = 7312 < 10 GiB: the floor holds
    flags = Flags(chunked_prefill_size=4096, cuda_graph_max_bs=64)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version("0.5.23"), flags=flags) == fraction(
        H100_MIB, 10 * 1024
    )
    # a 24 GiB RTX 4090 has no floor: 0.5.9 (no prefill graphs) 512 + 2048 (the max with 2048) x 1.5 + 8 x 2 + 128
    flags = Flags(chunked_prefill_size=1024, cuda_graph_max_bs=8)
    assert memory.sglang_default_mem_fraction(RTX_4090_MIB, release=Version("0.5.9"), flags=flags) == fraction(
        RTX_4090_MIB, 512 + 3072 + 16 + 128
    )


@pytest.mark.parametrize("release", ["0.5.9", "0.5.10", "0.5.23"])
def test_chunking_off_reserves_for_max_prefill_tokens(release):
    # --chunked-prefill-size -1: 1.5 x max(max_prefill_tokens, 2048), and no prefill capture size is <= -1
    base = 512 + 256 * 2 + 128
    off = memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=Flags(chunked_prefill_size=-1))
    assert off == fraction(H100_MIB, base + 16384 * 1.5)  # the default --max-prefill-tokens
    flags = Flags(chunked_prefill_size=-1, max_prefill_tokens=32768)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == fraction(
        H100_MIB, base + 32768 * 1.5
    )
    # with chunking on, --max-prefill-tokens is not read
    flags = Flags(max_prefill_tokens=32768)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == (
        memory.sglang_default_mem_fraction(H100_MIB, release=Version(release))
    )


@pytest.mark.parametrize(
    "release, running_64, running_64_with_max_bs_512",
    [
        ("0.5.21", 256 * 2, 512 * 2),  # --max-running-requests does not touch max_bs before 0.5.22
        ("0.5.22", 64 * 2, 512 * 2),  # a default max_bs above it is lowered to it (memory_hook.py:182-188)
        ("0.5.23", 64 * 2, 512 * 2),  # an explicit --cuda-graph-max-bs(-decode) stays
    ],
)
def test_max_running_requests_lowers_only_a_default_decode_max_bs_from_0_5_22(
    release, running_64, running_64_with_max_bs_512
):
    base = 512 + 8192 * 1.5 + 128 + 58 * 8
    capped = memory.sglang_default_mem_fraction(
        H100_MIB, release=Version(release), flags=Flags(max_running_requests=64)
    )
    assert capped == fraction(H100_MIB, base + running_64)
    explicit = memory.sglang_default_mem_fraction(
        H100_MIB, release=Version(release), flags=Flags(max_running_requests=64, cuda_graph_max_bs=512)
    )
    assert explicit == fraction(H100_MIB, base + running_64_with_max_bs_512)


@pytest.mark.parametrize(
    "release, reserved",
    [
        ("0.5.9", 512 + 8192 * 1.5 + 256 * 2 + 128),  # the decode max_bs x 2 is reserved whatever the flag
        ("0.5.13", 512 + 8192 * 1.5 + 256 * 2 + 128 + 58 * 8),  # the flag does not turn piecewise graphs off
        ("0.5.14", 512 + 8192 * 1.5 + 256 * 2 + 128),  # prefill DISABLED (server_args.py:2942-2944), decode kept
        ("0.5.15", 512 + 8192 * 1.5 + 128),  # a DISABLED decode graph reserves nothing either
        ("0.5.23", 512 + 8192 * 1.5 + 128),
    ],
)
def test_disable_cuda_graph_drops_the_graph_reserve_from_0_5_14(release, reserved):
    flags = Flags(disable_cuda_graph=True)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == fraction(
        H100_MIB, reserved
    )


@pytest.mark.parametrize(
    "release, phases, reserved",
    [
        # --disable-piecewise-cuda-graph: `if not self.disable_piecewise_cuda_graph` guards the 58 x 8 MiB
        ("0.5.13", {"prefill"}, 512 + 8192 * 1.5 + 256 * 2 + 128),
        # --disable-prefill-cuda-graph: a DISABLED prefill backend reserves nothing
        ("0.5.23", {"prefill"}, 512 + 8192 * 1.5 + 256 * 2 + 128),
        # --disable-decode-cuda-graph: 0.5.14 still reserves max_bs x 2, 0.5.15 on do not
        ("0.5.14", {"decode"}, 512 + 8192 * 1.5 + 256 * 2 + 128 + 58 * 8),
        ("0.5.15", {"decode"}, 512 + 8192 * 1.5 + 128 + 58 * 8),
    ],
)
def test_a_phases_own_off_switch_drops_its_graph_reserve(release, phases, reserved):
    flags = Flags(disabled_graph_phases=frozenset(phases))
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == fraction(
        H100_MIB, reserved
    )


@pytest.mark.parametrize("release", ["0.5.13", "0.5.23"])
def test_an_explicit_prefill_graph_max_replaces_the_chunk_and_its_context_cap(release):
    # --piecewise-cuda-graph-max-tokens 1024 (0.5.13) / --cuda-graph-max-bs-prefill 1024 (0.5.23): 38 capture
    # sizes up to 1024, the --context-length 512 cap (0.5.13) applying only to the default
    assert memory._prefill_capture_sizes(1024) == 8 + 14 + 8 + 8  # 4..32, 48..256, 288..512, 576..1024
    flags = Flags(prefill_graph_max_bs=1024, context_length=512)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == fraction(
        H100_MIB, 512 + 8192 * 1.5 + 256 * 2 + 128 + 38 * 8
    )


def test_piecewise_graphs_are_off_under_speculative_decoding_in_0_5_10():
    # 0.5.10 server_args.py _handle_piecewise_cuda_graph turns them off for speculative decoding (gone in 0.5.11)
    base = 512 + 8192 * 1.5 + 256 * 2 + 128 + 4096
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version("0.5.10"), speculative="EAGLE") == fraction(
        H100_MIB, base
    )
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version("0.5.11"), speculative="EAGLE") == fraction(
        H100_MIB, base + 58 * 8
    )


@pytest.mark.parametrize("release, sizes", [("0.5.12", 58), ("0.5.13", 42), ("0.5.16", 42), ("0.5.17", 58)])
def test_the_prefill_capture_sizes_stop_at_the_context_length_from_0_5_13_to_0_5_16(release, sizes):
    # --context-length 2048 on an H100: 42 capture sizes up to 2048 instead of 58 up to the 8192 chunk
    flags = Flags(context_length=2048)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version(release), flags=flags) == fraction(
        H100_MIB, 512 + 8192 * 1.5 + 256 * 2 + 128 + sizes * 8
    )


def test_before_0_5_3_the_reserve_is_fixed_whatever_the_flags():
    flags = Flags(chunked_prefill_size=2048, cuda_graph_max_bs=8, disable_cuda_graph=True, max_running_requests=4)
    assert memory.sglang_default_mem_fraction(H100_MIB, release=Version("0.5.2"), flags=flags) == fraction(
        H100_MIB, (9.5 + 0.5) * 1024
    )


@pytest.mark.parametrize(
    "tower, factor",
    [
        ((24, 1024), 0.95),  # ViT-L/14 itself: the base 0.95
        ((27, 1152), 0.95 * (1 - 0.1 * (27 * 1152**2 / (24 * 1024**2) - 1))),  # 1.42 x ViT-L: 0.9576
        ((12, 768), 0.95 * 1.05),  # a small tower: the factor stops at 1.05
        ((45, 3200), 0.95 * 0.8),  # InternViT-6B-sized: it stops at 0.8
    ],
)
def test_sglang_scales_its_fraction_by_the_vision_towers_size(tower, factor):
    assert memory.sglang_vision_factor(tower) == pytest.approx(factor, abs=1e-12)
    # applied to the rounded fraction, not rounded again (0.5.23 memory_hook.py:324-337, :461-462)
    got = memory.sglang_default_mem_fraction(H100_MIB, vision_tower=tower)
    assert got == pytest.approx(fraction(H100_MIB, 13904) * factor, abs=1e-12)


def test_vision_config_without_its_sizes_takes_sglangs_defaults():
    config = {**BY_NAME["Llama 3.1 8B"]["config"], "vision_config": {"depth": 32, "hidden_size": 1280}}
    assert shape_from_config(config).vision_tower == (24, 1280)  # no num_hidden_layers: getattr's 24
    assert shape("Llama 3.1 8B").vision_tower is None


@pytest.mark.parametrize(
    "architecture, release, served",
    [
        ("Qwen2_5_VLForConditionalGeneration", None, True),
        ("Gemma3ForConditionalGeneration", Version("0.5.1"), False),  # mm_disabled_models, every release
        ("Llama4ForConditionalGeneration", None, False),
        ("InklingForConditionalGeneration", Version("0.5.15"), True),
        ("InklingForConditionalGeneration", Version("0.5.16"), False),  # listed from 0.5.16
    ],
)
def test_sglang_serves_some_multimodal_architectures_text_only_by_default(architecture, release, served):
    assert memory.sglang_multimodal_by_default(architecture, release) is served


@pytest.mark.parametrize("release, default", [("0.13.0", 0.9), ("0.19.1", 0.9), ("0.20.0", 0.92), ("0.33.0", 0.92)])
def test_vllm_default_gpu_memory_utilization_by_release(release, default):
    assert memory.vllm_gpu_memory_utilization(Version(release)) == default


def test_sglang_keeps_gemma2s_sliding_layers_in_the_full_pool():
    # Gemma2ForCausalLM is not one of SGLang's hybrid-SWA architectures: all 42 layers count per token
    s = shape("Gemma 2 9B")  # 8 kv heads x (256 + 256), 21 of 42 layers sliding
    assert (s.sliding_layers, s.sglang_swa_pool) == (21, False)
    assert kv_cost(s, "sglang", "auto").bytes_per_token == 8 * 512 * 2 * 42


def test_a_vllm_request_holds_only_the_window_of_its_sliding_layers():
    s = shape("gpt-oss-20b")  # 12 full + 12 sliding layers of 8 x (64 + 64) x 2 bytes, window 128
    cost = kv_cost(s, "vllm", "auto")
    per_layer = 8 * 128 * 2
    assert cost.request_bytes(131072) == 12 * per_layer * 131072 + 12 * per_layer * 128
    assert cost.request_bytes(100) == 24 * per_layer * 100


def test_llama4_chunked_layers_are_its_sliding_layers():
    from attn_preflight.rules.core.models import load_preset

    s = load_preset("llama-4-scout").shape  # 48 layers: every fourth global, the others chunked at 8192
    assert (s.full_attention_layers, s.sliding_layers, s.sliding_window, s.sglang_swa_pool) == (12, 36, 8192, True)


def test_the_quantization_flag_names_the_checkpoints_format():
    s = memory.with_quantization_flag(shape("DeepSeek V3"), "modelopt_fp4")
    assert s.quantization.method == "nvfp4 (modelopt_fp4)" and s.quantization.bytes_per_weight == 0.5 + 1 / 16
    assert "router" in s.quantization.unquantized  # what config.json leaves unquantized stays so
    assert memory.with_quantization_flag(shape("Llama 3.1 8B"), "bitsandbytes").quantization is None  # not sized
