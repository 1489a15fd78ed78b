"""Aggregation into a status, and the completion-gate JSON."""

from __future__ import annotations

import json

from assay.evidence import Check, Diagnostic, Evidence, TestCounts, evidence_for
from assay.report import Report, aggregate
from assay.verdict import Cause, Kind, Status


def ev(kind: Kind, cause: Cause, tests: TestCounts | None = None, name: str = "c") -> Evidence:
    return evidence_for(Check(name=name, kind=kind, argv=("x",)), cause, tests=tests)


PASSING_TESTS = ev(Kind.TEST, Cause.EXIT_ZERO, TestCounts(passed=2), name="pytest")
LINT_OK = ev(Kind.LINT, Cause.EXIT_ZERO, name="ruff")


def test_all_pass_with_tests_is_verified() -> None:
    report = aggregate([LINT_OK, PASSING_TESTS])
    assert report.status is Status.VERIFIED and report.verified and report.exit_code == 0
    assert report.note == ""


def test_any_fail_is_failed_even_beside_inconclusive() -> None:
    report = aggregate(
        [
            PASSING_TESTS,
            ev(Kind.TEST, Cause.TIMEOUT),
            ev(Kind.LINT, Cause.EXIT_NONZERO, name="ruff"),
        ]
    )
    assert report.status is Status.FAILED and report.exit_code == 1
    assert "ruff failed" in report.note


def test_a_hang_beside_a_failure_is_named_in_the_note_too() -> None:
    """wcwidth's hung test was said nowhere but in its check's note: pylint had failed."""
    hung = evidence_for(
        Check(name="pytest", kind=Kind.TEST, argv=("x",)),
        Cause.TIMEOUT,
        note="pytest was killed at its deadline, while running tests/test_a.py::test_spin",
    )
    report = aggregate([hung, ev(Kind.LINT, Cause.EXIT_NONZERO, name="pylint")])
    assert report.status is Status.FAILED
    assert report.note.startswith("pylint failed"), report.note
    assert report.note.endswith(
        "Also inconclusive: pytest was killed at its deadline, while running "
        "tests/test_a.py::test_spin."
    ), report.note


def test_a_failing_test_leads_the_note_before_a_linter_and_a_build_before_both() -> None:
    """semver's ruff failed on its docs; the test the change broke was said only as "Also"."""
    lint = ev(Kind.LINT, Cause.EXIT_NONZERO, name="ruff")
    test = ev(Kind.TEST, Cause.EXIT_NONZERO, TestCounts(passed=2, failed=1), name="pytest")
    build = ev(Kind.BUILD, Cause.EXIT_NONZERO, name="compileall")
    assert aggregate([lint, test]).note.startswith("pytest failed")
    assert aggregate([lint, test]).note.endswith("Also fail: ruff (exit_nonzero).")
    assert aggregate([lint, test, build]).note.startswith("compileall failed")


def test_each_other_failing_check_says_why_it_failed() -> None:
    """more-itertools' "Also fail: make-lint" said nothing of what black had found."""
    test = ev(Kind.TEST, Cause.EXIT_NONZERO, TestCounts(passed=2, failed=1), name="pytest")
    lint = evidence_for(
        Check(name="make-lint", kind=Kind.LINT, argv=("make", "check")),
        Cause.EXIT_NONZERO,
        reason="black --check .\nwould reformat pkg/more.pyi\n" + "x" * 300,
    )
    typed = evidence_for(
        Check(name="mypy", kind=Kind.TYPECHECK, argv=("mypy", "pkg")),
        Cause.EXIT_NONZERO,
        diagnostics=(Diagnostic("Missing type annotation", file="pkg/a.py", line=3),),
    )
    note = aggregate([lint, test, typed]).note
    assert note.startswith("pytest failed: 1 of 3 tests failed."), note
    assert "Also fail: mypy (pkg/a.py:3: Missing type annotation), make-lint (" in note, note
    assert "would reformat pkg/more.pyi" in note or "black --check" in note, note
    assert len(note) < 400, note


