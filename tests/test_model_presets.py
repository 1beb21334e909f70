"""The built-in model presets (rules/knowledge/model_presets.json, issue 10 part 1): each parses like a config.json,
names its hub id and its source, answers to its own names only, and gives the attention shape its source gives.

The expected shapes below are worked out by hand from the numbers in each preset's source (quoted beside them),
not read back from the tool."""

from __future__ import annotations

import json
import re

import pytest
from cli_run import check_json, finding, run_cli

from attn_preflight.inputs import ModelNotFound, load_model
from attn_preflight.rules.core.errors import RulesInputError
from attn_preflight.rules.core.models import features_from_config, load_preset, presets
from attn_preflight.rules.engines.sglang import capabilities as backend_kb

PRESETS = presets()
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def spellings(name, preset):
    organisation = preset["hub_id"].split("/")[0]
    return [name, preset["hub_id"], *preset["aliases"], *(f"{organisation}/{alias}" for alias in preset["aliases"])]


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_parses_and_names_its_hub_id_and_source(name):
    preset = PRESETS[name]
    assert HUB_ID.match(preset["hub_id"]), preset["hub_id"]
    assert re.search(r"(github\.com|huggingface\.co)/\S+", preset["source"]) and isinstance(preset["aliases"], list)
    model = features_from_config(preset["config"], name, "test")
    assert model.architecture and model.model_type and model.num_attention_heads and model.head_dim


@pytest.mark.parametrize("name", PRESETS)
def test_every_name_hub_id_and_alias_of_a_preset_loads_that_preset(name):
    for spelling in spellings(name, PRESETS[name]):
        assert load_model(spelling).name == name, spelling
        assert load_model(spelling.upper()).name == name, spelling  # hub ids are case-insensitive


def test_no_spelling_names_two_presets():
    seen: dict[str, str] = {}
    for name, preset in PRESETS.items():
        for spelling in {s.lower() for s in spellings(name, preset)}:
            assert seen.setdefault(spelling, name) == name, f"{spelling}: {seen[spelling]} and {name}"


@pytest.mark.parametrize("hub_id", ["someone-else/Qwen3-32B", "Qwen/Qwen3-32B-AWQ", "MiniMaxAI/MiniMax-M1-80k-hf"])
def test_a_near_hub_id_is_not_a_preset(hub_id):
    with pytest.raises(ModelNotFound):
        load_model(hub_id)


def test_a_near_bare_name_is_not_a_preset():
    with pytest.raises(RulesInputError, match="neither a local model directory, a hub id nor a preset"):
        load_model("Qwen3-32B-FP8")


def test_a_missing_path_ending_in_a_preset_name_is_an_input_error():
    with pytest.raises(RulesInputError, match="no such file or directory"):
        load_model("/models/GLM-4.5-Air")


