"""A CI step that only type-checks through pytest-mypy (`pytest --mypy -m mypy PATHS`) is a
type check over PATHS: tinydb's type-checks its tests so, and a type error there was VERIFIED
while the step was ranked among the test runs and dropped. Read from the command line, and
run end to end with real mypy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.discovery.command_lines import recognise_line
from assay.verdict import Kind
from tests.cli import assay, no_traceback
from tests.repos import write


@pytest.mark.parametrize(
    ("line", "mypy_args"),
    [
        ("pytest --mypy -m mypy tinydb tests", ("tinydb", "tests")),
        ("uv run python -m pytest --mypy -mmypy pkg", ("pkg",)),
        ("pytest --mypy -m=mypy -p no:cacheprovider pkg", ("pkg",)),
        (
            "pytest --mypy -m mypy --mypy-config-file=setup.cfg --mypy-ignore-missing-imports pkg",
            ("--config-file", "setup.cfg", "--ignore-missing-imports", "pkg"),
        ),
        (
            "pytest --mypy -m mypy --mypy-config-file mypy.ini pkg",
            ("--config-file", "mypy.ini", "pkg"),
        ),
    ],
)
def test_a_pytest_run_of_mypy_items_alone_is_a_type_check(
    line: str, mypy_args: tuple[str, ...]
) -> None:
    (hit,) = recognise_line(line)
    assert (hit.kind, hit.tool, hit.args) == (Kind.TYPECHECK, "mypy", mypy_args)
    assert hit.via == line


@pytest.mark.parametrize(
    "line",
    [
        "pytest --mypy tests",  # tests and type errors both, as failed tests
        "pytest -m mypy tests",  # a marker of the project's own, without pytest-mypy
        "pytest --mypy -m 'mypy or slow' tests",
        "pytest --mypy -m mypy",  # no path: what it collects is the configuration's
    ],
)
def test_any_other_pytest_run_stays_a_test_run(line: str) -> None:
    (hit,) = recognise_line(line)
    assert (hit.kind, hit.tool) == (Kind.TEST, "pytest")


def _repo(root: Path, *, error_in_tests: bool) -> Path:
    annotation = "str" if error_in_tests else "int"
    return write(
        root,
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1"\n',
            "mypy.ini": "[mypy]\n",
            "pkg/__init__.py": "def double(x: int) -> int:\n    return x * 2\n",
            "tests/test_pkg.py": "from pkg import double\n\n\n"
            "def test_double() -> None:\n"
            f"    got: {annotation} = double(2)\n"
            "    assert got == 4\n",
            ".github/workflows/ci.yml": "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"
            "    steps:\n      - run: pytest tests\n      - run: pytest --mypy -m mypy pkg tests\n",
        },
    )


@pytest.mark.parametrize("error_in_tests", [False, True])
def test_the_type_check_reaches_the_tests_ci_names(tmp_path: Path, error_in_tests: bool) -> None:
    repo = _repo(tmp_path / "repo", error_in_tests=error_in_tests)
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    (mypy,) = [c for c in report["checks"] if c["kind"] == "typecheck"]
    assert mypy["argv"][-2:] == ["pkg", "tests"]
    if error_in_tests:
        assert report["status"] == "FAILED", report["note"]
        assert mypy["diagnostics"][0]["file"] == "tests/test_pkg.py"
    else:
        assert report["status"] == "VERIFIED", report["note"]
