"""Tool-agnostic reading of output: test summary lines any common runner prints."""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, Diagnostic, TestCounts
from assay.parsers import ParsedOutput
from assay.parsers._text import combined
from assay.parsers.crash import crash_diagnostics, missing_command
from assay.process import ProcessResult

# "3 passed, 1 failed" (pytest, the plain closing line), "N passed; M failed" (cargo).
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped)\b")
_KEYS = {"error": "errors"}


def parse_counts(text: str) -> TestCounts | None:
    """The largest count of each outcome in the last lines of `text`, or None if none is named."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    seen = False
    for line in text.splitlines()[-200:]:
        for number, word in _COUNT.findall(line):
            key = _KEYS.get(word, word)
            counts[key] = max(counts[key], int(number))
            seen = True
    return TestCounts(**counts, source="text") if seen else None


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    """Counts from the common "N passed, M failed" wording, for tools assay has no parser for;
    from a run that failed, the crash that ended it and a command its recipe could not find."""
    text = combined(result)
    tests = parse_counts(text)
    if result.exit_code in (0, None):
        # A passing run's printed tracebacks and compile errors are not why anything failed.
        crashes: tuple[Diagnostic, ...] = ()
        missing = None
    else:
        crashes = crash_diagnostics(text, result.cwd, check.tool)
        missing = missing_command(text, result.exit_code)
    failed = tests is not None and tests.any_failed
    return ParsedOutput(
        diagnostics=crashes,
        tests=tests,
        failure_recognized=failed or bool(crashes),
        missing_command=missing,
    )
