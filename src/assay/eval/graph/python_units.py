"""Python code units (functions and methods, with their qualified names and line spans)
and, for test functions, the names they call: read with `ast` from the committed text,
never imported or run."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PyUnit:
    path: str
    name: str
    start_line: int
    end_line: int
    calls: frozenset[str]
    """Names it calls directly (`f(...)`, `x.f(...)` -> `f`)."""


def parse_python(text: bytes, path: str) -> ast.Module | None:
    """The module's tree; None when it does not parse (or is too deep to)."""
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def python_units(tree: ast.Module, path: str) -> list[PyUnit]:
    """Every function and method of the module, nested ones included."""
    found: list[PyUnit] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                found.append(PyUnit(path, name, start, end, _calls(child)))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    try:
        visit(tree, "")
    except RecursionError:
        return found
    return found


def _calls(function: ast.AST) -> frozenset[str]:
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                names.add(node.func.id)
            elif isinstance(node.func, ast.Attribute):
                names.add(node.func.attr)
    return frozenset(names)


def is_python_test_file(path: str) -> bool:
    """A file of tests (pytest's default names, or under a `tests`/`test` folder) or of
    their fixtures: not code under test."""
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in ("tests", "test") for part in path.split("/")[:-1])
    )


def function_of_test(test_id: str) -> tuple[str, str]:
    """(file, qualified function) of a pytest node id: `tests/t.py::C::test_x[1]` ->
    (`tests/t.py`, `C.test_x`)."""
    path, _, rest = test_id.partition("::")
    return path, rest.split("[", 1)[0].replace("::", ".")
