"""The configuration files a composed `ruff check .` leaves unlinted.

platformdirs 4.11.3 runs ruff only through pre-commit, whose hook (`types_or: [python, pyi,
jupyter]`) hands ruff Python files alone. ruff walking a directory also lints the
configuration files of its default `include` (`**/pyproject.toml`, and from ruff 0.16
`**/ruff.toml` and `**/.ruff.toml`): with platformdirs' `select = ["ALL"]` and preview,
ruff 0.16.3 reports `rule-codes-in-selectors` (RUF201) on its pyproject.toml, as any ruff
reports `invalid-pyproject-toml` (RUF200) there, findings its maintainers never see. So
the `ruff check .` assay composes from a ruff configuration is told to leave them out of
its walk; a command the project states itself (`ruff check .` in tox or CI) runs as
stated, and its maintainers do see what it finds there.

Each file found is left out by its path, never by its name: ruff applies a name to
directories too, so `--extend-exclude=ruff.toml` would skip every Python file of a
directory called `ruff.toml`. A pattern with a `/` matches that one path from the working
directory (ruff 0.1 to 0.17), and ruff still reads its settings from an excluded file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from assay.discovery.files import RepoFiles

__all__ = ["CONFIG_NAMES", "config_files", "exclusion_patterns"]

#: The files ruff both reads its settings from and lints when its walk reaches them.
CONFIG_NAMES = frozenset({"pyproject.toml", "ruff.toml", ".ruff.toml"})

#: Directories ruff's default `exclude` leaves out (and any whose name starts with a dot):
#: a configuration file in them is never linted, so the search does not enter them.
RUFF_SKIPPED_DIRS = frozenset(
    {"__pypackages__", "_build", "buck-out", "build", "dist", "node_modules", "site-packages"}
)

#: How deep and how wide the search goes: a hostile tree must not turn planning into a
#: crawl, and a file it does not reach is only linted, as ruff would lint it anyway.
SEARCH_DEPTH = 8
SEARCH_MAX_DIRS = 2_000

#: A path ruff reads as itself, not as a glob (`*`, `?`, `[`, `{`), as two patterns (a
#: comma splits the option's value) or as an option (a leading `-`).
_LITERAL_PATH = re.compile(r"[\w.][\w.-]*(?:/[\w.][\w.-]*)*")


def config_files(files: RepoFiles, skip: Iterable[str] = ()) -> tuple[str, ...]:
    """The paths of the ruff configuration files in the tree (regular files, breadth
    first), outside `skip` (the project's virtualenvs) and what ruff never walks."""
    skipped = set(skip)
    found: list[str] = []
    level = ["."]
    visited = 0
    for _ in range(SEARCH_DEPTH):
        below: list[str] = []
        for directory in level:
            visited += 1
            if visited > SEARCH_MAX_DIRS:
                return tuple(found)
            for name, kind in files.list_kinds(directory):
                path = name if directory == "." else f"{directory}/{name}"
                if kind == "file" and name in CONFIG_NAMES:
                    found.append(path)
                elif kind == "dir" and not _never_walked(name) and path not in skipped:
                    below.append(path)
        level = below
    return tuple(found)


def _never_walked(name: str) -> bool:
    return name.startswith(".") or name in RUFF_SKIPPED_DIRS


def exclusion_patterns(paths: Iterable[str]) -> tuple[str, ...]:
    """`--extend-exclude` patterns that each name one of `paths` (relative to the working
    directory) and nothing else: a file at the top gets a `./` so that ruff does not take
    it for a name; a path ruff would read as a glob is left out (and stays linted)."""
    return tuple(
        path if "/" in path else f"./{path}" for path in paths if _LITERAL_PATH.fullmatch(path)
    )
