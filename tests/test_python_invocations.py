"""How real projects start their Python tests, run for real: a make target whose recipe is
`python3 -munittest` (jsonpointer 3.12), and a pytest whose configured `addopts` names
pytest-cov's options where pytest-cov is not installed (parse 1.22.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.plan import plan_repository
from assay.verdict import Status
from tests.cli import path_with_venv
from tests.repos import write

MODULE = "def double(x):\n    return x * 2\n"
UNITTEST = (
    "import unittest\n\nfrom pkg import double\n\n\n"
    "class T(unittest.TestCase):\n"
    "    def test_double(self):\n        self.assertEqual(double(2), {})\n\n"
    "    def test_zero(self):\n        self.assertEqual(double(0), 0)\n"
)
COVERAGE_ADDOPTS = (
    "[tool.pytest.ini_options]\n"
    'addopts = "--cov=pkg --cov-report=term-missing --cov-append --cov-branch --doctest-modules"\n'
)
PYTEST_TESTS = "from pkg import double\n\n\ndef test_double():\n    assert double(2) == {}\n"
DOCTESTED = 'def double(x):\n    """\n    >>> double(3)\n    6\n    """\n    return x * 2\n'


@pytest.fixture(autouse=True)
def venv_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", path_with_venv())


def run(root: Path):  # type: ignore[no-untyped-def]
    return verify(root, VerifyOptions(sandbox="local", use_cache=False))


@pytest.mark.parametrize(("expected", "status"), [(4, Status.VERIFIED), (5, Status.FAILED)])
def test_a_make_target_running_unittest_glued_to_m_is_counted(
    tmp_path: Path, expected: int, status: Status
) -> None:
    root = write(
        tmp_path,
        {
            "setup.py": "from setuptools import setup\nsetup(name='pkg')\n",
            "pkg/__init__.py": MODULE,
            "test_pkg.py": UNITTEST.format(expected),
            "makefile": "help:\n\t@echo targets\n\ntest:\n\tpython3 -munittest\n",
        },
    )
    report = run(root)
    assert report.status is status, report.note
    (tests,) = [e for e in report.checks if e.check.name == "make-test"]
    assert tests.tests is not None
    assert (tests.tests.passed, tests.tests.failed) == ((2, 0) if expected == 4 else (1, 1))


def test_configured_coverage_options_are_left_out_of_addopts(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pyproject.toml": COVERAGE_ADDOPTS,
            "pkg/__init__.py": DOCTESTED,
            "tests/test_pkg.py": PYTEST_TESTS.format(4),
        },
    )
    (pytest_check,) = [c for c in plan_repository(root).checks if c.name == "pytest"]
    assert pytest_check.argv[-2:] == ("-o", "addopts=--doctest-modules")
    report = run(root)
    assert report.status is Status.VERIFIED, report.note
    (tests,) = [e for e in report.checks if e.check.name == "pytest"]
    assert tests.tests is not None and tests.tests.passed == 2  # the doctest still runs
    (root / "tests" / "test_pkg.py").write_text(PYTEST_TESTS.format(5))
    assert run(root).status is Status.FAILED


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(
            {"pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-ra"\n'}, id="no-coverage"
        ),
        pytest.param(
            {"pyproject.toml": COVERAGE_ADDOPTS, "pytest.ini": "[pytest]\n"},
            id="pytest-ini-first",
        ),
    ],
)
def test_addopts_is_left_alone_otherwise(tmp_path: Path, files: dict[str, str]) -> None:
    root = write(tmp_path, {**files, "pkg/__init__.py": MODULE, "tests/test_pkg.py": ""})
    (pytest_check,) = [c for c in plan_repository(root).checks if c.name == "pytest"]
    assert "-o" not in pytest_check.argv
