"""Detector 4: Makefile and justfile targets named test, check, lint, typecheck, build.

Target lines are read as text; make is never run to list them (a Makefile can
run anything while being parsed). What a target runs is read from its recipe, its
prerequisites' recipes and the `$(MAKE) other` lines in them, with the Makefile's
plain variables (`PYTHON ?= python3`) put in; CI's `make all` is resolved the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.discovery.command_lines import (
    SCRIPT_KINDS,
    Recognised,
    candidate_from,
    managed_run,
    masks_failure,
    only_command,
    packages_distribution,
    recognise_line,
    stated_words,
)
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
from assay.substitution import bounded_sub
from assay.verdict import Kind

NAME = "task-runner"

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
JUSTFILES = ("justfile", "Justfile", ".justfile")

#: Target names beyond SCRIPT_KINDS: `check` answers whatever its recipe runs.
_AMBIGUOUS = frozenset({"check", "ci", "verify"})
#: Targets that conventionally build everything; they count when what they run is known.
_DEFAULT_GOALS = frozenset({"all", "default"})

#: Prerequisites and `$(MAKE) x` lines followed from one target.
MAX_TARGETS_FOLLOWED = 30
#: Passes of variable substitution (a variable naming another).
_EXPANSION_PASSES = 3

# `test:`, `test lint: deps`, `test:: x` -- but not `X := 1`, `X ?= 1`, or `%.o: %.c`.
_MAKE_RULE = re.compile(r"^([A-Za-z0-9_./ -]+?)\s*::?(?![=])(.*)$")
# `PY ?= python3`, `export PYTHON := python`, `FLAGS += -q`
_MAKE_VARIABLE = re.compile(
    r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(\?|::?|\+|!)?=\s*(.*)$"
)
_DEFAULT_GOAL = re.compile(r"^\.DEFAULT_GOAL\s*:?=\s*(\S+)")
_REFERENCE = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]")
_MAKE_WORDS = frozenset({"make", "gmake", "$(MAKE)", "${MAKE}"})
#: make options whose value is the next word (`-C dir` and `-f file` change what runs).
_VALUE_OPTIONS = frozenset({"-j", "-l", "-o", "-W", "-I", "--jobs", "--load-average"})
_ELSEWHERE_OPTIONS = ("-C", "-f", "--directory", "--file", "--makefile")
# just: `test:`, `test *ARGS:`, `@test arg='x': build`
_JUST_RECIPE = re.compile(
    r"^@?([A-Za-z0-9_-]+)((?:\s+[*+$]?[A-Za-z0-9_]+(?:=\S+)?)*)\s*:(?!=)(.*)$"
)


@dataclass(frozen=True, slots=True)
class Target:
    """One target, the recipe lines under it and the targets it depends on."""

    name: str
    line: int
    recipe: tuple[str, ...]
    prerequisites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Makefile:
    """What a Makefile says, read as text: its targets, default goal and plain variables."""

    targets: tuple[Target, ...]
    default_goal: str | None = None
    """What `make` with no target builds: `.DEFAULT_GOAL`, else the first target."""
    variables: Mapping[str, str] = field(default_factory=dict)

    def target(self, name: str) -> Target | None:
        return next((t for t in self.targets if t.name == name), None)

    def expand(self, line: str) -> str:
        """`line` with the Makefile's plain variables substituted (others are left as written),
        as far as the result stays within `MAX_FILLED_CHARS`: `V = $(V)$(V)...` of 4 KiB
        filled in to 4 GB in three passes."""
        for _ in range(_EXPANSION_PASSES):
            expanded = bounded_sub(
                _REFERENCE, lambda m: self.variables.get(m.group(1), m.group(0)), line
            )
            if expanded is None or expanded == line:
                break
            line = expanded
        return line


@dataclass(frozen=True, slots=True)
class TargetRuns:
    """The check commands one target runs, with its prerequisites and sub-makes."""

    hits: tuple[Recognised, ...] = ()
    named: tuple[Kind, ...] = ()
    """Kinds of the targets followed whose names say them (a prerequisite called `test`)."""
    lines: tuple[str, ...] = ()
    """Recipe lines followed, as written, for the reason shown with the check."""
    masking: str | None = None
    """A followed recipe line that runs a check and ignores its failure."""
    packaging: str | None = None
    """A followed recipe line that builds or publishes a distribution (`python -m build`)."""
    goals: tuple[str, ...] = ()
    """The targets the make command builds: those it names, else the default goal."""

    @property
    def kinds(self) -> frozenset[Kind]:
        return frozenset({h.kind for h in self.hits} | set(self.named))

    @property
    def kind(self) -> Kind | None:
        """Tests when any are run (the stronger evidence), else the first kind in stage order."""
        kinds = self.kinds
        if not kinds:
            return None
        return Kind.TEST if Kind.TEST in kinds else min(kinds, key=list(Kind).index)


@dataclass(slots=True)
class _Open:
    """A target being read: its recipe grows until the next unindented line."""

    name: str
    line: int
    prerequisites: tuple[str, ...] = ()
    recipe: list[str] = field(default_factory=list)

    def close(self) -> Target:
        return Target(self.name, self.line, tuple(self.recipe), self.prerequisites)


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
    return list(read_makefile(text).targets)


def read_makefile(text: str) -> Makefile:
    """Targets, the default goal and plain variables of a Makefile's text. Pure."""
    targets: list[_Open] = []
    current: list[_Open] = []
    variables: dict[str, str] = {}
    default_goal: str | None = None
    for number, line in logical_lines(text):
        if line.startswith("\t"):
            for target in current:
                target.recipe.append(line.strip())
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        current = []
        goal = _DEFAULT_GOAL.match(line)
        if goal:
            default_goal = goal.group(1)
            continue
        variable = _MAKE_VARIABLE.match(line.strip())
        if variable:
            _assign(variables, variable.group(1), variable.group(2), variable.group(3))
            continue
        match = _MAKE_RULE.match(line)
        if not match or "%" in match.group(1) or "=" in match.group(1):
            continue
        depends, _, inline = match.group(2).partition(";")  # `test: deps ; cmd`
        prerequisites = tuple(
            w for w in depends.split() if w != "|" and "=" not in w and "%" not in w
        )
        for name in match.group(1).split():
            if name.startswith("."):  # .PHONY, .DEFAULT_GOAL
                continue
            target = _Open(name, number, prerequisites)
            if inline.strip():
                target.recipe.append(inline.strip())
            current.append(target)
            targets.append(target)
    closed = tuple(t.close() for t in targets)
    first = closed[0].name if closed else None
    return Makefile(closed, default_goal or first, variables)


