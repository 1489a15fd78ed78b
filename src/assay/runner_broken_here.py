"""A test runner that crashed in its own installed code before any test ran.

nose 1.3.7, the last release, cannot start on Python 3.10 or later: it dies in
`nose/suite.py` (`collections.Callable` is gone) before it imports a test. jmespath's
tox.ini runs `nosetests`; its pristine tree was FAILED at
`.venv/lib/python3.11/site-packages/nose/suite.py:106`, a line of nobody's code under
verification. Such a crash says the runner cannot run here, not that the code fails: the
check could not be made (UNVERIFIED, naming where the runner broke).

The failure stands when any frame of the traceback lies in the tree's own files (outside
its environments: a conftest, a test module, the package), and when the package that
crashed is one the tree holds (the project itself, installed without `-e`).
"""

from __future__ import annotations

import os
import re

from assay.evidence import INSTALLED_DIRS
from assay.source_layout import ENV_DIRS

__all__ = ["runner_broken_here"]

#: A frame of a Python traceback: `  File "/x/site-packages/nose/suite.py", line 106, in f`.
_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.MULTILINE)
#: The exception a traceback ends with: `AttributeError: module 'collections' has no ...`.
_RAISED = re.compile(
    r"^(?P<error>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.+)$", re.MULTILINE
)


def runner_broken_here(output: str, cwd: str) -> str | None:
    """Where the runner broke (`nose/suite.py:106: AttributeError: ...`) when every frame
    of the Python tracebacks in `output` lies outside the tree's own files and the
    innermost installed one is in a package the tree at `cwd` does not hold; else None."""
    innermost: tuple[list[str], str] | None = None
    for match in _FRAME.finditer(output):
        path = match["path"]
        parts = path.split("/")
        if INSTALLED_DIRS.isdisjoint(parts):
            if _tree_code(path, cwd):
                return None
            continue  # the standard library, a console script in an environment's bin/
        below = parts[max(i for i, part in enumerate(parts) if part in INSTALLED_DIRS) + 1 :]
        innermost = (below, match["line"])
    if innermost is None:
        return None
    below, line = innermost
    if not below or _held_by_tree(below[0], cwd):
        return None
    raised = list(_RAISED.finditer(output))
    error = f": {raised[-1]['error']}: {raised[-1]['message'].strip()}" if raised else ""
    return f"{'/'.join(below)}:{line}{error}"


def _tree_code(path: str, cwd: str) -> bool:
    """Whether `path` is a file of the tree at `cwd` outside its environments."""
    relative = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    first = relative.split("/", 1)[0]
    return first != ".." and first not in ENV_DIRS


def _held_by_tree(package: str, cwd: str) -> bool:
    """Whether the tree holds the top-level module `package` (`x` or `x.py`, at its root
    or in `src/`): the project's own code, installed. A link counts by its own name, never
    followed (it could lead anywhere), and keeps the failure standing."""
    name = package.removesuffix(".py")
    return any(
        os.path.lexists(os.path.join(cwd, where, candidate))
        for where in ("", "src")
        for candidate in (name, f"{name}.py")
    )
