"""Regenerates rules/engines/vllm/backend_enum.json: the members of vLLM's attention-backend enum in each
release, read with `ast` from the released wheels (never imported): vllm/platforms/interface.py `_Backend`
(0.10.x-0.11.0), vllm/attention/backends/registry.py (0.11.1-0.13.x), vllm/v1/attention/backends/registry.py
`AttentionBackendEnum` (0.14.0 on).

    python bench/vllm_backend_enum.py WHEELS_DIR   # WHEELS_DIR/<version>/vllm/... (wheels unzipped)
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

CANDIDATES = (
    "vllm/v1/attention/backends/registry.py",
    "vllm/attention/backends/registry.py",
    "vllm/platforms/interface.py",
)
OUT = Path(__file__).resolve().parent.parent / "rules" / "knowledge" / "vllm_backend_enum.json"


def members(path: Path) -> list[str] | None:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ClassDef) and node.name in ("_Backend", "AttentionBackendEnum"):
            return sorted(
                target.id
                for statement in node.body
                if isinstance(statement, ast.Assign)
                for target in statement.targets
                if isinstance(target, ast.Name) and target.id.isupper()
            )
    return None


def main(wheels: Path) -> None:
    releases = {}
    for release in sorted((d.name for d in wheels.iterdir()), key=lambda v: tuple(int(p) for p in v.split("."))):
        for candidate in CANDIDATES:
            path = wheels / release / candidate
            if path.exists() and (found := members(path)) is not None:
                releases[release] = {"file": candidate, "members": found}
                break
        else:
            raise SystemExit(f"vllm {release}: no backend enum in {', '.join(CANDIDATES)}")
    document = {
        "_comment": "vLLM's attention-backend enum members per release, from the wheels (bench/vllm_backend_enum.py)",
        "releases": releases,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"{len(releases)} releases -> {OUT}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