def test_a_failure_is_named_by_its_first_error_not_the_warnings_before_it() -> None:
    """minimist's `npm run lint` with a `while (true) {}`: eslint lists 53 warnings
    (no-magic-numbers in example/parse.js first) around the 3 errors that failed it."""
    warning = Diagnostic("No magic number: 2", file="example/parse.js", line=3, severity="warning")
    error = Diagnostic("Unexpected constant condition", file="index.js", line=14)
    installed = Diagnostic("Bad", file="node_modules/x/a.js", line=1)
    lint = evidence_for(
        Check(name="npm-lint", kind=Kind.LINT, argv=("npm", "run", "lint")),
        Cause.EXIT_NONZERO,
        diagnostics=(warning, installed, error),
    )
    note = aggregate([lint]).note
    assert note.startswith("npm-lint failed: index.js:14: Unexpected constant condition"), note
    installed_warning = Diagnostic("Old", file="node_modules/x/a.js", line=1, severity="warning")
    only_warnings = evidence_for(
        lint.check, Cause.EXIT_NONZERO, diagnostics=(installed_warning, warning), reason="exit 1"
    )
    note = aggregate([only_warnings]).note
    assert note.startswith("npm-lint failed: example/parse.js:3: No magic number: 2"), note


def test_failing_tests_not_a_compilers_warning_say_why_a_test_check_failed() -> None:
    """scopeguard with a wrong value: cargo test's note named rustc's `unused import`
    warning, not the test that failed; a compile error beside them still leads."""
    from assay.evidence import TestCase

    warning = Diagnostic(
        "unused import: `catch_unwind`", file="src/lib.rs", line=497, severity="warning"
    )
    failing = TestCase(name="tests::test_only_dropped_by_closure_when_run", outcome="failed")
    check = Check(name="cargo-test", kind=Kind.TEST, argv=("cargo", "test"))
    tests = TestCounts(passed=20, failed=1)
    run = evidence_for(
        check, Cause.EXIT_NONZERO, diagnostics=(warning,), tests=tests, test_cases=(failing,)
    )
    note = aggregate([run]).note
    assert note.startswith(
        "cargo-test failed: 1 of 21 tests failed: tests::test_only_dropped_by_closure_when_run"
    ), note
    error = Diagnostic("mismatched types", file="src/lib.rs", line=12)
    broken = evidence_for(
        check, Cause.EXIT_NONZERO, diagnostics=(warning, error), tests=tests, test_cases=(failing,)
    )
    assert aggregate([broken]).note.startswith("cargo-test failed: src/lib.rs:12: mismatched")


def test_inconclusive_without_fail_is_indeterminate() -> None:
    report = aggregate([LINT_OK, ev(Kind.TEST, Cause.TIMEOUT)])
    assert report.status is Status.INDETERMINATE and report.exit_code == 3


def test_unverified_cases() -> None:
    assert aggregate([]).status is Status.UNVERIFIED
    assert aggregate([LINT_OK]).status is Status.UNVERIFIED  # no tests ran
    assert aggregate([LINT_OK], require_tests=False).status is Status.VERIFIED
    missing = aggregate([PASSING_TESTS, ev(Kind.TYPECHECK, Cause.TOOLCHAIN_MISSING)])
    assert missing.status is Status.UNVERIFIED and missing.exit_code == 4


def test_gate_json_first_five_keys_and_round_trip() -> None:
    report = aggregate([LINT_OK, PASSING_TESTS], plan={"checks": []})
    data = json.loads(json.dumps(report.to_dict()))
    assert list(data)[:5] == ["status", "exit_code", "output", "verified", "note"]
    assert isinstance(data["output"], str) and isinstance(data["verified"], bool)
    assert data["schema"].startswith("assay.report/")
    assert Report.from_dict(data).to_dict() == data


