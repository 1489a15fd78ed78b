"""Planning: from everything discovered, the smallest ordered set of checks that covers it.

`plan(discovery)` is pure: it reads no file and runs nothing. `plan_repository(root)`
discovers first, and discovery reads the repository's files (`assay.discovery.files`).

Rules, in order:

- assay's own configuration names the command for a kind: that command, nothing else;
- otherwise the best candidate for a kind by source priority, then cost; when it
  belongs to an ecosystem (not a generic wrapper like `make test`), the best of
  each other ecosystem too, so a polyglot repository has its Python and its
  TypeScript both checked -- still at most one command per kind per ecosystem;
- a chosen check another chosen check already covers is dropped (a `build`
  script that is just `tsc` when `tsc --noEmit` is planned; `go build` when
  `go vet` compiles everything anyway; a build a `pretest` hook runs);
- a command assay composed from a tool's configuration (`ruff check .` for `[tool.ruff]`)
  gives way to the one the project states for that tool, best source first (a Makefile
  recipe's `ruff check pkg tests`): the maintainers' scope is the one that must pass;
- CI steps running the same tool confirm a check and lend it their environment;
- stages: build, then every other check (typecheck, lint and test) side by side; a
  failed build skips the rest (`Stage`).

Every candidate not chosen is kept in `Plan.dropped` with the reason.
"""

from __future__ import annotations

import enum
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from assay.discovery import Candidate, Discovery, Dropped, Ecosystem, Origin, ProjectEnv, discover
from assay.discovery.command_lines import project_argv, recognise
from assay.discovery.python_envs import IN_PLACE_BUILD_TOOL
from assay.evidence import DEFAULT_PRINTING_DEADLINE_S, DEFAULT_TIMEOUT_S, Check
from assay.go_packages import covers, go_package_patterns, patterns_name
from assay.gopath_layout import in_gopath_mode
from assay.option_values import first_value, option_values
from assay.rust_check_cfg import allowing_undeclared_cfgs, undeclared_cfgs_note
from assay.tools import TOOLS, tool_spec
from assay.tools.python_requirements import PRE_COMMIT_CONFIG
from assay.verdict import Kind

#: Version of the plan JSON document.
PLAN_SCHEMA = "assay.plan/2"
"""2: one `check` stage (typecheck, lint and test together) where 1 had `static` and `test`."""


#: Tools that only wrap other commands; their output is read generically.
GENERIC_TOOLS = frozenset(name for name, spec in TOOLS.items() if spec.wrapper)


class Stage(enum.StrEnum):
    """When a check runs: `verify` runs the stages in this order, each once the one before
    has ended, and skips every later stage once a check has failed; the checks of one
    stage run side by side."""

    BUILD = "build"
    """Builds whose output later checks read."""
    CHECK = "check"
    """Everything else: type checks, linters and tests do not depend on each other."""
    LAST = "last"
    """Builds the project's CI runs after its other checks, or never: what they write (a
    bundle at the root, `dist/`) is no input to those checks, and a linter must not see it."""


STAGE_OF_KIND: dict[Kind, Stage] = {
    Kind.BUILD: Stage.BUILD,
    Kind.TYPECHECK: Stage.CHECK,
    Kind.LINT: Stage.CHECK,
    Kind.TEST: Stage.CHECK,
}

#: Build checks whose output nothing later reads: byte-compiling into a scratch prefix is a
#: syntax check, so it runs beside the other checks instead of before them.
CHECK_ONLY_BUILDS = frozenset(name for name, spec in TOOLS.items() if spec.check_only_build)

_KIND_ORDER = (Kind.BUILD, Kind.TYPECHECK, Kind.LINT, Kind.TEST)


def stage_of(check: Check) -> Stage:
    """The stage `check` runs in: its kind's, except for builds that produce nothing."""
    if check.kind is Kind.BUILD and check.tool in CHECK_ONLY_BUILDS:
        return Stage.CHECK
    return STAGE_OF_KIND[check.kind]


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """What the caller asks of a plan (usually from the command line)."""

    timeout_s: float | None = None
    """Per-check deadline; overrides the configuration. None: configured, else 60 s."""
    fail_fast: bool = True
    """Stop a test run at its first failure (`pytest -x`): the first failure is the evidence."""
    kinds: frozenset[Kind] | None = None
    """Only these kinds; None for all."""
    require_tests: bool | None = None
    """Overrides the configuration's `require_tests`; None: configured, else True."""


