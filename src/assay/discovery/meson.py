"""Detector 4c: a Meson project whose build files declare tests (`test(...)` in the root
meson.build or in a directory it enters with `subdir(...)`): a build check (`meson setup`,
then `meson compile`, into assay's own build directory) and a test check (`meson test`).

A hand-written root Makefile with a test target beside it: cmake's rule (see
`assay.discovery.cmake`), with meson and ninja as the build system's own commands.

Files are read as text; meson is never run to read them.
"""

from __future__ import annotations

import re

from assay.discovery.autotools import documented_routes, hand_written_makefile
from assay.discovery.files import RepoFiles, UnreadableFile
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
from assay.tools.meson import BUILD_ARGV, BUILD_DIR, TEST_ARGV
from assay.verdict import Kind

NAME = "meson"

MESON_BUILD = "meson.build"

# `test('add', exe)`, not `benchmark(`, not a name that ends in test (`unit_test(`).
_DECLARES_TEST = re.compile(r"(?<![\w.])test\s*\(")
# `subdir('tests')`: a directory whose meson.build is read too.
_SUBDIR = re.compile(r"(?<![\w.])subdir\s*\(\s*'([^'\\]+)'")
#: meson.build files read looking for a test, at most.
_MAX_FILES = 50
# The first line of the Makefile meson never writes; no marker: a root Makefile is a person's.
_GENERATED: tuple[str, ...] = ()
_RUNS_MESON = re.compile(r"(?:^|[\s;&|(`'\"])(?:meson|ninja)(?=[\s;&|)`'\"]|$)")


def declared_test(files: RepoFiles) -> Source | None:
    """The first `test(` in the root meson.build or the directories it enters, comments
    left out; None when there is none. Raises `UnreadableFile`."""
    queue = [""]
    seen: set[str] = set()
    while queue and len(seen) < _MAX_FILES:
        directory = queue.pop(0)
        path = f"{directory}/{MESON_BUILD}" if directory else MESON_BUILD
        if path in seen:
            continue
        seen.add(path)
        text = files.read_text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            code = line.split("#", 1)[0]
            if _DECLARES_TEST.search(code):
                return Source(path, number)
            for name in _SUBDIR.findall(code):
                if ".." not in name.split("/"):
                    queue.append(f"{directory}/{name}" if directory else name)
    return None


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    try:
        source = declared_test(files)
    except UnreadableFile as exc:
        return report(NAME, errors=[str(exc)])
    if source is None:
        return report(NAME)
    makefile, errors = hand_written_makefile(files, _GENERATED)
    why = f"{source} declares a test"
    if makefile is not None:
        runs_make, runs_meson = documented_routes(files, _RUNS_MESON)
        if runs_make is not None and runs_meson is None:
            what = f"meson compile and meson test ({source})"
            because = (
                f"the root {makefile} is preferred: {runs_make} runs make and nothing the "
                "project documents runs meson or ninja"
            )
            return report(NAME, dropped=[Dropped(what, source, because)], errors=errors)
        said = f"{runs_meson} runs it" if runs_meson else "nothing the project documents runs it"
        why += f"; it outranks the hand-written root {makefile} ({said})"
    return report(NAME, _candidates(source, why), errors=errors)


def _candidates(source: Source, why: str) -> list[Candidate]:
    return [
        Candidate(
            kind=Kind.BUILD,
            argv=BUILD_ARGV,
            tool="meson",
            ecosystem=Ecosystem.MESON,
            origin=Origin.TASK_RUNNER,
            source=source,
            reason=f"{why}: meson setup and compile into {BUILD_DIR}",
            cost=0,
            name="meson-build",
        ),
        Candidate(
            kind=Kind.TEST,
            argv=TEST_ARGV,
            tool="meson-test",
            ecosystem=Ecosystem.MESON,
            origin=Origin.TASK_RUNNER,
            source=source,
            reason=f"{why}: meson test runs the suite from {BUILD_DIR}",
            cost=0,
            name="meson-test",
        ),
    ]
