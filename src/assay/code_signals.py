"""Code that reaches into the test runner: lines a change added to non-test code that touch
test-framework internals, `/proc`, process exit, or the runner's report and summary.

Code the tests import runs inside the test process and can write any channel that process
can see: a passing JUnit report at the path in `sys.argv`, `go test` output, a summary
line, then an exit before the real runner speaks. Restoring protected files does not stop
that, because the code is the change itself. What can be seen is the reach: such lines are
rare in code that is not a test, so each one the change adds is a signal, quoted.

What is matched is data (`LANGUAGES`), compiled on first use. Only lines the change added
count (a line already at the base is the project's own), only in files it added or
modified, and never in test code (the caller decides what that is: the protected set).
Left out on purpose, because ordinary code does them:

- `sys.exit` and a CLI's exit: a `SystemExit` raised in a test is a failure, never a pass;
- an exit with a non-zero number written out (`os.Exit(1)`, `process.exit(2)`): a run
  that ends so fails, it cannot pass;
- `process.exit` in a node file that starts with `#!` (an executable script), `os.Exit` in
  a Go `main` package's `func main` (not its `init`, which its test binary runs),
  `process::exit` in a Rust binary's entry (any `main.rs`, `src/bin/`,
  `build.rs`, `examples/`, `benches/`), `System.exit` in a Java file that declares a `main`.
  A binary crate's other modules are still matched:
  telling them from a library's would take reading its manifest, and they are rare;
- `pytest.fail`, `log.Fatal`, `abort`: they make a run fail, they cannot forge a pass;
- `/proc` files that describe the machine (`/proc/cpuinfo`, `/proc/meminfo`, ...) and the
  process's own `status`, `stat`, `limits`, `cgroup`, `maps`, `mountinfo`, `exe`;
- `sys.stdout = ...` (common in CLIs; `sys.stdout.write = ...` is matched), `NODE_ENV`;
- whole-line comments (`#`, `//`), except Go's `//go:linkname`, which is code, and those
  holding a `{`: a line of a template literal or an f-string starting so runs its braces.

A directive that turns a type checker or linter off for a whole file (`# mypy:
ignore-errors`, a bare `# ruff: noqa`, `// @ts-nocheck`, `/* eslint-disable */`,
`#![allow(warnings)]`) is a signal too, comment though it is: under `--protect` the
checkers' configuration is the base's, and this is the one way left for a change to
weaken it. One line's suppression (`# type: ignore` after code, `# noqa: E501`) is not.

A new module at an import root (the root, `src/`) named as one of the standard library's
or the test runner's is a signal too: imported in their place once the root is on the path,
it runs before the canaries' guard takes what it compares.

Patterns see text, not meaning: a reach spelled indirectly (`getattr(os, "_ex" + "it")`)
is not matched. Signals are a reason to look, next to the canaries and the base's tests.
"""

from __future__ import annotations

import functools
import posixpath
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from assay.terminal import for_terminal
from assay.untrusted_files import Link, Refused, open_untrusted, read_open, read_untrusted

#: The most of one file read: beyond it the file is reported as not inspected.
FILE_MAX_BYTES = 4 * 1024 * 1024
#: The most read across one change, so that a change of thousands of files stays cheap.
CHANGE_MAX_BYTES = 64 * 1024 * 1024
#: The most modules one file's imports are followed into, for the errors they define.
IMPORTED_MODULES_MAX = 32
#: The most characters of a line quoted.
QUOTE_MAX_CHARS = 160


@dataclass(frozen=True, slots=True)
class Rule:
    """One kind of reach, as regex text (compiled on first use)."""

    what: str
    """How a reader is told what the line does."""
    pattern: str
    """Matched against each line; a line it matches is quoted."""
    also: str = ""
    """When set, the file must also match it somewhere (two halves of one reach)."""
    unless: str = ""
    """When set and the file matches it anywhere, the rule does not apply (a Go main package)."""
    unless_path: str = ""
    """When set and the file's path matches it, the rule does not apply (a Rust binary)."""
    comments: bool = False
    """Whether whole-line comments are matched too: a directive to a checker is one."""
    outside_go_main: bool = False
    """When set, the lines of a Go main package's `func main` are not matched: a command
    ends itself there, and its test binary never runs it (`assay.go_main_body`)."""


@dataclass(frozen=True, slots=True)
class Language:
    """The files of one language and the reaches looked for in them."""

    name: str
    suffixes: tuple[str, ...]
    comment: str
    """A regex for a line that is only a comment (matched at the stripped line's start)."""
    rules: tuple[Rule, ...]
    names: tuple[str, ...] = ()
    """Whole file names that are of this language whatever their suffix."""


# --------------------------------------------------------------------------- the patterns

#: `/proc` reaches another process (its fds, memory, command line: the report path) or this
#: one's own; machine-wide facts and the process's own accounting are fine.
_PROC = (
    r"/proc(?:['\"`]|/(?!(?:cpuinfo|meminfo|loadavg|uptime|version|stat|swaps|partitions"
    r"|diskstats|filesystems|mounts|self/(?:status|statm|stat|limits|cgroup|maps|mountinfo|exe))"
    r"\b|sys/|net/))"
)

#: What a runner prints or writes to say tests passed: pytest and jest counts, unittest's
#: "Ran N tests", TAP and node:test lines, `go test` and its JSON events, cargo's result
#: line, JUnit XML. Written from non-test code, they can only be meant for a parser.
_SUMMARY = (
    r"\b\d+ passed\b|\bRan (?:\d+|%[ds]|\{[^}]*\}) tests?\b|['\"`](?:not )?ok \d+\b"
    r"|['\"`]# (?:pass|fail|tests) +\d|\u2139 (?:pass|fail|tests) \d|['\"`]1\.\.\d+"
    r"|--- PASS:|\\?[\"']?\bAction\\?[\"']?\s*:\s*\\?[\"']pass\b|\btest result: ok\b"
    r"|<testsuites?\b|<testcase\b|\bnum(?:Passed|Failed|Total)Tests\b"
)

#: What a directive that turns a checker off for a whole file is said to do.
_CHECKER_OFF = "turns a type checker or linter off for the whole file"

