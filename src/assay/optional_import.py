"""A test module that could not be collected on a NameError for a name it imports only
where an optional module is installed.

mccabe 0.7.0's test_mccabe.py imports `settings` from hypothesis inside `try:` ... `except
ImportError:`, then decorates a test with `@settings(...)` unguarded: without hypothesmith,
collection stops at `NameError: name 'settings' is not defined`, which reads as a bug in the
code. The note says where the name was to come from, so the reader knows a module is
missing. The verdict stays what it was: nothing says the module is declared.

The test file is read as untrusted (no links, bounded) and parsed, never run.
"""

from __future__ import annotations

import ast
import re

from assay.untrusted_files import read_untrusted

__all__ = ["with_optional_import"]

#: A collection failure's NameError (the name captured).
_NAME_ERROR = re.compile(r"NameError: name '([A-Za-z_]\w*)' is not defined$")
#: The largest test module read.
_MAX_BYTES = 1 << 20
#: What a handler catches when an import may fail.
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})


def with_optional_import(message: str, cwd: str | None, module_path: str) -> str:
    """`message` (a collection failure's) with, after a NameError for a name the test module
    at `module_path` under `cwd` imports only inside a `try` that catches ImportError, the
    modules that `try` imports; else `message` unchanged."""
    match = _NAME_ERROR.search(message)
    if match is None or not cwd:
        return message
    data = read_untrusted(cwd, module_path, limit=_MAX_BYTES)
    if not isinstance(data, bytes):
        return message
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # deeper than the parser goes
        return message
    modules = _guarding_imports(tree, match.group(1))
    if not modules:
        return message
    return (
        f"{message} (`{match.group(1)}` comes from an import of {', '.join(modules)} in a "
        "`try` that catches ImportError: one of them could not be imported, most likely "
        "not installed)"
    )


def _guarding_imports(tree: ast.Module, name: str) -> list[str]:
    """The modules the top-level `try` imports from where it binds `name`, when it catches
    ImportError and neither its handlers nor any other top-level statement bind `name`."""
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Try) and name in _imported_names(node.body):
            if not any(_catches_import_error(h) for h in node.handlers):
                return []
            if any(name in _bound_names(h.body) for h in node.handlers):
                return []
            found = _imported_modules(node.body)
        elif name in _bound_names([node]):
            return []
    return found


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return caught is None or any(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names)


def _imported_names(body: list[ast.stmt]) -> set[str]:
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def _imported_modules(body: list[ast.stmt]) -> list[str]:
    modules: list[str] = []
    for node in body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    return list(dict.fromkeys(modules))


def _bound_names(body: list[ast.stmt]) -> set[str]:
    """The names `body`'s statements bind at its own level (assignments, definitions,
    imports)."""
    bound = _imported_names(body)
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        bound.update(t.id for t in targets if isinstance(t, ast.Name))
    return bound
