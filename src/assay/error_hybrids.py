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
    for line, name, kinds in _Reader(modules).classes(text, IMPORTS_DEEP):
        unrelated = _most_derived(kinds)
        if len(unrelated) >= 2:
            yield line, (name, tuple(sorted(kind.__name__ for kind in unrelated)))


_Kinds = frozenset[type[BaseException]]
_Classes = tuple[tuple[int, str, _Kinds], ...]
#: A module's class statements (line, name, bases) and `from ... import`s, in walk order.
_Statement = tuple[int, str, list[ast.expr]] | ast.ImportFrom


class _Reader:
    """The classes of the texts one tree's `modules` give, each text parsed once and each
    module's classes found once at each depth: a file naming the same modules hundreds of
    times over, more of them than a bounded cache held, took 8 minutes to read."""

    def __init__(self, modules: Modules | None) -> None:
        self.modules = modules
        self._parsed: dict[str, list[_Statement]] = {}
        self._classes: dict[tuple[str, int], _Classes] = {}
        self._defined: dict[tuple[str, int], dict[str, _Kinds]] = {}

    def classes(self, text: str, deep: int) -> _Classes:
        """(line, name, built-in kinds) of each class `text` defines, in its lines' order."""
        if (text, deep) not in self._classes:
            self._classes[text, deep] = self._read(text, deep)
        return self._classes[text, deep]

    def _read(self, text: str, deep: int) -> _Classes:
        kinds_of: dict[str, _Kinds] = {}
        found: list[tuple[int, str, _Kinds]] = []
        named: list[tuple[int, str, list[ast.expr] | _Kinds]] = []
        for statement in self._statements(text):
            if not isinstance(statement, ast.ImportFrom):
                named.append(statement)
            elif self.modules is not None and deep > 0:
                named += self._imported(statement, self.modules, deep)
        for line, name, bases in sorted(named, key=lambda s: s[0]):
            if isinstance(bases, frozenset):  # a name imported with the kinds it has
                kinds_of[name] = bases
                continue
            kinds = frozenset(k for base in bases for k in _kinds(base, kinds_of))
            kinds_of[name] = kinds
            found.append((line, name, kinds))
        return tuple(found)

    def _statements(self, text: str) -> list[_Statement]:
        if text not in self._parsed:
            try:
                tree: ast.AST | None = ast.parse(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None  # a module Python cannot parse does not import: it defines nothing
            self._parsed[text] = list(_statements(tree)) if tree is not None else []
        return self._parsed[text]

    def _imported(
        self, node: ast.ImportFrom, modules: Modules, deep: int
    ) -> list[tuple[int, str, _Kinds]]:
        """The error classes a `from ... import` binds, with the kinds their module gives."""
        source = modules(node.level, node.module or "")
        if source is None:
            return []
        if (source, deep) not in self._defined:
            classes = self.classes(source, deep - 1)
            self._defined[source, deep] = {name: kinds for _, name, kinds in classes if kinds}
        defined = self._defined[source, deep]
        return [
            (node.lineno, alias.asname or alias.name, defined[alias.name])
            for alias in node.names
            if alias.name in defined
        ]


def _statements(tree: ast.AST) -> Iterator[_Statement]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            yield node
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
