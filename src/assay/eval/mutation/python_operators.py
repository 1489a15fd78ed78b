"""The mutation operators on Python, found with `ast` and applied at the nodes' exact byte
offsets (never `ast.unparse` of the whole file: every other byte stays as written)."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from assay.eval.graph.python_units import parse_python
from assay.eval.mutation.model import Mutation

#: Comparison operators and the one each flips to.
_FLIPS = {
    "<": ">",
    ">": "<",
    "<=": ">=",
    ">=": "<=",
    "==": "!=",
    "!=": "==",
    "is": "is not",
    "is not": "is",
    "in": "not in",
    "not in": "in",
}
_OP_TEXT = {
    ast.Lt: "<",
    ast.Gt: ">",
    ast.LtE: "<=",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def python_mutations(text: bytes, path: str) -> list[Mutation]:
    """Every site of every operator in the module whose mutant still parses."""
    tree = parse_python(text, path)
    if tree is None:
        return []
    offsets = _Offsets(text)
    docstrings = _docstrings(tree)
    found: list[Mutation] = []
    for node in ast.walk(tree):
        for mutation in _sites(node, offsets, docstrings, path):
            mutated = text[: mutation.start] + mutation.replacement + text[mutation.end :]
            if mutated != text and parse_python(mutated, path) is not None:
                found.append(mutation)
    return found


class _Offsets:
    """Byte offsets of `ast` positions (their columns are UTF-8 byte offsets already)."""

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.starts = [0]
        for index, byte in enumerate(text):
            if byte == 0x0A:
                self.starts.append(index + 1)

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.starts[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
        end_line = node.end_lineno or node.lineno  # type: ignore[attr-defined]
        end = self.starts[end_line - 1] + (node.end_col_offset or 0)  # type: ignore[attr-defined]
        return start, end

    def edit(self, operator: str, path: str, line: int, start: int, end: int, new: str) -> Mutation:
        return Mutation(operator, path, line, start, end, new.encode("utf-8"), self.text[start:end])


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0]))
                found.add(id(body[0].value))
    return found


def _sites(node: ast.AST, at: _Offsets, docstrings: set[int], path: str) -> Iterator[Mutation]:
    if id(node) in docstrings:
        return
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        yield from _comparison_flip(node, at, path)
    elif isinstance(node, ast.Constant) and type(node.value) is int:
        start, end = at.span(node)
        yield at.edit("off_by_one", path, node.lineno, start, end, str(node.value + 1))
    elif isinstance(node, ast.Return) and node.value is not None:
        yield from _wrong_return(node, at, path)
    elif isinstance(node, ast.Assign | ast.AugAssign) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    ):
        start, end = at.span(node)
        yield at.edit("dropped_statement", path, node.lineno, start, end, "pass")
    if isinstance(node, ast.Call) and len(node.args) >= 2:
        yield from _swapped_arguments(node, at, path)
    elif isinstance(node, ast.If | ast.IfExp):
        start, end = at.span(node.test)
        condition = at.text[start:end].decode("utf-8")
        yield at.edit("negated_condition", path, node.test.lineno, start, end, f"not ({condition})")


def _comparison_flip(node: ast.Compare, at: _Offsets, path: str) -> Iterator[Mutation]:
    op = _OP_TEXT.get(type(node.ops[0]))
    _, start = at.span(node.left)
    end, _ = at.span(node.comparators[0])
    between = at.text[start:end].decode("utf-8", "replace")
    if op is None or " ".join(between.split()) != op:
        return  # parentheses or a comment in the way: the operator is not found exactly
    line = node.left.end_lineno or node.lineno
    yield at.edit("comparison_flip", path, line, start, end, f" {_FLIPS[op]} ")


def _wrong_return(node: ast.Return, at: _Offsets, path: str) -> Iterator[Mutation]:
    value = node.value
    assert value is not None
    if isinstance(value, ast.Constant) and value.value is None:
        return
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        constant = str(not value.value)
    else:
        constant = "None"
    start, end = at.span(value)
    yield at.edit("wrong_return", path, value.lineno, start, end, constant)


def _swapped_arguments(node: ast.Call, at: _Offsets, path: str) -> Iterator[Mutation]:
    first, second = node.args[0], node.args[1]
    if isinstance(first, ast.Starred) or isinstance(second, ast.Starred):
        return
    (a0, a1), (b0, b1) = at.span(first), at.span(second)
    left, middle, right = at.text[a0:a1], at.text[a1:b0], at.text[b0:b1]
    if left == right:
        return
    swapped = (right + middle + left).decode("utf-8")
    yield at.edit("swapped_arguments", path, first.lineno, a0, b1, swapped)
