"""Tests that live inside the package (`toolz/tests/`, `pkg/sub/test_x.py`) with no runner
configured: pytest's own discovery from the root finds them, so pytest is planned; test
files only in places pytest never looks (virtualenvs, build output, dot-directories)
plan nothing. End to end: such a project is verified, and its planted bug fails."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.verdict import Kind
from tests.cli import ASSAY
from tests.repos import write

CODE = "def add(a, b):\n    return a + b\n"
TEST = "from pkg.core import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
SETUP = "from setuptools import setup\n\nsetup(name='pkg', packages=['pkg'])\n"


def _test_checks(root: Path) -> list[tuple[str, ...]]:
    return [c.argv for c in plan_repository(root).checks if c.kind is Kind.TEST]


@pytest.mark.parametrize(
    "test_file",
    [
        "pkg/tests/test_core.py",  # toolz: toolz/tests/
        "pkg/sub/tests/test_core.py",  # toolz: toolz/sandbox/tests/
        "pkg/test_core.py",
        "pkg/core_test.py",
        "src/pkg/tests/test_core.py",
    ],
)
def test_tests_inside_the_package_plan_pytest(tmp_path: Path, test_file: str) -> None:
    write(tmp_path, {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/core.py": CODE})
    write(tmp_path, {test_file: TEST})
    checks = _test_checks(tmp_path)
    assert len(checks) == 1 and checks[0][1:3] == ("-m", "pytest"), checks
    (test,) = [c for c in plan_repository(tmp_path).checks if c.kind is Kind.TEST]
    assert test_file in (test.reason or ""), test.reason


@pytest.mark.parametrize(
    "test_file",
    [
        ".venv/lib/python3.11/site-packages/six/test_six.py",
        "env/lib/python3.11/site-packages/six/test_six.py",  # a virtualenv by its pyvenv.cfg
        "node_modules/x/test_x.py",
        "build/lib/pkg/tests/test_core.py",
        "dist/pkg/test_core.py",
        ".tox/py311/test_x.py",
        "pkg.egg/test_core.py",
        "pkg/tests/helper.py",  # not a test file by pytest's names
    ],
)
def test_test_files_where_pytest_never_looks_plan_nothing(tmp_path: Path, test_file: str) -> None:
    write(tmp_path, {"setup.py": SETUP, "pkg/__init__.py": "", "pkg/core.py": CODE})
    write(tmp_path, {test_file: TEST, "env/pyvenv.cfg": "home = /usr/bin\n"})
    assert _test_checks(tmp_path) == []


def test_the_search_is_bounded(tmp_path: Path) -> None:
    # A tree deeper than any package's tests: a test file at the bottom is not worth the walk.
    deep = "/".join(f"d{i}" for i in range(40))
    write(tmp_path, {"setup.py": SETUP, f"{deep}/test_deep.py": TEST})
    assert _test_checks(tmp_path) == []


def _verify(repo: Path, cache: Path) -> tuple[int, str]:
    done = subprocess.run(
        [ASSAY, "verify", str(repo), "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        | {"ASSAY_CACHE_DIR": str(cache)},
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)["status"]


def test_a_package_with_its_tests_inside_is_verified_and_its_bug_fails(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "setup.py": SETUP,
            "pkg/__init__.py": "",
            "pkg/core.py": CODE,
            "pkg/tests/test_core.py": TEST,
        },
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    code, status = _verify(repo, tmp_path / "cache")
    assert (code, status) == (0, "VERIFIED"), status
    (repo / "pkg/core.py").write_text(CODE.replace("a + b", "a - b"))
    code, status = _verify(repo, tmp_path / "cache")
    assert (code, status) == (1, "FAILED"), status
