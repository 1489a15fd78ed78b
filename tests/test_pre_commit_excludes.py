"""What a project's pre-commit lint hooks exclude is left out of assay's ruff and flake8
walks too (`assay.tools.pre_commit_excludes`): exceptiongroup 1.3.2's ruff hook excludes a
file written for a newer Python than its configuration targets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.tools.pre_commit_excludes import hook_exclusions
from tests.cli import assay, assay_env
from tests.repos import write

RUFF_REPO = "https://github.com/astral-sh/ruff-pre-commit"


def config(*hooks: str, top: str | None = None, repo: str = RUFF_REPO) -> dict[str, object]:
    entries = [{"id": hook.split("=")[0], "exclude": hook.split("=", 1)[1]} for hook in hooks]
    return {**({"exclude": top} if top else {}), "repos": [{"repo": repo, "hooks": entries}]}


@pytest.mark.parametrize(
    ("expression", "paths"),
    [
        ("tests/test_catch_py311.py", ("tests/test_catch_py311.py",)),
        ("^(docs/|tests/data/.*)$", ("docs", "tests/data")),
        ("(?x)^(\n    src/a\\.py|  # generated\n    build/\n)$", ("src/a.py", "build")),
        ("(?:a|b)", ("a", "b")),
        # Only what is a path is taken: less is excluded than the project excludes, never more.
        ("^(docs/|.*\\.json)$", ("docs",)),
        ("^foo/.*\\.json$", ()),
        ("^../outside", ()),
    ],
)
def test_an_exclude_expression_is_read_as_the_paths_it_names(
    expression: str, paths: tuple[str, ...]
) -> None:
    assert hook_exclusions(config(f"ruff={expression}")).get("ruff", ()) == paths


def test_only_lint_hooks_count_and_the_configurations_own_exclude_applies_to_each() -> None:
    assert hook_exclusions(config("ruff-format=docs/")) == {}
    assert hook_exclusions(config("ruff-check=a.py", top="^vendor/")) == {
        "ruff": ("vendor", "a.py")
    }
    flake8 = config("flake8=^legacy/", repo="https://github.com/PyCQA/flake8")
    assert hook_exclusions(flake8) == {"flake8": ("legacy",)}
    assert hook_exclusions({"repos": "not a list", "exclude": 3}) == {}


PRE_COMMIT = f"""\
repos:
  - repo: {RUFF_REPO}
    rev: v0.14.10
    hooks:
      - id: ruff
        exclude: "tests/test_newer_python.py"
"""


@pytest.mark.parametrize("excluded", [True, False])
def test_a_file_the_ruff_hook_excludes_is_not_linted(tmp_path: Path, excluded: bool) -> None:
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": (
                '[project]\nname = "p"\nversion = "1"\nrequires-python = ">=3.7"\n'
                "[tool.ruff.lint]\nselect = ['F']\n"
            ),
            "p.py": "def double(x):\n    return 2 * x\n",
            "tests/test_p.py": "from p import double\n\n\ndef test_double():\n    assert double(2) == 4\n",
            # An unused import, as a file only for a newer Python would fail the target's rules.
            "tests/test_newer_python.py": "import os\n",
            **({".pre-commit-config.yaml": PRE_COMMIT} if excluded else {}),
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))
    done = assay("verify", "--json", "--sandbox", "none", "--kind", "lint", str(repo), env=env)
    report = json.loads(done.stdout)
    [ruff] = [c for c in report["checks"] if c["name"] == "ruff"]
    if excluded:
        assert ruff["verdict"] == "pass", ruff["stdout"]["text"]
        assert "--extend-exclude=tests/test_newer_python.py" in ruff["argv"]
    else:
        assert ruff["verdict"] == "fail" and "F401" in ruff["stdout"]["text"], ruff
