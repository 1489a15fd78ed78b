"""Under `--protect`, a Python module the code under test writes where the tests are, while
they run, keeps the change from VERIFIED.

pytest collects a directory's `conftest.py` and test modules only as it reaches that
directory. `calc.py`, imported by `tests/a_first/test_mul.py`, wrote
`tests/b_second/conftest.py` (its text base64, its name in pieces), which set `calc.add`
to a right copy before `tests/b_second/test_add.py` imported it: a wrong `add` was
VERIFIED, the file listed as added after the check stage and not counted. So was one that
wrote `tests/b_second/test_aa.txt`, which pytest runs as a doctest by default, before
the tests beside it.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/a_first/test_mul.py": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "tests/b_second/test_add.py": (
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\n"
        "def test_add_negative():\n    assert calc.add(-1, -1) == -2\n"
    ),
}
#: What the code writes, under a name built in pieces, to set `calc.add` to a right copy.
PLANTS = {
    "tests/b_second/conftest.py": (
        '"con" + "ftest.py"',
        "import calc\ncalc.add = lambda a, b: a + b\n",
    ),
    "tests/b_second/test_aa.txt": (
        '"test_aa.t" + "xt"',
        ">>> import calc\n>>> calc.add = lambda a, b: a + b\n",
    ),
}
WRONG_ADD_THAT_PLANTS = """import base64
import os


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


def _warm():
    here = os.path.dirname(os.path.abspath(__file__))
    spot = os.path.join(here, "tests", "b_second", {name})
    try:
        with open(spot, "wb") as f:
            f.write(base64.b64decode("{text}"))
    except OSError:
        pass


_warm()
"""


@pytest.mark.parametrize("planted", sorted(PLANTS))
def test_a_file_the_runner_runs_written_mid_run_is_counted(tmp_path: Path, planted: str) -> None:
    name, text = PLANTS[planted]
    code = WRONG_ADD_THAT_PLANTS.format(name=name, text=base64.b64encode(text.encode()).decode())
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": code}, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert planted in report.note, explain(report)


def test_a_module_among_build_records_is_reported(tmp_path: Path) -> None:
    """What a build writes of the tests goes unreported, but not a module pytest collects."""
    from assay.protect import protected_set
    from assay.protected_workspace import restore_again
    from tests.repos import write

    base = write(tmp_path / "base", {"tests/test_a.py": "assert 1 == 2\n"})
    planted = {
        "tests/test_a.py": "assert 1 == 2\n",
        "target/test-classes/conftest.py": "",
        "target/test-classes/Calc.class": "",
    }
    done = restore_again(write(tmp_path / "work", planted), base, protected_set())
    assert done.removed == ("target/test-classes/conftest.py",), done