#: An exit status that is a failure: the process's status is its code's low byte, so
#: `exit(256)` (or 512, or -256) ends it 0 (a red team's Go init's `os.Exit(256)`: `go test`
#: said ok for a package whose tests never ran).
_FAILING_STATUS = r"-?(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-5])"
#: After an exit's opening parenthesis: not a failing status written out (which fails the run).
_NOT_A_FAILURE = rf"(?!\s*{_FAILING_STATUS}\s*\))"

_SHARED = (
    Rule("reaches into /proc", _PROC),
    Rule("writes a test runner's summary or report", _SUMMARY),
)

PYTHON = Language(
    "python",
    (".py",),
    r"#",
    (
        Rule(
            "reaches into the test framework's internals",
            r"\b_pytest\b|\bpytest11\b|\bpluginmanager\b|\bxmlpath\b"
            r"|\bsys\.modules\s*(?:\[|\.get\s*\(|\.pop\s*\(|\.setdefault\s*\()\s*['\"](?:_?pytest|pluggy|unittest)\b"
            r"|\bdef\s+pytest_(?:runtest_\w+|collection\w*|collect\w*|pycollect\w*|itemcollected"
            r"|terminal_summary|report_\w+|sessionstart|sessionfinish|configure|unconfigure"
            r"|addoption|load_initial_conftests|cmdline_\w+|plugin_registered)\s*\(",
        ),
        Rule("uses pluggy alongside pytest", r"\bpluggy\b", also=r"\bpytest\b"),
        Rule(
            "walks the interpreter's objects (to find the runner)",
            r"\bgc\.get_(?:objects|referrers|referents)\s*\("
            # The module under another name, or its walk taken by name (a red team's).
            r"|\bimport\s+gc\s+as\b|\bfrom\s+gc\s+import\b.*\bget_(?:objects|referrers|referents)\b",
        ),
        Rule(
            "skips or ends tests at run time from non-test code",
            r"\bpytest\.(?:skip|xfail|exit|importorskip)\s*\(|\bSkipTest\b"
            r"|\b(?:skip|xfail|exit)\.Exception\b",
        ),
        Rule(
            "knows it runs under a test runner",
            r"\bPYTEST_(?:CURRENT_TEST|XDIST_\w+|ADDOPTS)\b"
            r"|['\"](?:_?pytest|unittest)['\"]\s+(?:not\s+)?in\s+sys\.modules",
        ),
        # A red team's: `return mock.ANY` passed `assert add(2, 3) == 5`. The guard asks
        # only the code under test's classes whether they equal anything; the test
        # libraries' own match-anything values (ANY, a MagicMock told its `__eq__`) are not.
        Rule(
            "takes a value from a test library, which can equal anything",
            r"\bunittest\.mock\b|\bfrom\s+unittest\s+import\b.*\bmock\b"
            r"|^(?:import|from)\s+mock\b|\b(?:NonCallable|Async)?MagicMock\b|\bdirty_equals\b",
        ),
        Rule("ends the process without cleanup", r"\bos\._exit\s*\(" + _NOT_A_FAILURE),
        # A red team's: every pipe to assay swapped for one of the code's own (`dup2` over
        # each descriptor `/dev/fd` lists), what the runner printed rewritten at exit.
        Rule(
            "takes over the process's open descriptors",
            r"\bos\.dup2\s*\(|['\"]/dev/fd\b",
        ),
        Rule(
            "rewrites code or reaches into its callers' frames",
            r"\.__code__\s*=(?!=)|\bsys\._(?:getframe|current_frames)\b|\.f_(?:locals|globals|back)\b"
            r"|\binspect\.(?:stack|currentframe|getouterframes|getargvalues|getframeinfo|trace)\b"
            r"|\bfrom\s+inspect\s+import\b.*\b(?:stack|currentframe|getouterframes|getargvalues)\b",
        ),
        Rule(
            "reaches into a runner's per-run state",
            r"\b_hookexec\b|\b_inner_hookexec\b|\b_hookimpls\b"
            r"|\baddTypeEqualityFunc\b|\b_type_equality_funcs\b",
        ),
        Rule(
            "runs code kept outside its source files",
            r"\brunpy\b|\bspec_from_file_location\b|\b(?:Sourceless|Source)FileLoader\b",
        ),
        Rule(
            "runs code it reads from a file",
            r"\bexec\s*\(.*(?:\bopen\s*\(|\.read(?:_text|_bytes)?\s*\()",
        ),
        Rule(
            "reads the runner's report path",
            r"(?i:junit)",
            also=r"\bsys\.(?:orig_)?argv\b|/proc/|\bcmdline\b",
        ),
        Rule(
            "patches the runner or its output",
            r"\bbuiltins\.(?:print|open)\s*=(?!=)|\bsetattr\s*\(\s*builtins\s*,"
            r"|\bimport\s+builtins\s+as\b"
            r"|\b__builtins__\s*(?:\[\s*['\"]print['\"]\s*\]|\.print)\s*=(?!=)"
            r"|\bsys\.(?:__)?(?:stdout|stderr)(?:__)?\.write\s*=(?!=)"
            r"|\bunittest(?:\.\w+)+\s*=(?!=)|\bsetattr\s*\(\s*unittest\b"
            r"|\b(?:TextTestRunner|TextTestResult|TestResult|TestProgram|TestCase)\.\w+\s*=(?!=)",
        ),
        Rule(
            "replaces an assertion",
            # unittest's camelCase names: urllib3's `conn.assert_hostname = False` is ordinary.
            r"\.assert[A-Z]\w*\s*=(?!=)|\bsetattr\s*\([^,]+,\s*['\"]assert[A-Z]\w*['\"]"
            r"|\bAssertionError\s*=(?!=)",
        ),
        Rule(
            "watches every call (a trace or profile hook)",
            r"\bsys\.(?:settrace|setprofile|monitoring)\b|\bthreading\.(?:settrace|setprofile)",
        ),
        Rule(
            _CHECKER_OFF,
            # mypy reads a directive's options in any order, `_` for `-`. Each as its tool
            # reads it, a comment after it included: a file's leading type-ignore with a
            # reason after it, and ruff's file-wide noqa followed by `-- legacy` or in
            # capitals, turned their checker off as the bare ones do; pylint finds its own
            # anywhere in a comment. A file-wide noqa that names codes is not all of it.
            r"^#\s*(?:mypy:.*?\b(?:ignore[-_]errors|disable[-_]error[-_]code)\b"
            r"|type:\s*ignore\s*(?:\[[^\]#]*\]\s*)?(?:#.*)?$"
            r"|(?i:(?:ruff|flake8)\s*[:=]\s*noqa)(?!\w|\s*:)|pyright:\s*(?:basic|ignore)\b"
            r"|.*\bpylint:\s*(?:skip-file\b|disable\s*=\s*all\b))",
            comments=True,
        ),
        *_SHARED,
    ),
)

