"""C and C++ with Meson: set up and compile into a directory of assay's own, then run the
suite the meson.build files declare (`test(...)`) with `meson test`.

The build check is one command (`sh -c`, setup then compile), because a stage's checks run
side by side and the build directory must be set up before it is compiled; its argv runs
the meson that was probed, passed to the script by path.
"""

from __future__ import annotations

from assay.tools.instrumented import Instrumented, Request, probed_program_in_script
from assay.tools.spec import Ecosystem, EcosystemSpec, ToolSpec

_HINT = "install Meson and Ninja (Debian: `apt-get install -y meson ninja-build`)"

#: Where the build goes, relative to the workspace root: a name no project uses.
BUILD_DIR = ".assay-meson-build"

# Set up from scratch (a build directory copied from elsewhere names its old path), then
# compile. "$0" is the probed meson, "$1" the build directory: nothing is spliced in.
BUILD_SCRIPT = 'rm -rf -- "$1" && "$0" setup "$1" && "$0" compile -C "$1"'

#: The build check, as planned.
BUILD_ARGV = ("sh", "-c", BUILD_SCRIPT, "meson", BUILD_DIR)
#: The test check, as planned.
TEST_ARGV = ("meson", "test", "-C", BUILD_DIR, "--print-errorlogs")

#: meson's default per-test timeout, which `--timeout-multiplier` scales.
DEFAULT_TEST_TIMEOUT_S = 30
#: meson's per-test timeouts, at most this share of the longest a test may take under the
#: check's deadline and no-output limit (`Check.longest_step_s`): a hanging test
#: is stopped and named by meson (TIMEOUT) before assay has to kill the whole run.
PER_TEST_SHARE = 0.8


def _meson_test(request: Request) -> Instrumented:
    argv = request.argv
    reports = []
    if not request.has("--logbase"):
        # meson joins the base to its log directory: an absolute one puts the log in
        # assay's report directory, out of the tree the tests can write.
        base = request.report("testlog")
        argv = (*argv, "--logbase", str(base))
        reports.append(base.with_name(base.name + ".json"))
    timeout = request.check.longest_step_s
    if timeout and not request.has("--timeout-multiplier", "-t"):
        # Only ever shortened: a project's own timeouts stand when the deadline allows them.
        multiplier = timeout * PER_TEST_SHARE / DEFAULT_TEST_TIMEOUT_S
        if multiplier < 1:
            argv = (*argv, "--timeout-multiplier", f"{multiplier:.3f}")
    return request.runs(argv, *reports)


def _tune_meson_test(argv: list[str], fail_fast: bool) -> list[str]:
    # The quick gate stops at the first failing test, as `pytest -x` does.
    if fail_fast and not any(a == "--maxfail" or a.startswith("--maxfail=") for a in argv):
        return [*argv, "--maxfail", "1"]
    return argv


MESON = ToolSpec(
    name="meson",
    ecosystem=Ecosystem.MESON,
    binaries=("meson",),
    install_hint=_HINT,
    instrument=probed_program_in_script,
    # gcc's and clang's `file:line:col: error:` lines are read by the generic parser.
    config_files=("**/meson.build", "meson_options.txt", "meson.options"),
)
MESON_TEST = ToolSpec(
    name="meson-test",
    ecosystem=Ecosystem.MESON,
    binaries=("meson",),
    install_hint=_HINT,
    tune=_tune_meson_test,
    instrument=_meson_test,
    parser=("meson", "parse"),
    # `test(...)`, its timeout and should_fail live in the meson.build files.
    config_files=("**/meson.build", "meson_options.txt", "meson.options"),
)

ECOSYSTEM = EcosystemSpec(
    ecosystem=Ecosystem.MESON,
    label="meson",
    tools=(MESON, MESON_TEST),
    test_files=("test/**", "tests/**"),
)
