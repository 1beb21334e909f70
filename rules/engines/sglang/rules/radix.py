"""SGLang's radix-cache eviction and sliding-window pool sizing flags (handle_cache_compatibility)."""

from __future__ import annotations

from typing import Optional

from attn_preflight.rules.core import jsontext
from attn_preflight.rules.core.engine import failed, passed, rule, skipped

KV_HOOK = "sglang: python/sglang/srt/arg_groups/kv_cache_hook.py"


def _tlru_config(cfg) -> Optional[dict]:
    """--radix-eviction-policy-config as SGLang's json.loads reads it; None when it is not a JSON object."""
    text = cfg.flags.get("radix_eviction_policy_config")
    if text is None:
        return {}
    try:
        parsed = jsontext.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


@rule(
    id="kv-radix-tlru-config",
    title="--radix-eviction-policy tlru needs a threshold above next_prompt_estimate in --radix-eviction-policy-config",
    engine="sglang",
    versions="sglang>=0.5.21",
    stage="startup",
    prevents="--radix-eviction-policy tlru requires non-negative 'threshold' and 'next_prompt_estimate' in "
    "--radix-eviction-policy-config, got {threshold} and {next_prompt_estimate}.; --radix-eviction-policy tlru needs "
    "'threshold' greater than 'next_prompt_estimate' in --radix-eviction-policy-config, got {threshold} <= "
    "{next_prompt_estimate}; otherwise no tokens are ever TEL-safe and T-LRU is exactly LRU.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks `--radix-eviction-policy tlru`: `--radix-eviction-policy-config` holds a non-negative
`threshold` greater than its non-negative `next_prompt_estimate` (each 0 when absent, so tlru without a config
is refused).

Tail-optimized LRU evicts first the tokens of a conversation that cannot affect its tail time-to-first-token,
those beyond `threshold` less the next prompt's estimate; with a threshold at or below the estimate no token
qualifies and the policy is plain LRU, so SGLang refuses it at start-up.""",
    fix_title="Pass --radix-eviction-policy-config with a threshold above next_prompt_estimate",
)
def kv_radix_tlru_config(cfg, target):
    if cfg.flags.get("radix_eviction_policy") != "tlru":
        return skipped("applies to --radix-eviction-policy tlru")
    config = _tlru_config(cfg)
    required = "0 <= next_prompt_estimate < threshold"
    fix = ['--radix-eviction-policy-config \'{"threshold": 4096, "next_prompt_estimate": 512}\'']
    if config is None:
        return failed("--radix-eviction-policy-config that is not a JSON object", required, fix)
    threshold, estimate = config.get("threshold", 0), config.get("next_prompt_estimate", 0)
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (threshold, estimate))
    if not numbers:
        return failed(f"threshold {threshold!r} and next_prompt_estimate {estimate!r}", required, fix)
    found = f"tlru with threshold {threshold} and next_prompt_estimate {estimate}"
    if threshold < 0 or estimate < 0 or threshold <= estimate:
        return failed(found, required, fix)
    return passed(found, required)


# The model overrides that replace a given --swa-full-tokens-ratio in 0.5.23: _step3p_overrides sets 1.0 under
# HiCache (overrides.py:331-359); DeepSeek-V4's and Inkling's 0.1 fill an unset ratio only
SWA_RATIO_RESET_ARCHITECTURES = ("Step3p5ForCausalLM", "Step3p7ForConditionalGeneration")


@rule(
    id="kv-swa-ratio-range",
    title="--swa-full-tokens-ratio lies in (0, 1] and --swa-prefix-tails is not negative",
    engine="sglang",
    versions="sglang>=0.5.23",
    stage="startup",
    prevents="--swa-full-tokens-ratio should be in range (0, 1.0].; --swa-prefix-tails should be a non-negative "
    "integer.",
    source=f"{KV_HOOK}, handle_cache_compatibility",
    docs="""Checks `--swa-full-tokens-ratio` (the sliding-window layers' KV tokens per full-attention layer token)
is above 0 and at most 1, as SGLang resolves it (Step3p5 / Step3p7 with HiCache run 1.0 whatever is given), and
that `--swa-prefix-tails` is not negative.

The ratio sizes the sliding-window pool against the full-attention pool, and the tails how many cached
prefix windows it keeps; SGLang refuses a value outside the range at start-up, for every model.""",
    fix_title="Pass --swa-full-tokens-ratio in (0, 1] (0.8 is the default) and a non-negative --swa-prefix-tails",
)
def kv_swa_ratio_range(cfg, target):
    flags = cfg.flags
    ratio, tails = flags.get("swa_full_tokens_ratio"), flags.get("swa_prefix_tails")
    if ratio is None and tails is None:
        return skipped("applies to --swa-full-tokens-ratio or --swa-prefix-tails")
    architecture = cfg.model.architecture if cfg.model else None
    if ratio is not None and architecture in SWA_RATIO_RESET_ARCHITECTURES and flags.get("enable_hierarchical_cache"):
        ratio = 1.0
    refused, fix = [], []
    if ratio is not None and not 0 < ratio <= 1:
        refused.append(f"--swa-full-tokens-ratio {ratio:g}")
        fix.append("--swa-full-tokens-ratio 0.8")
    if tails is not None and tails < 0:
        refused.append(f"--swa-prefix-tails {tails}")
        fix.append("--swa-prefix-tails 0")
    required = "a ratio in (0, 1], prefix tails >= 0"
    if refused:
        return failed(", ".join(refused), required, [" ".join(fix)])
    given = ", ".join(
        f"{flag} {value:g}"
        for flag, value in (("--swa-full-tokens-ratio", ratio), ("--swa-prefix-tails", tails))
        if value is not None
    )
    return passed(given, required)
