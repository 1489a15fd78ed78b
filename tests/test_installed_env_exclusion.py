"""The environment `assay verify --install` made is kept out of flake8's walk, beside the
project's own exclusions: unit cases for how flake8 finds them, and a real fresh-clone run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import Check
from assay.installed_env_exclusion import exclude_from_lint_walks, exclude_installed_env
from assay.tools.python_version_files import generated_version_files
from assay.verdict import Kind
from tests.cli import assay, assay_env, installed_and_verified
from tests.repos import write, write_dedented


def rewritten(root: Path, *argv: str, cwd: str = ".") -> tuple[str, ...]:
    check = Check(name="lint", kind=Kind.LINT, argv=argv, cwd=cwd, tool="shell")
    [done] = exclude_installed_env([check], root, ".venv")
    return done.argv


DEFAULTS = ".svn,CVS,.bzr,.hg,.git,__pycache__,.tox,.nox,.eggs,*.egg"


def test_the_environment_joins_an_exclude_that_replaced_flake8s_defaults(tmp_path: Path) -> None:
    write(tmp_path, {"setup.cfg": "[flake8]\nexclude = .git, .tox, build\n"})
    added = "--exclude=.git,.tox,build,.venv"
    assert rewritten(tmp_path, "flake8") == ("flake8", added)
    assert rewritten(tmp_path, ".venv/bin/flake8", "src") == (".venv/bin/flake8", "src", added)
    assert rewritten(tmp_path, "python3", "-m", "flake8") == ("python3", "-m", "flake8", added)


def test_a_flake8_section_in_pyproject_is_read_as_flake8_pyproject_gives_it(
    tmp_path: Path,
) -> None:
    """isort 9.0.2 keeps flake8's `exclude = "_vendored"` in pyproject.toml (the
    Flake8-pyproject plugin reads it): replaced, its vendored code would be linted."""
    write(tmp_path, {"pyproject.toml": '[tool.flake8]\nexclude = "_vendored"\n', "setup.cfg": ""})
    assert rewritten(tmp_path, "flake8", "isort/") == (
        "flake8",
        "isort/",
        "--exclude=_vendored,.venv",
    )
    write(tmp_path, {"pyproject.toml": "[tool.flake8]\nexclude = ['_vendored', 'build']\n"})
    assert rewritten(tmp_path, "flake8")[-1] == "--exclude=_vendored,build,.venv"


def test_without_an_exclude_flake8s_defaults_are_kept(tmp_path: Path) -> None:
    write(tmp_path, {"tox.ini": "[flake8]\nmax-line-length = 100\n"})
    assert rewritten(tmp_path, "flake8") == ("flake8", f"--exclude={DEFAULTS},.venv")


def test_a_project_that_already_leaves_the_environment_out_is_left_alone(tmp_path: Path) -> None:
    write(tmp_path / "a", {".flake8": "[flake8]\nextend-exclude = .venv,build\n"})
    write(tmp_path / "b", {".flake8": "[flake8]\nexclude =\n    .git,\n    .venv\n"})
    assert rewritten(tmp_path / "a", "flake8") == ("flake8",)
    assert rewritten(tmp_path / "b", "flake8") == ("flake8",)


def test_flake8s_own_search_order_and_list_syntax(tmp_path: Path) -> None:
    write_dedented(
        tmp_path,
        {
            "setup.cfg": "[metadata]\nname = x\n",  # no [flake8]: flake8 looks on
            "tox.ini": """
                [flake8]
                exclude =
                    legacy/,
                    vendor
                    docs/conf.py
            """,
            ".flake8": "[flake8]\nexclude = never-read\n",
        },
    )
    assert rewritten(tmp_path, "flake8") == ("flake8", "--exclude=legacy,vendor,docs/conf.py,.venv")


def test_a_pattern_with_a_slash_is_rebased_for_a_check_in_a_subdirectory(tmp_path: Path) -> None:
    write(tmp_path, {".flake8": "[flake8]\nexclude = pkg/generated,build\n", "pkg/a.py": ""})
    assert rewritten(tmp_path, "flake8", cwd="pkg") == (
        "flake8",
        "--exclude=../pkg/generated,build,.venv",
    )


def test_the_command_lines_own_options_decide(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "setup.cfg": "[flake8]\nexclude = from-setup-cfg\n",
            "lint.ini": "[flake8]\nexclude = from-lint-ini\n",
        },
    )
    given = rewritten(tmp_path, "flake8", "--exclude", "a,b", "src")
    assert given == ("flake8", "--exclude", "a,b", "src", "--exclude=a,b,.venv")
    isolated = rewritten(tmp_path, "flake8", "--isolated")
    assert isolated == ("flake8", "--isolated", f"--exclude={DEFAULTS},.venv")
    assert rewritten(tmp_path, "flake8", "--config=lint.ini") == (
        "flake8",
        "--config=lint.ini",
        "--exclude=from-lint-ini,.venv",
    )


def test_configuration_read_as_untrusted_and_other_tools_left_alone(tmp_path: Path) -> None:
    outside = tmp_path / "outside.cfg"
    outside.write_text("[flake8]\nexclude = secret\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "setup.cfg").symlink_to(outside)
    (root / "tox.ini").write_text("[flake8\nnot ini at all\n")
    assert rewritten(root, "flake8") == ("flake8", f"--exclude={DEFAULTS},.venv")
    assert rewritten(root, "pylint", "src") == ("pylint", "src")
    assert rewritten(root, "python3", "-m", "pytest") == ("python3", "-m", "pytest")


def test_ruff_is_told_to_leave_the_environment_out_too(tmp_path: Path) -> None:
    """ruff's defaults leave `.venv` out, but a project's `exclude` replaces them (tenacity
    9.2.1); `--extend-exclude` on the command line adds to the configuration's."""
    added = "--extend-exclude=.venv"
    assert rewritten(tmp_path, "ruff", "check", ".") == ("ruff", "check", ".", added)
    assert rewritten(tmp_path, "python3", "-m", "ruff", "check") == (
        "python3",
        "-m",
        "ruff",
        "check",
        added,
    )
    assert rewritten(tmp_path, "ruff", "check", "--", ".") == ("ruff", "check", added, "--", ".")
    kept = ("ruff", "check", "--extend-exclude=build,.venv")
    assert rewritten(tmp_path, *kept) == kept


