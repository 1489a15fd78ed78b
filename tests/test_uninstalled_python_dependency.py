"""A type check that failed only because a module the project declares is not installed
checked nothing of the code's use of it: UNVERIFIED, naming the module, never FAILED.
packaging 26.4's mypy targets Python 3.10, follows `import tomli` (declared for Python
< 3.11 only) and failed its clean tree on 3.11. Run end to end with real mypy and pyright's
wording read from its parser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.evidence import Diagnostic
from assay.uninstalled_python_dependency import uninstalled_python_dependency
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

#: A module no index serves, so no environment has it.
ABSENT = "assay_absent_dependency_q7"

CODE = f"""\
import sys

if sys.version_info >= (3, 11):
    import tomllib as loader
else:
    import {ABSENT} as loader


def parse(text: str) -> object:
    return loader.loads(text)
"""


def _repo(root: Path, *, declared: bool, code: str = CODE) -> Path:
    dependencies = f'["{ABSENT.replace("_", "-")}; python_version < \\"3.11\\""]'
    return write(
        root,
        {
            "pyproject.toml": (
                '[project]\nname = "pkg"\nversion = "1"\n'
                + (f"dependencies = {dependencies}\n" if declared else "")
                + '\n[tool.mypy]\npython_version = "3.10"\nfiles = ["pkg"]\n'
            ),
            "pkg/__init__.py": code,
            "tests/test_pkg.py": "from pkg import parse\n\n\ndef test_parse():\n"
            '    assert parse("a = 1") == {"a": 1}\n',
        },
    )


def _verify(repo: Path) -> dict[str, Any]:
    done = assay("verify", "--json", "--no-cache", "--kind", "typecheck", str(repo), timeout=300)
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_a_declared_module_mypy_cannot_find_is_unverified(tmp_path: Path) -> None:
    report = _verify(_repo(tmp_path / "repo", declared=True))
    assert report["status"] == "UNVERIFIED", report["note"]
    (mypy,) = [c for c in report["checks"] if c["name"] == "mypy"]
    assert (mypy["verdict"], mypy["cause"]) == ("unverified", "toolchain_missing")
    assert (
        f"could not find the module {ABSENT}, which the project's manifests declare" in mypy["note"]
    )


def test_after_the_install_steps_the_note_does_not_offer_them(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "repo", declared=True)
    args = ("verify", "--json", "--no-cache", "--install", "--kind", "typecheck", str(repo))
    done = assay(*args, timeout=600)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    (mypy,) = [c for c in report["checks"] if c["name"] == "mypy"]
    assert f"could not find the module {ABSENT}" in mypy["note"]
    assert "--install`) ran and did not provide it" in mypy["note"]
    assert "run `assay verify --install`" not in mypy["note"] + report["note"]


@pytest.mark.parametrize(
    "case",
    ["undeclared", "another finding"],
)
def test_an_undeclared_module_or_another_finding_still_fails(tmp_path: Path, case: str) -> None:
    if case == "undeclared":
        repo = _repo(tmp_path / "repo", declared=False)
    else:
        repo = _repo(tmp_path / "repo", declared=True, code=CODE + '\n\nCOUNT: int = "one"\n')
    report = _verify(repo)
    assert report["status"] == "FAILED", report["note"]


def test_pyrights_wording_is_read_too(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[dependency-groups]\ntest = ["PyYAML", "tomli>=1"]\n'})

    def unresolved(module: str) -> Diagnostic:
        return Diagnostic(message=f'Import "{module}" could not be resolved', tool="pyright")

    assert uninstalled_python_dependency([unresolved("tomli")], str(tmp_path)) == "tomli"
    # Imported under another name than its project's: not known to be declared.
    assert uninstalled_python_dependency([unresolved("yaml")], str(tmp_path)) is None
    assert uninstalled_python_dependency([], str(tmp_path)) is None
    # A tree with no pyproject.toml declares nothing.
    assert uninstalled_python_dependency([unresolved("tomli")], str(tmp_path / "none")) is None


def test_the_environment_is_the_test_venvs(tmp_path: Path) -> None:
    # The module really is absent where checks run: else the end-to-end cases prove nothing.
    done = assay("run", "--", "python3", "-c", f"import {ABSENT}", cwd=tmp_path, env=assay_env())
    assert done.returncode != 0


def _test_repo(root: Path, *, declared: bool, wrong: bool = False) -> Path:
    """iso8601's shape: its tests import a module only a Poetry dev group declares."""
    group = f'\n[tool.poetry.group.dev.dependencies]\n{ABSENT.replace("_", "-")} = "^1.0"\n'
    return write(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n'
            + (group if declared else ""),
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": f"import {ABSENT}\n\nfrom pkg import double\n\n\n"
            f"def test_double():\n    assert double(2) == {5 if wrong else 4}\n",
            "tests/test_more.py": "from pkg import double\n\n\n"
            f"def test_more():\n    assert double(3) == {7 if wrong else 6}\n",
        },
    )


