"""A test run that failed only for want of a git submodule the checkout does not hold.

Parser libraries keep their shared test data in another repository, checked out as a git
submodule (tinycss2's `tests/css-parsing-tests`, html5lib's `html5lib-tests`); a clone made
without `--recurse-submodules` holds an empty directory in its place, and the tests stop
on a file they cannot open. That says nothing of the code: a set-up step is missing.

The rule is narrow. The `.gitmodules` where the tests run (the workspace's root, for a
check run there; nothing above it is read) names the submodule, its directory is empty or
absent, and every file the output says could not be found lies inside such a directory;
with a test report, every failing test says so.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Iterable

from assay.untrusted_files import read_untrusted

__all__ = ["missing_submodule", "submodule_paths"]

#: A file that could not be opened, as Python (`No such file or directory: '/x'`), node
#: (`ENOENT: no such file or directory, open '/x'`) and Go (`open x: no such file or
#: directory`) say it.
_NOT_FOUND = re.compile(
    r"No such file or directory:? '(?P<python>[^'\n]+)'"
    r"|ENOENT: no such file or directory, \w+ '(?P<node>[^'\n]+)'"
    r"|\bopen (?P<go>\S+): no such file or directory"
)
#: Largest `.gitmodules` read.
MAX_GITMODULES_BYTES = 256 * 1024


def missing_submodule(outputs: Iterable[str], cwd: str) -> str | None:
    """The submodule (its path in the repository) whose absence explains every file the
    `outputs` (one per failure) could not find, when each names one; else None."""
    submodules = submodule_paths(cwd)
    absent = [p for p in submodules if _not_checked_out(cwd, p)]
    if not absent:
        return None
    found: set[str] = set()
    for output in outputs:
        named = [
            _within(cwd, m.group(m.lastgroup or ""), submodules)
            for m in _NOT_FOUND.finditer(output)
        ]
        if not named or None in named:
            return None  # a failure that is not (only) a missing file of a submodule
        found.update(p for p in named if p is not None)
    if not found <= set(absent):
        return None  # a file missing from a submodule that is there: the code's failure
    return next((p for p in absent if p in found), None)


def _within(root: str, missing: str, submodules: list[str]) -> str | None:
    """The submodule (of `submodules`, paths from `root`) `missing` lies in, or None."""
    rel = os.path.relpath(os.path.normpath(os.path.join(root, missing)), root)
    return next((s for s in submodules if rel == s or rel.startswith(s + "/")), None)


def submodule_paths(root: str) -> list[str]:
    """The paths `.gitmodules` at `root` names, each inside the tree (normalised)."""
    data = read_untrusted(root, ".gitmodules", limit=MAX_GITMODULES_BYTES)
    if not isinstance(data, bytes):
        return []
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(data.decode("utf-8", "replace"))
    except configparser.Error:
        return []
    paths = []
    for section in parser.sections():
        path = parser.get(section, "path", fallback="").strip().strip("/")
        if path and not path.startswith(os.pardir) and not os.path.isabs(path):
            paths.append(os.path.normpath(path))
    return paths


def _not_checked_out(root: str, path: str) -> bool:
    """An empty directory, or none, where the submodule belongs (reached through no link)."""
    where = os.path.join(root, path)
    if os.path.islink(where):
        return False
    try:
        return not os.listdir(where)
    except FileNotFoundError:
        return True
    except OSError:
        return False
