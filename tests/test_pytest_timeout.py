"""A test pytest-timeout stops is a hang, not a failure of the code.

Real pytest with the real plugin, verified in real bubblewrap: the project's own
`timeout` setting stops the hanging test well before assay's no-output limit would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.parsers.pytest import STOPPED_BY_PYTEST_TIMEOUT
from assay.pipeline import VerifyOptions, verify
from assay.report import Report
from assay.verdict import Cause, Status
from tests.cli import path_with_venv
from tests.repos import write

SUITE = {
    "tests/test_suite.py": (
        "import time\n\n"
        "def test_fine():\n"
        "    assert 1 + 1 == 2\n\n"
        "def test_hangs():\n"
        "    time.sleep(600)\n"
    ),
}


def pytest_config(method: str) -> dict[str, str]:
    return {"pytest.ini": f"[pytest]\ntestpaths = tests\ntimeout = 1\ntimeout_method = {method}\n"}


@pytest.fixture(autouse=True)
def tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_with_venv())


def verified(repo: Path) -> Report:
    options = VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}))
    return verify(repo, options)


@pytest.mark.parametrize("method", ["signal", "thread"])
def test_a_test_pytest_timeout_stopped_is_a_timeout(tmp_path: Path, method: str) -> None:
    report = verified(write(tmp_path, {**SUITE, **pytest_config(method)}))
    (check,) = report.checks
    assert report.status is Status.INDETERMINATE, report.note
    assert check.cause is Cause.TIMEOUT, check.note
    # The default method names the test in the report; the thread method ends the run.
    hung = "tests.test_suite::test_hangs" if method == "signal" else STOPPED_BY_PYTEST_TIMEOUT
    assert f"pytest: {hung} did not finish within the runner's per-test timeout" in check.note
    if method == "signal":
        assert check.tests is not None
        assert (check.tests.passed, check.tests.failed) == (1, 0)  # the hang is no failure


def test_a_real_failure_beside_the_hang_still_fails(tmp_path: Path) -> None:
    suite = {"tests/test_suite.py": SUITE["tests/test_suite.py"].replace("1 + 1 == 2", "1 == 2")}
    # With every test run (no -x), the run goes on past the first failure to the hang.
    report = verify(
        write(tmp_path, {**suite, **pytest_config("signal")}),
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"}), all_tests=True),
    )
    (check,) = report.checks
    assert report.status is Status.FAILED, report.note
    assert check.cause is Cause.EXIT_NONZERO
    assert check.tests is not None and check.tests.failed == 1  # the hang is not counted
