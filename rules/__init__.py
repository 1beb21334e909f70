"""rules/ judges facts: pure functions over (Config, Target) -> Finding. No I/O while judging, no torch import."""
