"""unittest test modules that call unittest.main() when imported are scripts, not modules
discovery can load: ply's tests/testlex.py ends in a bare `unittest.main()`, its Makefile
runs `python tests/testlex.py`, and discovery's import ran it with discovery's own
arguments, so the pristine tree was FAILED with every module an import error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.plan import plan_repository
from tests.cli import assay, assay_env
from tests.repos import write_dedented

SCRIPT = """
    import os
    import sys
    import unittest

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    from calc import add


    class AddTest(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 3), 5)


    unittest.main()
"""

#: Modelled on ply: a Makefile whose `test` runs each test module as a script.
PROJECT = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "Makefile": "test::\n\tpython3 tests/testcalc.py\n\tpython3 tests/testmore.py\n",
    "tests/testcalc.py": SCRIPT,
    "tests/testmore.py": SCRIPT.replace("AddTest", "MoreTest"),
}


def test_scripts_are_not_discovered_and_the_projects_command_runs(tmp_path: Path) -> None:
    write_dedented(tmp_path, PROJECT)
    p = plan_repository(tmp_path)
    [test] = [c for c in p.checks if c.kind.value == "test"]
    assert test.argv == ("make", "test"), test.argv
    [why] = [d for d in p.dropped if "discover" in d.what]
    assert (why.source.file, why.source.line) == ("tests/testcalc.py", 15), why
    assert "unittest.main()" in why.reason


@pytest.mark.parametrize(
    "ending",
    ['if __name__ == "__main__":\n    unittest.main()\n', "def main():\n    unittest.main()\n"],
)
def test_a_guarded_main_leaves_discovery_planned(tmp_path: Path, ending: str) -> None:
    guarded = SCRIPT.replace("unittest.main()\n", ending.replace("\n    ", "\n        "))
    write_dedented(tmp_path, {**PROJECT, "Makefile": "", "tests/testcalc.py": guarded})
    (tmp_path / "tests/testmore.py").unlink()
    [test] = [c for c in plan_repository(tmp_path).checks if c.kind.value == "test"]
    assert test.argv[-3:] == ("discover", "-s", "tests"), test.argv


def _verified(repo: Path, state: Path) -> dict[str, Any]:
    """The JSON report; the failing test's own traceback is part of a FAILED one."""
    env = assay_env(ASSAY_CACHE_DIR=str(state))
    done = assay("verify", "--json", "--no-cache", str(repo), env=env, timeout=300)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.slow
def test_the_pristine_scripts_pass_and_a_wrong_value_fails(tmp_path: Path) -> None:
    repo = write_dedented(tmp_path / "repo", PROJECT)
    report = _verified(repo, tmp_path / "state")
    assert report["status"] == "VERIFIED", (report["note"], report["output"])

    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    report = _verified(repo, tmp_path / "state")
    assert report["status"] == "FAILED", (report["note"], report["output"])
    assert "AddTest.test_add" in report["note"], report["note"]
