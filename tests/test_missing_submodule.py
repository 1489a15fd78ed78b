"""A test run that fails only because a git submodule holding its data is not checked out
is UNVERIFIED with the step that is missing, not FAILED (`assay.missing_submodule`):
tinycss2 reads its cases from `tests/css-parsing-tests`, empty in a clone made without
`--recurse-submodules`. Anything else a failure says keeps it FAILED."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.missing_submodule import missing_submodule
from tests.cli import assay, assay_env
from tests.repos import write

DATA_TEST = """
import json
import shutil
from pathlib import Path

CASES = Path(__file__).parent / "data" / "cases.json"


def test_the_cases():
    for case in json.loads(CASES.read_text()):
        assert case["a"] + case["b"] == case["sum"]
"""
OTHER_TEST = "def test_arithmetic():\n    assert 1 + 1 == 2\n"
GITMODULES = (
    '[submodule "tests/data"]\n\tpath = tests/data\n\turl = https://example.invalid/data.git\n'
)


def project(root: Path, *, data: str | None, extra: dict[str, str] | None = None) -> Path:
    write(
        root,
        {
            "pyproject.toml": "[tool.pytest.ini_options]\n",
            ".gitmodules": GITMODULES,
            "tests/test_cases.py": DATA_TEST,
            "tests/test_other.py": OTHER_TEST,
            **({"tests/data/cases.json": data} if data is not None else {}),
            **(extra or {}),
        },
    )
    (root / "tests" / "data").mkdir(exist_ok=True)  # what a clone holds in its place
    return root


def verified(repo: Path, tmp_path: Path, *extra: str) -> dict[str, Any]:
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "cache"))
    done = assay("verify", "--json", "--kind", "test", *extra, str(repo), env=env)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("every", [False, True], ids=["first-failure", "all"])
def test_test_data_in_a_submodule_not_checked_out_is_a_missing_step(
    tmp_path: Path, every: bool
) -> None:
    repo = project(tmp_path / "repo", data=None)
    report = verified(repo, tmp_path, *(["--all"] if every else []))
    assert report["status"] == "UNVERIFIED", report["note"]
    assert report["note"] == (
        "pytest could not read the test data in tests/data/: that git submodule is not "
        "checked out (an empty directory). Check it out (`git submodule update --init`), "
        "then verify again."
    ), report["note"]


def test_with_the_submodule_checked_out_a_wrong_value_still_fails(tmp_path: Path) -> None:
    repo = project(tmp_path / "repo", data='[{"a": 1, "b": 1, "sum": 3}]')
    report = verified(repo, tmp_path)
    assert report["status"] == "FAILED", report["note"]


def test_a_failure_of_another_kind_beside_it_still_fails(tmp_path: Path) -> None:
    wrong = {"tests/test_wrong.py": "def test_wrong():\n    assert 2 * 2 == 5\n"}
    repo = project(tmp_path / "repo", data=None, extra=wrong)
    report = verified(repo, tmp_path, "--all")
    assert report["status"] == "FAILED", report["note"]


@pytest.mark.parametrize(
    ("output", "found"),
    [
        (
            "FileNotFoundError: [Errno 2] No such file or directory: '{root}/tests/data/x.json'",
            "tests/data",
        ),
        ("Error: ENOENT: no such file or directory, open '{root}/tests/data/x.json'", "tests/data"),
        ("open tests/data/x.json: no such file or directory", "tests/data"),
        # A file outside the submodule, or a failure that names no file: not this.
        ("FileNotFoundError: [Errno 2] No such file or directory: '{root}/tests/x.json'", None),
        ("AssertionError: assert 4 == 5", None),
        ("No such file or directory: '/etc/nothing-here'", None),
    ],
)
def test_only_files_inside_an_absent_submodule_count(
    tmp_path: Path, output: str, found: str | None
) -> None:
    root = project(tmp_path, data=None)
    assert missing_submodule([output.format(root=root)], str(root)) == found
    write(root, {"tests/data/other.json": "{}"})  # checked out: a missing file is a failure
    assert missing_submodule([output.format(root=root)], str(root)) is None


#: A jest test file that reads its cases as it loads: without them it fails to load, and
#: jest's report lists the file with no test in it, only why it failed.
JEST_DATA_TEST = """\
const { readFileSync } = require('node:fs');
const cases = JSON.parse(readFileSync(`${__dirname}/data/cases.json`, 'utf8'));
test.each(cases)('adds $a and $b', ({ a, b, sum }) => { expect(a + b).toBe(sum); });
"""


@pytest.mark.slow
def test_a_jest_file_that_cannot_load_its_submodules_data_is_a_missing_step(
    tmp_path: Path,
) -> None:
    assert shutil.which("jest"), "jest is not installed: `npm install -g jest`, as .ci/run does"
    repo = tmp_path / "repo"
    manifest = {"name": "calc", "version": "1.0.0", "scripts": {"test": "jest"}}
    write(
        repo,
        {
            "package.json": json.dumps(manifest),
            "jest.config.js": "module.exports = { testEnvironment: 'node' };\n",
            ".gitmodules": GITMODULES,
            "tests/cases.test.js": JEST_DATA_TEST,
            "tests/other.test.js": "test('adds', () => { expect(1 + 1).toBe(2); });\n",
        },
    )
    (repo / "tests" / "data").mkdir()
    report = verified(repo, tmp_path)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert "tests/data/: that git submodule is not checked out" in report["note"]
