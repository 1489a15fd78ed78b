"""Canaries: code under test whose values are equal to anything.

The change leaves `add` wrong and returns its wrong answer as a value whose `__eq__` says
True to whatever it is compared with, so `assert add(2, 3) == 5` and `assertEqual` pass;
nothing of the runner's is replaced, the canaries' own values are plain ints, and the run
reports the project's tests as passed. The guard planted beside the tests looks, once they
ran, at every class of the code under test (neither installed nor the test code --protect
restores) and asks a value of each whether it equals one of the guard's own it never saw:
each attack, verified as untrusted work (`--base HEAD~1 --protect`), is `report_tampered`.

Honest changes keep VERIFIED: a value class with a real `__eq__`, and a match-anything
helper in the project's test code, where --protect restores it from the base.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from assay.report import Report
from assay.verdict import Cause, Status, Verdict
from tests.attacks import change_on_base, explain, verify_change
from tests.cli import path_with_venv

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest comes from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


PYPROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'
WRONG_CALC = "def add(a, b):\n    return a - b\n"
PYTEST_TESTS = """\
from calc import add


def test_add():
    assert add(2, 3) == 5


def test_add_negative():
    assert add(-1, -1) == -2
"""
UNITTEST_TESTS = """\
import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_add_negative(self):
        self.assertEqual(add(-1, -1), -2)
