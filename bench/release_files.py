"""Write rules/engines/<engine>/releases/<version>.json, one file per release, and the index derived from them.

A release file holds what that release's wheel says (its format: attn_preflight.rules.engines.releases): its launch
flags (bench/flag_tables.py) and the argparse choices of SGLang's attention, KV-cache and speculative flags
(bench/sglang_choices.py). Its check-site census, each site with its coverage (bench/check_sites.py), lies beside it
in <version>.sites.json: no check reads it, and parsing its ~1,000 sites would cost every check ~5 ms. index.json is derived from the release files, never edited: the release
order, which releases have a choice table, and the flags only older releases have (a check reads a pasted command
with the newest table and those, without opening every release file). Written here, read by
attn_preflight.rules.engines.releases.
"""

from __future__ import annotations

import json
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("capability_deltas", "flags", "choices")  # flags and choices: generated from the wheel
# capability_deltas: written by hand, what the backend declarations had before this release. SGLang: one entry per
# backend whose facts changed, {"backend", "facts": their values in the releases before this one (from "since" when
# given), "drop_features": features it did not have before, "source"} (attn_preflight.rules.engines.sglang.capabilities
# folds them). vLLM: one entry per field, {"backend", "field", "value", "since", "seen", "source"}
# (attn_preflight.rules.engines.vllm.changes). A value other code also reads is "@NAME", a shared source "{NAME}".


def folder(engine: str) -> Path:
    return ROOT / "rules" / "engines" / engine / "releases"


def path(engine: str, release: str) -> Path:
    return folder(engine) / f"{release}.json"


def releases(engine: str) -> list[str]:
    """The releases that have a file, oldest first."""
    names = (p.name.removesuffix(".json") for p in folder(engine).glob("*.json"))
    return sorted((name for name in names if name[0].isdigit() and not name.endswith(".sites")), key=Version)


def read(engine: str, release: str) -> dict:
    return json.loads(path(engine, release).read_text(encoding="utf-8"))


def dump(content: dict) -> str:
    """One flag, choice or site a line: a regeneration's diff reads as what changed."""
    lines = ["{"]
    fields = [(key, value) for key, value in content.items() if key not in SECTIONS]
    for key, value in fields:
        lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    body = []
    if "capability_deltas" in content:
        rows = ",\n".join(f"  {_line(delta)}" for delta in content["capability_deltas"])
        body.append(f' "capability_deltas": [\n{rows}\n ]' if rows else ' "capability_deltas": []')
    if "flags" in content:
        body.append(_mapping("flags", content["flags"]))
    if "choices" in content:
        body.append(_mapping("choices", content["choices"]))
    lines.append(",\n".join(body))
    return "\n".join(lines) + "\n}\n"


def _mapping(name: str, entries: dict) -> str:
    rows = ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in entries.items())
    return f' "{name}": {{\n{rows}\n }}'


def write(content: dict) -> Path:
    """Write one release's file (sections kept in a fixed order), then the index."""
    engine, release = content["engine"], content["release"]
    ordered = {k: v for k, v in content.items() if k not in SECTIONS}
    ordered.update((k, content[k]) for k in SECTIONS if k in content)
    target = path(engine, release)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump(ordered), encoding="utf-8")
    write_index(engine)
    return target


def update(engine: str, release: str, **sections) -> Path:
    """Replace some sections of a release's file (a new file when there is none)."""
    content = read(engine, release) if path(engine, release).is_file() else {"engine": engine, "release": release}
    content.update(sections)
    return write(content)


def census_path(release: str) -> Path:
    return folder("sglang") / f"{release}.sites.json"


def read_census(release: str) -> dict | None:
    """The check-site census of an SGLang release, None when it was not taken."""
    where = census_path(release)
    return json.loads(where.read_text(encoding="utf-8")) if where.is_file() else None


def write_census(release: str, census: dict) -> Path:
    """One site a line."""
    rows = ",\n".join(f"  {json.dumps(site, ensure_ascii=False)}" for site in census["sites"])
    head = json.dumps({"release": f"sglang {release}", "audited": census["audited"]}, indent=1)[:-2]
    census_path(release).write_text(f'{head},\n "sites": [\n{rows}\n ]\n}}\n', encoding="utf-8")
    return census_path(release)


def index(engine: str) -> dict:
    """The index the release files imply."""
    names = releases(engine)
    contents = [read(engine, release) for release in names]
    newest = contents[-1]["flags"]
    older: dict[str, list] = {}
    for content in contents:  # oldest first: the newest release that has a flag defines it
        older.update((option, spec) for option, spec in content["flags"].items() if option not in newest)
    with_deltas = [c["release"] for c in contents if c.get("capability_deltas")]
    return {
        "_doc": "Derived from the release files by bench/release_files.py, never edited: the releases oldest "
        "first, those with a choice table, those with capability deltas (gathered in capability_deltas.json), and "
        "each flag only older releases have -> [dest, nargs] as the newest release that has it defines it.",
        "releases": names,
        "with_choices": [content["release"] for content in contents if "choices" in content],
        "with_deltas": with_deltas,
        "older_flags": dict(sorted(older.items())),
    }


def deltas(engine: str) -> dict[str, list]:
    """Each release's capability deltas, newest release first (the order SGLang's eras are folded in), so that a
    check reads them from one file rather than opening every release file, and only when an older release is asked."""
    contents = [read(engine, release) for release in reversed(releases(engine))]
    return {c["release"]: c["capability_deltas"] for c in contents if c.get("capability_deltas")}


def write_index(engine: str) -> None:
    """index.json (one flag a line) and capability_deltas.json (one delta a line), both derived."""
    data = index(engine)
    head = {k: v for k, v in data.items() if k != "older_flags"}
    text = json.dumps(head, indent=1)[:-2] + ",\n" + _mapping("older_flags", data["older_flags"]) + "\n}\n"
    (folder(engine) / "index.json").write_text(text, encoding="utf-8")
    releases_ = ",\n".join(
        f"  {json.dumps(release)}: [\n" + ",\n".join(f"   {_line(delta)}" for delta in entries) + "\n  ]"
        for release, entries in deltas(engine).items()
    )
    doc = json.dumps("Derived from the release files' capability_deltas by bench/release_files.py, never edited.")
    body = (
        f' "_doc": {doc},\n "releases": {{\n{releases_}\n }}\n'
        if releases_
        else f' "_doc": {doc},\n "releases": {{}}\n'
    )
    (folder(engine) / "capability_deltas.json").write_text("{\n" + body + "}\n", encoding="utf-8")


def _line(value) -> str:
    return json.dumps(value, ensure_ascii=False)
