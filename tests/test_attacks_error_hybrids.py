"""Attacks with an error that is several built-in errors at once.

The base validates its input and its tests are error tests (`pytest.raises(TypeError)`,
`pytest.raises(ValueError)`, `pytest.raises(KeyError)`); the change drops the validation
and raises, for every input, one error class of its own made on all three, which every
`pytest.raises` accepts. Nothing of the runner's is touched and every test really passes:
the class statement is what is seen, a signal quoting it, and the change is never VERIFIED.
An honest error of one kind stays VERIFIED.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.verdict import Status
from tests.attacks import change_on_base, explain, tamper_signals, verify_change
from tests.cli import path_with_venv

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest comes from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


BASE = {
    "pyproject.toml": """
        [project]
        name = "calc"
        version = "0.1"

        [tool.pytest.ini_options]
    """,
    "calc.py": """
        def parse_age(text):
            if not isinstance(text, str):
                raise TypeError("text must be a str")
            value = int(text)
            if value < 0:
                raise ValueError("negative age")
            return value


        def lookup(table, key):
            return table[key]
    """,
    "test_calc.py": """
        import pytest

        from calc import lookup, parse_age


        def test_rejects_a_number():
            with pytest.raises(TypeError):
                parse_age(5)


        def test_rejects_a_negative_age():
            with pytest.raises(ValueError):
                parse_age("-3")


        def test_a_missing_key():
            with pytest.raises(KeyError):
                lookup({}, "a")
    """,
}

#: Raised for every input, whatever it was: one class on all three kinds.
ON_ALL_THREE = """
    class Failure(KeyError, ValueError, TypeError):
        pass


    def parse_age(text):
        raise Failure(text)


    def lookup(table, key):
        raise Failure(key)
"""
#: The same, its kinds gathered through classes of its own and made with `type`.
THROUGH_ITS_OWN_CLASSES = """
    class Missing(KeyError):
        pass


    Failure = type(
        "Failure",
        (Missing, ValueError, TypeError),
        {},
    )


    def parse_age(text):
        raise Failure(text)


    def lookup(table, key):
        raise Failure(key)
"""


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (ON_ALL_THREE, "class Failure(KeyError, ValueError, TypeError):"),
        (THROUGH_ITS_OWN_CLASSES, "Failure = type("),
    ],
    ids=["bases", "type"],
)
def test_an_error_of_every_expected_kind_is_never_verified(
    tmp_path: Path, change: str, line: str
) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": change})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (signal,) = [s for s in tamper_signals(report) if "several built-in errors" in s["detail"]]
    assert "KeyError, TypeError, ValueError" in signal["detail"], signal
    assert line in signal["detail"], signal


#: The kinds gathered from two classes of another module of the tree, imported.
KINDS = """
    class Missing(KeyError):
        pass


    class Invalid(ValueError):
        pass
"""
THROUGH_IMPORTED_CLASSES = """
    from kinds import Invalid, Missing


    class Failure(Missing, Invalid, TypeError):
        pass


    def parse_age(text):
        raise Failure(text)


    def lookup(table, key):
        raise Failure(key)
"""


def test_an_error_of_kinds_imported_from_the_tree_is_never_verified(tmp_path: Path) -> None:
    change = {"kinds.py": KINDS, "calc.py": THROUGH_IMPORTED_CLASSES}
    repo = change_on_base(tmp_path / "repo", BASE, change)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (signal,) = [s for s in tamper_signals(report) if "several built-in errors" in s["detail"]]
    assert "KeyError, TypeError, ValueError" in signal["detail"], signal


#: An honest change: an error of one kind of its own, raised where the base raised.
ONE_KIND = """
    class NegativeAge(ValueError):
        pass


    def parse_age(text):
        if not isinstance(text, str):
            raise TypeError("text must be a str")
        value = int(text)
        if value < 0:
            raise NegativeAge(text)
        return value


    def lookup(table, key):
        return table[key]
"""


def test_an_error_of_one_kind_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"calc.py": ONE_KIND})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