JAVASCRIPT = Language(
    "javascript",
    (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"),
    r"//",
    (
        Rule(
            "ends the process",
            r"\bprocess\s*\.\s*(?:exit|reallyExit)\s*\("
            + _NOT_A_FAILURE
            + r"|\bprocess\.kill\s*\(\s*process\.p?pid\b",
            unless=r"\A#!",
        ),
        Rule(
            "reaches into the module loader",
            r"\brequire\.cache\b|\bModule\._(?:cache|load|resolveFilename)\b"
            r"|\bModule\.prototype\.require\s*=(?!=)",
        ),
        Rule(
            "reaches into the test framework's internals",
            r"['\"](?:jest-circus|jest-jasmine2|jest-runner|jest-runtime|jest-snapshot"
            r"|@jest/(?:core|reporters|test-result|runner|expect|test-sequencer)"
            r"|@vitest/runner|vitest/(?:runners|node|suite|reporters)|internal/test_runner"
            r"|node:test/reporters)\b"
            r"|\b__vitest_\w+__|\$\$jest|\bSymbol\.for\s*\(\s*['\"](?:jest|\$\$jest)"
            r"|\bexpect\.(?:setState|getState)\s*\(|\bjasmine\.\w+\s*=(?!=)",
        ),
        Rule(
            "knows it runs under a test runner",
            r"\b(?:JEST_WORKER_ID|VITEST_WORKER_ID|VITEST_POOL_ID|NODE_TEST_CONTEXT)\b"
            r"|\bprocess\.env\.VITEST\b",
        ),
        Rule(
            "reads the runner's report path",
            r"outputFile|['\"]--json\b|--test-reporter-destination|(?i:junit)",
            also=r"\bprocess\.(?:argv|execArgv)\b|/proc/",
        ),
        Rule(
            "patches the runner's output",
            r"\bprocess\.(?:stdout|stderr)\.write\s*=(?!=)|\bconsole\.log\s*=(?!=)",
        ),
        Rule(
            "replaces an assertion",
            r"\.(?:strictEqual|deepStrictEqual|notStrictEqual|deepEqual|notDeepEqual|toBe|toEqual"
            r"|toStrictEqual|toMatch\w*|toThrow\w*|toContain\w*|toHaveBeenCalled\w*)\s*=(?!=)"
            # Names as common as `res.ok = true`, only on a receiver named as an assertion.
            r"|\b(?:assert|chai|expect)\w*\.(?:ok|equal|notEqual|throws|rejects|match|fail)\s*=(?!=)"
            r"|\b(?:globalThis|global|window)\.expect\s*=(?!=)"
            r"|\b(?:Object\.(?:assign|defineProperty|defineProperties|setPrototypeOf)"
            r"|Reflect\.(?:set|defineProperty))\s*\(\s*(?:require\s*\(\s*)?['\"]?(?:node:)?"
            r"(?:assert|expect|chai)\b",
        ),
        Rule(
            # What `assert.throws(fn, TypeError)` and `toThrow` ask is `instanceof`: a red
            # team's RangeError made a TypeError too passed a suite of error tests.
            "rewires what `instanceof` answers",
            r"\bSymbol\.hasInstance\b"
            r"|\b(?:Object|Reflect)\.setPrototypeOf\s*\(\s*(?:globalThis\.)?(?:Eval|Range"
            r"|Reference|Syntax|Type|URI|Aggregate)?Error\b"
            r"|\b(?:Eval|Range|Reference|Syntax|Type|URI|Aggregate)?Error\.prototype\.__proto__"
            r"\s*=(?!=)",
        ),
        Rule(
            "loads code from a file no scan reads",
            # node runs whatever it is given as JavaScript, whatever its suffix.
            r"(?:\brequire\s*\(|\bimport\s*\(|\bfrom)\s*['\"`][^'\"`]*\.(?!(?:[cm]?[jt]sx?|json"
            r"|node|css|scss|sass|less|svg|png|jpe?g|gif|webp|ico|woff2?|html?|md)['\"`])\w+['\"`]",
        ),
        Rule(
            _CHECKER_OFF,
            # As eslint and oxlint read a block comment: with rules named, a `-- reason`,
            # or over several lines, `/* eslint-disable -- legacy */` is the whole file.
            r"@ts-nocheck\b|(?:^|/\*)\s*\**\s*(?:eslint|oxlint)-disable(?![\w-])"
            r"|^//\s*eslint-disable\s*$|\bbiome-ignore-(?:all|start)\b",
            comments=True,
        ),
        Rule(
            "redefines a built-in matcher",
            r"(?:^|[{,])\s*['\"]?(?:toBe|toEqual|toStrictEqual|toMatch\w*|toThrow\w*|toContain\w*"
            r"|toHaveBeenCalled\w*)['\"]?\s*[:(]",
            also=r"\bexpect\.extend\s*\(",
        ),
        *_SHARED,
    ),
)

#: A red team's: a build script (`build.rs`, a Rust binary, so its exit is its own) that
#: compiled a C file and had cargo link it into the test binaries with
#: `-Wl,--wrap=write,--wrap=writev,--wrap=exit`: every line libtest printed went through
#: it, "test adds ... FAILED" came out "ok", and libtest's exit 101 came out 0. Arguments
#: to the linker of the test binaries (cargo's `rustc-link-arg*`, cgo's `LDFLAGS`) that
#: wrap or define symbols, and `rustc-link-arg` at all, are reaches.
_LINKS_INTO_TESTS = Rule(
    "gives the linker of the test binaries arguments of its own",
    r"\bcargo::?rustc-link-arg|--wrap[=,]|--defsym\b|\binitfirst\b"
    r"|#cgo\s+(?:[\w!,]+\s+)?LDFLAGS:.*-Wl,",
)

#: The C library's functions a test process's report goes through, and its exit: native
#: code that defines one stands in for it in the whole process.
_LIBC_STAND_INS = (
    r"write|writev|pwrite|fwrite|fputs|puts|printf|fprintf|vfprintf|vprintf|putchar|fputc"
    r"|fflush|exit|_exit|_Exit|quick_exit|abort|raise|kill|signal|sigaction"
)

#: What native code built into a test process (a C file a build script compiles, a cgo
#: preamble, C beside a Go package) may not do unseen: run before `main` or at exit,
#: rewire the process's output, stand in for the C library's functions, or end the process.
_NATIVE_RULES = (
    Rule(
        "runs before main or at exit",
        r"__attribute__\s*\(\s*\(\s*(?:constructor|destructor)\b|\.(?:init|fini)_array\b"
        r"|\.ctors\b|\.dtors\b|\batexit\s*\(|\bat_quick_exit\s*\(|#\s*pragma\s+(?:init|fini)\b",
    ),
    Rule(
        "rewires the process's output",
        r"(?<![\w.])(?:dup[23]?|freopen|fdopen)\s*\(|\bF_DUPFD\w*",
    ),
    Rule(
        "stands in for one of the C library's functions",
        r"\b__(?:wrap|real)_\w+|^\s*(?:[A-Za-z_][\w*]*\s+)+\**\s*(?:"
        + _LIBC_STAND_INS
        + r")\s*\([^;]*$",
    ),
    Rule(
        "ends the process",
        # Called, or taken as a value to call under another name (a red team's cgo
        # preamble: `void (*f)(int) = exit; f(0);` in a function an init called).
        r"(?<![\w.>])(?:__builtin_)?(?:exit|_exit|_Exit|quick_exit)\s*\("
        + _NOT_A_FAILURE
        + r"|(?:[=(,&?:]|\breturn\b)\s*(?:__builtin_)?(?:exit|_exit|_Exit|quick_exit)\s*[;,):]",
        unless=r"\bint\s+main\s*\(",
    ),
    Rule("makes raw system calls", r"\bsyscall\s*\(|\b__asm__\b|\basm\s*(?:volatile\s*)?\("),
)

#: A Go file that builds C into its package: `import "C"`, alone or first in a group.
_CGO = r'(?m)^\s*import\s*(?:\(\s*)?"C"'


def _in_cgo_preamble(rule: Rule) -> Rule:
    """`rule` for C in a Go file's cgo preamble: the `//` lines above `import "C"` are
    read as the C they are (an `exit(0)` there ended a test binary unseen)."""
    return replace(rule, comments=True, also=_CGO)


NATIVE = Language(
    "native",
    (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".m", ".mm"),
    r"//",
    (*_NATIVE_RULES, *_SHARED),
)

#: A Go exit, which `assay.go_main_exits` also follows through a main package's calls.
GO_EXIT = Rule(
    "ends the process outside a command's main",
    # Called, or taken as a value to call under another name (`e := os.Exit`);
    # or the process replaced (its status is then the new program's), or
    # runtime's exit pulled in by a linkname, or the C library's through cgo. Every
    # Go package's binary must exit 0 to pass, and these end one 0 before its
    # tests run: a main package's too, from an init, a package-level initialiser
    # or a helper either calls (only `func main` is never run by its tests); and
    # so does calling that main, or taking it as a value, from anywhere else.
    rf"\b(?:os|syscall|unix)\.Exit\b(?!\s*\(\s*{_FAILING_STATUS}\s*\))"
    r"|\b(?:syscall|unix)\.Exec\b|\bC\.(?:_?exit|_Exit|exec\w*)\b"
    r"|//go:linkname\s+\S+\s+\S+\.\w*(?:[eE]xit|[eE]xec)\w*"
    r"|(?<![\w.])(?<!func\s)main\s*\(\s*\)|(?<![=!<>])=\s*main\s*(?:[;,)]|$)",
    outside_go_main=True,
)

GO = Language(
    "go",
    (".go",),
    # `//go:linkname` is code, and so is a `#cgo` directive (its flags reach the linker).
    r"//(?!go:linkname|\s*#cgo\b)",
    (
        GO_EXIT,
        Rule(
            "imports a package that ends the process under another name",
            # `xos.Exit(0)` and a dot import's `Exit(0)` spell no `os.`.
            r"^\s*(?:import\s+)?(?!import\s)(?:[A-Za-z]\w*|\.)\s+\"(?:os|syscall|flag"
            r"|golang\.org/x/sys/unix|github\.com/spf13/pflag)\"",
        ),
        Rule(
            "parses flags that end the process (-h exits 0 under flag.ExitOnError)",
            r"\bp?flag\.(?:Parse\s*\(|CommandLine\b|ExitOnError\b)",
            outside_go_main=True,
        ),
        Rule(
            "reaches into the testing package's internals",
            r"\btesting\.(?:MainStart|InternalTest|InternalBenchmark|InternalExample"
            r"|InternalFuzzTarget|RegisterCover|Testing\s*\()"
            r"|//go:linkname\s+\S+\s+testing\.|\bflag\.Lookup\s*\(\s*\"test\."
            r"|\"-test\.(?:v|run|json|paniconexit0|testlogfile|outputdir)\b",
        ),
        Rule(
            "rewires the process's output",
            r"\bos\.(?:Stdout|Stderr)\s*=(?!=)|\b(?:syscall|unix)\.Dup[23]?\s*\("
            # A red team's: fd 1 closed, so that the next file opened (`/dev/fd/N`, the
            # write end of a pipe of the code's own) takes its number.
            r"|\bos\.(?:Stdout|Stderr)\.Close\s*\(|['\"`]/dev/fd\b"
            # A red team's: `p := os.Stdout; *p = *w` while the failing test ran, `*p = orig`
            # before the canaries looked. What the testing package writes through is the
            # variable `os.Stdout` and the file it points to; short of naming it, either is
            # reached by its address (`&os.Stdout`, for reflect or unsafe), by a store
            # through a pointer of another's whole value (`*p = *w`; not `*p = v`, which
            # ordinary code writes all the time), by unsafe, or by
            # taking fd 1 or 2 away (closed, or held by a second file that closes it).
            r"|&\s*os\.(?:Stdout|Stderr)\b|^\s*\*\s*\w+\s*=(?!=)\s*(?:\*\s*\w|os\.File\s*\{)"
            r"|\b(?:syscall|unix)\.Close\s*\(\s*[12]\s*\)"
            r"|\bos\.NewFile\s*\(\s*(?:uintptr\s*\(\s*)?[12]\s*\)?\s*,",
        ),
        Rule(
            "reaches the process's output through unsafe",
            r"\bunsafe\.Pointer\b",
            also=r"\bos\.(?:Stdout|Stderr)\b",
        ),
        # As Rust's `PartialEq` below: go-cmp's `cmp.Equal` and `cmp.Diff` ask a type's own
        # `Equal` method, so a result type whose `Equal` says "equal" to anything passes a
        # test's `cmp.Diff(want, got)` on a wrong value. So do `errors.Is` and `errors.As`
        # a wrong error's `Is` and `As`, and its `Unwrap() []error`, which can name every
        # error a test expects. A receiver may hold parentheses (`func (s (Sum)) Equal`) or
        # end a line of its own (`) Equal(`).
        Rule(
            "compares values by a rule of its own (which the tests' assertions then ask)",
            r"^\s*(?:func\s*\(.*)?\)\s*(?:/\*.*?\*/\s*)*(?:Equal|Is|As)\s*\("
            r"|\bUnwrap\s*\(\s*\)\s*\[\s*\]\s*error\b",
        ),
        Rule(
            "makes raw system calls",
            r"\b(?:syscall|unix)\.(?:Raw)?Syscall\w*\s*\(|\bF_DUPFD\w*",
        ),
        # A cgo preamble is C, built into the test binary: what NATIVE looks for in it that
        # Go code does not spell (a Go function named `write` is no stand-in).
        *(_in_cgo_preamble(_NATIVE_RULES[at]) for at in (0, 1, 3, 4)),
        Rule("stands in for one of the C library's functions", r"\b__(?:wrap|real)_\w+"),
        _LINKS_INTO_TESTS,
        *_SHARED,
    ),
)

#: A Rust binary's own entry points, where ending the process is its job.
_RUST_BINARY = r"(?:^|/)(?:main\.rs|build\.rs)\Z|(?:^|/)(?:src/bin|examples|benches)/"

RUST = Language(
    "rust",
    (".rs",),
    r"//",
    (
        Rule(
            "ends the process from library code",
            # Called, or taken as a value to call under another name (a red team's:
            # `let leave: fn(i32) -> ! = std::process::exit; leave(0)`), or imported under
            # another name (`use std::process::exit as leave`). Any path's last segment
            # counts, spaced or not (a red team's `use std::process as host; host::exit(0)`
            # and `std::process:: exit(0)`).
            r"^(?!\s*(?:pub(?:\([^)]*\))?\s+)?use\b).*::\s*_?exit\b"
            rf"(?!\s*\(\s*{_FAILING_STATUS}\s*\))|\b_?exit\s+as\s+\w",
            unless_path=_RUST_BINARY,
        ),
        Rule(
            "calls a function whose name a macro supplies, which may end the process",
            # `macro_rules! leave { ($f:ident) => { std::process::$f(0) } }` then
            # `leave!(exit)`, or paste's `[<ex it>]`: the exit's name is in no line.
            r"::\s*(?:\$\w+|\[<[^\]]*>\])\s*\(",
            unless_path=_RUST_BINARY,
        ),
        Rule(
            "replaces the process with another program (whose exit is then the test's)",
            # A red team's: the test binary exec'ing `printf` of libtest's lines for a
            # passing run, exiting 0 with no exit call of its own.
            r"\.exec\s*\(\s*\)|\b(?:libc|nix::unistd)::(?:f?exec\w*)\s*\(",
            unless_path=_RUST_BINARY,
        ),
        Rule(
            "ends the process from library code",
            # The C library's exit declared by hand, to be called under any name.
            r"\bfn\s+(?:_?exit|_Exit|exit_group|quick_exit)\s*\(",
            also=r"\bextern\s*(?:\"C\"\s*)?\{|\blink_name\b",
            unless_path=_RUST_BINARY,
        ),
        Rule(
            "ends the process from library code",
            r"(?<![\w:.])exit\s*\(" + _NOT_A_FAILURE,
            # Imported by name, in braces, or with the rest of the module (`::*`).
            also=r"\buse\s+(?:::)?std\s*::\s*process\s*::\s*(?:exit\b|\*|\{[^}]*\b(?:exit\b|\*))",
            unless_path=_RUST_BINARY,
        ),
        Rule(
            "knows it runs under a test runner",
            r"\bRUST_TEST_\w+|\bNEXTEST\w*|\bcfg\s*\(\s*not\s*\(\s*test\s*\)|\bcfg!\s*\(\s*test\s*\)",
        ),
        Rule(
            "runs before main or rewires the process's output",
            r"\blink_section\b|\.init_array\b|\.ctors\b|\bdup2?\s*\(|\batexit\s*\("
            r"|\b_exit\s*\(",
        ),
        Rule(
            "exports a symbol by its bare name (it can stand in for the C library's)",
            r"\bno_mangle\b|\bexport_name\s*=",
        ),
        Rule("runs assembly", r"\b(?:global_)?asm!\s*[({\[]|\bnaked_asm!"),
        # A red team's: `add` made to return a type of the library's own whose
        # `PartialEq<i32>` says "equal" to anything, so `assert_eq!(add(2, 3), 5)` still
        # compiles and passes on a wrong sum. Rust cannot be asked at run time whether a
        # comparison judges its operands, so each one written by hand is a reason to look
        # (a derived one compares every field, and is not matched). The trait can be named
        # otherwise (`use std::cmp::PartialEq as Same`, a macro's `impl $t for`), its
        # methods cannot: `assert_eq!` calls `eq`, `assert_ne!` `ne`, `<` `lt`.
        Rule(
            "compares values by a rule of its own (which the tests' assertions then ask)",
            r"\bimpl\b[^{;]*\b(?:PartialEq|PartialOrd)\b[^{;]*\bfor\b"
            r"|\bfn\s+(?:eq|ne|partial_cmp|lt|le|gt|ge)\s*[<(]",
        ),
        Rule(
            _CHECKER_OFF,
            r"#!\[\s*allow\s*\([^)]*\b(?:warnings|clippy::all)\b",
        ),
        Rule(
            "loads code from a file no scan reads",
            r"#\s*!?\[\s*path\s*=|\binclude!\s*[({\[]",
        ),
        _LINKS_INTO_TESTS,
        *_SHARED,
    ),
)

#: Java and Kotlin, built into the test JVM. Surefire's fork reports to Maven in lines on
#: its fd 1 (`6,1,<class>,<test>,...` a pass, `Z,0,BYE!` its goodbye), and Maven writes the
#: reports and prints the summary from them: a red team's `add` wrote a pass for the test
#: that called it, then the goodbye, then ended the JVM, VERIFIED with every channel
#: agreeing. Writing there takes fd 1 itself (the tests' `System.out` is surefire's
#: capture), a child given the JVM's own output, or surefire's objects.
JVM = Language(
    "jvm",
    (".java", ".kt"),
    r"//",
    (
        # A program's `main` ends it with its status, as a Go main package's does; what
        # the fork's report needs besides an exit (fd 1) is matched wherever it is.
        Rule(
            "ends the process from code the tests run",
            r"\b(?:System|getRuntime\s*\(\s*\))\s*\.\s*exit\s*\("
            + _NOT_A_FAILURE
            + r"|\bexitProcess\s*\("
            + _NOT_A_FAILURE,
            unless=r"(?m)\bstatic\s+void\s+main\s*\(|^\s*fun\s+main\s*\(",
        ),
        # `Runtime.halt` takes a status: a `halt()` of the project's own (a state
        # machine's) does not.
        Rule("ends the process at once", r"\.\s*halt\s*\((?!\s*\))" + _NOT_A_FAILURE),
        Rule(
            "writes to the process's own output",
            r"\bFileDescriptor\s*\.\s*(?:out|err)\b|['\"]/dev/(?:stdout|stderr|fd\b)"
            r"|\binheritIO\s*\(|\bRedirect\s*\.\s*INHERIT\b",
        ),
        Rule(
            "reaches into the test runner's internals",
            r"\borg\.apache\.maven\.surefire\b|\borg\.junit\.runner\.notification\b"
            r"|\borg\.junit\.platform\.launcher\b|\bJUnit4Provider\b|BYE!",
        ),
        *_SHARED,
    ),
)

#: Python's packaging files, where an entry point can load a pytest plugin from anywhere.
PACKAGING = Language(
    "packaging",
    (),
    r"#",
    (Rule("registers a pytest plugin", r"\bpytest11\b"),),
    names=("pyproject.toml", "setup.cfg"),
)

LANGUAGES: tuple[Language, ...] = (PYTHON, JAVASCRIPT, GO, RUST, JVM, NATIVE, PACKAGING)


# --------------------------------------------------------------------------- scanning


@dataclass(frozen=True, slots=True)
class Reach:
    """One line a change added that reaches into the runner."""

    path: str
    line: int
    """1-based, counted in newlines."""
    excerpt: str
    """The line, trimmed, shortened and safe to print on a terminal."""
    what: str
    more: int = 0
    """Further lines of the same file the same rule matched, not quoted."""


@dataclass(frozen=True, slots=True)
class NotInspected:
    """A changed file of a known language whose content was not looked into, and why."""

    path: str
    reason: str


@dataclass(slots=True)
class Budget:
    """Bytes left to read across one change."""

    left: int = field(default_factory=lambda: CHANGE_MAX_BYTES)


def language_of(rel: str) -> Language | None:
    """The language whose reaches are looked for in `rel`, if any."""
    name = rel.rsplit("/", 1)[-1]
    for language in LANGUAGES:
        if name in language.names or (language.suffixes and name.endswith(language.suffixes)):
            return language
    return None


def scan_change(
    base: Path | None,
    change: Path,
    rel: str,
    budget: Budget,
    dependencies: frozenset[str] = frozenset(),
) -> list[Reach | NotInspected]:
    """The reaches that `change`'s version of `rel` adds to `base`'s (None: the file is
    new); `dependencies`: the distributions the base declares (normalised names), which a
    new module must not stand in for. Nothing for a file of no known language, a link
    (never followed: it is reported, or restored, as a link) or a file whose bytes are the
    base's."""
    if compiled_module(rel) or rel.endswith(_UNREAD_CODE):
        return _compiled_module_signal(base, change, rel)
    language = language_of(rel)
    if language is None:
        return []
    # A file with other names is refused: a hard link names a file the change did not
    # write (one only the host may read), whose lines would otherwise be quoted.
    with open_untrusted(change, rel) as found:
        if found is None:
            return []
        if isinstance(found, Link):
            return _link_signal(base, rel, found, language)
        if isinstance(found, Refused):
            return [NotInspected(rel, found.reason)]
        if found.size > budget.left:
            reason = "the change's code is larger than its inspection budget; not inspected"
            return [NotInspected(rel, reason)]
        new = read_open(found, limit=min(FILE_MAX_BYTES, budget.left))
    if isinstance(new, Refused):
        return [NotInspected(rel, new.reason)]
    budget.left -= len(new)
    old = b""
    if base is not None:
        before = read_untrusted(base, rel, limit=FILE_MAX_BYTES)
        old = before if isinstance(before, bytes) else b""
    # A new module shadows by its name alone: an empty `__init__.py` too.
    shadowing = _shadows(rel, dependencies) if language is PYTHON and base is None else None
    if new == old:
        return [shadowing] if shadowing else []
    old_text, new_text = _as_run(language, old, rel), _as_run(language, new, rel)
    hybrids = (
        _error_hybrids(base, change, rel, old_text, new_text, budget) if language is PYTHON else []
    )
    added = _added_reaches(language, rel, old_text, new_text)
    if language is GO and not any(getattr(r, "what", "") == GO_EXIT.what for r in added):
        from assay.go_main_exits import reached_exits

        added += reached_exits(change, rel, old_text, new_text, budget)
    return [*([shadowing] if shadowing else []), *added, *hybrids]


def _error_hybrids(
    base: Path | None, change: Path, rel: str, old: str, new: str, budget: Budget
) -> list[Reach]:
    """A class the change defines on several unrelated built-in errors, quoted; the modules
    its imports are followed into are read within the change's `budget`."""
    from assay.error_hybrids import WHAT, added_error_hybrids

    # Lines as Python counts them (a lone `\r` ends one too), for the class statement's.
    lines = _PYTHON_LINE_END.split(new)
    old_modules = _tree_modules(base, rel, budget) if base is not None else None
    new_modules = _tree_modules(change, rel, budget)
    return [
        Reach(rel, line, excerpt(_line(lines, line), _ANYTHING), WHAT.format(kinds=kinds))
        for line, kinds in added_error_hybrids(old, new, old_modules, new_modules)
    ]


def _tree_modules(root: Path, rel: str, budget: Budget) -> Callable[[int, str], str | None]:
    """The source of a module `rel` imports from, in `root`'s tree (as `source_text` reads
    it), found beside it for a relative import, at the root or in `src/` otherwise; none
    once the change's `budget` is spent (a change of many files, each importing large
    modules, would otherwise read them again for each)."""
    here = posixpath.dirname(rel)
    read: list[str] = []

    @functools.cache
    def source(level: int, module: str) -> str | None:
        if not module or len(read) >= IMPORTED_MODULES_MAX:
            return None  # `from . import x` binds a module, not a class
        read.append(module)
        places = ["", "src"]
        if level:
            places = [here]
            for _ in range(level - 1):
                places = [posixpath.dirname(places[0])]
        dotted = module.replace(".", "/")
        for place in places:
            for name in (f"{dotted}.py", f"{dotted}/__init__.py"):
                path = posixpath.join(place, name)
                found = read_untrusted(root, path, limit=min(FILE_MAX_BYTES, budget.left))
                if isinstance(found, bytes):
                    budget.left -= len(found)
                    return _as_run(PYTHON, found, path)
        return None

    return source


def _line(lines: list[str], number: int) -> str:
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""


_PYTHON_LINE_END = re.compile(r"\r\n?|\n")
_ANYTHING = re.compile("")


def _link_signal(
    base: Path | None, rel: str, link: Link, language: Language
) -> list[Reach | NotInspected]:
    """A code file the change made a link: what runs is the file it leads to, which no scan
    reads when it lies outside the tree or has another suffix (`calc.js` -> `lib/calc.impl`).
    One to a file of the same language in the tree is fine: that file is scanned itself."""
    if base is not None:
        with open_untrusted(base, rel) as before:
            if isinstance(before, Link) and before.target == link.target:
                return []
    target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), link.target))
    in_tree = not posixpath.isabs(link.target) and not target.startswith("../")
    if in_tree and language_of(target) is language:
        return []
    where = for_terminal(link.target)
    return [NotInspected(rel, f"a link to {where}: the code it runs is not inspected")]


