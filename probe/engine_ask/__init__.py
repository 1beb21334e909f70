"""Ask the installed engine itself (`check --ask-engine`): the harness, and the child drivers it runs."""
