"""The corrected command: the user's own config with the fewest flag changes that settles every finding.

Search (`correct`): breadth first, at most MAX_CHANGES flags changed. The first round tries every move of the
config as given — each flag fix its findings print, each other attention backend, each other KV dtype; a later
round extends each state with the flag fixes of its own findings (a change can surface a new requirement:
trtllm_mha then asks for its page size). A state is settled when nothing fails and no warning is left that a
flag change addresses (warnings about the target or the input — an unknown version, a model not found — do
not count: no flag settles them). Among the settled states of the smallest round: fewest changed flags, a
plain pass before warnings, fewer warnings, what the engine keeps before what it silently replaces, then the
order moves were tried in (the alternatives' ranking: the engine's own choice first).

Each candidate is the config as given with the moves applied through `attn_preflight.rules.core.flag_tables.apply_flags` and judged as
the engine resolves it (the same re-check the fixes get). The command is then written from the pasted tokens
(`rewrite`): a changed flag keeps the user's spelling and position, a flag the user did not give is appended,
a phase-specific backend flag goes when `--attention-backend` replaces it, and an environment variable the
new flag supersedes is dropped. A move can also be an environment assignment (vLLM before 0.13 names its
backend only with VLLM_ATTENTION_BACKEND: attn_preflight.rules.core.engine.backend_option) or `unset NAME`: it goes in the
command's prefix, before the program. Without a pasted command the changes are given as flags (variables first).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from attn_preflight.rules.core.config import ENV_PREFIXES, Config
from attn_preflight.rules.core.engine import Finding, Status, verdict_of
from attn_preflight.rules.core.flag_tables import ENV_ASSIGNMENT, apply_flags, fix_words, flag_table, superseded_env
from attn_preflight.rules.engines.sglang.resolve import resolve

if TYPE_CHECKING:
    from attn_preflight.rules.core.judge import Judge  # annotation only: the judge imports this module

MAX_CHANGES = 3
_STATES_PER_ROUND = 48  # bounds the search; the first round alone is every backend and KV dtype


@dataclass(frozen=True)
class Correction:
    """What `check` prints as the corrected command; `command` is None when no change within MAX_CHANGES settles."""

    changes: tuple[str, ...]  # one per flag changed, e.g. ("--attention-backend flashinfer", "--page-size 128")
    command: Optional[str]  # shell-quoted, ready to copy: the pasted command rewritten, or the flags
    verdict: Optional[Status]  # of the corrected config, re-checked
    pasted: bool  # `command` is the user's pasted command rewritten (else the flags alone)
    reason: str = ""  # when nothing settles: what still fails and why no flag change helps

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "changes": list(self.changes),
            "verdict": self.verdict.value if self.verdict else None,
            "pasted": self.pasted,
            "reason": self.reason or None,
        }


@dataclass(frozen=True)
class _State:
    moves: tuple[str, ...]
    changed: tuple[tuple[str, list[str]], ...]  # (dest, the flag tokens that set it), in order: one per changed flag
    config: Config  # as given, with the moves applied
    resolved: Config  # as the engine resolves it: what is judged (Judge.findings)


def flag_moves(config: Config, findings: Sequence[Finding]) -> list[str]:
    """The flag fixes of the failures and warnings, in finding order: what a state can try next."""
    moves: list[str] = []
    for finding in findings:
        if finding.status in (Status.FAIL, Status.WARN):
            moves.extend(fix for fix in finding.fix if fix not in moves and _flag_tokens(config.engine, fix))
    return moves


def _unsettled(judge: Judge, state: _State) -> int:
    """How many findings keep a state from being settled: failures, and warnings with a flag fix that works
    (the fixes `check` prints: attn_preflight.rules.core.judge.Judge._fix_works). Without failures the fixes are re-checked."""
    findings = judge.findings(state.resolved)
    failures = sum(1 for f in findings if f.status is Status.FAIL)
    if failures:
        return failures + len(_fixable_warnings(state.config.engine, findings))
    return sum(
        1
        for f in _fixable_warnings(state.config.engine, findings)
        if any(judge._fix_works(state.config, f.rule_id, fix, set()) for fix in f.fix)
    )


def _fixable_warnings(engine: str, findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.status is Status.WARN and any(_flag_tokens(engine, x) for x in f.fix)]


def correct(judge: Judge, config: Config, ranked_moves: Sequence[str]) -> Correction:
    """The fewest-change correction of `config` (as given) on the judge's target; `ranked_moves` the
    alternatives as flags in their ranked order. A round's states are judged in full only when none of them
    settles (then the next round grows from their findings)."""

    given: dict[str, bool] = {}  # flags -> whether they set a flag at the value given (no change)

    def no_change(flags: str) -> bool:
        if flags not in given:
            given[flags] = apply_flags(config, flags) == config
        return given[flags]

    def judged(state: _State, move: str) -> Optional[_State]:
        tokens = _flag_tokens(config.engine, move)
        fixed = apply_flags(state.config, move)
        if fixed is None or tokens is None:
            return None
        changed = dict(state.changed)
        for dest, flag_tokens in tokens:
            changed.pop(dest, None)
            if not no_change(shlex.join(flag_tokens)):  # a flag at the value given is no change
                changed[dest] = flag_tokens
        return _State(state.moves + (move,), tuple(changed.items()), fixed, resolve(fixed, judge.target))

    # id(state) -> (the state, kept alive so that its id stays its own; _unsettled): asked to settle, to rank
    # and to pick the closest state
    counts: dict[int, tuple[_State, int]] = {}

    def unsettled(state: _State) -> int:
        if id(state) not in counts:
            counts[id(state)] = (state, _unsettled(judge, state))
        return counts[id(state)][1]

    def settled(state: _State) -> bool:
        """Nothing left to settle; a state with a failure is told apart running its rules up to that failure."""
        return not judge.fails(state.resolved) and not unsettled(state)

    start = _State((), (), config, resolve(config, judge.target))
    seen: set[frozenset[str]] = {frozenset()}
    frontier = [start]
    best: Optional[_State] = None
    closest = start
    tried: dict[str, int] = {}
    for _ in range(MAX_CHANGES):
        grown: list[_State] = []
        for state in frontier:
            moves = flag_moves(state.config, judge.findings(state.resolved))
            if not state.moves:
                moves = list(dict.fromkeys([*moves, *ranked_moves]))
            for move in moves:
                tried.setdefault(move, len(tried))
                if move in state.moves:
                    continue
                key = frozenset((*state.moves, move))
                if key in seen:
                    continue
                seen.add(key)
                candidate = judged(state, move)
                if candidate is None or len(candidate.changed) > MAX_CHANGES:
                    continue
                grown.append(candidate)
        if not grown:
            break
        # a correction says what runs: never one the engine would silently re-route to another backend (fa3 on T4
        # "fixed" by a lossy fp8_e5m2 KV that makes SGLang run triton: write triton instead)
        done = [s for s in grown if settled(s) and not _rerouted(s, start)]
        if done:
            best = min(
                done,
                key=lambda s: (
                    len(s.changed),
                    verdict_of(judge.findings(s.resolved)) is not Status.PASS,
                    sum(f.status in (Status.WARN, Status.UNKNOWN) for f in judge.findings(s.resolved)),
                    any(key.endswith("attention_backend") for key in s.resolved.rewrites),
                    [tried[m] for m in s.moves],
                ),
            )
            break
        grown.sort(key=lambda s: (unsettled(s), len(s.changed), [tried[m] for m in s.moves]))
        closest = min([closest, grown[0]], key=unsettled)
        frontier = grown[:_STATES_PER_ROUND]

    pasted = bool(config.command)
    if best is None:
        return Correction((), None, None, pasted, _why_not(closest, judge.findings(closest.resolved)))
    changed = sorted(best.changed, key=lambda c: not c[0].startswith(ENV_DEST))  # a variable goes before flags
    changes = tuple(shlex.join(tokens) for _, tokens in changed)  # one per flag or variable changed
    if pasted:
        words = rewrite(config.command, config.engine, [t for _, t in changed])
        command = shlex.join(words)
        changes += _dropped(config.command, words, changes)
    else:
        command = " ".join(shlex.join(tokens) for _, tokens in changed)
    return Correction(changes, command, verdict_of(judge.findings(best.resolved)), pasted)


def _dropped(pasted: Sequence[str], corrected: Sequence[str], changes: Sequence[str]) -> tuple[str, ...]:
    """Each option or variable of the pasted command the corrected one leaves out (a phase-specific backend that
    --attention-backend replaces, a VLLM_ATTENTION_BACKEND= the flag supersedes), said as "drop X" so that no flag
    goes silently."""
    kept = {word.split("=", 1)[0] for word in corrected}
    changed = {change.split()[0].split("=", 1)[0] for change in changes}
    dropped = []
    for word in pasted:
        name = word.split("=", 1)[0]
        if (word.startswith("--") or ENV_ASSIGNMENT.match(word)) and name not in kept and name not in changed:
            dropped.append(f"drop {name}")
    return tuple(dict.fromkeys(dropped))


def _rerouted(state: _State, start: _State) -> bool:
    """Whether the engine replaces the backend of `state` silently where it did not replace the pasted one."""
    backend_keys = {key for key in state.resolved.rewrites if key.endswith("attention_backend")}
    return bool(backend_keys - set(start.resolved.rewrites))


def _fix_title(finding: Finding) -> str:
    """The finding's rule's fix title as `explain` shows it (a rule worded from its declaration words it now)."""
    rule = finding.rule
    if getattr(rule, "worded", None):
        return rule.worded().get("fix_title", getattr(rule, "fix_title", ""))  # type: ignore[attr-defined]
    return getattr(rule, "fix_title", "")


def _why_not(closest: _State, findings: Sequence[Finding]) -> str:
    failing = [f for f in findings if f.status is Status.FAIL]
    if not failing:
        return f"no change of at most {MAX_CHANGES} flags settles the warnings a flag change addresses"
    unfixable = [f.rule_id for f in failing if not any(_flag_tokens(closest.config.engine, x) for x in f.fix)]
    tried = f" (closest: {', '.join(closest.moves)})" if closest.moves else ""
    reason = f"no change of at most {MAX_CHANGES} flags passes{tried}: still failing " + ", ".join(
        f.rule_id for f in failing
    )
    # what each needs, in words where its finding has no fix to see ("see the fix" beside an empty fix says nothing)
    bare = [f for f in failing if not f.fix]
    needs = "; ".join(
        (f"{f.rule_id}: " if len(failing) > 1 else "") + (_fix_title(f) or "see its finding") for f in bare
    )
    if unfixable == [f.rule_id for f in failing]:
        reason += ", which need" if len(unfixable) > 1 else ", which needs"
        reason += " more than a flag" + (f" ({needs})" if needs else " (see the fix)")
    elif unfixable:
        reason += f"; {', '.join(unfixable)} need more than a flag" + (f" ({needs})" if needs else " (see their fix)")
    return reason


ENV_DEST = "$"  # the key of a changed environment variable: "$" + its name (flags are keyed by dest)


def _env_name(word: str) -> str:
    """The variable a `NAME=value` word assigns ("" for any other word)."""
    return word.partition("=")[0] if ENV_ASSIGNMENT.match(word) else ""


def _env_change(change: Sequence[str]) -> Optional[tuple[str, list[str]]]:
    """A change of an environment variable as (its name, the words that set it before the program): `NAME=value`,
    or none for `unset NAME` (Config.env holds only what the pasted prefix assigns)."""
    if list(change[:1]) == ["unset"]:
        return change[1], []
    name = _env_name(change[0])
    return (name, [change[0]]) if name else None


def _flag_tokens(engine: str, fix: str) -> Optional[list[tuple[str, list[str]]]]:
    """A fix's flags as (dest, tokens) pairs, e.g. "--page-size 64" -> [("page_size", ["--page-size", "64"])],
    and its leading environment assignments as ("$NAME", ["NAME=value"]); None when the fix is not flags of the
    engine (an install, a download)."""
    split = fix_words(fix)
    if split is None:
        return None
    words = list(split)
    table = flag_table(engine)
    out: list[tuple[str, list[str]]] = []
    i = 0
    if words[:1] == ["unset"] and len(words) == 2 and words[1].startswith(ENV_PREFIXES):
        return [(ENV_DEST + words[1], words)]
    while i < len(words) and _env_name(words[i]):  # environment assignments lead, as in a command
        if not _env_name(words[i]).startswith(ENV_PREFIXES):
            return None
        out.append((ENV_DEST + _env_name(words[i]), [words[i]]))
        i += 1
    while i < len(words):
        flag, has_inline, inline = words[i].partition("=")
        spec = table.get(flag)
        if spec is None or spec[0] == "model":
            return None
        dest, kind = spec
        if kind == "bool" or has_inline:
            out.append((dest, [words[i]]))
            i += 1
        elif i + 1 < len(words):
            out.append((dest, [flag, words[i + 1]]))
            i += 2
        else:
            return None
    return out or None


_PHASE_BACKENDS = ("prefill_attention_backend", "decode_attention_backend")


def rewrite(tokens: Sequence[str], engine: str, changes: Sequence[Sequence[str]]) -> list[str]:
    """`tokens` (a pasted command as split) with each change (the flag tokens that set one flag, or one
    `NAME=value` environment assignment) applied: the user's occurrences of that flag (any spelling, `--flag
    value` or `--flag=value`) take the new value; a flag not given is appended; `--attention-backend` also
    replaces the phase-specific backend flags; an environment prefix the change supersedes is dropped. An
    assignment replaces the user's own of that variable or joins the prefix, and drops the flag it stands for
    (vLLM before 0.13 has no --attention-backend: its argparse refuses it); `unset NAME` drops the user's
    assignment."""
    table = flag_table(engine)
    assigned = dict(filter(None, map(_env_change, changes)))
    unset = {change[1] for change in changes if list(change[:1]) == ["unset"]}
    wanted = {table[change[0].partition("=")[0]][0]: list(change) for change in changes if not _env_change(change)}
    appended = {
        dest: _respelled(new[0].partition("=")[0], False, table[new[0].partition("=")[0]][1], new)
        for dest, new in wanted.items()
    }
    dropped = set(_PHASE_BACKENDS) if "attention_backend" in wanted else set()
    dropped |= {
        dest
        for dest in (*_PHASE_BACKENDS, "attention_backend")
        if superseded_env(engine, dest) in set(assigned) - unset
    }
    env_gone = {superseded_env(engine, dest) for dest in wanted} - {None}
    out: list[str] = []
    placed: set[str] = set()
    words = [t for t in tokens if t.strip()]  # shlex gives a backslash-newline continuation as a lone "\n"
    i, in_prefix = 0, True
    while i < len(words):
        start, token = i, words[i]
        i += 1
        if in_prefix and token == "env":
            out.append(token)
            continue
        if in_prefix and "=" in token and not token.startswith("-"):
            name = token.partition("=")[0]
            if name in assigned:
                out.extend(assigned[name])
                placed.add(ENV_DEST + name)
            elif name not in env_gone:
                out.append(token)
            continue
        if in_prefix:  # the program: the assignments the user did not give go just before it
            out.extend(
                w for name, setting_words in assigned.items() if ENV_DEST + name not in placed for w in setting_words
            )
        in_prefix = False
        flag, has_inline, _ = token.partition("=")
        spec = table.get(flag) if token.startswith("-") else None
        if spec is None:
            out.append(token)
            continue
        dest, kind = spec
        if kind != "bool" and not has_inline and i < len(words):
            i += 1  # its value, kept, replaced or dropped with it
        if dest not in wanted:
            if dest not in dropped:
                out.extend(words[start:i])
            continue
        placed.add(dest)
        out.extend(_respelled(flag, bool(has_inline), kind, wanted[dest]))
    for dest, tokens in appended.items():
        if dest not in placed:
            out.extend(tokens)
    return out


def _respelled(flag: str, inline_style: bool, kind: str, new: Sequence[str]) -> list[str]:
    """The change's tokens with the user's spelling of the flag and `=` style; a boolean turned off is dropped
    (argparse's store_true takes no value: leaving the flag out is how it is off)."""
    value = new[1] if len(new) == 2 else new[0].partition("=")[2]
    if kind == "bool":
        return [] if value.lower() in ("false", "0", "no") else [flag]
    return [f"{flag}={value}"] if inline_style else [flag, value]
