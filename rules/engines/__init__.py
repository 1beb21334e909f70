"""One pack per engine: its capability declarations, its resolution (what the engine itself decides), its
rules, release by release."""
