"""A jest or vitest run stopped at assay's deadline names the test (vitest: the file) it
hung in.

Both write their report when the run ends and print a file's results when the file ends:
a run stopped in a hung test left neither, and its note said only "npm-test printed
nothing for 60 s and was stopped (a hang)". A reporter of assay's records each test as it
starts and ends (`assay.js_test_starts`). Real jest and vitest (npm's global installs, as
CI has them) under real bubblewrap, through `verify`; the reporter's own file and record
checked apart.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.js_test_starts import JEST_REPORTER_SUFFIX, hung, jest_reporter_words
from assay.pipeline import VerifyOptions, verify
from assay.report import Report
from assay.verdict import Cause, Kind, Status
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write

#: A deadline long enough for jest to start and run the quick tests on a loaded machine.
DEADLINE_S = 30.0

QUICK = "test('adds', () => { expect(1 + 1).toBe(2); });\n"
HANGS = (
    "test('quick', () => { expect(2).toBe(2); });\n"
    "describe('spinner', () => {\n"
    "  test('spins forever', () => { while (true) {} });\n"
    "});\n"
    "test('after', () => { expect(3).toBe(3); });\n"
)


def _project(script: str, tests: dict[str, str]) -> dict[str, str]:
    return {
        "package.json": json.dumps(
            {"name": "spin", "version": "1.0.0", "scripts": {"test": script}}
        ),
        "__tests__/a.test.js": QUICK,
        **tests,
    }


def _needs(runner: str = "jest") -> None:
    for name in ("npm", runner):
        assert shutil.which(name), (
            f"{name} is not installed: `npm install -g {name}`, as .ci/run does"
        )


def _test_check(report: Report) -> tuple[str, Cause | None]:
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    return test.note, test.cause


def _stopped(root: Path, **options: object) -> Report:
    return verify(
        root,
        VerifyOptions(
            sandbox="bwrap",
            use_cache=False,
            kinds=frozenset({"test"}),
            timeout_s=DEADLINE_S,
            **options,
        ),
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "script", ["jest --ci", "jest --ci --runInBand"], ids=["workers", "in-band"]
)
def test_a_hung_jest_test_is_named(tmp_path: Path, script: str) -> None:
    _needs()
    report = _stopped(write(tmp_path, _project(script, {"__tests__/b.test.js": HANGS})))
    note, cause = _test_check(report)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert cause is Cause.TIMEOUT, explain(report)
    assert "while running __tests__/b.test.js › spinner spins forever" in note, note
    assert "quick" not in note and "after" not in note, note


@pytest.mark.slow
def test_a_hung_vitest_test_is_named_by_its_file(tmp_path: Path) -> None:
    """vitest's workers tell the reporter in batches, and a test that never yields never
    sends its own: the file is named."""
    _needs("vitest")
    imports = "import { test, expect, describe } from 'vitest';\n"
    project = {
        **_project("vitest run", {"test/b.test.js": imports + HANGS}),
        "package.json": json.dumps(
            {"name": "spin", "type": "module", "scripts": {"test": "vitest run"}}
        ),
    }
    del project["__tests__/a.test.js"]
    project["test/a.test.js"] = imports + QUICK
    report = _stopped(write(tmp_path, project))
    note, cause = _test_check(report)
    assert cause is Cause.TIMEOUT, explain(report)
    assert "while running test/b.test.js" in note and "a.test.js" not in note, note


@pytest.mark.slow
def test_a_file_that_hangs_before_any_test_is_named(tmp_path: Path) -> None:
    _needs()
    spins = {"__tests__/b.test.js": "while (true) {}\n" + QUICK}
    report = _stopped(write(tmp_path, _project("jest --ci", spins)))
    note, cause = _test_check(report)
    assert cause is Cause.TIMEOUT, explain(report)
    assert "while running __tests__/b.test.js" in note and "›" not in note, note


@pytest.mark.slow
def test_the_reporter_leaves_a_passing_run_and_the_canaries_as_they_were(tmp_path: Path) -> None:
    """Beside the project's reporters and assay's canaries (`--protect`): the run is still
    VERIFIED with every test counted, and a project's own `--reporters` stay."""
    _needs()
    base = _project(
        "jest --ci --reporters=summary", {"__tests__/b.test.js": QUICK.replace("adds", "adds too")}
    )
    repo = change_on_base(tmp_path / "repo", base, {"README.md": "c\n"}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = [c for c in report.checks if c.check.kind is Kind.TEST]
    assert test.tests is not None and test.tests.passed == 2, explain(report)
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)


def test_a_link_left_where_the_reporter_goes_is_not_followed(tmp_path: Path) -> None:
    """The report directory is one the checks write into: a link an earlier check left at
    the reporter's name must not have the host write through it."""
    host_file = tmp_path / "host.txt"
    host_file.write_text("the host's\n")
    reports = tmp_path / "reports"
    reports.mkdir()
    report = reports / "npm-test.json"
    (reports / f"npm-test.json{JEST_REPORTER_SUFFIX}").symlink_to(host_file)
    words = jest_reporter_words(("jest", "--ci"), report)
    assert host_file.read_text() == "the host's\n"
    written = reports / f"npm-test.json{JEST_REPORTER_SUFFIX}"
    assert written.is_file() and not written.is_symlink()
    assert "module.exports" in written.read_text()
    assert words == ("--reporters=default", f"--reporters={written}")


def test_a_directory_where_the_reporter_goes_means_no_reporter(tmp_path: Path) -> None:
    (tmp_path / f"jest.json{JEST_REPORTER_SUFFIX}").mkdir()
    assert jest_reporter_words(("jest",), tmp_path / "jest.json") == ()


def test_reporters_named_on_the_command_line_are_kept_and_default_not_added(tmp_path: Path) -> None:
    words = jest_reporter_words(("jest", "--reporters=summary"), tmp_path / "jest.json")
    assert words == (f"--reporters={tmp_path / 'jest.json'}{JEST_REPORTER_SUFFIX}",)


def test_the_record_names_what_started_and_did_not_end() -> None:
    record = "\n".join(
        json.dumps(words)
        for words in (
            ["file", "/w/t/a.test.js"],
            ["case", "/w/t/a.test.js", "adds"],
            ["done", "/w/t/a.test.js", "adds"],
            ["filedone", "/w/t/a.test.js"],
            ["file", "/w/t/b.test.js"],
            ["case", "/w/t/b.test.js", "spins"],
        )
    )
    cut = record + '\n["case", "/w/t/b.te'  # the line being written as the run was stopped
    assert hung(cut.encode(), "/w") == ("t/b.test.js › spins",)
    # A jest that tells no reporter of single tests: the file started and not ended.
    files_only = "\n".join(
        json.dumps(w) for w in (["file", "/w/a.js"], ["filedone", "/w/a.js"], ["file", "/w/b.js"])
    )
    assert hung(files_only.encode(), "/w") == ("b.js",)
    assert hung(b"not json\n[1, 2]\n", "/w") == ()