def _assign(variables: dict[str, str], name: str, operator: str | None, value: str) -> None:
    value = value.split(" #", 1)[0].strip()
    if operator == "?" and name in variables:
        return
    if operator == "+":
        variables[name] = f"{variables.get(name, '')} {value}".strip()
    elif operator != "!":  # `!=` runs a shell command: its value is unknown
        variables[name] = value


def target_runs(makefile: Makefile, name: str) -> TargetRuns:
    """What `make name` runs that assay recognises: the recipe, the prerequisites (make
    builds them first) and `$(MAKE) other` lines, each target followed once. Pure."""
    hits: list[Recognised] = []
    named: list[Kind] = []
    lines: list[str] = []
    masking: str | None = None
    packaging: str | None = None
    pending = [name]
    seen: set[str] = set()
    while pending and len(seen) < MAX_TARGETS_FOLLOWED:
        target = makefile.target(pending.pop(0))
        if target is None or target.name in seen:
            continue
        seen.add(target.name)
        if target.name != name and target.name in SCRIPT_KINDS:
            named.append(SCRIPT_KINDS[target.name])
        pending += [makefile.expand(p) for p in target.prerequisites]
        for raw in target.recipe:
            line = makefile.expand(raw.lstrip("@-+"))
            sub_makes = _sub_make_targets(line, makefile)
            if sub_makes is not None:
                pending += sub_makes
                continue
            if packaging is None and packages_distribution(line):
                packaging = raw
            found = recognise_line(line, shell=True)
            if found:
                lines.append(raw)
                hits += found
                if masking is None and target.name != name and masks_failure(raw):
                    masking = raw
    return TargetRuns(tuple(hits), tuple(named), tuple(lines), masking, packaging)


