"""Tests that cannot import the project's own package, or that import an installed copy of
it: a missing set-up step, not a failure, and never a pass.

A src-layout project (`src/<name>/`) is importable only once it is installed (`pip install
-e .`, or `assay verify --install`). Where it is not, every test module fails to collect
with `ModuleNotFoundError: No module named '<name>'`, which says nothing of the code: the
check could not be made (`toolchain_missing`, UNVERIFIED), as when pytest itself is missing.

Only the project's own package, present under `src/`, counts. A module missing from the
tree (one a change deleted or misspelled) stays a failure: a change can cause that, and no
set-up step would mend it.

Where a copy of the package is installed in the environment the tests run in (iniconfig,
which pytest itself depends on), `import <name>` finds that copy instead, and the tests
pass or fail on code that is not the tree's: whatever the change did to `src/`, they
test the installed release. `installed_copies` reads where a test session imported each
top-level module from (`assay.tools.python.IMPORTED_SUFFIX`); the project's own package
from an installed location (`site-packages`, `dist-packages`) means the tree went untested.
Where no session ended to record that (a conftest whose import failed stops pytest before
one: packaging's tree over an older packaging installed, exit 4), Python's own message for a
name the copy lacks names the file it loaded (`installed_copies_named`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable

__all__ = [
    "installed_copies",
    "installed_copies_named",
    "uninstalled_own_distribution",
    "uninstalled_own_package",
]

#: Python's message for an import that found no module (the top-level name captured).
_NOT_FOUND = re.compile(r"ModuleNotFoundError: No module named '([A-Za-z_]\w*)")


def uninstalled_own_package(output: str, cwd: str) -> str | None:
    """The name of the project's own src-layout package when every module `output` says
    could not be found is one under `cwd/src`, else None."""
    names = sorted(set(_NOT_FOUND.findall(output)))
    if not names or not all(_in_src(cwd, name) for name in names):
        return None
    return names[0]


#: Where installers put packages: a module imported from inside one is an installed copy.
_INSTALLED_PLACES = frozenset({"site-packages", "dist-packages"})


def installed_copies(imported: str, cwd: str) -> list[tuple[str, str]]:
    """The project's own src-layout packages among `imported` (lines of `name<TAB>file`,
    as a test session recorded them) that came from an installed copy, each with its file."""
    found = []
    for line in imported.splitlines():
        name, _, file = line.partition("\t")
        if name.isidentifier() and _INSTALLED_PLACES & set(file.split("/")) and _in_src(cwd, name):
            found.append((name, file))
    return found


#: Python's message for a name a module lacks, with the file that module was loaded from.
_CANNOT_IMPORT = re.compile(r"cannot import name '\w+' from '([A-Za-z_]\w*)[\w.]*' \(([^()\n]+)\)")


def installed_copies_named(output: str, cwd: str) -> list[tuple[str, str]]:
    """The project's own src-layout packages that `output`'s import errors say were loaded
    from an installed copy, each with its file, as `installed_copies` has them."""
    named = "\n".join(f"{name}\t{file}" for name, file in _CANNOT_IMPORT.findall(output))
    return installed_copies(named, cwd)


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


#: importlib.metadata's (and its backport's) word that a distribution is not installed, and
#: pkg_resources' older one.
_NO_METADATA = re.compile(
    r"PackageNotFoundError: (?:No package metadata was found for )?(?P<name>[A-Za-z0-9][\w.-]*)"
    r"|DistributionNotFound: The '(?P<old>[A-Za-z0-9][\w.-]*)[^']*' distribution was not found"
)


def uninstalled_own_distribution(failures: Iterable[str], cwd: str) -> str | None:
    """The project's own distribution name when every one of `failures` (the messages of the
    tests that failed) is importlib.metadata's `PackageNotFoundError` for it: the tree is
    importable as it lies (a flat layout), but not installed, so its metadata is nowhere
    (toolz's `test_has_version` reads `importlib.metadata.version("toolz")`). A missing
    set-up step, as an uninstalled src layout is; None for anything else, or no failure."""
    own = _declared_name(cwd)
    if own is None:
        return None
    failures = list(failures)
    if not failures:
        return None
    for message in failures:
        found = _NO_METADATA.search(message or "")
        if found is None or _normalized(found["name"] or found["old"]) != own:
            return None
    return own


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared_name(cwd: str) -> str | None:
    """The distribution name pyproject.toml's `[project]` or setup.cfg's `[metadata]` gives,
    read as discovery reads the tree's files: confined to it and bounded (a link to a host
    file, or to /dev/zero, is no name)."""
    # Only here: `assay run` loads this module and must stay light.
    import tomllib

    from assay.discovery.files import RepoFiles, UnreadableFile
    from assay.discovery.text import load_ini

    files = RepoFiles(cwd)
    try:
        pyproject = files.read_text("pyproject.toml")
        if pyproject:
            try:
                name = tomllib.loads(pyproject).get("project", {}).get("name")
            except (tomllib.TOMLDecodeError, AttributeError, RecursionError):
                name = None
            if isinstance(name, str) and name:
                return _normalized(name)
        setup_cfg = files.read_text("setup.cfg")
    except UnreadableFile:
        return None
    if not setup_cfg:
        return None
    parser, error = load_ini(setup_cfg, "setup.cfg")
    name = None if error else parser.get("metadata", "name", fallback=None)
    return _normalized(name) if name else None
