"""Which directory to verify when `assay verify` is started inside a project, not at its top.

A directory with a project file of its own is verified as it is (a package of a monorepo
is a project). From any other directory, the nearest directory above it that has one is
the project, up to the top of the git repository it is in; with none, that top itself.
Only names are looked at on the way up: no file is read, and git is run through
`assay.safe_git`, so nothing the repository configures runs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: Files that make a directory a project assay knows how to check: every root file a
#: detector or an ecosystem's manifest reads (a Maven module inside a larger git
#: repository is its own project, not the repository around it).
PROJECT_FILES = (
    "assay.toml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "tox.ini",
    "noxfile.py",
    "Pipfile",
    "package.json",
    "go.mod",
    "Cargo.toml",
    "pom.xml",
    "build.gradle.kts",
    "build.gradle",
    "settings.gradle.kts",
    "settings.gradle",
    "Makefile",
    "makefile",
    "GNUmakefile",
    "justfile",
    "Justfile",
    ".justfile",
    "CMakeLists.txt",
    "meson.build",
    "configure.ac",
    "configure.in",
)

#: Seconds git may take to name the top of the repository.
GIT_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class RootChoice:
    """The directory to verify, and why it is not the one asked for (empty: it is)."""

    root: Path
    why: str = ""


def project_root(start: Path) -> RootChoice:
    """The project `start` (an absolute, resolved directory) is in (see the module docstring)."""
    if _project_file(start) is not None:
        return RootChoice(start)
    top = _git_toplevel(start) or nearest_git_entry(start)
    here = start
    while here != here.parent and (top is None or here != top):
        here = here.parent
        found = _project_file(here)
        if found is not None:
            return RootChoice(here, f"the nearest directory above with {found}")
    if top is not None and top != start:
        return RootChoice(top, "the top of its git repository")
    return RootChoice(start)


def in_a_project(start: Path) -> bool:
    """Whether `start` (absolute, resolved) is inside anything assay could verify: a
    directory with a project file at or above it, or a git repository."""
    choice = project_root(start)
    if choice.why or _project_file(choice.root) is not None:
        return True
    return _git_toplevel(start) is not None  # its CI files and README may name checks


def _project_file(directory: Path) -> str | None:
    for name in PROJECT_FILES:
        if os.path.lexists(directory / name):
            return name
    return None


def nearest_git_entry(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding a `.git` entry: the top of a
    repository git could not read (a broken HEAD must not make the project around it
    the one verified)."""
    for here in (start, *start.parents):
        if os.path.lexists(here / ".git"):
            return here
    return None


def _git_toplevel(start: Path) -> Path | None:
    from assay.safe_git import GitError, open_repository

    try:
        repo = open_repository(start, timeout=GIT_TIMEOUT_S)
        out = repo.output("rev-parse", "--show-toplevel", limit=64 * 1024)
    except (GitError, OSError):
        return None
    text = out.decode("utf-8", errors="surrogateescape").strip()
    if not text:
        return None
    top = Path(text).resolve()
    return top if start == top or top in start.parents else None


def link_inside_repository(path: Path) -> Path | None:
    """The first symbolic link on the way from the top of `path`'s git repository down to
    `path` (None: there is none, or no repository). Under `--base` the directory's place
    in the repository picks the base's directory it is judged against: a package
    directory the working tree made a link to another package's had that package judged,
    against its own base, for the one named."""
    named = Path(os.path.abspath(path))
    try:
        top = _git_toplevel(named.resolve())
    except (OSError, RuntimeError):
        return None
    if top is None:
        return None
    for here in (named, *named.parents):
        if here.resolve() == top:
            return None  # links above the repository are the user's own layout
        if here.is_symlink():
            return here
    return None


def linked_base_refusal(path: Path) -> str | None:
    """Why `path` cannot be judged against a base (`link_inside_repository`); None: it can."""
    link = link_inside_repository(path)
    if link is None:
        return None
    return (
        f"{path} is reached through {link}, a link inside the repository: under --base the "
        "directory judged must be where the base has it, not a link to another; nothing was "
        "verified"
    )
