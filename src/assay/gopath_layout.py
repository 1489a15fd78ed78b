"""A Go package from before modules, checked as its CI checks it: in GOPATH mode, at its
import path inside a GOPATH.

A tree with no go.mod (nor go.work) is refused by module mode ("cannot find main module"),
whatever command its CI states: go-spew's Travis `go test -v -race -tags safe ./spew` was
INDETERMINATE on its clean tree and on a change that broke it. Every go check at the root
of such a tree runs with `GO111MODULE=off`, as the fallback's `go test ./...` does, and so
does a make target there, whose recipe's go commands inherit it: pkg/errors' `make test`
(`go test github.com/pkg/errors`) was INDETERMINATE for "go.mod file not found". Its
tests import their own package by its full path (`github.com/davecgh/go-spew/spew`), which
GOPATH mode finds only under `$GOPATH/src`: where the tree's import path is known (Travis's
`go_import_path`, or the one its packages import themselves by), the check runs from a link at that
path in a GOPATH of its own (`gopath_wrapper`). Read as text, never run.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Only here: go's instrumentation and the shared cache's rules read this module's
    # names, and discovery's reach back to them.
    from assay.discovery.files import RepoFiles
    from assay.evidence import Check

__all__ = ["IMPORT_PATH_ENV", "gopath_wrapper", "in_gopath_mode"]

#: The variable a go check carries its tree's import path in, for `gopath_wrapper`.
IMPORT_PATH_ENV = "ASSAY_GO_IMPORT_PATH"

#: Travis's word for where the tree lives in the GOPATH.
_TRAVIS_IMPORT_PATH = re.compile(r"^go_import_path:\s*['\"]?([^\s'\"#]+)", re.MULTILINE)
#: An import path (a host with a dot first), as written in an import declaration.
_IMPORT_BLOCK = re.compile(r"^import\s*\(([^)]*)\)", re.MULTILINE)
_IMPORT_LINE = re.compile(r"^import\s+(?:[\w.]+\s+)?(\"[^\"\n]*\")", re.MULTILINE)
#: The package clause of an external test package, which imports the package it tests.
_EXTERNAL_TEST = re.compile(r"^package\s+\w+_test\b", re.MULTILINE)
_QUOTED = re.compile(r"\"([^\"\s]+)\"")
_PATH = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?:/[\w.~-]+)+")

#: The tools whose checks run go at a tree's root: go itself, and make's recipes.
_RUN_GO = frozenset({"go", "make"})

#: How far the search for Go files goes: a hostile tree must not make planning a crawl.
_MAX_DEPTH = 6
_MAX_DIRS = 200
_MAX_FILES = 300


def in_gopath_mode(check: Check, root: str) -> Check:
    """`check` in GOPATH mode when it is a go command, or a make target in a tree with Go
    tests, run at the root of a tree with no go.mod nor go.work, carrying the tree's import
    path where one is known."""
    if check.tool not in _RUN_GO or check.cwd != ".":
        return check
    if check.env.get("GO111MODULE", "off") != "off":
        return check
    from assay.discovery.files import RepoFiles

    files = RepoFiles(root)
    if files.lexists("go.mod") or files.lexists("go.work"):
        return check
    if check.tool != "go" and not _go_files(files):
        return check  # a Makefile of C, say: no go command of its asks for modules
    env = {**check.env, "GO111MODULE": "off"}
    path = _import_path(files)
    if path is not None:
        env[IMPORT_PATH_ENV] = path
    return replace(check, env=env)


def gopath_wrapper(then: str) -> str:
    """A `sh -c` script that links the working directory at `$ASSAY_GO_IMPORT_PATH` in a
    new GOPATH, enters it by that link (go takes a package's path from `$PWD`) and runs the
    script `then` (the program as `$0`), the host's GOPATH after the new one; `then` as it
    is where no import path was given."""
    return (
        f'if [ -n "${IMPORT_PATH_ENV}" ]; then '
        'gopath=$(mktemp -d) && at="$gopath/src/$' + IMPORT_PATH_ENV + '" && '
        'mkdir -p "${at%/*}" && ln -s "$PWD" "$at" && cd "$at" && '
        'GOPATH="$gopath${GOPATH:+:$GOPATH}" && export GOPATH || exit 1; fi; ' + then
    )


def _import_path(files: RepoFiles) -> str | None:
    from assay.discovery.files import UnreadableFile

    try:
        travis = files.read_text(".travis.yml")
    except UnreadableFile:
        travis = None
    stated = _TRAVIS_IMPORT_PATH.search(travis or "")
    if stated and _is_import_path(stated[1]):
        return stated[1]
    return _agreed_import_path(files)


def _is_import_path(path: str) -> bool:
    """A host with a dot, then path elements none of which leads up or stays put."""
    return _PATH.fullmatch(path) is not None and not {".", ".."} & set(path.split("/"))


def _agreed_import_path(files: RepoFiles) -> str | None:
    """The import path the tree's external tests give it most often: `P` for each test
    file of an external test package in directory `dir` (`package spew_test`) that imports
    `P/dir`, the package it tests (`P` at the root). Only the tested package counts: a
    library's `assert` is no word on where a tree holding an `assert/` lives."""
    from assay.discovery.files import UnreadableFile

    go_files = _go_files(files)
    votes: Counter[str] = Counter()
    for rel in go_files:
        try:
            text = files.read_text(rel)
        except UnreadableFile:
            continue
        if not _EXTERNAL_TEST.search(text or ""):
            continue
        own = rel.rpartition("/")[0]
        for imported in _imports(text or ""):
            prefix = imported if not own else imported.removesuffix("/" + own)
            if (not own or prefix != imported) and _is_import_path(prefix):
                votes[prefix] += 1
    return votes.most_common(1)[0][0] if votes else None


def _go_files(files: RepoFiles) -> list[str]:
    """The tree's Go test files, breadth first as `go test ./...` reaches them, bounded."""
    found = files.breadth_first(
        lambda name: name.endswith("_test.go"),
        lambda name, _: name[:1] not in "._" and name not in ("testdata", "vendor"),
        depth=_MAX_DEPTH,
        max_dirs=_MAX_DIRS,
    )
    return list(itertools.islice(found, _MAX_FILES))


def _imports(text: str) -> list[str]:
    quoted = [*_IMPORT_LINE.findall(text), *_IMPORT_BLOCK.findall(text)]
    return [path for chunk in quoted for path in _QUOTED.findall(chunk)]
