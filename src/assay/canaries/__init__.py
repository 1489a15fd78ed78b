"""Canary tests: tests of assay's own, planted in a test check's run to prove its report.

Code under test runs inside the runner that reports on it, so it can rewrite any channel
it can see: the exit code, the printed summary, the structured report. Each test run
therefore carries tests of assay's own, in the runner's own language, with names drawn at
random for that run: one that must fail and one that must pass. A report that does not
show exactly that (the must-pass test reported passed and the must-fail test failed, each
as many times as it was planted to run, and a non-zero exit) was rewritten, and nothing
else it says is believed: `inconclusive` / `report_tampered`, whatever the rest says.

Canaries are written into the workspace copy only (never into a tree that is the user's
own), right before a stage's test checks start, and removed once they have ended. They
never count: a check's tests, test cases and exit code are judged as if they had not been
there, so a runner that exits non-zero only because of the must-fail canary passes.

Each tool's planter is part of its declaration (`ToolSpec.canary`: a function in a module
of this package); a test check whose tool has none runs without canaries, and its
evidence says so (`extra["canaries"]`).
"""

from __future__ import annotations

import importlib
import os
import re
import secrets
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from assay.canaries.files import create_file, remove_created
from assay.canaries.self_judging import REFUSED
from assay.evidence import Check, Evidence, TestCase, TestCounts
from assay.parsed_output import ParsedOutput
from assay.parsed_output import Reading as ChannelReading
from assay.process import ProcessResult
from assay.verdict import Cause, Verdict

__all__ = [
    "Canary",
    "CanaryFile",
    "NoCanary",
    "NotPlanted",
    "PlantRequest",
    "Planted",
    "Planting",
    "Reading",
    "camel",
    "neutral_name",
    "plant",
    "unequal",
]

#: Random bytes in a canary's name: names no test of the project's can already have,
#: and that code under test cannot know before the run.
TOKEN_BYTES = 8


#: Variables that hold lists, and how their entries are joined (others are replaced).
_JOINED = {"PYTHONPATH": os.pathsep, "NODE_OPTIONS": " "}


def new_token() -> str:
    return secrets.token_hex(TOKEN_BYTES)


#: Words a test's name is made of, so that a canary reads like one of the project's tests:
#: code under test that spares a test by what its name says ("canary", a random token)
#: cannot tell the canaries from the tests it wants to pass.
_WORDS = (
    "add", "all", "any", "args", "base", "block", "bool", "bound", "bytes", "cache", "call",
    "case", "chain", "char", "check", "child", "class", "clear", "close", "count", "copy",
    "data", "date", "deep", "default", "delta", "depth", "dict", "diff", "drop", "empty",
    "end", "entry", "equal", "error", "event", "extra", "field", "file", "fill", "filter",
    "first", "flag", "float", "flush", "format", "frame", "group", "hash", "head", "index",
    "init", "input", "int", "item", "join", "key", "kind", "label", "last", "left", "level",
    "limit", "line", "list", "load", "lookup", "lower", "map", "mark", "match", "max",
    "merge", "min", "mode", "name", "nested", "node", "none", "null", "number", "offset",
    "one", "open", "order", "other", "output", "pair", "parse", "part", "path", "peek",
    "pop", "prefix", "push", "query", "range", "raw", "read", "ref", "repr", "reset",
    "result", "reverse", "right", "root", "round", "row", "rule", "scope", "seed", "set",
    "shape", "shift", "sign", "size", "slice", "sort", "source", "space", "split", "stack",
    "start", "state", "step", "stop", "store", "str", "strip", "sub", "suffix", "sum",
    "swap", "table", "tail", "text", "time", "token", "total", "tree", "trim", "tuple",
    "type", "unicode", "unit", "update", "upper", "value", "view", "walk", "width", "word",
    "wrap", "write", "zero",
)  # fmt: skip


def unequal() -> tuple[int, int]:
    """Two numbers for a must-fail canary to find unequal, as any failing test might: its
    failure says nothing that code under test could spare it by."""
    left = secrets.randbelow(1000)
    return left, left + 1 + secrets.randbelow(9)


def camel(name: str) -> str:
    """`merge_order_key` as `MergeOrderKey`."""
    return "".join(word.title() for word in name.split("_"))


