"""A test module unittest could not import is named by its module, with the error and the
project's line that raised it.

pycparser with a syntax error in c_generator.py: unittest's pseudo-test for the test module
that imports it was shown as `tests.test_c_generator (unittest.loader._FailedTest.tests.
test_c_generator)`, with nothing of the SyntaxError."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli import assay, assay_env
from tests.repos import write


def test_a_test_module_that_cannot_be_imported_is_named_with_its_error(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "calc.py": "def double(x):\n    return x *\n",
            "tests/__init__.py": "",
            "tests/test_calc.py": (
                "import unittest\n\nfrom calc import double\n\n\n"
                "class DoubleTest(unittest.TestCase):\n"
                "    def test_double(self):\n        self.assertEqual(double(2), 4)\n"
            ),
        },
    )
    # Not `verified_json`: the report holds unittest's own output, a traceback and all.
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", str(repo), env=env)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED"
    (unittest_check,) = (c for c in report["checks"] if c["name"] == "unittest")
    failing = [t for t in unittest_check["test_cases"] if t["outcome"] in ("failed", "error")]
    assert [t["name"] for t in failing] == ["tests.test_calc"]
    assert failing[0]["message"] == "SyntaxError: invalid syntax\n    at calc.py:2"
