"""From what a process did (and what its output says) to a verdict: DESIGN.md's table as code.

Pure: no I/O. The order of the rules is the order of the table, and each rule
can only lower a verdict, so nothing a tool prints can turn a non-zero exit,
a timeout or a signal into a pass.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace

from assay.channels import disagreement
from assay.evidence import (
    RUN_DEADLINE,
    STOPPED_BY,
    Check,
    CheckerId,
    Diagnostic,
    Evidence,
    evidence_for,
    project_first,
)
from assay.own_package import (
    installed_copies_named,
    uninstalled_own_distribution,
    uninstalled_own_package,
)
from assay.parsed_output import ParsedOutput
from assay.parsers._text import combined, strip_ansi, strip_colours
from assay.parsers.crash import no_network, read_only_write, sanitizer_without_room
from assay.process import ProcessResult, StartFailure
from assay.tools import tool_spec
from assay.unbuilt_extension import unbuilt_extension_skips
from assay.verdict import Cause, Kind

#: Longest failure reason kept for a person or an agent to read.
REASON_MAX_CHARS = 4000

#: Kinds whose tools say "problems found" by exiting non-zero.
_DIAGNOSING_KINDS = frozenset({Kind.BUILD, Kind.TYPECHECK, Kind.LINT})

#: The last words of a note on something the checks needed and did not find installed:
#: the way out when the install steps did not run (`after_install` when they did).
INSTALL_WAY_OUT = " Or run `assay verify --install`, which installs what the project declares."

#: What such a note says instead when the install steps ran and it is still missing.
_INSTALLED_WITHOUT_IT = (
    " The install steps (`--install`) ran and did not provide it: they install what the "
    "project's manifests and lockfiles declare for this platform, and it was not among that."
)


def classify(
    check: Check,
    result: ProcessResult,
    parsed: ParsedOutput | None = None,
    *,
    checker: CheckerId | None = None,
    sandbox: str | None = None,
) -> Evidence:
    """The evidence for `check` given how its process ended and what was parsed from it."""
    parsed = parsed or ParsedOutput()
    cause = _cause(check, result, parsed, checker)
    note = _note(check, result, cause, parsed, checker) or _finding(check, cause, parsed, checker)
    if cause is Cause.EXIT_ZERO and check.kind is Kind.TEST:
        # A pass must be told by every channel of the run, not by one (`assay.channels`).
        found = disagreement(check.name, parsed.readings)
        if found is not None:
            cause, note = found.cause, found.note
    return evidence_for(
        check,
        cause,
        checker=checker,
        result=result,
        diagnostics=parsed.diagnostics,
        tests=parsed.tests,
        test_cases=parsed.test_cases,
        reason=failure_reason(check, result, cause, printed=parsed.printed),
        note=_with_refusal(note, parsed.report_refused),
        sandbox=sandbox,
    )


def after_install(evidence: Evidence) -> Evidence:
    """`evidence` of a check run after the install steps: a note that offered them as the
    way out says they did not install what was missing."""
    if INSTALL_WAY_OUT not in evidence.note:
        return evidence
    return replace(evidence, note=evidence.note.replace(INSTALL_WAY_OUT, _INSTALLED_WITHOUT_IT))


def _cause(
    check: Check, result: ProcessResult, parsed: ParsedOutput, checker: CheckerId | None
) -> Cause:
    if result.start_failure is not None:
        return Cause.START_FAILED
    if result.stopped_for is not None:
        return Cause.SANDBOX_UNAVAILABLE  # what the sandbox could not hold: no judgement
    if result.timed_out:
        if check.kind is Kind.TEST and parsed.tests is not None and parsed.tests.any_failed:
            # Tests its runner reported failing before the run hung (mocha's `3 failing`,
            # then a handle that never closed): they failed, whatever the hang.
            return Cause.EXIT_NONZERO
        return Cause.TIMEOUT
    if result.signal is not None:
        return Cause.SIGNAL
    tests = parsed.tests
    if result.exit_code != 0 and parsed.missing_command is not None:
        return Cause.TOOLCHAIN_MISSING
    if tests is None and _missing_offline_artifact(check, result) is not None:
        # Only where no test ran: a failing test that prints Maven's words is a failure.
        return Cause.TOOLCHAIN_MISSING
    if result.exit_code != 0 and no_network(combined(result)) is not None:
        return Cause.NETWORK_UNAVAILABLE
    if _kept_from_writing(result, parsed) is not None:
        return Cause.SANDBOX_UNAVAILABLE
    if _sanitizer_kept_from_memory(result) is not None:
        return Cause.SANDBOX_UNAVAILABLE
    if _own_package_not_installed(check, result, parsed) is not None or _installed_copies(
        check, result, parsed
    ):
        return Cause.TOOLCHAIN_MISSING
    if _own_distribution_not_installed(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _submodule_not_checked_out(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _needs_newer_toolchain(check, result, checker) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _refused(result, parsed) is not None or _config_missing(result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _no_config_found(result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _node_dependency_not_installed(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _gopath_imports_not_found(check, result, parsed):
        return Cause.TOOLCHAIN_MISSING
    if _host_tool_for_declared(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _python_dependency_not_installed(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _warning_filter_module_not_installed(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if _runner_broken_here(check, result, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if result.exit_code not in (0, None) and _installed_code_only(check, parsed) is not None:
        return Cause.TOOLCHAIN_MISSING
    if result.exit_code == 0:
        if check.kind is Kind.TEST:
            if tests is not None and tests.any_failed:
                # Exit 0 with failures in the report: a runner that hides failures.
                return Cause.REPORT_MISMATCH
            if tests is None or tests.executed == 0:
                return Cause.NO_TESTS_OBSERVED
            if _unbuilt_extension(result, parsed) is not None:
                return Cause.TOOLCHAIN_MISSING
        return Cause.EXIT_ZERO
    if parsed.tool_crashed is not None:
        return Cause.UNRECOGNIZED_FAILURE  # it stopped in its own code: nothing was judged
    if check.kind in _DIAGNOSING_KINDS:
        return Cause.EXIT_NONZERO
    if (
        check.kind is Kind.TEST
        and parsed.hung_tests
        and not (tests is not None and tests.any_failed)
    ):
        # The runner stopped a hanging test at its own deadline: a timeout, as if ours.
        return Cause.TIMEOUT
    if check.kind is Kind.TEST and any(d.severity == "error" for d in parsed.diagnostics):
        # Code that did not build (a Go package beside the passing ones, a type check after
        # the tests): the errors are why it failed, and the note names them.
        return Cause.EXIT_NONZERO
    if (
        check.kind is Kind.TEST
        and tests is not None
        and tests.executed > 0
        and not tests.any_failed
    ):
        # Every test passed but the runner failed: never a pass, and not the tests' fault.
        return Cause.REPORT_MISMATCH
    if (
        check.kind is Kind.TEST
        and parsed.no_tests_reported
        and (tests is None or tests.executed == 0)
    ):
        return Cause.NO_TESTS_OBSERVED
    if parsed.failure_recognized or parsed.diagnostics or (tests is not None and tests.any_failed):
        return Cause.EXIT_NONZERO
    return Cause.UNRECOGNIZED_FAILURE


def _sanitizer_kept_from_memory(result: ProcessResult) -> str | None:
    """The line of a failed run saying a sanitizer could not reserve its shadow memory, when
    the run had an address-space limit that explains it. Without one the line is only text
    the code printed, and a failing test printing it must stay a failure."""
    if result.exit_code == 0 or result.address_space_bytes is None:
        return None
    return sanitizer_without_room(combined(result))


def _kept_from_writing(result: ProcessResult, parsed: ParsedOutput) -> str | None:
    """The path a failed check could not write because the sandbox shows it read-only
    (vitest's typecheck writes into node_modules, which a run without `--install` shows
    from the source), when nothing else failed: every failed test and every finding says
    it could not write there."""
    if result.exit_code in (0, None):
        return None
    path = read_only_write(combined(result))
    if path is None or not all(read_only_write(d.message) for d in parsed.diagnostics):
        return None
    if parsed.tests is not None and parsed.tests.any_failed:
        from assay.formats.failures import FAILED_OUTCOMES

        failed = [c for c in parsed.test_cases if c.outcome in FAILED_OUTCOMES]
        if not failed or not all(read_only_write(c.message or "") for c in failed):
            return None
    return path


def _own_package_not_installed(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """The project's own package, when a test check failed only for want of it."""
    if check.kind is not Kind.TEST or result.exit_code in (0, None):
        return None
    if parsed.tests is not None and parsed.tests.passed:
        return None  # some tests ran: the package was importable
    return uninstalled_own_package(combined(result), result.cwd)


