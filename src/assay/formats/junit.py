"""A report as JUnit XML: one testcase per check, and one per test where the runner named them.

Written with ElementTree (writing is safe; only parsing untrusted XML needs defusedxml).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from assay.evidence import Evidence, TestCase
from assay.report import Report
from assay.verdict import Verdict

#: Output kept in a <system-out> per check; JUnit consumers choke on megabytes.
MAX_OUTPUT_CHARS = 20_000

# XML 1.0 forbids most control characters; tool output is full of them (ANSI colours).
_XML_UNSAFE = dict.fromkeys([*range(9), 11, 12, *range(14, 32), 0xFFFE, 0xFFFF])


def _clean(text: str | None) -> str:
    return (text or "").translate(_XML_UNSAFE)


def render_junit(report: Report) -> str:
    """The whole report as a JUnit XML document (a <testsuites> root)."""
    root = ET.Element("testsuites", name="assay", status=report.status.value)
    checks_suite = _suite(root, "assay.checks")
    counts = _zero_counts()
    time_total = 0.0
    for evidence in report.checks:
        duration = evidence.result.duration_s if evidence.result else 0.0
        time_total += duration
        case = ET.SubElement(
            checks_suite,
            "testcase",
            classname=f"assay.{evidence.check.kind.value}",
            name=_clean(evidence.check.name),
            time=f"{duration:.3f}",
        )
        _outcome(case, evidence, counts)
        if evidence.result is not None:
            output = evidence.result.stdout.text + evidence.result.stderr.text
            ET.SubElement(case, "system-out").text = _clean(_last_chars(output))
        if evidence.test_cases:
            _test_suite(root, evidence)
    _finish(checks_suite, counts, time_total)
    if report.note:
        ET.SubElement(checks_suite, "properties").append(
            ET.Element("property", name="note", value=_clean(report.note))
        )
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _last_chars(output: str) -> str:
    """The end of the output (where test summaries are), saying how much was cut, never silently."""
    if len(output) <= MAX_OUTPUT_CHARS:
        return output
    cut = len(output) - MAX_OUTPUT_CHARS
    return f"[assay: first {cut} characters not shown]\n" + output[cut:]


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=name)


def _zero_counts() -> dict[str, int]:
    """The JUnit suite attributes counted per testcase, each starting at zero."""
    return {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}


def _finish(suite: ET.Element, counts: dict[str, int], time_total: float) -> None:
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", f"{time_total:.3f}")


def _outcome(case: ET.Element, evidence: Evidence, counts: dict[str, int]) -> None:
    counts["tests"] += 1
    message = _clean(evidence.note or evidence.reason or evidence.cause.value)
    if evidence.verdict is Verdict.FAIL:
        counts["failures"] += 1
        failure = ET.SubElement(case, "failure", message=message[:500], type=evidence.cause.value)
        failure.text = _clean(_failure_text(evidence))
    elif evidence.verdict is Verdict.INCONCLUSIVE:
        counts["errors"] += 1
        ET.SubElement(case, "error", message=message[:500], type=evidence.cause.value)
    elif evidence.verdict is Verdict.UNVERIFIED:
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=message[:500])


def _failure_text(evidence: Evidence) -> str:
    lines = [evidence.reason] if evidence.reason else []
    for d in evidence.diagnostics[:50]:
        where = f"{d.file}:{d.line}:{d.column or 0}: " if d.file else ""
        lines.append(f"{where}{d.code + ' ' if d.code else ''}{d.message}")
    return "\n".join(lines)


def _test_suite(root: ET.Element, evidence: Evidence) -> None:
    suite = _suite(root, _clean(evidence.check.name))
    counts = _zero_counts()
    total = 0.0
    for test in evidence.test_cases:
        total += test.duration_s or 0.0
        _test_case(suite, evidence, test, counts)
    _finish(suite, counts, total)


def _test_case(
    suite: ET.Element, evidence: Evidence, test: TestCase, counts: dict[str, int]
) -> None:
    counts["tests"] += 1
    case = ET.SubElement(
        suite,
        "testcase",
        classname=_clean(test.file or evidence.check.name),
        name=_clean(test.name),
        time=f"{test.duration_s or 0.0:.3f}",
    )
    if test.file:
        case.set("file", _clean(test.file))
    message = _clean(test.message or "")
    if test.outcome == "failed":
        counts["failures"] += 1
        ET.SubElement(case, "failure", message=message[:500]).text = message
    elif test.outcome == "error":
        counts["errors"] += 1
        ET.SubElement(case, "error", message=message[:500]).text = message
    elif test.outcome in ("skipped", "xfailed"):
        counts["skipped"] += 1
        skipped = ET.SubElement(case, "skipped", message=message[:500])
        if test.outcome == "xfailed":
            skipped.set("type", "pytest.xfail")  # as pytest marks an expected failure
