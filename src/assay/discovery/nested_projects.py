"""Other projects' trees nested in a Python project, whose files its ruff never lints.

tomlkit 0.13.2 keeps toml-test, a Go project's test suite, as a git submodule at
`tests/toml-test`, and its sdist carries the submodule's files, `gen-multi.py` among them.
tomlkit's ruff runs through pre-commit, which hands it the files tomlkit's own repository
tracks: a submodule's files are another repository's. The `ruff check .` assay composes
walked into them (I001 on `gen-multi.py`), and the pristine release was FAILED.

A directory below the root is another project's when `.gitmodules` names it, when it holds
a `.git` of its own (a submodule's checkout holds a `.git` file), or, as an sdist keeps
neither, when it holds both a license file and the manifest of a project in another
language (`go.mod`, `Cargo.toml`, `package.json`): vendored code brings its own license. A
nested Python project is a monorepo's member, linted by its maintainers' ruff, and stays in.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from assay.discovery.files import RepoFiles
from assay.discovery.ruff_config_files import RUFF_SKIPPED_DIRS, SEARCH_DEPTH, SEARCH_MAX_DIRS
from assay.missing_submodule import submodule_paths

__all__ = ["nested_projects"]

#: The manifests of projects in other languages than Python.
FOREIGN_MANIFESTS = frozenset({"go.mod", "Cargo.toml", "package.json"})

#: LICENSE, LICENCE.txt, LICENSE-MIT, COPYING, COPYING.md...
_LICENSE = re.compile(r"(?:licen[cs]e|copying)(?:[-._][\w.-]*)?", re.IGNORECASE)


def nested_projects(files: RepoFiles, skip: Iterable[str] = ()) -> tuple[str, ...]:
    """The directories below the root that hold another project's tree (paths from the
    root, outermost first), outside `skip` (the project's virtualenvs) and what ruff never
    walks."""
    skipped = set(skip)
    found = [p for p in submodule_paths(files.root) if p != "." and files.is_dir(p)]
    clones: list[str] = []

    def enters(name: str, path: str) -> bool:
        if name == ".git":
            clones.append(posixpath.dirname(path))  # a clone's own .git directory
        return not name.startswith(".") and name not in RUFF_SKIPPED_DIRS and path not in skipped

    markers = files.breadth_first(
        lambda name: name == ".git" or name in FOREIGN_MANIFESTS,
        enters,
        depth=SEARCH_DEPTH,
        max_dirs=SEARCH_MAX_DIRS,
    )
    for marker in markers:
        directory = posixpath.dirname(marker)
        if not directory:
            continue  # the project's own root
        if marker.endswith("/.git") or _holds_license(files, directory):
            found.append(directory)
    nested = sorted({d for d in [*found, *clones] if d}, key=lambda d: (d.count("/"), d))
    return tuple(d for i, d in enumerate(nested) if not any(_within(d, o) for o in nested[:i]))


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory + "/")


def _holds_license(files: RepoFiles, directory: str) -> bool:
    return any(
        kind == "file" and _LICENSE.fullmatch(name) for name, kind in files.list_kinds(directory)
    )