def neutral_name(words: int = 4) -> str:
    """`words` random words joined by `_` ("merge_order_key_limit"): with four, one of some
    6x10^8 names, so no project's test has it by chance, and none says what it is for."""
    return "_".join(secrets.choice(_WORDS) for _ in range(words))


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True)
class Canary:
    """One planted test."""

    name: str
    """The test's name as the runner reports it: random for each run."""
    must_pass: bool
    group: str = ""
    """Which of the run's test processes it runs in (a Go package); "" when there is one."""

    @property
    def must(self) -> str:
        return "pass" if self.must_pass else "fail"


@dataclass(frozen=True, slots=True)
class CanaryFile:
    """A file to create in the workspace (it must not exist yet)."""

    path: str
    """`/`-separated, relative to the workspace root."""
    text: str


#: The tests a run reported, for the canaries to be found among (default: the parsed cases).
Outcomes = Callable[[ProcessResult, ParsedOutput], Sequence[TestCase]]
#: The groups whose process failed as a whole (a Go package that did not build); None when
#: a process failed that no canary was reported from (it may be any unreported group's).
FailedGroups = Callable[[ProcessResult], "frozenset[str] | None"]
#: More ways a runner's report shows that a test process was cut short: one sentence each.
Checks = Callable[[ProcessResult, ParsedOutput], Sequence[str]]