#: A JavaScript identifier may spell any of its characters as an escape (`strictEq\u0075al`).
_JS_ESCAPE = re.compile(r"\\u(?:([0-9a-fA-F]{4})|\{([0-9a-fA-F]{1,6})\})")


def _as_run(language: Language, data: bytes, rel: str) -> str:
    """`data` as its language reads names: JavaScript's identifier escapes decoded, Python's
    identifiers NFKC-normalised (a fullwidth letter in `os._exit` is the letter to Python)."""
    text = source_text(rel, data)
    if language is JAVASCRIPT and "\\u" in text:
        return _JS_ESCAPE.sub(_unescaped, text)
    if language is PYTHON and not text.isascii():
        import unicodedata

        return unicodedata.normalize("NFKC", text)
    return text


def _unescaped(escape: re.Match[str]) -> str:
    code = int(escape.group(1) or escape.group(2), 16)
    character = chr(code) if code <= sys.maxunicode else ""
    # Only what a name can hold: an escaped line break or quote must not move the lines.
    return character if character.isalnum() or character in "_$" else escape.group()


#: Code a toolchain builds in that no scan reads: assembly (a Go package's `.s`, linked
#: into its test binary as is) and objects linked as they are (Go's `.syso`).
_UNREAD_CODE = (".s", ".S", ".syso")


