"""C and C++ with GNU autotools: `./configure && make`, then `make check` (Automake's test
harness), as the maintainers run them; `autoreconf -fi` first when the tree ships no
`configure` (a git checkout rather than a release tarball).

The build check is one command (`sh -c`), because configure must have written the
Makefiles before make can read them; its argv runs the tool that was probed, passed to the
script by path. It copies the tree into a directory of assay's own and builds there in
place, as `./configure` does: the tree itself is left as it was (under `--protect`, the
Makefiles, `configure` and `Makefile.in` files a build writes beside the sources would be
taken for files the change added and removed before the tests run), and no project has to
support out-of-tree builds. The copy keeps modification times, so make does not mistake a
`Makefile.in` for older than its `Makefile.am` and run automake.
"""

from __future__ import annotations

from assay.tools.instrumented import probed_program_in_script
from assay.tools.spec import Ecosystem, EcosystemSpec, ToolSpec

#: What to install for a tree without `configure` (Debian's packages).
INSTALL = "apt-get install -y autoconf automake libtool"
_HINT = f"install autoconf, automake and libtool (Debian: `{INSTALL}`)"
# The same, as plain text a shell echoes (no backquotes: they would run).
_SCRIPT_HINT = f"install autoconf, automake and libtool (Debian: {INSTALL})"
_MAKE_HINT = "install make (Debian: `apt-get install make`)"

# Every program the script runs besides the probed one must be there before anything runs:
# autoreconf without automake fails as if configure.ac were wrong, which says nothing about
# the code. A missing one is reported the way a shell does ("sh: automake: not found", exit
# 127), which reads as a missing toolchain. "$@" are the programs; nothing is spliced in.
_REQUIRE = (
    'for t in "$@"; do command -v "$t" >/dev/null 2>&1 || '
    f"{{ echo \"sh: $t: not found\" >&2; echo '{_SCRIPT_HINT}' >&2; exit 127; }}; done"
)
#: Where the build goes, relative to the workspace root: a name no project uses.
BUILD_DIR = ".assay-autotools-build"
#: The copy of the tree that is configured and built, in the build directory.
TREE = f"{BUILD_DIR}/tree"

# A fresh copy of everything but .git and assay's own directories (this build's, and the
# CMake or Meson build that may be written beside it in the same stage), symlinks as links
# and times kept. "$1" is the build directory: nothing is spliced into the script's text.
_COPY = (
    'rm -rf -- "$1" && mkdir -p -- "$1/tree" && '
    "find . -mindepth 1 -maxdepth 1 ! -name .git ! -name '.assay-*' "
    '-exec cp -RPp {} "$1/tree/" \\; '
    '&& cd -- "$1/tree"'
)
#: A tree that ships `configure`: "$0" is the probed make.
CONFIGURE_SCRIPT = f'{_COPY} && ./configure && "$0" -j2'
#: A tree without one: "$0" is the probed autoreconf, "$@" after the build directory the
#: programs it and the build need.
AUTORECONF_SCRIPT = (
    f'd=$1; shift; {_REQUIRE}; set -- "$d"; {_COPY} && "$0" -fi && ./configure && make -j2'
)

#: Programs `autoreconf -fi` and the build run; libtoolize only where configure.ac uses libtool.
AUTORECONF_NEEDS = ("autoconf", "automake", "aclocal", "make")
LIBTOOL_NEEDS = ("libtoolize",)


def configure_argv() -> tuple[str, ...]:
    """The build check of a tree that ships `configure`."""
    return ("sh", "-c", CONFIGURE_SCRIPT, "make", BUILD_DIR)


def autoreconf_argv(libtool: bool) -> tuple[str, ...]:
    """The build check of a tree without `configure` (`libtool`: configure.ac uses it)."""
    needs = AUTORECONF_NEEDS + (LIBTOOL_NEEDS if libtool else ())
    return ("sh", "-c", AUTORECONF_SCRIPT, "autoreconf", BUILD_DIR, *needs)


#: The test check, as planned.
TEST_ARGV = ("make", "-C", TREE, "check")


AUTORECONF = ToolSpec(
    name="autoreconf",
    ecosystem=Ecosystem.AUTOTOOLS,
    binaries=("autoreconf",),
    install_hint=_HINT,
    instrument=probed_program_in_script,
    # gcc's and clang's `file:line:col: error:` lines are read by the generic parser.
    config_files=("configure.ac", "**/Makefile.am", "m4/**", "autogen.sh"),
)
CONFIGURE = ToolSpec(
    name="configure",
    ecosystem=Ecosystem.AUTOTOOLS,
    # The shipped configure script is the project's own; what assay identifies is the make
    # that builds what it configured.
    binaries=("make", "gmake"),
    install_hint=_MAKE_HINT,
    instrument=probed_program_in_script,
    config_files=("configure", "configure.ac", "**/Makefile.in", "**/Makefile.am"),
)
MAKE_CHECK = ToolSpec(
    name="make-check",
    ecosystem=Ecosystem.AUTOTOOLS,
    binaries=("make", "gmake"),
    install_hint=_MAKE_HINT,
    parser=("automake", "parse"),
    # TESTS, XFAIL_TESTS and the harness's drivers live in the Makefiles and configure.
    config_files=(
        "configure",
        "configure.ac",
        "**/Makefile.am",
        "**/Makefile.in",
        "build-aux/**",
    ),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.AUTOTOOLS,
    label="autotools",
    tools=(AUTORECONF, CONFIGURE, MAKE_CHECK),
    test_files=("test/**", "tests/**", "t/**"),
)
