"""The size limits of everything the tool reads, in one place (README "Limits"). Each is enforced before the
input is parsed, as one error line and exit 2 naming the limit; below it, the work is linear in the size, and
at it a check takes seconds, not minutes (bench/bench_inputs.py measures each kind at N and 4N;
tests/test_guarantees.py runs each at its limit and one past it).

A real input is far below each: a config.json is a few KB (DeepSeek-V3's, with its quantization lists,
~2 KB), a probe report ~10-100 KB, a launch command a few dozen tokens, an engine's --config YAML a few KB, a
node has at most 16 GPUs NVML can see."""

from __future__ import annotations

MAX_JSON_BYTES = 16 * 1024 * 1024  # config.json, a facts file, a smoke report, the import cache
MAX_JSON_DEPTH = 64  # a probe report nests 6 deep
MAX_GPUS = 1024  # GPUs listed in one facts file (enforced by the facts model, which keeps its own copy)
MAX_YAML_BYTES = 1024 * 1024  # an engine's --config, --dllm-algorithm-config
MAX_YAML_DEPTH = MAX_JSON_DEPTH  # one nesting limit for both formats
MAX_COMMAND_TOKENS = 1024  # tokens of a pasted launch command (after --)
MAX_CONFIG_KEYS = 1024  # keys of a --config YAML (each is a flag the engine reads)
MAX_TOKEN_CHARS = 65536  # one token of it (a path, a JSON argument such as --speculative-config)
MAX_FLEET_REPORTS = 2048  # report files given to one `fleet`
