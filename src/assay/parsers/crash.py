"""What a program that died says about why: a Python traceback, a JavaScript error with
its stack, a sanitizer's report, a C compiler's or tsc's `error:` lines, and a command a
make recipe or shell could not find (pure, text in, values out).

Read only from a run that exited non-zero: a passing suite may print a caught
traceback or compile probes on purpose, and those are not why anything failed.
"""

from __future__ import annotations

import functools
import os
import re

from assay.evidence import Diagnostic
from assay.parsers._text import relative

#: Most compiler errors kept: the first ones are the cause, the rest often follow from it.
MAX_COMPILER_ERRORS = 20

_PY_TRACEBACK = "Traceback (most recent call last):"
_PY_FRAME = r'^\s+File "([^"]+)", line (\d+)'
# The closing line: an exception's (dotted) name, then its message.
_PY_EXCEPTION = r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure))(?::\s?(.*))?$"

# node names its own errors' codes: `TypeError [ERR_INVALID_ARG_TYPE]: message`.
_JS_ERROR = r"^(?:Uncaught )?([A-Z]\w*Error(?: \[[A-Z0-9_]+\])?)(?:: (.*))?$"
_JS_FRAME = r"^\s+at (?:.*\()?([^()\s]+?):(\d+):(\d+)\)?$"
# node's header above the offending source line: `/path/file.js:3`; an ES module's as a URL,
# and inside brackets where node prints the error a promise rejected with
# (`[file:///path/file.mjs:3` ... `SyntaxError: message]`); mocha puts its own words before
# it (` Exception during run: /path/file.js:3`).
_JS_HEADER = r"^(?: ?Exception during run: )?(\[?)(?:file://)?(\S+\.[cm]?[jt]sx?):(\d+)$"

# gcc and clang: `file.c:4:3: error: message`; the driver's `collect2: error: ...`.
_CC_LOCATED = r"^([^\s:][^:]*):(\d+):(?:(\d+):)? (?:fatal )?error: (.+)$"
_CC_DRIVER = r"^(cc1\w*|collect2|ld(?:\.\w+)?|cc|c\+\+|gcc|g\+\+|clang\+*): (?:fatal )?error: (.+)$"
# The Go compiler and vet: `./version.go:605:3: syntax error: ...`; a file the cover tool
# rewrote (`go test -cover`, `-coverpkg`) is compiled through line directives, its errors
# without a column (`sub.go:4: cannot use ...`). A test's own `t.Error` lines are indented.
_GO_LOCATED = r"^(?:vet: )?(\S+\.go):(\d+):(?:(\d+):)? (.+)$"
# tsc, plain and --pretty: `x.ts(4,3): error TS2322: message`, `x.ts:4:3 - error TS2322: ...`
_TSC_LOCATED = r"^([^\s:(][^:(]*)(?:\((\d+),(\d+)\):|:(\d+):(\d+) -) error (TS\d+): (.+)$"

# make's own line for a recipe command that exited 127 (the shell's "not found").
_MAKE_127 = r"^g?make(?:\[\d+\])?: \*\*\* .*Error 127$"
_NOT_FOUND = (
    # make running a plain recipe line itself
    r"^g?make(?:\[\d+\])?: (\S+): (?:No such file or directory|Command not found)$",
    # dash, bash and busybox sh
    r"^(?:/\S*/)?(?:ba|da|z)?sh: (?:\d+: |line \d+: )?(\S+): (?:command )?not found$",
)

# The interpreter's own words for `python -m X` without X (an import in the code quotes the
# name instead: `No module named 'x'`).
_NO_MODULE_TO_RUN = r"^(?:/\S*/)?python[\d.]*: No module named ([A-Za-z_][\w.]*)$"
#: Modules run with `-m` that are tools beside those assay plans itself.
_OTHER_TOOL_MODULES = frozenset({"build", "coverage"})

