"""Under `--protect`, the modules the base's pytest configuration loads as plugins are its
own.

`-p support.cases` in the base's `addopts` loads `support/cases.py` before the tests,
and its fixture gave them their expected values: a change that rewrote those values to a
broken `mean`'s answers was VERIFIED.
"""

from __future__ import annotations

from pathlib import Path

from assay.discovery.files import RepoFiles
from assay.discovery.pytest_plugin_modules import pytest_plugin_modules
from tests.cli import verified_json
from tests.repos import commit_all, write

CASES = """import pytest


@pytest.fixture
def mean_cases():
    return [([1, 2, 3], {}), ([2, 4], {}), ([5], {})]
"""
BASE = {
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "0.1.0"\n\n'
        '[tool.pytest.ini_options]\naddopts = "-p support.cases"\n'
    ),
    "support/__init__.py": "",
    "support/cases.py": CASES.format(2.0, 3.0, 5.0),
    "calc.py": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "tests/test_calc.py": (
        "from calc import mean\n\n\ndef test_mean(mean_cases):\n"
        "    for xs, expected in mean_cases:\n        assert mean(xs) == expected\n"
    ),
}


def test_a_change_to_a_plugin_module_addopts_loads_is_undone(tmp_path: Path) -> None:
    repo = commit_all(write(tmp_path / "repo", BASE))
    write(
        repo,
        {
            "support/cases.py": CASES.format(1.5, 2.0, 2.5),
            "calc.py": "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n",
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect")
    assert report["status"] == "FAILED", report["note"]
    assert "test_mean" in report["note"], report["note"]


def test_a_change_to_a_plugin_module_a_ci_step_loads_is_undone(tmp_path: Path) -> None:
    """The same module named by a CI step's `python -m pytest -p support.cases`."""
    workflow = (
        "name: ci\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: pip install pytest\n"
        "      - run: python -m pytest -p support.cases\n"
    )
    base = {
        **BASE,
        "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
        ".github/workflows/ci.yml": workflow,
    }
    repo = commit_all(write(tmp_path / "repo", base))
    write(
        repo,
        {
            "support/cases.py": CASES.format(1.5, 2.0, 2.5),
            "calc.py": "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n",
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect")
    assert report["status"] == "FAILED", report["note"]
    assert "test_mean" in report["note"], report["note"]


def test_the_plugins_config_and_conftests_name_are_found(tmp_path: Path) -> None:
    root = write(
        tmp_path / "t",
        {
            "pytest.ini": "[pytest]\naddopts = -p no:cacheprovider -psupport.more -p own_plugin\n",
            "support/more.py": "",
            "own_plugin.py": "",
            "conftest.py": 'pytest_plugins = ["helpers.fixtures", "pytester"]\n',
            "src/helpers/fixtures/__init__.py": "",
            "pkg/conftest.py": "pytest_plugins: tuple[str, ...] = ('pkg_helpers',)\n",
            "pkg_helpers.py": "",
        },
    )
    found = pytest_plugin_modules(RepoFiles(str(root)), own=["own_plugin"])
    assert sorted(found) == [
        "pkg_helpers.py",
        "src/helpers/fixtures/__init__.py",
        "support/more.py",
    ]
