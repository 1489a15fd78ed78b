"""Canaries for `go test`: a must-pass test in every package the run tests, and a
must-fail test in a package of its own.

Each package is tested by a binary of its own, and code under test can end only its own
binary's run (write `go test -json` events into its parent's output, then exit): so every
package with tests gets a must-pass canary, in a `<random words>_test.go` whose package
clause is copied from a test file already there. A package that passed without reporting
it did not run it.

The must-fail canary lives in a new package below one of the tested ones, where nothing of
the project's is built into its binary: were it in a project's package, it would make that
package's binary exit 1 and so license the package's failure, and code under test that
printed a pass for each test and `--- FAIL` for the canary before dying (`panic`) read as
an honest run. So every real package must pass as a package; a binary that ends 0 before
its tests run takes `os.Exit`-like calls, which `assay.code_signals` looks for.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from assay.canaries import (
    Canary,
    CanaryFile,
    NoCanary,
    Planting,
    PlantRequest,
    any_name,
    camel,
    inside,
    unequal,
    within,
)
from assay.parsed_output import ParsedOutput
from assay.parsers._text import json_lines
from assay.process import ProcessResult
from assay.untrusted_files import read_untrusted

#: The most packages one run plants canaries in (a file each).
MAX_PACKAGES = 2000
#: The largest test file read for its package clause.
TEST_FILE_MAX_BYTES = 4 * 1024 * 1024

#: `go test` flags that take a value (as `-flag value`); every other flag is a switch.
_VALUED = frozenset(
    {
        *("run", "skip", "list", "count", "timeout", "tags", "p", "cpu", "parallel"),
        *("coverprofile", "covermode", "coverpkg", "o", "exec", "bench", "benchtime"),
        *("blockprofile", "blockprofilerate", "cpuprofile", "memprofile", "memprofilerate"),
        *("mutexprofile", "mutexprofilefraction", "outputdir", "trace", "mod", "modfile"),
        *("ldflags", "gcflags", "asmflags", "gccgoflags", "compiler", "installsuffix"),
        *("pkgdir", "toolexec", "vet", "shuffle", "fuzz", "fuzztime", "fuzzminimizetime"),
        *("C", "overlay", "pgo", "buildmode"),
    }
)
#: `go test` switches (flags that take no value), as go 1.19 and later define them.
_SWITCHES = frozenset(
    {
        *("a", "n", "x", "v", "race", "msan", "asan", "linkshared", "trimpath", "work"),
        *("buildvcs", "modcacherw", "c", "i", "cover", "json", "benchmem", "failfast"),
        *("short", "fullpath"),
    }
)
#: The test binary's flags `go test` takes as its own, spelled `-name` or `-test.name`.
_PASSED = frozenset(
    {
        *("bench", "benchmem", "benchtime", "blockprofile", "blockprofilerate", "count"),
        *("coverprofile", "cpu", "cpuprofile", "failfast", "fuzz", "fuzzminimizetime"),
        *("fuzztime", "list", "memprofile", "memprofilerate", "mutexprofile"),
        *("mutexprofilefraction", "outputdir", "parallel", "run", "short", "shuffle"),
        *("skip", "timeout", "trace", "v"),
    }
)
#: Flags that select tests by name: a canary would not be selected.
_SELECTING = frozenset({"run", "skip", "list"})
_PACKAGE = re.compile(r"^\s*package\s+([A-Za-z_][A-Za-z0-9_]*)", re.MULTILINE)
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
#: The line go before 1.24 prints, outside the JSON, for a package whose test binary
#: could not be built (later releases send it as a package's `fail` event).
_NOT_BUILT = re.compile(r"^FAIL\t(\S+) \[(?:build|setup) failed\]$", re.MULTILINE)


def plant_go_test(request: PlantRequest) -> Planting | NoCanary:
    argv = request.check.argv
    if argv[1:2] != ("test",):
        return NoCanary("the command is not `go test`")
    read = _read_args(argv[2:])
    flags, patterns = read.flags, read.patterns
    if selecting := _SELECTING & flags.keys():
        return NoCanary(f"the run selects tests by name (-{min(selecting)})")
    try:
        repeats = int(flags.get("count") or 1)
    except ValueError:
        return NoCanary(f"-count={flags['count']} is not a number")
    directories = _package_dirs(request, patterns or ["."])
    if isinstance(directories, NoCanary):
        return directories
    drawn = _Names(request)
    files: list[CanaryFile] = []
    canaries: list[Canary] = []
    planted: list[Path] = []
    for directory in directories:
        package = _package_clause(request.root, directory)
        if package is None:
            continue
        group = request.relative(directory) if directory != request.root else "."
        canaries.append(Canary(drawn.test(), must_pass=True, group=group))
        path = request.relative(directory / f"{drawn.word()}_test.go")
        files.append(CanaryFile(path, _test_file(package, canaries[-1])))
        planted.append(directory)
    if not files:
        return NoCanary("no package clause could be read from the packages' test files")
    # Below a tested package: in its module (no go.mod between), and matched by the
    # pattern that found it where that one ends in `...`; else named on the command line.
    parent = next((d for d in planted if directories[d]), planted[0])
    own = drawn.word(unused_in=parent)  # a Go identifier: lowercase words joined by `_`
    group = request.relative(parent / own)
    canaries.append(Canary(drawn.test(), must_pass=False, group=group))
    files.append(CanaryFile(f"{group}/{drawn.word()}_test.go", _test_file(own, canaries[-1])))
    named = None if directories[parent] else os.path.relpath(parent / own, request.cwd)
    return Planting(
        files=tuple(files),
        canaries=tuple(canaries),
        edit_argv=None if named is None else functools.partial(_also_testing, f"./{named}"),
        repeats=repeats,
        failed_groups=lambda result: _failed_packages(result, canaries),
        checks=functools.partial(_canary_package_checks, canaries),
        what=(
            f"a test file in each of {len(files) - 1} package(s), and a package of its own, {group}"
        ),
        printed=functools.partial(
            _printed_without, canaries, [os.path.basename(f.path) for f in files], own
        ),
    )


class _Names:
    """Random names for one run's canaries, none drawn twice (a name reported twice would
    read as a canary run twice)."""

    def __init__(self, request: PlantRequest) -> None:
        self._draw = request.name
        self._taken: set[str] = set()

    def word(self, unused_in: Path | None = None) -> str:
        while True:
            name = self._draw()
            if name not in self._taken and not (
                unused_in is not None and os.path.lexists(unused_in / name)
            ):
                self._taken.add(name)
                return name

    def test(self) -> str:
        return f"Test{camel(self.word())}"


def _printed_without(
    canaries: Sequence[Canary],
    files: Sequence[str],
    package: str,
    text: str,
    _ran: Counter[str],
) -> str:
    """go test's printed `text` without the canaries' lines: their start, their end, what
    they logged from their files (line by line: packages' lines may interleave), and the
    result of the must-fail canary's `package` (go prints a package's lines together)."""
    names = any_name(canaries)
    logged = "|".join(re.escape(name) for name in files)
    result = rf"(?:FAIL\n)?FAIL\t(?:\S*/)?{re.escape(package)}\t.*"
    theirs = re.compile(
        rf"^(?:=== (?:RUN|PAUSE|CONT|NAME)\s+(?:{names})|\s*--- \w+: (?:{names}) \(.*\)"
        rf"|\s+(?:{logged}):\d+: .*|{result})(?:\n|$)",
        re.MULTILINE,
    )
    return theirs.sub("", text)


@dataclass(frozen=True, slots=True)
class _Args:
    """`go test`'s arguments as go reads them."""

    flags: dict[str, str]
    """Name -> value ("" for a switch): go's own, and the test binary's `-test.` ones."""
    patterns: list[str]
    first: int
    """Where the first pattern is (the arguments' length when there is none)."""
    end: int
    """Where go stops reading: the rest goes to the test binaries as it is."""


