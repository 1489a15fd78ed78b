"""A src-layout project that is not installed cannot be tested: UNVERIFIED, not FAILED.

Real `assay verify` runs (the default sandbox) on small src-layout projects with no
install step done, as a fresh checkout is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay

pytestmark = pytest.mark.slow


def _src_project(root: Path, test_imports: str) -> Path:
    (root / "src" / "calc").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "0"\n')
    (root / "src" / "calc" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        f"{test_imports}\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    )
    return root


def _verify(repo: Path) -> tuple[int, dict[str, object]]:
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=180)
    assert "Traceback" not in done.stderr, done.stderr  # pytest's own output quotes one
    return done.returncode, json.loads(done.stdout)


def _pytest_check(report: dict[str, object]) -> dict[str, object]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == "pytest")


def test_the_projects_own_package_not_installed_is_unverified(tmp_path: Path) -> None:
    code, report = _verify(_src_project(tmp_path, "from calc import add"))
    check = _pytest_check(report)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert code == 4
    assert check["cause"] == "toolchain_missing"
    assert "could not import calc, the project's own package under src/" in str(check["note"])
    assert "assay verify --install" in str(check["note"])


def test_a_module_missing_from_the_tree_still_fails(tmp_path: Path) -> None:
    # A change that deletes or misspells a module: no install step would mend it.
    code, report = _verify(_src_project(tmp_path, "from calcc import add"))
    assert report["status"] == "FAILED", report["note"]
    assert code == 1
    assert _pytest_check(report)["cause"] == "exit_nonzero"