# --------------------------------------------------------------------------- every rule in aggregate


def test_a_required_kind_nothing_checks_is_unverified() -> None:
    report = aggregate([LINT_OK, PASSING_TESTS], missing_kinds={Kind.TYPECHECK})
    assert report.status is Status.UNVERIFIED
    assert report.note == "the configuration requires typecheck but no command for it was found."
    # Only a report that would otherwise be VERIFIED is explained by the missing kind.
    failing = aggregate([ev(Kind.LINT, Cause.EXIT_NONZERO)], missing_kinds={Kind.TYPECHECK})
    assert failing.status is Status.FAILED and "typecheck" not in failing.note


def test_unreadable_configuration_is_named_only_when_not_verified() -> None:
    errors = ("pyproject.toml: bad TOML",)
    ok = aggregate([LINT_OK, PASSING_TESTS], config_errors=errors)
    assert ok.status is Status.VERIFIED and ok.note == ""
    bad = aggregate([ev(Kind.TEST, Cause.TIMEOUT)], config_errors=errors)
    assert bad.note.endswith("Unreadable configuration: pyproject.toml: bad TOML")


def test_an_error_of_the_run_is_never_verified_and_never_hides_a_failure() -> None:
    cleanup = "the workspace /w could not be removed: EBUSY"
    good = aggregate([LINT_OK, PASSING_TESTS], run_errors=[cleanup])
    assert good.status is Status.INDETERMINATE and good.note == cleanup + "."
    assert len(good.checks) == 2  # the evidence stays
    failed = aggregate([ev(Kind.LINT, Cause.EXIT_NONZERO, name="ruff")], run_errors=[cleanup])
    assert failed.status is Status.FAILED
    assert "ruff failed" in failed.note and cleanup in failed.note
    nothing = aggregate([], run_errors=["assay could not finish (OSError: disk full)"])
    assert nothing.status is Status.INDETERMINATE and "disk full" in nothing.note
    unverified = aggregate([ev(Kind.TEST, Cause.TOOLCHAIN_MISSING)], run_errors=[cleanup])
    assert unverified.status is Status.INDETERMINATE


def test_one_check_on_its_own_has_the_status_of_its_verdict() -> None:
    from assay.report import status_of

    assert status_of(LINT_OK) is Status.VERIFIED  # tests are not required of one command
    assert status_of(ev(Kind.TEST, Cause.EXIT_NONZERO)) is Status.FAILED
    assert status_of(ev(Kind.TEST, Cause.TIMEOUT)) is Status.INDETERMINATE
    assert status_of(ev(Kind.TEST, Cause.TOOLCHAIN_MISSING)) is Status.UNVERIFIED
    assert status_of(LINT_OK, run_errors=["left behind"]) is Status.INDETERMINATE


def test_the_run_record_round_trips_under_extra() -> None:
    from assay.run_record import CacheHit, Restored, RunRecord

    record = RunRecord(
        sandbox="bwrap 0.8.0",
        protected=Restored(("tests/test_a.py",), ()),
        skipped=("pytest",),
        cached=CacheHit(stored_at=1.5, key="k"),
        limits={"boundary": True},
        install=(PASSING_TESTS,),
        unknown={"from_a_newer_assay": 1},
    )
    data = json.loads(json.dumps(aggregate([LINT_OK], record=record).to_dict()))
    assert data["extra"]["sandbox"] == "bwrap 0.8.0"
    assert data["extra"]["protected"] == {"restored": ["tests/test_a.py"], "removed": []}
    assert data["extra"]["cached"] == {"stored_at": 1.5, "key": "k"}
    assert "cleanup_error" not in data["extra"] and "swept" not in data["extra"]
    assert Report.from_dict(data).record == record
    assert "extra" not in aggregate([LINT_OK]).to_dict()  # an empty record is left out


# --------------------------------------------------------------------------- tampering


