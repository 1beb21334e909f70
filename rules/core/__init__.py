"""The rule machinery: outcomes and the registry, the judge, fix re-checks and the corrected command, Config
and launch-line parsing, Target, version ranges."""
