"""Python tests in a module named `tests.py` (or `test.py`), a name pytest's default
patterns pass over: webencodings 0.5.1 keeps its tests in webencodings/tests.py, which its
maintainers ran as `py.test webencodings/tests.py`. assay planned no test at all and said
UNVERIFIED, "No test check executed any test"; pytest is now pointed at the module."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.repos import write
from tests.test_go_cache import verify

LOWER = "def lower(s):\n    return {body}\n"
TESTS = "from calc import lower\n\n\ndef test_lower():\n    assert lower('AB') == 'ab'\n"


def _project(root: Path, body: str, tests: str = TESTS) -> Path:
    return write(
        root,
        {
            "setup.py": "from setuptools import setup\nsetup(name='calc')\n",
            "calc/__init__.py": LOWER.format(body=body),
            "calc/tests.py": tests,
        },
    )


def test_a_tests_module_pytest_passes_over_is_named_to_it(tmp_path: Path) -> None:
    (test,) = [
        c for c in plan_repository(_project(tmp_path / "a", "s")).checks if c.name == "pytest"
    ]
    assert test.argv[2:4] == ("pytest", "calc/tests.py"), test
    # A module of that name that defines no test is no test module.
    helpers = _project(tmp_path / "b", "s", tests="def helper():\n    return 1\n")
    assert [c.name for c in plan_repository(helpers).checks] == ["compileall"]
    # Where pytest's own patterns find tests, its discovery from the root stands.
    found = write(_project(tmp_path / "c", "s"), {"tests/test_more.py": TESTS})
    (test,) = [c for c in plan_repository(found).checks if c.name == "pytest"]
    assert "calc/tests.py" not in test.argv, test


@pytest.mark.parametrize(("body", "status"), [("s.lower()", "VERIFIED"), ("s", "FAILED")])
def test_a_tests_module_is_verified_for_real(tmp_path: Path, body: str, status: str) -> None:
    report = verify(_project(tmp_path / "repo", body), tmp_path / "state")
    assert report["status"] == status, report["note"]
    (test,) = [c for c in report["checks"] if c["name"] == "pytest"]
    assert test["tests"]["executed"] == 1, test
