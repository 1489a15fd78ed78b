"""Flaky grading-set tests are named, never counted: a SWE-bench instance whose new test
fails the first time it runs in a workspace and passes from then on, graded for real
(imported from a git clone, `assay eval` through bubblewrap, the store, the reports).

The flaky test is real: it fails when a marker file beside it is absent and writes it, so
any run in a fresh process after the first one in a workspace passes (the workspace lives
as long as the verification; the task's source never sees the marker).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import NEW_TESTS, git_diff, make_instance, write_jsonl

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

FLAKY_ID, STEADY_ID = "acme__calc-flaky", "acme__calc-steady"
FLAKY_TEST = "tests/test_calc.py::test_add"
#: The test patch's new test, made flaky: it fails the first time it runs in a workspace.
FLAKY_TESTS = (
    NEW_TESTS.replace("from calc import", "from pathlib import Path\n\nfrom calc import")
    + """

SEEN = Path(__file__).with_name(".seen-add")


def test_add_twice():
    assert add(add(1, 1), 1) == 3
"""
).replace(
    "def test_add():\n",
    "def test_add():\n"
    "    first = not SEEN.exists()\n"
    '    SEEN.write_text("ran once")\n'
    '    assert not first, "fails the first time it runs in this workspace"\n',
)


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two tasks from one clone: the flaky instance, and the same one with a steady test."""
    root = tmp_path_factory.mktemp("swebench-flaky")
    steady = make_instance(root / "repos")
    flaky = dict(
        steady,
        instance_id=FLAKY_ID,
        test_patch=git_diff(root / "repos" / "acme__calc", "tests/test_calc.py", FLAKY_TESTS),
    )
    jsonl = write_jsonl(root / "instances.jsonl", [flaky, dict(steady, instance_id=STEADY_ID)])
    out = root / "tasks"
    done = assay("tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(out))
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    return out


def _json(*argv: str) -> Any:
    done = assay(*argv, timeout=900)
    no_traceback(done)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_a_flaky_fail_to_pass_test_is_named_and_the_attempt_is_not_resolved(
    tasks: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "evals.sqlite")
    summary = _json(
        "eval", str(tasks), "--agent", "oracle", "--store", store, "--concurrency", "2", "--json"
    )
    rows = {row["task_id"]: row for row in summary["attempts"]}
    flaky, steady = rows[FLAKY_ID], rows[STEADY_ID]

    # Neither a pass nor a fail: INDETERMINATE, not resolved, the test named as flaky.
    assert flaky["outcome"] == "scored" and flaky["status"] == "INDETERMINATE"
    assert flaky["score"] == 0.0
    assert flaky["tampering"] == []  # a test writing beside itself is no forgery
    assert flaky["tests"]["fail_to_pass"] == {FLAKY_TEST: "flaky"}
    assert flaky["flaky"] == {"fail_to_pass": [FLAKY_TEST], "pass_to_pass": []}
    assert flaky["resolved"] is False
    assert flaky["unresolved_reason"].startswith("flaky: ")
    assert FLAKY_TEST in flaky["unresolved_reason"]
    # The steady twin is untouched by the policy: resolved, nothing flaky, nothing rerun.
    assert steady["resolved"] is True and steady["status"] == "VERIFIED"
    assert steady["flaky"] == {"fail_to_pass": [], "pass_to_pass": []}

    text = assay("report", "--store", store)
    no_traceback(text)
    assert f"flaky: {FLAKY_TEST}" in text.stdout
    page = tmp_path / "report.html"
    no_traceback(assay("report", "--store", store, "--html", str(page)))
    assert "flaky (failed, then passed on a rerun): tests.test_calc::test_add" in page.read_text()

    # SWE-bench's report: unresolved, and an ambiguous failure with its reason (as its
    # harness reports a failure that may not be the patch's), never resolved.
    report = _json("report", "--store", store, "--format", "swebench")
    assert report["resolved_ids"] == [STEADY_ID]
    assert report["unresolved_ids"] == [FLAKY_ID]
    assert report["ambiguous_failure_ids"] == [FLAKY_ID]
    assert report["ambiguous_failure_instances"] == 1
    assert report["failure_reasons"] == {FLAKY_ID: "flaky_tests"}
    assert FLAKY_TEST in report["unresolved_reasons"][FLAKY_ID]


def test_a_failing_grading_test_that_fails_every_rerun_stays_failed(
    tasks: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "evals.sqlite")
    summary = _json("eval", str(tasks / FLAKY_ID), "--agent", "nop", "--store", store, "--json")
    (row,) = summary["attempts"]
    # With nothing fixed, the new test fails its first run and every rerun: a real failure.
    assert row["status"] == "FAILED"
    assert row["tests"]["fail_to_pass"] == {FLAKY_TEST: "failed"}
    assert row["flaky"] == {"fail_to_pass": [], "pass_to_pass": []}
    assert row["resolved"] is False and not row["unresolved_reason"].startswith("flaky")


def test_without_reruns_the_flaky_test_is_a_plain_failure(tasks: Path, tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(tasks / FLAKY_ID, task)
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text().replace("[verification]\n", "[verification]\nrerun_failures = 0\n")
    )
    store = str(tmp_path / "evals.sqlite")
    summary = _json("eval", str(task), "--agent", "oracle", "--store", store, "--json")
    (row,) = summary["attempts"]
    assert row["status"] == "FAILED"
    assert row["tests"]["fail_to_pass"] == {FLAKY_TEST: "failed"}


def test_validation_rejects_a_task_whose_gold_patch_is_flaky(tasks: Path) -> None:
    done = assay("tasks", "validate", str(tasks), "--concurrency", "2", "--json", timeout=900)
    no_traceback(done)
    assert done.returncode == 1, (done.stdout, done.stderr)
    verdicts = {v["task_id"]: v for v in json.loads(done.stdout)["tasks"]}
    assert verdicts[STEADY_ID]["valid"] is True
    assert verdicts[FLAKY_ID]["valid"] is False
    reason = verdicts[FLAKY_ID]["reason"]
    assert "flaky" in reason and FLAKY_TEST in reason


def test_a_grading_test_in_a_class_is_matched_to_the_name_pytest_reports() -> None:
    # SWE-bench names it path::Class::test; pytest's JUnit report module.Class::test.
    from assay.eval.verify_stage import normalize_test_id

    reported = "tests.test_idna.IDNATests::test_check_bidi"
    assert normalize_test_id("tests/test_idna.py::IDNATests::test_check_bidi") == reported
    assert normalize_test_id(reported) == reported
    assert normalize_test_id("tests/test_a.py::test_x[a::b]") == "tests.test_a::test_x[a::b]"
    assert normalize_test_id("tests/test_a.py::T::test_x[1]") == "tests.test_a.T::test_x[1]"
