"""The `__init__.py` files a runner imports a base's test modules through: protected under
`--protect` as the tests are.

pytest and unittest import a test module in a directory with an `__init__.py` as a member
of that package, and so run the package's `__init__.py` first, and its parent's, as far up
as each directory has one. In a directory of tests whose names alone protect them
(`testing/test_calc.py`, outside any `tests/`), an `__init__.py` the change added ran
before the tests (`calc.add = ...`: a wrong sum passed).

So, climbing from each directory that holds a base's protected Python files: a directory
without an `__init__.py` in the base has its `__init__.py` protected (one the change adds
is removed) and the climb ends there; one with an `__init__.py` has it protected, and the
climb goes on, while the directory is the tests' (it holds test files of its own, or its
name says tests: `testing/`). A directory that holds code of the project's
(`src/calc/` with `test_calc.py` beside `calc.py`), or a package of tests inside the code
(`pkg/__init__.py` above `pkg/tests/`), is the code's: its `__init__.py` is code a change
may edit, and the climb stops there.
"""

from __future__ import annotations

import posixpath
from pathlib import Path

from assay.filetree import walk_files
from assay.protect import ProtectedSet

__all__ = ["inits_above_tests"]

_INIT = "__init__.py"


def inits_above_tests(root: Path, protected: ProtectedSet) -> tuple[str, ...]:
    """The `__init__.py` paths of the tree at `root` (the base) a runner may run before
    the test modules `protected` matches, and that `protected` does not cover yet."""
    python = [rel for rel in walk_files(root) if rel.endswith(".py")]
    tests: set[str] = set()
    code: set[str] = set()
    for rel in python:
        if posixpath.basename(rel) != _INIT:
            (tests if protected.matches(rel) else code).add(posixpath.dirname(rel))
    present = set(python)
    found: dict[str, None] = {}
    for directory in sorted(tests):
        while directory not in code:
            init = posixpath.join(directory, _INIT) if directory else _INIT
            if init in present and directory not in tests and not _named_for_tests(directory):
                break  # a package of the code's with tests below it (`pkg/__init__.py`)
            if init in found:
                break
            if not protected.matches(init):
                found[init] = None
            if init not in present or not directory:
                break  # the chain of packages ends here: pytest climbs no further
            directory = posixpath.dirname(directory)
    return tuple(found)


def _named_for_tests(directory: str) -> bool:
    """`testing`, `unit_tests`, `test`: a directory whose name says it holds tests."""
    name = posixpath.basename(directory).lower()
    return name.startswith("test") or name.endswith(("tests", "_test"))
