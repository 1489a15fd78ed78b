"""Agreement with SWE-bench's own grading, measured on one run.

An attempt recorded by `assay eval` holds two readings of the same test run: the
per-test outcomes assay took from pytest's JUnit report (`verification.tests`), and the
test check's output as captured in its evidence. The second is fed, as the Docker
harness's log would be, to the `swebench` package's own log parser and grading
functions (`get_logs_eval`, `get_eval_tests_report`, `get_resolution_status`); each
grading-set test and the resolved status are then compared.

Where the two differ because they are built differently, the difference is named
(`BY_DESIGN`), never counted as agreement and never hidden: a test is `agree`,
`by design` (with the reason) or `disagree`.

The `swebench` package is a test dependency (it pulls in datasets, docker, modal):
imported here only when a run is graded, with a clear error when it is missing. Its
pytest parser reads the `PASSED id` lines of `pytest -rA`; a run without `-rA` gives
it nothing to read, and every test is then missing for it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.eval.summary import PASSING, resolution

#: The grading sets, as assay's evidence and SWE-bench's reports name them.
SETS = (("fail_to_pass", "FAIL_TO_PASS"), ("pass_to_pass", "PASS_TO_PASS"))
#: SWE-bench's parser for pytest repositories (what most of its Python repos use).
PYTEST_PARSER = "parse_log_pytest"
#: A SWE-bench status and the assay outcome that say the same thing.
SAME_OUTCOME = frozenset(
    {
        ("PASSED", "passed"),
        ("FAILED", "failed"),
        ("ERROR", "error"),
        ("SKIPPED", "skipped"),
        ("XFAIL", "xfailed"),
        (None, "not_run"),
    }
)
#: Why the two readers differ where they are built differently.
BY_DESIGN = {
    "skip_line": (
        "a skip: `pytest -rA` prints `SKIPPED [n] file:line: reason`, without the test id, "
        "and swebench's parser drops that line, so the test is missing for it"
    ),
    "skipped_maintained": (
        "a skipped pass-to-pass test: swebench counts it as maintained, assay as not passing"
    ),
    "space": (
        "an id with whitespace: swebench's parser splits pytest's line at whitespace and "
        "keys the test by its id up to the first space, so the full id is missing for it"
    ),
    "log_cut": "the output kept in the evidence was cut in the middle; swebench read only part",
}


class AgreementUnavailable(AssayError):
    """The `swebench` package, or what it needs from the attempt, is missing."""


@dataclass(frozen=True, slots=True)
class TestAgreement:
    """One grading-set test, as each reader of the run saw it."""

    __test__ = False  # not a pytest test class

    test_id: str
    grading_set: str
    assay_outcome: str
    """`passed`, `failed`, `error`, `skipped` or `not_run`."""
    swebench_status: str | None
    """Its status in swebench's status map (`PASSED`, `XFAIL`...), None when not in it."""
    assay_passes: bool
    swebench_passes: bool
    """In swebench's report's `success` list for the set."""
    by_design: str = ""
    """A `BY_DESIGN` key when the readers differ for that reason."""

    @property
    def same(self) -> bool:
        return (
            self.swebench_status,
            self.assay_outcome,
        ) in SAME_OUTCOME and self.assay_passes == self.swebench_passes

    @property
    def verdict(self) -> str:
        if self.same:
            return "agree"
        return "by design" if self.by_design else "disagree"


@dataclass(frozen=True, slots=True)
class RunAgreement:
    """One attempt's run, graded by both."""

    instance_id: str
    run: str
    tests: tuple[TestAgreement, ...]
    assay_resolved: bool | None
    swebench_resolution: str
    """`RESOLVED_FULL`, `RESOLVED_PARTIAL` or `RESOLVED_NO` (also when its log was unusable)."""
    swebench_log_usable: bool
    """What `get_logs_eval` said: markers present, results parsed, exit status consistent."""

    @property
    def swebench_resolved(self) -> bool:
        return self.swebench_resolution == "RESOLVED_FULL"

    @property
    def resolved_verdict(self) -> str:
        if self.assay_resolved == self.swebench_resolved:
            return "agree"
        differing = [t for t in self.tests if not t.same]
        if differing and all(t.by_design for t in differing):
            return "by design"
        return "disagree"

    def count(self, verdict: str) -> int:
        return sum(1 for t in self.tests if t.verdict == verdict)


