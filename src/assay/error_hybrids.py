"""Errors that are several built-in errors at once: a class a change defines on two or more
built-in exceptions that are not one another's kind (`class Failure(KeyError, ValueError,
TypeError)`).

Such an error satisfies every `pytest.raises` and `assertRaises` of any of them: code that
raises it for every input passes a suite of error tests whatever the input was, as a value
whose `__eq__` says True to anything passes its `assert ==`. An error of two kinds is
ordinary in a library's long-standing code (`io.UnsupportedOperation(OSError, ValueError)`)
but rare in a change, so each one a change adds is a signal, its class statement quoted.

Read from the module's syntax: the bases are resolved through the built-ins, the classes
the same file defines before them (`class A(KeyError)`, then `class F(A, ValueError)`),
and those a `from ... import` names from another module of the tree (`modules` gives its
source), a few imports deep; `type(name, (A, B), ...)` counts as a class statement.
"""

from __future__ import annotations

import ast
import builtins
import functools
from collections import Counter
from collections.abc import Callable, Iterator

#: How many modules deep an imported base is followed.
IMPORTS_DEEP = 3

#: Every built-in exception class, by the name a module reaches it by.
_BUILTIN_ERRORS: dict[str, type[BaseException]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}

WHAT = (
    "defines an error that is several built-in errors at once ({kinds}):"
    " it satisfies each test that expects any of them"
)


#: A module's source by its dotted name, relative to the file read (`("..", "errors")` for
#: `from ..errors import`): None when the tree has no such module.
Modules = Callable[[int, str], str | None]


def added_error_hybrids(
    old: str, new: str, old_modules: Modules | None = None, new_modules: Modules | None = None
) -> list[tuple[int, str]]:
    """Each hybrid error class `new` defines that `old` did not, as (line, kinds), the kinds
    named as the signal says them; each text's imports read through its tree's `modules`."""
    before = Counter(key for _, key in _hybrids(old, old_modules))
    added: list[tuple[int, str]] = []
    for line, key in _hybrids(new, new_modules):
        if before[key] > 0:
            before[key] -= 1  # the base defined this one: not the change's
            continue
        added.append((line, ", ".join(key[1])))
    return added


def _hybrids(
    text: str, modules: Modules | None
) -> Iterator[tuple[int, tuple[str, tuple[str, ...]]]]:
    """(line, (class name, its unrelated built-in kinds)) for each hybrid in `text`."""
    for line, name, kinds in _classes(text, modules, IMPORTS_DEEP):
        unrelated = _most_derived(kinds)
        if len(unrelated) >= 2:
            yield line, (name, tuple(sorted(kind.__name__ for kind in unrelated)))


_Kinds = frozenset[type[BaseException]]


@functools.lru_cache(maxsize=16)  # each module once, however many imports name it
def _classes(text: str, modules: Modules | None, deep: int) -> tuple[tuple[int, str, _Kinds], ...]:
    """(line, name, built-in kinds) of each class `text` defines, in the order of its lines."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()  # a module Python cannot parse does not import: it defines nothing
    kinds_of: dict[str, _Kinds] = {}
    found: list[tuple[int, str, _Kinds]] = []
    for line, name, bases in sorted(_statements(tree, modules, deep), key=lambda s: s[0]):
        if isinstance(bases, frozenset):  # a name imported with the kinds it has
            kinds_of[name] = bases
            continue
        kinds = frozenset(k for base in bases for k in _kinds(base, kinds_of))
        kinds_of[name] = kinds
        found.append((line, name, kinds))
    return tuple(found)


def _statements(
    tree: ast.AST, modules: Modules | None, deep: int
) -> Iterator[tuple[int, str, list[ast.expr] | _Kinds]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and modules is not None and deep > 0:
            yield from _imported(node, modules, deep)
        elif isinstance(node, ast.ClassDef):
            yield node.lineno, node.name, node.bases
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) == 3
            and isinstance(node.args[1], ast.Tuple | ast.List)
        ):
            name = node.args[0].value if isinstance(node.args[0], ast.Constant) else ""
            yield node.lineno, str(name), list(node.args[1].elts)


def _kinds(
    base: ast.expr, kinds_of: dict[str, frozenset[type[BaseException]]]
) -> frozenset[type[BaseException]]:
    """The built-in errors `base` is of: itself, or those of a class the file defined."""
    if isinstance(base, ast.Name):
        if base.id in kinds_of:
            return kinds_of[base.id]
        name = base.id
    elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
        name = base.attr if base.value.id in ("builtins", "__builtins__") else ""
    else:
        return frozenset()
    found = _BUILTIN_ERRORS.get(name)
    return frozenset({found}) if found is not None else frozenset()


def _most_derived(kinds: frozenset[type[BaseException]]) -> list[type[BaseException]]:
    """The kinds no other of them derives from: `KeyError` and `LookupError` are one kind."""
    return [k for k in kinds if not any(o is not k and issubclass(o, k) for o in kinds)]


def _imported(
    node: ast.ImportFrom, modules: Modules, deep: int
) -> Iterator[tuple[int, str, _Kinds]]:
    """The error classes a `from ... import` binds, with the kinds their module gives them."""
    source = modules(node.level, node.module or "")
    if source is None:
        return
    defined = {name: kinds for _, name, kinds in _classes(source, modules, deep - 1) if kinds}
    for alias in node.names:
        if alias.name in defined:
            yield node.lineno, alias.asname or alias.name, defined[alias.name]
