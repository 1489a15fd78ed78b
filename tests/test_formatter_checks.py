"""The formatter's check a project runs beside its linter is a check of its own.

The plan kept one lint per ecosystem and preferred a linter to a formatter's check, so a
change its linter passed and its formatter rejected (`npm run format:check`, `ruff format
--check`) was VERIFIED where the project's CI fails. Both run now, for real: prettier
through a package script CI runs, ruff's formatter from a CI line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.plan import plan_repository
from assay.verdict import Kind
from tests.cli import assay, no_traceback
from tests.repos import write

NODE_CI = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: npm ci
      - run: npm run format:check
      - run: npm run lint
      - run: npm test
"""
NODE_TEST = (  # as prettier writes it
    'const test = require("node:test");\nconst assert = require("node:assert");\n'
    'const { double } = require("./index.js");\n\n'
    'test("doubles", () => {\n  assert.strictEqual(double(2), 4);\n});\n'
)
PY_CI = """\
name: ci
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: ruff check .
      - run: {format_line}
  test:
    runs-on: ubuntu-latest
    steps:
      - run: pytest
"""


def _node_repo(root: Path, source: str) -> Path:
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "scripts": {
            "format:check": "prettier --check index.js test.js",
            "lint": "node --check index.js",
            "test": "node --test test.js",
        },
    }
    files = {
        ".github/workflows/ci.yml": NODE_CI,
        "package.json": json.dumps(manifest),
        "index.js": source,
        "test.js": NODE_TEST,
    }
    return write(root, files)


def _py_repo(root: Path, source: str, format_line: str = "ruff format --check .") -> Path:
    return write(
        root,
        {
            ".github/workflows/ci.yml": PY_CI.format(format_line=format_line),
            "pyproject.toml": '[project]\nname = "p"\nversion = "1"\n',
            "p/__init__.py": source,
            "tests/test_p.py": "from p import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
        },
    )


def test_a_package_script_that_runs_prettier_check_is_the_projects_format_check(
    tmp_path: Path,
) -> None:
    checks = plan_repository(_node_repo(tmp_path, "")).checks
    lints = {c.name: c for c in checks if c.kind is Kind.LINT}
    assert set(lints) == {"npm-lint", "npm-format"}, lints
    assert lints["npm-format"].argv == ("npm", "run", "format:check")
    assert "prettier --check" in lints["npm-format"].reason
    # The linter's own check is confirmed by the very line CI runs it on.
    assert lints["npm-lint"].reason.endswith("CI runs it too (.github/workflows/ci.yml:10)")


@pytest.mark.parametrize(
    "rest", [["--write", "."], ["."], ["-c", "--write", "."], ["-w", "--check", "."]]
)
def test_prettier_that_rewrites_files_is_no_check(rest: list[str]) -> None:
    from assay.tools import recognise_words

    assert recognise_words("prettier", rest) is None
    found = recognise_words("prettier", ["--check", "."])
    assert found is not None and found.match.kind is Kind.LINT


def _verify(repo: Path, tmp_path: Path) -> dict[str, object]:
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=300)
    no_traceback(done)
    report: dict[str, object] = json.loads(done.stdout)
    return report


FORMATTED_JS = "function double(n) {\n  return 2 * n;\n}\n\nmodule.exports = { double };\n"
UNFORMATTED_JS = "function double(n) { return 2*n }\n\nmodule.exports = { double };\n"


@pytest.mark.skipif(shutil.which("prettier") is None, reason="needs prettier (.ci/run has it)")
@pytest.mark.parametrize(
    ("source", "status"), [(FORMATTED_JS, "VERIFIED"), (UNFORMATTED_JS, "FAILED")]
)
def test_a_change_prettier_rejects_fails_for_real(tmp_path: Path, source: str, status: str) -> None:
    report = _verify(_node_repo(tmp_path / "repo", source), tmp_path)
    assert report["status"] == status, report["note"]
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["npm-lint"]["verdict"] == "pass" and checks["npm-test"]["verdict"] == "pass"
    assert checks["npm-format"]["verdict"] == ("pass" if status == "VERIFIED" else "fail")


# `--diff` writes nothing and fails on a change, as `--check` does (cachetools' tox env).
@pytest.mark.parametrize("format_line", ["ruff format --check .", "ruff format --diff -q"])
@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("def double(n):\n    return 2 * n\n", "VERIFIED"),
        ("def double(n):\n    return   2*n\n", "FAILED"),
    ],
)
def test_a_change_ruffs_formatter_rejects_fails_for_real(
    tmp_path: Path, source: str, status: str, format_line: str
) -> None:
    report = _verify(_py_repo(tmp_path / "repo", source, format_line), tmp_path)
    assert report["status"] == status, report["note"]
    checks = {c["name"]: c for c in report["checks"]}  # type: ignore[attr-defined]
    assert checks["ruff"]["verdict"] == "pass"
    assert checks["ruff-format"]["verdict"] == ("pass" if status == "VERIFIED" else "fail")
    if status == "FAILED":
        assert "ruff-format failed: p/__init__.py" in report["note"], report["note"]
        assert "would be reformatted" in report["note"], report["note"]
