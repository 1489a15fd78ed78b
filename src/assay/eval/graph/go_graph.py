"""The Go knowledge graph, at file level: one `go test -json ./...` run in the sandbox
says which tests each package has (and that they pass); every non-test file of a package
is a unit exercised by that package's tests. A test is direct for the file whose
`_test.go` twin declares it (`calc.go` and `calc_test.go`), transitive for the others."""

from __future__ import annotations

import posixpath
import re

from assay.eval.graph.model import CodeUnit, KnowledgeGraph
from assay.eval.graph.sandboxed_go import run_go_tests
from assay.eval.graph.sandboxed_pytest import PytestRunError
from assay.eval.graph.snapshot import Snapshot

GRAPH_TIMEOUT_S = 900.0
_MODULE = re.compile(rb"^module\s+(\S+)", re.MULTILINE)
_TEST_FUNC = re.compile(rb"^func\s+(Test[A-Za-z0-9_]*)\s*\(", re.MULTILINE)


def module_path(snapshot: Snapshot) -> str:
    text = snapshot.read("go.mod")
    found = _MODULE.search(text) if text else None
    if found is None:
        raise PytestRunError(f"{snapshot.repo}: no go.mod with a module line at its root")
    return found.group(1).decode("utf-8", "replace").strip('"')


def package_of(module: str, path: str) -> str:
    directory = posixpath.dirname(path)
    return f"{module}/{directory}" if directory else module


def build_go_graph(snapshot: Snapshot, *, sandbox: str = "auto") -> KnowledgeGraph:
    from assay.eval.graph.sandboxed_go import GoRunError

    module = module_path(snapshot)
    try:
        run = run_go_tests(snapshot.repo, snapshot.commit, sandbox=sandbox, timeout=GRAPH_TIMEOUT_S)
    except GoRunError as exc:
        raise PytestRunError(str(exc)) from exc
    passed = sorted(t for t, o in run.outcomes.items() if o == "pass")
    if run.timed_out or run.exit_code != 0 or not passed:
        raise PytestRunError(
            f"the Go tests do not pass at {snapshot.commit[:12]} (exit {run.exit_code}); "
            f"mutation tasks need a passing suite. Output:\n{run.output[-1500:]}"
        )
    declared: dict[str, str] = {}  # test id -> the _test.go file declaring it
    for path in snapshot.files:
        if path.endswith("_test.go"):
            for name in _TEST_FUNC.findall(snapshot.read(path) or b""):
                declared[f"{package_of(module, path)}.{name.decode()}"] = path
    units = []
    for path in snapshot.files:
        if not path.endswith(".go") or path.endswith("_test.go"):
            continue
        text = snapshot.read(path)
        if text is None:
            continue
        package = package_of(module, path)
        tests = tuple(t for t in passed if t.rsplit(".", 1)[0] == package)
        twin = path.removesuffix(".go") + "_test.go"
        units.append(
            CodeUnit(
                path=path,
                name=path,
                start_line=1,
                end_line=text.count(b"\n") + 1,
                tests=tests,
                direct=tuple(t for t in tests if declared.get(t) == twin),
            )
        )
    return KnowledgeGraph(
        tree=snapshot.tree,
        language="go",
        units=tuple(units),
        tests=tuple(passed),
        edge_kind="file",
        notes=("go test -json output was truncated",) if run.truncated else (),
    )
