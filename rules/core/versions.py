"""Release ranges of rules and declarations: "sglang>=0.5.20", "vllm>=0.15.0,<0.20.0".

A range is a distribution name and comparison clauses (>=, <=, >, <, ==, !=) over packaging's Version, read
with pre-releases included (0.5.20rc1 is inside ">=0.5.19"). Written here rather than with
packaging.requirements: parsing a PEP 508 requirement for each of ~130 rules cost `check` a tenth of its
start-up, and rules need no markers, extras or wildcards.
"""

from __future__ import annotations

import operator
import re
from typing import NamedTuple, Optional, Sequence

from packaging.version import InvalidVersion, Version

_RANGE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*?)\s*$")
_CLAUSE = re.compile(r"^(>=|<=|==|!=|>|<)\s*(\S+)$")
_COMPARE = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


_PARSED: dict[str, Version] = {}  # a release string -> its Version: a check reads the same few hundreds of times


def parse_version(text: str) -> Version:
    """`Version(text)`, parsed once per string (InvalidVersion as Version raises it)."""
    parsed = _PARSED.get(text)
    if parsed is None:
        parsed = _PARSED[text] = Version(text)
    return parsed


class InvalidRange(ValueError):
    """A range that is not 'name<op><version>[,<op><version>...]'."""


class VersionRange(NamedTuple):
    package: str  # lower-case distribution name, e.g. "sglang", "flash-attn-4"
    clauses: tuple[tuple[str, Version], ...]

    @staticmethod
    def parse(text: str) -> VersionRange:
        """The range a text states, parsed once per text (as parse_version keeps each Version)."""
        return _parse_range(text)

    def contains(self, version: str | Version) -> bool:
        """Whether `version` is inside; False for a version that cannot be read."""
        try:
            value = version if isinstance(version, Version) else parse_version(version)
        except InvalidVersion:
            return False
        return all(_COMPARE[op](value, bound) for op, bound in self.clauses)


_RANGES: dict[str, VersionRange] = {}  # a range text -> its VersionRange: 279 rules state 58 ranges


def _parse_range(text: str) -> VersionRange:
    parsed = _RANGES.get(text)
    if parsed is not None:
        return parsed
    match = _RANGE.match(text)
    if match is None or not match.group(2):
        raise InvalidRange(f"{text!r} is not 'package<op><version>', e.g. 'sglang>=0.5.20'")
    clauses = []
    for part in match.group(2).split(","):
        clause = _CLAUSE.match(part.strip())
        if clause is None:
            raise InvalidRange(f"{text!r}: {part.strip()!r} is not '<op><version>' (ops: {', '.join(_COMPARE)})")
        try:
            clauses.append((clause.group(1), parse_version(clause.group(2))))
        except InvalidVersion:
            raise InvalidRange(f"{text!r}: {clause.group(2)!r} is not a version") from None
    parsed = _RANGES[text] = VersionRange(match.group(1).lower(), tuple(clauses))
    return parsed


def release_at_or_before(releases: Sequence[str], version: Optional[str]) -> Optional[str]:
    """The release of `releases` (oldest first) whose table stands for `version`: itself, else the newest listed
    release before it (a .postN or an unlisted patch keeps its release's table); None when the version is
    unknown, unreadable or older than every listed release."""
    if not version:
        return None
    try:
        wanted = Version(version)
    except InvalidVersion:
        return None
    earlier = [r for r in releases if Version(r) <= wanted]
    return earlier[-1] if earlier else None


def table_for(releases: Sequence[str], version: Optional[str]) -> tuple[str, str]:
    """(the release whose table judges `version`, how the finding says so: "" when it is the version itself).
    Older than every table: the oldest one; unknown or unreadable: the newest one."""
    release = release_at_or_before(releases, version)
    if release is None and version is not None and _readable(version):
        return releases[0], f" ({version} is older than every table: the oldest)"
    if release is None:
        return releases[-1], " (version unknown: the newest table)"
    return release, "" if release == version else f" (the table for {version})"


def _readable(version: str) -> bool:
    try:
        Version(version)
        return True
    except InvalidVersion:
        return False