def compiled_module(rel: str) -> bool:
    """Whether Python imports `rel` as a module with no source to read: a `.pyc` outside
    `__pycache__` (loaded where no `.py` of its name is), or an extension module (`.so`,
    `.pyd`, loaded even before a `.py` of its name)."""
    directory, _, name = rel.rpartition("/")
    if name.endswith((".so", ".pyd")):
        return True
    return name.endswith(".pyc") and "__pycache__" not in directory.split("/")


def _compiled_module_signal(
    base: Path | None, change: Path, rel: str
) -> list[Reach | NotInspected]:
    """A compiled module the change adds or rewrites: code nobody can read in the diff,
    imported in place of the source beside it or of a module of the standard library's
    (a root `tomllib.pyc` runs inside pytest before any of its plugins)."""
    new = read_untrusted(change, rel, limit=FILE_MAX_BYTES)
    if isinstance(new, Link | None):
        return []
    if base is not None and isinstance(new, bytes):
        old = read_untrusted(base, rel, limit=FILE_MAX_BYTES)
        if old == new:
            return []
    if rel.endswith((".so", ".pyd")):
        what = "an extension module: Python imports it even before a .py of its name"
    elif rel.endswith(_UNREAD_CODE):
        what = "assembly or an object file: the toolchain builds it in as it is"
    else:
        what = "bytecode with no source beside it: Python imports it as a module"
    return [NotInspected(rel, f"{what}, and what it runs cannot be read; not inspected")]


