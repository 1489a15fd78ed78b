"""A repository's knowledge graph (code units and the tests that exercise each), built in
the sandbox and kept in the eval store by tree, so an unchanged tree is measured once."""

from __future__ import annotations

from collections.abc import Callable

from assay.errors import AssayError
from assay.eval.graph.model import GRAPH_SCHEMA, CodeUnit, KnowledgeGraph
from assay.eval.graph.snapshot import Snapshot, SnapshotError, take_snapshot
from assay.eval.store import Store

Builder = Callable[[Snapshot, str], KnowledgeGraph]


class GraphError(AssayError):
    """No knowledge graph could be built for the repository; the message says why."""


def _python(snapshot: Snapshot, sandbox: str) -> KnowledgeGraph:
    from assay.eval.graph.python_graph import build_python_graph

    return build_python_graph(snapshot, sandbox=sandbox)


def _go(snapshot: Snapshot, sandbox: str) -> KnowledgeGraph:
    from assay.eval.graph.go_graph import build_go_graph

    return build_go_graph(snapshot, sandbox=sandbox)


#: How each language's graph is built.
BUILDERS: dict[str, Builder] = {"python": _python, "go": _go}


def knowledge_graph(
    snapshot: Snapshot, language: str, store: Store, *, sandbox: str = "auto"
) -> tuple[KnowledgeGraph, bool]:
    """The graph of `snapshot`'s tree in `language`, and whether it was reused from the
    store (False: it was built now, and kept)."""
    from assay.eval.graph.sandboxed_pytest import PytestRunError

    kept = store.load_graph(snapshot.tree, language)
    if kept is not None and kept.get("schema") == GRAPH_SCHEMA:
        return KnowledgeGraph.from_dict(kept), True
    build = BUILDERS.get(language)
    if build is None:
        raise GraphError(f"no knowledge graph for language {language!r} (python, go)")
    try:
        graph = build(snapshot, sandbox)
    except (PytestRunError, SnapshotError) as exc:
        raise GraphError(str(exc)) from exc
    store.save_graph(
        graph.tree,
        language,
        graph.to_dict(),
        [(u.path, u.name, u.start_line, u.end_line) for u in graph.units],
        [(u.path, u.name, t, t in u.direct) for u in graph.units for t in u.tests],
    )
    return graph, False


__all__ = [
    "CodeUnit",
    "GraphError",
    "KnowledgeGraph",
    "Snapshot",
    "SnapshotError",
    "knowledge_graph",
    "take_snapshot",
]
