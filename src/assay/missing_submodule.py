"""A test run that failed only for want of a git submodule the checkout does not hold.

Parser libraries keep their shared test data in another repository, checked out as a git
submodule (tinycss2's `tests/css-parsing-tests`, html5lib's `html5lib-tests`); a clone made
without `--recurse-submodules` holds an empty directory in its place, and the tests stop
on a file they cannot open. That says nothing of the code: a set-up step is missing.

The rule is narrow. The workspace's `.gitmodules` names the submodule, its directory is
empty or absent, and every file the output says could not be found lies inside such a
directory; with a test report, every failing test says so.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Iterable

from assay.untrusted_files import read_untrusted

__all__ = ["missing_submodule"]

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
    root = _repository_root(cwd)
    if root is None:
        return None
    absent = [p for p in _submodule_paths(root) if _not_checked_out(root, p)]
    if not absent:
        return None
    found: set[str] = set()
    for output in outputs:
        named = [
            _within(root, cwd, m.group(m.lastgroup or "")) for m in _NOT_FOUND.finditer(output)
        ]
        if not named or None in named:
            return None  # a failure that is not (only) a missing file of a submodule
        found.update(p for p in named if p is not None)
    hits = [p for p in absent if p in found]
    return hits[0] if hits and found <= set(absent) else None


def _within(root: str, cwd: str, missing: str) -> str | None:
    """The submodule path `missing` lies in, or None."""
    path = os.path.normpath(os.path.join(cwd, missing))
    rel = os.path.relpath(path, root)
    if rel.startswith(os.pardir):
        return None
    for submodule in _submodule_paths(root):
        if rel == submodule or rel.startswith(submodule + "/"):
            return submodule
    return None


def _repository_root(cwd: str) -> str | None:
    """The nearest directory at or above `cwd` with a `.gitmodules` (at most 20 up)."""
    here = os.path.abspath(cwd)
    for _ in range(20):
        if os.path.isfile(os.path.join(here, ".gitmodules")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def _submodule_paths(root: str) -> list[str]:
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