#: Where a module of the tree is imported from before an installed one of the same name:
#: the root (the working directory `python -m` puts first) and a src layout's `src`.
_IMPORT_ROOTS = ("", "src/")
#: The standard library's names a project's own script takes (`test.py`) that no test
#: runner imports.
_SCRIPT_NAMES = frozenset({"test", "this", "antigravity", "turtle", "turtledemo", "idlelib"})
#: What pytest itself imports, some of it only once it has started: stood in for by a
#: module of the tree, as the standard library's can be.
_RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "exceptiongroup",
     "tomli", "colorama", "py"}
)  # fmt: skip


def _shadows(rel: str, dependencies: frozenset[str]) -> Reach | None:
    """A new module at an import root named as one of the standard library's, the test
    runner's, or a distribution the base declares (`hypothesis`, whose stand-in's `@given`
    fed a broken `add` only the values it passed for): imported in its place by whatever
    imports it after the root is on the path (pytest's own start-up, a plugin, the tests),
    where it can patch the runner, or the test's own inputs, before anything looks."""
    for root in _IMPORT_ROOTS:
        if not rel.startswith(root):
            continue
        name = rel[len(root) :].removesuffix("/__init__.py").removesuffix(".py")
        if "/" in name:
            continue
        if name in _RUNNER_MODULES:
            return Reach(rel, 1, for_terminal(rel), f"stands in for the test runner's {name}")
        if name in sys.stdlib_module_names - _SCRIPT_NAMES:
            what = f"stands in for the standard library's module {name}"
            return Reach(rel, 1, for_terminal(rel), what)
        if dependencies and _normalised(name) in dependencies:
            what = f"stands in for {name}, which the base declares or the checks have installed"
            return Reach(rel, 1, for_terminal(rel), what)
    return None


