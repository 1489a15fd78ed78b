"""Under `--protect`, the change's own code rewritten while the checks ran keeps it from
VERIFIED.

`calc/muls.py`, imported by `tests/a_first/test_mul.py`, wrote a right `calc/adder.py`
over the tree's wrong one before `tests/b_second/test_add.py` imported it: the tests passed
on code the change does not hold, and a wrong `add` was VERIFIED. So was an `add` that
used `calc/_fast.py` when it was there, which `calc/muls.py` wrote.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.code_rewrites import put_back_rewrites, stamp
from assay.protect import protected_set
from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc/__init__.py": "",
    "calc/adder.py": "def add(a, b):\n    return a + b\n",
    "calc/muls.py": "def mul(a, b):\n    return a * b\n",
    "tests/a_first/test_mul.py": (
        "from calc.muls import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    ),
    "tests/b_second/test_add.py": (
        "from calc.adder import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}
MULS_THAT_WRITES = """import os


def mul(a, b):
    return a * b


def _tidy():
    spot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "{name}")
    try:
        with open(spot, "w") as f:
            f.write("def add(a, b):\\n    return a + b\\n")
    except OSError:
        pass


_tidy()
"""
ADDERS = {
    "calc/adder.py": "def add(a, b):\n    return a - b\n",
    "calc/_fast.py": (
        "def add(a, b):\n    try:\n        from calc._fast import add as fast\n"
        "    except ImportError:\n        return a - b\n    return fast(a, b)\n"
    ),
}


@pytest.mark.parametrize("written", sorted(ADDERS))
def test_code_the_change_wrote_mid_run_is_counted(tmp_path: Path, written: str) -> None:
    muls = MULS_THAT_WRITES.format(name=written.rpartition("/")[2])
    change = {"calc/adder.py": ADDERS[written], "calc/muls.py": muls}
    repo = change_on_base(tmp_path / "repo", BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert written in report.note, explain(report)


def test_caches_and_files_the_tree_lacks_are_not_the_changes_code(tmp_path: Path) -> None:
    files = {
        "calc.py": "x = 1\n",
        "calc_again.py": "y = 1\n",
        ".pytest_cache/v/cache/nodeids.py": "[]\n",
        "target/debug/build/out/gen.rs": "",
    }
    tree = write(tmp_path / "tree", files)
    workspace = write(tmp_path / "work", {**files, "_version.py": "v = 1\n"})
    write(workspace, {"coverage/lcov-report/sorter.js": "", "tests/test_new.py": ""})
    before = stamp(workspace)
    write(workspace, {".pytest_cache/v/cache/nodeids.py": "[1]\n", "_version.py": "v = 2\n"})
    write(workspace, {"target/debug/build/out/gen.rs": "fn x() {}\n", "calc.py": "x = 2\n"})
    write(workspace, {"coverage/lcov-report/prettify.js": "", "calc_fast.py": ""})
    write(workspace, {"calc/adder.cpython-311-x86_64-linux-gnu.so": "", "lib/report.txt": ""})
    # Written and put back as it was, its modification time too: only its change time moved.
    again = workspace / "calc_again.py"
    was = again.stat()
    again.write_text("y = 1\n")
    os.utime(again, ns=(was.st_atime_ns, was.st_mtime_ns))
    done = put_back_rewrites(workspace, tree, before, protected_set())
    extension = "calc/adder.cpython-311-x86_64-linux-gnu.so"
    assert done == (("calc.py", "calc_again.py"), (extension, "calc_fast.py"))
    assert (workspace / "calc.py").read_text() == "x = 1\n"
    assert not (workspace / "calc_fast.py").exists()