def _tampering(*signals: tuple[str, str]) -> dict[str, object]:
    return {
        "tampered": bool(signals),
        "touched": [path for _, path in signals],
        "signals": [{"kind": k, "path": p, "detail": "assert True"} for k, p in signals],
    }


def test_tampering_base_alone_finds_keeps_the_status_from_verified() -> None:
    from assay.run_record import RunRecord

    record = RunRecord(tampering=_tampering(("assertion_weakened", "tests/test_a.py")))
    report = aggregate([LINT_OK, PASSING_TESTS], record=record)
    assert report.status is Status.INDETERMINATE and report.exit_code == 3
    assert "assertion_weakened tests/test_a.py: assert True" in report.note
    assert "--protect" in report.note
    # Named beside a failure too, which keeps deciding the status.
    failed = aggregate([ev(Kind.TEST, Cause.EXIT_NONZERO)], record=record)
    assert failed.status is Status.FAILED and "tests/test_a.py" in failed.note
    clean = aggregate([LINT_OK, PASSING_TESTS], record=RunRecord(tampering=_tampering()))
    assert clean.status is Status.VERIFIED


def test_tampering_protect_undid_does_not_count_and_the_rest_does() -> None:
    from assay.run_record import Restored, RunRecord

    record = RunRecord(
        tampering=_tampering(
            ("protected_modified", "tests/test_a.py"), ("code_reaches_runner", "calc.py")
        ),
        protected=Restored(("tests/test_a.py",), ()),
    )
    report = aggregate([LINT_OK, PASSING_TESTS], record=record)
    assert report.status is Status.INDETERMINATE
    assert "calc.py" in report.note and "tests/test_a.py" not in report.note
    undone = RunRecord(
        tampering=_tampering(("protected_modified", "tests/test_a.py")),
        protected=Restored(("tests/test_a.py",), ()),
    )
    assert aggregate([LINT_OK, PASSING_TESTS], record=undone).status is Status.VERIFIED


def test_protected_files_rewritten_while_the_change_ran_are_never_verified() -> None:
    from assay.run_record import Restored, Rewritten, RunRecord

    rewritten = RunRecord(
        protected=Restored(),
        rewritten=(Rewritten("the install steps", ("tests/test_a.py",), ()),),
    )
    report = aggregate([LINT_OK, PASSING_TESTS], record=rewritten)
    assert report.status is Status.INDETERMINATE
    assert "rewritten after the install steps: tests/test_a.py" in report.note
    # Files a run adds (snapshots, scratch files) are shown, not counted.
    added = RunRecord(
        protected=Restored(), rewritten=(Rewritten("the check stage", (), ("tests/out.txt",)),)
    )
    assert aggregate([LINT_OK, PASSING_TESTS], record=added).status is Status.VERIFIED
    data = json.loads(json.dumps(aggregate([LINT_OK], record=rewritten).to_dict()))
    assert data["extra"]["rewritten"] == [
        {"after": "the install steps", "restored": ["tests/test_a.py"], "removed": []}
    ]
    assert Report.from_dict(data).record == rewritten


def test_tampering_lines_show_every_signal_and_whether_it_was_undone() -> None:
    from assay.formats import tampering_lines
    from assay.run_record import Restored, Rewritten, RunRecord

    record = RunRecord(
        tampering=_tampering(("protected_deleted", "tests/test_a.py")),
        protected=Restored(("tests/test_a.py",), ()),
        rewritten=(Rewritten("the build stage", (), ("tests/out/result.json",)),),
    )
    lines = tampering_lines(aggregate([PASSING_TESTS], record=record))
    assert lines == [
        "tampering: protected_deleted tests/test_a.py: assert True (restored from the base)",
        "tampering: added after the build stage: tests/out/result.json (removed)",
        "tampering: not counted against the verdict: undone, or files a run adds",
    ]
    assert tampering_lines(aggregate([PASSING_TESTS])) == []


