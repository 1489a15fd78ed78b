"""Detector 4c: a Meson project whose build files declare tests (`test(...)` in the root
meson.build or in a directory it enters with `subdir(...)`): a build check (`meson setup`,
then `meson compile`, into assay's own build directory) and a test check (`meson test`).

Which suite a maintainer means beside a root Makefile, or beside another build system:
`assay.discovery.native_builds`.

Files are read as text; meson is never run to read them.
"""

from __future__ import annotations

import re

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import DetectorReport, Ecosystem, ProjectEnv, Source, report
from assay.discovery.native_builds import MESON, Step, suite_report
from assay.tools.meson import BUILD_ARGV, BUILD_DIR, TEST_ARGV

NAME = "meson"

MESON_BUILD = "meson.build"

# `test('add', exe)`, not `benchmark(`, not a name that ends in test (`unit_test(`).
_DECLARES_TEST = re.compile(r"(?<![\w.])test\s*\(")
# `subdir('tests')`: a directory whose meson.build is read too.
_SUBDIR = re.compile(r"(?<![\w.])subdir\s*\(\s*'([^'\\]+)'")
#: meson.build files read looking for a test, at most.
_MAX_FILES = 50


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
    return suite_report(
        files,
        MESON,
        source,
        f"{source} declares a test",
        ecosystem=Ecosystem.MESON,
        build=Step("meson-build", "meson", BUILD_ARGV, f"meson setup and compile into {BUILD_DIR}"),
        test=Step(
            "meson-test", "meson-test", TEST_ARGV, f"meson test runs the suite from {BUILD_DIR}"
        ),
    )
