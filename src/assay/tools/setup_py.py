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