def _read_args(args: Sequence[str]) -> _Args:
    """`args` read as go 1.19's `testFlags` reads them: the package list is the first run
    of words that are not flags, and it ends at the next flag; after it, go still reads
    flags, but a word that is neither a flag nor the value of an unknown one (`go test ./a
    -v ./b`'s `./b`) hands it and everything after it to the test binaries. An unknown
    flag ends the package list even before it starts, and `-args` or `--` hands over the
    rest. What the binaries are handed is read for their own `-test.` flags."""
    flags: dict[str, str] = {}
    patterns: list[str] = []
    listed = in_list = after_unknown = False
    first, at, to_binary = len(args), 0, []
    while at < len(args):
        arg = args[at]
        was_after_unknown, after_unknown = after_unknown, False
        if arg == "--":
            break
        if len(arg) < 2 or not arg.startswith("-"):
            if listed and not in_list:
                if not was_after_unknown:
                    break  # a word for the binaries, and so is every one after it
                to_binary.append(arg)  # taken for the unknown flag's value, as go takes it
                at += 1
                continue
            first = min(first, at)
            listed = in_list = True
            patterns.append(arg)
            at += 1
            continue
        in_list = False
        at += 1
        name, eq, value = arg.removeprefix("-").removeprefix("-").partition("=")
        if name.startswith("test.") and name[len("test.") :] in _PASSED:
            name = name[len("test.") :]
        elif name not in _VALUED and name not in _SWITCHES:
            listed = True  # go: any word after an unknown flag may be its value
            if name == "args":
                binary = _with_binary_flags(flags, [*to_binary, *args[at:]])
                return _Args(binary, patterns, first, at - 1)
            to_binary.append(arg)
            after_unknown = not eq
            continue
        if not eq and name in _VALUED and at < len(args):
            value = args[at]
            at += 1
        flags[name] = value
    return _Args(_with_binary_flags(flags, to_binary), patterns, first, at)


