"""Aggregating checks into the status an agent or CI acts on (pure).

`aggregate` is the one place a status is decided: every rule (DESIGN.md's table, kinds the
configuration requires but nothing checks, errors of the run itself such as a workspace
that could not be removed) is an input to it, and nothing edits a status afterwards.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay._version import __version__
from assay.evidence import RUN_DEADLINE, STOPPED_BY, Evidence, TestCounts, project_first
from assay.run_record import RunRecord
from assay.verdict import Cause, Kind, Status, Verdict

#: Version of the report JSON document.
REPORT_SCHEMA = "assay.report/1"


@dataclass(frozen=True, slots=True)
class Report:
    """The verdict on a whole change."""

    status: Status
    checks: tuple[Evidence, ...]
    note: str
    """Why the status is not VERIFIED, in a sentence someone can act on; empty when it is."""
    plan: Mapping[str, Any] = field(default_factory=dict)
    """What was planned and why (from the planner), kept with the evidence."""
    record: RunRecord = field(default_factory=RunRecord)
    """How the run went apart from its checks (`assay.run_record`); `extra` in JSON."""

    @property
    def exit_code(self) -> int:
        return self.status.exit_code

    @property
    def verified(self) -> bool:
        return self.status.verified

    @property
    def extra(self) -> dict[str, Any]:
        """Deprecated: the run record as the JSON `extra` object; read `record` instead."""
        return self.record.to_dict()

    def tool_versions(self) -> dict[str, str]:
        return {e.checker.tool: e.checker.version for e in self.checks if e.checker}

    def output(self) -> str:
        """One line per check, the completion gate's `output` field."""
        return "\n".join(summary_line(e) for e in self.checks)

    def to_dict(self) -> dict[str, Any]:
        # The first five keys are the completion-gate format, in this order.
        return {
            "status": self.status.value,
            "exit_code": self.exit_code,
            "output": self.output(),
            "verified": self.verified,
            "note": self.note,
            "checks": [e.to_dict() for e in self.checks],
            "plan": dict(self.plan),
            "tool_versions": self.tool_versions(),
            "assay_version": __version__,
            "schema": REPORT_SCHEMA,
            # `extra` is the run record's key since before it was typed; kept for readers.
            **({"extra": extra} if (extra := self.record.to_dict()) else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        if data.get("schema") != REPORT_SCHEMA:
            raise ValueError(f"unsupported report schema {data.get('schema')!r}")
        return cls(
            status=Status(data["status"]),
            checks=tuple(Evidence.from_dict(c) for c in data.get("checks", [])),
            note=str(data.get("note", "")),
            plan=dict(data.get("plan") or {}),
            record=RunRecord.from_dict(data.get("extra") or {}),
        )


def summary_line(evidence: Evidence) -> str:
    duration = evidence.result.duration_s if evidence.result else 0.0
    tests = ""
    if evidence.tests is not None:
        t = evidence.tests
        errors = f", {t.errors} error{'s' if t.errors != 1 else ''}" if t.errors else ""
        tests = f" ({t.passed} passed, {t.failed} failed{errors}, {t.skipped} skipped)"
    return (
        f"{evidence.verdict.value:<12} {evidence.check.kind.value:<9} {evidence.check.name}"
        f"{tests} [{evidence.cause.value}, {duration:.2f}s]"
    )


def aggregate(
    checks: Sequence[Evidence],
    *,
    require_tests: bool = True,
    missing_kinds: Iterable[Kind] = (),
    config_errors: Sequence[str] = (),
    run_errors: Sequence[str] = (),
    plan: Mapping[str, Any] | None = None,
    record: RunRecord | None = None,
    empty_note: str = "nothing to run was found",
) -> Report:
    """DESIGN.md's status rules, in order:

    - nothing run: INDETERMINATE when the run had an error, else UNVERIFIED (`empty_note`);
    - any check `fail` -> FAILED (errors of the run are named in the note, never hidden);
    - any check `inconclusive`, or any error of the run (`run_errors`: a workspace that
      could not be removed, assay not able to finish) -> INDETERMINATE;
    - any check `unverified`, no test executed (when `require_tests`), or a kind the
      configuration requires that nothing checks (`missing_kinds`) -> UNVERIFIED;
    - tampering the verdict is not independent of (`tampering_counted`: what `--base`
      found and `--protect` did not undo, protected files the change's code rewrote while
      the checks ran) -> INDETERMINATE, the tampering in the note;
    - a test that passed at the base and that the change's run did not execute
      (`not_executed_at_base`) -> INDETERMINATE, the tests in the note;
    - else VERIFIED.

    `config_errors` (configuration that could not be read) and counted tampering are
    named in the note of any non-VERIFIED report with checks: they are often why the
    checks did not do what was expected (with no checks, `empty_note` says so already)."""
    checks = tuple(checks)
    record = record or RunRecord()
    errors = tuple(e for e in run_errors if e)
    tampered = tampering_counted(record)
    status, note = _status(checks, require_tests, frozenset(missing_kinds), errors, empty_note)
    if tampered:
        said = _tampering_note(tampered, protected=record.protected is not None)
        if status is Status.VERIFIED:
            status, note = Status.INDETERMINATE, said
        elif checks:
            note = f"{note} {said}".strip()
    unexecuted = not_executed_at_base(record)
    if status is Status.VERIFIED and unexecuted:
        status, note = Status.INDETERMINATE, _not_executed_note(unexecuted)
    elif status is not Status.VERIFIED and checks and unexecuted:
        failed = frozenset(e.check.name for e in checks if e.verdict is Verdict.FAIL)
        note = f"{note} {_not_executed_note(unexecuted, failed)}".strip()
    if status is not Status.VERIFIED and checks and config_errors:
        note = f"{note} Unreadable configuration: {'; '.join(config_errors)}".strip()
    return Report(status=status, checks=checks, note=note, plan=dict(plan or {}), record=record)


#: Most of the base's unexecuted tests named in a note; the run record has every one.
NOT_EXECUTED_IN_NOTE = 10


def not_executed_at_base(record: RunRecord | None) -> list[tuple[str, str]]:
    """Tests that passed at the base and that the change's run did not execute
    (`record.base_tests`, `assay.base_tests`), as (check, `test (now)`). Not seen run is
    not seen failing: such a change is INDETERMINATE, not FAILED."""
    found = ((record and record.base_tests) or {}).get("not_executed") or []
    return [
        (str(t.get("check")), f"{t.get('test')} ({t.get('now')})")
        for t in found
        if isinstance(t, Mapping)
    ]


#: A base run known only by its counts: one entry for all it lost (`assay.base_tests`).
_COUNTED = re.compile(r"\d+ of its \d+ passing tests ")


def _not_executed_note(found: list[tuple[str, str]], failed: frozenset[str] = frozenset()) -> str:
    """The unexecuted tests named, but those a check that failed (`failed`) did not run at
    all counted: a failed run that stopped early leaves out the rest (BurntSushi/toml's go
    test, ended by a panic in one test, named ten of the 1,060 it never reached). A test it
    ran and skipped is still named."""
    folded = [
        (check, test)
        for check, test in found
        if check in failed and test.endswith(" (missing)") and not _COUNTED.match(test)
    ]
    kept = set(found) - set(folded)
    listed = [f"{check}: {test}" for check, test in found if (check, test) in kept]
    lost = Counter(check for check, _ in folded)
    said = []
    if listed:
        shown = "; ".join(listed[:NOT_EXECUTED_IN_NOTE])
        extra = len(listed) - NOT_EXECUTED_IN_NOTE
        more = f" (and {extra} more)" if extra > 0 else ""
        # Not counted here: a base run known only by its counts is one entry for all it lost.
        said.append(
            f"Tests that passed at the base were not executed by the change's run: {shown}{more}."
        )
    said.extend(
        f"{check} failed, and its run did not reach {n} test{'s' * (n != 1)} that passed at the base."
        for check, n in lost.items()
    )
    return " ".join(said)


#: Most tampering findings named in a note; the run record has every one.
TAMPERING_IN_NOTE = 5


def tampering_counted(record: RunRecord) -> list[str]:
    """The tampering a verdict cannot be trusted past, one line each:

    - every signal `--base` found (`record.tampering`), except those about a path that
      `--protect` restored from the base or removed (`record.protected`): the checks ran
      on the base's file, whatever the change did to it;
    - every protected file of the base found modified or deleted after the change's code
      ran (`record.rewritten`): put back before the next stage, but written by code that
      meant its verdict to be read from them;
    - every code file it added that the change's tree does not hold (`added_code`), and
      every Python module it added where the protected files are (`is_runner_loaded`): the
      run that was under way when it was written may have imported it as it collected.
      Other protected files it added are shown, not counted here: tests and snapshot
      writers add files of their own.
    """
    undone: set[str] = set()
    if record.protected is not None:
        undone = {*record.protected.restored, *record.protected.removed}
    found = [signal_line(s) for s in _signals(record) if str(s.get("path", "")) not in undone]
    for rewrite in record.rewritten:
        from assay.protect import is_runner_loaded  # with every declaration: `run` needs none

        found += [f"rewritten after {rewrite.after}: {path}" for path in rewrite.restored]
        found += [
            f"added after {rewrite.after}: {path}"
            for path in rewrite.removed
            if is_runner_loaded(path)
        ]
        found += [f"added after {rewrite.after}: {path}" for path in rewrite.added_code]
    return found


def signal_line(signal: Mapping[str, Any]) -> str:
    """`kind path[:line]: detail`, one tampering signal as a reader is shown it."""
    line = signal.get("line")
    where = f"{signal.get('path', '')}{f':{line}' if isinstance(line, int) else ''}"
    detail = str(signal.get("detail") or "").strip()
    return f"{signal.get('kind', 'tampering')} {where}" + (f": {detail}" if detail else "")


def _signals(record: RunRecord) -> list[Mapping[str, Any]]:
    signals = (record.tampering or {}).get("signals") or []
    return [s for s in signals if isinstance(s, Mapping)]


def _tampering_note(found: list[str], *, protected: bool) -> str:
    shown = "; ".join(found[:TAMPERING_IN_NOTE])
    if len(found) > TAMPERING_IN_NOTE:
        shown += f" (and {len(found) - TAMPERING_IN_NOTE} more)"
    if protected:
        return f"The change's code reached what decides its own verdict: {shown}."
    return (
        f"The change touched what decides its own verdict: {shown}. "
        "Verify with --base REF --protect to judge it by the base's tests."
    )


def _status(
    checks: tuple[Evidence, ...],
    require_tests: bool,
    missing_kinds: frozenset[Kind],
    run_errors: tuple[str, ...],
    empty_note: str,
) -> tuple[Status, str]:
    if not checks:
        if run_errors:
            return Status.INDETERMINATE, _run_errors(run_errors)
        return Status.UNVERIFIED, _sentence(empty_note)
    failed = _with(checks, Verdict.FAIL)
    inconclusive = _with(checks, Verdict.INCONCLUSIVE)
    if failed:
        note = _explain(failed)
        if inconclusive:
            # A hang beside a failure is still news: the test that hung is named.
            note += f" Also inconclusive: {_explain(inconclusive)}"
        return Status.FAILED, _also(note, run_errors)
    if inconclusive:
        return Status.INDETERMINATE, _also(_explain(inconclusive), run_errors)
    if run_errors:
        return Status.INDETERMINATE, _run_errors(run_errors)
    unverified = _with(checks, Verdict.UNVERIFIED)
    if unverified:
        return Status.UNVERIFIED, _explain(unverified)
    if require_tests and not any(_executed_tests(e) for e in checks):
        return (
            Status.UNVERIFIED,
            "No test check executed any test, so nothing shows the code works.",
        )
    if missing_kinds:
        kinds = ", ".join(sorted(k.value for k in missing_kinds))
        return (
            Status.UNVERIFIED,
            f"the configuration requires {kinds} but no command for it was found.",
        )
    if not all(e.verdict.passed for e in checks):  # defensive: every verdict handled above
        return Status.INDETERMINATE, "A check ended with an unexpected verdict."
    return Status.VERIFIED, ""


def _run_errors(errors: tuple[str, ...]) -> str:
    return " ".join(_sentence(e) for e in errors)


def _also(note: str, run_errors: tuple[str, ...]) -> str:
    if not run_errors:
        return note
    return f"{note} The run also had an error: {_run_errors(run_errors)}"


def status_of(evidence: Evidence, *, run_errors: Sequence[str] = ()) -> Status:
    """The status of one check run on its own (`assay run`): the same rules, tests not
    required (the command's own verdict already says whether it executed any)."""
    return aggregate([evidence], require_tests=False, run_errors=run_errors).status


def _with(checks: Iterable[Evidence], verdict: Verdict) -> list[Evidence]:
    return [e for e in checks if e.verdict is verdict]


def _executed_tests(evidence: Evidence) -> bool:
    return (
        evidence.check.kind is Kind.TEST
        and evidence.cause is Cause.EXIT_ZERO
        and evidence.tests is not None
        and evidence.tests.executed > 0
    )


#: Which failing check's note leads: a build's failure explains the rest, then what the
#: tests say of the code, before a type checker's or a linter's findings (semver's ruff,
#: failing on its docs, had pushed the failing test to "Also").
_LEADS = (Kind.BUILD, Kind.TEST, Kind.TYPECHECK, Kind.LINT)


def _explain(problems: list[Evidence]) -> str:
    # A check the run's overall deadline cut short says less than one that hung by itself.
    problems = sorted(
        problems, key=lambda e: (e.extra.get(STOPPED_BY) == RUN_DEADLINE, _lead(e.check.kind))
    )
    first = problems[0]
    what = first.note or _default_note(first)
    others = [_named(e) for e in problems[1:]]
    if not others:
        return _sentence(what)
    return _sentence(what) + f" Also {first.verdict.value}: {', '.join(others)}."


#: The most characters of why a check other than the first failed, in the run's note.
_BRIEF_CHARS = 120


def _named(evidence: Evidence) -> str:
    """A check beside the one the note leads with: its name, and why it failed (more-
    itertools' "Also fail: make-lint" said nothing of black's finding)."""
    if evidence.verdict is not Verdict.FAIL:
        return evidence.check.name
    how, said = _failure(evidence)
    why = said if how is None else f"{how}: {said}" if said else how
    if len(why) > _BRIEF_CHARS:
        why = why[: _BRIEF_CHARS - 3].rstrip() + "..."
    return f"{evidence.check.name} ({why})"


def _lead(kind: Kind) -> int:
    return _LEADS.index(kind) if kind in _LEADS else len(_LEADS)


def _default_note(evidence: Evidence) -> str:
    name = evidence.check.name
    if evidence.verdict is not Verdict.FAIL:
        return f"{name}: {evidence.verdict.value} ({evidence.cause.value})"
    how, said = _failure(evidence)
    if how is None:
        return f"{name} failed: {said}"
    return f"{name} failed ({how}): {said[:200]}" if said else f"{name} failed ({how})"


def _failure(evidence: Evidence) -> tuple[str | None, str]:
    """Why a failed check failed: (None, its first diagnostic, the project's own before one
    in an installed package, or its failing tests), else (how it exited, the first line of
    what it printed)."""
    first_diag = project_first(evidence.diagnostics)
    tests_failed = evidence.tests is not None and evidence.tests.any_failed
    if first_diag is not None and not (tests_failed and first_diag.severity != "error"):
        # A compiler's warning beside failing tests (rustc's unused import) is not why
        # they failed: the tests are.
        where = f"{first_diag.place}: " if first_diag.file else ""
        said = f"{where}{first_diag.message}"
        if tests_failed and evidence.tests is not None:
            # What did not build ran no test: the tests that failed beside it failed on
            # their own (hcl: a vet error in one package's tests led the note, and the 27
            # failing tests of the package a change broke went unsaid).
            said += f"; and {_failed_tests(evidence, evidence.tests)}"
        return None, said
    if evidence.tests is not None and evidence.tests.any_failed:
        return None, _failed_tests(evidence, evidence.tests)
    from assay.formats.failures import relative  # the workspace's path means nothing

    exit_code = evidence.result.exit_code if evidence.result else None
    how = f"exited {exit_code}" if exit_code is not None else evidence.cause.value
    return how, relative(evidence, headline(evidence.reason))


def _failed_tests(evidence: Evidence, tests: TestCounts) -> str:
    """How many tests failed, which did first, and whether the run stopped there: "1 of 1
    tests failed" alone reads as if the suite held a single test."""
    from assay.formats.failures import (
        COLLECTION_FAILURE,
        FAILED_OUTCOMES,
        INTERNAL_ERROR,
        PYTEST_INTERNAL,
        fail_fast_flag,
        relative,
    )

    failed = [c for c in evidence.test_cases if c.outcome in FAILED_OUTCOMES]
    prefix = f"{COLLECTION_FAILURE}: "
    if failed and not tests.passed and all((c.message or "").startswith(prefix) for c in failed):
        # Modules that could not be collected ran no test: "1 of 1 tests failed" said
        # nothing of why (h11's, termcolor's collection errors).
        shown = relative(evidence, failed[0].name)
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        why = headline((failed[0].message or "")[len(prefix) :])
        return f"{shown} could not be collected{more}: {relative(evidence, why)}"
    if [c.name for c in failed] == [PYTEST_INTERNAL]:
        # pytest itself crashed, and ended the run: naming its report's entry said nothing.
        why = relative(evidence, (failed[0].message or "").removeprefix(INTERNAL_ERROR + ": "))
        return f"pytest stopped on an internal error: {why}"
    said = f"{tests.failed + tests.errors} of {tests.executed} tests failed"
    first = next((c.name for c in failed), None)
    if first is not None:
        shown = relative(evidence, first)
        shown = shown if len(shown) <= 160 else shown[:157] + "..."
        said += f", the first {shown}" if tests.failed + tests.errors > 1 else f": {shown}"
    stopped_by = fail_fast_flag(evidence.check.argv)
    if stopped_by is not None:
        said += f"; {stopped_by} stops the run at its first failure"
    return said


#: A line that states an error (`error: ...`, `error[E0308]: ...`, `x.c:3:1: error: ...`,
#: `fatal: ...`, oxc's `[PARSE_ERROR] ...` under vite's `Transform failed`), as against the progress a build prints first ("Compiling", "Blocking
#: waiting for file lock").
_ERROR_LINE = r"(?i)^(?:error|fatal)\b|^\S+:\d+(?::\d+)?: (?:fatal )?error\b|^\[[A-Z_]*ERROR\] "
#: The location line under an error: rustc's and clippy's `  --> src/lib.rs:252:33`, and
#: rolldown's (ariadne's) `╭─[ src/cookie/parse.ts:34:28 ]`.
_LOCATION = r"^\s*(?:--> (\S+)|╭─\[ (\S+) \])$"


def headline(reason: str) -> str:
    """The line of a failure's output that says what went wrong: the first error line, with
    the location rustc prints under it; else the first line that is not blank."""
    import re  # only a failure without findings needs it

    # Not npm's and pnpm's banner (`> pkg@1.0.0 lint`, then `> the command`): it says what
    # ran, never what went wrong.
    from assay.parsers._text import strip_ansi

    lines = [
        ln.strip()
        for ln in strip_ansi(reason).splitlines()
        if ln.strip() and not ln.startswith("> ")
    ]
    if marked := _marked_finding(lines):  # before yarn's `error Command failed` after it
        return marked
    for i, line in enumerate(lines):
        if re.match(_ERROR_LINE, line):
            if line.endswith(":") and i + 1 < len(lines):  # rolldown's `Build failed with 1 error:`
                line = f"{line} {lines[i + 1]}"
                i += 1
            where = next(
                (m[1] or m[2] for ln in lines[i + 1 : i + 3] if (m := re.match(_LOCATION, ln))),
                None,
            )
            return f"{where}: {line}" if where else line
    return lines[0] if lines else ""


#: A linter's listing by file: a header line naming the file, then its findings at their
#: places. eslint-formatter-pretty's (xo's) header is `src/browser.js:197:4` and its error
#: `✖  222:76  Unexpected whitespace.  semi-spacing`; eslint's own (stylish) header is the
#: file's path and its error `1:622  error  Missing space before value  key-spacing`.
_LISTED_FILE = r"^(\S+):\d+:\d+$|^(/\S+|\S+\.[A-Za-z]\w*)$"
_LISTED_ERROR = r"^(?:[✖✗×]\s+(\d+:\d+)|(\d+:\d+)\s+error)\s+(.+?)(?:\s{2,}\S+)?$"


def _marked_finding(lines: list[str]) -> str | None:
    """The first error a linter listed by file, at its place (debug's xo listed sixteen
    warnings before its one error, and the note named the first warning)."""
    import re

    file = None
    for line in lines:
        if header := re.match(_LISTED_FILE, line):
            file = header[1] or header[2]
        elif (error := re.match(_LISTED_ERROR, line)) and file is not None:
            return f"{file}:{error[1] or error[2]}: {error[3]}"
    return None


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    return text if text.endswith((".", "!", "?", ")")) else text + "."