def compare_attempt(
    attempt: Mapping[str, Any],
    instance: Mapping[str, Any],
    *,
    run: str,
    log_parser: str = PYTEST_PARSER,
) -> RunAgreement:
    """The agreement of `attempt` (as `Store.attempts` gives it) with swebench's grading
    of the same run, for `instance` (a SWE-bench instance record)."""
    evidence = attempt.get("evidence") or {}
    verification = evidence.get("verification") or {}
    report = verification.get("report")
    if attempt.get("outcome") != "scored" or not isinstance(report, Mapping):
        raise AgreementUnavailable(
            f"{attempt.get('task_id')}: the attempt was not verified (no test run to compare)"
        )
    log, cut = swebench_log(report)
    sets = {key: _test_ids(instance, key) for _, key in SETS}
    grade = _swebench_grade(instance, sets, log, log_parser)
    recorded = verification.get("tests") or {}
    tests = []
    for name, key in SETS:
        for test_id in sets[key]:
            outcome = str((recorded.get(name) or {}).get(test_id, "not_run"))
            status = grade.status_map.get(test_id)
            passes = test_id in grade.report[key]["success"]
            tests.append(
                TestAgreement(
                    test_id=test_id,
                    grading_set=key,
                    assay_outcome=outcome,
                    swebench_status=status,
                    assay_passes=outcome in PASSING,
                    swebench_passes=passes,
                    by_design=_why_different(test_id, key, status, outcome, cut),
                )
            )
    return RunAgreement(
        instance_id=str(instance["instance_id"]),
        run=run,
        tests=tuple(tests),
        assay_resolved=resolution(dict(attempt))["resolved"],
        swebench_resolution=grade.resolution,
        swebench_log_usable=grade.usable,
    )


def swebench_log(report: Mapping[str, Any]) -> tuple[str, bool]:
    """The run's test output framed as the Docker harness frames its log (start and end
    markers, then the test command's exit status), and whether the evidence had cut it."""
    _need_swebench()
    from swebench.harness.constants import END_TEST_OUTPUT, START_TEST_OUTPUT, TEST_EXIT_CODE

    outputs, codes, cut = [], [], False
    for check in report.get("checks") or []:
        if check.get("kind") != "test":
            continue
        for stream in ("stdout", "stderr"):
            captured = check.get(stream) or {}
            outputs.append(str(captured.get("text") or ""))
            cut = cut or bool(captured.get("truncated"))
        if isinstance(check.get("exit_code"), int):
            codes.append(check["exit_code"])
    if not outputs:
        raise AgreementUnavailable("the verification ran no test check: no log to grade")
    exit_code = next((c for c in codes if c != 0), 0)
    body = "\n".join(outputs)
    return f"{START_TEST_OUTPUT}\n{body}\n{END_TEST_OUTPUT}\n{TEST_EXIT_CODE}: {exit_code}\n", cut


def _need_swebench() -> None:
    try:
        import swebench.harness.grading  # noqa: F401  (its import is what is checked)
    except ImportError as exc:
        raise AgreementUnavailable(
            f"the swebench package is needed to compare with its grading ({exc}); "
            "install it with: pip install 'assay[test]'"
        ) from None


@dataclass(frozen=True, slots=True)
class _Grade:
    status_map: dict[str, str]
    usable: bool
    report: dict[str, dict[str, list[str]]]
    resolution: str


