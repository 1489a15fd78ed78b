"""Detector 4b: a GNU autotools project (`configure.ac` and a root `Makefile.am`): a build
check (`./configure && make`, after `autoreconf -fi` when the tree ships no `configure`)
and a test check (`make check`, Automake's test harness), the maintainers' own sequence.

Which suite a maintainer means beside a root Makefile, or beside another build system:
`assay.discovery.native_builds`.

Files are read as text; configure is the project's code and runs only as a check, in the
sandbox.
"""

from __future__ import annotations

import re

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import DetectorReport, Ecosystem, ProjectEnv, Source, report
from assay.discovery.native_builds import AUTOTOOLS, Step, suite_report
from assay.tools.autotools import BUILD_DIR, TEST_ARGV, autoreconf_argv, configure_argv

NAME = "autotools"

CONFIGURE_AC = ("configure.ac", "configure.in")
MAKEFILE_AM = "Makefile.am"
CONFIGURE = "configure"

# configure.ac's use of libtool: autoreconf then needs libtoolize.
_USES_LIBTOOL = re.compile(
    r"^\s*(?:LT_INIT|AC_PROG_LIBTOOL|AM_PROG_LIBTOOL|LT_PREREQ)\b", re.MULTILINE
)


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    try:
        found = _configure_ac(files)
        has_makefile_am = files.is_file(MAKEFILE_AM)
    except UnreadableFile as exc:
        return report(NAME, errors=[str(exc)])
    if found is None or not has_makefile_am:
        return report(NAME)
    path, text = found
    why = f"{path} and {MAKEFILE_AM} make an autotools project"
    return suite_report(
        files,
        AUTOTOOLS,
        Source(path, 1),
        why,
        ecosystem=Ecosystem.AUTOTOOLS,
        build=_build(files, text),
        test=Step(
            "make-check",
            "make-check",
            TEST_ARGV,
            f"make check runs Automake's test harness in {BUILD_DIR}",
        ),
    )


def _configure_ac(files: RepoFiles) -> tuple[str, str] | None:
    for path in CONFIGURE_AC:
        text = files.read_text(path)
        if text is not None:
            return path, text
    return None


def _build(files: RepoFiles, configure_ac: str) -> Step:
    if files.is_file(CONFIGURE):
        argv, tool, how = configure_argv(), "configure", "./configure && make"
    else:
        libtool = bool(_USES_LIBTOOL.search(configure_ac))
        argv, tool = autoreconf_argv(libtool), "autoreconf"
        how = "no configure is shipped: autoreconf -fi, then ./configure && make"
    return Step("autotools-build", tool, argv, f"{how}, in a copy of the tree in {BUILD_DIR}")