# debug 4.4.3's `npm run lint` (xo): sixteen warnings, then the one error that failed it.
XO_OUTPUT = """\
> debug@4.4.3 lint
> xo

  src/common.js:53:2
  \u26a0   53:2   Missing JSDoc return description.                    valid-jsdoc

  src/browser.js:197:4
  \u26a0  197:4   Missing JSDoc parameter description for namespaces.  valid-jsdoc
  \u2716  222:76  Unexpected whitespace before semicolon.              semi-spacing

  16 warnings
  1 error
"""


def test_a_pretty_linters_headline_is_its_first_error_not_its_first_warning() -> None:
    from assay.report import headline

    assert headline(XO_OUTPUT) == "src/browser.js:222:76: Unexpected whitespace before semicolon."
    # No marked error: the first line past npm's banner, as before.
    assert headline(XO_OUTPUT.replace("\u2716", "\u26a0")) == "src/common.js:53:2"


# prop-types' `yarn run lint` (eslint's own stylish listing), then yarn's own error line.
STYLISH_UNDER_YARN = """\
yarn run v1.22.22
$ eslint .

/work/prop-types.js
     1:622  warning  Unexpected console statement                              no-console
   106:33   error    Missing space before value for key './lib/has'            key-spacing

\u2716 2 problems (1 error, 1 warning)

error Command failed with exit code 1.
info Visit https://yarnpkg.com/en/docs/cli/run for documentation about this command.
"""


def test_eslints_first_error_heads_its_failure_not_the_wrappers_error_line() -> None:
    from assay.report import headline

    assert headline(STYLISH_UNDER_YARN) == (
        "/work/prop-types.js:106:33: Missing space before value for key './lib/has'"
    )
    # Without eslint's error, yarn's own error line, as before.
    warnings_only = STYLISH_UNDER_YARN.replace("  error  ", "warning")
    assert headline(warnings_only) == "error Command failed with exit code 1."


# cookie-es's build (obuild, rolldown) on a syntax error: the error line introduces the
# error, which follows with its place in a box (colours as rolldown prints them).
ROLLDOWN_UNDER_PNPM = """\
> cookie-es@3.1.1 build /w
> obuild

[log] Building `cookie-es` (`/w`)
 ELIFECYCLE  Command failed with exit code 1.
file:///w/node_modules/rolldown/dist/shared/error-DBGOT6sf.mjs:48
\tconst wrapper = new Error(summary);
\t                ^

Error: Build failed with 1 error:

\x1b[31m[PARSE_ERROR] Error:\x1b[0m Unexpected token
    \x1b[38;5;246m╭\x1b[0m\x1b[38;5;246m─\x1b[0m\x1b[38;5;246m[\x1b[0m src/cookie/parse.ts:34:28 \x1b[38;5;246m]\x1b[0m
    \x1b[38;5;246m│\x1b[0m
"""


def test_an_error_line_that_introduces_the_error_is_quoted_with_it_and_its_place() -> None:
    from assay.report import headline

    assert headline(ROLLDOWN_UNDER_PNPM) == (
        "src/cookie/parse.ts:34:28: Error: Build failed with 1 error: "
        "[PARSE_ERROR] Error: Unexpected token"
    )


def test_a_summary_line_says_errors_apart_from_failures() -> None:
    """A collection error is an error, as the JSON's counts say: not "1 failed"."""
    from assay.report import summary_line

    errored = ev(Kind.TEST, Cause.EXIT_NONZERO, TestCounts(passed=3, errors=1), name="pytest")
    assert "(3 passed, 0 failed, 1 error, 0 skipped)" in summary_line(errored)
    failed = ev(Kind.TEST, Cause.EXIT_NONZERO, TestCounts(passed=3, failed=2), name="pytest")
    assert "(3 passed, 2 failed, 0 skipped)" in summary_line(failed)