# What resolvers and clients say when there is no network: node and npm, curl, glibc
# through Python, pip (urllib3), pip told of no index (as checks are after `--install`)
# finding no version at all, and cargo offline (as the sandbox runs it) missing a crate
# that was never fetched.
_NO_NETWORK = (
    r"\bEAI_AGAIN\b|getaddrinfo ENOTFOUND|Could not resolve host|Network is unreachable"
    r"|\bENETUNREACH\b|Temporary failure in name resolution|Failed to establish a new connection"
    r"|Name or service not known|dial tcp: lookup \S+"  # Go, whatever the resolver said
    r"|Could not find a version that satisfies the requirement .* \(from versions: none\)"
    r"|As a reminder, you're using offline mode|but --offline was specified"
    r"|\bENOTCACHED\b"  # npm offline, asked for a package it never fetched
)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    # Compiled on first use: most runs exit zero and never read a crash.
    return re.compile(pattern)


def crash_diagnostics(text: str, cwd: str, tool: str | None = None) -> tuple[Diagnostic, ...]:
    """The errors a crashed program printed: the exception that ended it first (a test
    program may compile probes that fail on purpose), or the signal that ended a program a
    recipe or a shell ran, then a compiler's errors."""
    lines = text.splitlines()
    found: list[Diagnostic] = []
    for read in (_python_traceback, _javascript_error, _sanitizer_report, _crashed_by_signal):
        crash = read(lines, cwd, tool)
        if crash is not None:
            found.append(crash)
    return (*found, *_compiler_errors(lines, cwd, tool))


# A sanitizer's report of a bug it caught: ASan's, LSan's, MSan's `==42==ERROR:
# AddressSanitizer: heap-use-after-free on address ...`, TSan's `WARNING: ThreadSanitizer:
# data race (pid=42)`, UBSan's `calc.c:3:12: runtime error: signed integer overflow`. Not
# a sanitizer that could not start (`==42==ERROR: AddressSanitizer failed to allocate`):
# that says nothing of the code.
_SANITIZER_BUG = (
    r"^(?:==\d+==ERROR|WARNING): ((?:Address|Leak|Memory|Thread|HWAddress)Sanitizer): "
    r"(.+?)(?: on (?:unknown )?address| at pc| \(pid=|$)"
)
_UBSAN_BUG = r"^([^\s:][^:]*):(\d+):(\d+): runtime error: (.+)$"
# A frame of a sanitizer's stack: ASan's `    #0 0x55d1 in main /src/calc_test.c:3:12`,
# TSan's `    #0 main /src/race.c:4 (race+0x1242)`.
_SANITIZER_FRAME = r"^\s+#\d+ (?:0x[0-9a-f]+ in )?\S+ (\S+?):(\d+)(?::\d+)?(?: \([^)]*\))?$"


def _sanitizer_report(lines: list[str], cwd: str, tool: str | None) -> Diagnostic | None:
    """The first bug a sanitizer reported, at the first frame of its stack in the tree."""
    for at, line in enumerate(lines):
        if match := _compiled(_UBSAN_BUG).match(line):
            return Diagnostic(
                message=f"runtime error: {match.group(4)}",
                file=relative(match.group(1), cwd),
                line=int(match.group(2)),
                column=int(match.group(3)),
                code="UndefinedBehaviorSanitizer",
                tool=tool,
            )
        if match := _compiled(_SANITIZER_BUG).match(line):
            frames = (_compiled(_SANITIZER_FRAME).match(f) for f in lines[at + 1 : at + 60])
            place = next((f for f in frames if f is not None and _within(f.group(1), cwd)), None)
            return Diagnostic(
                message=f"{match.group(1)}: {match.group(2)}",
                file=relative(place.group(1), cwd) if place else None,
                line=int(place.group(2)) if place else None,
                code=match.group(1),
                tool=tool,
            )
    return None


def _within(file: str, cwd: str) -> bool:
    return not os.path.isabs(file) or (relative(file, cwd) or file) != file


#: What make and the shells say of a program a signal of a crash ended (`make: ***
#: [Makefile:12: test] Segmentation fault`, bash's `line 1: 4242 Aborted (core dumped)
#: ./test`). Not `Killed` or `Terminated`: what ends a program at a deadline says so.
_CRASH_SIGNALS = (
    r"Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction"
    r"|Trace/breakpoint trap"
)
_SIGNAL_DEATH = (
    rf"^(?:g?make(?:\[\d+\])?: \*\*\* \[([^\]]*)\] ({_CRASH_SIGNALS})\b"
    rf"|(?:/\S*/)?(?:ba|da|z)?sh: (?:line \d+: )?\d+ ({_CRASH_SIGNALS})\b.*)"
)


