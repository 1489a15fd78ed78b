"""The script setup.py's own `test` command runs is the project's test check: simplejson
3.19.3's runs `simplejson/tests/__init__.py`, whose `main` runs the tests again without the
C speedups and the modules' doctests, which pytest's discovery never runs; a wrong value in
the pure-Python encoder was VERIFIED."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.tools.setup_py import setup_test_argv
from tests.cli import installed_and_verified
from tests.repos import write_dedented

SETUP_PY = """
    import subprocess
    import sys

    from setuptools import Command, setup


    class TestCommand(Command):
        user_options = []

        def initialize_options(self):
            pass

        def finalize_options(self):
            pass

        def run(self):
            raise SystemExit(
                subprocess.call([sys.executable, "-Wd", "doubling/tests/__init__.py"])
            )


    cmdclass = dict(test=TestCommand)
    setup(name="doubling", version="0.1", packages=["doubling"], cmdclass=cmdclass)
"""

#: A package whose runner also runs its module's doctests, as simplejson's does.
PROJECT = {
    "setup.py": SETUP_PY,
    "doubling/__init__.py": '''
        def double(x):
            """Twice `x`.

            >>> double(2)
            4
            """
            return 2 * x


        def triple(x):
            """Three times `x`.

            >>> triple(2)
            6
            """
            return 3 * x
    ''',
    "doubling/tests/__init__.py": """
        import doctest
        import os
        import sys
        import unittest


        def main():
            import doubling
            import doubling.tests.test_double

            loader = unittest.TestLoader()
            suite = loader.loadTestsFromModule(doubling.tests.test_double)
            suite.addTest(doctest.DocTestSuite(doubling))
            result = unittest.TextTestRunner().run(suite)
            raise SystemExit(not result.wasSuccessful())


        if __name__ == "__main__":
            sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
            main()
    """,
    "doubling/tests/test_double.py": """
        import unittest

        from doubling import double


        class DoubleTest(unittest.TestCase):
            def test_double(self):
                self.assertEqual(double(2), 4)
    """,
}


def test_the_test_commands_argv_is_read_from_its_run_method() -> None:
    text = textwrap.dedent(SETUP_PY)
    assert setup_test_argv(text) == ("-Wd", "doubling/tests/__init__.py")
    as_dict = text.replace("dict(test=TestCommand)", '{"test": TestCommand}')
    assert setup_test_argv(as_dict) == ("-Wd", "doubling/tests/__init__.py")
    # Registered under another name, or run with a computed argument: not read.
    assert setup_test_argv(text.replace("dict(test=", "dict(check=")) is None
    computed = text.replace('"doubling/tests/__init__.py"', "os.path.join('a', 'b.py')")
    assert setup_test_argv(computed) is None


def test_the_planned_test_is_the_script_the_test_command_runs(tmp_path: Path) -> None:
    write_dedented(tmp_path, PROJECT)
    [test] = [c for c in plan_repository(tmp_path).checks if c.kind.value == "test"]
    assert list(test.argv)[1:] == ["-Wd", "doubling/tests/__init__.py"], test.argv
    assert test.tool == "shell"


def test_a_script_outside_the_tree_or_absent_is_not_planned(tmp_path: Path) -> None:
    for script in ("/etc/x.py", "../x.py", "doubling/tests/absent.py"):
        project = {**PROJECT, "setup.py": SETUP_PY.replace("doubling/tests/__init__.py", script)}
        write_dedented(tmp_path / "t", project)
        tests = [c for c in plan_repository(tmp_path / "t").checks if c.kind.value == "test"]
        assert all(script not in c.argv for c in tests), [c.argv for c in tests]


@pytest.mark.slow
def test_a_wrong_value_only_the_maintainers_runner_tests_fails(tmp_path: Path) -> None:
    """For real, sandboxed, installed as a fresh clone is: the pristine tree is VERIFIED, and a triple that is wrong, which
    only the doctests the runner adds test, is FAILED, naming the doctest."""
    repo = write_dedented(tmp_path / "repo", PROJECT)
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", (report["note"], report["output"])

    module = repo / "doubling/__init__.py"
    module.write_text(module.read_text().replace("return 3 * x", "return 3 + x"))
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "FAILED", (report["note"], report["output"])
    assert "triple" in report["note"], report["note"]
