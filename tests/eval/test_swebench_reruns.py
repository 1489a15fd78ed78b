"""`assay eval --rerun-failures N` and which failing tests grading reruns, for real: SWE-bench
instances imported from a git clone and graded through bubblewrap.

The flaky tests are real: each fails when a marker file beside it is absent and writes
it, so any run in a fresh process after the first one in a workspace passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import NEW_TESTS, git_diff, make_instance, write_jsonl
from tests.eval.test_swebench_flaky import FLAKY_TEST, FLAKY_TESTS

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

FLAKY_ID, OUTSIDE_ID = "acme__calc-flaky", "acme__calc-outside"
#: The test patch's tests, and one more that is in neither grading set and fails the
#: first time it runs in a workspace.
OUTSIDE_TESTS = NEW_TESTS.replace(
    "from calc import", "from pathlib import Path\n\nfrom calc import"
) + (
    """

SEEN = Path(__file__).with_name(".seen-outside")


def test_outside():
    first = not SEEN.exists()
    SEEN.write_text("ran once")
    assert not first, "fails the first time it runs in this workspace"
"""
)


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("swebench-reruns")
    steady = make_instance(root / "repos")
    clone = root / "repos" / "acme__calc"
    flaky = dict(
        steady,
        instance_id=FLAKY_ID,
        test_patch=git_diff(clone, "tests/test_calc.py", FLAKY_TESTS),
    )
    outside = dict(
        steady,
        instance_id=OUTSIDE_ID,
        test_patch=git_diff(clone, "tests/test_calc.py", OUTSIDE_TESTS),
    )
    jsonl = write_jsonl(root / "instances.jsonl", [flaky, outside])
    out = root / "tasks"
    done = assay("tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(out))
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    return out


def _eval(*argv: str) -> dict[str, Any]:
    done = assay("eval", *argv, "--json", timeout=900)
    no_traceback(done)
    assert done.returncode == 0, (done.stdout, done.stderr)
    row: dict[str, Any]
    (row,) = json.loads(done.stdout)["attempts"]
    return row


def test_rerun_failures_0_overrides_the_task_and_a_flaky_test_is_a_plain_failure(
    tasks: Path, tmp_path: Path
) -> None:
    store = str(tmp_path / "evals.sqlite")
    row = _eval(
        str(tasks / FLAKY_ID), "--agent", "oracle", "--store", store, "--rerun-failures", "0"
    )
    # The task says 2 (the default); the command line says none: the failure stands.
    assert row["status"] == "FAILED"
    assert row["tests"]["fail_to_pass"] == {FLAKY_TEST: "failed"}
    assert row["flaky_tests"] == []
    assert row["resolved"] is False


def test_rerun_failures_overrides_a_task_that_says_none(tasks: Path, tmp_path: Path) -> None:
    task = tmp_path / "task"
    shutil.copytree(tasks / FLAKY_ID, task)
    toml = task / "task.toml"
    toml.write_text(
        toml.read_text().replace("[verification]\n", "[verification]\nrerun_failures = 0\n")
    )
    store = str(tmp_path / "evals.sqlite")
    row = _eval(str(task), "--agent", "oracle", "--store", store, "--rerun-failures", "2")
    assert row["tests"]["fail_to_pass"] == {FLAKY_TEST: "flaky"}
    assert row["resolved"] is False and row["unresolved_reason"].startswith("flaky: ")


def test_a_failing_test_outside_the_grading_sets_is_not_rerun(tasks: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "evals.sqlite")
    row = _eval(str(tasks / OUTSIDE_ID), "--agent", "oracle", "--store", store)
    # Graded on its sets alone: resolved. The test outside them failed and was not run
    # again, so it is a failure of the check, never named flaky.
    assert row["resolved"] is True
    assert row["tests"] == {
        "fail_to_pass": {"tests/test_calc.py::test_add": "passed"},
        "pass_to_pass": {"tests/test_calc.py::test_sub": "passed"},
    }
    assert row["flaky_tests"] == []
    assert row["status"] == "FAILED"


def test_rerun_failures_must_be_a_whole_number(tasks: Path, tmp_path: Path) -> None:
    done = assay(
        "eval", str(tasks / FLAKY_ID), "--agent", "nop", "--rerun-failures", "-1",
        "--store", str(tmp_path / "evals.sqlite"),
    )  # fmt: skip
    no_traceback(done)
    assert done.returncode == 2
    assert "--rerun-failures" in done.stderr


def test_resume_keeps_the_rerun_failures_the_evaluation_began_with(
    tasks: Path, tmp_path: Path
) -> None:
    from assay.eval.store import Store
    from assay.eval.task import load_task

    # As `assay eval --rerun-failures 0` leaves an evaluation stopped before its attempt.
    store_path = tmp_path / "evals.sqlite"
    store = Store(store_path)
    try:
        spec = load_task(tasks / FLAKY_ID)
        config = {"epochs": 1, "sandbox": "auto", "planned": 1, "rerun_failures": 0}
        eval_id = store.create_eval("oracle", config, [spec.to_dict()])
    finally:
        store.close()
    row = _eval("--resume", eval_id, "--store", str(store_path))
    assert row["status"] == "FAILED"
    assert row["tests"]["fail_to_pass"] == {FLAKY_TEST: "failed"}
