"""Fixtures for rules/checks/parallel.py: the GPUs a layout takes, MIG, P2P within a TP group, and SGLang's
context-parallel and attention-DP layouts. No preset is Nemotron-H, LongCat-Flash or MiMo V2, so their
config.json excerpts (the fields the rules read) are written once to a temporary directory."""

from attn_preflight.rules.core.models import presets
from tests.rule_fixtures import written_model


def _text_config(preset: str, **fields) -> dict:
    """A preset's config.json fields as a multimodal model's text_config (its architecture left to the outer config)."""
    return {**{k: v for k, v in presets()[preset]["config"].items() if k != "architectures"}, **fields}


def sglang(gpu: str, model: str, *flags: str, **extra) -> dict:
    """A pasted `sglang.launch_server` line."""
    return {"gpu": gpu, "command": ["python", "-m", "sglang.launch_server", "--model-path", model, *flags], **extra}


_DEEPSEEK_V3 = presets()["deepseek-v3"]["config"]
NEMOTRON_H = written_model("nemotron-h", {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h"})
LONGCAT = written_model(
    "longcat-flash", {**_DEEPSEEK_V3, "architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash"}
)
MIMO_V2 = written_model(
    "mimo-v2-flash",
    {
        **presets()["qwen3-8b"]["config"],
        "architectures": ["MiMoV2FlashForCausalLM"],
        "model_type": "mimo_v2_flash",
        # MiMo-V2-Flash's hybrid layout (configs/model_config.py get_hybrid_layer_ids reads it): 1 = sliding window
        "sliding_window": 128,
        "hybrid_layer_pattern": [0, 1, 1, 1] * 9,
    },
)
# GLM-5-Next: DSA MLA attention beside KDA linear attention (configs/glm5_next.py's fields); Qwen4-Exp: GDN heads
GLM5_NEXT = written_model(
    "glm-5-next",
    {
        "architectures": ["Glm5NextForConditionalGeneration"],
        "model_type": "glm5_next",
        "text_config": _text_config(
            "glm-5",
            model_type="glm5_next_text",
            index_topk=2048,
            # GLM-5-Next's DSA attention has no RoPE part (configs/glm5_next.py:119-121 defaults)
            qk_nope_head_dim=256,
            qk_rope_head_dim=0,
            v_head_dim=256,
            linear_attn_config={"num_heads": 64, "head_dim": 128},
        ),
    },
)
QWEN4_EXP = written_model(
    "qwen4-exp",
    {
        "architectures": ["Qwen4ExpForConditionalGeneration"],
        "model_type": "qwen4_exp",
        "text_config": _text_config(
            "qwen3-8b", model_type="qwen4_exp_text", linear_num_key_heads=16, linear_num_value_heads=32
        ),
    },
)
CP_INTERLEAVE = ("--tp", "8", "--enable-prefill-cp", "--cp-strategy", "interleave")
CP_ZIGZAG_8 = ("--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag", "--attn-cp-size", "8")
DSA = "deepseek-v3.2-exp"
PD_DECODE_DCP = ("--disaggregation-mode", "decode", "--tp", "8", "--dcp-size", "8")
MLA = "deepseek-v3"  # DSA refuses DCP under PD of its own (model_overrides/deepseek_v2.py _dsa_dcp_overrides)

H200X8 = "facts/h200x8-nvlink.json"
H200X4_PCIE = "facts/h200x4-pcie-no-p2p.json"
MIG = "facts/h200x2-mig.json"
QWEN = ["--model", "qwen3-8b"]
SGLANG_SERVE = ["sglang", "serve", "--model-path"]

FIXTURES = {
    "parallel-gpu-count": {
        "pass": [
            {"gpu": "8xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {"gpu": "H100", "argv": ["--gpu-count", "4", "--tp-size", "2", "--pp-size", "2"]},
        ],
        "fail": [
            {"gpu": "4xH100", "argv": ["--model", "llama-3.1-70b", "--tp-size", "8"]},
            {  # DP replicas beside TP: 16 GPUs
                "gpu": "H100",
                "argv": ["--gpu-count", "8"],
                "command": [
                    "python",
                    "-m",
                    "sglang.launch_server",
                    "--model-path",
                    "qwen3-8b",
                    "--tp",
                    "8",
                    "--dp",
                    "2",
                ],
            },
        ],
    },
    "parallel-mig-tp": {
        "pass": [{"facts": H200X8, "argv": [*QWEN, "--tp-size", "2"]}, {"facts": MIG, "argv": QWEN}],
        "fail": [{"facts": MIG, "argv": [*QWEN, "--tp-size", "2"]}],
    },
    "parallel-p2p": {
        "pass": [{"facts": H200X8, "argv": [*QWEN, "--tp-size", "8"]}],
        "fail": [
            {"facts": H200X4_PCIE, "argv": [*QWEN, "--tp-size", "4"], "expect": "warn"},
            {"facts": H200X4_PCIE, "argv": [*QWEN, "--tp-size", "2"], "expect": "warn"},  # two GPUs, still no P2P
        ],
    },
    "parallel-cp-decode-attn-tp-model": {
        "pass": [
            {"gpu": "8xB200", "command": [*SGLANG_SERVE, "glm-5", "--tp-size", "8", "--enable-cp-decode-attn-tp"]},
            {
                "gpu": "8xB200",
                "command": [*SGLANG_SERVE, "glm-5", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
        "fail": [
            {
                "gpu": "8xB200",
                "command": [*SGLANG_SERVE, "deepseek-v3", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
            },
            {
                "gpu": "8xH100",
                "command": [*SGLANG_SERVE, "llama-3.1-70b", "--tp-size", "8", "--enable-cp-decode-attn-tp"],
                "engine_version": ["sglang==0.5.17"],
            },
        ],
    },
    "parallel-pd-decode-dcp-transfer": {
        "pass": [
            sglang("8xH200", MLA, *PD_DECODE_DCP),  # mooncake, the default
            sglang("8xH200", MLA, *PD_DECODE_DCP, "--disaggregation-transfer-backend", "mori"),
        ],
        "fail": [
            sglang(
                "8xH200",
                MLA,
                *PD_DECODE_DCP,
                "--disaggregation-transfer-backend",
                "mori",
                engine_version=["sglang==0.5.21"],
            ),
            sglang(
                "8xH200",
                MLA,
                *PD_DECODE_DCP,
                "--disaggregation-transfer-backend",
                "fake",
                engine_version=["sglang==0.5.18"],
            ),
        ],
    },
    "parallel-dsa-prefill-cp-decode": {
        "pass": [sglang("8xH200", DSA, "--disaggregation-mode", "decode", "--tp", "8")],
        "fail": [
            sglang(
                "8xH200",
                DSA,
                "--disaggregation-mode",
                "decode",
                "--tp",
                "8",
                "--enable-prefill-cp",
                "--cp-strategy",
                "interleave",
            )
        ],
    },
    "parallel-attn-dp-size": {
        "pass": [
            sglang("8xH200", "qwen3-8b", "--tp", "8", "--attn-dp-size", "4"),
            sglang("8xH200", "qwen3-8b", "--tp", "8", "--dp-size", "4", "--enable-dp-attention"),  # the old spelling
        ],
        "fail": [
            sglang("8xH200", "qwen3-8b", "--tp", "8", "--attn-dp-size", "0"),
            sglang("8xH200", "qwen3-8b", "--tp", "4", "--attn-dp-size", "2", "--dp-size", "2"),
        ],
    },
    "parallel-dcp-options": {
        "pass": [
            sglang("8xH200", DSA, "--tp", "8", "--dcp-size", "8", "--dcp-replicate-q-proj"),  # a2a resolved (0.5.20+)
            sglang("8xH200", DSA, "--tp", "8", "--dcp-size", "8", "--dcp-comm-backend", "a2a"),
        ],
        "fail": [
            sglang("8xH200", DSA, "--tp", "8", "--dcp-size", "0"),
            sglang("8xH200", DSA, "--tp", "8", "--dcp-comm-backend", "a2a"),
            sglang("8xH200", DSA, "--tp", "8", "--dcp-replicate-q-proj"),
            sglang(
                "8xH200",
                DSA,
                "--tp",
                "8",
                "--dcp-size",
                "8",
                "--dcp-replicate-q-proj",
                engine_version=["sglang==0.5.19"],
            ),
            sglang("8xH200", DSA, "--tp", "8", "--dcp-size", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),
        ],
    },
    "parallel-cp-model": {
        "pass": [
            sglang("8xH200", NEMOTRON_H, "--tp", "8"),
            sglang("8xH200", DSA, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),
            sglang(
                "8xH200", MIMO_V2, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag", "--attn-cp-size", "8"
            ),
        ],
        "fail": [
            sglang("8xH200", NEMOTRON_H, "--tp", "8", "--attn-cp-size", "2"),
            sglang("8xH200", LONGCAT, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag"),
            sglang("8xH200", DSA, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "zigzag"),
            sglang(
                "8xH200",
                MIMO_V2,
                "--tp",
                "8",
                "--enable-prefill-cp",
                "--cp-strategy",
                "interleave",
                "--attn-cp-size",
                "8",
            ),
        ],
    },
    "parallel-cp-layout": {
        "pass": [
            sglang(
                "8xH200",
                "qwen3-8b",
                "--tp",
                "8",
                "--enable-prefill-cp",
                "--cp-strategy",
                "zigzag",
                "--attn-cp-size",
                "4",
            ),
            sglang("8xH200", DSA, "--tp", "8", "--enable-prefill-cp", "--cp-strategy", "interleave"),  # CP 8 set by DSA
        ],
        "fail": [
            sglang("8xH200", "qwen3-8b", "--tp", "8", "--enable-prefill-cp", "--attn-cp-size", "4"),
            sglang(
                "8xH200",
                "qwen3-8b",
                "--tp",
                "8",
                "--enable-prefill-cp",
                "--cp-strategy",
                "zigzag",
                "--attn-cp-size",
                "3",
            ),
            sglang(
                "8xH200",
                "qwen3-8b",
                "--tp",
                "8",
                "--enable-prefill-cp",
                "--cp-strategy",
                "zigzag",
                "--attn-cp-size",
                "4",
                "--attn-dp-size",
                "4",
            ),
        ],
    },
    "parallel-cp-tp-group-sharing": {
        "pass": [
            sglang("8xH200", GLM5_NEXT, *CP_INTERLEAVE),  # the DSA CP layout sets attn_cp_size 8
            sglang("8xH200", QWEN4_EXP, *CP_ZIGZAG_8),
            sglang(
                "8xH200",
                GLM5_NEXT,
                *CP_INTERLEAVE,
                *("--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1"),
                *("--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
            ),
        ],
        "fail": [
            sglang("8xH200", GLM5_NEXT, *CP_INTERLEAVE, "--attn-cp-size", "4"),
            sglang("8xH200", QWEN4_EXP, *CP_ZIGZAG_8[:4], "interleave", *CP_ZIGZAG_8[5:]),
            sglang(
                "8xH200", GLM5_NEXT, *CP_INTERLEAVE, "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4"
            ),
            sglang("8xH200", QWEN4_EXP, *CP_ZIGZAG_8, "--speculative-algorithm", "EAGLE"),
            sglang(
                "8xH200",
                GLM5_NEXT,
                *CP_INTERLEAVE,
                "--speculative-algorithm",
                "DFLASH",
                engine_version=["sglang==0.5.22"],
            ),
            sglang("8xH200", GLM5_NEXT, *CP_INTERLEAVE, "--disaggregation-mode", "prefill"),  # PD needs DFLASH
            sglang("8xH200", QWEN4_EXP, *CP_ZIGZAG_8, "--disaggregation-mode", "decode"),
            sglang(
                "6xH200",
                QWEN4_EXP,
                "--tp",
                "6",
                "--enable-prefill-cp",
                "--cp-strategy",
                "zigzag",
                "--attn-cp-size",
                "6",
            ),
            {
                **sglang(
                    "8xH200",
                    GLM5_NEXT,
                    *CP_INTERLEAVE,
                    "--disaggregation-mode",
                    "prefill",
                    "--speculative-algorithm",
                    "DFLASH",
                ),
                "command": [
                    "SGLANG_DISAGG_STAGING_BUFFER=1",
                    *sglang(
                        "8xH200",
                        GLM5_NEXT,
                        *CP_INTERLEAVE,
                        "--disaggregation-mode",
                        "prefill",
                        "--speculative-algorithm",
                        "DFLASH",
                    )["command"],
                ],
            },
        ],
    },
    "parallel-dcp-fi-a2a": {
        "pass": [sglang("8xB200", MLA, "--tp", "8", "--dcp-size", "8", "--dcp-comm-backend", "fi_a2a")],
        "fail": [sglang("8xH200", MLA, "--tp", "8", "--dcp-size", "8", "--dcp-comm-backend", "fi_a2a")],
    },
}
