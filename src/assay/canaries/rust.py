"""Canaries for `cargo test`: an integration test of the package the run tests.

Cargo builds each file under `tests/` into a test binary of its own, so the canaries are
one more of those (`tests/<random words>.rs`), unless the package turned that
discovery off (`autotests = false`). They run in their own process: what they prove is
the run's report as cargo puts it together, not the library's own test binary. Cargo
stops at the first test binary that fails, so the run is told not to (`--no-fail-fast`):
the must-fail canary must not keep the doc-tests from running.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections import Counter
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    CanaryFile,
    NoCanary,
    Planting,
    PlantRequest,
    any_name,
    failed_run,
    inside,
    unequal,
)
from assay.process import ProcessResult
from assay.untrusted_files import read_untrusted

#: cargo's exit code when a test failed.
CARGO_TEST_FAILED = 101
#: The largest Cargo.toml read.
MANIFEST_MAX_BYTES = 4 * 1024 * 1024
#: Flags that choose targets or packages: the canaries' test target may not be among them.
_SELECTING = frozenset(
    {
        "--lib",
        "--bin",
        "--bins",
        "--test",
        "--example",
        "--examples",
        "--bench",
        "--benches",
        "--doc",
        "-p",
        "--package",
        "--exclude",
    }
)
#: Flags of the test harness (after `--`) that leave tests out.
_HARNESS_SELECTING = frozenset({"--ignored", "--skip", "--exact", "--list"})
#: `cargo test` options that take the next argument as their value.
_VALUED = frozenset(
    {
        "--features",
        "-F",
        "--target",
        "--target-dir",
        "--manifest-path",
        "--message-format",
        "--color",
        "-j",
        "--jobs",
        "--profile",
        "--config",
        "-Z",
    }
)


def plant_cargo_test(request: PlantRequest) -> Planting | NoCanary:
    argv = request.check.argv
    if argv[1:2] != ("test",):
        return NoCanary("the command is not `cargo test`")
    cargo_args, harness_args = _split(argv[2:])
    if chosen := sorted(_SELECTING & {a.partition("=")[0] for a in cargo_args}):
        return NoCanary(f"the run chooses its targets ({chosen[0]})")
    if _positional(cargo_args) or [a for a in harness_args if not a.startswith("-")]:
        return NoCanary("the run filters tests by name: a canary would not be selected")
    if chosen := sorted(_HARNESS_SELECTING & {a.partition("=")[0] for a in harness_args}):
        return NoCanary(f"the run leaves tests out ({chosen[0]})")
    if any(a == "--manifest-path" or a.startswith("--manifest-path=") for a in cargo_args):
        return NoCanary("the run names its manifest (--manifest-path)")
    package = _package(request)
    if isinstance(package, NoCanary):
        return package
    canaries = request.pair()
    target = request.name()
    path = request.relative(inside(request.cwd, "tests", f"{target}.rs"))
    return Planting(
        files=(CanaryFile(path, _test_file(canaries)),),
        canaries=canaries,
        failed_exit=CARGO_TEST_FAILED,
        edit_argv=_no_fail_fast,
        failed_groups=lambda result: _failed_beyond_canaries(result, target),
        what=f"an integration test {path}",
        printed=functools.partial(_printed_without, canaries, target),
    )


def _printed_without(canaries: Sequence[Canary], target: str, text: str, _ran: Counter[str]) -> str:
    """cargo test's printed `text` without the canaries' target: its test binary's run
    (the `running N tests` section naming them), cargo's lines about it, and its entry in
    the closing list of failed targets."""
    names = any_name(canaries)
    theirs = re.compile(rf"^test (?:{names}) \.\.\. ", re.MULTILINE)
    text = _RUN_SECTION.sub(lambda m: "" if theirs.search(m[0]) else m[0], text)
    named = rf"`--test {re.escape(target)}`"
    running = rf"Running tests/{re.escape(target)}\.rs \(.*\)"
    about = rf"^ *(?:{running}|error: test failed, to rerun pass {named})\n"
    text = re.sub(about, "", text, flags=re.MULTILINE)
    entry = re.compile(rf"^ +{named}\n", re.MULTILINE)
    if entry.search(text) is None:
        return text

    def fewer(match: re.Match[str]) -> str:
        left = int(match[1]) - 1
        return f"error: {left} target{'' if left == 1 else 's'} failed:"

    return re.sub(r"^error: (\d+) targets failed:$", fewer, entry.sub("", text), flags=re.MULTILINE)


#: One test binary's run, as libtest prints it: `running N tests` to `test result: ...`.
_RUN_SECTION = re.compile(
    r"^running \d+ tests?\n(?:(?!running \d+ tests?\n).*\n)*?test result: .*\n\n?",
    re.MULTILINE,
)


# error: test failed, to rerun pass `--test merge_order_key_limit`   (one per failed target)
_FAILED_TARGET = re.compile(r"to rerun pass `(?P<target>[^`]*)`")


def _failed_beyond_canaries(result: ProcessResult, target: str) -> frozenset[str] | None:
    """None when a test target other than the canaries' failed (one that crashed without
    a failing test to count, say): the run's failure is then not only theirs."""
    failed = _FAILED_TARGET.findall(result.stdout.text + result.stderr.text)
    if any(found != f"--test {target}" for found in failed):
        return None
    return failed_run(result)


def _split(args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    if "--" in args:
        at = args.index("--")
        return list(args[:at]), list(args[at + 1 :])
    return list(args), []


def _positional(args: list[str]) -> list[str]:
    """Arguments that are neither options nor their values: test name filters."""
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif not arg.startswith("-"):
            found.append(arg)
    return found


def _package(request: PlantRequest) -> None | NoCanary:
    """None when the manifest in the run's directory is a package that finds its tests."""
    rel = request.relative(inside(request.cwd, "Cargo.toml"))
    data = read_untrusted(request.root, rel, limit=MANIFEST_MAX_BYTES)
    if not isinstance(data, bytes):
        return NoCanary("no Cargo.toml could be read where the run starts")
    try:
        manifest = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return NoCanary("Cargo.toml is not valid TOML")
    package = manifest.get("package")
    if not isinstance(package, dict):
        return NoCanary("Cargo.toml where the run starts is a workspace without a package")
    if package.get("autotests") is False:
        return NoCanary("the package does not discover its tests/ (autotests = false)")
    return None


def _no_fail_fast(argv: tuple[str, ...]) -> tuple[str, ...]:
    if "--no-fail-fast" in argv:
        return argv
    at = argv.index("test") + 1
    return (*argv[:at], "--no-fail-fast", *argv[at:])


def _test_file(canaries: tuple[Canary, Canary]) -> str:
    left, right = unequal()
    tests = "".join(
        f"\n#[test]\nfn {c.name}() {{}}\n"
        if c.must_pass
        else f"\n#[test]\nfn {c.name}() {{\n    assert_eq!({left}, {right});\n}}\n"
        for c in canaries
    )
    return f"#![allow(warnings, clippy::all)]\n{tests}"
