"""Reading what tools said: diagnostics and test results, from structured reports
where a tool writes one and from text where it does not.

`parse_output` is the one entry point: `assay.check_execution` calls it and hands what
it read (`ParsedOutput`, re-exported here) to `classify`. It dispatches on the check's
logical tool and never raises (a parser that fails yields nothing parsed, which can
only make a verdict less favourable, never a pass). Parsers read report files through
`report_file` and `assay.untrusted_files`, never with a plain open.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from assay.evidence import Check, TestCase
from assay.parsed_output import ParsedOutput as ParsedOutput
from assay.process import ProcessResult

#: A parser: what `check` printed (and the reports it wrote under `report_dir`) into structure.
Parser = Callable[[Check, ProcessResult, "Path | None"], ParsedOutput]


def report_path(report_dir: Path, check: Check, suffix: str) -> Path:
    """Where `check`'s structured report goes: one file per check, named after it.

    The engine asks the tool to write here and the parser reads from here; keeping
    the name in one place keeps the two in step. Checks share the directory and may run
    at once, so a name that had to be changed to be safe also carries a digest of itself:
    "a:b" and "a/b" must not read each other's report.
    """
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in check.name)
    if safe != check.name or not safe:
        import hashlib  # only unusual names need it

        safe += "-" + hashlib.sha256(check.name.encode()).hexdigest()[:8]
    return report_dir / f"{safe}.{suffix}"


#: The parser for tools assay has no declaration for: common test summary lines.
GENERIC_PARSER = ("generic", "parse")


def parser_for(tool: str | None) -> Parser:
    """The parser declared for logical tool `tool` (imported on first use, so that running
    one tool does not pay for importing every tool's parser); the generic text reader for
    unknown tools."""
    from assay.tools import tool_spec  # the declarations name parsers in this package

    spec = tool_spec(tool)
    module, function = spec.parser if spec is not None else GENERIC_PARSER
    parser: Parser = getattr(importlib.import_module(f"assay.parsers.{module}"), function)
    return parser


def parse_output(
    check: Check, result: ProcessResult, report_dir: Path | None = None
) -> ParsedOutput:
    """Parse `result` as the output of `check.tool`; unknown tools get the generic text reader."""
    parsed = _parsed(check, result, report_dir)
    said = result.said_by_deadline
    if said is None or parsed.tests is None or not parsed.tests.any_failed:
        return parsed
    # A deadline stopped the run: its failed tests count only where the runner reported
    # them before it. After, it reports what the deadline's signals killed. A report file
    # is written at a run's end: one the deadline stopped wrote it after, if at all.
    before = _parsed(check, replace(result, stdout=said[0], stderr=said[1]), None)
    if before.tests is None or not before.tests.any_failed:
        return replace(parsed, tests=before.tests, test_cases=before.test_cases)
    # Some failed before it: those stand, with what the whole output says of them.
    tests = replace(
        parsed.tests,
        failed=min(parsed.tests.failed, before.tests.failed),
        errors=min(parsed.tests.errors, before.tests.errors),
    )
    return replace(parsed, tests=tests, test_cases=_failing_before(parsed, before))


def _failing_before(parsed: ParsedOutput, before: ParsedOutput) -> tuple[TestCase, ...]:
    """`parsed`'s test cases, of its failures only those `before` (what was said by the
    deadline) names; when it names none, as many as it counts, first printed first (what
    was said by the deadline begins the whole output)."""
    from assay.formats.failures import FAILED_OUTCOMES

    named = {case.name for case in before.test_cases if case.outcome in FAILED_OUTCOMES}
    if named:
        return tuple(
            c for c in parsed.test_cases if c.outcome not in FAILED_OUTCOMES or c.name in named
        )
    counted = before.tests.failed + before.tests.errors if before.tests is not None else 0
    kept, failures = [], 0
    for case in parsed.test_cases:
        if case.outcome in FAILED_OUTCOMES:
            failures += 1
            if failures > counted:
                continue
        kept.append(case)
    return tuple(kept)


def _parsed(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    try:
        parsed = parser_for(check.tool)(check, result, report_dir)
    except Exception:
        return ParsedOutput()
    return parsed if isinstance(parsed, ParsedOutput) else ParsedOutput()
