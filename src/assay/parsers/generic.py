"""Tool-agnostic reading of output: test summary lines any common runner prints."""

from __future__ import annotations

import re
from pathlib import Path

from assay.evidence import Check, TestCounts
from assay.parsers import ParsedOutput
from assay.process import ProcessResult

# "3 passed, 1 failed" (pytest, the plain closing line), "N passed; M failed" (cargo).
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|error)\b")


def parse(check: Check, result: ProcessResult, report_dir: Path | None) -> ParsedOutput:
    text = result.stdout.text + "\n" + result.stderr.text
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    seen = False
    for line in text.splitlines()[-200:]:
        for number, word in _COUNT.findall(line):
            key = {"error": "errors", "errors": "errors"}.get(word, word)
            counts[key] = max(counts[key], int(number))
            seen = True
    if not seen:
        return ParsedOutput()
    tests = TestCounts(**counts, source="text")
    return ParsedOutput(tests=tests, failure_recognized=tests.any_failed)
