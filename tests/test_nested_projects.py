"""The `ruff check .` assay composes leaves out other projects nested in the tree: tomlkit
0.13.2's sdist carries its toml-test submodule (a Go project, with a Python helper its
maintainers' ruff never sees), and ruff walking into it FAILED the pristine release."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.files import RepoFiles
from assay.discovery.nested_projects import nested_projects
from assay.plan import plan_repository
from tests.cli import verified_json
from tests.repos import write, write_dedented

#: Unsorted imports (I001, which the configuration selects) in a vendored Go project's
#: helper script: what tomlkit's ruff reported on `tests/toml-test/gen-multi.py`.
UNSORTED = "import sys\nimport os\n\nprint(os.sep, sys.argv)\n"

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "doubling"
        version = "0.1"
        [tool.ruff.lint]
        extend-select = ["I"]
    """,
    "doubling.py": '''
        """Doubling."""


        def double(x: int) -> int:
            """Twice `x`."""
            return 2 * x
    ''',
    "tests/test_doubling.py": """
        from doubling import double


        def test_double():
            assert double(2) == 4
    """,
    "tests/toml-test/go.mod": "module github.com/toml-lang/toml-test\n\ngo 1.18\n",
    "tests/toml-test/COPYING": "The MIT License\n",
    "tests/toml-test/gen-multi.py": UNSORTED,
}


def ruff_argv(root: Path) -> list[str]:
    return next(list(c.argv) for c in plan_repository(root).checks if c.tool == "ruff")


def test_the_nested_projects_are_submodules_clones_and_licensed_foreign_projects(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "go.mod": "module root\n",  # the project's own root is no nested project
            "LICENSE": "",
            ".gitmodules": '[submodule "spec"]\n\tpath = tests/spec\n\turl = x\n',
            "tests/spec/cases.toml": "",
            "vendor/linked/.git": "gitdir: ../../.git/modules/linked\n",
            "vendor/linked/inner/go.mod": "",
            "vendor/linked/inner/LICENSE": "",
            "tools/js/package.json": "{}",
            "tools/js/LICENSE-MIT": "",
            "tools/rs/Cargo.toml": "",
            "tools/rs/COPYING.md": "",
            # A manifest without a license of its own is the project's own tooling, and a
            # nested Python project is a monorepo's member: both stay linted.
            "scripts/go.mod": "",
            "packages/sub/pyproject.toml": "",
            "packages/sub/LICENSE": "",
            # What ruff never walks, or the project's environment, is not searched.
            "node_modules/x/package.json": "{}",
            "node_modules/x/LICENSE": "",
            "env/lib/y/package.json": "{}",
            "env/lib/y/LICENSE": "",
        },
    )
    (tmp_path / "clone/.git").mkdir(parents=True)
    found = nested_projects(RepoFiles(str(tmp_path)), skip=("env",))
    assert found == ("clone", "tests/spec", "tools/js", "tools/rs", "vendor/linked")


def test_the_planned_ruff_leaves_a_vendored_project_out(tmp_path: Path) -> None:
    write_dedented(tmp_path, PROJECT)
    assert ruff_argv(tmp_path) == [
        "ruff",
        "check",
        ".",
        "--extend-exclude",
        "tests/toml-test,./pyproject.toml",
    ]


@pytest.mark.slow
def test_a_project_clean_but_for_a_vendored_project_is_verified_and_its_own_finding_fails_it(
    tmp_path: Path,
) -> None:
    """For real, sandboxed, with the ruff of assay's own environment."""
    repo = write_dedented(tmp_path / "repo", PROJECT)
    report = verified_json(repo, tmp_path / "state", "--kind", "lint")
    assert report["status"] == "VERIFIED", (report["note"], report["output"])

    (repo / "doubling.py").write_text(UNSORTED)
    report = verified_json(repo, tmp_path / "state", "--kind", "lint")
    assert report["status"] == "FAILED", report["note"]
    assert "doubling.py:1" in report["note"] and "gen-multi" not in report["note"], report["note"]
