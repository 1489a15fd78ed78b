"""One CI script read for the checks it runs, whichever CI system it came from.

A script is shell text CI would run: each line is recognised as assay recognises any
written command, and a `make` call is read through the root Makefile, so that
`make all` counts when the targets it builds run checks. A line that runs a script of
the repository (`scripts/check`, `bash ci/test.sh`) is read through that script, as CI
would run it (encode's projects keep every command there). A variable the script sets
to a plain value (`SOURCE_FILES="pkg tests"`) is given its value in the lines after it,
as the shell would. The commands found are candidates of the CI origin, with the
environment CI gives them.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from assay.discovery.command_lines import (
    SCRIPT_KINDS,
    Recognised,
    candidate_from,
    checked_commands,
    masks_failure,
    only_command,
    recognise,
    split_commands,
    stated_words,
    with_patterns,
)
from assay.discovery.hatch_scripts import Scripts, script_commands
from assay.discovery.make import (
    Makefile,
    TargetRuns,
    invocation_targets,
    logical_lines,
    target_runs,
)
from assay.discovery.model import Candidate, Dropped, Ecosystem, Origin, ProjectEnv, Source
from assay.discovery.workflow_actions import GO_VET_STANDS_IN, golangci_stand_in
from assay.substitution import bounded_sub
from assay.tools.node import PACKAGE_MANAGERS, script_called

#: What a CI file's parser returns: candidates, dropped commands, problems with the file.
Parsed = tuple[list[Candidate], list[Dropped], list[str]]


def plain_env(*layers: Any) -> dict[str, str]:
    """Merge env mappings (later wins), keeping literal values; `${{ }}` expressions are CI-only."""
    merged: dict[str, str] = {}
    for layer in layers:
        if not isinstance(layer, Mapping):
            continue
        for name, value in layer.items():
            if not isinstance(name, str) or isinstance(value, (dict, list)) or value is None:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            if "${{" not in text and "$" not in text:
                merged[name] = text
            else:  # CI's value (a matrix's, a secret's) replaces any outer one: not known
                merged.pop(name, None)
    return merged


#: Most check commands read from one CI file; real ones name a few dozen.
MAX_COMMANDS_PER_FILE = 500


class CIText:
    """One CI file's raw text: where a re-joined script line sits in it, and how many more
    commands may be read from it (a file of a million `pytest` lines costs a bounded amount)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.remaining = MAX_COMMANDS_PER_FILE
        self._at = 0  # the last offset found, and its line: counting moves on from there
        self._line = 1

    def line_of(self, line: str) -> int | None:
        """The line `line` starts on: searched from the last one found (scripts come in
        file order), then from the top."""
        fragment = line[:60]
        index = self.text.find(fragment, self._at)
        if index < 0:
            index = self.text.find(fragment)
        if index < 0:
            return None
        if index < self._at:
            self._at, self._line = 0, 1
        self._line += self.text.count("\n", self._at, index)
        self._at = index
        return self._line


