"""The data files a base's tests name: protected under `--protect` as the tests are.

A test that reads its cases from a file (`json.load(open("data/add_cases.json"))`) is as
weak as that file: a change that writes the wrong code's answer into it passes. Test data
by its usual directory names (`fixtures/`, `testdata/`, `__snapshots__/`) is protected by
pattern (`assay.protect`); the rest is found here, in the base's own test files, as the
string literals that name a file of the base's tree (relative to the root or to the test
file's directory), or a directory of it that holds data alone, whose files the tests may
find by a pattern (`(here / "cases").glob("*.json")`).

Only data is taken: a file of a language assay reads as code (the code under test, which
a test may name) or a manifest (the dependencies a change may add to) stays the change's.
What is read is bounded: test files of at most `FILE_MAX_BYTES`, `MAX_BYTES` in all, and
at most `MAX_FILES` files named.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from pathlib import Path

from assay.code_signals import language_of
from assay.dependency_swaps import is_manifest
from assay.filetree import walk_files
from assay.protect import ProtectedSet
from assay.untrusted_files import read_untrusted

__all__ = ["named_test_data"]

FILE_MAX_BYTES = 1024 * 1024
MAX_BYTES = 32 * 1024 * 1024
MAX_FILES = 500
#: A bare file name stands for the files of that name only when they are this few.
_MAX_SAME_NAME = 3

#: A quoted relative path to a file with a suffix (`"data/add_cases.json"`, `'cases.csv'`).
_QUOTED_PATH = re.compile(r"""["']((?:\.{1,2}/)?[\w][\w.+-]*(?:/[\w.+-]+)*\.\w{1,10})["']""")
#: A quoted relative path without a suffix, that may name a directory (`"cases"`).
_QUOTED_DIRECTORY = re.compile(r"""["']((?:\.{1,2}/)?[\w][\w+-]*(?:/[\w.+-]+)*)/?["']""")


def named_test_data(root: Path, protected: ProtectedSet) -> tuple[str, ...]:
    """The data files of the tree at `root` that its test files (those `protected`
    matches, in a language assay reads) name, and that `protected` does not cover yet."""
    files = set(walk_files(root))
    by_name: dict[str, list[str]] = {}
    for rel in files:
        by_name.setdefault(posixpath.basename(rel), []).append(rel)
    data_dirs = _data_directories(files)
    for directory in data_dirs:
        by_name.setdefault(posixpath.basename(directory), []).append(directory)
    found: dict[str, None] = {}
    budget = MAX_BYTES
    for rel in sorted(files):
        if budget <= 0 or len(found) >= MAX_FILES:
            break
        if not protected.matches(rel) or language_of(rel) is None:
            continue
        data = read_untrusted(root, rel, limit=FILE_MAX_BYTES)
        if not isinstance(data, bytes):
            continue
        budget -= len(data)
        text = data.decode("utf-8", errors="replace")
        quoted = [*_QUOTED_PATH.findall(text), *_QUOTED_DIRECTORY.findall(text)]
        for named in _named_files(rel, quoted, files | data_dirs.keys(), by_name):
            for file in data_dirs.get(named, (named,)):
                if not protected.matches(file) and _is_data(file):
                    found.setdefault(file)
    return tuple(list(found)[:MAX_FILES])


def _named_files(
    test: str, quoted: Iterable[str], files: set[str], by_name: dict[str, list[str]]
) -> Iterable[str]:
    """Each quoted path that is a file of the tree, from the root or from `test`'s
    directory; a bare file name, wherever files of that name are (a path joined from
    pieces: `Path(__file__).parent / "data" / "cases.json"`), unless they are many."""
    here = posixpath.dirname(test)
    for path in quoted:
        for candidate in (path, posixpath.join(here, path)):
            rel = posixpath.normpath(candidate)
            if rel in files and not rel.startswith("../"):
                yield rel
                break
        else:
            if "/" not in path and len(by_name.get(path, ())) <= _MAX_SAME_NAME:
                yield from by_name.get(path, ())


def _data_directories(files: set[str]) -> dict[str, list[str]]:
    """Each directory of the tree (but the root) with the files below it, where all of
    them are data (a directory that holds code is the code's, which a change may edit)."""
    below: dict[str, list[str]] = {}
    for rel in files:
        parent = posixpath.dirname(rel)
        while parent:
            below.setdefault(parent, []).append(rel)
            parent = posixpath.dirname(parent)
    return {d: sorted(held) for d, held in below.items() if all(map(_is_data, held))}


def _is_data(rel: str) -> bool:
    return language_of(rel) is None and not is_manifest(rel)