def _normalised(name: str) -> str:
    from assay.base_requirements import normalise

    return normalise(name)


def source_text(rel: str, data: bytes) -> str:
    """`rel`'s bytes as its language reads them: Python source in the encoding its coding
    line declares (`# coding: utf-7` hides `import _pytest` from a UTF-8 reading), any
    other file as UTF-8."""
    encoding = "utf-8"
    if rel.endswith(".py"):
        import io
        import tokenize

        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError:
            pass  # an encoding Python refuses: the module does not import at all
    try:
        return data.decode(encoding, errors="replace")
    except LookupError:  # a codec that is not a text encoding (`hex`): Python refuses it too
        return data.decode("utf-8", errors="replace")


def _added_reaches(language: Language, rel: str, old: str, new: str) -> list[Reach | NotInspected]:
    """One `Reach` per rule the added lines match: its first line quoted, the others counted
    (so that a reach of one kind is never crowded out by many of another)."""
    rules = [
        (rule, compiled)
        for rule, compiled in zip(language.rules, _compiled(language), strict=True)
        if _applies(compiled, rel, new)
    ]
    if not rules:
        return []
    before = Counter((index, piece) for index, piece, _ in _numbered_matches(rules, language, old))
    first: dict[int, Reach] = {}
    more: Counter[int] = Counter()
    for index, piece, number in _numbered_matches(rules, language, new):
        if before[(index, piece)] > 0:
            before[(index, piece)] -= 1  # the base had this line: not the change's
        elif index in first:
            more[index] += 1
        else:
            rule, compiled = rules[index]
            first[index] = Reach(rel, number, excerpt(piece, compiled.line), rule.what)
    found = sorted(
        (replace(reach, more=more[index]) for index, reach in first.items()),
        key=lambda reach: reach.line,
    )
    return list(found)


