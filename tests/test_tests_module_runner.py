"""A CI step that runs the project's own test runner module (`python -m PKG.tests.RUNNER`)
is the test check, not pytest's default discovery.

Measured on real projects: simplejson's CI runs `python -m simplejson.tests._cibw_runner .`,
a unittest suite that runs every test a second time without the C speedups and adds
doctests. assay did not recognise the step, fell back to pytest's discovery, which runs
neither, and, with `--install` (the speedups built), VERIFIED a change to the pure-Python
encoder that the project's runner fails 37 times.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.command_lines import recognise
from assay.pipeline import VerifyOptions, verify
from assay.plan import plan_repository
from assay.verdict import Kind, Status
from tests.repos import write

RUNNER_PROJECT = {
    "pyproject.toml": "[project]\nname = 'pkg'\nversion = '0'\n",
    ".github/workflows/ci.yml": (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: python -m pkg.tests.runner .\n"
    ),
    "pkg/__init__.py": "def double(x):\n    return x * 2\n\n\ndef double_pure(x):\n    return x * 3\n",
    "pkg/tests/__init__.py": "",
    "pkg/tests/test_double.py": (
        "import unittest\n\nimport pkg\n\n\nclass TestDouble(unittest.TestCase):\n"
        "    def test_double(self):\n        self.assertEqual(pkg.double(2), 4)\n"
    ),
    # The runner adds a pass pytest's discovery never makes (simplejson: without speedups).
    "pkg/tests/runner.py": (
        "import sys\nimport unittest\n\nimport pkg\nfrom pkg.tests import test_double\n\n\n"
        "class TestPure(unittest.TestCase):\n"
        "    def test_double_pure(self):\n        self.assertEqual(pkg.double_pure(2), 4)\n\n\n"
        "if __name__ == '__main__':\n"
        "    load = unittest.defaultTestLoader\n"
        "    suite = unittest.TestSuite([load.loadTestsFromModule(test_double),\n"
        "                                load.loadTestsFromTestCase(TestPure)])\n"
        "    sys.exit(not unittest.TextTestRunner().run(suite).wasSuccessful())\n"
    ),
}


@pytest.mark.parametrize(
    ("line", "module_test"),
    [
        ("python -m simplejson.tests._cibw_runner .", True),
        ("python3 -m tests", True),
        ("python -W error -m pkg.test.run -v", True),
        ("python -m build", False),
        ("python -m pkg.testsuite", False),
        ("coverage run -m tests.run", False),
    ],
)
def test_a_test_package_module_run_by_python_is_a_test(line: str, module_test: bool) -> None:
    hit = recognise(line.split())
    if not module_test:
        assert hit is None or hit.tool != "shell", hit
        return
    assert hit is not None and hit.kind is Kind.TEST and hit.tool == "shell", hit
    assert hit.argv == tuple(line.split())


def test_the_plan_runs_the_ci_runner_module_not_pytests_discovery(tmp_path: Path) -> None:
    root = write(tmp_path, RUNNER_PROJECT)
    tests = [c for c in plan_repository(root).checks if c.kind is Kind.TEST]
    assert [c.argv[1:] for c in tests] == [("-m", "pkg.tests.runner", ".")], tests


@pytest.mark.slow
def test_a_failure_only_the_projects_runner_sees_is_failed(tmp_path: Path) -> None:
    """The runner needs nothing but the interpreter on PATH."""
    report = verify(
        write(tmp_path, RUNNER_PROJECT),
        VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"test"})),
    )
    assert report.status is Status.FAILED, report.note
    (check,) = report.checks
    assert check.tests is not None and check.tests.failed == 1, check.tests