def script_candidates(
    script: str,
    path: str,
    text: str | CIText,
    env: ProjectEnv,
    ci_env: dict[str, str],
    cwd: str,
    where: str,
    *,
    makefile: Makefile | None = None,
    scripts: Mapping[str, str] | None = None,
    expressions: tuple[str, ...] = ("${{",),
    arguments: tuple[str, ...] | None = None,
    at: str | None = None,
) -> tuple[list[Candidate], list[Dropped]]:
    """Candidates from one CI script (several lines). Pure. `scripts`: the text of each
    repository script a line may run (`repository_scripts`); `arguments`: the words this
    script was called with, when it is one; `at`: the text its source line is cited by,
    when the script is not written in the file (an action's `uses:`)."""
    raw = text if isinstance(text, CIText) else CIText(text)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    here: str | None = cwd  # a script's `cd` holds for the lines after it
    assigned: dict[str, str] = {}
    known = scripts or {}
    for _, line in logical_lines(script):
        line = line.strip()
        if raw.remaining <= 0:
            break
        if not line or line.startswith("#") or _assigns(line, assigned):
            continue
        # CI's own env: values are the words' too, as its shell would give them.
        written, line = line, _expanded(line, {**ci_env, **assigned}, arguments)
        said = where
        if (stand_in := golangci_stand_in(only_command(line) or [], env)) is not None:
            line, said = stand_in, f"{where} (golangci-lint; {GO_VET_STANDS_IN})"
        called = _called_scripts(line, here, known)
        for script_path, script_args in called:
            rest = {k: v for k, v in known.items() if k != script_path}
            more, more_dropped = script_candidates(
                known[script_path],
                script_path,
                CIText(known[script_path]),
                env,
                ci_env,
                ".",
                f"{where}, through {script_path},",
                makefile=makefile,
                scripts=rest,  # a script that calls itself is read once
                expressions=expressions,
                arguments=script_args,
            )
            if not more and not more_dropped:
                # kleur's CI: `npm run build && ./test/env.sh`, whose checks are shell.
                why = "a script of the repository's in which assay recognises no check"
                more_dropped = [Dropped(script_path, Source(path, raw.line_of(at or written)), why)]
            found += more
            dropped += more_dropped
            raw.remaining -= len(more) + len(more_dropped)
        if called and only_command(line) is not None:
            continue
        pieces, here = _pieces_by_directory(line, here)
        placed = [
            (directory, hit)
            for directory, piece in pieces
            for hit in line_hits(
                piece,
                makefile if directory == "." else None,
                env.package_scripts if directory == "." else None,
                env.hatch_scripts if directory == "." else None,
            )
        ]
        if not placed:
            continue
        raw.remaining -= 1
        source = Source(path, raw.line_of(at or written))
        used = next((e for e in expressions if e in line), None)
        if used is not None:
            dropped.append(
                Dropped(line, source, f"uses a CI expression ({used} ...) assay cannot evaluate")
            )
            continue
        for directory, (hit, runs) in placed:
            if directory is None:
                why = "runs after a `cd` to a directory assay cannot tell"
                dropped.append(Dropped(" ".join(hit.argv), source, why))
                continue
            if (unset := _unresolved(hit.argv, line)) is not None:
                # CI sets it (a Travis env matrix, the runner's own): run as a literal word,
                # `cargo test --features ${FEATURES}` failed on a feature of that name.
                why = f"uses ${unset}, a variable CI sets that assay cannot tell"
                dropped.append(Dropped(" ".join(hit.argv), source, why))
                continue
            if runs is not None and runs.masking is not None:
                dropped.append(
                    Dropped(
                        " ".join(hit.argv),
                        source,
                        f"a target it builds ignores failures ({runs.masking.strip()[:80]!r})",
                    )
                )
                continue
            reason = f"{said} runs: {hit.via or ' '.join(hit.argv)}"
            if hit.via:
                reason += f" (it runs: {' '.join(hit.argv)})"
            if runs is not None and runs.lines:
                reason += f" (it runs: {'; '.join(runs.lines)[:200]})"
            candidate = candidate_from(
                hit, env, Origin.CI, source, reason, cwd=directory, extra_env=ci_env
            )
            if runs is not None:
                candidate = dataclasses.replace(
                    candidate,
                    runs=frozenset(h.name for h in runs.hits),
                    stated=tuple(stated_words(h) for h in runs.hits),
                    goals=runs.goals,
                )
            found.append(candidate)
    return found, dropped


#: Most repository scripts read for one CI configuration, and the largest read.
MAX_SCRIPTS = 20
MAX_SCRIPT_BYTES = 256 * 1024
#: A word that may name a script of the repository a command runs: a relative path with
#: a directory, where a command starts (a line, `run:`, a list item, after `&&`, `;` or
#: `|`), or after a shell that runs it (`bash ci/test.sh`).
_SCRIPT_WORD = re.compile(
    r"(?:^|run:|[-;&|\"'(]|\b(?:ba|da|z)?sh)[ \t]*"
    r"(?P<path>(?:\./)?(?:[\w.-]+/)+[\w.-]+)(?![\w/.-])",
    re.MULTILINE,
)
#: Interpreters a script is run through (`bash scripts/test.sh`).
_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})