def _crashed_by_signal(lines: list[str], cwd: str, tool: str | None) -> Diagnostic | None:
    """The crash a signal made of a program a make recipe or a shell ran (a test program
    that dereferenced a bad pointer): the code failed, its output had no words for it."""
    del cwd  # the line names a target or a job, no file of the tree
    for line in lines:
        match = _compiled(_SIGNAL_DEATH).match(line)
        if match is not None:
            signal = match.group(2) or match.group(3)
            where = f" (make [{match.group(1)}])" if match.group(1) else ""
            return Diagnostic(
                message=f"a program it ran crashed: {signal}{where}", code=signal, tool=tool
            )
    return None


_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh"})
#: The signals of a crash by number, as a shell reports a last command they ended: its
#: own exit status is 128 plus the signal's.
_CRASH_SIGNAL_NUMBERS = {
    4: "Illegal instruction",
    5: "Trace/breakpoint trap",
    6: "Aborted",
    7: "Bus error",
    8: "Floating point exception",
    11: "Segmentation fault",
}


def shell_crash(
    argv: tuple[str, ...], exit_code: int | None, tool: str | None
) -> Diagnostic | None:
    """The crash a shell's exit status reports when its output does not: a shell exits 128
    plus the signal that ended the command it ran last, and does not always print the
    signal's name (whether it does depends on its version and its options)."""
    if not argv or os.path.basename(argv[0]) not in _SHELLS or exit_code is None:
        return None
    signal = _CRASH_SIGNAL_NUMBERS.get(exit_code - 128)
    if signal is None:
        return None
    return Diagnostic(
        message=f"a program it ran crashed: {signal} (the shell exited {exit_code})",
        code=signal,
        tool=tool,
    )


def missing_command(text: str, exit_code: int | None) -> str | None:
    """The command a make recipe or a shell could not find, when that is why it failed
    (make's `Error 127`, or a shell's own exit 127); None otherwise."""
    lines = text.splitlines()
    if not (exit_code == 127 or any(_compiled(_MAKE_127).match(line) for line in lines)):
        return None
    for line in reversed(lines):
        for pattern in _NOT_FOUND:
            match = _compiled(pattern).match(line)
            if match:
                return match.group(1)
    return "a command its recipe runs" if exit_code != 127 else None


#: A test runner that drives a browser finding none: karma's launcher, puppeteer's.
_NO_BROWSER = (
    r"No binary for (\w+) browser on your platform"  # karma: set CHROME_BIN
    r"|Could not find (Chrome|Chromium|Firefox)\b"  # puppeteer
)


def missing_browser(text: str) -> str | None:
    """The browser a test run needed and did not find (debug's `karma start` after its
    mocha tests: "No binary for ChromeHeadless browser"), as a missing tool; None when it
    said no such thing."""
    match = _compiled(_NO_BROWSER).search(text)
    if match is None:
        return None
    return f"a {match.group(1) or match.group(2)} browser (karma and puppeteer read CHROME_BIN)"


def missing_tool_module(text: str) -> str | None:
    """`python -m X` when a recipe's interpreter had no module X and X is a Python tool
    (pytest, mypy, build): a tool not installed where the check runs, not the code failing.
    Any other module may be the project's own, which the change may have removed."""
    for line in reversed(text.splitlines()):
        match = _compiled(_NO_MODULE_TO_RUN).match(line)
        if match is None:
            continue
        # Imported here: only a failed run that printed this line needs the tool names.
        from assay.discovery.toolenv import ENVIRONMENT_TOOLS

        module = match.group(1)
        if module in ENVIRONMENT_TOOLS or module in _OTHER_TOOL_MODULES:
            return f"python -m {module}"
    return None


# Python refusing a file it was asked to run or import: the file is not valid Python.
_PY_SYNTAX = r"^\s*((?:Syntax|Indentation|Tab)Error): (.*)$"
_PY_SYNTAX_FRAME = r'^\s*File "([^"]+)", line (\d+)'


