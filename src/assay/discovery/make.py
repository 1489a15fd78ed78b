"""Detector 4: Makefile and justfile targets named test, check, lint, typecheck, build.

Target lines are read as text; make is never run to list them (a Makefile can
run anything while being parsed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from assay.discovery.command_lines import SCRIPT_KINDS, masks_failure, recognise_line
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.verdict import Kind

NAME = "task-runner"

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
JUSTFILES = ("justfile", "Justfile", ".justfile")

#: Target names beyond SCRIPT_KINDS: `check` answers whatever its recipe runs.
_AMBIGUOUS = frozenset({"check", "ci", "verify"})

# `test:`, `test lint: deps`, `test:: x` -- but not `X := 1`, `X ?= 1`, or `%.o: %.c`.
_MAKE_RULE = re.compile(r"^([A-Za-z0-9_./ -]+?)\s*::?(?![=])(.*)$")
# just: `test:`, `test *ARGS:`, `@test arg='x': build`
_JUST_RECIPE = re.compile(
    r"^@?([A-Za-z0-9_-]+)((?:\s+[*+$]?[A-Za-z0-9_]+(?:=\S+)?)*)\s*:(?!=)(.*)$"
)


@dataclass(frozen=True, slots=True)
class Target:
    """One target and the recipe lines under it."""

    name: str
    line: int
    recipe: tuple[str, ...]


@dataclass(slots=True)
class _Open:
    """A target being read: its recipe grows until the next unindented line."""

    name: str
    line: int
    recipe: list[str] = field(default_factory=list)

    def close(self) -> Target:
        return Target(self.name, self.line, tuple(self.recipe))


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Lines with backslash continuations joined, each with the number it starts on."""
    joined: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if pending is not None:
            number, line = pending[0], pending[1] + " " + line.lstrip()
        if line.endswith("\\"):
            pending = (number, line[:-1])
            continue
        pending = None
        joined.append((number, line))
    if pending is not None:
        joined.append(pending)
    return joined


def parse_makefile(text: str) -> list[Target]:
    """Explicit targets with their recipes; pattern rules and variables are skipped. Pure."""
    targets: list[_Open] = []
    current: list[_Open] = []
    for number, line in logical_lines(text):
        if line.startswith("\t"):
            for target in current:
                target.recipe.append(line.strip())
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current = []
        match = _MAKE_RULE.match(line)
        if not match or "%" in match.group(1) or "=" in match.group(1):
            continue
        inline = match.group(2).partition(";")[2]  # `test: deps ; cmd` has a one-line recipe
        for name in match.group(1).split():
            if name.startswith("."):  # .PHONY, .DEFAULT_GOAL
                continue
            target = _Open(name, number)
            if inline.strip():
                target.recipe.append(inline.strip())
            current.append(target)
            targets.append(target)
    return [t.close() for t in targets]


def parse_justfile(text: str) -> list[Target]:
    """Recipes of a justfile with their bodies. Pure."""
    targets: list[_Open] = []
    current: _Open | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if line[:1] in (" ", "\t"):
            if current is not None and line.strip():
                current.recipe.append(line.strip())
            continue
        current = None
        if not line.strip() or line.startswith(
            ("#", "set ", "export ", "alias ", "import ", "mod ")
        ):
            continue
        match = _JUST_RECIPE.match(line)
        if match:
            current = _Open(match.group(1), number)
            targets.append(current)
    return [t.close() for t in targets]


def target_candidates(
    targets: list[Target], path: str, runner: str
) -> tuple[list[Candidate], list[Dropped]]:
    """A candidate per target whose name (or, for `check`, whose recipe) says its kind. Pure."""
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for target in targets:
        if target.name in SCRIPT_KINDS or target.name in _AMBIGUOUS:
            masking = next((line for line in target.recipe if masks_failure(line)), None)
            if masking is not None:
                dropped.append(
                    Dropped(
                        f"{runner} {target.name}",
                        Source(path, target.line),
                        f"its recipe ignores failures ({masking.strip()[:80]!r}): "
                        "it would exit 0 whatever the code does",
                    )
                )
                continue
        # `@` silences a recipe line; neither it nor `-` is part of the command.
        hits = [r for line in target.recipe for r in recognise_line(line.lstrip("@-"))]
        kinds = {r.kind for r in hits}
        if target.name in SCRIPT_KINDS:
            kind = SCRIPT_KINDS[target.name]
        elif target.name in _AMBIGUOUS:
            if not kinds:
                dropped.append(
                    Dropped(
                        f"{runner} {target.name}",
                        Source(path, target.line),
                        "its recipe runs no command assay recognises, so its kind is unknown",
                    )
                )
                continue
            # A `check` that runs tests answers the test question; tests are the stronger evidence.
            kind = Kind.TEST if Kind.TEST in kinds else min(kinds, key=list(Kind).index)
        else:
            continue
        cost = 0 if target.name in SCRIPT_KINDS else 1
        found.append(
            Candidate(
                kind=kind,
                argv=(runner, target.name),
                tool="make" if runner == "make" else "shell",
                ecosystem=Ecosystem.GENERIC,
                origin=Origin.TASK_RUNNER,
                source=Source(path, target.line),
                reason=f"{path} target {target.name!r}"
                + (f" runs: {'; '.join(target.recipe)[:200]}" if target.recipe else ""),
                cost=cost,
                runs=frozenset(r.name for r in hits),
            )
        )
    return found, dropped


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    errors: list[str] = []
    for names, parse, runner in (
        (MAKEFILES, parse_makefile, "make"),
        (JUSTFILES, parse_justfile, "just"),
    ):
        for path in names:
            try:
                text = files.read_text(path)
            except UnreadableFile as exc:
                errors.append(str(exc))
                continue
            if text is None:
                continue
            more, more_dropped = target_candidates(parse(text), path, runner)
            found += more
            dropped += more_dropped
            break  # make reads the first of GNUmakefile, makefile, Makefile
    return report(NAME, found, dropped=dropped, errors=errors)