def _sub_make_targets(line: str, makefile: Makefile) -> list[str] | None:
    """The targets of this Makefile a recipe line's `$(MAKE) x y` builds; None when the line
    is not such a call."""
    words = only_command(line)
    if not words:
        return None
    invoked = invocation_targets(words, makefile)
    return None if invoked is None else list(invoked)


def invocation_targets(words: list[str], makefile: Makefile) -> tuple[str, ...] | None:
    """The targets a `make [options] [targets]` command builds in this Makefile (the default
    goal when it names none); None when it is not make, or runs another Makefile or
    directory, or names a target this Makefile does not have."""
    words = list(words)
    while words and "=" in words[0] and not words[0].startswith("-"):
        words.pop(0)  # `CI=1 make test`
    if not words or words[0].rsplit("/", 1)[-1] not in _MAKE_WORDS:
        return None
    targets: list[str] = []
    rest = words[1:]
    while rest:
        word = rest.pop(0)
        if word.startswith(_ELSEWHERE_OPTIONS):
            return None
        if word in _VALUE_OPTIONS:
            if rest and (word not in ("-j", "--jobs", "-l") or rest[0].isdigit()):
                rest.pop(0)
            continue
        if word.startswith("-") or "=" in word:
            continue
        targets.append(word)
    if not targets:
        targets = [makefile.default_goal] if makefile.default_goal else []
    if not targets or any(makefile.target(t) is None for t in targets):
        return None
    return tuple(targets)


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


def _managed_run(target: Target, runs: TargetRuns) -> Recognised | None:
    """The one check a target runs, when its every recipe line runs it through an
    environment manager (`uv run --python 3.10 pytest tests/`, once per Python): that
    command, run directly in the project's environment, as tox's commands are; None for
    anything more (a prerequisite, a line assay does not know, two different checks)."""
    if target.prerequisites or not runs.hits or len(runs.lines) != len(target.recipe):
        return None
    through_manager = all(managed_run(hit.argv) for hit in runs.hits)
    checks = {(hit.name, hit.args, hit.env) for hit in runs.hits}
    return runs.hits[0] if through_manager and len(checks) == 1 else None


def target_candidates(
    targets: list[Target],
    path: str,
    runner: str,
    makefile: Makefile | None = None,
    env: ProjectEnv | None = None,
) -> tuple[list[Candidate], list[Dropped]]:
    """A candidate per target whose name (or, for `check` and `all`, whose recipe) says its
    kind; with `env`, a target that only runs one check through an environment manager is
    that check, run directly (`_managed_run`). Pure."""
    makefile = makefile or Makefile(tuple(targets))
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    for target in targets:
        default = target.name in _DEFAULT_GOALS or (
            runner == "make" and target.name == makefile.default_goal
        )
        named = target.name in SCRIPT_KINDS or target.name in _AMBIGUOUS
        runs = target_runs(makefile, target.name)
        if not named and not (default and runs.kind is not None):
            continue  # only `all` and the default goal that run known checks count
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
        if runs.packaging is not None:
            dropped.append(
                Dropped(
                    f"{runner} {target.name}",
                    Source(path, target.line),
                    f"it packages or publishes a release ({runs.packaging.strip()[:80]!r}), "
                    "which is no check of the code (and fetches its build tools from the index)",
                )
            )
            continue
        kind = SCRIPT_KINDS.get(target.name) or runs.kind
        if kind is None or (target.name not in SCRIPT_KINDS and runs.masking is not None):
            dropped.append(_unknown(runner, target, path, runs))
            continue
        direct = _managed_run(target, runs) if env is not None else None
        if direct is not None and env is not None:
            manager = direct.argv[0].rsplit("/", 1)[-1]
            why = (
                f"{path} target {target.name!r} runs {' '.join(stated_words(direct))}: run "
                f"directly in the project's environment ({manager} run would make its own, "
                "with the network)"
            )
            found.append(
                candidate_from(direct, env, Origin.TASK_RUNNER, Source(path, target.line), why)
            )
            continue
        found.append(
            Candidate(
                kind=kind,
                argv=(runner, target.name),
                tool="make" if runner == "make" else "shell",
                ecosystem=Ecosystem.GENERIC,
                origin=Origin.TASK_RUNNER,
                source=Source(path, target.line),
                reason=f"{path} target {target.name!r}" + describe(target, runs),
                cost=0 if target.name in SCRIPT_KINDS else 1,
                runs=frozenset(r.name for r in runs.hits),
                stated=tuple(stated_words(r) for r in runs.hits),
                widens=tuple((runner, name) for name in _test_variants(target, makefile)),
                goals=(target.name,) if runner == "make" else (),
                env=_verbose_go_tests(kind, runs),
            )
        )
    return found, dropped


