"""Tests that cannot import the project's own package: a missing set-up step, not a failure.

A src-layout project (`src/<name>/`) is importable only once it is installed (`pip install
-e .`, or `assay verify --install`). Where it is not, every test module fails to collect
with `ModuleNotFoundError: No module named '<name>'`, which says nothing of the code: the
check could not be made (`toolchain_missing`, UNVERIFIED), as when pytest itself is missing.

Only the project's own package, present under `src/`, counts. A module missing from the
tree (one a change deleted or misspelled) stays a failure: a change can cause that, and no
set-up step would mend it.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable

__all__ = ["uninstalled_own_package"]

#: Python's message for an import that found no module (the top-level name captured).
_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z_]\w*)")


def uninstalled_own_package(output: str, cwd: str) -> str | None:
    """The name of the project's own src-layout package when every module `output` says
    could not be found is one under `cwd/src`, else None."""
    names = sorted(set(_NOT_FOUND.findall(output)))
    if not names or not all(_in_src(cwd, name) for name in names):
        return None
    return names[0]


def _in_src(cwd: str, name: str) -> bool:
    """`cwd/src/name/` or `cwd/src/name.py` is there, reached through no link (the tree is
    the repository's: a link could point anywhere)."""
    src = os.path.join(cwd, "src")
    if not _is(src, stat.S_ISDIR):
        return False
    return _is(os.path.join(src, name), stat.S_ISDIR) or _is(
        os.path.join(src, f"{name}.py"), stat.S_ISREG
    )


def _is(path: str, kind: Callable[[int], bool]) -> bool:
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return kind(mode)
