"""Java: javac diagnostics (as Maven and Gradle print them) and Surefire / Gradle JUnit XML reports.

The reports lie in the workspace, written by the code under test's build: they are
listed and read following no link, each within a bound and all within one, and only
files written since the run began count. Maven's are also named with this run's
suffix (`assay.tools.java.report_suffix`). Counts come only from the reports; the
summary Maven prints can only add failures, never take them away. A failed test's
place, the innermost frame of its own package in the report's stack trace, is a
diagnostic where that file is one of the project's sources (`java_frames`); a hung
test's, the test and the line its JVM's thread dump shows it on (`java_stacks`).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from assay.evidence import Check, Diagnostic, TestCase, TestCounts
from assay.parsers import ParsedOutput
from assay.parsers._text import combined, count_cases, relative
from assay.parsers.java_frames import FailurePlace, failure_places
from assay.parsers.pytest import read_junit
from assay.parsers.report_file import REPORT_MAX_BYTES
from assay.process import ProcessResult
from assay.untrusted_files import OpenFile, Refused, list_untrusted, open_untrusted, read_open

#: Slack for clocks when telling this run's reports from older ones.
REPORT_CLOCK_SLACK_S = 2.0

# Maven: "[ERROR] /w/src/main/java/tiny/Add.java:[5,21] ';' expected"
_MAVEN_JAVAC = re.compile(
    r"^\[(?P<sev>ERROR|WARNING)\] (?P<file>[^\s\[]+\.java):\[(?P<line>\d+),(?P<col>\d+)\] (?P<msg>.+)$"
)
# javac itself, and Gradle: "src/main/java/tiny/Add.java:5: error: ';' expected"
_JAVAC = re.compile(r"^(?P<file>[^\s:]+\.java):(?P<line>\d+): (?P<sev>error|warning): (?P<msg>.+)$")
# Surefire's closing line: "Tests run: 3, Failures: 1, Errors: 0, Skipped: 0"
_SUREFIRE_SUMMARY = re.compile(
    r"Tests run: (?P<run>\d+), Failures: (?P<failed>\d+), Errors: (?P<errors>\d+), "
    r"Skipped: (?P<skipped>\d+)"
)
# Gradle: "3 tests completed, 1 failed"
_GRADLE_SUMMARY = re.compile(r"(?P<run>\d+) tests? completed, (?P<failed>\d+) failed")
_FAILED_RUN = re.compile(r"There (?:are|were) (?:test )?failures|COMPILATION ERROR|BUILD FAILED")


def javac_diagnostics(text: str, cwd: str) -> list[Diagnostic]:
    """Compiler errors, each once (Maven prints them twice), in the order printed."""
    found: dict[tuple[str | None, int, str], Diagnostic] = {}
    for raw in text.splitlines():
        line = raw.strip()
        match = _MAVEN_JAVAC.match(line) or _JAVAC.match(line)
        if match is None:
            continue
        severity = "warning" if match["sev"].lower() == "warning" else "error"
        column = match["col"] if "col" in match.groupdict() else None
        diagnostic = Diagnostic(
            message=match["msg"],
            file=relative(match["file"], cwd),
            line=int(match["line"]),
            column=int(column) if column else None,
            severity=severity,
            tool="javac",
        )
        found.setdefault((diagnostic.file, diagnostic.line or 0, diagnostic.message), diagnostic)
    return list(found.values())


def parse_javac(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """javac or `java` run directly: diagnostics only."""
    diagnostics = javac_diagnostics(combined(result), result.cwd)
    errors = tuple(d for d in diagnostics if d.severity == "error")
    return ParsedOutput(diagnostics=tuple(diagnostics), failure_recognized=bool(errors))


def parse_maven(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    suffix = None
    if report_dir is not None:
        from assay.tools.java import report_suffix

        suffix = report_suffix(report_dir, check)
    reports = _Reports("target/surefire-reports", suffix)
    parsed = _parse_build(check, result, report_dir, reports)
    hung = _hung_in_dump(check, result, reports) if result.timed_out and report_dir else None
    return parsed if hung is None else replace(parsed, hung_tests=(hung,))


def parse_gradle(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    return _parse_build(check, result, report_dir, _Reports("build/test-results/test", None))


@dataclass(frozen=True, slots=True)
class _Reports:
    directory: str
    """Relative to the project directory."""
    suffix: str | None
    """Only `TEST-*-<suffix>.xml` belong to this run; None: any `TEST-*.xml`."""

    def wanted(self, name: str) -> bool:
        ending = f"-{self.suffix}.xml" if self.suffix else ".xml"
        return name.startswith("TEST-") and name.endswith(ending)


def _parse_build(
    check: Check, result: ProcessResult, report_dir: Path | None, reports: _Reports
) -> ParsedOutput:
    text = combined(result)
    diagnostics = tuple(javac_diagnostics(text, result.cwd))
    printed = _printed_counts(text)
    recognized = bool([d for d in diagnostics if d.severity == "error"]) or bool(
        _FAILED_RUN.search(text) or (printed is not None and printed.any_failed)
    )
    if report_dir is None:  # not asked for reports: what was printed is all there is
        return ParsedOutput(diagnostics=diagnostics, tests=printed, failure_recognized=recognized)
    read = _read_reports(check, result, reports)
    if isinstance(read, Refused):
        return ParsedOutput(
            diagnostics=diagnostics, failure_recognized=recognized, report_refused=read.reason
        )
    if read is None:
        return ParsedOutput(diagnostics=diagnostics, failure_recognized=recognized)
    counts, cases, places = read
    diagnostics += _placed(places, result, check)
    if reports.suffix:
        cases = tuple(_without_suffix(c, reports.suffix) for c in cases)
    counts = _not_kinder_than(counts, printed)
    return ParsedOutput(
        diagnostics=diagnostics,
        tests=counts,
        test_cases=cases,
        failure_recognized=recognized or counts.any_failed,
        no_tests_reported=counts.executed == 0,
        report_found=True,
    )


def _printed_counts(text: str) -> TestCounts | None:
    """The last summary line Maven or Gradle printed (the aggregate comes last)."""
    for line in reversed(text.splitlines()[-400:]):
        if match := _SUREFIRE_SUMMARY.search(line):
            run, failed = int(match["run"]), int(match["failed"])
            errors, skipped = int(match["errors"]), int(match["skipped"])
            passed = max(run - failed - errors - skipped, 0)
            return TestCounts(passed, failed, errors, skipped, source="text")
        if match := _GRADLE_SUMMARY.search(line):
            run, failed = int(match["run"]), int(match["failed"])
            return TestCounts(max(run - failed, 0), failed, 0, 0, source="text")
    return None


def _not_kinder_than(report: TestCounts, printed: TestCounts | None) -> TestCounts:
    """The reports' counts, with failures raised to what the build printed: a report can be
    rewritten by the code under test after the fact, the printed summary cannot be taken back."""
    if printed is None:
        return report
    failed, errors = max(report.failed, printed.failed), max(report.errors, printed.errors)
    if (failed, errors) == (report.failed, report.errors):
        return report
    return TestCounts(report.passed, failed, errors, report.skipped, source=report.source)


def _project_dir(check: Check, result: ProcessResult) -> tuple[Path, str] | Refused:
    """(a directory assay made, the project's path below it): the workspace and `check.cwd`,
    so that reaching the reports follows no link the code under test could have made."""
    cwd = PurePosixPath(check.cwd or ".")
    parts = [p for p in cwd.parts if p != "."]
    if cwd.is_absolute() or ".." in parts:
        return Refused(f"{check.cwd} is not a plain path inside the workspace; reports not read")
    ran_in = Path(result.cwd)
    if parts and list(ran_in.parts[-len(parts) :]) != parts:
        return Refused(f"{result.cwd} is not {check.cwd} of a workspace; reports not read")
    workspace = ran_in
    for _ in parts:
        workspace = workspace.parent
    return workspace, "/".join(parts)


@dataclass(frozen=True, slots=True)
class _Listing:
    """The names in a run's report directory, reached following no link."""

    workspace: Path
    project: str
    """The project's path below `workspace` (`_project_dir`)."""
    directory: str
    """The report directory, below `workspace`."""
    names: list[str]


def _listed(check: Check, result: ProcessResult, reports: _Reports) -> _Listing | Refused | None:
    where = _project_dir(check, result)
    if isinstance(where, Refused):
        return where
    workspace, project = where
    directory = f"{project}/{reports.directory}" if project else reports.directory
    names = list_untrusted(workspace, directory)
    if not isinstance(names, list):
        return names
    return _Listing(workspace, project, directory, names)


def _run_began(result: ProcessResult) -> float:
    """When `result`'s run began, by the file clock, less a slack: a file older was left in
    the tree by another run, not written by this one."""
    return time.time() - result.duration_s - REPORT_CLOCK_SLACK_S


def _read_reports(
    check: Check, result: ProcessResult, reports: _Reports
) -> tuple[TestCounts, tuple[TestCase, ...], list[FailurePlace]] | Refused | None:
    listed = _listed(check, result, reports)
    if not isinstance(listed, _Listing):
        return listed
    workspace, directory, names = listed.workspace, listed.directory, listed.names
    since = _run_began(result)
    budget = REPORT_MAX_BYTES
    cases: list[TestCase] = []
    places: list[FailurePlace] = []
    read_any = False
    for name in names:
        if not reports.wanted(name):
            continue
        with open_untrusted(workspace, f"{directory}/{name}", what=f"report {name}") as found:
            if not isinstance(found, OpenFile):
                if found is None:
                    continue
                return found if isinstance(found, Refused) else Refused(f"report {name} is a link")
            if os.fstat(found.fd).st_mtime < since:
                continue
            data = read_open(found, limit=budget)
        if isinstance(data, Refused):
            return data
        budget -= len(data)
        junit = read_junit(data)
        if junit is None:
            return Refused(f"report {name} is not JUnit XML")
        cases.extend(junit[1])
        places.extend(failure_places(data, reports.suffix))
        read_any = True
    if not read_any:
        return None
    return count_cases(cases, "junit"), tuple(cases), places


#: Where Maven's and Gradle's conventions keep a project's Java sources, tests first.
_SOURCE_ROOTS = ("src/test/java", "src/main/java")


def _placed(
    places: list[FailurePlace], result: ProcessResult, check: Check
) -> tuple[Diagnostic, ...]:
    """A diagnostic for each failed test whose stack names a file of the project's own
    sources, at its path relative to the project; a frame in no source root found is left
    out rather than guessed."""
    where = _project_dir(check, result)
    if isinstance(where, Refused):
        return ()
    sources = _Sources(*where)
    found: list[Diagnostic] = []
    for place in places:
        if (path := sources.find(place.package_dir, place.file)) is not None:
            found.append(
                Diagnostic(f"{place.test}: {place.message}", path, place.line, tool="junit")
            )
    return tuple(found)


class _Sources:
    """The project's Java sources, found by package and file name under the source roots
    (`_SOURCE_ROOTS`), each directory listed once, following no link."""

    def __init__(self, workspace: Path, project: str) -> None:
        self.workspace, self.project = workspace, project
        self.listed: dict[str, set[str]] = {}

    def find(self, package_dir: str, file: str) -> str | None:
        """`src/main/java/tiny/Add.java`, relative to the project; None in no source root."""
        for source_root in _SOURCE_ROOTS:
            directory = "/".join(p for p in (source_root, package_dir) if p)
            if directory not in self.listed:
                rel = f"{self.project}/{directory}" if self.project else directory
                names = list_untrusted(self.workspace, rel)
                self.listed[directory] = set(names) if isinstance(names, list) else set()
            if file in self.listed[directory]:
                return f"{directory}/{file}"
        return None


#: The most bytes of Surefire's dump streams, all of them, read for a hung test's place.
DUMP_STREAM_MAX_BYTES = 8 << 20


def _hung_in_dump(check: Check, result: ProcessResult, reports: _Reports) -> str | None:
    """The test a run stopped at the deadline was running, and where, as its JVM's thread
    dump says (`java_stacks`); None when no dump of this run names one."""
    from assay.parsers.java_stacks import dumped_lines, hung_test, main_thread_frames

    listed = _listed(check, result, reports)
    if not isinstance(listed, _Listing):
        return None
    workspace, directory, since = listed.workspace, listed.directory, _run_began(result)
    said: list[str] = []
    budget = DUMP_STREAM_MAX_BYTES  # for them all: the code under test can write many
    for name in sorted(n for n in listed.names if n.endswith(".dumpstream")):
        with open_untrusted(workspace, f"{directory}/{name}", what=f"dump {name}") as found:
            if not isinstance(found, OpenFile) or os.fstat(found.fd).st_mtime < since:
                continue
            data = read_open(found, limit=budget)
        if isinstance(data, bytes):
            said.append(data.decode("utf-8", "replace"))
            budget -= len(data)
    frames = main_thread_frames(dumped_lines("\n".join(said)))
    sources = _Sources(workspace, listed.project)
    located = {
        f.source: path for f in frames if (path := sources.find(f.package_dir, f.file)) is not None
    }
    return hung_test(frames, located)


def _without_suffix(case: TestCase, suffix: str) -> TestCase:
    """Surefire adds the suffix to each class name (`tiny.AddTest(assay...)`); readers want
    the class."""
    return replace(case, name=case.name.replace(f"({suffix})", ""))