def _verbose_go_tests(kind: Kind, runs: TargetRuns) -> dict[str, str]:
    """`GOFLAGS=-v` for a test target whose recipe runs `go test`: without -v go prints
    only the tests that failed, and a package that passed as one `ok` line, so pkg/errors'
    `make test` with a changed message read as "11 of 11 tests failed" and lost at the base
    "1 of its 1 passing tests". go applies the flag only to the commands that know it."""
    if kind is Kind.TEST and any(hit.name == "go-test" for hit in runs.hits):
        return {"GOFLAGS": "-v"}
    return {}


def _test_variants(target: Target, makefile: Makefile) -> tuple[str, ...]:
    """The test targets `target` runs together with variants of them: where it has no
    recipe of its own and is two or more targets, each of them named for tests
    (`all: test testcpp test_hash_collisions`), those named as the test target outright
    (`test`); else none."""
    names = [makefile.expand(name) for name in target.prerequisites]
    if target.recipe or len(names) < 2:
        return ()
    if not all(makefile.target(name) is not None and _TEST_NAMED.search(name) for name in names):
        return ()
    return tuple(name for name in names if SCRIPT_KINDS.get(name) is Kind.TEST)


#: A target named for tests: `test`, `testcpp`, `test_hash_collisions`, `unittests`, `check-asan`.
_TEST_NAMED = re.compile(r"test|check", re.IGNORECASE)


def describe(target: Target, runs: TargetRuns) -> str:
    """` runs: ...` for a reason: the target's own recipe, else the recognised lines followed."""
    lines = target.recipe or runs.lines
    return f" runs: {'; '.join(lines)[:200]}" if lines else ""


def _unknown(runner: str, target: Target, path: str, runs: TargetRuns) -> Dropped:
    why = (
        f"a target it builds ignores failures ({runs.masking.strip()[:80]!r})"
        if runs.masking is not None
        else "its recipe runs no command assay recognises, so its kind is unknown"
    )
    return Dropped(f"{runner} {target.name}", Source(path, target.line), why)


def read_root_makefile(files: RepoFiles) -> tuple[str, Makefile] | None:
    """The Makefile make would read at the root (GNUmakefile, makefile, Makefile), parsed;
    None when there is none or it cannot be read (the make detector reports why)."""
    for path in MAKEFILES:
        try:
            text = files.read_text(path)
        except UnreadableFile:
            return None
        if text is not None:
            return path, read_makefile(text)
    return None


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    found: list[Candidate] = []
    dropped: list[Dropped] = []
    errors: list[str] = []
    for names, runner in ((MAKEFILES, "make"), (JUSTFILES, "just")):
        for path in names:
            try:
                text = files.read_text(path)
            except UnreadableFile as exc:
                errors.append(str(exc))
                continue
            if text is None:
                continue
            if runner == "make":
                makefile = read_makefile(text)
                more, more_dropped = target_candidates(
                    list(makefile.targets), path, runner, makefile, env
                )
            else:
                more, more_dropped = target_candidates(parse_justfile(text), path, runner, env=env)
            found += more
            dropped += more_dropped
            break  # make reads the first of GNUmakefile, makefile, Makefile
    return report(NAME, found, dropped=dropped, errors=errors)
