"""A type check whose every error lies in installed packages says nothing of the project.

voluptuous's pristine sdist was FAILED by mypy: its `python_version = "3.9"` made the mypy
it held reject pytest's own `match` statements under `.venv/.../site-packages`, while the
project's code had no error. Here a real mypy, run by `assay verify`, finds an error only
in a package of the tree's environment: the check is UNVERIFIED, naming where; an error in
the project's own code beside it is still a failure.
"""

from __future__ import annotations

from pathlib import Path

from assay.pipeline import VerifyOptions, verify
from assay.verdict import Cause, Status, Verdict
from tests.cli import path_with_venv
from tests.repos import write

SITE = ".venv/lib/python3.11/site-packages"
TREE = {
    f"{SITE}/fancy/__init__.py": 'def f(x: int) -> int:\n    y: int = "s"\n    return x\n',
    f"{SITE}/fancy/py.typed": "",
    "pkg/__init__.py": "from fancy import f\n\n\ndef g() -> int:\n    return f(1)\n",
    "pyproject.toml": f'[project]\nname = "pkg"\nversion = "1"\n\n[tool.mypy]\nmypy_path = "{SITE}"\n',
}


def _mypy(root: Path) -> tuple[Status, Verdict, Cause, str]:
    report = verify(root, VerifyOptions(use_cache=False, kinds=frozenset({"typecheck"})))
    (check,) = [e for e in report.checks if e.check.tool == "mypy"]
    return report.status, check.verdict, check.cause, check.note


def test_errors_only_in_installed_packages_are_not_the_projects(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    write(tmp_path / "tree", TREE)
    status, verdict, cause, note = _mypy(tmp_path / "tree")
    assert (status, cause) == (Status.UNVERIFIED, Cause.TOOLCHAIN_MISSING), note
    assert verdict is not Verdict.FAIL
    assert f"{SITE}/fancy/__init__.py:2" in note and "only in installed packages" in note, note


def test_an_error_of_the_projects_own_beside_them_still_fails(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    own = "from fancy import f\n\n\ndef g() -> int:\n    return str(f(1))\n"
    write(tmp_path / "tree", {**TREE, "pkg/__init__.py": own})
    status, verdict, cause, note = _mypy(tmp_path / "tree")
    assert (status, verdict, cause) == (Status.FAILED, Verdict.FAIL, Cause.EXIT_NONZERO), note
    assert "pkg/__init__.py" in note, note