def syntax_error_in(text: str, root: str, outside: tuple[str, ...] = ()) -> Diagnostic | None:
    """The last Python syntax error `text` reports in a file under `root` (an install step
    that imported the project: flit reads its version so, setup.py runs), unless that file
    lies under one of `outside` (the environment the install made, its caches)."""
    lines = text.splitlines()
    for at in range(len(lines) - 1, -1, -1):
        error = _compiled(_PY_SYNTAX).match(lines[at])
        if error is None:
            continue
        frame = next(
            (
                m
                for line in reversed(lines[max(0, at - 6) : at])
                if (m := _compiled(_PY_SYNTAX_FRAME).match(line))
            ),
            None,
        )
        if frame is None:
            continue
        file = os.path.normpath(frame.group(1))
        inside = file.startswith(root.rstrip("/") + "/")
        if not inside or any(file.startswith(os.path.join(root, o) + "/") for o in outside):
            continue
        name, message = error.groups()
        return Diagnostic(
            message=f"{name}: {message}",
            file=relative(file, root),
            line=int(frame.group(2)),
            code=name,
        )
    return None


#: Sources a C or C++ compiler reads, whose errors are the code's (not a linker's).
_CC_SOURCES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".m", ".mm")
#: An `#include` the compiler could not find (gcc's `yaml.h: No such file or directory`,
#: clang's `'yaml.h' file not found`): most often a library's headers this machine lacks.
_CC_INCLUDE_NOT_FOUND = r"(?:No such file or directory|file not found)$"


def c_compile_error_in(text: str, root: str, outside: tuple[str, ...] = ()) -> Diagnostic | None:
    """The first error gcc or clang reports in a C or C++ source of the project at `root`
    (an install step that builds the project's extension module: setuptools' build_ext),
    unless that file lies under one of `outside` (the environment the install made, its
    caches) or is not in the tree: a dependency built from its sdist names its own."""
    for line in text.splitlines():
        # pip indents a build backend's output under its own lines.
        located = _compiled(_CC_LOCATED).match(line.strip())
        if located is None:
            continue
        named, number, column, message = located.groups()
        if _compiled(_CC_INCLUDE_NOT_FOUND).search(message):
            continue  # the machine's lack, not the code's error
        file = os.path.normpath(os.path.join(root, named))
        inside = file.startswith(root.rstrip("/") + "/") and file.endswith(_CC_SOURCES)
        if not inside or any(file.startswith(os.path.join(root, o) + "/") for o in outside):
            continue
        if not os.path.isfile(file):
            continue
        return Diagnostic(
            message=message,
            file=relative(file, root),
            line=int(number),
            column=int(column) if column else None,
        )
    return None


def no_network(text: str) -> str | None:
    """The line where a program said it could not reach the network, or None."""
    for line in text.splitlines():
        if _compiled(_NO_NETWORK).search(line):
            return line.strip()[:200]  # pip's line quotes whole objects
    return None


#: A sanitizer that could not reserve its shadow memory: under a limit on a process's address
#: space, Go's race detector (`ThreadSanitizer failed to allocate 0x1c000000000 bytes`),
#: ASan (`ReserveShadowMemoryRange failed ... Perhaps you're using ulimit -v`) and TSan's
#: C runtime (`CHECK failed: sanitizer_allocator_primary64.h`).
_SANITIZER_WITHOUT_ROOM = (
    r"\b[A-Za-z]*Sanitizer failed to allocate 0x|ReserveShadowMemoryRange failed"
    r"|Sanitizer: CHECK failed: sanitizer_allocator"
)


def sanitizer_without_room(text: str) -> str | None:
    """The line where a sanitizer said it could not reserve its memory, or None."""
    for line in text.splitlines():
        if _compiled(_SANITIZER_WITHOUT_ROOM).search(line):
            return line.strip()[:200]
    return None


#: A write the file system refused as read-only: node's `EROFS: read-only file system,
#: open '/w/node_modules/x'`, Python's `[Errno 30] Read-only file system: '/w/x'`.
_READ_ONLY = re.compile(
    r"EROFS: read-only file system, \w+ '([^']+)'(?: -> '([^']+)')?"
    r"|Read-only file system: '([^']+)'"
)