def repository_scripts(texts: Iterable[str], read: Callable[[str], str | None]) -> dict[str, str]:
    """The text of each repository script the CI `texts` may run, by its path from the
    root: every word that is a relative path with a directory and names a file `read` can
    read (an untrusted reader: no link out of the tree, bounded size), at most MAX_SCRIPTS."""
    found: dict[str, str] = {}
    for text in texts:
        for word in dict.fromkeys(m["path"] for m in _SCRIPT_WORD.finditer(text)):
            rel = posixpath.normpath(word)
            if rel in found or rel.startswith("../"):
                continue
            if len(found) >= MAX_SCRIPTS:
                return found
            content = read(rel)
            if content is not None and len(content) <= MAX_SCRIPT_BYTES and _is_shell(content):
                found[rel] = content
    return found


def _is_shell(text: str) -> bool:
    """A shell script: a `#!` line naming a shell, or none at all (`sh scripts/x`)."""
    first = text.split("\n", 1)[0]
    if not first.startswith("#!"):
        return not first.startswith(("{", "[", "<"))  # not JSON, TOML or XML data
    return any(shell in first for shell in ("sh", "bash"))


def _called_scripts(
    line: str, cwd: str | None, scripts: Mapping[str, str]
) -> list[tuple[str, tuple[str, ...]]]:
    """(the script's path, its arguments) for each command of `line` that runs a script
    of `scripts`, directly or through a shell; none after a `cd`, nor when the line
    makes a failure pass (`./ci.sh || true`)."""
    if cwd is None or not scripts:
        return []
    try:
        commands = split_commands(line)
    except ValueError:
        return []
    if masks_failure(line) or any(words[0] in _CD for words in commands):
        return []
    called = []
    for words in commands:
        if words[0] in _SHELLS and len(words) > 1 and not words[1].startswith("-"):
            words = words[1:]
        rel = posixpath.normpath(posixpath.join(cwd, words[0]))
        if rel in scripts:
            called.append((rel, tuple(words[1:])))
    return called


#: `NAME=value` (or `export NAME=value`) alone on a line: a shell variable set.
_SETS = re.compile(r"(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)")


def _assigns(line: str, assigned: dict[str, str]) -> bool:
    """Whether `line` only sets a variable (`NAME=a b` runs `b` with NAME set: that is a
    command); a plain value (no expansion of its own) is kept in `assigned`, any other
    unsets what was known."""
    match = _SETS.fullmatch(line)
    if match is None:
        return False
    name = match["name"]
    try:
        words = shlex.split(match["value"])
    except ValueError:
        assigned.pop(name, None)  # an unclosed quote: what it holds is not known
        return True
    if len(words) > 1:
        return False
    assigned.pop(name, None)
    if not any(c in match["value"] for c in "$`\\"):
        assigned[name] = words[0] if words else ""
    return True


def _expanded(line: str, assigned: Mapping[str, str], arguments: tuple[str, ...] | None) -> str:
    """`line` with the variables `assigned` knows given their values, and a called
    script's `$@` its arguments; what single quotes hold is left as written."""
    if "$" not in line:
        return line

    def value(match: re.Match[str]) -> str:
        name = match["braced"] or match["plain"]
        if name in ("@", "*") and arguments is not None:
            return shlex.join(arguments)
        known = assigned.get(name)
        # A value the shell would pass as words only: written into the line, a quote, `;`,
        # `#` or `&&` of it would be syntax, and the command another than CI runs.
        if known is None or not _PLAIN_VALUE.fullmatch(known):
            return match.group(0)
        return known

    def unquoted(piece: str) -> str:
        if arguments is not None:  # `"$@"`: each argument one word, and none without any
            piece = _QUOTED_ARGUMENTS.sub(lambda _: shlex.join(arguments), piece)
        # Within the bound: a long value named many times over is left named (and the
        # command then left out, as one naming what assay cannot tell).
        filled = bounded_sub(_REFERENCE, value, piece)
        return piece if filled is None else filled

    pieces = _SINGLE_QUOTED_SPLIT.split(line)
    return "".join(p if p.startswith("'") else unquoted(p) for p in pieces)


