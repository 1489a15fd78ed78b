"""A pytest parameter id pytest numbers by the case's place in its list (`expected12`) names
the same test under another number when the list is in another order: the test ran.

isodate's test_date parametrizes over a set of tuples holding `date`s, whose order follows
the process's hash seed; under `--base HEAD~1 --protect` a change adding a comment was
INDETERMINATE, 46 of the base's 280 passing tests "missing" from a run that passed all 280.
Here the change reorders the cases in the code, deterministically."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

CASES = [("one", 1), ("two", 2), ("three", 3), ("four", 4)]


def _cases(order: list[tuple[str, int]]) -> str:
    listed = ", ".join(f"({w!r}, Fraction({n}))" for w, n in order)
    return f"from fractions import Fraction\n\nCASES = [{listed}]\n"


BASE = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc.py": _cases(CASES),
    "tests/test_calc.py": """\
        import pytest

        import calc

        WORDS = {"one": 1, "two": 2, "three": 3, "four": 4}


        @pytest.mark.parametrize(("word", "expected"), calc.CASES)
        def test_word(word, expected):
            assert WORDS[word] == expected
        """,
}


@pytest.mark.parametrize(
    ("cases", "status"),
    [
        # The same four cases, in another order: every test ran, under another number.
        (list(reversed(CASES)), Status.VERIFIED),
        # One case left out: a test of the base's is not run, whatever the numbers say.
        (list(reversed(CASES))[:3], Status.INDETERMINATE),
    ],
)
def test_cases_in_another_order_ran(
    tmp_path: Path, cases: list[tuple[str, int]], status: Status
) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": _cases(cases)})
    report = verify_change(repo, kinds=frozenset({"test"}))
    assert report.status is status, explain(report)
