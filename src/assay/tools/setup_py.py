"""What a setup.py says in its `setup(...)` call, read with `ast` and never run: a
repository's setup.py is its code, and running it on the host would run that code."""

from __future__ import annotations

import ast

#: A `test_suite` as setuptools takes it: a dotted module or package name.
_DOTTED = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


def setup_keyword(text: str, keyword: str) -> object:
    """The literal value of `keyword` in the `setup(...)` call of the setup.py `text`;
    None when there is none, or it is no literal (a variable, a call)."""
    if keyword not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name != "setup":
            continue
        for argument in node.keywords:
            if argument.arg == keyword:
                try:
                    return ast.literal_eval(argument.value)
                except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                    return None
    return None


def test_suite(text: str) -> str | None:
    """setup.py's `test_suite` (`humanfriendly.tests`), a dotted name, or None."""
    value = setup_keyword(text, "test_suite")
    if not isinstance(value, str) or not value or not set(value) <= _DOTTED:
        return None
    if value.startswith(".") or ".." in value or value.endswith("."):
        return None
    return value


def setup_test_argv(text: str) -> tuple[str, ...] | None:
    """What setup.py's own `test` command runs under the interpreter running setup.py: the
    literal arguments after `sys.executable` in its `run` method. simplejson registers
    `cmdclass = dict(test=TestCommand)`, whose `run` calls `subprocess.call([sys.executable,
    '-Wd', 'simplejson/tests/__init__.py'])`. None when there is no such command."""
    if "test" not in text or "executable" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names = _test_command_classes(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in names:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "run":
                    found = _executable_argv(item)
                    if found is not None:
                        return found
    return None


def _test_command_classes(tree: ast.AST) -> set[str]:
    """The classes a `cmdclass` mapping registers as `test`: `dict(test=X)`, `{"test": X}`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict":
            names.update(
                k.value.id
                for k in node.keywords
                if k.arg == "test" and isinstance(k.value, ast.Name)
            )
        elif isinstance(node, ast.Dict):
            names.update(
                value.id
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == "test"
                if isinstance(value, ast.Name)
            )
    return names


def _executable_argv(function: ast.FunctionDef) -> tuple[str, ...] | None:
    """The string literals after `sys.executable` in a list or tuple of `function`."""
    for node in ast.walk(function):
        if not isinstance(node, ast.List | ast.Tuple) or not node.elts:
            continue
        first, *rest = node.elts
        if not (
            isinstance(first, ast.Attribute)
            and first.attr == "executable"
            and getattr(first.value, "id", None) == "sys"
        ):
            continue
        words = [e.value for e in rest if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if rest and len(words) == len(rest):
            return tuple(words)
    return None
