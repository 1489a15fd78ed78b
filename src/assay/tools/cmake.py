"""C and C++ with CMake and CTest: configure and build into a directory of assay's own, then
run the suite the CMakeLists.txt declares (`enable_testing()`, `add_test`).

The build check is one command (`sh -c`, configure then build), because a stage's checks
run side by side and the build must be configured before it can be built; the argv still
runs the cmake that was probed, passed to the script by path.
"""

from __future__ import annotations

from assay.tools.instrumented import Instrumented, Request, probed_program_in_script
from assay.tools.spec import Ecosystem, EcosystemSpec, ToolSpec, version_at_least

_HINT = "install CMake (Debian: `apt-get install cmake`)"

#: Where the build goes, relative to the workspace root: a name no project uses, so a build
#: tree the maintainers keep (`build/`, configured for another path) is never reused.
BUILD_DIR = ".assay-cmake-build"

# Configure from scratch (a tree copied from elsewhere holds a cache naming its old path),
# then build. "$0" is the probed cmake, "$1" the build directory, the rest the project's
# options CI configures with (`assay.discovery.cmake_options`): nothing is spliced into the
# script's text.
BUILD_SCRIPT = (
    'd="$1" && shift && rm -rf -- "$d" && "$0" -S . -B "$d" "$@" && "$0" --build "$d" -j 2'
)

#: The build check, as planned (then the options, if any).
BUILD_ARGV = ("sh", "-c", BUILD_SCRIPT, "cmake", BUILD_DIR)
#: The test check, as planned (`--test-dir` needs CTest 3.20, `--stop-on-failure` 3.18).
TEST_ARGV = ("ctest", "--test-dir", BUILD_DIR, "--output-on-failure")

#: CTest's per-test timeout, as a share of the longest a test may take under the check's
#: deadline and no-output limit (`Check.longest_step_s`): a test that hangs is
#: stopped and named by ctest ("***Timeout") before assay has to kill the whole run.
PER_TEST_SHARE = 0.8


def _ctest(request: Request) -> Instrumented:
    argv = request.argv
    reports = []
    if not request.has("--output-junit") and version_at_least(request.checker, (3, 21)):
        report = request.report("xml")
        argv = (*argv, "--output-junit", str(report))
        reports.append(report)
    timeout = request.check.longest_step_s
    if timeout and not request.has("--timeout"):
        argv = (*argv, "--timeout", str(max(1, int(timeout * PER_TEST_SHARE))))
    return request.runs(argv, *reports)


def _tune_ctest(argv: list[str], fail_fast: bool) -> list[str]:
    # The quick gate stops at the first failing test, as `pytest -x` does; it also keeps a
    # second hanging test from running on after ctest has stopped and named the first.
    if fail_fast and "--stop-on-failure" not in argv:
        return [*argv, "--stop-on-failure"]
    return argv


CMAKE = ToolSpec(
    name="cmake",
    ecosystem=Ecosystem.CMAKE,
    binaries=("cmake",),
    install_hint=_HINT,
    instrument=probed_program_in_script,
    # gcc's and clang's `file:line:col: error:` lines are read by the generic parser.
    config_files=("**/CMakeLists.txt", "**/*.cmake"),
)
CTEST = ToolSpec(
    name="ctest",
    ecosystem=Ecosystem.CMAKE,
    binaries=("ctest",),
    install_hint=_HINT,
    tune=_tune_ctest,
    instrument=_ctest,
    parser=("ctest", "parse"),
    # `add_test` and test properties (TIMEOUT, WILL_FAIL) live in the CMake files.
    config_files=("**/CMakeLists.txt", "**/*.cmake", "**/CTestCustom.cmake*"),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.CMAKE,
    label="cmake",
    tools=(CMAKE, CTEST),
    test_files=("test/**", "tests/**"),
)
