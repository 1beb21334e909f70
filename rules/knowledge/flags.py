"""Each engine's launch flags per release, and argparse's way of reading an option string against them.

Data: the flags of each release file (attn_preflight.rules.engines.releases), read by bench/flag_tables.py from the
wheel (SGLang's server_args.py and arg_groups, vLLM's engine/arg_utils.py, config dataclasses and cli_args.py). `resolve` is CPython 3.11 argparse `_parse_optional` / `_get_option_tuples`: an exact option,
`--opt=value`, a unique prefix of a long option (both engines leave `allow_abbrev` on, recorded in the data), a
single-dash option with its value attached (`-tp8` is not one, `-q` + `fp8` is); more than one match is argparse's
"ambiguous option" error, none its "unrecognized arguments".
"""

from functools import cache
from typing import Mapping, NamedTuple, Optional, Union

from attn_preflight.rules.core.versions import release_at_or_before
from attn_preflight.rules.engines.releases import index, release

Nargs = Union[int, str]  # 0, 1, '?', '*', '+' or a count, as argparse consumes values


class Option(NamedTuple):
    dest: str
    nargs: Nargs


class Resolved(NamedTuple):
    """What argparse makes of one option token: the option string it matched, and a value attached to the
    token (`--opt=value`, `-qfp8`), if any."""

    option: str
    spec: Option
    attached: Optional[str]


class FlagError(ValueError):
    """An option token the release's argparse refuses: unknown or ambiguous (the message says which)."""


class FlagTable(NamedTuple):
    engine: str
    release: str  # the release whose table this is
    options: Mapping[str, Option]
    allow_abbrev: bool

    def resolve(self, token: str) -> Resolved:
        """The option `token` (it starts with '-') names, as this release's argparse reads it (each token read
        once per table: a check judges the same command for every alternative it tries)."""
        key = (id(self.options), token)
        known = _RESOLVED.get(key)
        if known is None or known[0] is not self.options:
            try:
                known = (self.options, self._resolve(token))
            except FlagError as err:
                known = (self.options, err)
            _RESOLVED[key] = known
        if isinstance(known[1], FlagError):
            raise FlagError(str(known[1]))
        return known[1]

    def _resolve(self, token: str) -> Resolved:
        if token in self.options:
            return Resolved(token, self.options[token], None)
        name, has_value, value = token.partition("=")
        if has_value and name in self.options:
            return Resolved(name, self.options[name], value)
        matches = self._prefix_matches(token)
        if len(matches) > 1:
            raise FlagError(
                f"ambiguous option: {token.partition('=')[0] if token.startswith('--') else token} could match "
                + ", ".join(option for option, _ in matches)
            )
        if matches:
            option, attached = matches[0]
            return Resolved(option, self.options[option], attached)
        raise FlagError(f"unrecognized arguments: {name if token.startswith('--') else token}")  # never a value

    def _prefix_matches(self, token: str) -> list[tuple[str, Optional[str]]]:
        if token.startswith("--"):
            if not self.allow_abbrev:
                return []
            prefix, has_value, value = token.partition("=")
            return [(o, value if has_value else None) for o in _starting_with(self.options, prefix)]
        # one dash: `-x` followed by its value, or a prefix of a single-dash option
        found: list[tuple[str, Optional[str]]] = []
        for option in self.options:
            if option == token[:2]:
                found.append((option, token[2:]))
            elif option.startswith(token):
                found.append((option, None))
        return found


_SORTED: dict[int, tuple[Mapping[str, Option], list[str]]] = {}
_RESOLVED: dict[tuple[int, str], tuple[Mapping[str, Option], Union[Resolved, FlagError]]] = {}


def _starting_with(options: Mapping[str, Option], prefix: str) -> list[str]:
    """The options starting with `prefix`, in the table's order, found by bisection in the sorted names: a
    pasted command of thousands of flags, each checked for every alternative judged, stays linear."""
    import bisect

    held = _SORTED.get(id(options))
    if held is None or held[0] is not options:
        held = _SORTED[id(options)] = (options, sorted(options))
    names = held[1]
    found = set()
    for name in names[bisect.bisect_left(names, prefix) :]:
        if not name.startswith(prefix):
            break
        found.add(name)
    return [option for option in options if option in found] if len(found) > 1 else sorted(found)


def releases(engine: str) -> tuple[str, ...]:
    return tuple(index(engine)["releases"])


def newest(engine: str) -> str:
    return releases(engine)[-1]


def table_release(engine: str, version: Optional[str]) -> Optional[str]:
    """The release whose flag table stands for `version` (attn_preflight.rules.core.versions.release_at_or_before)."""
    return release_at_or_before(releases(engine), version)


@cache
def flag_table(engine: str, version: Optional[str] = None) -> FlagTable:
    """The flags of `version` (one of `releases(engine)`); the newest release's when None."""
    content = release(engine, version or newest(engine))
    options = {option: Option(dest, nargs) for option, (dest, nargs) in content["flags"].items()}
    return FlagTable(engine, content["release"], options, content["allow_abbrev"])


@cache
def any_release(engine: str) -> Mapping[str, Option]:
    """Every option string some release has, as the newest release that has it defines it."""
    older = {option: Option(dest, nargs) for option, (dest, nargs) in index(engine)["older_flags"].items()}
    return dict(sorted({**older, **flag_table(engine).options}.items()))
