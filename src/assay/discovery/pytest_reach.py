"""What a pytest command collects, as far as its command line says: the paths it is given
(else the configuration's `testpaths`, else its directory) and the doctests it adds.

Two test commands a project states are one check only when one reaches everything the
other does: toolz's tox runs a bare `py.test`, its CI `pytest --doctest-modules toolz/`;
planned as one check, the doctests went unrun and a wrong value in one was VERIFIED.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from assay.discovery.files import RepoFiles

#: The words that start pytest (`pytest`, `py.test`, `python -m pytest`).
_RUNNERS = frozenset({"pytest", "py.test"})
#: pytest's options (its own and common plugins') whose value is the next word.
PYTEST_VALUED = frozenset(
    {
        "-k", "-m", "-c", "-p", "-o", "-W", "-n", "-r", "--rootdir", "--ignore",
        "--ignore-glob", "--deselect", "--junitxml", "--junit-xml", "--basetemp",
        "--confcutdir", "--maxfail", "--tb", "--durations", "--cov", "--cov-report",
        "--cov-config", "--timeout", "--log-level", "--dist", "--import-mode",
        "--override-ini", "--capture", "--doctest-glob", "--config-file", "--inifile",
        "--maxprocesses", "--reruns", "--hypothesis-profile", "--randomly-seed",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Reach:
    """Where a pytest command collects, relative to the root ("" is the whole tree)."""

    paths: tuple[str, ...]
    doctest_modules: bool
    doctest_globs: frozenset[str]

    def covers(self, other: Reach) -> bool:
        """Whether every test and doctest `other` collects, this collects too."""
        inside = all(any(_within(path, mine) for mine in self.paths) for path in other.paths)
        if not inside or (other.doctest_modules and not self.doctest_modules):
            return False
        return other.doctest_globs <= self.doctest_globs

    @property
    def collects_doctests(self) -> bool:
        return self.doctest_modules or bool(self.doctest_globs)

    def beyond(self, others: Sequence[Reach]) -> list[str]:
        """The paths of this reach that none of `others` reaches."""
        return [
            path
            for path in self.paths
            if not any(_within(path, theirs) for other in others for theirs in other.paths)
        ]

    @property
    def name(self) -> str:
        """A short name for the check (`doctest-toolz`, `tests-unit`)."""
        parts = ["doctest"] if self.doctest_modules or self.doctest_globs else []
        parts += [p.replace("/", "-") for p in self.paths if p]
        return "-".join(parts) or "root"


def pytest_reach(argv: Sequence[str], cwd: str, files: RepoFiles) -> Reach:
    """The reach of the pytest command `argv`, run in `cwd` of the tree `files` reads. A
    word that names nothing in the tree is taken for an option's value, not a path."""
    words = list(argv)
    at = next((i + 1 for i, w in enumerate(words) if posixpath.basename(w) in _RUNNERS), 0)
    paths: list[str] = []
    globs: set[str] = set()
    doctest_modules = False
    valued: str | None = None  # the option whose value the next word is
    for word in words[at:]:
        option, equals, value = word.partition("=")
        if valued is not None:
            if valued == "--doctest-glob":
                globs.add(word)
            valued = None
        elif word == "--doctest-modules":
            doctest_modules = True
        elif option == "--doctest-glob" and equals:
            globs.add(value)
        elif word in PYTEST_VALUED:
            valued = word
        elif not word.startswith("-"):
            path = posixpath.normpath(posixpath.join(cwd, word.partition("::")[0]))
            if path == ".":
                paths.append("")
            elif files.is_dir(path) or files.is_file(path):
                paths.append(path)
    if not paths:
        from assay.discovery.python import pytest_setting

        # pytest reads `testpaths` when run from the root; elsewhere, it collects there.
        configured = pytest_setting(files, "testpaths") if cwd == "." else None
        paths = [posixpath.normpath(p) for p in configured or ()] or [posixpath.normpath(cwd)]
        paths = ["" if p == "." else p for p in paths]
    return Reach(tuple(paths), doctest_modules, frozenset(globs))


def _within(path: str, directory: str) -> bool:
    return not directory or path == directory or path.startswith(directory + "/")


#: The most entries `holds_tests` looks at before it answers that there may be tests.
MAX_ENTRIES = 5_000


def holds_tests(files: RepoFiles, path: str) -> bool:
    """Whether `path` is, or holds, a file pytest collects tests from by default
    (`test_*.py`, `*_test.py`); True past `MAX_ENTRIES`, where it cannot say."""
    pending, seen = [path], 0
    while pending:
        here = pending.pop()
        if files.is_file(here):
            name = posixpath.basename(here)
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True
            continue
        for name in files.list_dir(here or "."):
            seen += 1
            if seen > MAX_ENTRIES:
                return True
            if not name.startswith("."):
                pending.append(posixpath.join(here, name) if here else name)
    return False
