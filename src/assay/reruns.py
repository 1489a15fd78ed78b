"""Failing tests run again (`assay verify --rerun-failures N`), to tell a flaky test from a
failing one.

A test check that failed with named failing tests has just those tests run again, up to N
times, each time in a fresh process in the same session (the same sandbox and workspace,
the same environment). A test that passes on any rerun is flaky: when every failing test
is flaky, the check is `inconclusive` / `flaky_tests`, naming them; a run that says nothing
about the code is neither a pass nor a failure. A test that fails every rerun keeps the
check `fail`, as does any failure that has no test's name (a compile error, a package that
failed outside its tests), which no rerun can clear. What was rerun, how often and with
what outcome is kept in the evidence's `extra["reruns"]`.

How the tests are selected, per runner:

- pytest: the check's own command, with a plugin of assay's (`-p`, from a directory
  outside the workspace) that keeps, after every other plugin has collected and selected,
  only the failing tests' node ids (matched by the name the JUnit report gave them);
- go test: one run per package, `go test FLAGS -run '^(TestA|TestB)$' PACKAGE`;
- unittest: `python -m unittest -v ID...`, run where the first run's ids resolve (a
  `discover`'s top-level directory);
- any other runner (jest, vitest, node --test, cargo, a wrapper script ...): not rerun; the
  check keeps its verdict and `extra["reruns"]["not_rerun"]` says why.

A rerun runs the code under test again, and without canaries: code that fakes a pass on a
rerun can turn its FAILED into INDETERMINATE, never into VERIFIED.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.evidence import Check, Evidence
from assay.go_packages import GO_VALUED
from assay.verdict import Cause, Kind

if TYPE_CHECKING:
    from assay.session import Session

__all__ = ["FLAKY_IN_NOTE", "TESTS_VARIABLE", "Reruns", "rerun_checks", "rerun_failures"]

#: Flaky tests named in a note; the evidence's `extra` lists them all.
FLAKY_IN_NOTE = 10
#: The variable that hands the pytest plugin the names of the tests to keep.
TESTS_VARIABLE = "ASSAY_RERUN_TESTS"
#: The pytest plugin's module name (imported with `-p`).
PYTEST_PLUGIN = "assay_rerun_failures"
#: Test outcomes that are failures.
_FAILED = frozenset({"failed", "error"})

_PYTEST_PLUGIN_TEXT = f'''"""Keeps only the tests named in ${TESTS_VARIABLE} (as pytest's JUnit report names them)."""
import json
import os
import re

import pytest

_WANTED = frozenset(json.loads(os.environ.get("{TESTS_VARIABLE}", "[]")))


def _reported(nodeid):
    # The name the JUnit report gives a test (pytest's own mangling of its node id).
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    classname = ".".join(names[:-1])
    return classname + "::" + names[-1] if classname else names[-1]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    kept = [item for item in items if _reported(item.nodeid) in _WANTED]
    dropped = [item for item in items if _reported(item.nodeid) not in _WANTED]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
'''


@dataclass(frozen=True, slots=True)
class Reruns:
    """The checks that rerun one failed check's failing tests, or why there are none."""

    tests: tuple[str, ...] = ()
    """The failing tests, by the name the first run reported."""
    checks: tuple[Check, ...] = ()
    not_rerun: str = ""
    left_out: tuple[str, ...] = ()
    """Failing tests not asked to be rerun (`only`): failures that stand."""


@dataclass(slots=True)
class _Tally:
    """What the reruns of one check said, run after run."""

    asked: int
    tests: tuple[str, ...]
    left_out: tuple[str, ...] = ()
    runs: list[dict[str, Any]] = field(default_factory=list)
    passed: set[str] = field(default_factory=set)

    def add(self, done: Sequence[Evidence]) -> None:
        outcomes = {test: "missing" for test in self.tests}
        for evidence in done:
            for case in evidence.test_cases:
                name = _rerun_name(evidence.check, case.name)
                if name in outcomes and outcomes[name] != "failed":
                    # A Go test with a failing subtest is failed, whatever order they come in.
                    outcomes[name] = case.outcome
        self.passed.update(t for t, outcome in outcomes.items() if outcome == "passed")
        self.runs.append(
            {
                "outcomes": outcomes,
                "argv": [list(e.result.argv if e.result else e.check.argv) for e in done],
                "verdicts": [f"{e.verdict.value}/{e.cause.value}" for e in done],
            }
        )

    @property
    def settled(self) -> bool:
        return self.passed == set(self.tests)

    def to_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "tests": list(self.tests),
            "runs": self.runs,
            "flaky": [t for t in self.tests if t in self.passed],
            "failing": [t for t in self.tests if t not in self.passed],
            "left_out": list(self.left_out),
            "not_rerun": None,
        }


def rerun_failures(
    session: Session,
    evidence: list[Evidence],
    times: int,
    *,
    env: Mapping[str, str] | None = None,
    expires: float | None = None,
    prepare: Callable[[Sequence[Check]], Sequence[Check]] = lambda checks: checks,
    only: Callable[[str], bool] | None = None,
) -> list[Evidence]:
    """`evidence` with each failed test check's failing tests rerun up to `times` times in
    `session` (`prepare` lays the session's caches over the rerun checks) and judged;
    `only`: which failing tests may be rerun (a grader's test sets), None: all. A failing
    test it leaves out stays a failure of its check."""
    if times <= 0:
        return evidence
    helper: Path | None = None
    judged: list[Evidence] = []
    for done in evidence:
        if done.check.kind is not Kind.TEST or done.cause is not Cause.EXIT_NONZERO:
            # Only a test run that failed on its own word: a report that contradicts itself
            # or a verifier that misbehaved is not a flaky test, and no rerun clears it.
            judged.append(done)
            continue
        if helper is None and done.check.tool == "pytest":
            helper = _write_plugin(session.reports)
        reruns = rerun_checks(done, helper or session.reports, only)
        if not reruns.checks:
            record = {"asked": times, "left_out": list(reruns.left_out)}
            judged.append(_with_reruns(done, {**record, "not_rerun": reruns.not_rerun}))
            continue
        tally = _Tally(times, reruns.tests, left_out=reruns.left_out)
        for _ in range(times):
            tally.add(session.run(prepare(reruns.checks), env=env, expires=expires))
            if tally.settled:
                break
        judged.append(_judge(done, tally))
    return judged


def rerun_checks(
    evidence: Evidence, helper: Path, only: Callable[[str], bool] | None = None
) -> Reruns:
    """The checks that run `evidence`'s failing tests (those `only` selects) again;
    `helper`: where the pytest plugin is (outside the workspace, readable in the sandbox)."""
    failing = [c.name for c in evidence.test_cases if c.outcome in _FAILED]
    if not failing:
        return Reruns(not_rerun="no failing test was named: nothing to run again")
    left_out = tuple(dict.fromkeys(n for n in failing if only is not None and not only(n)))
    failing = [n for n in failing if n not in left_out]
    if not failing:
        return Reruns(left_out=left_out, not_rerun="no failing test is one asked to be rerun")
    return replace(_runner_reruns(evidence.check, failing, helper), left_out=left_out)


def _runner_reruns(check: Check, failing: Sequence[str], helper: Path) -> Reruns:
    """The checks that run `failing` again, as `check`'s runner selects tests."""
    if check.tool == "pytest":
        tests = tuple(dict.fromkeys(failing))
        return Reruns(tests, (_pytest_rerun(check, tests, helper),))
    if check.tool == "go" and check.argv[1:2] == ("test",):
        by_package = _go_tests(failing)
        if by_package is None:
            return Reruns(not_rerun="a failing Go test's package could not be told from its name")
        tests = tuple(f"{p}.{t}" for p, names in by_package.items() for t in names)
        checks = tuple(
            _go_rerun(check, package, names, at)
            for at, (package, names) in enumerate(by_package.items())
        )
        return Reruns(tests, checks)
    if check.tool == "unittest" and "unittest" in check.argv:
        tests = tuple(dict.fromkeys(failing))
        rerun = _unittest_rerun(check, tests)
        if rerun is None:
            return Reruns(not_rerun="the unittest command's tests could not be named again")
        return Reruns(tests, (rerun,))
    runner = check.tool or (check.argv[0] if check.argv else "?")
    return Reruns(
        not_rerun=f"reruns select tests for pytest, unittest and go test only; {runner} is not rerun"
    )


# --------------------------------------------------------------------------- pytest


def _pytest_rerun(check: Check, tests: Sequence[str], helper: Path) -> Check:
    path = str(helper)
    if joined := check.env.get("PYTHONPATH"):
        path = f"{path}{os.pathsep}{joined}"
    env = {**check.env, "PYTHONPATH": path, TESTS_VARIABLE: json.dumps(list(tests))}
    return replace(
        check,
        name=f"{check.name}-rerun",
        argv=(*check.argv, "-p", PYTEST_PLUGIN),
        env=env,
        reason=f"rerun of {len(tests)} failing test(s) of {check.name}",
    )


def _write_plugin(reports: Path) -> Path:
    """The pytest plugin, in a directory made afresh under `reports` (which the sandbox
    shows): the runs before wrote there, so nothing already in it is written through."""
    import tempfile

    helper = Path(tempfile.mkdtemp(prefix="rerun-", dir=reports))
    helper.chmod(0o755)  # read by the sandbox's own user, where it has one
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    fd = os.open(helper / f"{PYTEST_PLUGIN}.py", flags, 0o644)
    with os.fdopen(fd, "w") as plugin:
        plugin.write(_PYTEST_PLUGIN_TEXT)
    return helper


# --------------------------------------------------------------------------- unittest

#: Options of `python -m unittest` (and of `discover`) that take a value.
_UNITTEST_VALUED = frozenset(
    {"-k", "-s", "--start-directory", "-p", "--pattern", "-t", "--top-level-directory"}
)
#: Options that select or stop, dropped: the ids select, and every one must run.
_UNITTEST_DROPPED = frozenset({"-k", "-f", "--failfast"})


def _unittest_rerun(check: Check, tests: Sequence[str]) -> Check | None:
    """`python -m unittest -v IDS` where the first run's ids resolve: `discover` names its
    tests from its top-level directory (its start directory unless `-t` says otherwise),
    so the rerun runs there; a run that named its tests already runs where it did."""
    at = check.argv.index("unittest")
    args = list(check.argv[at + 1 :])
    discover = args[:1] == ["discover"]
    kept: list[str] = []
    positional: list[str] = []
    options: dict[str, str] = {}
    rest = args[1:] if discover else args
    while rest:
        arg = rest.pop(0)
        name, _, inline = arg.partition("=")
        if arg.startswith("-") and name in _UNITTEST_VALUED:
            value = inline if "=" in arg else (rest.pop(0) if rest else "")
            options[name.lstrip("-")[:1]] = value
            continue
        if arg.startswith("-"):
            if arg not in _UNITTEST_DROPPED:
                kept.append(arg)
        else:
            positional.append(arg)
    cwd = check.cwd
    if discover:
        start = options.get("s") or (positional[0] if positional else ".")
        top = options.get("t") or (positional[2] if len(positional) > 2 else start)
        if Path(top).is_absolute():
            return None
        cwd = os.path.normpath(os.path.join(check.cwd, top))
    verbose = [a for a in kept if a not in ("-v", "--verbose", "-q", "--quiet")]
    return replace(
        check,
        name=f"{check.name}-rerun",
        argv=(*check.argv[: at + 1], *verbose, "-v", *tests),
        cwd=cwd,
        reason=f"rerun of {len(tests)} failing test(s) of {check.name}",
    )


# --------------------------------------------------------------------------- go test

#: A Go test's reported name: its package's import path, a dot, the test, its subtests.
_GO_TEST = re.compile(r"^(?P<package>.+?)\.(?P<test>(?:Test|Fuzz|Example)[^/]*)(?:/.*)?$")


def _go_tests(failing: Iterable[str]) -> dict[str, list[str]] | None:
    """The failing top-level tests by package (a failing subtest reruns its test)."""
    by_package: dict[str, list[str]] = {}
    for name in failing:
        match = _GO_TEST.match(name)
        if match is None:
            return None
        tests = by_package.setdefault(match["package"], [])
        if match["test"] not in tests:
            tests.append(match["test"])
    return by_package


def _go_rerun(check: Check, package: str, tests: Sequence[str], at: int) -> Check:
    """`go test` with the check's flags, its packages replaced by `package`, and `-run`
    naming exactly `tests`."""
    flags: list[str] = []
    rest = list(check.argv[2:])
    tail: list[str] = []
    while rest:
        arg = rest.pop(0)
        if arg == "-args" or arg == "--":
            tail = [arg, *rest]  # the test binary's own arguments: kept as they are
            break
        if not arg.startswith("-"):
            continue  # a package pattern: replaced by the one package
        name = "-" + arg.lstrip("-").partition("=")[0]
        valued = name in GO_VALUED and "=" not in arg
        value = [rest.pop(0)] if valued and rest else []
        if name != "-run":
            flags.extend([arg, *value])
    pattern = "^(" + "|".join(re.escape(t) for t in tests) + ")$"
    return replace(
        check,
        name=f"{check.name}-rerun-{at}",
        argv=(*check.argv[:2], *flags, "-run", pattern, package, *tail),
        reason=f"rerun of {len(tests)} failing test(s) of {check.name} in {package}",
    )


def _go_failed_outside_tests(evidence: Evidence, failing_packages: set[str]) -> bool:
    """Whether a package failed with no failing test of its own (a build error, a TestMain
    that exited, a panic at init): a failure with no name, which no rerun clears."""
    if evidence.result is None:
        return False
    from assay.parsers._text import json_lines

    for event in json_lines(evidence.result.stdout.text):
        package = str(event.get("Package", ""))
        if (
            event.get("Action") == "fail"
            and not event.get("Test")
            and package not in failing_packages
        ):
            return True
    return False


# --------------------------------------------------------------------------- judging


def _rerun_name(check: Check, name: str) -> str:
    """A rerun's test name as the first run's tally keys it (a Go subtest: its test)."""
    if check.tool == "go" and (match := _GO_TEST.match(name)):
        return f"{match['package']}.{match['test']}"
    return name


def _judge(evidence: Evidence, tally: _Tally) -> Evidence:
    """`evidence` with its reruns recorded: `inconclusive` / `flaky_tests` when every failure
    it had is a named test that passed on a rerun; else still `fail`, flaky ones named."""
    record = tally.to_dict()
    flaky, failing = record["flaky"], record["failing"]
    if not flaky:
        return _with_reruns(evidence, record)
    named = _named(flaky)
    if failing or tally.left_out or _unnamed_failures(evidence, tally.tests):
        note = f"{evidence.note} " if evidence.note else ""
        note += f"Flaky (failed, then passed on a rerun): {named}."
        return replace(_with_reruns(evidence, record), note=note)
    runs = len(tally.runs)
    note = (
        f"{evidence.check.name}: flaky test(s) {named} failed, then passed on "
        f"{'a rerun' if runs == 1 else f'one of {runs} reruns'} in a fresh process; a flaky "
        "test says nothing either way about the code. Make it deterministic, or rerun."
    )
    return replace(
        _with_reruns(evidence, record),
        verdict=Cause.FLAKY_TESTS.verdict,
        cause=Cause.FLAKY_TESTS,
        note=note,
    )


def _unnamed_failures(evidence: Evidence, tests: Sequence[str]) -> bool:
    """Whether `evidence` failed for more than its named failing tests."""
    if evidence.diagnostics:
        return True
    named = [c for c in evidence.test_cases if c.outcome in _FAILED]
    counts = evidence.tests
    if evidence.check.tool == "go":
        packages = {m["package"] for t in tests if (m := _GO_TEST.match(t))}
        return _go_failed_outside_tests(evidence, packages)
    return counts is not None and counts.failed + counts.errors > len(named)


def _named(tests: Sequence[str]) -> str:
    shown = ", ".join(tests[:FLAKY_IN_NOTE])
    more = len(tests) - FLAKY_IN_NOTE
    return shown + (f" (and {more} more)" if more > 0 else "")


def _with_reruns(evidence: Evidence, record: Mapping[str, Any]) -> Evidence:
    return replace(evidence, extra={**evidence.extra, "reruns": dict(record)})