@pytest.mark.parametrize(
    "argv",
    [
        # bleach 6.4.0's tox lint: ruff before 0.16 refuses `format --extend-exclude`.
        ("ruff", "format", "--check", "--exclude=_vendor", "setup.py", "bleach/", "tests/"),
        ("ruff", "check", "--target-version", "py310", "src", "tests"),
        ("ruff", "check", "--", "src"),
        ("python3", "-m", "ruff", "check", "--select", "E", "src"),
    ],
)
def test_ruff_naming_its_own_paths_is_left_as_it_is(tmp_path: Path, argv: tuple[str, ...]) -> None:
    """The environment is at the root: a walk of named paths below it never reaches it."""
    assert rewritten(tmp_path, *argv) == argv


def test_ruff_format_is_given_the_setting_older_ruff_takes(tmp_path: Path) -> None:
    """`ruff format` before 0.16 refuses `--extend-exclude` (a usage error, exit 2)."""
    assert rewritten(tmp_path, "ruff", "format", "--check") == (
        "ruff",
        "format",
        "--check",
        '--config=extend-exclude=[".venv"]',
    )


@pytest.mark.slow
def test_a_pre_commit_pinned_ruff_format_leaves_the_environment_out(tmp_path: Path) -> None:
    """tabulate 0.10: tox's lint runs `ruff format --check`, at the 0.15.4 its hooks pin,
    over a tree whose `exclude` replaces ruff's defaults; assay's exclusion of its
    environment must be one that ruff takes (it failed the project on a usage error of
    assay's own making)."""
    repo = write_dedented(
        tmp_path / "repo",
        {
            "pyproject.toml": """
                [project]
                name = "clean"
                version = "0.1"
                [tool.ruff]
                exclude = ["build"]
                extend-exclude = ["generated"]
                [tool.pytest.ini_options]
                pythonpath = ["."]
            """,
            "clean.py": "def double(x):\n    return 2 * x\n",
            "generated/table.py": "x  =  [1,2]\n",  # unformatted, and left out by the project
            "tests/test_clean.py": (
                "from clean import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
            ),
            "tox.ini": """
                [testenv]
                deps = pytest
                commands = pytest
                [testenv:lint]
                deps = ruff
                commands =
                    ruff check
                    ruff format --check
            """,
            # The hooks pin the tox environment's unpinned ruff.
            ".pre-commit-config.yaml": """
                ci:
                  autoupdate_schedule: monthly
                repos:
                  - repo: https://github.com/astral-sh/ruff-pre-commit
                    rev: v0.15.4
                    hooks:
                      - id: ruff-format
            """,
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    [ruff] = [c for c in report["checks"] if "format" in c["argv"]]
    assert ruff["checker"]["version"] == "0.15.4", ruff["checker"]
    assert '--config=extend-exclude=[".venv"]' in ruff["argv"], ruff["argv"]


def test_a_file_below_ruffs_named_paths_is_still_left_out(tmp_path: Path) -> None:
    lint = Check(name="ruff", kind=Kind.LINT, argv=("ruff", "check", "src/", "tests"), tool="ruff")
    [ruff] = exclude_from_lint_walks([lint], tmp_path, ["src/pkg/_version.py", ".venv"])
    assert ruff.argv == ("ruff", "check", "src/", "tests", "--extend-exclude=src/pkg/_version.py")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("linter", "added"),
    [("flake8", "--exclude=.git,.tox,build,.venv"), ("ruff", "--extend-exclude=.venv")],
)
def test_fresh_clone_linted_verifies_without_its_new_environment(
    tmp_path: Path, linter: str, added: str
) -> None:
    """A project whose `exclude` replaces its linter's defaults (flake8's, by tox's `flake8`;
    ruff's, configured): the environment the install makes must not be linted (pip's own
    sources fail both)."""
    lint_env = "[testenv:flake8]\ndeps = flake8\ncommands = flake8\n" if linter == "flake8" else ""
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": (
                '[project]\nname = "clean"\nversion = "0.1"\n'
                '[project.optional-dependencies]\ntest = ["pytest"]\n'
                '[tool.pytest.ini_options]\npythonpath = ["."]\n'
                '[tool.ruff]\nexclude = ["build"]\n'
            ),
            "setup.cfg": "[flake8]\nexclude = .git, .tox, build\nmax-line-length = 100\n",
            "tox.ini": f"[testenv]\ncommands = pytest\n{lint_env}",
            "clean.py": "def double(x):\n    return 2 * x\n",
            "tests/test_clean.py": (
                "from clean import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
            ),
        },
    )
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    lint = next(c for c in report["checks"] if c["kind"] == "lint")
    assert linter in " ".join(lint["argv"]) and added in lint["argv"], lint["argv"]


