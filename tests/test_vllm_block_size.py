"""The block size vLLM resolves per release and backend (rules/engines/vllm/block_size.py), against what each
release's code does (the module's docstring names the lines read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from attn_preflight.commands.check import config_from_options, target_from_options
from attn_preflight.rules.engines.vllm import block_size

MODELS = Path(__file__).resolve().parent / "fixtures" / "models"
LLAMA = str(MODELS / "Llama-3.1-8B-Instruct")
DEEPSEEK = str(MODELS / "DeepSeek-V3")


def _resolved(argv, gpu, release):
    config = config_from_options({"engine": "vllm"}, ["vllm", "serve", *argv])
    target = target_from_options(gpu, None, [f"vllm=={release}"])
    return block_size.rules_resolved(config, target)


@pytest.mark.parametrize(
    ("argv", "gpu", "release", "expected"),
    [
        # get_preferred_block_size(16): 16 where the backend takes it
        ([LLAMA], "H200", "0.33.0", ("FLASH_ATTN", 16)),
        ([LLAMA, "--attention-backend", "FLASHINFER"], "H200", "0.33.0", ("FLASHINFER", 16)),
        # FLASHINFER_MLA declares [32, 64]: the smallest (the oracle and the engine: block 32)
        ([DEEPSEEK, "-tp", "8"], "8xB200", "0.33.0", ("FLASHINFER_MLA", 32)),
        # a given --block-size is kept (non-hybrid model)
        ([LLAMA, "--block-size", "256", "--attention-backend", "FLASHINFER"], "A100", "0.33.0", ("FLASHINFER", 256)),
        # 0.13 - 0.17: check_and_update_config forces FLASHINFER_MLA to 32 or a multiple of 64, from 16: 64
        ([DEEPSEEK, "-tp", "8"], "8xB200", "0.15.1", ("FLASHINFER_MLA", 64)),
        ([DEEPSEEK, "-tp", "8", "--block-size", "32"], "8xB200", "0.15.1", ("FLASHINFER_MLA", 32)),
        ([LLAMA], "H200", "0.15.1", ("FLASH_ATTN", 16)),
        # 0.18 - 0.19 and 0.10 - 0.12 were not read for this: unknown
        ([LLAMA], "H200", "0.19.0", ("FLASH_ATTN", None)),
        ([LLAMA], "H200", "0.11.0", ("FLASH_ATTN", None)),
    ],
)
def test_the_block_size_vllm_resolves(argv, gpu, release, expected):
    assert _resolved(argv, gpu, release) == expected


def test_eras_cover_what_was_read_and_nothing_else():
    assert block_size.era_of("0.33.0").shape == block_size.era_of("0.20.0").shape == "backend_preferred"
    assert block_size.era_of("0.34.0") is block_size.era_of(None)  # newer: the newest read
    assert block_size.era_of("0.17.1").shape == "mla_forced" and block_size.era_of("0.13.0").shape == "mla_forced"
    assert block_size.era_of("0.18.0") is None and block_size.era_of("0.12.0") is None


def test_flash_attn_prefers_128_where_fa4_runs_its_hd256_kernel(tmp_path):
    # flash_attn.py get_preferred_block_size -> _get_fa4_hd256_block_size: FA4_HD256_PAGE_SIZE on Blackwell (0.33.0)
    import json

    config = json.loads((Path(LLAMA) / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**config, "head_dim": 256}))
    argv = [str(tmp_path), "--attention-backend", "FLASH_ATTN"]
    assert _resolved(argv, "B200", "0.33.0") == ("FLASH_ATTN", 128)
    assert _resolved(argv, "H200", "0.33.0") == ("FLASH_ATTN", 16)  # FA3 on Hopper: the generic 16
    # 0.20.0 runs no FA4 for head size 256 on Blackwell (the FA4 eras of capabilities.py): the generic 16
    assert _resolved(argv, "B200", "0.20.0") == ("FLASH_ATTN", 16)