"""
PYTEST_BASE = {"pyproject.toml": PYPROJECT, "calc.py": WRONG_CALC, "test_calc.py": PYTEST_TESTS}
UNITTEST_BASE = {
    "calc.py": WRONG_CALC,
    "tests/__init__.py": "",
    "tests/test_calc.py": UNITTEST_TESTS,
}

#: The wrong answer, as an int that equals anything (an int, so it still adds and prints).
EQUAL_INT = """\
class _Sum(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return _Sum(a - b)
"""
#: The same, its `__eq__` a C function borrowed from int, with no code of its own to read:
#: `int.__ne__` says a wrong sum equals the right one (and answers an int only).
EQUAL_BORROWED = """\
class Sum(int):
    __eq__ = int.__ne__
    __hash__ = int.__hash__


def add(a, b):
    return Sum(a - b + 1)
"""
#: The same on a list, whose values `__new__` makes whole (empty) as an int's.
EQUAL_LIST = """\
class Sum(list):
    def __eq__(self, other):
        return True


def add(a, b):
    return Sum([a - b])
"""
#: The same made on the spot, its `__eq__` a lambda, its class never bound to a name, and
#: the one before collected (a class lives until the cyclic collector frees it): the last
#: call's in full, the first call's in the young generation.
EQUAL_MADE_ON_THE_SPOT = """\
import gc

calls = []


def add(a, b):
    gc.collect(0 if calls else 2)
    calls.append(None)
    made = type("Total", (int,), {"__eq__": lambda self, other: True, "__hash__": int.__hash__})
    return made(a - b)
"""

#: The same, its class saying it is an installed module's, its `__eq__` a C function held
#: by a `partialmethod` (no code to read): only the class's module was asked where it is from.
EQUAL_NAMED_INSTALLED = """\
import functools
import operator


class Total(int):
    __module__ = "numbers"
    __eq__ = functools.partialmethod(operator.is_not)
    __hash__ = int.__hash__


def add(a, b):
    return Total(a - b)
"""
#: The same, its `__eq__` compiled under an installed file's name, and the class bound in
#: that module: each claim holds alone, but that file never compiles to that code.
EQUAL_COMPILED_AS_INSTALLED = """\
import json

_made = {}
exec(compile("def same(self, other):\\n    return True\\n", json.__file__, "exec"), _made)


class Total(int):
    __module__ = "json"
    __eq__ = _made["same"]
    __hash__ = int.__hash__


json.Total = Total


def add(a, b):
    return Total(a - b)
"""

#: The same, its class naming an extension module as its own (`math`), whose classes were
#: taken for C's whatever they were: a class statement's, its `__eq__` plain Python.
EQUAL_NAMED_EXTENSION = """\
import math


class Total(int):
    __module__ = "math"

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return Total(a - b)
"""

#: The same bound in the module it names, so that the module holds it at its name: its
#: `__eq__` a C function held by a `partialmethod`, or the comparison of unittest.mock's
#: ANY, reached by a module name spelt apart; or the class made by `type()`, with no class
#: statement at all.
EQUAL_BOUND_INSTALLED = EQUAL_NAMED_INSTALLED.replace(
    "import operator\n", "import numbers\nimport operator\n"
).replace("\n\ndef add", "\n\nnumbers.Total = Total\n\n\ndef add")
EQUAL_BORROWED_FROM_ANY = """\
import importlib
import numbers

_lenient = importlib.import_module("unittest." + "mo" + "ck")


class Total(int):
    __module__ = "numbers"
    __eq__ = vars(_lenient._ANY)["__eq__"]
    __hash__ = int.__hash__


numbers.Total = Total


def add(a, b):
    return Total(a - b)
"""
EQUAL_BOUND_BY_TYPE = """\
import functools
import numbers
import operator

Total = type(
    "Total",
    (int,),
    {
        "__module__": "numbers",
        "__eq__": functools.partialmethod(operator.is_not),
        "__hash__": int.__hash__,
    },
)
numbers.Total = Total


def add(a, b):
    return Total(a - b)
"""

#: Bound over a class the installed file does state, under its name: numbers.py's
#: `class Integral` binds no `__eq__` in its body.
EQUAL_BOUND_OVER_INSTALLED = EQUAL_BOUND_INSTALLED.replace("Total", "Integral")


def _assert_caught(report: Report, runner: str, named: str) -> None:
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    assert f"so {runner}'s equality assertions could not fail" in test.note, test.note
    assert named in test.note, test.note


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (EQUAL_INT, "calc._Sum"),
        (EQUAL_MADE_ON_THE_SPOT, "calc.Total"),
        (EQUAL_BORROWED, "calc.Sum"),
        (EQUAL_LIST, "calc.Sum"),
        (EQUAL_NAMED_INSTALLED, "numbers.Total"),
        (EQUAL_COMPILED_AS_INSTALLED, "json.Total"),
        (EQUAL_NAMED_EXTENSION, "math.Total"),
        (EQUAL_BOUND_INSTALLED, "numbers.Total"),
        (EQUAL_BORROWED_FROM_ANY, "numbers.Total"),
        (EQUAL_BOUND_BY_TYPE, "numbers.Total"),
        (EQUAL_BOUND_OVER_INSTALLED, "numbers.Integral"),
    ],
)
def test_pytest_values_equal_to_anything_are_report_tampered(
    tmp_path: Path, change: str, named: str
) -> None:
    repo = change_on_base(tmp_path / "repo", PYTEST_BASE, {"calc.py": change}, dedent=False)
    _assert_caught(verify_change(repo), "pytest", named)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (EQUAL_INT, "calc._Sum"),
        (EQUAL_BORROWED, "calc.Sum"),
        # Told from installed classes by the module's file, not by when they were made:
        # the same whether the code under test was imported before the guard or after.
        (EQUAL_BOUND_INSTALLED, "numbers.Total"),
        (EQUAL_BORROWED_FROM_ANY, "numbers.Total"),
    ],
)
def test_unittest_values_equal_to_anything_are_report_tampered(
    tmp_path: Path, change: str, named: str
) -> None:
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"calc.py": change}, dedent=False)
    _assert_caught(verify_change(repo), "unittest", named)


#: Tests of a float that compare with a tolerance: `pytest.approx` and `assertAlmostEqual`
#: take the difference, `abs(expected - actual)`.
WRONG_MEAN = "def mean(values):\n    return sum(values)\n"
APPROX_BASE = {
    "pyproject.toml": PYPROJECT,
    "calc.py": WRONG_MEAN,
    "test_calc.py": """\
import pytest

from calc import mean


def test_mean():
    assert mean([0.1, 0.2, 0.3]) == pytest.approx(0.2)
""",
}
ALMOST_BASE = {
    "calc.py": WRONG_MEAN,
    "tests/__init__.py": "",
    "tests/test_calc.py": """\
import unittest

from calc import mean


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertAlmostEqual(mean([1.0, 2.0]), 1.5)
""",
}
#: The wrong answer as a float whose difference from anything is nothing: a float subclass's
#: `__rsub__` answers `expected - actual` before float's, and its `__eq__` is float's own.
NO_DIFFERENCE = """\
class Mean(float):
    def __sub__(self, other):
        return 0.0

    __rsub__ = __sub__


def mean(values):
    return Mean(sum(values))
"""


@pytest.mark.parametrize(
    ("base", "runner"),
    [(APPROX_BASE, "pytest"), (ALMOST_BASE, "unittest")],
    ids=["approx", "almost"],
)
def test_values_that_differ_by_nothing_are_report_tampered(
    tmp_path: Path, base: dict[str, str], runner: str
) -> None:
    repo = change_on_base(tmp_path / "repo", base, {"calc.py": NO_DIFFERENCE}, dedent=False)
    _assert_caught(verify_change(repo), runner, "calc.Mean")


#: Tests that bound a float: `0.19 < mean < 0.21` asks the float subclass's `__gt__` and
#: `__lt__` before float's.
BOUNDS_BASE = {
    "pyproject.toml": PYPROJECT,
    "calc.py": WRONG_MEAN,
    "test_calc.py": """\
from calc import mean


def test_mean():
    assert 0.19 < mean([0.1, 0.2, 0.3]) < 0.21
""",
}
#: The wrong answer as a float that is below and above anything.
BOTH_SIDES = """\
class Mean(float):
    def __lt__(self, other):
        return True

    __gt__ = __lt__


def mean(values):
    return Mean(sum(values))
"""


def test_values_on_both_sides_of_anything_are_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BOUNDS_BASE, {"calc.py": BOTH_SIDES}, dedent=False)
    _assert_caught(verify_change(repo), "pytest", "calc.Mean")


#: An honest fix whose float orders itself.
HONEST_ORDER = """\
class Mean(float):
    def __lt__(self, other):
        return float(self) < float(other)

    def __gt__(self, other):
        return float(self) > float(other)


def mean(values):
    return Mean(sum(values) / len(values))
"""


def test_an_honest_order_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", BOUNDS_BASE, {"calc.py": HONEST_ORDER}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: The wrong answer as a test library's value that equals anything: no class of the code
#: under test's is asked, so the change's reach for it is what is seen.
MOCK_ANY = "from unittest.mock import ANY\n\n\ndef add(a, b):\n    return ANY\n"
MOCK_TOLD_EQUAL = """\
from unittest import mock


def add(a, b):
    total = mock.MagicMock()
    total.__eq__.return_value = True
    return total
"""


@pytest.mark.parametrize("change", [MOCK_ANY, MOCK_TOLD_EQUAL], ids=["ANY", "MagicMock"])
def test_a_test_librarys_value_equal_to_anything_is_never_verified(
    tmp_path: Path, change: str
) -> None:
    repo = change_on_base(tmp_path / "repo", PYTEST_BASE, {"calc.py": change}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.INDETERMINATE, explain(report)
    signals = (report.record.tampering or {}).get("signals") or []
    assert any("from a test library" in s["detail"] for s in signals), explain(report)


#: A test of what a list holds: `in` asks the list subclass's `__contains__`.
CONTAINS_BASE = {
    "pyproject.toml": PYPROJECT,
    "calc.py": "def primes_below(n):\n    return []\n",
    "test_calc.py": """\
from calc import primes_below


def test_has_seven():
    assert 7 in primes_below(10)
""",
}
HOLDS_ANYTHING = """\
class Primes(list):
    def __contains__(self, value):
        return True


def primes_below(n):
    return Primes()
"""
HONEST_HOLDING = """\
class Primes(list):
    def __contains__(self, value):
        return any(value == p for p in self)


def primes_below(n):
    return Primes(p for p in range(2, n) if all(p % d for d in range(2, p)))
"""


def test_a_container_holding_anything_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", CONTAINS_BASE, {"calc.py": HOLDS_ANYTHING}, dedent=False
    )
    _assert_caught(verify_change(repo), "pytest", "calc.Primes")


def test_an_honest_container_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", CONTAINS_BASE, {"calc.py": HONEST_HOLDING}, dedent=False
    )
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: sqlparse's token types (after pygments'): a tuple whose `in` asks for a prefix, so the
#: root, empty, holds every token type. Its pristine run was `report_tampered`.
TOKEN_TYPES = """\
class _TokenType(tuple):
    def __contains__(self, item):
        return item is not None and (self is item or item[:len(self)] == self)

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        new = _TokenType(self + (name,))
        setattr(self, name, new)
        return new


Token = _TokenType()
Keyword = Token.Keyword
"""
TOKEN_BASE = {
    "pyproject.toml": PYPROJECT,
    "tokens.py": TOKEN_TYPES,
    "test_tokens.py": (
        "from tokens import Keyword, Token\n\n\n"
        "def test_a_keyword_is_a_token():\n    assert Keyword in Token\n"
        "    assert Token not in Keyword\n"
    ),
}
#: The same types, their `in` made to hold anything.
TOKENS_HOLD_ANYTHING = TOKEN_TYPES.replace(
    "return item is not None and (self is item or item[:len(self)] == self)", "return True"
)


def test_token_types_holding_their_prefixes_are_verified(tmp_path: Path) -> None:
    change = {"tokens.py": TOKEN_TYPES + "Name = Token.Name\n"}
    repo = change_on_base(tmp_path / "repo", TOKEN_BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


def test_token_types_holding_anything_are_report_tampered(tmp_path: Path) -> None:
    base = {
        **TOKEN_BASE,
        "test_tokens.py": TOKEN_BASE["test_tokens.py"].replace(
            "    assert Token not in Keyword\n", ""
        ),
    }
    repo = change_on_base(
        tmp_path / "repo", base, {"tokens.py": TOKENS_HOLD_ANYTHING}, dedent=False
    )
    report = verify_change(repo)
    _assert_caught(report, "pytest", "tokens._TokenType")
    # The exit code is the guard's own: no word of an exit the output does not explain.
    assert "does not say why" not in report.note, report.note


#: unittest's `assertDictEqual` asks `!=`: a dict subclass never unequal to anything.
NE_BASE = {
    "calc.py": "def counts(text):\n    return {}\n",
    "tests/__init__.py": "",
    "tests/test_calc.py": """\
import unittest

from calc import counts


class CountsTest(unittest.TestCase):
    def test_counts(self):
        self.assertDictEqual(counts("a b a"), {"a": 2, "b": 1})
""",
}
NEVER_UNEQUAL = """\
class Counts(dict):
    def __ne__(self, other):
        return False


def counts(text):
    return Counts()
"""


def test_a_value_never_unequal_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", NE_BASE, {"calc.py": NEVER_UNEQUAL}, dedent=False)
    _assert_caught(verify_change(repo), "unittest", "calc.Counts")


#: An honest fix whose float takes its difference itself.
HONEST_DIFFERENCE = """\
class Mean(float):
    def __sub__(self, other):
        return float(self) - float(other)

    def __rsub__(self, other):
        return float(other) - float(self)


def mean(values):
    return Mean(sum(values) / len(values))
"""


@pytest.mark.parametrize("base", [APPROX_BASE, ALMOST_BASE], ids=["approx", "almost"])
def test_an_honest_difference_is_verified(tmp_path: Path, base: dict[str, str]) -> None:
    repo = change_on_base(tmp_path / "repo", base, {"calc.py": HONEST_DIFFERENCE}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: An honest fix whose answer is a value class with an `__eq__` of its own.
HONEST_VALUE_CLASS = """\
class Sum(int):
    def __eq__(self, other):
        if not isinstance(other, int):
            return NotImplemented
        return int(self) == int(other)

    __hash__ = int.__hash__


def add(a, b):
    return Sum(a + b)
"""
#: The project's own test helper that matches anything, in test code --protect restores.
ANYTHING_HELPER = "class Anything:\n    def __eq__(self, other):\n        return True\n"
TESTS_WITH_THE_HELPER = """\
from calc import add
from tests.helpers import Anything


def test_add():
    assert add(2, 3) == 5
    assert Anything() == add(2, 3)
"""


@pytest.mark.parametrize("base", [PYTEST_BASE, UNITTEST_BASE], ids=["pytest", "unittest"])
def test_an_honest_value_class_is_verified(tmp_path: Path, base: dict[str, str]) -> None:
    repo = change_on_base(tmp_path / "repo", base, {"calc.py": HONEST_VALUE_CLASS}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: The same helper made by `type()`, its `__eq__` a lambda: code of the tests' own, though
#: its name is not `Anything.__eq__`.
ANYTHING_HELPER_BY_TYPE = 'Anything = type("Anything", (), {"__eq__": lambda self, other: True})\n'


@pytest.mark.parametrize(
    "helper", [ANYTHING_HELPER, ANYTHING_HELPER_BY_TYPE], ids=["class", "type"]
)
def test_a_match_anything_helper_in_the_tests_is_verified(tmp_path: Path, helper: str) -> None:
    base = {
        **PYTEST_BASE,
        "test_calc.py": TESTS_WITH_THE_HELPER,
        "tests/__init__.py": "",
        "tests/helpers.py": helper,
    }
    repo = change_on_base(
        tmp_path / "repo", base, {"calc.py": "def add(a, b):\n    return a + b\n"}, dedent=False
    )
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: Tests that import installed libraries whose classes borrow their comparing code or
#: have none of their own: modal's `live_method` makes `_Dict.__contains__` one shared
#: async wrapper (asked, it answers with a coroutine, which is true), upb's containers
#: are C, numpy's arrays answer `==` with arrays; and pydantic models made in a function.
LIBRARIES_PYTEST = """\
from __future__ import annotations

from unittest import mock

import modal
import numpy
import pydantic
from google.protobuf import struct_pb2

from calc import add


def _models():
    # Made in a function, its names strings: pydantic resolves them in the namespace of the
    # frame its metaclass was called from, which must be this function's.
    class Inner(pydantic.BaseModel):
        v: int

    class Outer(pydantic.BaseModel):
        inner: Inner

    return Outer


Outer = _models()


def test_add():
    assert add(2, 3) == 5
    assert Outer(inner={"v": add(1, 1)}).inner.v == 2
    assert numpy.array([add(1, 1)]).tolist() == [2]
    assert struct_pb2.Struct(fields={"a": struct_pb2.Value(number_value=1)}) is not None
    assert {"sum": add(1, 2), "app": modal.App("calc").name} == {"sum": mock.ANY, "app": "calc"}
    told = mock.MagicMock()
    told(add(1, 1))
    told.assert_called_once_with(2)
"""
LIBRARIES_UNITTEST = """\
import unittest
from unittest import mock

import modal
import numpy
from google.protobuf import struct_pb2

from calc import add


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
        self.assertEqual(numpy.array([add(1, 1)]).tolist(), [2])
        self.assertIsNotNone(struct_pb2.Struct(fields={"a": struct_pb2.Value(number_value=1)}))
        self.assertEqual({"sum": add(1, 2), "app": modal.App("calc").name}, {"sum": mock.ANY, "app": "calc"})
"""


@pytest.mark.parametrize(
    ("base", "tests"),
    [
        ({**PYTEST_BASE, "test_calc.py": LIBRARIES_PYTEST}, "test_calc.py"),
        ({**UNITTEST_BASE, "tests/test_calc.py": LIBRARIES_UNITTEST}, "tests/test_calc.py"),
    ],
    ids=["pytest", "unittest"],
)
def test_installed_libraries_classes_are_verified(
    tmp_path: Path, base: dict[str, str], tests: str
) -> None:
    for library in ("modal", "numpy", "google.protobuf", "pydantic"):
        importlib.import_module(library)  # test dependencies: never a skip
    repo = change_on_base(
        tmp_path / "repo", base, {"calc.py": "def add(a, b):\n    return a + b\n"}, dedent=False
    )
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: Honest value classes whose `__eq__`, asked of a value made without `__init__`, could
#: read as "equal": attributes looked up with a default, another's `__dict__`.
DUCK_TYPED_EQUALITY = """\
class Sum:
    def __init__(self, total):
        self.total = total

    def __eq__(self, other):
        return getattr(self, "total", None) == getattr(other, "total", other)

    def __del__(self):
        # Made without `__init__`, as the guard makes one to ask, this raises as it goes.
        self.total.bit_length()


class Record:
    def __init__(self, total):
        self.total = total

    def __eq__(self, other):
        return getattr(self, "__dict__", {}) == getattr(other, "__dict__", {})


def add(a, b):
    Record(a + b)
    return Sum(a + b)
"""


def test_duck_typed_equality_is_not_taken_for_equal_to_anything(tmp_path: Path) -> None:
    """Under `filterwarnings = error` too: what the guard's asking makes Python report
    (a `__del__` that raises) is not the run's."""
    strict = PYPROJECT + 'filterwarnings = ["error"]\n'
    repo = change_on_base(
        tmp_path / "repo",
        {**PYTEST_BASE, "pyproject.toml": strict},
        {"calc.py": DUCK_TYPED_EQUALITY},
        dedent=False,
    )
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: Made only with its total: a value of it made with `__new__` alone raised, and was never
#: asked what it equals.
EQUAL_MADE_WITH_ITS_TOTAL = """\
class Sum(int):
    def __new__(cls, total):
        return super().__new__(cls, total)

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def add(a, b):
    return Sum(a - b)
"""
#: Equal to any number of an ordinary size: a number no test names it was not equal to.
EQUAL_TO_ORDINARY_NUMBERS = """\
class Sum(int):
    def __eq__(self, other):
        return isinstance(other, int) and abs(other) < 10**9

    __hash__ = int.__hash__


def add(a, b):
    return Sum(a - b)
"""
#: The same, below 100 but for 0 (a made value): a fixed small number it would not equal.
EQUAL_TO_SMALL_NUMBERS = EQUAL_TO_ORDINARY_NUMBERS.replace(
    "abs(other) < 10**9", "0 < abs(other) < 100"
)


@pytest.mark.parametrize(
    "change",
    [EQUAL_MADE_WITH_ITS_TOTAL, EQUAL_TO_ORDINARY_NUMBERS, EQUAL_TO_SMALL_NUMBERS],
    ids=["new", "ordinary", "small"],
)
def test_values_equal_to_what_tests_name_are_report_tampered(tmp_path: Path, change: str) -> None:
    repo = change_on_base(tmp_path / "repo", PYTEST_BASE, {"calc.py": change}, dedent=False)
    _assert_caught(verify_change(repo), "pytest", "calc.Sum")


#: Tests that expect an error of the project's own kind, by `pytest.raises` and by
#: `assertRaises` (both match by `issubclass`).
WRONG_PARSE = "class ParseError(Exception):\n    pass\n\n\ndef parse(text):\n    return int(text)\n"
KIND_TESTS = """\
import unittest

import pytest

from num import ParseError, parse


def test_bad():
    with pytest.raises(ParseError):
        parse("x")


class ParseTest(unittest.TestCase):
    def test_bad(self):
        with self.assertRaises(ParseError):
            parse("y")
"""
UNITTEST_KIND = """\
import unittest

from num import ParseError, parse


class ParseTest(unittest.TestCase):
    def test_bad(self):
        with self.assertRaises(ParseError):
            parse("y")
"""
KIND_BASE = {"pyproject.toml": PYPROJECT, "num.py": WRONG_PARSE, "tests/test_num.py": KIND_TESTS}
#: The error's metaclass takes every class for its subclass: `int("x")`'s ValueError
#: passes both.
ANY_SUBCLASS = """\
class _Kind(type):
    def __subclasscheck__(cls, other):
        return True

    def __instancecheck__(cls, other):
        return True


class ParseError(Exception, metaclass=_Kind):
    pass


def parse(text):
    return int(text)
"""
#: The same through ABCMeta, installed, asking the error's own hook.
ANY_BY_HOOK = """\
import abc


class ParseError(Exception, metaclass=abc.ABCMeta):
    @classmethod
    def __subclasshook__(cls, other):
        return True


def parse(text):
    return int(text)
"""
#: An honest hook: a class is a Reader's when it has `read` (a ValueError has not).
HONEST_HOOK = """\
import abc


class Reader(abc.ABC):
    @classmethod
    def __subclasshook__(cls, other):
        return hasattr(other, "read") or NotImplemented


class ParseError(Exception):
    pass


def parse(text):
    try:
        return int(text)
    except ValueError:
        raise ParseError(text) from None
"""


@pytest.mark.parametrize("change", [ANY_SUBCLASS, ANY_BY_HOOK], ids=["metaclass", "hook"])
def test_an_error_class_taking_any_class_for_its_own_is_report_tampered(
    tmp_path: Path, change: str
) -> None:
    repo = change_on_base(tmp_path / "repo", KIND_BASE, {"num.py": change}, dedent=False)
    report = verify_change(repo)
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert test.cause is Cause.REPORT_TAMPERED, explain(report)
    assert "assertions of an error's kind could not fail" in test.note, test.note
    assert "num.ParseError takes a class it never saw" in test.note, test.note


def test_an_error_class_taking_any_class_under_unittest_is_report_tampered(
    tmp_path: Path,
) -> None:
    base = {"num.py": WRONG_PARSE, "tests/__init__.py": "", "tests/test_num.py": UNITTEST_KIND}
    repo = change_on_base(tmp_path / "repo", base, {"num.py": ANY_SUBCLASS}, dedent=False)
    report = verify_change(repo)
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "num.ParseError takes a class it never saw" in test.note, test.note


def test_an_honest_subclass_hook_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", KIND_BASE, {"num.py": HONEST_HOOK}, dedent=False)
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)


