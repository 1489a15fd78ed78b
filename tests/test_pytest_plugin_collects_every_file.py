"""A project whose pytest plugins collect every .py file does not collect assay's plugin.

zipp 3.19.2 sets `norecursedirs` without pytest's default `.*`, and runs pytest-ruff and
pytest-mypy, which make an item of every .py file collection finds. The hidden directory of
the planted plugin was walked into: untouched under `--protect --install`, zipp was FAILED
on `ruff::format` of assay's own module. Here a conftest makes the same kind of item, a
licence-header check of every .py file. Real pytest, real bubblewrap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

HEADER = "# SPDX-License-Identifier: MIT\n"

CONFTEST = (
    HEADER
    + """import pytest

HEADER = "# SPDX-License-Identifier: MIT"


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".py":
        return HeaderFile.from_parent(parent, path=file_path)


class HeaderFile(pytest.File):
    def collect(self):
        yield HeaderItem.from_parent(self, name="licence-header")


class HeaderItem(pytest.Item):
    def runtest(self):
        first = self.path.read_text().partition("\\n")[0]
        assert first == HEADER, f"{self.path.name} lacks the licence header"
"""
)

PROJECT = {
    "pytest.ini": "[pytest]\nnorecursedirs = build dist\n",
    "conftest.py": CONFTEST,
    "calc.py": HEADER + "def add(a, b):\n    return a + b\n",
    "test_calc.py": HEADER
    + "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}


def test_a_plugin_collecting_every_py_file_does_not_judge_the_planted_one(
    tmp_path: Path,
) -> None:
    repo = change_on_base(tmp_path / "repo", PROJECT, {"README.md": "calc\n"}, dedent=False)
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is Status.VERIFIED, explain(report)
    (check,) = [check for check in report.checks if check.tests is not None]
    assert check.tests is not None
    assert (check.tests.passed, check.tests.failed) == (4, 0), explain(report)