@dataclass(frozen=True, slots=True)
class PlanStage:
    """One stage of the plan and its checks, which may run in parallel."""

    stage: Stage
    checks: tuple[Check, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """The checks to run, in order, with where each came from and what was left out."""

    root: str
    checks: tuple[Check, ...]
    """Ordered by stage, then kind: build, then typecheck, lint and test."""
    require_tests: bool = True
    """VERIFIED needs a test check that executed tests."""
    required: frozenset[Kind] = frozenset()
    missing: frozenset[Kind] = frozenset()
    """Required kinds nothing was found for."""
    dropped: tuple[Dropped, ...] = ()
    errors: tuple[str, ...] = ()
    """Sources that exist but could not be read or parsed."""
    unplanned: tuple[str, ...] = ()
    """Checks the project runs that the tree judged kept from being planned
    (`DetectorReport.unplanned`): the verdict is never VERIFIED with any."""
    notes: tuple[str, ...] = ()
    env: ProjectEnv | None = None
    detectors: tuple[tuple[str, str], ...] = ()
    """(detector, outcome) for every detector, in priority order."""
    config_error: str | None = None
    """assay's configuration is malformed: a usage error; nothing should run."""
    root_problem: str | None = None
    """The path cannot be examined at all."""
    last: frozenset[str] = frozenset()
    """The builds that run after every other check (`Stage.LAST`), by name."""

    @property
    def runnable(self) -> bool:
        """False when the plan must not be run (configuration error, bad path)."""
        return self.config_error is None and self.root_problem is None

    @property
    def stages(self) -> tuple[PlanStage, ...]:
        """Non-empty stages in run order."""
        return tuple(
            PlanStage(stage, checks)
            for stage in Stage
            if (checks := tuple(c for c in self.checks if self.stage_of(c) is stage))
        )

    def stage_of(self, check: Check) -> Stage:
        return Stage.LAST if check.name in self.last else stage_of(check)

    @property
    def empty_note(self) -> str:
        """Why nothing can run, for a report with no checks (`aggregate(..., empty_note=)`)."""
        if self.root_problem:
            return self.root_problem
        if self.config_error:
            return f"assay configuration error: {self.config_error}"
        where = ", ".join(name for name, _ in self.detectors) or "nothing"
        errors = f"; unreadable sources: {'; '.join(self.errors)}" if self.errors else ""
        return (
            "no build, typecheck, lint or test command was found "
            f"(looked at: {where}){errors}; add [tool.assay.commands] to say what to run"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": PLAN_SCHEMA,
            "root": self.root,
            "runnable": self.runnable,
            "config_error": self.config_error,
            "root_problem": self.root_problem,
            "require_tests": self.require_tests,
            "required": sorted(k.value for k in self.required),
            "missing": sorted(k.value for k in self.missing),
            "checks": [{**c.to_dict(), "stage": self.stage_of(c).value} for c in self.checks],
            "stages": [
                {
                    "stage": s.stage.value,
                    "parallel": len(s.checks) > 1,
                    "checks": [c.name for c in s.checks],
                }
                for s in self.stages
            ],
            "environment": self.env.to_dict() if self.env else None,
            "detectors": [{"detector": d, "outcome": o} for d, o in self.detectors],
            "dropped": [d.to_dict() for d in self.dropped],
            "errors": list(self.errors),
            "unplanned": list(self.unplanned),
            "notes": list(self.notes),
        }


def plan(discovery: Discovery, options: PlanOptions | None = None) -> Plan:
    """Choose, tune and order the checks for one discovered repository."""
    options = options or PlanOptions()
    config = discovery.config
    detectors = tuple((r.detector, r.outcome.value) for r in discovery.reports)
    require_tests = _first_set(
        options.require_tests, config.require_tests if config else None, True
    )
    base = Plan(
        root=discovery.root,
        checks=(),
        require_tests=require_tests,
        env=discovery.env,
        detectors=detectors,
        errors=discovery.errors,
        unplanned=discovery.unplanned,
        config_error=discovery.config_error,
        root_problem=discovery.root_problem,
    )
    if not base.runnable:
        return base
    candidates, unrunnable = _runnable(discovery.candidates)
    dropped: list[Dropped] = [d for r in discovery.reports for d in r.dropped] + unrunnable
    notes: list[str] = [n for r in discovery.reports for n in r.notes] + list(discovery.env.notes)
    wanted = _wanted_kinds(options, config.skip if config else frozenset())
    chosen: list[Candidate] = []
    for kind in _KIND_ORDER:
        of_kind = [c for c in candidates if c.kind is kind]
        if kind not in wanted:
            dropped += [
                Dropped(c.command, c.source, f"{kind.value} checks not requested") for c in of_kind
            ]
            continue
        of_kind, elsewhere = _in_the_tree(of_kind, discovery.root)
        of_kind, unconfigured = _configured(of_kind, discovery.root)
        elsewhere += unconfigured
        of_kind, cross = _for_this_target(of_kind)
        picked, left_out = choose(of_kind)
        if kind is Kind.TEST:
            picked, left_out = _with_uncovered_pytest(picked, left_out, of_kind, discovery.root)
        chosen += picked
        dropped += elsewhere + cross + left_out
    chosen, unstated = _drop_unstated_lints(chosen, candidates)
    dropped += unstated
    if options.kinds is None or Kind.TYPECHECK not in options.kinds:
        chosen, ungated = _drop_ungated_type_checkers(chosen, candidates, discovery.root)
        dropped += ungated
    chosen, covered = _drop_covered(chosen)
    dropped += covered
    chosen = [
        _confirm_with_ci(_as_stated(c, candidates, discovery.env), candidates) for c in chosen
    ]
    chosen = [_with_patterns_expanded(c, discovery.root) for c in chosen]
    configured_timeout = config.timeout_s if config else None
    checks = _named([_to_check(c, options, configured_timeout, discovery.env) for c in chosen])
    after = {
        (c.kind, str(c.source)) for c in _built_after_the_rest(chosen, candidates, discovery.root)
    }
    last = frozenset(c.name for c in checks if (c.kind, c.source) in after)
    checks = tuple(_screened(c, discovery.root, notes) for c in checks)
    allowed = tuple(allowing_undeclared_cfgs(c, discovery.root) for c in checks)
    if changed := [new.name for new, old in zip(allowed, checks, strict=True) if new is not old]:
        notes.append(undeclared_cfgs_note(changed))
    checks = tuple(in_gopath_mode(c, discovery.root) for c in allowed)
    checks = tuple(_with_present_mypy_files(c, discovery.root) for c in checks)
    checks = tuple(_without_coverage_addopts(c, discovery.root) for c in checks)
    checks = tuple(_as_script_runner(c, discovery.root) for c in checks)
    planned_kinds = {c.kind for c in checks}
    required = config.required if config else frozenset()
    missing = required - planned_kinds
    for kind in sorted(missing, key=_KIND_ORDER.index):
        notes.append(
            f'required {kind.value} check has no command: add `{kind.value} = "..."` '
            "under [tool.assay.commands]"
        )
    if require_tests and Kind.TEST not in planned_kinds and checks:
        notes.append(
            "no test command was found, and tests are required: the result cannot be "
            "VERIFIED (set require_tests = false in [tool.assay] if that is intended)"
        )
    return replace(
        base,
        checks=checks,
        required=required,
        missing=missing,
        dropped=tuple(dropped),
        notes=tuple(notes),
        last=last,
    )


def _runnable(candidates: Iterable[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
    """The candidates a process could be started with, and why the others could not: a
    word or a variable holding a NUL byte (a YAML `"\\0"` in a CI step) can be in no argv
    or environment."""
    kept, dropped = [], []
    for candidate in candidates:
        words = (*candidate.argv, *candidate.env, *candidate.env.values(), candidate.cwd)
        if any("\0" in word for word in words):
            why = "a word of the command or of its variables holds a NUL byte"
            dropped.append(Dropped(candidate.command.replace("\0", "\\0"), candidate.source, why))
        else:
            kept.append(candidate)
    return kept, dropped


def plan_repository(root: str | os.PathLike[str], options: PlanOptions | None = None) -> Plan:
    """Discover and plan in one call (what `assay plan PATH` shows)."""
    return plan(discover(root), options)


def choose(candidates: list[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
    """At most one candidate per ecosystem for one kind, and why the others were left out."""
    ranked = sorted(
        candidates, key=lambda c: (c.origin, _only_formats(c), c.cost)
    )  # stable: discovery order breaks ties
    if not ranked:
        return [], []
    wider = _widened_in_ci(ranked[0], ranked)
    if wider is not None:
        ranked = [_widening(wider, ranked[0]), *(c for c in ranked if c is not wider)]
    winner = ranked[0]
    if winner.origin is Origin.ASSAY_CONFIG:
        why = "assay configuration names this kind's command"
        return [winner], [Dropped(c.command, c.source, why) for c in ranked[1:]]
    if winner.ecosystem is Ecosystem.GENERIC:
        return [winner], [_outranked(c, winner) for c in ranked[1:]]
    best: dict[Ecosystem, Candidate] = {}
    for candidate in ranked:
        best.setdefault(candidate.ecosystem, candidate)
    variants = {ecosystem: {_variant(c)} for ecosystem, c in best.items()}
    picked: list[Candidate] = []
    left_out: list[Dropped] = []
    for candidate in ranked:
        ours = best.get(candidate.ecosystem)
        if candidate.ecosystem is Ecosystem.GENERIC:  # the winner is not generic: it covers this
            left_out.append(_outranked(candidate, winner))
        elif ours is candidate:
            picked.append(candidate)
        elif candidate.kind is Kind.BUILD and candidate.tool == IN_PLACE_BUILD_TOOL:
            picked.append(candidate)  # what the tests import: no other build stands for it
        elif ours is not None and _another_build(candidate, ours, variants[candidate.ecosystem]):
            variant = _variant(candidate)
            variants[candidate.ecosystem].add(variant)
            name = f"{candidate.check_name}-{_short(variant) or 'default'}"
            picked.append(replace(candidate, name=name))
        elif ours is not None and _other_go_packages(candidate, ours, picked):
            packages = patterns_name(go_package_patterns(candidate.argv))
            suffix = "-".join(part for part in (_variant(candidate), packages) if part)
            picked.append(replace(candidate, name=f"{candidate.check_name}-{_short(suffix)}"))
        elif ours is not None and _also_formats(candidate, ours, picked):
            if candidate.check_name == ours.check_name:  # `ruff format --check`, `ruff check`
                words = _tool_words(candidate.argv)
                runner = os.path.basename(words[0]) if words else "lint"
                candidate = replace(candidate, name=f"{runner}-format")
            picked.append(candidate)
        elif _another_hook(candidate, picked):
            picked.append(candidate)
        else:
            left_out.append(_outranked(candidate, best[candidate.ecosystem]))
    return picked, left_out


def _another_hook(candidate: Candidate, picked: list[Candidate]) -> bool:
    """Whether `candidate` is a pre-commit hook of a tool no picked check runs (by its
    check's name: a hook's tool is `shell` to the planner). CI runs every hook, so each is
    a gate of its own: a change isort rejects fails it though black passes (black beside
    isort, the commonest pair, ran black alone)."""
    return candidate.source.file == PRE_COMMIT_CONFIG and all(
        p.check_name != candidate.check_name for p in picked
    )


def _with_uncovered_pytest(
    picked: list[Candidate], left_out: list[Dropped], candidates: list[Candidate], root: str
) -> tuple[list[Candidate], list[Dropped]]:
    """The test checks chosen, with each pytest command the project states that collects
    doctests none of them does (`pytest_reach`): in place of the ones it covers whole,
    else beside them (toolz's CI `pytest --doctest-modules toolz/` in place of its tox's
    bare `py.test`, whose run left the doctests out). One whose paths beyond theirs hold
    tests stays left out: a CI job may give those services assay does not (a database
    for `tests/integration`)."""
    from assay.discovery.files import RepoFiles
    from assay.discovery.pytest_reach import Reach, holds_tests, pytest_reach

    if not any(c.tool == "pytest" for c in picked) or any(
        c.origin is Origin.ASSAY_CONFIG for c in picked
    ):
        return picked, left_out  # assay's configuration names the one command to run
    files = RepoFiles(root)

    def reach(candidate: Candidate) -> Reach:
        return pytest_reach(candidate.argv, candidate.cwd, files)

    kept = list(picked)
    for candidate in candidates:
        if candidate in kept or candidate.tool != "pytest" or not candidate.stated:
            continue  # only a command the project states says what its gate collects
        ours = [c for c in kept if c.tool == "pytest" and c.ecosystem is candidate.ecosystem]
        theirs = reach(candidate)
        reached = [reach(c) for c in ours]
        if not ours or any(r.covers(theirs) for r in reached):
            continue
        if not theirs.collects_doctests:
            continue
        if any(holds_tests(files, path) for path in theirs.beyond(reached)):
            continue  # tests of other directories, not only doctests
        if all(theirs.covers(r) for r in reached):
            at = kept.index(ours[0])
            kept = [c for c in kept if c not in ours]
            kept.insert(at, replace(candidate, name=ours[0].name))
            why = (
                f"{' '.join(candidate.argv)} from {candidate.source} collects all it does, and more"
            )
            left_out += [Dropped(c.command, c.source, why) for c in ours]
        else:
            kept.append(replace(candidate, name=f"pytest-{theirs.name}"))
        left_out = [
            d for d in left_out if (d.what, d.source) != (candidate.command, candidate.source)
        ]
    return kept, left_out


def _another_build(candidate: Candidate, chosen: Candidate, seen: set[str]) -> bool:
    """Whether the project runs `candidate` to build or test other code than the checks
    chosen for its kind (`seen`: their variants): the same tool with other build tags or
    features compiles other files (xxhash's CI tests again with `-tags purego`, whose
    files the default build leaves out: a bug there fails CI and nothing assay ran). A
    command only a manifest implies is no variant the project runs."""
    if candidate.kind is Kind.TYPECHECK and not (candidate.stated and chosen.stated):
        return False  # a configuration's own mypy run is no other code the project checks
    # Go's linters too: `go vet` in another module, or with other tags, vets other code.
    kinds = (Kind.BUILD, Kind.TEST, Kind.TYPECHECK, *((Kind.LINT,) if chosen.tool == "go" else ()))
    return (
        candidate.kind in kinds
        and candidate.origin < Origin.MANIFEST
        and candidate.tool == chosen.tool
        and _variant(candidate) not in seen
    )


def _other_go_packages(candidate: Candidate, chosen: Candidate, picked: list[Candidate]) -> bool:
    """Whether the project runs `candidate` on Go packages no picked run of its build
    variant reaches: gomarkdown's CI runs `go test -v . && go test -v ./ast && ...`, and a
    change only `./ast`'s tests catch failed CI and was VERIFIED by `go test -v .` alone."""
    if not (
        candidate.tool == chosen.tool == "go"
        and candidate.origin < Origin.MANIFEST
        and candidate.kind in (Kind.BUILD, Kind.TEST, Kind.LINT)
    ):
        return False
    variant = _variant(candidate)
    reached = [
        pattern
        for run in picked
        if run.tool == "go" and _variant(run) == variant
        for pattern in go_package_patterns(run.argv)
    ]
    return not covers(reached, go_package_patterns(candidate.argv))


def _also_formats(candidate: Candidate, chosen: Candidate, picked: list[Candidate]) -> bool:
    """Whether `candidate` is the formatter's check the project runs beside the linter
    chosen for its kind: a change its linter passes and its formatter rejects fails its CI
    (`npm run format:check` beside `npm run lint`). One per ecosystem, and only one the
    project states: where it lints through its configuration alone, nothing says whose
    formatter, or which release, its code is kept to."""
    return (
        candidate.kind is Kind.LINT
        and candidate.origin < Origin.MANIFEST
        and _only_formats(candidate)
        and not _only_formats(chosen)
        and not any(
            p.ecosystem is candidate.ecosystem and p.kind is Kind.LINT and _only_formats(p)
            for p in picked
        )
    )


#: The options with which Go and cargo choose what code a build compiles.
_GO_TAGS = ("-tags", "--tags")
_CARGO_FEATURES = ("--features", "-F")
_CARGO_SWITCHES = ("--no-default-features", "--all-features")


#: mypy's options that take the next word as their value and name no code to check.
_MYPY_VALUED = frozenset(
    {
        "--config-file",
        "--python-version",
        "--platform",
        "--cache-dir",
        "--exclude",
        "--junit-xml",
        "--custom-typeshed-dir",
        "--python-executable",
        "--always-true",
        "--always-false",
        "--enable-error-code",
        "--disable-error-code",
        "--shadow-file",
    }
)


def _mypy_targets(words: list[str]) -> str:
    """What a mypy command checks, as a short name (`src`, `tests-typing`): the files,
    directories, packages and modules it is given; "" for its configuration's."""
    at = words.index("mypy") + 1 if "mypy" in words else len(words)
    targets: list[str] = []
    skip = False
    for word in words[at:]:
        if skip:
            skip = False
        elif word in _MYPY_VALUED:
            skip = True
        elif not word.startswith("-"):
            targets.append(word.strip("./").replace("/", "-") or "root")
    return "-".join(targets)


def _variant(candidate: Candidate) -> str:
    """The build variant a Go or cargo command compiles, as a short name (`purego`,
    `no-default-features`), and the code a mypy command checks (structlog's tox runs
    `mypy tests/typing` and, in another environment, `mypy src`); "" for the default
    build and for any other tool. A Go command run in a directory of the tree is named by
    it too: there it may build a module of its own, which no `./...` from the root reaches
    (golang-lru's CI tests `arc/`, whose go.mod makes it one)."""
    words = list(candidate.argv)
    if candidate.tool == "mypy":
        # The runner's words by their names (`.venv/bin/mypy`, `python -m mypy`), no more:
        # a target's directories are part of what it names.
        runner = next((at for at, w in enumerate(words) if os.path.basename(w) == "mypy"), -1)
        named = [os.path.basename(w) for w in words[: runner + 1]]
        return _mypy_targets(named + words[runner + 1 :])
    if candidate.tool not in ("go", "cargo"):
        return ""
    parts: list[str] = []
    if candidate.tool == "go" and (where := os.path.normpath(candidate.cwd)) != ".":
        parts.append(where.replace("/", "-"))
    valued = _GO_TAGS if candidate.tool == "go" else _CARGO_FEATURES
    for given in option_values(words, valued, stop_at_double_dash=True):
        parts += [v for v in re.split(r"[,\s]+", given) if v]
    if candidate.tool == "cargo":
        own = words[: words.index("--")] if "--" in words else words  # the rest: the tests'
        parts += [word.lstrip("-") for word in own if word in _CARGO_SWITCHES]
    return "-".join(sorted(set(parts)))


#: The longest variant a check's name spells out whole.
_NAME_VARIANT_CHARS = 32


def _short(variant: str) -> str:
    """`variant` as a check name can carry it: a long one (attrs' tox runs mypy on nine
    `.pyi` files) cut, with a digest of the whole that keeps two such names apart."""
    if len(variant) <= _NAME_VARIANT_CHARS:
        return variant
    import hashlib

    digest = hashlib.sha256(variant.encode()).hexdigest()[:8]
    return f"{variant[:_NAME_VARIANT_CHARS].rstrip('-')}-{digest}"


#: Tools that only say whether files are formatted: as a lint, a formatter's check finds
#: less than a linter does (undefined names, unused imports), so a linter of the same
#: standing is preferred (bleach 6.4.0's tox lint runs `ruff format --check` first).
_FORMATTERS = frozenset({"black", "isort", "yapf", "autopep8", "prettier", "gofmt", "rustfmt"})
#: The subcommand with which a linter or build tool formats (`ruff format`, `cargo fmt`).
_FORMAT_SUBCOMMANDS = frozenset({"format", "fmt"})


def _in_the_tree(
    candidates: list[Candidate], root: str | os.PathLike[str]
) -> tuple[list[Candidate], list[Dropped]]:
    """The candidates that run in a directory of the tree, and why the others cannot: CI
    made theirs as it ran (sniffio's ci.sh tests the installed package from an empty
    directory it makes, `mkdir empty; cd empty; pytest --pyargs sniffio`)."""
    top = os.path.realpath(root)
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in candidates:
        where = os.path.realpath(os.path.join(top, candidate.cwd))
        if candidate.cwd == "." or (where.startswith(top + os.sep) and os.path.isdir(where)):
            kept.append(candidate)
        else:
            why = f"runs in {candidate.cwd}/, which the tree does not hold (made as CI runs)"
            dropped.append(Dropped(candidate.command, candidate.source, why))
    return kept, dropped


def _configured(
    candidates: list[Candidate], root: str | os.PathLike[str]
) -> tuple[list[Candidate], list[Dropped]]:
    """The candidates whose tox or nox runs have their configuration in the tree, and why
    the others cannot run (`assay.discovery.runner_config`)."""
    from pathlib import Path

    from assay.discovery.command_lines import core_command
    from assay.discovery.runner_config import unconfigured_runner

    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in candidates:
        commands = [core_command(words) for words in (candidate.argv, *candidate.stated)]
        why = unconfigured_runner(commands, Path(root))
        if why is None:
            kept.append(candidate)
        else:
            dropped.append(Dropped(candidate.command, candidate.source, why))
    return kept, dropped


def _for_this_target(candidates: list[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
    """The candidates that build for this machine, and why the others are left out: a cargo
    command for another target (`--target thumbv6m-none-eabi`) needs that target's standard
    library, which CI adds (`rustup target add`) and assay does not (scopeguard's no_std
    build failed "can't find crate for `core`", and skipped every later check)."""
    host = f"{os.uname().machine}-unknown-linux-gnu"
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in candidates:
        target = _cargo_target(candidate) if candidate.tool == "cargo" else None
        if target is None or target == host:
            kept.append(candidate)
        else:
            why = f"builds for another target ({target}), whose standard library is not installed"
            dropped.append(Dropped(candidate.command, candidate.source, why))
    return kept, dropped


def _cargo_target(candidate: Candidate) -> str | None:
    """The `--target` a cargo command names, or None."""
    return first_value(candidate.argv, {"--target"}, stop_at_double_dash=True)


def _only_formats(candidate: Candidate) -> bool:
    """Whether `candidate` only says whether files are formatted: its command, or every
    command of the package script it runs (`npm run format:check`: `prettier --check .`)."""
    if candidate.stated and candidate.argv[:1] != candidate.stated[0][:1]:
        return all(_formats(words) for words in candidate.stated)
    return _formats(candidate.argv)


def _tool_words(argv: Sequence[str]) -> Sequence[str]:
    """The tool's command, from its name on (`python -m ruff check` -> `ruff check`)."""
    return argv[2:] if argv[1:2] == ("-m",) else argv


def _formats(argv: Sequence[str]) -> bool:
    words = _tool_words(argv)
    if not words:
        return False
    return os.path.basename(words[0]) in _FORMATTERS or (
        len(words) >= 2 and words[1] in _FORMAT_SUBCOMMANDS
    )


def _widened_in_ci(winner: Candidate, ranked: Sequence[Candidate]) -> Candidate | None:
    """The target of `winner`'s task runner that runs it with variants of it
    (`Candidate.widens`), where CI runs that target; None when there is none. A change
    valid in C but not as C++ fails parson's CI (`make all`) and passes its `make test`."""
    for wider in ranked:
        in_ci = any(c.origin is Origin.CI and _builds_the_same(c, wider) for c in ranked)
        if winner.argv in wider.widens and wider.origin is winner.origin and in_ci:
            return wider
    return None


def _builds_the_same(ci: Candidate, target: Candidate) -> bool:
    """Whether CI's command runs `target`: in its words, or as make commands building the
    same goals (`make`, `make -j2 all` and the task runner's `make all` where `all` is the
    default goal)."""
    return ci.argv == target.argv or bool(target.goals) and ci.goals == target.goals


def _widening(wider: Candidate, winner: Candidate) -> Candidate:
    why = f"{wider.reason}; it runs `{winner.command}` and variants of it, as CI does"
    return replace(wider, reason=why)


def _outranked(candidate: Candidate, by: Candidate) -> Dropped:
    # A command assay composed from a configuration is named by what it is: it may yet be
    # run as the project states it (`_as_stated`), perhaps in the very words dropped here.
    if by.composed is not None:
        winner = f"{by.check_name} as configured in {by.source}"
    else:
        winner = f"{by.command} from {by.source}"
    if candidate.argv in by.widens:
        why = f"{winner} runs it and variants of it, as CI does"
    elif by.origin < candidate.origin:
        ranks = f"{by.origin.label} ranks above {candidate.origin.label}"
        why = f"outranked by {winner} ({ranks})"
    else:
        why = f"{winner} is preferred (cheaper or listed first)"
    return Dropped(candidate.command, candidate.source, why)


def _drop_unstated_lints(
    chosen: list[Candidate], everything: Iterable[Candidate]
) -> tuple[list[Candidate], list[Dropped]]:
    """Leave out a lint only a manifest implies (`go vet` for a go.mod) where the project
    states its own checks for that ecosystem (CI, a task runner, its configuration) and
    none of them lints, and a task runner's lint (a package script's too) where CI runs
    checks and none of them lints: the maintainers' gate does not include it, and its
    findings (an unkeyed literal the tests use on purpose) would fail code they accept."""
    stated: dict[Ecosystem, set[Kind]] = {}
    in_ci: set[Kind] = set()
    for candidate in everything:
        if candidate.origin < Origin.MANIFEST:
            stated.setdefault(candidate.ecosystem, set()).add(candidate.kind)
        if candidate.origin is Origin.CI:
            in_ci.add(candidate.kind)
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in chosen:
        kinds = stated.get(candidate.ecosystem, set())
        implied = candidate.kind is Kind.LINT and candidate.origin is Origin.MANIFEST
        if implied and kinds and Kind.LINT not in kinds:
            why = (
                f"the project states its {candidate.ecosystem.value} checks and none of "
                "them lints: not part of the maintainers' gate"
            )
            dropped.append(Dropped(candidate.command, candidate.source, why))
            continue
        from_task_runner = candidate.kind is Kind.LINT and candidate.origin in (
            Origin.TASK_RUNNER,
            Origin.PACKAGE_JSON,
        )
        if from_task_runner and in_ci and Kind.LINT not in in_ci:
            # jsmn: `make lint` (clang-tidy --checks='*') for its authors; CI `make test`.
            # path-to-regexp: a `lint` script its ts-scripts no longer has; CI `npm test`.
            why = (
                "the project's CI runs its checks and none of them lints: a task "
                "runner's lint CI never runs is not part of the maintainers' gate"
            )
            dropped.append(Dropped(candidate.command, candidate.source, why))
            continue
        kept.append(candidate)
    return kept, dropped


def _drop_ungated_type_checkers(
    chosen: list[Candidate], everything: Iterable[Candidate], root: str
) -> tuple[list[Candidate], list[Dropped]]:
    """Leave out a type checker only its configuration implies (`[tool.mypy]`, a
    tsconfig.json) where the project states what its CI or task runners run, none of that
    type-checks, and no file where it says what runs names the tool (`stated_runs`): the
    configuration serves an editor, a bundler or a plugin, not the maintainers' gate, and
    its findings would fail code they accept (cattrs 26.2.1: strict mypy settings for
    pytest-typing, 477 errors in `src`; cookie-es, whose CI's type check is commented out:
    TypeScript 6 refuses its tsconfig's `esModuleInterop: false`). Asked for by kind
    (`--kind typecheck`), it stays."""
    everything = list(everything)
    if not any(c.origin in (Origin.TASK_RUNNER, Origin.CI) for c in everything):
        return chosen, []  # nothing says what the maintainers run: the configuration may
    if any(
        c.kind is Kind.TYPECHECK
        and Origin.TASK_RUNNER <= c.origin <= Origin.DOCS
        and not _implied_type_checker(c)
        for c in everything
    ):
        return chosen, []
    from pathlib import Path

    from assay.discovery.stated_runs import names_tool

    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in chosen:
        implied = _implied_type_checker(candidate)
        if implied and candidate.tool and not names_tool(Path(root), candidate.tool):
            why = (
                f"{candidate.tool} is configured, but neither CI nor a task runner nor any "
                "other file where the project says what it runs runs it: not part of the "
                "maintainers' gate (`--kind typecheck` runs it)"
            )
            dropped.append(Dropped(candidate.command, candidate.source, why))
            continue
        kept.append(candidate)
    return kept, dropped


def _implied_type_checker(candidate: Candidate) -> bool:
    """Whether `candidate` is a type check only the tool's configuration implies."""
    return candidate.kind is Kind.TYPECHECK and (
        candidate.origin is Origin.PYTHON_CONFIG
        or (candidate.origin is Origin.MANIFEST and candidate.tool == "tsc")
    )


def _drop_covered(chosen: list[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
    """Leave out each chosen check that another one still planned already runs.

    Only a check still kept can cover another, so two checks can never cover each
    other away and leave neither question answered."""
    kept = list(chosen)
    dropped: list[Dropped] = []
    for candidate in chosen:
        cover = next(
            (
                c
                for c in kept
                if c is not candidate and candidate.redundant_with & ({c.check_name} | c.runs)
            ),
            None,
        )
        if cover is not None:
            kept = [c for c in kept if c is not candidate]
            why = f"covered by {' '.join(cover.argv)}, which is planned and cheaper"
            dropped.append(Dropped(candidate.command, candidate.source, why))
    return kept, dropped


def _as_stated(candidate: Candidate, everything: Iterable[Candidate], env: ProjectEnv) -> Candidate:
    """A composed command run as the project states it for the same tool and subcommand."""
    subcommand = candidate.composed
    if subcommand is None:
        return candidate
    stating = sorted(
        (c for c in everything if c.composed is None),
        key=lambda c: (c.origin, c.kind is not candidate.kind, c.cost),
    )
    for other in stating:
        for words in other.stated:
            hit = recognise(words)
            if (
                hit is not None
                and hit.kind is candidate.kind
                and hit.name == candidate.check_name
                and hit.args[: len(subcommand)] == subcommand
            ):
                reason = f"{candidate.reason}; run as {other.source} states it: {' '.join(words)}"
                return replace(
                    candidate,
                    argv=project_argv(hit, env),
                    cwd=other.cwd,
                    env={**candidate.env, **dict(hit.env)},
                    reason=reason,
                    patterns=other.patterns,
                )
    return candidate


def _with_patterns_expanded(candidate: Candidate, root: str) -> Candidate:
    """`candidate` with each word its project's shell would expand replaced by the tree's
    matches, as that shell would give them (`shell_globs`)."""
    if not candidate.patterns:
        return candidate
    from assay.discovery.files import RepoFiles
    from assay.discovery.shell_globs import expand

    files = RepoFiles(root)
    argv: list[str] = []
    for word in candidate.argv:
        matches = expand(files, candidate.cwd, word) if word in candidate.patterns else ()
        argv.extend(matches or (word,))
    return replace(candidate, argv=tuple(argv))


def _confirm_with_ci(candidate: Candidate, everything: Iterable[Candidate]) -> Candidate:
    if candidate.origin is Origin.CI:
        return candidate
    ci = _ci_runs(candidate, everything)
    if not ci:
        return candidate
    env = {**ci[0].env, **candidate.env}
    reason = f"{candidate.reason}; CI runs it too ({ci[0].source})"
    argv = candidate.argv
    if _skips_hooks(ci[0].argv) and not _skips_hooks(argv) and tuple(argv[:1]) == ("npm",):
        # npm/ini's CI: `npm test --ignore-scripts`, so that its `posttest` (lint, then a
        # template check of the checkout's git metadata) is not part of the tests.
        end = argv.index("--") if "--" in argv else len(argv)
        argv = (*argv[:end], _IGNORE_SCRIPTS, *argv[end:])
        reason += f", with {_IGNORE_SCRIPTS}: its pre and post scripts are not run"
    return replace(candidate, argv=argv, env=env, reason=reason)


#: npm's flag that runs the named script alone, without its `pre` and `post` scripts.
_IGNORE_SCRIPTS = "--ignore-scripts"


def _skips_hooks(argv: Sequence[str]) -> bool:
    """Whether an npm command runs its script without the `pre` and `post` scripts."""
    words = tuple(argv[: list(argv).index("--")] if "--" in argv else argv)
    return words[:1] == ("npm",) and _IGNORE_SCRIPTS in words


def _ci_runs(candidate: Candidate, everything: Iterable[Candidate]) -> list[Candidate]:
    """The CI steps that run `candidate`'s check, the very command first."""
    if candidate.origin is Origin.CI:
        return [candidate]
    ci = [
        c
        for c in everything
        if c.origin is Origin.CI
        and c.kind is candidate.kind
        and c.check_name == candidate.check_name
    ]
    return sorted(ci, key=lambda c: c.argv != candidate.argv)


def _built_after_the_rest(
    chosen: Sequence[Candidate], everything: Sequence[Candidate], root: str
) -> list[Candidate]:
    """The builds chosen that the project's CI runs after every other chosen check its job
    runs (prop-types' job lints, tests, then builds `prop-types.js` at the root, which its
    eslint does not ignore: built first, the lint failed on the bundle); and the package
    scripts that build which CI never runs, where it runs the other checks (vercel/ms:
    `biome format` checks `**/*.ts`, `dist/index.d.ts` included, and CI formats a fresh
    checkout: built first, the format check failed on the build's output)."""

    def step(candidate: Candidate) -> tuple[str, int] | None:
        ci = next((c for c in _ci_runs(candidate, everything) if c.job), None)
        return (ci.job, ci.source.line or 0) if ci is not None and ci.job else None

    builds = [c for c in chosen if c.kind is Kind.BUILD and c.tool not in CHECK_ONLY_BUILDS]
    others = [where for c in chosen if c.kind is not Kind.BUILD and (where := step(c))]
    after = []
    for build in builds:
        at = step(build)
        before = [line for job, line in others if at is not None and job == at[0]]
        built_last = at is not None and bool(before) and max(before) < at[1]
        never_built = bool(others) and not _ci_runs(build, everything)
        if built_last or (never_built and _unbuilt_in_ci(build, root)):
            after.append(build)
    return after


#: The scripts a package manager runs by itself when it installs (`npm ci` runs `prepare`).
_INSTALL_SCRIPTS = ("preinstall", "install", "postinstall", "prepublish", "prepare")


def _unbuilt_in_ci(build: Candidate, root: str) -> bool:
    """Whether `build` is a package script (`pnpm run build`) whose output nothing in CI
    makes: no script the install runs by itself names it. Where one does (`prepare`:
    `npm run build`), CI's every job holds the build's output."""
    if build.ecosystem is not Ecosystem.NODE or len(build.argv) < 3 or build.argv[1] != "run":
        return False
    scripts = _package_scripts(root, build.cwd)
    if scripts is None or build.argv[2] not in scripts:
        return False
    name, command = build.argv[2], scripts[build.argv[2]]
    installing = [scripts.get(script, "") for script in _INSTALL_SCRIPTS]
    return not any(name in words.split() or command in words for words in installing)


def _package_scripts(root: str, cwd: str) -> Mapping[str, str] | None:
    """The scripts of the package.json in `cwd` (from the tree at `root`), or None when it
    cannot be read."""
    from assay.discovery.files import RepoFiles, UnreadableFile
    from assay.discovery.node import parse_manifest

    path = os.path.normpath(os.path.join(cwd, "package.json"))
    try:
        text = RepoFiles(root).read_text(path)
    except UnreadableFile:
        return None
    manifest = parse_manifest(text, path)[0] if text is not None else None
    return manifest.scripts if manifest is not None else None


#: A cargo test's silence limit: past libtest's 60 s, after which it names each test still
#: running in full (`test snake::tests::test1 has been running for over 60 seconds`). Stopped
#: at 60 s as well, the race went either way, and the loser was named by its thread, whose
#: name Linux cuts to 15 bytes (`snake::tests::t...`): heck's hung snake tests, twice.
_LIBTEST_SILENCE_S = DEFAULT_TIMEOUT_S + 5


#: Test runners that print nothing as tests pass (Gradle's test task, unless the build
#: configures its `testLogging`): a long suite's silence is not a hang's.
_QUIET_TEST_RUNNERS = frozenset({"gradle"})


def _to_check(
    candidate: Candidate, options: PlanOptions, configured_timeout: float | None, env: ProjectEnv
) -> Check:
    argv = candidate.argv if candidate.origin is Origin.ASSAY_CONFIG else tune(candidate, options)
    reason = "; ".join((candidate.reason, *candidate.notes))
    if (
        candidate.tool not in GENERIC_TOOLS
        and env.in_tree_python
        and argv
        and argv[0] == env.python
    ):
        reason += f"; interpreter: {env.python} ({env.python_source})"
    # The caller's deadline beats the command's own, which beats the configuration-wide one.
    # Without any, a test check runs while it keeps printing, as a slow suite does: a long
    # real suite is not cut off, and a hung test is stopped once it goes quiet. A build,
    # type check or lint prints nothing until it is done, however long its tree takes
    # (tsc, mypy, go vet over a large one): only the fixed deadline stops those.
    stated = [
        t for t in (options.timeout_s, candidate.timeout_s, configured_timeout) if t is not None
    ]
    if stated:
        timeout, no_output_timeout = stated[0], None
    elif candidate.kind is not Kind.TEST or candidate.tool in _QUIET_TEST_RUNNERS:
        timeout, no_output_timeout = DEFAULT_PRINTING_DEADLINE_S, None
    elif candidate.tool == "cargo":
        timeout, no_output_timeout = DEFAULT_PRINTING_DEADLINE_S, _LIBTEST_SILENCE_S
    else:
        timeout, no_output_timeout = DEFAULT_PRINTING_DEADLINE_S, DEFAULT_TIMEOUT_S
    return Check(
        name=candidate.check_name,
        kind=candidate.kind,
        argv=argv,
        cwd=candidate.cwd,
        env=dict(candidate.env),
        timeout_s=timeout,
        no_output_timeout_s=no_output_timeout,
        tool=candidate.tool,
        source=str(candidate.source),
        reason=reason,
    )


def _screened(check: Check, root: str, notes: list[str]) -> Check:
    """`check` without the variables no repository may set (loader, interpreter, git and
    assay controls), each refusal noted: they would run code before the check, or outside it."""
    from assay.environment import screen_overlay

    kept, refused = screen_overlay(check.env, root)
    for name, why in refused.items():
        notes.append(f"{check.name}: environment variable {name} refused: {why}")
    return replace(check, env=kept) if refused else check


#: mypy options after which it reads no `files` from its configuration, or another one.
_MYPY_OWN_TARGETS = frozenset(
    {"-p", "--package", "-m", "--module", "-c", "--command", "--config-file"}
)


def _with_present_mypy_files(check: Check, root: str) -> Check:
    """A mypy run on its configuration's `files` (no path on its command line), given the
    paths of it the tree has when it lacks some: mypy would stop at the first missing one.
    A command line with anything but options is left as written."""
    if check.tool != "mypy" or check.cwd not in (".", ""):
        return check
    argv = tuple(check.argv)
    at = 3 if argv[1:3] == ("-m", "mypy") else 1
    args = argv[at:]
    if any(not a.startswith("-") or a.split("=")[0] in _MYPY_OWN_TARGETS for a in args):
        return check
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import mypy_files_split

    split = mypy_files_split(RepoFiles(root))
    if split is None or not split[0]:
        return check
    present, absent = split
    reason = (
        f"{check.reason}; mypy's files names {', '.join(absent)}, which this tree lacks "
        "(a release's sdist leaves tooling out): the others are named on its command line"
    )
    return replace(check, argv=(*argv, *present), reason=reason)


#: pytest options after which it reads another configuration, or `addopts` from elsewhere.
_PYTEST_OWN_CONFIG = ("-c", "--config-file", "-o", "--override-ini", "--rootdir", "--inifile")


def _without_coverage_addopts(check: Check, root: str) -> Check:
    """A pytest run whose configuration's `addopts` names pytest-cov's options, told to
    read `addopts` without them (`-o addopts=...`), as they are left off a stated command
    line (`without_coverage`): coverage is not the question, and where pytest-cov is not
    installed (parse 1.22.4 declares no test dependency) pytest refuses to start."""
    if check.tool != "pytest" or check.cwd not in (".", ""):
        return check
    if any(a.startswith(_PYTEST_OWN_CONFIG) for a in check.argv):
        return check
    from assay.discovery.command_lines import COVERAGE_NOTE, without_coverage
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import PYTEST_CONFIG_FILES, pytest_addopts

    files = RepoFiles(root)
    if any(
        files.is_file(f"{arg}/{name}")
        for arg in check.argv[1:]
        if not arg.startswith("-") and files.is_dir(arg)
        for name in PYTEST_CONFIG_FILES
    ):
        return check  # pytest may read a configuration below the root
    addopts = pytest_addopts(files)
    if addopts is None or (kept := without_coverage(addopts)) == addopts:
        return check
    override = ("-o", f"addopts={shlex.join(kept)}")
    return replace(check, argv=(*check.argv, *override), reason=f"{check.reason}; {COVERAGE_NOTE}")


def _as_script_runner(check: Check, root: str) -> Check:
    """An `npm run SCRIPT` test whose script ends with a jest or vitest command, planned as
    that runner run by npm (`npm-jest`, `npm-vitest`): asked for its JSON report, which names
    every test, and carrying its canaries under `--protect` (`assay.script_runner`). npm
    only: not every yarn and pnpm hands the words after `--` to the script as npm does."""
    argv = tuple(check.argv)
    npms = tuple(
        w for w in (argv[: argv.index("--")] if "--" in argv else argv) if w != _IGNORE_SCRIPTS
    )
    if check.tool != "npm-test" or check.kind is not Kind.TEST or npms[:1] != ("npm",):
        return check
    # One script in one package: `--workspaces` would hand every package's run one report.
    if len(npms) < 2 or npms[1:-1] not in ((), ("run",), ("run-script",)):
        return check
    from assay.script_runner import script_runner

    scripts = _package_scripts(root, check.cwd)
    script = scripts.get(npms[-1]) if scripts is not None else None
    runner = script_runner(script) if script is not None else None
    if runner is None or not runner.given(argv).reports:
        return check
    reason = f"{check.reason}; it ends with {runner.runner}: asked for its report after `--`"
    return replace(check, tool=f"npm-{runner.runner}", reason=reason)


def tune(candidate: Candidate, options: PlanOptions) -> tuple[str, ...]:
    """Flags that make a discovered command quiet, fail fast and side-effect free (each
    tool's own tuning is part of its declaration)."""
    spec = tool_spec(candidate.tool)
    if spec is None or spec.tune is None:
        return tuple(candidate.argv)
    return tuple(spec.tune(list(candidate.argv), options.fail_fast))


def _named(checks: list[Check]) -> tuple[Check, ...]:
    """Give every check a short unique name, and order them by stage."""
    ordered = sorted(checks, key=lambda c: _KIND_ORDER.index(c.kind))
    names: list[str] = []
    result = []
    for check in ordered:
        name = _base_name(check)
        if name in names:
            name = f"{name}-{check.kind.value}"
        while name in names:
            name += "'"
        names.append(name)
        result.append(replace(check, name=name))
    return tuple(result)


def _base_name(check: Check) -> str:
    if check.tool in GENERIC_TOOLS and check.name in (None, check.tool):
        runner = os.path.basename(check.argv[0]) if check.argv else "shell"
        return f"{runner}-{check.kind.value}"
    return check.name or check.tool or check.kind.value


def _wanted_kinds(options: PlanOptions, skip: frozenset[Kind]) -> frozenset[Kind]:
    wanted = options.kinds if options.kinds is not None else frozenset(Kind)
    return wanted - skip


_T = TypeVar("_T")


def _first_set(*values: _T | None) -> _T:
    """The first value that is not None (the last one given never is)."""
    return next(v for v in values if v is not None)