# --------------------------------------------------------------------------- version files

VERSION_FILE_CONFIGS = {
    "setuptools-scm write_to": '[tool.setuptools_scm]\nwrite_to = "src/pkg/_version.py"\n',
    "setuptools-scm version_file": '[tool.setuptools_scm]\nversion_file = "src/pkg/_version.py"\n',
    "hatch-vcs": '[tool.hatch.build.hooks.vcs]\nversion-file = "src/pkg/_version.py"\n',
}


@pytest.mark.parametrize("config", VERSION_FILE_CONFIGS.values(), ids=VERSION_FILE_CONFIGS)
def test_the_version_file_a_build_backend_writes_is_named(tmp_path: Path, config: str) -> None:
    write(tmp_path, {"pyproject.toml": config})
    assert generated_version_files(tmp_path) == ["src/pkg/_version.py"]


@pytest.mark.parametrize(
    "value",
    ["/etc/passwd", "../outside.py", "", "src\\\\pkg.py"],
    ids=["absolute", "up", "empty", "backslash"],
)
def test_a_version_file_outside_the_tree_is_not_named(tmp_path: Path, value: str) -> None:
    write(tmp_path, {"pyproject.toml": f'[tool.setuptools_scm]\nwrite_to = "{value}"\n'})
    assert generated_version_files(tmp_path) == []


def test_a_path_is_seen_from_the_checks_directory(tmp_path: Path) -> None:
    def lint(*argv: str, cwd: str = ".") -> Check:
        return Check(name="lint", kind=Kind.LINT, argv=argv, cwd=cwd, tool="shell")

    written = ["src/pkg/_version.py"]
    [ruff, below, beside] = exclude_from_lint_walks(
        [lint("ruff", "check"), lint("ruff", "check", cwd="src"), lint("ruff", cwd="docs")],
        tmp_path,
        written,
    )
    assert ruff.argv == ("ruff", "check", "--extend-exclude=src/pkg/_version.py")
    assert below.argv == ("ruff", "check", "--extend-exclude=pkg/_version.py")
    assert beside.argv == ("ruff",)  # the file is not beneath docs/


def test_an_sdists_version_file_does_not_fail_a_clean_tree(tmp_path: Path) -> None:
    """For real, with ruff and without --install: the sdist of a setuptools-scm project
    ships the file its build wrote; here it imports what it does not use (F401)."""
    pyproject = (
        '[project]\nname = "pkg"\ndynamic = ["version"]\n[tool.ruff]\nline-length = 100\n'
        '[tool.setuptools_scm]\nwrite_to = "src/pkg/_version.py"\n'
    )
    repo = write(
        tmp_path / "repo",
        {
            "pyproject.toml": pyproject,
            "src/pkg/__init__.py": "",
            "src/pkg/_version.py": "import os\n__version__ = version = '1.0'\n",
            "tests/test_pkg.py": "def test_one():\n    assert 1 + 1 == 2\n",
        },
    )
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))

    def ruff_check() -> dict[str, Any]:
        report = json.loads(assay("verify", "--json", str(repo), env=env).stdout)
        return next(c for c in report["checks"] if c["name"] == "ruff")

    ruff = ruff_check()
    assert ruff["verdict"] == "pass", ruff["stdout"]["text"]
    assert "--extend-exclude=src/pkg/_version.py" in ruff["argv"]
    # The same file, when no backend writes it, is the authors' own: F401.
    write(repo, {"pyproject.toml": pyproject.replace("write_to", "root")})
    ruff = ruff_check()
    assert ruff["verdict"] == "fail" and "F401" in ruff["stdout"]["text"], ruff
