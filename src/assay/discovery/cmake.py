"""Detector 4a: a CMake project whose root CMakeLists.txt declares a CTest suite
(`enable_testing()`, `include(CTest)`, `add_test(`): a build check (configure and build into
assay's own build directory) and a test check (`ctest`).

Which suite a maintainer means beside a root Makefile, or beside another build system:
`assay.discovery.native_builds`. Files are read as text; cmake is never run to read them.
"""

from __future__ import annotations

import re
from pathlib import Path

from assay.discovery.cmake_options import ci_options
from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import DetectorReport, Ecosystem, ProjectEnv, Source, report
from assay.discovery.native_builds import CMAKE, Step, suite_report
from assay.tools.cmake import BUILD_ARGV, BUILD_DIR, TEST_ARGV

NAME = "cmake"

CMAKELISTS = "CMakeLists.txt"

# `enable_testing()`, `include(CTest)`, `add_test(NAME x COMMAND y)`, any case, any indent.
_DECLARES_TESTS = re.compile(
    r"\b(?:enable_testing\s*\(|include\s*\(\s*CTest\s*\)|add_test\s*\()", re.IGNORECASE
)


def declared_suite(text: str) -> int | None:
    """The line of the first statement that declares a CTest suite, comments left out; None
    when there is none. Pure."""
    for number, line in enumerate(text.splitlines(), start=1):
        if _DECLARES_TESTS.search(line.split("#", 1)[0]):
            return number
    return None


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    try:
        text = files.read_text(CMAKELISTS)
    except UnreadableFile as exc:
        return report(NAME, errors=[str(exc)])
    line = declared_suite(text) if text is not None else None
    if text is None or line is None:
        return report(NAME)
    options = ci_options(Path(files.root), text)
    why = f"configure and build into {BUILD_DIR}"
    if options:
        why += f", with the options CI configures with ({' '.join(options)})"
    return suite_report(
        files,
        CMAKE,
        Source(CMAKELISTS, line),
        f"{CMAKELISTS} declares a CTest suite",
        ecosystem=Ecosystem.CMAKE,
        build=Step("cmake-build", "cmake", (*BUILD_ARGV, *options), why),
        test=Step("ctest", "ctest", TEST_ARGV, f"ctest runs it from {BUILD_DIR}"),
    )
