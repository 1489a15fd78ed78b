"""One CI script read for the checks it runs, whichever CI system it came from.

A script is shell text CI would run: each line is recognised as assay recognises any
written command, and a `make` call is read through the root Makefile, so that
`make all` counts when the targets it builds run checks. The commands found are
candidates of the CI origin, with the environment CI gives them.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import shlex
from collections.abc import Mapping
from typing import Any

from assay.discovery.command_lines import (
    SCRIPT_KINDS,
    Recognised,
    candidate_from,
    recognise,
    split_commands,
    stated_words,
    with_patterns,
)
from assay.discovery.make import (
    Makefile,
    TargetRuns,
    invocation_targets,
    logical_lines,
    target_runs,
)
from assay.discovery.model import Candidate, Dropped, Ecosystem, Origin, ProjectEnv, Source

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
    expressions: tuple[str, ...] = ("${{",),
) -> tuple[list[Candidate], list[Dropped]]:
    """Candidates from one CI script (several lines). Pure."""
    raw = text if isinstance(text, CIText) else CIText(text)
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    here: str | None = cwd  # a script's `cd` holds for the lines after it
    for _, line in logical_lines(script):
        line = line.strip()
        if raw.remaining <= 0:
            break
        if not line or line.startswith("#"):
            continue
        pieces, here = _pieces_by_directory(line, here)
        placed = [
            (directory, hit)
            for directory, piece in pieces
            for hit in line_hits(piece, makefile if directory == "." else None)
        ]
        if not placed:
            continue
        raw.remaining -= 1
        source = Source(path, raw.line_of(line))
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
            if runs is not None and runs.masking is not None:
                dropped.append(
                    Dropped(
                        " ".join(hit.argv),
                        source,
                        f"a target it builds ignores failures ({runs.masking.strip()[:80]!r})",
                    )
                )
                continue
            reason = f"{where} runs: {' '.join(hit.argv)}"
            if runs is not None and runs.lines:
                reason += f" (its targets run: {'; '.join(runs.lines)[:200]})"
            candidate = candidate_from(
                hit, env, Origin.CI, source, reason, cwd=directory, extra_env=ci_env
            )
            if runs is not None:
                candidate = dataclasses.replace(
                    candidate,
                    runs=frozenset(h.name for h in runs.hits),
                    stated=tuple(stated_words(h) for h in runs.hits),
                )
            found.append(candidate)
    return found, dropped


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


def line_hits(line: str, makefile: Makefile | None) -> list[tuple[Recognised, TargetRuns | None]]:
    """The checks one shell line runs; a `make` call is read through the Makefile."""
    try:
        commands = split_commands(line)
    except ValueError:
        return []
    hits: list[tuple[Recognised, TargetRuns | None]] = []
    for words in commands:
        made = _make_hit(words, makefile) if makefile is not None else None
        if made is not None:
            hits.append(made)
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
