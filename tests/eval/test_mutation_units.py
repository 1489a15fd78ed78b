"""The mutation generator's parts on their own: operators edit exact bytes, the band, the
bug report, the store's graph tables."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

import pytest

from assay.eval.graph.model import CodeUnit, KnowledgeGraph
from assay.eval.graph.python_units import function_of_test, parse_python, python_units
from assay.eval.graph.sandboxed_go import parse_events
from assay.eval.mutation.difficulty import difficulty_band
from assay.eval.mutation.go_operators import go_mutations
from assay.eval.mutation.instruction import bug_report
from assay.eval.mutation.model import OPERATORS, apply_mutations
from assay.eval.mutation.python_operators import python_mutations
from assay.eval.store import SCHEMA_VERSION, Store
from tests.eval.mutation_repos import GO_CALC

SOURCE = b'''def f(a, b):
    """Docstring: 1 < 2 is never mutated."""
    x = max(a,   b)  # a comment kept
    if a < b:
        x += 1
    return x if a == 2 else -3


class C:
    def m(self):
        return True
'''


def test_every_python_operator_edits_only_its_site_and_the_mutant_parses() -> None:
    found = python_mutations(SOURCE, "m.py")

    assert {m.operator for m in found} == set(OPERATORS)
    for mutation in found:
        mutant = apply_mutations(SOURCE, [mutation])
        ast.parse(mutant)
        # Everything outside the edited span is byte for byte the same.
        assert mutant[: mutation.start] == SOURCE[: mutation.start]
        tail = len(SOURCE) - mutation.end
        assert mutant[len(mutant) - tail :] == SOURCE[mutation.end :]
        assert b"Docstring: 1 < 2" in mutant
    swaps = [m for m in found if m.operator == "swapped_arguments"]
    assert [apply_mutations(SOURCE, [m]).splitlines()[2] for m in swaps] == [
        b"    x = max(b,   a)  # a comment kept"
    ]
    flips = {m.replacement for m in found if m.operator == "comparison_flip"}
    assert flips == {b" > ", b" != "}
    returns = {(m.original, m.replacement) for m in found if m.operator == "wrong_return"}
    assert returns == {(b"x if a == 2 else -3", b"None"), (b"True", b"False")}


def test_overlapping_or_stale_mutations_are_refused() -> None:
    found = python_mutations(SOURCE, "m.py")
    condition = next(m for m in found if m.operator == "negated_condition")
    flip = next(m for m in found if m.operator == "comparison_flip" and m.line == condition.line)
    with pytest.raises(ValueError, match="overlapping"):
        apply_mutations(SOURCE, [condition, flip])
    with pytest.raises(ValueError, match="not what it was"):
        apply_mutations(SOURCE.replace(b"a < b", b"a<=b"), [flip])


def test_python_units_are_qualified_and_tests_map_to_their_function() -> None:
    tree = parse_python(SOURCE, "m.py")
    assert tree is not None
    units = python_units(tree, "m.py")
    assert [(u.name, u.start_line, u.end_line) for u in units] == [("f", 1, 6), ("C.m", 10, 11)]
    assert "max" in units[0].calls
    assert function_of_test("tests/t.py::TestX::test_y[1-2]") == ("tests/t.py", "TestX.test_y")
    assert parse_python(b"def broken(:\n", "x.py") is None


def test_go_operators_are_token_level_and_leave_comments_and_strings_alone() -> None:
    source = GO_CALC.encode() + b'\nfunc Name() string {\n\treturn "a < b"\n}\n'
    found = go_mutations(source, "calc/calc.go")

    assert {m.operator for m in found} >= {
        "comparison_flip",
        "wrong_return",
        "negated_condition",
    }
    for mutation in found:
        if mutation.original != b'"a < b"':  # what a string holds is never mutated
            assert b"a < b" in apply_mutations(source, [mutation])
        assert b"// Max returns the larger." in apply_mutations(source, [mutation])
    returns = {(m.original, m.replacement) for m in found if m.operator == "wrong_return"}
    assert (b"n > 0", b"false") in returns
    assert (b"a + b", b"0") in returns
    assert (b'"a < b"', b'""') in returns
    negated = [m for m in found if m.operator == "negated_condition"]
    assert [m.replacement for m in negated] == [b"!(a > b)"]
    calls = go_mutations(b"package p\n\nfunc F() {\n\tg(x, y)\n\tz = 3\n}\n", "p.go")
    assert {(m.operator, m.replacement) for m in calls} >= {
        ("swapped_arguments", b"y, x"),
        ("dropped_statement", b""),
        ("off_by_one", b"4"),
    }


def test_go_events_give_outcomes_messages_and_packages_that_did_not_build() -> None:
    lines = [
        '{"Action":"output","Package":"m/p","Test":"TestA","Output":"=== RUN   TestA\\n"}',
        '{"Action":"output","Package":"m/p","Test":"TestA","Output":"    a_test.go:9: got 1\\n"}',
        '{"Action":"fail","Package":"m/p","Test":"TestA"}',
        '{"Action":"pass","Package":"m/p","Test":"TestB"}',
        '{"Action":"pass","Package":"m/p","Test":"TestB/sub"}',
        '{"Action":"fail","Package":"m/p"}',
        '{"Action":"fail","Package":"m/broken"}',
        "not json at all",
    ]
    outcomes, messages, broken = parse_events("\n".join(lines))
    assert outcomes == {"m/p.TestA": "fail", "m/p.TestB": "pass"}
    assert messages == {"m/p.TestA": "a_test.go:9: got 1"}
    assert broken == ("m/broken",)


@pytest.mark.parametrize(
    ("catching", "direct", "stacked", "band"),
    [
        (5, True, 1, "easy"),
        (3, False, 1, "easy"),
        (2, True, 1, "easy"),
        (1, True, 1, "medium"),
        (2, False, 1, "medium"),
        (1, False, 1, "hard"),
        (3, True, 3, "medium"),
        (1, True, 2, "hard"),
    ],
)
def test_the_band_follows_catching_tests_distance_and_stacking(
    catching: int, direct: bool, stacked: int, band: str
) -> None:
    assert difficulty_band(catching, direct=direct, stacked=stacked) == band


def test_a_band_needs_a_catching_test() -> None:
    with pytest.raises(ValueError):
        difficulty_band(0, direct=True)


def test_the_bug_report_names_the_tests_and_never_shows_the_code() -> None:
    report = bug_report(
        {
            "tests/t.py::test_b": "assert 3 == 5\n+  where 3 = add(2, 3)\n@@ -1 +1 @@",
            "tests/t.py::test_a": "ValueError: bad\n    return a - b",
        },
        [b"    return a - b", b"    return a + b"],
    )
    assert report.startswith("# `test_a` fails (and 1 more)")
    assert "`tests/t.py::test_a`" in report and "`tests/t.py::test_b`" in report
    assert "assert 3 == 5" in report and "ValueError: bad" in report
    assert "return a" not in report and "@@" not in report


def test_the_store_keeps_graphs_by_tree_through_a_migration(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    # A store made by the first schema is migrated, its evaluations kept.
    old = sqlite3.connect(path)
    from assay.eval.store import MIGRATIONS

    old.executescript(MIGRATIONS[0] + "PRAGMA user_version = 1;")
    old.execute("INSERT INTO evals VALUES ('e1', 1.0, 'nop', '{}')")
    old.commit()
    old.close()
    store = Store(path)
    try:
        assert store.schema_version == SCHEMA_VERSION == 2
        assert store.get_eval("e1") is not None
        graph = KnowledgeGraph(
            "t1", "python", (CodeUnit("a.py", "f", 1, 3, ("t::x",), ("t::x",), (2,)),), ("t::x",)
        )
        store.save_graph("t1", "python", graph.to_dict(), [("a.py", "f", 1, 3)], [])
        assert store.load_graph("t1", "python") == graph.to_dict()
        assert KnowledgeGraph.from_dict(graph.to_dict()) == graph
        assert store.load_graph("t2", "python") is None
        store.save_graph("t1", "python", graph.to_dict(), [("a.py", "f", 1, 3)], [])
        assert store.graph_count() == 1
    finally:
        store.close()
