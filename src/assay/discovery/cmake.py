"""Detector 4a: a CMake project whose root CMakeLists.txt declares a CTest suite
(`enable_testing()`, `include(CTest)`, `add_test(`): a build check (configure and build into
assay's own build directory) and a test check (`ctest`).

Which suite a maintainer means when a root Makefile stands beside such a CMakeLists.txt:

- a Makefile CMake generated (an in-source build) is never part of a clean tree and only
  drives the same CTest suite: CTest;
- a hand-written Makefile with a test target: what the project's CI and README run. The
  Makefile wins only when they run `make` and never `cmake` or `ctest`; when they run
  cmake or ctest (a `make test` after `cd build` is CMake's own Makefile), or say nothing,
  the declared CTest suite is the maintainers' (cJSON's deprecated root Makefile builds a
  demo that asserts nothing, while its CI and README configure with cmake and run ctest).

Files are read as text; cmake is never run to read them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from assay.discovery.ci import WORKFLOW_DIR
from assay.discovery.ci_systems import CI_SYSTEMS
from assay.discovery.docs import DOC_FILES, code_lines
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.jenkins import JENKINSFILE
from assay.discovery.make import MAKEFILES, read_makefile, target_candidates
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Dropped,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.tools.cmake import BUILD_ARGV, BUILD_DIR, TEST_ARGV
from assay.verdict import Kind

NAME = "cmake"

CMAKELISTS = "CMakeLists.txt"

# `enable_testing()`, `include(CTest)`, `add_test(NAME x COMMAND y)`, any case, any indent.
_DECLARES_TESTS = re.compile(
    r"\b(?:enable_testing\s*\(|include\s*\(\s*CTest\s*\)|add_test\s*\()", re.IGNORECASE
)
# The first line of every Makefile CMake's "Unix Makefiles" generator writes.
_GENERATED = "CMAKE generated file: DO NOT EDIT!"
# A command line that runs cmake or ctest, or make, as a word of its own.
_RUNS_CMAKE = re.compile(r"(?:^|[\s;&|(`'\"])(?:cmake|ctest)(?:\.exe)?(?=[\s;&|)`'\"]|$)")
_RUNS_MAKE = re.compile(r"(?:^|[\s;&|(`'\"])g?make(?=[\s;&|)`'\"]|$)")
#: CI workflows read for the route they run, at most this many per directory.
_MAX_CI_FILES = 50


@dataclass(frozen=True, slots=True)
class Routes:
    """Where the project's CI and docs first run cmake/ctest, and make (None: nowhere)."""

    cmake: Source | None = None
    make: Source | None = None


def declared_suite(text: str) -> int | None:
    """The line of the first statement that declares a CTest suite, comments left out; None
    when there is none. Pure."""
    for number, line in enumerate(text.splitlines(), start=1):
        if _DECLARES_TESTS.search(line.split("#", 1)[0]):
            return number
    return None


def routes(texts: dict[str, str]) -> Routes:
    """The first line of the CI files and docs (`texts`: path -> text) that runs cmake or
    ctest, and the first that runs make. Docs are read in their code blocks only. Pure."""
    cmake: Source | None = None
    make: Source | None = None
    for path, text in texts.items():
        is_doc = path in DOC_FILES
        lines = code_lines(text) if is_doc else enumerate(text.splitlines(), start=1)
        for number, line in lines:
            if cmake is None and _RUNS_CMAKE.search(line):
                cmake = Source(path, number)
            if make is None and _RUNS_MAKE.search(line):
                make = Source(path, number)
    return Routes(cmake, make)


def preferred(routes: Routes) -> str | None:
    """Why a hand-written root Makefile with a test target is the maintainers' suite rather
    than the CTest one, or None when CTest is (see the module's docstring). Pure."""
    if routes.make is not None and routes.cmake is None:
        return f"{routes.make} runs make and nothing the project documents runs cmake or ctest"
    return None


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    try:
        text = files.read_text(CMAKELISTS)
    except UnreadableFile as exc:
        return report(NAME, errors=[str(exc)])
    line = declared_suite(text) if text is not None else None
    if line is None:
        return report(NAME)
    source = Source(CMAKELISTS, line)
    makefile, errors = _hand_written_makefile(files)
    documented = routes(_route_texts(files))
    why_ctest = "declares a CTest suite"
    if makefile is not None:
        why_make = preferred(documented)
        if why_make is not None:
            what = f"cmake build and ctest ({source})"
            return report(
                NAME,
                dropped=[Dropped(what, source, f"the root {makefile} is preferred: {why_make}")],
                errors=errors,
            )
        said = (
            f"{documented.cmake} runs cmake"
            if documented.cmake
            else "nothing the project documents runs it"
        )
        why_ctest += f"; it outranks the hand-written root {makefile} ({said})"
    return report(NAME, _candidates(source, why_ctest), errors=errors)


def _candidates(source: Source, why: str) -> list[Candidate]:
    return [
        Candidate(
            kind=Kind.BUILD,
            argv=BUILD_ARGV,
            tool="cmake",
            ecosystem=Ecosystem.CMAKE,
            origin=Origin.TASK_RUNNER,
            source=source,
            reason=f"{CMAKELISTS} {why}: configure and build into {BUILD_DIR}",
            cost=0,
            name="cmake-build",
        ),
        Candidate(
            kind=Kind.TEST,
            argv=TEST_ARGV,
            tool="ctest",
            ecosystem=Ecosystem.CMAKE,
            origin=Origin.TASK_RUNNER,
            source=source,
            reason=f"{CMAKELISTS} {why}: ctest runs it from {BUILD_DIR}",
            cost=0,
            name="ctest",
        ),
    ]


def _hand_written_makefile(files: RepoFiles) -> tuple[str | None, list[str]]:
    """The root Makefile make would read, when a person wrote it and it has a test target."""
    for path in MAKEFILES:
        try:
            text = files.read_text(path)
        except UnreadableFile as exc:
            return None, [str(exc)]
        if text is None:
            continue
        if _GENERATED in "\n".join(text.splitlines()[:5]):
            return None, []
        makefile = read_makefile(text)
        found, _ = target_candidates(list(makefile.targets), path, "make", makefile)
        return (path if any(c.kind is Kind.TEST for c in found) else None), []
    return None, []


def _route_texts(files: RepoFiles) -> dict[str, str]:
    paths = [*_yaml_in(files, WORKFLOW_DIR), JENKINSFILE]
    for system in CI_SYSTEMS:
        paths += [*system.files, *(p for d in system.dirs for p in _yaml_in(files, d))]
    paths += DOC_FILES
    texts, _ = files.read_texts(paths)  # an unreadable one is the CI or docs detector's to report
    return texts


def _yaml_in(files: RepoFiles, directory: str) -> list[str]:
    names = [n for n in files.list_dir(directory) if n.endswith((".yml", ".yaml"))]
    return [f"{directory}/{n}" for n in names[:_MAX_CI_FILES]]
