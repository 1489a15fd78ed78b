"""The data files a base's tests name (`assay.test_data`): protected as the tests are,
while the code under test and the manifests a test may name stay the change's."""

from __future__ import annotations

from pathlib import Path

from assay.protect import protected_set
from assay.test_data import named_test_data
from tests.repos import write


def test_the_data_a_test_names_is_found_and_code_it_names_is_not(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "calc.py": "def add(a, b):\n    return a + b\n",
            "package.json": "{}\n",
            "data/add_cases.json": "[]\n",
            "tests/expected.txt": "4\n",
            "other/README.md": "no test names me\n",
            "tests/test_calc.py": (
                "import json, pathlib\n"
                'CASES = pathlib.Path(__file__).parent / ".." / "data" / "add_cases.json"\n'
                'EXPECTED = open("tests/expected.txt").read()\n'
                'SOURCE = open("calc.py").read()\n'
                'MANIFEST = json.load(open("package.json"))\n'
            ),
        },
    )
    found = named_test_data(tmp_path, protected_set())
    assert sorted(found) == ["data/add_cases.json"], found  # tests/ is protected already


def test_a_bare_name_shared_by_many_files_names_none(tmp_path: Path) -> None:
    many = {f"d{i}/cases.json": "[]\n" for i in range(5)}
    write(tmp_path, {**many, "tests/test_x.py": 'CASES = "cases.json"\n'})
    assert named_test_data(tmp_path, protected_set()) == ()


def test_a_directory_of_data_the_tests_name_is_found_whole(tmp_path: Path) -> None:
    """A red team's: the test finds its cases by a pattern (`(here / "cases").glob(...)`),
    no file named, and the change wrote the wrong code's answers into them."""
    write(
        tmp_path,
        {
            "cases/small.json": "{}\n",
            "cases/deep/negative.json": "{}\n",
            "pkg/__init__.py": "",
            "pkg/table.json": "{}\n",
            "tests/test_calc.py": (
                "import pathlib\n"
                "HERE = pathlib.Path(__file__).parent.parent\n"
                'CASES = sorted((HERE / "cases").rglob("*.json"))\n'
                'CODE = HERE / "pkg"\n'
            ),
        },
    )
    found = named_test_data(tmp_path, protected_set())
    # A directory that holds code is the code's: its data stays the change's to edit.
    assert sorted(found) == ["cases/deep/negative.json", "cases/small.json"], found