def _with_binary_flags(flags: dict[str, str], args: Sequence[str]) -> dict[str, str]:
    """`flags` and the `-test.` flags of `args`, read as a test binary's flag package reads
    its arguments: up to the first word that is not a flag."""
    found = dict(flags)
    at = 0
    while at < len(args) and args[at].startswith("-") and args[at] not in ("-", "--"):
        name, eq, value = args[at].removeprefix("-").removeprefix("-").partition("=")
        at += 1
        if not name.startswith("test."):
            continue
        name = name.removeprefix("test.")
        if not eq and name in _VALUED and at < len(args):
            value = args[at]
            at += 1
        found[name] = value
    return found


def _also_testing(package: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """`argv` (a `go test`, behind any wrapper) testing `package` too: first in its list
    of packages, or beside `.` where it named none (before what go hands the binaries)."""
    at = argv.index("test", 1) + 1
    read = _read_args(argv[at:])
    if read.patterns:
        first = at + read.first
        return (*argv[:first], package, *argv[first:])
    stop = at + read.end
    return (*argv[:stop], ".", package, *argv[stop:])


def _package_dirs(request: PlantRequest, patterns: Sequence[str]) -> dict[Path, bool] | NoCanary:
    """The directories of the packages `patterns` name that have test files, each with
    whether a pattern ending in `...` found it."""
    found: dict[Path, bool] = {}
    for pattern in patterns:
        recursive = pattern == "..." or pattern.endswith("/...")
        base = pattern.removesuffix("...").rstrip("/") or "."
        if not (base == "." or base.startswith(("./", "../"))) or "..." in base:
            return NoCanary(f"the package pattern {pattern!r} is not a directory of the tree")
        directory = inside(request.cwd, base)
        if not within(request.root, directory):
            return NoCanary(f"the package pattern {pattern!r} leads out of the workspace")
        for package in _walk(directory) if recursive else [directory]:
            if _test_files(package):
                found[package] = found.get(package, False) or recursive
    if not found:
        return NoCanary("no package the run tests has test files")
    if len(found) > MAX_PACKAGES:
        return NoCanary(f"the run tests {len(found)} packages (more than {MAX_PACKAGES})")
    return found


def _walk(top: Path) -> list[Path]:
    """`top` and the directories below it that `./...` matches: no links, no directory
    named `testdata` or `vendor` or starting with `.` or `_`, no other module's."""
    found = [top]
    stack = [top]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if not entry.is_dir(follow_symlinks=False) or name in ("testdata", "vendor"):
                continue
            if name.startswith((".", "_")) or os.path.lexists(os.path.join(entry.path, "go.mod")):
                continue
            found.append(Path(entry.path))
            stack.append(Path(entry.path))
    return found


def _test_files(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return sorted(
                e.name
                for e in entries
                if e.name.endswith("_test.go")
                and not e.name.startswith((".", "_"))
                and stat.S_ISREG(e.stat(follow_symlinks=False).st_mode)
            )
    except OSError:
        return []


def _package_clause(root: Path, directory: Path) -> str | None:
    """The package name a test file of `directory` declares (`calc` or `calc_test`)."""
    for name in _test_files(directory):
        rel = (directory / name).relative_to(root).as_posix()
        data = read_untrusted(root, rel, limit=TEST_FILE_MAX_BYTES)
        if not isinstance(data, bytes):
            continue
        match = _PACKAGE.search(_COMMENTS.sub("", data.decode("utf-8", "replace")))
        if match is not None:
            return match[1]
    return None


def _test_file(package: str, canary: Canary) -> str:
    left, right = unequal()
    failing = f'\tt.Fatalf("got %d, want %d", {left}, {right})\n'
    if canary.must_pass:
        imports = '(\n\t"os"\n\t"runtime"\n\t"strconv"\n\t"testing"\n)'
        body = _CHANNEL_HOLDS.format(fail=failing)
    else:
        imports, body = '"testing"', failing
    return (
        # What Go's tools take for generated code, which linters leave alone.
        "// Code generated for one run. DO NOT EDIT.\n\n"
        f"package {package}\n\nimport {imports}\n\nfunc {canary.name}(t *testing.T) {{\n{body}}}\n"
    )


#: The must-pass canary's body: the binary's output still goes where `go test` sent it.
#: `go test` gives a test binary one file for its stdout and stderr (its `Stdout` and
#: `Stderr` are the same writer), and the testing package writes each test's outcome to
#: `os.Stdout`. Code under test that points `os.Stdout` elsewhere (through another name:
#: `p := os.Stdout; *p = *w`), or fd 1, can rewrite every line on its way out (a red team's
#: sent them through an `awk` it started, which turned "--- FAIL: TestAdd" into a pass and
#: outlived the binary, so that nothing was lost at its exit), sparing the canaries. The
#: canary runs as a parallel test, so after every test of the package that is not one.
#: The file must also be one the binary's parent (`go`, which reads it) holds: a C
#: constructor in a cgo preamble can `dup2` one pipe of its own onto fd 1 and fd 2 before Go
#: starts (a red team's, read by an awk it forked), and `go` never holds that pipe.
_CHANNEL_HOLDS = """\
\tt.Parallel()
\tout, errOut := os.Stat("/dev/fd/1")
\terrs, errErr := os.Stat("/dev/fd/2")
\tunread := errOut != nil || errErr != nil
\theld := func() bool {{
\t\tdir := "/proc/" + strconv.Itoa(os.Getppid()) + "/fd"
\t\tentries, err := os.ReadDir(dir)
\t\tif unread || runtime.GOOS != "linux" || err != nil {{
\t\t\treturn true
\t\t}}
\t\tfor _, entry := range entries {{
\t\t\tif info, err := os.Stat(dir + "/" + entry.Name()); err == nil && os.SameFile(info, out) {{
\t\t\t\treturn true
\t\t\t}}
\t\t}}
\t\treturn false
\t}}
\tif os.Stdout.Fd() != 1 || os.Stderr.Fd() != 2 || (unread && runtime.GOOS == "linux") ||
\t\t(!unread && !os.SameFile(out, errs)) || !held() {{
\t{fail}\t}}
"""


def _package_events(result: ProcessResult) -> Iterator[tuple[str, object, object]]:
    """(package, test, action) of each `go test -json` event that names its package."""
    for event in json_lines(result.stdout.text):
        package = event.get("Package")
        if isinstance(package, str):
            yield package, event.get("Test"), event.get("Action")


def _failed_packages(result: ProcessResult, canaries: Sequence[Canary]) -> frozenset[str] | None:
    """The groups whose package failed as a whole; None when a package failed that no
    canary was reported in (one that did not build: it may be any unreported group)."""
    group_of = {c.name: c.group for c in canaries}
    reported: dict[str, str] = {}
    failed: set[str] = set()
    for package, test, action in _package_events(result):
        if isinstance(test, str) and test in group_of:
            reported[package] = group_of[test]
        elif not test and action == "fail":
            failed.add(package)
    failed.update(_NOT_BUILT.findall(result.stdout.text))
    if any(package not in reported for package in failed):
        return None
    return frozenset(reported[package] for package in failed)


def _canary_package_checks(
    canaries: Sequence[Canary], result: ProcessResult, _parsed: ParsedOutput
) -> list[str]:
    """The must-fail canary's package failed as a package, with that canary and nothing
    else: it holds no code of the project's, so no other test runs there."""
    (failing,) = (c.name for c in canaries if not c.must_pass)
    packages: set[str] = set()
    others: dict[str, str] = {}
    failed: set[str] = set()
    for package, test, action in _package_events(result):
        if test == failing:
            packages.add(package)
        elif isinstance(test, str) and test:
            others.setdefault(package, test)
        elif action == "fail":
            failed.add(package)
    problems = []
    for package in sorted(packages):
        if package not in failed:
            problems.append(f"package {package}, planted to fail, was not reported failed")
        if package in others:
            problems.append(
                f"package {package}, planted to hold one test, reported {others[package]}"
            )
    return problems
