"""The Python knowledge graph: units from `ast`, edges from one sandboxed pytest run with
per-test coverage contexts (a test exercises a unit when it executed one of its lines)."""

from __future__ import annotations

from assay.eval.graph.model import CodeUnit, KnowledgeGraph
from assay.eval.graph.python_units import (
    PyUnit,
    function_of_test,
    is_python_test_file,
    parse_python,
    python_units,
)
from assay.eval.graph.sandboxed_pytest import PytestRunError, run_pytest
from assay.eval.graph.snapshot import Snapshot

#: The whole suite, with coverage, must finish within this.
GRAPH_TIMEOUT_S = 900.0


def build_python_graph(snapshot: Snapshot, *, sandbox: str = "auto") -> KnowledgeGraph:
    """Run the tests once with coverage, in the sandbox; raises `PytestRunError` when the
    suite could not run or does not pass at the commit (a mutation is only a bug against
    tests that pass)."""
    run = run_pytest(
        snapshot.repo, snapshot.commit, coverage=True, sandbox=sandbox, timeout=GRAPH_TIMEOUT_S
    )
    if run.timed_out:
        raise PytestRunError(f"the test suite did not finish within {GRAPH_TIMEOUT_S:g}s")
    passed = sorted(t for t, o in run.outcomes.items() if o.outcome == "passed")
    if run.exit_code != 0 or run.failed or not passed:
        failing = ", ".join(sorted(run.failed)[:5]) or "none named"
        raise PytestRunError(
            f"the tests do not pass at {snapshot.commit[:12]} (exit {run.exit_code}, failing: "
            f"{failing}); mutation tasks need a passing suite. Output:\n{run.output[-1500:]}"
        )
    units: list[PyUnit] = []
    for path in snapshot.files:
        if path.endswith(".py"):
            text = snapshot.read(path)
            tree = parse_python(text, path) if text is not None else None
            if tree is not None:
                units += python_units(tree, path)
    calls = {(u.path, u.name): u.calls for u in units}
    graph_units = []
    for unit in units:
        if is_python_test_file(unit.path):
            continue  # read for what the tests call; not code under test
        by_line = run.lines.get(unit.path, {})
        inner = [u for u in units if u is not unit and _inside(u, unit)]
        lines = [
            n
            for n in range(unit.start_line, unit.end_line + 1)
            if by_line.get(n) and not any(u.start_line <= n <= u.end_line for u in inner)
        ]
        tests = sorted({t for n in lines for t in by_line[n] if t in passed})
        leaf = unit.name.rsplit(".", 1)[-1]
        direct = [t for t in tests if leaf in calls.get(function_of_test(t), frozenset())]
        graph_units.append(
            CodeUnit(
                path=unit.path,
                name=unit.name,
                start_line=unit.start_line,
                end_line=unit.end_line,
                tests=tuple(tests),
                direct=tuple(direct),
                covered_lines=tuple(lines),
            )
        )
    return KnowledgeGraph(
        tree=snapshot.tree,
        language="python",
        units=tuple(graph_units),
        tests=tuple(passed),
        edge_kind="line",
    )


def _inside(inner: PyUnit, outer: PyUnit) -> bool:
    return (
        inner.path == outer.path
        and outer.start_line < inner.start_line
        and inner.end_line <= outer.end_line
    )