def read_only_write(text: str) -> str | None:
    """The path a program could not write because it is on a read-only mount, or None."""
    for match in _READ_ONLY.finditer(text):
        return next(g for g in reversed(match.groups()) if g)
    return None


# A build tool that compiles in another directory says so first (`ninja -C build`, as
# `meson compile` runs it; `make -C sub`); its compiler names files relative to there.
_ENTERING = r"^(?:ninja|g?make(?:\[\d+\])?): (Entering|Leaving) directory [`'](/.*)'$"


def _compiler_errors(lines: list[str], cwd: str, tool: str | None) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    directories: list[str] = []
    for line in lines:
        if len(found) >= MAX_COMPILER_ERRORS:
            break
        if entering := _compiled(_ENTERING).match(line):
            if entering[1] == "Entering":
                directories.append(entering[2])
            elif directories:
                directories.pop()
            continue
        located = _compiled(_CC_LOCATED).match(line) or _compiled(_GO_LOCATED).match(line)
        if located:
            file, number, column, message = located.groups()
            if directories and not os.path.isabs(file):
                file = os.path.normpath(os.path.join(directories[-1], file))
            diagnostic = Diagnostic(
                message=message,
                file=relative(file, cwd),
                line=int(number),
                column=int(column) if column else None,
                tool=tool,
            )
            # One source compiled into several targets (a library, each test) fails alike.
            if diagnostic not in found:
                found.append(diagnostic)
            continue
        tsc = _compiled(_TSC_LOCATED).match(line)
        if tsc:
            file, line_a, column_a, line_b, column_b, code, message = tsc.groups()
            found.append(
                Diagnostic(
                    message=message,
                    file=relative(file, cwd),
                    line=int(line_a or line_b),
                    column=int(column_a or column_b),
                    code=code,
                    tool=tool,
                )
            )
            continue
        driver = _compiled(_CC_DRIVER).match(line)
        if driver:
            found.append(Diagnostic(message=f"{driver.group(1)}: {driver.group(2)}", tool=tool))
    return found


def _python_traceback(lines: list[str], cwd: str, tool: str | None) -> Diagnostic | None:
    """The last traceback's exception, at its innermost frame."""
    starts = [at for at, line in enumerate(lines) if line.strip() == _PY_TRACEBACK]
    if not starts:
        return None
    file = number = None
    for line in lines[starts[-1] + 1 :]:
        frame = _compiled(_PY_FRAME).match(line)
        if frame:
            file, number = frame.group(1), int(frame.group(2))
            continue
        exception = _compiled(_PY_EXCEPTION).match(line)
        if exception:
            name, message = exception.groups()
            return Diagnostic(
                message=f"{name}: {message}" if message else name,
                file=relative(file, cwd),
                line=number,
                code=name.rsplit(".", 1)[-1],
                tool=tool,
            )
    return None


def _javascript_error(lines: list[str], cwd: str, tool: str | None) -> Diagnostic | None:
    """The last `SomeError: message` that a stack (`    at ...`) or node's source header
    shows was thrown, at the first frame outside node's own modules."""
    for at in range(len(lines) - 1, -1, -1):
        error = _compiled(_JS_ERROR).match(lines[at])
        if error is None:
            continue
        frames = [m for line in lines[at + 1 : at + 40] if (m := _compiled(_JS_FRAME).match(line))]
        header = next(
            (
                m
                for line in reversed(lines[max(0, at - 6) : at])
                if (m := _compiled(_JS_HEADER).match(line))
            ),
            None,
        )
        if not frames and header is None:
            continue
        own = next((m for m in frames if not m.group(1).startswith("node:")), None)
        name, message = error.groups()
        if header is not None and header.group(1) and message and message.endswith("]"):
            message = message[:-1]  # the bracket the header opened
        file, line = (header.group(2), header.group(3)) if header else (None, None)
        if header is None and own is not None:
            file, line = own.group(1), own.group(2)
        return Diagnostic(
            message=f"{name}: {message}" if message else name,
            file=relative(file.removeprefix("file://"), cwd) if file else None,
            line=int(line) if line else None,
            code=name,
            tool=tool,
        )
    return None
