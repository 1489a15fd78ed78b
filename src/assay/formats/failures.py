"""The lines under a check that did not pass, in the human report (pure).

Diagnostics first (file:line: message); else the failing tests by name with their
messages; else the end of the output. Paths are shown relative to the repository: the
workspace a check ran in is a temporary copy, its path means nothing to the reader.
"""

from __future__ import annotations

import re

from assay.evidence import Evidence, TestCase
from assay.option_values import option_values
from assay.verdict import Kind, Verdict

#: Flags with which a test run stops at its first failure.
FAIL_FAST_FLAGS = frozenset({"-x", "--exitfirst", "--stop-on-failure"})
#: How runners report a test that did not pass (`TestCase.outcome`).
FAILED_OUTCOMES = frozenset({"failed", "error", "errors"})
#: The message pytest's JUnit report gives a module it could not collect (the parser adds
#: the error that stopped it: `collection failure: ModuleNotFoundError: ...`).
COLLECTION_FAILURE = "collection failure"
#: The message, and the test's name, pytest's JUnit report gives its own crash (an
#: INTERNALERROR: a plugin's hook raised; the parser adds the error and where it was raised).
INTERNAL_ERROR = "internal error"
PYTEST_INTERNAL = "pytest::internal"

_NOISE = ("=== RUN", "--- FAIL", "=== CONT", "=== PAUSE")


def failure_lines(evidence: Evidence, *, shown: set[str]) -> list[str]:
    """What to print under `evidence`; `shown` holds raw outputs already printed (one
    sandbox refusal fails every check: its reason is printed once)."""
    name = evidence.check.name
    if evidence.diagnostics:
        # The errors first, each warning marked as one: minimist's eslint run listed four
        # of its "No magic number" warnings above the parse error that failed it.
        errors = [d for d in evidence.diagnostics if d.severity == "error"]
        ordered = errors + [d for d in evidence.diagnostics if d.severity != "error"]
        return [
            f"  {name}: {f'{d.place}: ' if d.file else ''}"
            f"{'' if d.severity == 'error' or not errors else f'{d.severity}: '}"
            f"{relative(evidence, d.message)}"
            for d in ordered[:5]
        ]
    failed = [c for c in evidence.test_cases if c.outcome in FAILED_OUTCOMES]
    hung = _hung_messages()
    lines = []
    for case in failed[:5]:
        said = "HUNG" if case.message in hung else "FAILED"
        lines.append(f"  {name}: {said} {relative(evidence, case.name)}")
        message = [
            line.strip()
            for line in relative(evidence, case.message or "").splitlines()
            if line.strip() and not line.strip().startswith(_NOISE)
        ]
        lines += [f"    {line}" for line in message[:5]]
    if len(failed) > 5:
        lines.append(f"  {name}: ... and {_more(failed[5:], hung)}")
    if failed and any(c.message for c in failed):
        return lines
    if evidence.verdict is Verdict.INCONCLUSIVE and evidence.note:
        # Why no verdict (a hang names the test that hung): above the output's tail.
        lines.append(f"  {name}: {relative(evidence, evidence.note)}")
    output = relative(evidence, evidence.reason.strip()).splitlines()
    if evidence.verdict is Verdict.INCONCLUSIVE:
        output = [line for line in output if not _DUMP_NOISE.match(line)]
    reason = "\n".join(output[-15:])
    if reason and reason not in shown:
        shown.add(reason)
        lines += ["  | " + line for line in reason.splitlines()]
    return lines


#: What a dump taken at a hang says of nothing in the project: a frame of the interpreter's
#: own or installed code (faulthandler's; the project's frames are relative by now), a CPU
#: register (go's SIGQUIT dump). pycparser's hung unittest run showed fifteen frames of
#: unittest's suite runner, its clockwork's hung go test the registers.
_DUMP_NOISE = re.compile(
    r'^\s*File "(?:/|<)|^(?:r\d+|r[abcd]x|r[sd]i|r[sb]p|rip|rflags|[cdefgs]s)\s+0x[0-9a-f]+\s*$'
)


def _more(rest: list[TestCase], hung: frozenset[str]) -> str:
    """The tests past those listed, by what they did: inih's seven tests that all hung in
    one loop were listed as five HUNG "... and 2 more failed tests"."""
    stuck = sum(1 for case in rest if case.message in hung)
    counted = [(len(rest) - stuck, "failed"), (stuck, "hung")]
    return " and ".join(
        f"{number} more {word} test{'s' if number != 1 else ''}"
        for number, word in counted
        if number
    )


def _hung_messages() -> frozenset[str]:
    """The messages the parsers give a test its runner stopped at its own per-test timeout:
    such a test hung, and is no failure (jansson's loop read "FAILED test_chaos" under an
    INDETERMINATE verdict)."""
    from assay.parsers import ctest, go, meson

    return frozenset({ctest.HUNG_MESSAGE, go.HUNG_MESSAGE, meson.HUNG_MESSAGE})


def fail_fast_flag(argv: tuple[str, ...] | list[str]) -> str | None:
    """The flag in `argv` that stops its run at the first failing test (pytest's `-x`,
    ctest's `--stop-on-failure`, meson test's `--maxfail 1`), as written; else None."""
    named = sorted(FAIL_FAST_FLAGS & set(argv))
    if named:
        return named[0]
    return "--maxfail 1" if "1" in option_values(argv, {"--maxfail"}) else None


def fail_fast_line(evidence: Evidence) -> str | None:
    """Said under a failed test run that stopped at its first failure (the quick gate's
    fast path), with how to see every test. Not for a runner that was never identified
    (it could not start): no test ran, so none was the first to fail."""
    if evidence.check.kind is not Kind.TEST or evidence.verdict is not Verdict.FAIL:
        return None
    if evidence.checker is None:
        return None
    flag = fail_fast_flag(evidence.check.argv)
    if flag is None:
        return None
    return (
        f"  {evidence.check.name}: stopped at the first failure ({flag}); "
        "run `assay verify --all` to see every test's outcome"
    )


def skipped_lines(skipped: tuple[str, ...], checks: tuple[Evidence, ...]) -> list[str]:
    """One line per check not run because an earlier stage failed, saying which."""
    failed = [e.check.name for e in checks if e.verdict is Verdict.FAIL]
    why = f"{', '.join(failed)} failed first" if failed else "an earlier stage did not pass"
    return [f"{'skipped':<12} {name} (not run: {why})" for name in skipped]


def relative(evidence: Evidence, text: str) -> str:
    """`text` with the workspace's path (where the check ran) made relative to it."""
    workspace = _workspace(evidence)
    if not workspace or workspace == "/":
        return text
    return text.replace(workspace + "/", "").replace(workspace, ".")


def _workspace(evidence: Evidence) -> str:
    if evidence.result is None:
        return ""
    cwd = evidence.result.cwd.rstrip("/")
    sub = evidence.check.cwd.strip("/")
    if sub and sub != "." and cwd.endswith("/" + sub):
        return cwd[: -len(sub) - 1]
    return cwd