def test_a_module_only_a_requirement_file_declares_is_unverified_too(tmp_path: Path) -> None:
    """pyproject-hooks 1.2.0: its tests import testpath, which only dev-requirements.txt
    declares, and its run without --install was FAILED, the module not installed."""
    repo = _test_repo(tmp_path / "repo", declared=False)
    write(repo, {"dev-requirements.txt": f"pytest\n{ABSENT.replace('_', '-')}\n"})
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr  # the tests' own is in stdout
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert f"could not find the module {ABSENT}" in report["note"], report["note"]


@pytest.mark.parametrize("runner", ["pytest", "unittest"])
def test_tests_that_cannot_import_a_declared_module_are_unverified(
    tmp_path: Path, runner: str
) -> None:
    repo = _test_repo(tmp_path / "repo", declared=True)
    if runner == "unittest":
        write(repo, {"tests/__init__.py": "", "assay.toml": _UNITTEST_COMMAND})
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr  # the tests' own is in stdout
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert (test["verdict"], test["cause"]) == ("unverified", "toolchain_missing"), test
    assert (
        f"could not find the module {ABSENT}, which the project's manifests declare" in test["note"]
    )


_UNITTEST_COMMAND = '[commands]\ntest = "python3 -m unittest discover -s tests -t ."\n'


@pytest.mark.parametrize("case", ["undeclared", "a test failed beside it"])
def test_an_undeclared_import_or_a_failing_test_beside_it_still_fails(
    tmp_path: Path, case: str
) -> None:
    repo = _test_repo(tmp_path / "repo", declared=case != "undeclared", wrong=True)
    if case != "undeclared":
        # Collection goes on past the broken module: the other test runs and fails.
        write(
            repo,
            {
                "pyproject.toml": repo.joinpath("pyproject.toml").read_text()
                + '\n[tool.pytest.ini_options]\naddopts = "--continue-on-collection-errors"\n'
            },
        )
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr  # the tests' own is in stdout
    report = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]


def _filter_repo(root: Path, module: str) -> Path:
    """humanize 4.11.0's shape: pytest turns warnings into errors and then ignores one of a
    dependency's categories, which names its module."""
    return write(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n\n'
            "[tool.pytest.ini_options]\n"
            f'filterwarnings = ["error", "ignore::{module}.SomeWarning"]\n',
            "pkg/__init__.py": "def double(x):\n    return x * 2\n",
            "tests/test_pkg.py": "from pkg import double\n\n\n"
            "def test_double():\n    assert double(2) == 4\n",
        },
    )


def test_a_warning_filter_naming_a_module_not_installed_is_unverified(tmp_path: Path) -> None:
    repo = _filter_repo(tmp_path / "repo", f"{ABSENT}.warnings")
    done = assay("verify", "--json", "--no-cache", "--kind", "test", str(repo), timeout=300)
    assert "Traceback" not in done.stderr, done.stderr  # pytest's own is in stdout
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert (test["verdict"], test["cause"]) == ("unverified", "toolchain_missing"), test
    assert f"`filterwarnings` names a warning of the module {ABSENT}," in test["note"]


def test_a_warning_filter_module_is_read_from_pytests_words(tmp_path: Path) -> None:
    from assay.uninstalled_python_dependency import uninstalled_filter_module

    def output(module: str, found: str) -> str:
        return (
            f"ModuleNotFoundError: No module named '{found}'\n"
            f"pytest.PytestConfigWarning: Failed to import filter module '{module}': "
            f"ignore::{module}.W\n"
        )

    write(tmp_path, {"pkg/__init__.py": "", "src/lib.py": ""})
    assert uninstalled_filter_module(output("coverage", "coverage"), str(tmp_path)) == "coverage"
    dotted = output("coverage.exceptions", "coverage")
    assert uninstalled_filter_module(dotted, str(tmp_path)) == "coverage.exceptions"
    # Found, but broken on import: the module's failure, not a missing install.
    assert uninstalled_filter_module(output("coverage", "other"), str(tmp_path)) is None
    # The tree's own modules, at the root or in src/: a change may have broken them.
    assert uninstalled_filter_module(output("pkg.gone", "pkg.gone"), str(tmp_path)) is None
    assert uninstalled_filter_module(output("lib.gone", "lib.gone"), str(tmp_path)) is None
    assert uninstalled_filter_module("no filter here", str(tmp_path)) is None
