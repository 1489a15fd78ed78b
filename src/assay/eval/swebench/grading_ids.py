"""Grading-set test ids (a task's FAIL_TO_PASS and PASS_TO_PASS) matched to the names runners
report their tests by.

A grading id names a test as SWE-bench's datasets spell it; a run names it as its runner
reported it. They are matched in one spelling (`normalize_test_id`), and:

- an id with no whitespace that names no test may be one cut at its first space, as
  SWE-bench's log parser cuts pytest's ids (`test_x[a b]` kept as `test_x[a`; published
  datasets hold many so spelt): it stands for every test whose id cuts to it, and takes the
  worst of their outcomes.

- an id in Django's runner's form, `test_x (module.Class)` or, since Python 3.11,
  `test_x (module.Class.test_x)` (SWE-bench's Django instances hold both), names the test
  `module.Class.test_x`: the name `python -m unittest -v` reports, and pytest's
  `module.Class::test_x` for the same test case. (An id that is a test's docstring line,
  which Django's runner prints in place of the name, names no test assay can see.)

The same matching says which failing tests grading runs again (`selects`): only those of
the grading sets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

#: Outcomes from worst to best, for an id that stands for several tests.
OUTCOME_RANK = ("error", "failed", "flaky", "skipped", "xfailed", "passed")
NOT_RUN = "not_run"
#: Django's runner's spelling of a test: its method, then where it is in parentheses.
_DJANGO = re.compile(r"(?P<method>\w+) \((?P<where>\w+(?:\.\w+)+)\)")


class GradingIds:
    """The grading ids of one task, ready to be matched to reported test names."""

    __slots__ = ("_cut", "_dotted", "_exact", "ids")

    def __init__(self, ids: Iterable[str]) -> None:
        self.ids = tuple(dict.fromkeys(ids))
        self._exact = {normalize_test_id(t) for t in self.ids}
        self._cut = {key for key in self._exact if not any(c.isspace() for c in key)}
        self._dotted = {d for t in self.ids if (d := django_test_name(t))}

    def selects(self, reported: str) -> bool:
        """Whether the test a runner reported as `reported` is one of these ids."""
        key = normalize_test_id(reported)
        return key in self._exact or _cut(key) in self._cut or _dotted(key) in self._dotted

    def outcomes(self, seen: Mapping[str, str]) -> dict[str, str]:
        """Each id's outcome, from `seen` (reported test name -> outcome); `not_run` for an
        id no reported test matches."""
        exact: dict[str, str] = {}
        by_cut: dict[str, list[str]] = {}
        by_dotted: dict[str, str] = {}
        for name, outcome in seen.items():
            key = normalize_test_id(name)
            exact[key] = outcome
            by_dotted[_dotted(key)] = outcome
            if (cut := _cut(key)) != key:
                by_cut.setdefault(cut, []).append(outcome)
        found = {}
        for tid in self.ids:
            key = normalize_test_id(tid)
            dotted = django_test_name(tid)
            if key in exact:
                found[tid] = exact[key]
            elif key in self._cut and key in by_cut:
                found[tid] = min(by_cut[key], key=rank)
            elif dotted and dotted in by_dotted:
                found[tid] = by_dotted[dotted]
            else:
                found[tid] = NOT_RUN
        return found


def django_test_name(test_id: str) -> str:
    """`module.Class.test_x` for a Django-style id (`test_x (module.Class)` or `test_x
    (module.Class.test_x)`), '' for any other."""
    match = _DJANGO.fullmatch(test_id.strip())
    if match is None:
        return ""
    method, where = match["method"], match["where"]
    return where if where.endswith("." + method) else f"{where}.{method}"


def _dotted(key: str) -> str:
    """A normalized reported name in dotted form: pytest's `module.Class::test_x` and
    unittest's `module.Class.test_x` are one test case."""
    return key.replace("::", ".")


def rank(outcome: str) -> int:
    """Where `outcome` stands in `OUTCOME_RANK`; one it does not know is the worst."""
    return OUTCOME_RANK.index(outcome) if outcome in OUTCOME_RANK else -1


def _cut(key: str) -> str:
    """`key` cut at its first whitespace, as SWE-bench's pytest log parser cuts ids."""
    return key.split(maxsplit=1)[0] if key.strip() else key


def normalize_test_id(test_id: str) -> str:
    """One spelling for a test id, pytest's JUnit one: `tests/test_a.py::T::test_x` (as
    SWE-bench names it) and `tests.test_a.T::test_x` (as runners report it) name the
    same test; a parameter's `[...]` is kept as it is."""
    path, bracket, params = test_id.partition("[")
    parts = path.split("::")
    parts[0] = parts[0].removesuffix(".py").replace("/", ".")
    if len(parts) > 1:
        path = ".".join(parts[:-1]) + "::" + parts[-1]
    else:
        path = parts[0]
    return f"{path}{bracket}{params}"