# preset -> what its source says, worked out by hand: head_dim (explicit, else hidden / heads), GQA ratio
# (heads / KV heads), MLA (kv_lora_rank > 0; head dim = nope + rope), window, softcap, features.
SHAPES = {
    # llama-models sku_list: dim 16384, 128 heads, 8 KV heads -> 16384 / 128 = 128, 128 / 8 = 16
    "llama-3.1-405b": dict(head_dim=128, gqa_ratio=16, mla=False, features=set()),
    # mlc-llm's copy of the config.json: head_dim 64 (not 2048 / 32 = 64 by chance: it is written), 32 / 8 = 4
    "llama-3.2-1b": dict(head_dim=64, gqa_ratio=4, features=set()),
    # head_dim 128, 24 heads / 8 KV heads = 3
    "llama-3.2-3b": dict(head_dim=128, gqa_ratio=3, features=set()),
    # slime: hidden 5120 / 40 heads = 128; 40 / 8 query groups = 5
    "qwen2.5-32b": dict(head_dim=128, gqa_ratio=5, sliding_window=None, features=set()),
    # slime: kv-channels 128 (not 5120 / 64 = 80); 64 / 8 = 8
    "qwen3-32b": dict(head_dim=128, gqa_ratio=8, features=set()),
    # slime: kv-channels 128 (not 4096 / 64 = 64); 64 / 4 = 16
    "qwen3-235b-a22b": dict(head_dim=128, gqa_ratio=16, features=set()),
    # DeepSeek-V3 repo config_236B.json: nope 128 + rope 64 = 192, v 128; absorbed decode (rope 64, rank 512)
    "deepseek-v2": dict(mla=True, head_dim=192, v_head_dim=128, absorbed_mla_head_dims=(64, 512), features={"mla"}),
    # config_671B_v3.2.json: the V3 MLA shape; DeepseekV32ForCausalLM is in SGLang's DeepSeek family
    "deepseek-v3.2-exp": dict(mla=True, head_dim=192, v_head_dim=128, deepseek_family=True, features={"mla"}),
    # slime: kv-channels 128 (5120 / 96 is not even an integer); 96 / 8 = 12
    "glm-4.5": dict(head_dim=128, gqa_ratio=12, mla=False, features=set()),
    "glm-4.5-air": dict(head_dim=128, gqa_ratio=12, mla=False, features=set()),
    # slime: qk-head-dim 192 + pos-emb 64 = 256, v 256: the prefill shape is symmetric; absorbed (64, 512)
    "glm-5": dict(mla=True, head_dim=256, v_head_dim=256, absorbed_mla_head_dims=(64, 512), deepseek_family=True),
    # slime: MLA with qk-head-dim 192 + 64 = 256, v 256, rank 512; Glm4MoeLite is in SGLang's DeepSeek family
    "glm-4.7-flash": dict(
        mla=True, head_dim=256, v_head_dim=256, absorbed_mla_head_dims=(64, 512), deepseek_family=True
    ),
    # mlc-llm's copy: head_dim 128 (not 4608 / 32 = 144), 32 / 16 = 2, window 4096, softcap 50.0
    "gemma-2-27b": dict(
        head_dim=128, gqa_ratio=2, sliding_window=4096, softcap=50.0, features={"sliding_window", "softcap"}
    ),
    # mlc-llm's copy: 3072 / 32 = 96, MHA (32 KV heads), a 262144 window written in the config
    "phi-3.5-mini": dict(head_dim=96, gqa_ratio=1, sliding_window=262144, features={"sliding_window"}),
    # 3072 / 24 = 128, 24 / 8 = 3
    "phi-4-mini": dict(head_dim=128, gqa_ratio=3, sliding_window=262144),
    # MiniMax-M1 config.json: head_dim 128, 64 / 8 = 8, lightning-attention layers beside softmax ones
    "minimax-m1": dict(head_dim=128, gqa_ratio=8, hybrid_linear=True, sliding_window=None, features=set()),
    # slime: kv-channels 128 (not 3072 / 48 = 64); 48 / 8 = 6; full attention on every layer
    "minimax-m2": dict(head_dim=128, gqa_ratio=6, hybrid_linear=False, features=set()),
    # TensorRT-LLM's copy of the Mixtral-8x7B config.json: 4096 / 32 = 128, 32 / 8 = 4, no window (null)
    "mixtral-8x7b": dict(head_dim=128, gqa_ratio=4, sliding_window=None, features=set()),
    # TensorRT-LLM's Maverick config: head_dim 128, 40 / 8 = 5, attention_chunk_size 8192
    "llama-4-maverick": dict(head_dim=128, gqa_ratio=5, attention_chunk_size=8192, features={"chunked_local"}),
    # TensorRT-LLM's Mistral Small 3.1 text_config: head_dim 128 (not 5120 / 32 = 160), 32 / 8 = 4
    "mistral-small-3.1": dict(head_dim=128, gqa_ratio=4, sliding_window=None, features=set()),
    # TensorRT-LLM's Phi-3-mini-4k config.json: 3072 / 32 = 96, MHA, window 2047
    "phi-3-mini-4k": dict(head_dim=96, gqa_ratio=1, sliding_window=2047, features={"sliding_window"}),
    # slime: kv-channels 256, 16 / 2 = 8; Megatron-Bridge: 3 GDN layers to each attention layer
    "qwen3.5-35b-a3b": dict(head_dim=256, gqa_ratio=8, hybrid_linear=True, model_type="qwen3_5_moe_text"),
    # presets from before: the features their configs are known for
    "gpt-oss-120b": dict(head_dim=64, gqa_ratio=8, attention_sinks=True, sliding_window=128),
    "llama-4-scout": dict(attention_chunk_size=8192, gqa_ratio=5, features={"chunked_local"}),
    "qwen3-next-80b-a3b": dict(head_dim=256, gqa_ratio=8, hybrid_linear=True),
}


@pytest.mark.parametrize("name", SHAPES)
def test_a_presets_attention_shape_is_what_its_source_says(name):
    model = load_preset(name)
    expected = dict(SHAPES[name])
    features = expected.pop("features", None)
    assert {key: getattr(model, key) for key in expected} == expected
    if features is not None:
        assert set(model.features) == features


def test_minimax_m1_has_one_softmax_layer_in_eight():
    """MiniMax-M1's attn_type_list: 0 = lightning (linear) attention, 1 = softmax; 80 layers, layers 7, 15, ... 79."""
    attn_types = PRESETS["minimax-m1"]["config"]["attn_type_list"]
    assert len(attn_types) == 80 and [i for i, t in enumerate(attn_types) if t == 1] == list(range(7, 80, 8))


