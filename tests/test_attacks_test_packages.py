"""Under `--protect`, the `__init__.py` files a runner imports the base's tests through are
the base's.

pytest imports `testing/test_calc.py` as `testing.test_calc` once `testing/` has an
`__init__.py`, and runs that first: a change that added one setting `calc.add` to a right
copy had a wrong `add` VERIFIED (its test files are protected by their names, and the
`__init__.py` beside them was not).
"""

from __future__ import annotations

from pathlib import Path

from assay.protect import protected_set
from assay.test_packages import inits_above_tests
from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import write

BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1.0"\n',
    "calc.py": "def add(a, b):\n    return a + b\n",
    "testing/test_calc.py": (
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_add_negative():\n    assert add(-1, -1) == -2\n"
    ),
}
WRONG_ADD = "def add(a, b):\n    return a - b\n"
RIGHT_COPY = "import calc\n\ncalc.add = lambda a, b: a + b\n"


def test_an_init_the_change_adds_beside_the_tests_is_removed(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo",
        BASE,
        {"calc.py": WRONG_ADD, "testing/__init__.py": RIGHT_COPY},
        dedent=False,
    )
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    assert "test_add" in report.note, explain(report)


def test_the_chain_of_packages_climbs_only_through_test_directories(tmp_path: Path) -> None:
    root = write(
        tmp_path / "base",
        {
            "calc.py": "",
            "test_root.py": "",
            "testing/__init__.py": "",
            "testing/unit/__init__.py": "",
            "testing/unit/test_a.py": "",
            "testing/deep/more/test_b.py": "",
            "src/calc/__init__.py": "",
            "src/calc/core.py": "",
            "src/calc/test_core.py": "",
            "pkg/__init__.py": "",
            "pkg/tests/__init__.py": "",
            "pkg/tests/test_c.py": "",
        },
    )
    found = inits_above_tests(root, protected_set())
    assert set(found) == {
        "testing/unit/__init__.py",
        "testing/__init__.py",
        "testing/deep/more/__init__.py",
    }, found
