"""The knowledge graph of a repository: its code units and the tests that exercise each.

Built once per tree (its git tree id) and language, kept in the eval store, and read back
while the tree is unchanged. It is advisory: it decides where mutations are tried and which
tests are run against them, never whether a task counts (validation decides that).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The version of the graph document; a stored graph of another version is rebuilt.
GRAPH_SCHEMA = "assay.graph/1"


@dataclass(frozen=True, slots=True)
class CodeUnit:
    """A function or method: where it is and which tests run its lines."""

    path: str
    name: str
    """Qualified within its file: `Class.method`, `outer.inner`; a whole file for a
    language with file-level edges only."""
    start_line: int
    end_line: int
    tests: tuple[str, ...] = ()
    """Test ids that executed a line of it."""
    direct: tuple[str, ...] = ()
    """Those of `tests` that call it by name themselves (the others reach it through
    other code)."""
    covered_lines: tuple[int, ...] = ()
    """Its lines some test executed (empty: every line, for file-level edges)."""

    def covers(self, line: int) -> bool:
        if not self.start_line <= line <= self.end_line:
            return False
        return not self.covered_lines or line in self.covered_lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "tests": list(self.tests),
            "direct": list(self.direct),
            "covered_lines": list(self.covered_lines),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CodeUnit:
        return cls(
            path=str(data["path"]),
            name=str(data["name"]),
            start_line=int(data["start_line"]),
            end_line=int(data["end_line"]),
            tests=tuple(data.get("tests", ())),
            direct=tuple(data.get("direct", ())),
            covered_lines=tuple(int(n) for n in data.get("covered_lines", ())),
        )


@dataclass(frozen=True, slots=True)
class KnowledgeGraph:
    tree: str
    """The git tree id it was built from."""
    language: str
    units: tuple[CodeUnit, ...]
    tests: tuple[str, ...]
    """Every test id the run saw pass."""
    edge_kind: str = "line"
    """`line` (per-test coverage of lines) or `file` (a test file and the files of its
    package or its imports)."""
    notes: tuple[str, ...] = field(default=())

    def covered_units(self) -> list[CodeUnit]:
        return [u for u in self.units if u.tests]

    def unit_at(self, path: str, line: int) -> CodeUnit | None:
        """The innermost unit of `path` holding `line`."""
        found = [u for u in self.units if u.path == path and u.start_line <= line <= u.end_line]
        return min(found, key=lambda u: u.end_line - u.start_line, default=None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": GRAPH_SCHEMA,
            "tree": self.tree,
            "language": self.language,
            "edge_kind": self.edge_kind,
            "tests": list(self.tests),
            "units": [u.to_dict() for u in self.units],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> KnowledgeGraph:
        return cls(
            tree=str(data["tree"]),
            language=str(data["language"]),
            units=tuple(CodeUnit.from_dict(u) for u in data["units"]),
            tests=tuple(data.get("tests", ())),
            edge_kind=str(data.get("edge_kind", "line")),
            notes=tuple(data.get("notes", ())),
        )