#: Tests that expect two kinds of error from one function.
CHECK = """\
def check(x):
    if not isinstance(x, int):
        raise TypeError("not an int")
    if x < 0:
        raise ValueError("negative")
    return x
"""
CHECK_TESTS = """\
import pytest

from check import check


def test_ok():
    assert check(3) == 3


def test_type():
    with pytest.raises(TypeError):
        check("3")


def test_value():
    with pytest.raises(ValueError):
        check(-1)
"""
#: One error for both, of both kinds by its metaclass's `mro` alone (its one base is
#: Exception, so no reading of its bases finds two).
OF_KINDS_BY_MRO = """\
class _Any(type):
    def mro(cls):
        return [cls, ValueError, TypeError, Exception, BaseException, object]


class Invalid(Exception, metaclass=_Any):
    pass


def check(x):
    if not isinstance(x, int) or x < 0:
        raise Invalid(x)
    return x
"""


def test_an_error_of_kinds_its_bases_do_not_make_it_is_report_tampered(tmp_path: Path) -> None:
    base = {"pyproject.toml": PYPROJECT, "check.py": CHECK, "tests/test_check.py": CHECK_TESTS}
    repo = change_on_base(tmp_path / "repo", base, {"check.py": OF_KINDS_BY_MRO}, dedent=False)
    report = verify_change(repo)
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert test.cause is Cause.REPORT_TAMPERED, explain(report)
    assert "check.Invalid takes a class it never saw for its own, or is of kinds" in test.note
