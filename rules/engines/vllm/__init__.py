"""vLLM's pack: backend capabilities and validation per release, its legacy selection chains, its rules."""