def _installed_copies(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> tuple[tuple[str, str], ...]:
    """The project's own packages a test check imported from an installed copy: as its
    session recorded them, or, where it ran no test, as its import errors name them."""
    if parsed.installed_copies:
        return parsed.installed_copies
    if check.kind is not Kind.TEST or result.exit_code in (0, None) or not result.cwd:
        return ()
    if parsed.tests is not None and parsed.tests.passed:
        return ()  # some tests ran: what failed is theirs to say
    return tuple(installed_copies_named(combined(result), result.cwd))


def _unbuilt_extension(result: ProcessResult, parsed: ParsedOutput) -> tuple[str, int] | None:
    """The project's own extension module tests of a passing run skipped for want of, and
    how many (`assay.unbuilt_extension`)."""
    if not result.cwd or not parsed.test_cases:
        return None
    return unbuilt_extension_skips(parsed.test_cases, result.cwd)


def _own_distribution_not_installed(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """The project's own distribution, when every test that failed did so only because its
    metadata is not installed (`uninstalled_own_distribution`)."""
    if check.kind is not Kind.TEST or result.exit_code in (0, None) or not result.cwd:
        return None
    failing = [c for c in parsed.test_cases if c.outcome not in ("passed", "skipped")]
    if (
        not failing
        or parsed.tests is None
        or parsed.tests.failed + parsed.tests.errors > len(failing)
    ):
        return None  # a failure the report did not name may be another one
    return uninstalled_own_distribution((c.message or "" for c in failing), result.cwd)


def _needs_newer_toolchain(
    check: Check, result: ProcessResult, checker: CheckerId | None
) -> str | None:
    """The toolchain release a failed check needs and did not have (`toolchain_too_old`)."""
    if result.exit_code in (0, None):
        return None
    from assay.toolchain_too_old import go_mod_too_new, newer_go_explains, toolchain_too_old

    output = combined(result)
    said = toolchain_too_old(output)
    if said is None and check.tool == "go" and checker is not None and result.cwd:
        return go_mod_too_new(result.cwd, checker.version) if newer_go_explains(output) else None
    return said


def _missing_offline_artifact(check: Check, result: ProcessResult) -> str | None:
    """The artifact a failed Maven build could not have offline (`offline_artifacts`):
    what the machine lacks, not what the code does."""
    if result.exit_code in (0, None) or check.tool != "maven":
        return None
    from assay.offline_artifacts import missing_offline_artifact

    return missing_offline_artifact(combined(result))


def _refused(result: ProcessResult, parsed: ParsedOutput) -> str | None:
    """The option of its command a failed tool refused (`refused_option`), where it ran
    nothing: no test, and no finding but that refusal (tsc reports it as one)."""
    if result.exit_code in (0, None):
        return None
    if parsed.tests is not None and parsed.tests.executed:
        return None
    from assay.refused_option import refused_option

    if not all(refused_option(d.message, result.argv) for d in parsed.diagnostics):
        return None
    return refused_option(combined(result), result.argv)


def _config_missing(result: ProcessResult, parsed: ParsedOutput) -> str | None:
    """The configuration file its command names that a failed tool found missing
    (`missing_config`), where it ran nothing: no test, and no finding."""
    if result.exit_code in (0, None) or parsed.diagnostics:
        return None
    if parsed.tests is not None and parsed.tests.executed:
        return None
    from assay.missing_config import missing_config

    return missing_config(combined(result), result.argv)


def _no_config_found(result: ProcessResult, parsed: ParsedOutput) -> str | None:
    """The configuration a failed tool looked for and found none of (`no_config_found`),
    where it ran nothing: no test, and no finding."""
    if result.exit_code in (0, None) or parsed.diagnostics:
        return None
    if parsed.tests is not None and parsed.tests.executed:
        return None
    from assay.missing_config import no_config_found

    return no_config_found(combined(result))


def _submodule_not_checked_out(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """The git submodule a test run failed for want of (`assay.missing_submodule`): where
    some tests passed, every failing one says a file of it could not be found; where none
    did (a collection error), the output says so."""
    if check.kind is not Kind.TEST or result.exit_code in (0, None):
        return None
    from assay.formats.failures import FAILED_OUTCOMES
    from assay.missing_submodule import missing_submodule

    if parsed.tests is not None and parsed.tests.passed:
        failed = [c.message or "" for c in parsed.test_cases if c.outcome in FAILED_OUTCOMES]
        return missing_submodule(failed, result.cwd) if failed else None
    return missing_submodule([combined(result)], result.cwd)


def _node_dependency_not_installed(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """A package the project declares, when a check failed only for want of it."""
    if result.exit_code in (0, None) or (parsed.tests is not None and parsed.tests.passed):
        return None  # some tests ran: the dependencies were there
    from assay.uninstalled_dependency import uninstalled_node_dependency

    return uninstalled_node_dependency(combined(result), result.cwd)


def _gopath_imports_not_found(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> tuple[str, ...]:
    """The remote import paths a GOPATH-mode go test could not find, where no test ran
    (`assay.gopath_imports`): a test binary that prints go's words has run."""
    if result.exit_code in (0, None) or (parsed.tests is not None and parsed.tests.executed):
        return ()
    from assay.gopath_imports import gopath_imports_not_found

    return gopath_imports_not_found(combined(result), check.env)


def _host_tool_for_declared(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> tuple[str, str] | None:
    """The command and package, when a failed package script ran the host's release of a
    tool the project declares and has not installed (`host_tool_for_declared`), and no
    test it ran failed: a test that fails under another release of its runner is still a
    test of the code; a type checker's or linter's verdict is its release's."""
    if result.exit_code in (0, None) or not result.cwd:
        return None
    if parsed.tests is not None and parsed.tests.any_failed:
        return None
    from assay.uninstalled_dependency import host_tool_for_declared

    return host_tool_for_declared(check.argv, result.cwd)


def _python_dependency_not_installed(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """A module the project declares, when a type check failed only for want of it, or a
    Python test run could not collect its tests for want of it (no test ran or failed)."""
    if result.exit_code in (0, None) or not result.cwd:
        return None
    from assay.uninstalled_python_dependency import (
        uninstalled_python_dependency,
        uninstalled_test_import,
    )

    if check.kind is Kind.TYPECHECK:
        return uninstalled_python_dependency(parsed.diagnostics, result.cwd)
    if check.kind is not Kind.TEST or check.tool not in _PYTHON_TEST_RUNNERS:
        return None
    tests = parsed.tests
    if tests is not None and (tests.passed or tests.failed):
        return None
    if any(case.outcome == "failed" for case in parsed.test_cases):
        return None
    return uninstalled_test_import(combined(result), result.cwd)


def _warning_filter_module_not_installed(
    check: Check, result: ProcessResult, parsed: ParsedOutput
) -> str | None:
    """The module a pytest run's `filterwarnings` names, when pytest stopped at start-up for
    want of it (no test ran or failed)."""
    if check.tool != "pytest" or result.exit_code in (0, None) or not result.cwd:
        return None
    if parsed.tests is not None and (parsed.tests.passed or parsed.tests.failed):
        return None
    from assay.uninstalled_python_dependency import uninstalled_filter_module

    return uninstalled_filter_module(combined(result), result.cwd)


#: Python's test runners, whose collection stops at a test module's failed import.
_PYTHON_TEST_RUNNERS = frozenset({"pytest", "unittest"})


def _installed_code_only(check: Check, parsed: ParsedOutput) -> Diagnostic | None:
    """The first error of a type check whose every error lies in installed packages
    (`.venv/.../site-packages/_pytest/terminal.py`): it analysed code that is not the
    project's, in a way that code does not support (a `python_version` older than its
    syntax), which says nothing of the project's own code."""
    if check.kind is not Kind.TYPECHECK:
        return None
    errors = [d for d in parsed.diagnostics if d.severity == "error"]
    if not errors or any(d.file is None for d in errors):
        return None
    # `node_modules` is left to `dependency_drift`, which runs the check again with the
    # lockfile's versions to tell today's dependencies from the code's own failure.
    in_python_packages = all(
        d.in_installed_package and "node_modules" not in (d.file or "").split("/") for d in errors
    )
    return errors[0] if in_python_packages else None


#: The kinds of check whose tool's own crash says nothing of the code: a linter or type
#: checker pinned by a pre-commit hook at a release its dependencies have since broken
#: (black 21.5b0 under click 8.1: `cannot import name '_unicodefun'`) as well as a runner.
_TOOL_KINDS = frozenset({Kind.TEST, Kind.LINT, Kind.TYPECHECK})


def _runner_broken_here(check: Check, result: ProcessResult, parsed: ParsedOutput) -> str | None:
    """Where a test runner, linter or type checker broke in its own installed code (a
    runner before any test ran; `runner_broken_here`): it cannot run here, which says
    nothing of the code."""
    if check.kind not in _TOOL_KINDS or result.exit_code in (0, None) or not result.cwd:
        return None
    if parsed.tests is not None and parsed.tests.executed:
        return None
    from assay.runner_broken_here import runner_broken_here

    return runner_broken_here(combined(result), result.cwd)


#: A line that names an error: `ValueError: ...`, `ERROR: ...`, `error: ...`, `fatal: ...`,
#: as runners, interpreters and compilers print them (pytest's `INTERNALERROR> ` and `E   `
#: taken off: structlog's conftest failing to import said `E   SyntaxError: ...`).
_ERROR_LINE = re.compile(
    r"^(?:INTERNALERROR>\s*|E {3,}|➤ YN\d{4}: [│·] )?(?P<line>(?:"  # yarn's `➤ YN0001: │`
    r"(?:[a-z_]\w*\.)+[A-Z]\w*: "  # a qualified exception: hypothesis.errors.InvalidArgument:
    r"|[A-Z]\w*(?:Error|Exception): "  # ValueError:
    r"|(?:[\w.-]+: )?(?:ERROR|error|fatal|FATAL)\b"  # pytest: error:, ERROR:, fatal:
    r"|ERR_PNPM_[A-Z0-9_]+\b"  # pnpm: ERR_PNPM_FETCH_404  GET https://…
    r").*\S)"
)
#: pip's code for an error of a subprocess it ran (`error: subprocess-exited-with-error`,
#: `error: metadata-generation-failed`): the error that subprocess printed comes before.
_WRAPPER_ERROR_LINE = re.compile(r"error: [a-z]+(?:-[a-z]+)+")
#: The longest error line quoted in a note.
_ERROR_LINE_CHARS = 300


def last_error_line(text: str) -> str | None:
    """The last line of `text` (of its last 200) that names an error, or None; an error
    that only says a subprocess failed stands when no other is found."""
    wrapper = None
    for line in reversed(strip_ansi(text).splitlines()[-200:]):
        match = _ERROR_LINE.match(line.strip())
        if match is None:
            continue
        if not _WRAPPER_ERROR_LINE.fullmatch(match["line"]):
            return match["line"][:_ERROR_LINE_CHARS]
        wrapper = wrapper or match["line"]
    return wrapper


#: npm's error block (`npm error ...` from npm 10, `npm ERR! ...` before), and its lines
#: that only say where or which code, not what went wrong.
_NPM_ERROR = re.compile(r"^npm (?:error|ERR!)(?: (?P<said>.*\S))?\s*$")
_NPM_ERROR_META = re.compile(
    r"(?:code|errno|syscall|path|dest) \S+$|A complete log of this run|For a full report see"
    r"|Log files were not written|[\w/.-]+\.log$"
)


def npm_error_line(text: str) -> str | None:
    """The first line of npm's error block that says what went wrong (`npm error ERESOLVE
    could not resolve`, `npm error The npm ci command can only install with an existing
    package-lock.json`), not its code, path or log file; None when npm printed none."""
    for line in strip_ansi(text).splitlines():
        match = _NPM_ERROR.match(line.strip())
        if match is None or not match["said"] or _NPM_ERROR_META.match(match["said"]):
            continue
        return line.strip()[:_ERROR_LINE_CHARS]
    return None


def failure_reason(
    check: Check, result: ProcessResult, cause: Cause, *, printed: str | None = None
) -> str:
    """The text a reader needs first: the head for compilers, the tail for test runners;
    of the output as the tool would print it for a person (`printed`, where it wrote it
    for a machine), without colour codes."""
    if cause is Cause.EXIT_ZERO:
        return ""
    if result.start_failure is not None:
        return result.start_error or result.start_failure.value
    out = strip_colours(result.stdout.text if printed is None else printed).strip()
    err = strip_colours(result.stderr.text).strip()
    text = (out + "\n" + err).strip()
    if len(text) <= REASON_MAX_CHARS:
        return text
    if check.kind is Kind.TEST:
        return _tails(out, err)
    return text[:REASON_MAX_CHARS] + "..."


def _tails(out: str, err: str) -> str:
    """The end of each stream, each given at least half of the room: a test runner's
    summary ends its stdout, and what the tests wrote to stderr (pytest-benchmark's table
    of timings, a logger's chatter) must not push it out."""
    half = REASON_MAX_CHARS // 2
    out_room = max(half, REASON_MAX_CHARS - len(err))
    err_room = REASON_MAX_CHARS - min(len(out), out_room)

    def tail(text: str, room: int) -> str:
        return text if len(text) <= room else "..." + text[-room:]

    return (tail(out, out_room) + "\n" + tail(err, err_room)).strip()


def _with_refusal(note: str, refused: str | None) -> str:
    """`note`, then why the report was not read: the reason there were no counts."""
    return f"{note} The {refused}." if refused and note else (refused or note)


def _finding(check: Check, cause: Cause, parsed: ParsedOutput, checker: CheckerId | None) -> str:
    """A linter's or type checker's first finding, and the release that made it: a project
    that pins none is checked with whatever is installed, and a newer release finds more."""
    if cause is not Cause.EXIT_NONZERO or check.kind not in (Kind.LINT, Kind.TYPECHECK):
        return ""
    first = project_first([d for d in parsed.diagnostics if d.severity == "error"])
    if first is None or checker is None or checker.tool != check.tool or not checker.version:
        return ""
    spec = tool_spec(check.tool)
    if spec is None or spec.wrapper:
        return ""  # make's or a shell's version says nothing about the tools its recipe ran
    where = f"{first.place}: " if first.file else ""
    return f"{check.name} failed: {where}{first.message} ({checker.tool} {checker.version} ran)."


def _while_running(parsed: ParsedOutput, result: ProcessResult, check: Check) -> str:
    """`, while running TestAll`: the tests a run stopped at assay's deadline had started and
    not ended, as its runner's report tells (`go test -json`); where it tells none, the
    project's files a test run's processes were still running then (`_files_running`)."""
    if not parsed.hung_tests:
        if check.kind is not Kind.TEST:
            return ""
        if threads := _rust_tests_running(result):
            return f", while running {', '.join(threads)} (its test thread was still running then)"
        if files := _files_running(result):
            return f", while running {', '.join(files)} (its process was still running then)"
        if files := _files_running(result, compiling=True):
            return f", while compiling {', '.join(files)} (the compiler was still running then)"
        return ""
    named = ", ".join(parsed.hung_tests[:5])
    more = f" and {len(parsed.hung_tests) - 5} more" if len(parsed.hung_tests) > 5 else ""
    return f", while running {named}{more}"


#: Folders of installed code, whose files are no test of the project's.
_INSTALLED_DIRS = frozenset({"node_modules", ".venv", "venv", "site-packages", "dist-packages"})
#: A file's name, as a script a process runs is named (`index.test.js`, `run.py`).
_SCRIPT_NAME = re.compile(r"[^/\s]+\.[A-Za-z][A-Za-z0-9]*")
#: How many running files a note names.
_MAX_FILES_RUNNING = 3


#: Compilers a test run starts (`go test` builds first: Go's tools under `pkg/tool/`, gcc's
#: and rustc): a file one was given is being compiled, not run.
_COMPILERS = re.compile(r"(?:^|/)(?:pkg/tool/[^/]+/(?:compile|asm|link|cgo)|cc1|cc1plus|rustc)$")


def _files_running(result: ProcessResult, *, compiling: bool = False) -> list[str]:
    """The project's files the run's processes were running when its deadline stopped it
    (`ProcessResult.running_at_deadline`), relative to its directory: a `node --test` file
    that hangs prints nothing until it ends (@fastify/error with a loop in `toString`: "npm-
    test was killed at its deadline", the file unnamed, where `node test/index.test.js`
    still ran). Only the first file each process names, none under installed packages.
    With `compiling`, those a compiler was given instead: BurntSushi/toml's `go test`, slow
    to build in a loaded sandbox, read as a hang "while running internal/toml-test/json.go"."""
    root = result.cwd.rstrip("/") + "/"
    files: list[str] = []
    for argv in result.running_at_deadline:
        if bool(argv and _COMPILERS.search(argv[0])) is not compiling:
            continue
        for at, word in enumerate(argv):
            if word.startswith("-") or (word.startswith("/") and not word.startswith(root)):
                continue  # an option, or a file outside the project (`/usr/bin/node`)
            rel = word.removeprefix(root)
            parts = [p for p in rel.split("/") if p not in ("", ".")]
            # A program run by its path (`./test`), not looked up on PATH, is the project's
            # own, whatever its name: parson's `make test` hung in `./test`, named nowhere.
            own_program = at == 0 and "/" in word
            if (
                not parts
                or ".." in parts
                or _INSTALLED_DIRS.intersection(parts)
                or not (own_program or _SCRIPT_NAME.fullmatch(parts[-1]))
            ):
                continue
            name = strip_colours("/".join(parts))[:200]
            if name not in files:
                files.append(name)
            break
    return files[:_MAX_FILES_RUNNING]


#: A test binary cargo built: `target/debug/deps/more-610f748fa03030a4`.
_RUST_TEST_BINARY = re.compile(
    r"(?:^|/)target/(?:[^/]+/)*deps/(?P<name>[A-Za-z0-9_]+)-[0-9a-f]{16}$"
)
#: Where cargo says which source a test binary is built from, before it runs it.
_CARGO_RUNNING = re.compile(
    r"^\s*Running (?:unittests )?(?P<source>\S+) \((?P<binary>[^)\s]+)\)$", re.MULTILINE
)
#: How many bytes of a thread's name the kernel keeps.
_THREAD_NAME_BYTES = 15


def _rust_tests_running(result: ProcessResult) -> list[str]:
    """The tests a Rust test binary was running when the run's deadline stopped it, by the
    names libtest gives their threads (`spins_forever in tests/more.rs`): libtest prints a
    test's line only once it ends, so a hung one is named nowhere else. A name the kernel
    cut short ends in "...". The source is the one cargo said it ran the binary for."""
    sources = {
        os.path.basename(m["binary"]): m["source"]
        for m in _CARGO_RUNNING.finditer(result.stderr.text + result.stdout.text)
    }
    running: list[str] = []
    for argv, threads in zip(result.running_at_deadline, result.threads_at_deadline, strict=False):
        binary = _RUST_TEST_BINARY.search(argv[0]) if argv else None
        if binary is None:
            continue
        source = sources.get(os.path.basename(argv[0]), f"the test binary {binary['name']}")
        for thread in threads:
            cut = "..." if len(thread.encode()) >= _THREAD_NAME_BYTES else ""
            running.append(f"{_printable(thread)}{cut} in {_printable(source)[:200]}")
    return running[:_MAX_FILES_RUNNING]


def _printable(text: str) -> str:
    """`text` as one line of a note: a name the code under test chose may hold escapes and
    line breaks."""
    return "".join(c if c.isprintable() else "?" for c in strip_colours(text))


#: How the note of a check stopped at its deadline says so, and what it advises (`_note`).
_KILLED = "was killed at its deadline"
_RAISE_TIMEOUT = "; raise the timeout if it is just slow."


def stopped_by_run_deadline(evidence: Evidence) -> Evidence:
    """`evidence` of a check that what was left of the run's overall deadline (`--deadline`)
    stopped before its own: said so, with the advice that fits, and marked, so that the
    report leads with a check that hung by itself. A run's last stage is cut short by a
    hang in an earlier one, and "raise the timeout" was the wrong advice for it."""
    result = evidence.result
    if (
        evidence.cause is not Cause.TIMEOUT
        or result is None
        or not result.timed_out
        or result.silent_s is not None  # its own no-output limit stopped it
    ):
        return evidence
    note = evidence.note.replace(
        _KILLED, "was stopped at the run's overall deadline (--deadline), before its own", 1
    ).replace(_RAISE_TIMEOUT, "; raise --deadline if the run is just slow.", 1)
    return replace(evidence, note=note, extra={**evidence.extra, STOPPED_BY: RUN_DEADLINE})


def not_started_by_run_deadline(check: Check, sandbox: str | None) -> Evidence:
    """Evidence of a check the run's overall deadline (`--deadline`) had passed before it
    could start: marked as `stopped_by_run_deadline` marks one it cut, so that the report
    leads with the check that hung by itself and used the time up."""
    return evidence_for(
        check,
        Cause.TIMEOUT,
        note="the run's overall deadline passed before this check could start",
        sandbox=sandbox,
        extra={STOPPED_BY: RUN_DEADLINE},
    )


def _note(
    check: Check,
    result: ProcessResult,
    cause: Cause,
    parsed: ParsedOutput,
    checker: CheckerId | None,
) -> str:
    argv0 = result.argv[0] if result.argv else "?"
    match cause:
        case Cause.START_FAILED if result.start_failure is StartFailure.NOT_FOUND:
            return f"{argv0} was not found: install it or put it on PATH."
        case Cause.START_FAILED:
            return f"{argv0} could not be started: {result.start_error}."
        case Cause.TIMEOUT if parsed.hung_tests and not result.timed_out:
            hung = ", ".join(parsed.hung_tests[:5])
            if len(parsed.hung_tests) > 5:  # all of them, as `_while_running` counts them
                hung += f" and {len(parsed.hung_tests) - 5} more"
            return (
                f"{check.name}: {hung} did not finish within the runner's per-test timeout "
                "(a hang, not a failure); raise the timeout if it is just slow."
            )
        case Cause.TIMEOUT if result.silent_s is not None:
            return (
                f"{check.name} printed nothing for {result.silent_s:g} s and was stopped "
                f"(a hang{_while_running(parsed, result, check)}); if a step of it is just that slow, give it "
                "a fixed deadline with --timeout."
            )
        case Cause.TIMEOUT:
            return f"{check.name} {_KILLED}{_while_running(parsed, result, check)}{_RAISE_TIMEOUT}"
        case Cause.SANDBOX_UNAVAILABLE if result.stopped_for is not None:
            return (
                f"{check.name} was stopped: {result.stopped_for}. Not a judgement of the "
                "code; if the check needs that room, make it (or point ASSAY_WORKSPACE_DIR "
                "at a larger filesystem), then verify again."
            )
        case Cause.SIGNAL:
            return f"{check.name} was killed by signal {result.signal} (out of memory, or a crash)."
        case Cause.NO_TESTS_OBSERVED:
            return f"{check.name} exited 0 but no test was seen executing."
        case Cause.REPORT_MISMATCH if result.exit_code == 0:
            return f"{check.name} exited 0 but its output reports failing tests."
        case Cause.REPORT_MISMATCH:
            return f"{check.name} exited {result.exit_code} although every test it reported passed."
        case Cause.TOOLCHAIN_MISSING if parsed.missing_command is not None:
            return (
                f"{check.name} could not run {parsed.missing_command}: not found where the "
                "check runs. Install it, then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (
            artifact := _missing_offline_artifact(check, result)
        ) is not None:
            from assay.tools.java import maven_repository

            return (
                f"{check.name} could not start: {artifact}, which the build needs, is not in "
                f"the repository it runs offline against ({maven_repository() or 'its own'}), "
                "and checks have no network; nothing of the code was built. Put it there "
                "(Debian packages many plugins as lib*-java) or point ASSAY_MAVEN_REPO at a "
                "repository that has it, then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (
            package := _own_package_not_installed(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} could not import {package}, the project's own package under "
                "src/: it is not installed in this environment. Install the project (`pip "
                "install -e .`), then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (unbuilt := _unbuilt_extension(result, parsed)) is not None:
            extension, skipped = unbuilt
            return (
                f"{check.name} skipped {skipped} test(s) that could not import {extension}, the "
                "extension module the project's setup.py builds: it is not built in this "
                "environment, and the code those tests check did not run. Build the project in "
                "place (`pip install -e .`), then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (
            dist := _own_distribution_not_installed(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} failed only because {dist}, the project itself, is not installed: "
                f"importlib.metadata found no metadata for it. Install the project (`pip "
                "install -e .`), then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if copies := _installed_copies(check, result, parsed):
            package, file = copies[0]
            return (
                f"{check.name} imported {package}, the project's own package under src/, from "
                f"an installed copy ({file}), not from the tree: its tests did not test this "
                "code. Install the project into the environment the checks use (`pip install "
                "-e .`), then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (
            submodule := _submodule_not_checked_out(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} could not read the test data in {submodule}/: that git "
                "submodule is not checked out (an empty directory). Check it out (`git "
                "submodule update --init`), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (
            wanted := _needs_newer_toolchain(check, result, checker)
        ) is not None:
            from assay.toolchain_too_old import UNKNOWN_NODE_OPTION

            if wanted.startswith(UNKNOWN_NODE_OPTION):
                # An option a later release added, or one it dropped (has-symbols 1.0.3's
                # `--es-staging`, gone from Node 20): which, only the option's history says.
                return (
                    f"{check.name} failed because the project needs {wanted}, and the "
                    "Node.js here does not know it (a release may add or drop an option). "
                    "Install a release that has it, then verify again."
                )
            return (
                f"{check.name} failed because the project needs {wanted}, newer than the "
                "toolchain here. Install that release (or a newer one), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (option := _refused(result, parsed)) is not None:
            from assay.refused_option import option_plugin

            if (plugin := option_plugin(check.tool, option)) is not None:
                return (
                    f"{check.name}: {check.tool} refused the option {option}, which the "
                    f"plugin {plugin} adds: it is not installed where the check runs, so "
                    f"nothing of the code was checked. Install {plugin} (the project's test "
                    "requirements name it), then verify again." + INSTALL_WAY_OUT
                )
            release = f" {checker.version}" if checker is not None and checker.version else ""
            return (
                f"{check.name}: {check.tool or 'the tool'}{release} refused the option "
                f"{option}, so nothing of the code was checked: this release does not take "
                "the command as it was run. Install the release the project uses (or pin "
                "it), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (config := _config_missing(result, parsed)) is not None:
            return (
                f"{check.name} stopped because {config}, the configuration file its command "
                "names, does not exist, so nothing of the code was checked. Restore the file "
                "(a source distribution may leave it out), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (
            package := _node_dependency_not_installed(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} could not load {package}, which package.json declares: the "
                "project's dependencies are not installed (node_modules lacks them). Install "
                "them (`npm ci`), then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if imports := _gopath_imports_not_found(check, result, parsed):
            from assay.gopath_imports import NAMED_MAX

            more = f" and {len(imports) - NAMED_MAX} more" if len(imports) > NAMED_MAX else ""
            return (
                f"{check.name} ran go test in GOPATH mode (the tree has no go.mod) and go could "
                f"not find {', '.join(imports[:NAMED_MAX])}{more}: imports of the tree's own "
                "packages by their full path, or of packages from elsewhere, need a GOPATH "
                "holding them, and no test ran. Add a go.mod (`go mod init` with the tree's "
                "import path, then `go mod tidy`), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (
            ran := _host_tool_for_declared(check, result, parsed)
        ) is not None:
            command, package = ran
            return (
                f"{check.name} ran the host's {command}, not the project's: package.json "
                f"declares {package}, which node_modules lacks, and another release's "
                "failure says nothing of the code. Install the project's dependencies "
                "(`npm ci`), then verify again." + INSTALL_WAY_OUT
            )
        # After the host's own tool: a release of it that wants another configuration file.
        case Cause.TOOLCHAIN_MISSING if (config := _no_config_found(result, parsed)) is not None:
            return (
                f"{check.name} stopped because it found no {config.removeprefix('an ')}, so "
                "nothing of the code was checked. Restore the file (a package's tarball or a "
                "source distribution may leave it out), then verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (
            module := _python_dependency_not_installed(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} could not find the module {module}, which the project's "
                "manifests declare (perhaps only for other Python releases or platforms): it is not "
                "installed where the check runs, so what needs it was not checked. Install "
                "the project's dependencies, then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (
            module := _warning_filter_module_not_installed(check, result, parsed)
        ) is not None:
            return (
                f"{check.name} stopped before any test: its configuration's "
                f"`filterwarnings` names a warning of the module {module}, which is not "
                "installed where the check runs, so nothing of the code was checked. "
                "Install the project's test dependencies, then verify again." + INSTALL_WAY_OUT
            )
        case Cause.TOOLCHAIN_MISSING if (
            where := _runner_broken_here(check, result, parsed)
        ) is not None:
            before = " before any test ran" if check.kind is Kind.TEST else ""
            return (
                f"{check.name} broke in its own installed code{before} ({where}): it "
                "cannot run here, which says nothing of the code. Install a release of it "
                "that does, or name the command to run (`[tool.assay.commands]`), then "
                "verify again."
            )
        case Cause.TOOLCHAIN_MISSING if (found := _installed_code_only(check, parsed)) is not None:
            return (
                f"{check.name} found errors only in installed packages, none in the project "
                f"({found.file}:{found.line}: {found.message[:_ERROR_LINE_CHARS]}): it "
                "analysed code that is not the project's, as the project's configuration "
                "asks (an older `python_version`, say), which says nothing of the code. "
                "Exclude the installed packages from the check, or align its configuration "
                "with this interpreter, then verify again."
            )
        case Cause.SANDBOX_UNAVAILABLE if path := _kept_from_writing(result, parsed):
            return (
                f"{check.name} could not write {path}: the sandbox shows it read-only, so "
                "the check could not run as it does elsewhere; not the code's failure. "
                "`assay verify --install` makes node_modules in the workspace, where checks "
                "may write."
            )
        case Cause.SANDBOX_UNAVAILABLE if line := _sanitizer_kept_from_memory(result):
            return (
                f"{check.name} ran a sanitizer that could not reserve its memory ({line}): "
                "the sandbox bounds each process's address space where assay cannot cap a "
                "run's memory with a cgroup, and sanitizers reserve terabytes they never "
                "use; not the code's failure. Run assay where it may make cgroups with the "
                "memory controller, then verify again."
            )
        case Cause.NETWORK_UNAVAILABLE:
            return (
                f"{check.name} needed the network and the sandbox has no network "
                f"({no_network(combined(result))}). Install steps run with the network on "
                "under `assay verify --install`; a step that needs it otherwise cannot be "
                "verified here."
            )
        case Cause.UNRECOGNIZED_FAILURE if parsed.tool_crashed is not None:
            return (
                f"{check.name} crashed in its own code before it finished "
                f"({parsed.tool_crashed[:_ERROR_LINE_CHARS]}), so the code was not checked; "
                "verify again, and if it crashes again, run the tool by hand to see why."
            )
        case Cause.UNRECOGNIZED_FAILURE if error := last_error_line(combined(result)):
            return f"{check.name} exited {result.exit_code}; the last error it printed: {error}"
        case Cause.UNRECOGNIZED_FAILURE:
            return f"{check.name} exited {result.exit_code} and its output does not say why."
        case _:
            return ""