def _unresolved(argv: Iterable[str], line: str) -> str | None:
    """The first variable a command's words still name, where `line` names it outside
    single quotes (there `$NAME` is the word the shell passes too)."""
    unquoted = {
        m["braced"] or m["plain"] for m in _REFERENCE.finditer(_SINGLE_QUOTED.sub("", line))
    }
    for word in argv:
        for match in _REFERENCE.finditer(word):
            if (name := match["braced"] or match["plain"]) in unquoted - {"@", "*"}:
                return name
    return None


_SINGLE_QUOTED = re.compile(r"'[^']*'")
#: A value that means the same written into a command as expanded there: words only.
_PLAIN_VALUE = re.compile(r"[\w@%+=:,./ -]*")
_SINGLE_QUOTED_SPLIT = re.compile(r"('[^']*')")


#: `"$@"` and `"${@}"`: the arguments, each a word of its own.
_QUOTED_ARGUMENTS = re.compile(r'"\$(?:\{@\}|@)"')
#: `$NAME`, `${NAME}`, `$@`, `${@}`, `$*`.
_REFERENCE = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*|[@*])\}|(?P<plain>[A-Za-z_][A-Za-z0-9_]*|[@*]))"
)


def _pieces_by_directory(
    line: str, cwd: str | None
) -> tuple[list[tuple[str | None, str]], str | None]:
    """`line` cut at its `cd` commands, each piece with the directory it runs in (None: one
    assay cannot tell), and the directory the line leaves the script in.

    CI runs a script in one shell, so `cd build` then `make test` is CMake's test target in
    build/, not the root Makefile's. A line without `cd` is kept whole, as written."""
    try:
        commands = split_commands(line)
    except ValueError:
        return [(cwd, line)], cwd
    if not any(words[0] in _CD for words in commands):
        return [(cwd, line)], cwd
    pieces: list[tuple[str | None, str]] = []
    for words in commands:
        if words[0] in _CD:
            cwd = _changed_directory(cwd, words[1:])
        else:
            pieces.append((cwd, shlex.join(words)))
    return pieces, cwd


#: Commands that move the shell to another directory for the commands after them.
_CD = frozenset({"cd", "pushd"})


def _changed_directory(cwd: str | None, args: list[str]) -> str | None:
    """Where `cd ARGS` from `cwd` lands, relative to the root; None when assay cannot tell
    (a variable, `~`, `-`, an absolute path, outside the repository)."""
    if cwd is None or len(args) != 1:
        return None
    target = args[0]
    if not target or target.startswith(("/", "~", "-")) or any(c in target for c in "$`*?[{"):
        return None
    moved = posixpath.normpath(posixpath.join(cwd, target))
    return None if moved == ".." or moved.startswith("../") else moved


def line_hits(
    line: str,
    makefile: Makefile | None,
    package_scripts: Mapping[str, str] | None = None,
    hatch_scripts: Scripts | None = None,
) -> list[tuple[Recognised, TargetRuns | None]]:
    """The checks one shell line runs; a `make` call is read through the Makefile, a
    package script whose name says no kind (`npm run check`) through package.json, and a
    hatch script (`hatch run cov`) as the commands it runs (`assay.discovery.hatch_scripts`)."""
    try:
        commands = checked_commands(line)
    except ValueError:
        return []
    hits: list[tuple[Recognised, TargetRuns | None]] = []
    for words in commands:
        made = _make_hit(words, makefile) if makefile is not None else None
        if made is None and package_scripts:
            made = _package_script_hit(words, package_scripts)
        if made is not None:
            hits.append(made)
            continue
        scripted = script_commands(words, hatch_scripts) if hatch_scripts else None
        if scripted is not None:
            via = shlex.join(words)
            hits += [(dataclasses.replace(h, via=via), None) for h in map(recognise, scripted) if h]
            continue
        hit = recognise(words)
        if hit is not None:
            hits.append((with_patterns(hit, line), None))
    return hits