def all_checks(*checks: Checks) -> Checks:
    """The check that runs each of `checks` and says every problem they find."""

    def check(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        return [problem for each in checks for problem in each(result, parsed)]

    return check


@dataclass(frozen=True, slots=True)
class Planting:
    """What a tool's planter decided for one run."""

    files: tuple[CanaryFile, ...]
    canaries: tuple[Canary, ...]
    failed_exit: int = 1
    """The runner's exit code when tests failed: the one the must-fail canary causes."""
    edit_argv: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None
    """Changes to the instrumented argv (load the canaries, drop fail-fast flags)."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Variables laid over the check's (prepended to a search path the check sets)."""
    repeats: int | None = 1
    """How many times each canary runs; None: once in each test process the runner
    starts (`node --test`), which must then be the same number for every canary."""
    outcomes: Outcomes | None = None
    failed_groups: FailedGroups | None = None
    checks: Checks | None = None
    what: str = ""
    """What was planted, for the record ("a pytest plugin module .merge_order/key_limit.py ...")."""
    mark: str = ""
    """What each line a guard planted beside the tests writes starts with (its seal, its
    tally): assay's words, left out of the output a person reads."""
    printed: Callable[[str, Counter[str]], str] | None = None
    """The runner's printed output (its stdout, or what a parser decoded of it) without the
    canaries' own parts (their failure, their lines in its summary, their share of its
    counts), for a person to read; given the text and the canaries' reported outcomes
    (`passed`, `failed`: as many as the report named)."""


@dataclass(frozen=True, slots=True)
class NoCanary:
    """A planter's answer when this run cannot carry canaries, and why."""

    why: str


@dataclass(frozen=True, slots=True)
class PlantRequest:
    """One test check about to run in a workspace, as a planter sees it."""

    check: Check
    root: Path
    """The workspace (resolved)."""
    token: Callable[[], str] = new_token
    name: Callable[[], str] = neutral_name
    """A random name that reads like a project's own (`neutral_name`)."""
    own_plugins: Mapping[str, str] = field(default_factory=dict)
    """The project's own pytest plugin files a guard may believe, each with the SHA-256
    its bytes must have (`assay.own_plugins`)."""

    @property
    def cwd(self) -> Path:
        # Not resolved: a link on the way is the change's, and writing refuses to follow it.
        return inside(self.root, self.check.cwd)

    def pair(self, spelt: Callable[[str], str] = str) -> tuple[Canary, Canary]:
        """A must-pass and a must-fail canary with random names, each `spelt` as the
        runner's tests are (`test_merge_order_key_limit`, `TestMergeOrderKeyLimit`)."""
        passing, failing = spelt(self.name()), spelt(self.name())
        if passing == failing:
            raise ValueError("two random names came out the same")
        return Canary(passing, must_pass=True), Canary(failing, must_pass=False)

    def relative(self, path: Path) -> str:
        """`path` (inside the workspace) as a `/`-separated path relative to its root."""
        return path.relative_to(self.root).as_posix()


Planter = Callable[[PlantRequest], "Planting | NoCanary"]


def failed_run(result: ProcessResult) -> frozenset[str]:
    """The groups that failed when the run is one group: all of it, when it exited non-zero."""
    return frozenset({""} if result.exit_code not in (0, None) else ())


def failed_unless(failed_otherwise: re.Pattern[str]) -> FailedGroups:
    """`failed_run`, or None (a failure the canaries do not account for) when the output
    says the run failed other than by a test (coverage under a threshold, a test file that
    failed outside its tests): runners then exit as they do for failed tests."""

    def failed_groups(result: ProcessResult) -> frozenset[str] | None:
        if failed_otherwise.search(result.stdout.text + result.stderr.text):
            return None
        return failed_run(result)

    return failed_groups


def ignored_by_git(directory: str) -> CanaryFile:
    """A `.gitignore` that hides a canary directory from the linters and formatters that
    honour it (ruff, prettier) while they check the tree beside the tests."""
    return CanaryFile(f"{directory}/.gitignore", "*\n")


def inside(root: Path, *parts: str | Path) -> Path:
    """`root` joined with `parts`, `..` taken lexically (links are not followed here)."""
    return Path(os.path.normpath(root.joinpath(*parts)))


def within(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


# --------------------------------------------------------------------------- planting


@dataclass(frozen=True, slots=True)
class NotPlanted:
    """A test check that runs without canaries, and why (kept in its evidence)."""

    why: str
    refused: bool = False
    """Canaries were due but could not be written: the check must not run without them."""

    def record(self) -> dict[str, Any]:
        return {"planted": False, "why": self.why}

    def annotate(self, evidence: Evidence) -> Evidence:
        return replace(evidence, extra={**evidence.extra, "canaries": self.record()})

    def remove(self) -> None:
        """Nothing was written."""


def plant(
    check: Check, root: Path, own_plugins: Mapping[str, str] | None = None
) -> Planted | NotPlanted:
    """Write the canaries for `check` into the workspace at `root`; never raises.
    `own_plugins`: `PlantRequest.own_plugins`.

    The caller removes them (`Planted.remove`) once the check has ended."""
    from assay.tools import tool_spec

    spec = tool_spec(check.tool)
    if spec is None or spec.canary is None:
        return NotPlanted(f"assay has no canary tests for {check.tool or check.argv[:1]}")
    module, function = spec.canary
    request = PlantRequest(check, Path(root).resolve(), own_plugins=dict(own_plugins or {}))
    try:
        planter: Planter = getattr(importlib.import_module(f"assay.canaries.{module}"), function)
        decided = planter(request)
    except Exception as exc:  # a planter that fails must not leave the check unguarded
        why = f"canary tests could not be prepared ({type(exc).__name__}: {exc})"
        return NotPlanted(why, refused=True)
    if isinstance(decided, NoCanary):
        return NotPlanted(decided.why)
    created: list[str] = []
    try:
        for canary_file in decided.files:
            created.extend(create_file(request.root, canary_file.path, canary_file.text))
    except (OSError, ValueError) as exc:
        remove_created(request.root, created)
        return NotPlanted(f"canary tests could not be written: {exc}", refused=True)
    return Planted(decided, request.root, tuple(created))


@dataclass(frozen=True, slots=True)
class Planted:
    """Canaries written for one check: how its run changes, and how its report is read."""

    planting: Planting
    root: Path
    created: tuple[str, ...]
    """What was created, in order (directories before what they hold)."""

    def argv(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        edit = self.planting.edit_argv
        return argv if edit is None else edit(argv)

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        merged = dict(env)
        for name, value in self.planting.env.items():
            # What the check sets keeps its entries, after ours.
            joined = _JOINED.get(name)
            merged[name] = (
                f"{value}{joined}{merged[name]}" if joined and merged.get(name) else value
            )
        return merged

    def remove(self) -> None:
        """Remove what was planted (the workspace is removed later in any case)."""
        remove_created(self.root, list(self.created))

    def read(self, result: ProcessResult, parsed: ParsedOutput) -> Reading:
        """What the run's report says about the canaries, and the report without them."""
        return _read(self.planting, result, parsed)


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True, slots=True)
class Reading:
    """A run's report read against its canaries."""

    parsed: ParsedOutput
    """What was parsed, the canaries taken out of its tests, counts and channels."""
    exit_code: int | None
    """The exit code to judge: the must-fail canary's failure discounted."""
    problems: tuple[str, ...]
    """Why the report cannot be believed; empty when the canaries showed as planted."""
    record: Mapping[str, Any]
    as_reported: ParsedOutput | None = None
    """What was parsed, canaries and all: the run as it was, when the canaries show it
    was not what it says (classifying it without them would read as a contradiction)."""
    mark: str = ""
    """`Planting.mark`."""
    printed: Callable[[str], str] | None = None
    """`Planting.printed`, where the canaries showed as planted; None otherwise."""

    @property
    def classified(self) -> ParsedOutput:
        """What classification reads."""
        return self.as_reported if self.problems and self.as_reported else self.parsed

    def judged(self, result: ProcessResult) -> ProcessResult:
        """`result` as classification judges it: with the exit code the canaries leave,
        and without the lines the guard beside them wrote."""
        if self.mark and self.mark in result.stderr.text:
            said = re.compile(rf"\n?^{re.escape(self.mark)}[^\n]*$", re.MULTILINE)
            stderr = result.stderr
            kept = replace(stderr, head=said.sub("", stderr.head), tail=said.sub("", stderr.tail))
            result = replace(result, stderr=kept)
        if self.printed is not None:
            edit = self.printed
            out, err = result.stdout, result.stderr
            result = replace(
                result,
                stdout=replace(out, head=edit(out.head), tail=edit(out.tail)),
                stderr=replace(err, head=edit(err.head), tail=edit(err.tail)),
            )
        if result.exit_code == self.exit_code:
            return result
        return replace(result, exit_code=self.exit_code)

    def settle(self, evidence: Evidence, result: ProcessResult) -> Evidence:
        """The evidence for the run: classified from the report without canaries, with the
        process as it really ended, and `report_tampered` when the canaries say so."""
        extra = {**evidence.extra, "canaries": dict(self.record)}
        evidence = replace(
            evidence,
            result=result,
            extra=extra,
            tests=self.parsed.tests,
            test_cases=self.parsed.test_cases,
        )
        if not self.problems:
            return evidence
        from assay.classify import failure_reason

        name = evidence.check.name
        note = (
            f"{name}'s report was tampered with: {_sentences(self.problems)} "
            "These are tests assay planted in the run (one must fail, one must pass); "
            "nothing the run reports is believed."
        )
        if evidence.note and evidence.cause is not Cause.EXIT_ZERO and not _guards_exit(evidence):
            note = f"{note} {evidence.note}"
        return replace(
            evidence,
            verdict=Verdict.INCONCLUSIVE,
            cause=Cause.REPORT_TAMPERED,
            note=note,
            reason=failure_reason(evidence.check, result, Cause.REPORT_TAMPERED),
        )


def _guards_exit(evidence: Evidence) -> bool:
    """Whether the run ended with the exit code of the Python guard planted beside the
    tests, unexplained by its output: the guard's own end, which the note of what it found
    says already (sqlparse's run under --protect read "pytest exited 86 and its output does
    not say why" after it)."""
    from assay.canaries.python import GUARD_EXIT

    result = evidence.result
    ended = result is not None and result.exit_code == GUARD_EXIT
    return ended and evidence.cause is Cause.UNRECOGNIZED_FAILURE


def _read(planting: Planting, result: ProcessResult, parsed: ParsedOutput) -> Reading:
    record: dict[str, Any] = {
        "planted": True,
        "what": planting.what,
        "tests": [{"name": c.name, "must": c.must, "group": c.group} for c in planting.canaries],
    }
    reported = planting.outcomes(result, parsed) if planting.outcomes else parsed.test_cases
    seen = _seen(planting.canaries, reported)
    for entry, canary in zip(record["tests"], planting.canaries, strict=True):
        entry["seen"] = seen[canary]
    if not result.started or result.timed_out or result.signal is not None:
        record["finding"] = "not judged: the run did not finish"
        return Reading(_without(parsed, seen), result.exit_code, (), record, mark=planting.mark)
    failed_groups = (planting.failed_groups or failed_run)(result)
    unexplained = failed_groups is None
    if failed_groups is None:
        failed_groups = frozenset(c.group for c in planting.canaries)
    stripped = _without(parsed, seen)
    problems, unreached = _problems(planting, seen, failed_groups, failing=_failed(stripped))
    problems.extend(_found(reported))
    if result.exit_code == 0:
        problems.insert(0, "it exited 0 although a test planted to fail was part of it")
    if planting.checks is not None:
        problems.extend(planting.checks(result, parsed))
    if not problems:
        problems.extend(_counts_left_out(parsed, seen))
    exit_code = result.exit_code
    residual = (
        _failed(stripped)
        or unexplained
        or bool(unreached)
        or bool(failed_groups - _canary_failed(seen))
    )
    if not problems and any(seen.values()):
        if exit_code == planting.failed_exit and not residual:
            exit_code = 0  # the must-fail canary's failure, and nothing else
        stripped = replace(stripped, failure_recognized=residual)
    record["finding"] = _finding(problems, unreached, seen)
    printed = None if problems else _printed_without(planting, seen)
    if printed is not None and stripped.printed:
        stripped = replace(stripped, printed=printed(stripped.printed))
    return Reading(
        stripped,
        exit_code,
        tuple(problems),
        record,
        as_reported=parsed,
        mark=planting.mark,
        printed=printed,
    )


def _printed_without(
    planting: Planting, seen: Mapping[Canary, list[str]]
) -> Callable[[str], str] | None:
    """`Planting.printed` for this run's canaries, as they were reported."""
    edit = planting.printed
    if edit is None:
        return None
    outcomes = Counter(outcome for found in seen.values() for outcome in found)
    return lambda text: edit(text, outcomes)


def _seen(canaries: Sequence[Canary], reported: Sequence[TestCase]) -> dict[Canary, list[str]]:
    """Each canary's outcomes, as often as the report names it."""
    patterns = {c: _name_pattern(c.name) for c in canaries}
    seen: dict[Canary, list[str]] = {c: [] for c in canaries}
    for case in reported:
        for canary, pattern in patterns.items():
            if pattern.search(case.name):
                seen[canary].append(case.outcome)
    return seen


#: What the canaries say when an assertion no longer fails on unequal values or passes on
#: equal ones (`js_runners.assertion_checks`: in the must-pass test, and in a hook after each
#: of the project's tests), quoted in the evidence as it was found.
_LENIENT = re.compile(
    r"(?:(?:the global )?[\w:/.()]{1,60} did not (?:fail on unequal|pass on equal) values(?:; )?)"
    r"{1,20}: the assertion library was replaced"
)


def _found(reported: Sequence[TestCase]) -> list[str]:
    """What the canaries' checks found, where a test failed saying it: an assertion made
    lenient, or a value under test that decides its own comparison (`self_judging`)."""
    for case in reported:
        if case.outcome not in _FAILED:
            continue
        message = case.message or ""
        said = _LENIENT.search(message) or REFUSED.search(message)
        if said:
            return [f"the checks planted in the run found that {said[0]}"]
    return []


def any_name(canaries: Sequence[Canary]) -> str:
    """A pattern matching any of the canaries' names, for a runner's printed output."""
    return "|".join(re.escape(c.name) for c in canaries)


def _name_pattern(name: str) -> re.Pattern[str]:
    # The name as a whole word: runners prefix it (`pkg.TestX`, `tests/x.py::test_x`).
    return re.compile(rf"(?<![0-9A-Za-z_]){re.escape(name)}(?![0-9A-Za-z_])")


_FAILED = ("failed", "error")


def _problems(
    planting: Planting,
    seen: Mapping[Canary, list[str]],
    failed_groups: frozenset[str],
    *,
    failing: bool = False,
) -> tuple[list[str], list[str]]:
    """Every way the report contradicts the canaries, and the groups it never reached.

    A group none of whose canaries was reported is unreached, which only a process that
    failed as a whole (a package that did not build, a run cut short by a failure) may be:
    a group that passed without its canaries did not run them. A must-pass canary alone
    unreported is cut short only where a test of the project's failed (`failing`): Go's
    runs after the package's sequential tests, and a binary that exits under one of them
    never runs it; with no such failure, its look at the channel was kept from running."""
    problems: list[str] = []
    unreached: list[str] = []
    groups: dict[str, list[Canary]] = {}
    for canary in planting.canaries:
        groups.setdefault(canary.group, []).append(canary)
    for group, members in groups.items():
        if not any(seen[c] for c in members):
            if group in failed_groups:
                unreached.append(group)
            else:
                where = f" in {group}" if group else ""
                problems.append(f"the tests planted{where} were never reported")
            continue
        counts = {len(seen[c]) for c in members}
        for canary in members:
            outcomes = seen[canary]
            if not outcomes and canary.must_pass and failing and group in failed_groups:
                continue  # cut short by a failure of the project's: nothing of it passes
            wanted = ("passed",) if canary.must_pass else _FAILED
            wrong = [o for o in outcomes if o not in wanted]
            if wrong:
                problems.append(f"{canary.name}, planted to {canary.must}, was reported {wrong[0]}")
            elif not outcomes:
                problems.append(f"{canary.name}, planted to {canary.must}, was never reported")
            elif planting.repeats is not None and len(outcomes) != planting.repeats:
                problems.append(
                    f"{canary.name} was reported {_times(len(outcomes))}, "
                    f"planted to run {_times(planting.repeats)}"
                )
            elif planting.repeats is None and len(counts) > 1:
                problems.append(
                    f"{canary.name} was reported {_times(len(outcomes))}, the other test "
                    f"planted beside it {_times(max(counts - {len(outcomes)}))}"
                )
    return problems, unreached


def _times(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


def _canary_failed(seen: Mapping[Canary, list[str]]) -> frozenset[str]:
    """Groups whose failure the must-fail canary accounts for."""
    return frozenset(c.group for c, outcomes in seen.items() if not c.must_pass and outcomes)


def _failed(parsed: ParsedOutput) -> bool:
    return bool(parsed.diagnostics) or (parsed.tests is not None and parsed.tests.any_failed)


def _finding(
    problems: Sequence[str], unreached: Sequence[str], seen: Mapping[Canary, list[str]]
) -> str:
    if problems:
        return "report_tampered: " + "; ".join(problems)
    if not any(seen.values()):
        return "not reached: the run failed before the canaries reported"
    if unreached:
        return f"as planted where reached; not reached in {', '.join(sorted(unreached))}"
    return "as planted"


def _counts_left_out(parsed: ParsedOutput, seen: Mapping[Canary, list[str]]) -> list[str]:
    """Counts that cannot include the canaries the cases show: they were not the runner's."""
    passed = sum(o == "passed" for outcomes in seen.values() for o in outcomes)
    failed = sum(o in _FAILED for outcomes in seen.values() for o in outcomes)
    for value in _counts(parsed):
        if value.passed < passed or value.failed + value.errors < failed:
            counted = f"{value.passed} passed, {value.failed + value.errors} failed"
            return [
                f"its counts ({counted}) leave out the {passed + failed} planted tests it lists"
            ]
    return []


def _counts(parsed: ParsedOutput) -> list[TestCounts]:
    return [v for f in fields(parsed) if isinstance(v := getattr(parsed, f.name), TestCounts)]


# --------------------------------------------------------------------------- taking them out


def _without(parsed: ParsedOutput, seen: Mapping[Canary, list[str]]) -> ParsedOutput:
    """`parsed` as if the canaries had not run: not in its cases, counts or channels."""
    patterns = [_name_pattern(c.name) for c in seen]
    outcomes = [o for found in seen.values() for o in found]
    changes: dict[str, Any] = {}
    for spec in fields(parsed):
        value = getattr(parsed, spec.name)
        if isinstance(value, TestCounts):
            changes[spec.name] = _counts_without(value, outcomes)
    changes["test_cases"] = tuple(
        case for case in parsed.test_cases if not any(p.search(case.name) for p in patterns)
    )
    if outcomes:
        changes["readings"] = tuple(_reading_without(r, outcomes) for r in parsed.readings)
    stripped = replace(parsed, **changes)
    tests = stripped.tests
    if outcomes and tests is not None and tests.executed == 0:
        stripped = replace(stripped, no_tests_reported=True)
    return stripped


def _counts_without(counts: TestCounts, outcomes: Sequence[str]) -> TestCounts:
    def less(value: int, outcome: str) -> int:
        return max(value - outcomes.count(outcome), 0)

    return replace(
        counts,
        passed=less(counts.passed, "passed"),
        failed=less(counts.failed, "failed"),
        errors=less(counts.errors, "error"),
        skipped=less(counts.skipped, "skipped"),
    )


def _reading_without(reading: ChannelReading, outcomes: Sequence[str]) -> ChannelReading:
    """One channel's counts less the canaries (every channel a runner writes counts them)."""
    ran, failed = reading.ran, reading.failed
    return replace(
        reading,
        ran=None if ran is None else max(ran - len(outcomes), 0),
        failed=None if failed is None else max(failed - sum(o in _FAILED for o in outcomes), 0),
    )


def _sentences(problems: Sequence[str]) -> str:
    return "; ".join(problems) + "."