@dataclass(frozen=True, slots=True)
class _Compiled:
    line: re.Pattern[str]
    also: re.Pattern[str] | None
    unless: re.Pattern[str] | None
    unless_path: re.Pattern[str] | None


@functools.cache
def _compiled(language: Language) -> tuple[_Compiled, ...]:
    return tuple(
        _Compiled(
            re.compile(rule.pattern),
            re.compile(rule.also) if rule.also else None,
            re.compile(rule.unless) if rule.unless else None,
            re.compile(rule.unless_path) if rule.unless_path else None,
        )
        for rule in language.rules
    )


@functools.cache
def comment_pattern(language: Language) -> re.Pattern[str]:
    return re.compile(language.comment)


def _applies(compiled: _Compiled, rel: str, text: str) -> bool:
    if compiled.unless_path is not None and compiled.unless_path.search(rel):
        return False
    if compiled.unless is not None and compiled.unless.search(text):
        return False
    return compiled.also is None or compiled.also.search(text) is not None


#: Every character one of the languages ends a line with (JavaScript ends lines at U+2028,
#: Python at a lone `\r`): a comment can hide nothing after one of them.
_PIECE = re.compile(r"[^\n\r\u2028\u2029\x85]+")


def line_pieces(text: str) -> Iterator[tuple[int, str]]:
    """Each line's text, stripped, with its 1-based number counted in `\\n`s; lazily,
    so that a file of a million lines is never a list of a million strings."""
    number, counted_to = 1, 0
    for match in _PIECE.finditer(text):
        number += text.count("\n", counted_to, match.start())
        counted_to = match.start()
        piece = match.group().strip()
        if piece:
            yield number, piece


def _numbered_matches(
    rules: list[tuple[Rule, _Compiled]], language: Language, text: str
) -> Iterator[tuple[int, str, int]]:
    comment = comment_pattern(language)
    main_lines = _go_main_lines(rules, text)
    for number, piece in line_pieces(text):
        # A `{`: the line may be inside a template literal or an f-string, and runs.
        only_directives = comment.match(piece) is not None and "{" not in piece
        for index, (rule, compiled) in enumerate(rules):
            if only_directives and not rule.comments:
                continue
            if rule.outside_go_main and number in main_lines:
                continue
            if compiled.line.search(piece):
                yield index, piece, number


def _go_main_lines(rules: list[tuple[Rule, _Compiled]], text: str) -> frozenset[int]:
    if not any(rule.outside_go_main for rule, _ in rules):
        return frozenset()
    from assay.go_main_body import main_body_lines

    return main_body_lines(text)


def excerpt(piece: str, pattern: re.Pattern[str]) -> str:
    """The line, shortened around what matched when it is long, safe for a terminal."""
    text = piece
    if len(text) > QUOTE_MAX_CHARS:
        match = pattern.search(text)
        start = max(0, (match.start() if match else 0) - QUOTE_MAX_CHARS // 4)
        text = text[start : start + QUOTE_MAX_CHARS]
        text = ("…" if start else "") + text + "…"
    return for_terminal(text.replace("\t", " "))


__all__ = [
    "LANGUAGES",
    "Budget",
    "Language",
    "NotInspected",
    "Reach",
    "Rule",
    "comment_pattern",
    "excerpt",
    "language_of",
    "line_pieces",
    "scan_change",
    "source_text",
]
