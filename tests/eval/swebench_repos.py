"""A tiny real repository in SWE-bench's shape: a bug at the base commit, the gold patch
that fixes it, and a test patch that adds a failing test (FAIL_TO_PASS) beside one that
passes before and after (PASS_TO_PASS); written as an instances JSONL file."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from tests.eval.tasks import git

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
FIXED = BUGGY.replace("return a - b\n\n\n", "return a + b\n\n\n", 1)
TESTS = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
NEW_TESTS = TESTS.replace("import sub", "import add, sub") + textwrap.dedent(
    """

    def test_add():
        assert add(2, 3) == 5
    """
)
INSTANCE_ID = "acme__calc-1"


def make_instance(repos: Path) -> dict[str, Any]:
    """The repository at `repos/acme__calc` and its one instance."""
    repo = repos / "acme__calc"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text(BUGGY)
    (repo / "tests" / "test_calc.py").write_text(TESTS)
    (repo / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    gold = git_diff(repo, "calc.py", FIXED)
    test_patch = git_diff(repo, "tests/test_calc.py", NEW_TESTS)
    return {
        "instance_id": INSTANCE_ID,
        "repo": "acme/calc",
        "base_commit": base,
        "patch": gold,
        "test_patch": test_patch,
        # As the published datasets hold them: JSON-encoded lists.
        "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_add"]),
        "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_sub"]),
        "problem_statement": "add(2, 3) returns -1 instead of 5.\n",
        "version": "1.0",
        "environment_setup_commit": base,
        "created_at": "2024-01-01T00:00:00Z",
    }


def git_diff(repo: Path, path: str, after: str) -> str:
    """The patch that turns `path` into `after` (made by git, as the datasets' are)."""
    target = repo / path
    before = target.read_text()
    target.write_text(after)
    try:
        return subprocess.run(
            ["git", "-C", str(repo), "diff", "--", path],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    finally:
        target.write_text(before)


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