@pytest.mark.parametrize(("attn_types", "hybrid"), [([1, 1, 1], False), ([0, 0, 1], True), ([0, 0, 0], True)])
def test_a_linear_attention_layer_in_attn_type_list_makes_the_model_hybrid(attn_types, hybrid):
    config = {"architectures": ["MiniMaxText01ForCausalLM"], "num_attention_heads": 8, "attn_type_list": attn_types}
    assert features_from_config(config, "m", "test").hybrid_linear is hybrid


@pytest.mark.parametrize(
    ("config", "chunk"),
    [
        # sglang 0.5.23 configs/nemotron_h.py _resolve_mamba_chunk_size: mamba_chunk_size, else the older chunk_size,
        # else 256 (the oracle's refusal names "chunk_size=128" for the first, "chunk_size=256" without either)
        ({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "chunk_size": 128}, 128),
        ({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h"}, 256),
        ({"architectures": ["FalconH1ForCausalLM"], "mamba_chunk_size": 128}, 128),
        # overrides.py mamba_cache_chunk_size: getattr(hf_config, "mamba_chunk_size", 64) on Qwen3-Next's config
        ({"architectures": ["Qwen3NextForCausalLM"], "chunk_size": 128}, 64),
        # configs/lfm2.py: a property, whatever config.json says
        ({"architectures": ["Lfm2ForCausalLM"], "mamba_chunk_size": 256}, 1),
    ],
)
def test_the_mamba_chunk_size_is_the_one_sglangs_config_class_reads(config, chunk):
    model = features_from_config(config, "m", "test")
    assert backend_kb.mamba_chunk_size(model.architecture, model.mamba_chunk_size, model.ssm_chunk_size) == chunk


def test_a_mamba_chunk_size_that_is_no_integer_is_an_input_error_and_another_models_chunk_size_is_not_read():
    with pytest.raises(RulesInputError, match="mamba_chunk_size must be an integer"):
        features_from_config({"architectures": ["FalconH1ForCausalLM"], "mamba_chunk_size": "128"}, "m", "test")
    assert features_from_config({"architectures": ["X"], "chunk_size": "any"}, "m", "test").ssm_chunk_size is None


@pytest.mark.parametrize(
    ("hub_id", "tp", "heads_status", "found"),
    [
        # 40 heads and 8 KV heads (Qwen2.5-32B): TP 8 splits both, TP 3 neither
        ("Qwen/Qwen2.5-32B-Instruct", "8", "pass", "attention TP size 8"),
        ("Qwen/Qwen2.5-32B-Instruct", "3", "fail", "40 attention heads, 8 KV heads"),
        # 128 heads, 8 KV heads (Llama 3.1 405B): TP 16 splits the heads and replicates the KV heads
        ("meta-llama/Llama-3.1-405B-Instruct", "16", "pass", "attention TP size 16"),
        # 48 heads (MiniMax-M2): TP 32 cannot split them
        ("MiniMaxAI/MiniMax-M2", "32", "fail", "48 attention heads, 8 KV heads"),
        # 96 heads, 8 KV heads (GLM-4.5-Air): TP 16 splits the heads, KV heads replicate
        ("zai-org/GLM-4.5-Air", "16", "pass", "attention TP size 16"),
    ],
)
def test_check_judges_a_hub_id_by_its_preset(hub_id, tp, heads_status, found):
    run, report = check_json(["--gpu", "H100", "--model", hub_id, "--tp", tp])
    assert run.code == (1 if heads_status == "fail" else 0)
    assert report["config"]["model"]["source"] == f"preset {load_model(hub_id).name} ({hub_id})"
    heads = finding(report, "general-tp-heads")
    assert heads["status"] == heads_status and found in heads["message"]


def test_models_lists_every_preset_with_its_names_and_shape():
    listed = json.loads(run_cli(["models", "--format", "json"]).out)
    assert [entry["name"] for entry in listed] == list(PRESETS)
    for entry in listed:
        preset = PRESETS[entry["name"]]
        assert (entry["hub_id"], entry["aliases"], entry["source"]) == (
            preset["hub_id"],
            preset["aliases"],
            preset["source"],
        )
        assert entry["model"]["head_dim"] == load_preset(entry["name"]).head_dim
    text = run_cli(["models"])
    assert text.code == 0 and all(preset["hub_id"] in text.out for preset in PRESETS.values())
    assert max(len(line) for line in text.out.splitlines()) <= 100  # readable in a 100-column terminal


def test_check_help_points_to_models_instead_of_listing_every_preset():
    run = run_cli(["check", "--help"])
    help_text = " ".join(run.out.split())  # click wraps the option help
    assert run.code == 0 and "attn-preflight models" in help_text
    assert not any(name in help_text for name in PRESETS)
