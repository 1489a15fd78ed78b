"""`assay verify` options that shape a run: `--deadline` and `--kind`."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from assay.evidence import Evidence
from tests.cli import assay


@pytest.mark.slow
def test_overall_deadline_cuts_the_run_short(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_slow.py").write_text(
        "import time\n\n\ndef test_slow():\n    time.sleep(30)\n"
    )
    started = time.monotonic()
    done = assay(
        *("verify", "--json", "--sandbox", "local", "--timeout", "60", "--deadline", "3"),
        str(repo),
        timeout=120,
        env=dict(os.environ),
    )
    elapsed = time.monotonic() - started
    report = json.loads(done.stdout)
    assert done.returncode == 3
    assert report["status"] == "INDETERMINATE"
    pytest_check = next(c for c in report["checks"] if c["name"] == "pytest")
    assert pytest_check["cause"] == "timeout"
    assert elapsed < 15, f"the 3 s budget took {elapsed:.1f} s"
    # Stopped by the run's deadline before its own 60 s: the note says which, and the advice
    # is the one that helps (a longer --timeout would not have).
    assert "stopped at the run's overall deadline (--deadline)" in report["note"], report["note"]
    assert "raise --deadline" in report["note"], report["note"]
    assert pytest_check["extra"]["stopped_by"] == "run_deadline", pytest_check["extra"]


def test_a_check_that_hung_by_itself_leads_one_the_run_deadline_cut() -> None:
    """tiny-invariant: the tests hung at their own no-output limit, and the build of the last
    stage was cut by what was left of --deadline; the note led with the build."""
    from assay.classify import stopped_by_run_deadline
    from assay.evidence import Check, evidence_for
    from assay.report import aggregate
    from assay.verdict import Cause, Kind
    from tests.results import process_result

    def timed_out(kind: Kind, name: str, silent_s: float | None) -> Evidence:
        check = Check(name=name, kind=kind, argv=(name,))
        ran = replace(process_result((name,), exit_code=None, timed_out=True), silent_s=silent_s)
        note = f"{name} was killed at its deadline; raise the timeout if it is just slow."
        return evidence_for(check, Cause.TIMEOUT, result=ran, note=note)

    build = stopped_by_run_deadline(timed_out(Kind.BUILD, "yarn-build", None))
    test = stopped_by_run_deadline(timed_out(Kind.TEST, "yarn-test", 60.0))
    assert build.note.startswith("yarn-build was stopped at the run's overall deadline")
    assert test.extra == {}, "stopped by its own no-output limit: the note stands"
    note = aggregate([build, test]).note
    assert note.startswith("yarn-test was killed at its deadline"), note
    assert "Also inconclusive: yarn-build" in note, note


def test_a_check_that_hung_by_itself_leads_one_the_run_deadline_kept_from_starting() -> None:
    """The same run with less --deadline left: the last stage's build never started, and
    the note led with it ("the run's overall deadline passed before this check could
    start"), a build's failure ranking before a test's."""
    from assay.classify import not_started_by_run_deadline
    from assay.evidence import Check, evidence_for
    from assay.report import aggregate
    from assay.verdict import Cause, Kind
    from tests.results import process_result

    check = Check(name="yarn-test", kind=Kind.TEST, argv=("yarn", "test"))
    ran = replace(process_result(("yarn",), exit_code=None, timed_out=True), silent_s=60.0)
    note = "yarn-test was killed at its deadline; raise the timeout if it is just slow."
    test = evidence_for(check, Cause.TIMEOUT, result=ran, note=note)
    build = not_started_by_run_deadline(
        Check(name="yarn-build", kind=Kind.BUILD, argv=("yarn",)), "bwrap"
    )
    assert build.cause is Cause.TIMEOUT and not build.passed
    note = aggregate([build, test]).note
    assert note.startswith("yarn-test was killed at its deadline"), note
    assert "Also inconclusive: yarn-build" in note, note


@pytest.mark.slow
def test_kinds_without_tests_do_not_require_tests(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[tool.ruff]\n[tool.pytest.ini_options]\n")
    (repo / "tests" / "test_a.py").write_text("def test_a() -> None:\n    assert False\n")

    # ruff and pytest come from this interpreter's environment (assay's default PATH).
    def verify(*args: str) -> dict:
        done = assay("verify", "--json", "--sandbox", "local", *args, str(repo), timeout=120)
        return json.loads(done.stdout)

    lint_only = verify("--kind", "lint")
    assert [c["name"] for c in lint_only["checks"]] == ["ruff"]
    assert lint_only["status"] == "VERIFIED", lint_only["note"]
    everything = verify()
    assert everything["status"] == "FAILED"  # the failing test is seen when tests are asked for
