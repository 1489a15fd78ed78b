"""pytest before 9 loads the project's initial conftests to print its version. Where a
conftest imports the package under test and that import fails (a name error at module
level, which byte-compiling does not see), `pytest --version` exited 1 and assay read it as
a missing pytest: UNVERIFIED for broken code (wcwidth, with pytest 8 pinned). The probe asks
with `--noconftest`; the check itself then fails. (pytest 8 only warns that it could not
load the conftest, and exits 1 where the warning is an error, as wcwidth's
`filterwarnings = error` makes it.) Run with a real pytest 8.3.5 installed
from PyPI into the tree's own virtualenv, as `--install` makes it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.probe_record import NO_PROBE_CACHE_VAR
from tests.cli import assay, assay_env
from tests.repos import tree_with_venv, write

PYTEST_8 = "pytest==8.3.5"


@pytest.fixture(scope="module")
def repo_with_pytest_8() -> Iterator[Path]:
    """A tree whose own `.venv` has pytest 8."""
    repo = tree_with_venv("assay-pytest8-", PYTEST_8)
    yield repo
    shutil.rmtree(repo)


@pytest.mark.parametrize(("module", "status"), [("x = 1", "VERIFIED"), ("x = y", "FAILED")])
def test_a_conftest_that_cannot_import_the_code_fails_the_tests_not_the_probe(
    repo_with_pytest_8: Path, module: str, status: str
) -> None:
    repo = write(
        repo_with_pytest_8,
        {
            # wcwidth's: pytest 8 then fails `--version` on the conftest's warning.
            "pytest.ini": "[pytest]\ntestpaths = tests\nfilterwarnings =\n    error\n",
            "pkg/__init__.py": f"{module}\n",
            "tests/conftest.py": "import pkg  # noqa: F401\n",
            "tests/test_pkg.py": "import pkg\n\n\ndef test_x():\n    assert pkg.x == 1\n",
        },
    )
    # Probed afresh: a version recorded by an earlier run would hide what the probe says.
    env = {**assay_env(), NO_PROBE_CACHE_VAR: "1"}
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), env=env)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == status, (report["checks"][0]["cause"], report["note"])
    (check,) = report["checks"]
    assert check["checker"]["version"] == "8.3.5", check
    if status == "FAILED":  # named where the code broke, not as pytest's usage error
        (found,) = check["diagnostics"]
        assert (found["file"], found["line"]) == ("pkg/__init__.py", 1), found
        assert found["message"] == "NameError: name 'y' is not defined"


def test_a_conftest_importing_a_module_nowhere_installed_is_no_failure_of_the_code(
    repo_with_pytest_8: Path,
) -> None:
    # A dependency that is not installed is the environment's want, not the code's fault.
    repo = write(repo_with_pytest_8, {"tests/conftest.py": "import assay_absent_module_q7\n"})
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] != "FAILED", report["note"]
    assert report["status"] != "VERIFIED", report["note"]