def _swebench_grade(
    instance: Mapping[str, Any], sets: Mapping[str, Sequence[str]], log: str, log_parser: str
) -> _Grade:
    _need_swebench()
    from swebench.harness.grading import (
        get_eval_tests_report,
        get_logs_eval,
        get_resolution_status,
    )
    from swebench.types import TestSpec

    spec = TestSpec(
        instance_id=str(instance["instance_id"]),
        image="",
        eval_script_list=[],
        repo=str(instance["repo"]),
        version=str(instance.get("version") or ""),
        FAIL_TO_PASS=list(sets["FAIL_TO_PASS"]),
        PASS_TO_PASS=list(sets["PASS_TO_PASS"]),
        log_parser=log_parser,
        eval_type="pass_and_fail",
    )
    # get_logs_eval reads a file, as the harness writes one per run.
    with tempfile.TemporaryDirectory(prefix="assay-swebench-") as scratch:
        path = Path(scratch) / "test_output.txt"
        path.write_text(log, encoding="utf-8")
        status_map, usable = get_logs_eval(spec, str(path))
    gold = {"FAIL_TO_PASS": spec.FAIL_TO_PASS, "PASS_TO_PASS": spec.PASS_TO_PASS}
    report = get_eval_tests_report(status_map, gold)
    # The harness grades an unusable log as unresolved without a tests report.
    status = get_resolution_status(report) if usable else "RESOLVED_NO"
    return _Grade(dict(status_map), usable, report, status)


def _why_different(
    test_id: str, grading_set: str, status: str | None, outcome: str, cut: bool
) -> str:
    if status is None and outcome == "skipped":
        return "skip_line"
    if status == "SKIPPED" and grading_set == "PASS_TO_PASS" and outcome == "skipped":
        return "skipped_maintained"
    if status is None and any(c.isspace() for c in test_id):
        return "space"
    if status is None and cut:
        return "log_cut"
    return ""


def _test_ids(instance: Mapping[str, Any], key: str) -> list[str]:
    value = instance.get(key) or []
    if isinstance(value, str):  # as the published datasets hold them: JSON-encoded
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = None
    if not isinstance(value, list):
        raise AgreementUnavailable(
            f"{instance.get('instance_id')}: {key} is not a list of test ids"
        )
    return [str(v) for v in value]


def render_table(runs: Iterable[RunAgreement]) -> str:
    """The agreement table: one line per run, then the totals and every difference."""
    runs = list(runs)
    header = (
        f"{'instance':<28} {'run':<7} {'tests agree':>11} {'by design':>9} {'disagree':>8}"
        f"  {'assay':<10} {'swebench':<16} resolved"
    )
    lines = [header]
    for r in runs:
        lines.append(
            f"{r.instance_id:<28} {r.run:<7} {r.count('agree'):>5}/{len(r.tests):<5}"
            f" {r.count('by design'):>9} {r.count('disagree'):>8}  "
            f"{_resolved(r.assay_resolved):<10} {r.swebench_resolution:<16} {r.resolved_verdict}"
        )
    tests = [t for r in runs for t in r.tests]
    agree = sum(1 for t in tests if t.verdict == "agree")
    design = sum(1 for t in tests if t.verdict == "by design")
    resolved_agree = sum(1 for r in runs if r.resolved_verdict == "agree")
    lines.append(
        f"total: tests {agree}/{len(tests)} agree, {design} differ by design, "
        f"{len(tests) - agree - design} disagree; resolved {resolved_agree}/{len(runs)} agree"
    )
    for r in runs:
        for t in r.tests:
            if t.verdict != "agree":
                lines.append(
                    f"  {r.instance_id} {r.run} {t.grading_set} {t.test_id}: assay "
                    f"{t.assay_outcome}, swebench {t.swebench_status or 'missing'}"
                    f" ({t.verdict}{': ' + BY_DESIGN[t.by_design] if t.by_design else ''})"
                )
    return "\n".join(lines)


def _resolved(value: bool | None) -> str:
    return "error" if value is None else ("resolved" if value else "no")
