"""Add a release: read its wheel, write rules/engines/<engine>/releases/<version>.json (flags; SGLang's choices)
and, for SGLang, its check-site census beside it with each new or changed site listed as not yet covered.

    python3 bench/new_release.py sglang 0.5.24

The wheel's files are read with HTTP range requests into the user cache ($ATTN_PREFLIGHT_WHEELS or
~/.cache/attn-preflight/wheels; bench/wheel_ranges.py), never installed. Then, for each site not yet covered,
write a capability delta (the file's `capability_deltas`: the backend's facts before this release, with their
source; bench/release_files.py folds them into index.json), a constraint row or a rule with its fixtures, and
record the coverage in the census.
"""

from __future__ import annotations

import argparse
import sys
import time

import check_sites
import flag_tables
import release_changes
import release_files
import sglang_choices
from wheel_ranges import sources


def new_release(engine: str, version: str) -> list[str]:
    patterns = list(flag_tables.MEMBERS[engine])
    if engine == "sglang":
        patterns += [*sglang_choices.MEMBERS, *check_sites.wheel_patterns()]
    root = sources(engine, version, sorted(set(patterns)))
    content = {"engine": engine, "release": version, **flag_tables.release_flags(engine, root)}
    # written by hand (a backend's facts this release changed, as they were before it); kept when a file is regenerated
    known = release_files.path(engine, version).is_file()
    content["capability_deltas"] = release_files.read(engine, version).get("capability_deltas", []) if known else []
    if engine == "sglang":
        content["choices"] = sglang_choices.release_choices(root)
    release_files.write(content)
    if engine == "sglang":
        release_files.write_census(version, check_sites.census(version, root))
    return release_changes.changes(engine, version)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("engine", choices=sorted(flag_tables.MEMBERS))
    parser.add_argument("version")
    args = parser.parse_args()
    start = time.perf_counter()
    print("\n".join(new_release(args.engine, args.version)))
    print(f"{args.engine} {args.version}: written in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