def _make_hit(words: list[str], makefile: Makefile) -> tuple[Recognised, TargetRuns] | None:
    """`make [targets]` as the check its targets answer, from what their recipes run."""
    targets = invocation_targets(words, makefile)
    if targets is None:
        return None
    runs = [target_runs(makefile, t) for t in targets]
    merged = TargetRuns(
        hits=tuple(h for r in runs for h in r.hits),
        named=tuple(SCRIPT_KINDS[t] for t in targets if t in SCRIPT_KINDS)
        + tuple(k for r in runs for k in r.named),
        lines=tuple(line for r in runs for line in r.lines),
        masking=next((r.masking for r in runs if r.masking is not None), None),
        goals=targets,
    )
    kind = merged.kind
    if kind is None:
        return None
    # Leading `NAME=value` words are the command's environment; later ones are make's own.
    at = next((i for i, w in enumerate(words) if not _ASSIGNMENT.match(w)), len(words))
    env = tuple((w.partition("=")[0], w.partition("=")[2]) for w in words[:at])
    argv = tuple(words[at:])
    return Recognised(kind, "make", Ecosystem.GENERIC, argv[1:], argv, env, name="make"), merged


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

#: The most scripts one package script is followed through (it and those it runs).
MAX_SCRIPT_DEPTH = 8


def _package_script_hit(
    words: list[str], scripts: Mapping[str, str]
) -> tuple[Recognised, TargetRuns] | None:
    """`npm run check` as the check its package.json body answers, read through the
    scripts it runs in turn: commander.js's CI runs `npm run check` (tsc, eslint, prettier
    --check), a name that says no kind, and its lint went unrun. A script whose name says
    its kind (`npm run lint`) is recognised by that name, as package.json's own are."""
    name = _script_of(words)
    if name is None or name not in scripts or name in SCRIPT_KINDS or name.startswith("test"):
        return None
    hits: list[Recognised] = []
    lines: list[str] = []
    masking = _follow_script(name, scripts, hits, lines, set())
    runs = TargetRuns(hits=tuple(hits), lines=tuple(lines), masking=masking)
    kind = runs.kind
    if kind is None:
        return None
    argv = tuple(words)
    return Recognised(kind, "npm-test", Ecosystem.NODE, argv[1:], argv, (), name="npm-test"), runs


def _script_of(words: list[str]) -> str | None:
    """The package script a command runs (`npm run check`, `pnpm lint`), or None."""
    if not words or posixpath.basename(words[0]) not in PACKAGE_MANAGERS:
        return None
    return script_called(words[1:])


def _follow_script(
    name: str, scripts: Mapping[str, str], hits: list[Recognised], lines: list[str], seen: set[str]
) -> str | None:
    """Add what script `name` runs to `hits` and its body to `lines`, following the
    scripts it runs; the first body that ignores a failure, if any."""
    if name in seen or len(seen) >= MAX_SCRIPT_DEPTH:
        return None
    seen.add(name)
    body = scripts[name]
    lines.append(f"{name}: {body}")
    masking = body if masks_failure(body) else None
    try:
        commands = split_commands(body)
    except ValueError:
        return masking
    for words in commands:
        called = _script_of(words)
        if called is not None and called in scripts:
            masking = masking or _follow_script(called, scripts, hits, lines, seen)
            continue
        hit = recognise(words)
        if hit is not None:
            hits.append(hit)
    return masking
