"""Reaches into the test runner from non-test code: what is matched, what is left alone.

Each case is a real base tree and a real change tree on disk, compared by
`detect_tampering` (the caller `verify --base` uses); the end-to-end attacks are in
tests/test_attacks_code_signals.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from assay import code_signals
from assay.protect import protected_set
from assay.tamper import TamperKind, TamperSignal, detect_tampering
from tests.repos import write


def reaches(tmp_path: Path, base: dict[str, str], change: dict[str, str]) -> list[TamperSignal]:
    """The code signals of `change` (written over a copy of `base`) against `base`."""
    write(tmp_path / "base", base)
    write(tmp_path / "change", {**base, **change})
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    kinds = (TamperKind.CODE_REACHES_RUNNER, TamperKind.CODE_NOT_INSPECTED)
    return [s for s in report.signals if s.kind in kinds]


#: (file, what the change adds to it, the quoted text expected)
REACHES = [
    ("calc.py", "from _pytest.runner import runtestprotocol\n", "from _pytest.runner"),
    ("calc.py", "import pytest\npytest.skip('later')\n", "pytest.skip('later')"),
    ("calc.py", "import pytest\npytest.exit('done', returncode=0)\n", "pytest.exit("),
    ("calc.py", "import gc\nobjs = gc.get_objects()\n", "gc.get_objects()"),
    ("calc.py", "import os\nos._exit(0)\n", "os._exit(0)"),
    ("calc.py", "import os\nos.dup2(w, 2)\n", "os.dup2(w, 2)"),
    # A red team's, spelt plainly: builtins and gc under other names.
    ("calc.py", "import builtins as _b\n_b.open = _open\n", "import builtins as _b"),
    ("calc.py", "import gc as g\nobjs = g.get_objects()\n", "import gc as g"),
    ("calc.py", "import os\nfds = os.listdir('/dev/fd')\n", "'/dev/fd'"),
    # A red team's: pytest's own function given other code, the running Config found up the
    # stack, and the attack itself kept in a data file the scan does not read.
    ("calc.py", "import _p\n_p.pyfunc.__code__ = repl.__code__\n", ".__code__ ="),
    ("calc.py", "import sys\nframe = sys._getframe()\n", "sys._getframe("),
    ("calc.py", "def f(frame):\n    return frame.f_back.f_locals\n", "frame.f_back"),
    ("calc.py", "exec(open('calc_table.dat').read())\n", "exec(open("),
    ("calc.py", "import sys\nxml = [a for a in sys.argv if '--junitxml' in a]\n", "--junitxml"),
    ("calc.py", "import sys\npytest = sys.modules['pytest']\n", "sys.modules['pytest']"),
    ("calc.py", "import unittest\nunittest.TextTestRunner.run = lambda s, t: None\n", ".run ="),
    ("calc.py", "import builtins\nbuiltins.print = lambda *a: None\n", "builtins.print ="),
    # A red team's: a failing test skipped through an alias, pytest's own exception, an
    # assertion made lenient, and a profile hook that rewrites the reports it sees returned.
    ("calc.py", "from unittest import SkipTest as _Unsupported\n", "SkipTest"),
    ("calc.py", "import pytest\nraise pytest.skip.Exception('no')\n", "skip.Exception"),
    ("calc.py", "from unittest import TestCase as C\nC.assertEqual = lenient\n", ".assertEqual ="),
    ("calc.py", "import sys\nsys.setprofile(_observe)\n", "sys.setprofile("),
    ("calc.py", "import threading\nthreading.settrace(_observe)\n", "threading.settrace("),
    ("lib/calc.js", "require('assert').strictEqual = function () {};\n", ".strictEqual ="),
    ("lib/calc.js", "const assert = require('assert');\nassert.ok = () => {};\n", "assert.ok ="),
    ("lib/calc.js", "expect.extend({ toBe: () => ({ pass: true }) });\n", "expect.extend("),
    ("lib/calc.js", "expect.extend({\n  toEqual(received) {\n", "toEqual(received)"),
    ("lib/calc.js", "globalThis.expect = Object.assign(lenient, s);\n", "globalThis.expect ="),
    # A test library's value that equals anything, returned as the answer.
    ("calc.py", "from unittest.mock import ANY\n", "unittest.mock"),
    ("calc.py", "from unittest import mock\n", "from unittest import mock"),
    ("calc.py", "import mock\n", "import mock"),
    ("calc.py", "from dirty_equals import IsAnything\n", "dirty_equals"),
    # What `instanceof` answers rewired: a RangeError made a TypeError passed the tests'
    # assert.throws of both kinds.
    (
        "lib/calc.js",
        "Object.setPrototypeOf(RangeError.prototype, TypeError.prototype);\n",
        "setPro",
    ),
    (
        "lib/calc.js",
        "class Failure {\n  static [Symbol.hasInstance]() { return true; }\n}\n",
        "hasI",
    ),
    # An error of several built-in kinds at once, which each pytest.raises of them accepts.
    ("calc.py", "class Failure(KeyError, ValueError):\n    pass\n", "class Failure(KeyError"),
    # Round three: pytest's hook dispatcher found through the stack, unittest's per-test
    # equality table, code kept in a file of another suffix, node's assertion patched
    # through Object/Reflect, Rust knowing it is tested at compile time or rewiring its
    # output before main, Go rewiring os.Stdout.
    ("calc.py", "import inspect\nfor f in inspect.stack():\n    pass\n", "inspect.stack()"),
    ("calc.py", "hook.pytest_runtest_makereport._hookexec = wrap\n", "_hookexec"),
    ("calc.py", "case.addTypeEqualityFunc(int, lenient)\n", "addTypeEqualityFunc"),
    ("calc.py", "import runpy\nrunpy.run_path('calc.cfg')\n", "import runpy"),
    ("lib/calc.js", "Object.assign(assert, { strictEqual() {} });\n", "Object.assign(assert"),
    (
        "lib/calc.js",
        "Reflect.defineProperty(require('node:assert'), 'x', {});\n",
        "Reflect.defineProperty(require('node:assert')",
    ),
    ("src/lib.rs", "#[cfg(not(test))]\npub fn add(a: i64) -> i64 { a }\n", "cfg(not(test))"),
    ("src/lib.rs", '#[link_section = ".init_array"]\nstatic INIT: f = init;\n', "link_section"),
    (
        "calc/out.go",
        'package calc\n\nimport "os"\n\nfunc init() { os.Stdout = w }\n',
        "os.Stdout =",
    ),
    # Round rt30: Go's exit taken as a value, and fd 1 closed to be taken by a pipe.
    (
        "calc/calc.go",
        'package calc\n\nimport "os"\n\nvar leave = os.Exit\n',
        "os.Exit",
    ),
    (
        "calc/out.go",
        'package calc\n\nimport "os"\n\nfunc init() { os.Stdout.Close() }\n',
        "os.Stdout.Close()",
    ),
    ("calc/out.go", 'package calc\n\nconst P = "/dev/fd/"\n', "/dev/fd/"),
    # Round rt30: Rust's exit taken as a value, or the C library's declared by hand.
    (
        "src/lib.rs",
        "pub fn f() { let leave: fn(i32) -> ! = std::process::exit; leave(0) }\n",
        "std::process::exit;",
    ),
    ("src/lib.rs", 'extern "C" {\n    fn exit(code: i32) -> !;\n}\n', "fn exit("),
    ("src/lib.rs", "use std::process::exit as leave;\npub fn f() { leave(0) }\n", "exit as leave"),
    # Round rt39: Java code in surefire's fork writing its protocol to fd 1, and ending.
    (
        "src/main/java/tiny/Add.java",
        "class Add {\n  static void f() { Runtime.getRuntime().halt(0); }\n}\n",
        "halt(0)",
    ),
    (
        "src/main/java/tiny/Add.java",
        "class Add {\n  Object o = new FileOutputStream(FileDescriptor.out);\n}\n",
        "FileDescriptor.out",
    ),
    (
        "src/main/java/tiny/Add.java",
        'class Add {\n  void f() { new ProcessBuilder("printf").inheritIO(); }\n}\n',
        "inheritIO()",
    ),
    # Round rt39: through the module under another name, and with the rest of the module.
    ("src/lib.rs", "use std::process as host;\npub fn f() { host::exit(0) }\n", "host::exit(0)"),
    ("src/lib.rs", "use std::process::*;\npub fn f() { exit(0) }\n", "exit(0)"),
    # An exit whose name a macro supplies: `leave!(exit)` expands to `std::process::exit(0)`,
    # or paste's `[<ex it>]` glues the name together.
    (
        "src/lib.rs",
        "macro_rules! leave {\n    ($f:ident) => { std::process::$f(0) };\n}\n",
        "::$f(0)",
    ),
    ("src/lib.rs", "paste::paste! { std::process::[<ex it>](0) }\n", "::[<ex it>](0)"),
    (
        "src/lib.rs",
        (
            "use std::os::unix::process::CommandExt;\n"
            'pub fn f() { std::process::Command::new("true").exec(); }\n'
        ),
        ".exec()",
    ),
    # Round rt30: a comparison written by hand, which a test's `assert_eq!` asks.
    (
        "src/lib.rs",
        (
            "pub struct Sum(i32);\nimpl PartialEq<i32> for Sum {\n"
            "    fn eq(&self, _: &i32) -> bool { true }\n}\n"
        ),
        "impl PartialEq<i32> for Sum",
    ),
    ("src/lib.rs", "impl<T> std::cmp::PartialOrd<T> for Sum {\n", "PartialOrd<T> for Sum"),
    # Round rt33: the trait named through an alias, or by a macro's parameter.
    (
        "src/lib.rs",
        (
            "use std::cmp::PartialEq as Same;\npub struct Sum(i32);\nimpl Same<i32> for Sum {\n"
            "    fn eq(&self, _: &i32) -> bool { true }\n}\n"
        ),
        "fn eq(",
    ),
    (
        "src/lib.rs",
        "macro_rules! same {\n    ($t:path) => { impl $t for Sum { fn ne(&self, _: &i32) -> bool",
        "fn ne(",
    ),
    # The same in Go: go-cmp asks a type's own `Equal` method.
    (
        "calc/sum.go",
        "package calc\n\ntype Sum int\n\nfunc (Sum) Equal(Sum) bool { return true }\n",
        "func (Sum) Equal(Sum) bool",
    ),
    # Round rt33: the receiver in parentheses, errors.Is and errors.As asking the error.
    ("calc/sum.go", "package calc\n\nfunc (s (Sum)) Equal(Sum) bool { return true }\n", "Equal("),
    ("calc/sum.go", "package calc\n\nfunc (\n\ts Sum,\n) Equal(Sum) bool {\n", ") Equal("),
    ("calc/err.go", "package calc\n\nfunc (failure) Is(error) bool { return true }\n", "Is(error)"),
    ("calc/err.go", "package calc\n\nfunc (f *failure) As(any) bool { return true }\n", "As(any)"),
    (
        "calc/err.go",
        "package calc\n\nfunc (f failure) Unwrap() []error { return all }\n",
        "[]error",
    ),
    # Round rt30: native code linked into the test binaries by a build script or cgo.
    (
        "build.rs",
        'fn main() {\n    println!("cargo:rustc-link-arg-tests=-Wl,--wrap=write");\n}\n',
        "cargo:rustc-link-arg-tests",
    ),
    ("native/fmt.c", "ssize_t __wrap_write(int fd, const void *b, size_t n) {\n", "__wrap_write"),
    ("native/fmt.c", "ssize_t write(int fd, const void *b, size_t n)\n{\n", "ssize_t write("),
    ("native/fmt.c", "__attribute__((constructor)) static void f(void) {}\n", "constructor"),
    ("native/fmt.c", "void f(int p) { dup2(p, 1); }\n", "dup2(p, 1)"),
    ("native/fmt.cc", "void f() { std::exit(0); }\n", "exit(0)"),
    (
        "calc/hook.go",
        (
            "package calc\n\n/*\n"
            '__attribute__((constructor)) static void f(void) {}\n*/\nimport "C"\n'
        ),
        "constructor",
    ),
    (
        "calc/hook.go",
        'package calc\n\n// #cgo LDFLAGS: -Wl,--wrap=write\nimport "C"\n',
        "#cgo LDFLAGS",
    ),
    # Round rt30, second pass: os.Stdout rewired for a moment through an alias, its address,
    # unsafe, or fd 1 taken away.
    ("calc/out.go", "package calc\n\nfunc swap(p, w *F) {\n\t*p = *w\n}\n", "*p = *w"),
    (
        "calc/out.go",
        'package calc\n\nimport "os"\n\nvar v = reflect.ValueOf(&os.Stdout)\n',
        "&os.Stdout",
    ),
    (
        "calc/out.go",
        'package calc\n\nimport "os"\n\nvar o = os.Stdout\nvar q = (*T)(unsafe.Pointer(o))\n',
        "unsafe.Pointer",
    ),
    ("calc/out.go", 'package calc\n\nimport "syscall"\n\nvar e = syscall.Close(1)\n', "Close(1)"),
    (
        "calc/out.go",
        'package calc\n\nimport "os"\n\nvar f = os.NewFile(uintptr(1), "out")\n',
        "os.NewFile(uintptr(1)",
    ),
    ("calc.py", "open('/proc/self/fd/1', 'w').write('x')\n", "/proc/self/fd/1"),
    (
        "calc.py",
        "import os\nCMD = os.path.join('/proc', str(os.getppid()), 'cmdline')\n",
        "'/proc'",
    ),
    ("calc.py", "print('Ran 2 tests in 0.001s')\n", "Ran 2 tests"),
    ("calc.py", "import os\nUNDER_TEST = 'PYTEST_CURRENT_TEST' in os.environ\n", "PYTEST_CURRENT"),
    (
        "calc.py",
        "def pytest_runtest_makereport(item, call):\n    pass\n",
        "pytest_runtest_makereport",
    ),
    ("lib/calc.js", "process.exit(0);\n", "process.exit(0)"),
    ("lib/calc.js", "process.exit();\n", "process.exit()"),
    ("lib/calc.js", "delete require.cache[require.resolve('./x')];\n", "require.cache"),
    ("lib/calc.js", "const circus = require('jest-circus');\n", "jest-circus"),
    (
        "lib/calc.js",
        "const out = process.argv.find((a) => a.startsWith('--outputFile'));\n",
        "--outputFile",
    ),
    ("lib/calc.ts", "process.stdout.write('ok 1 - add\\n');\n", "ok 1 - add"),
    ("lib/calc.mjs", "if (process.env.JEST_WORKER_ID) { }\n", "JEST_WORKER_ID"),
    ("calc/calc.go", 'package calc\n\nimport "os"\n\nfunc init() { os.Exit(0) }\n', "os.Exit(0)"),
    # Ends a Go test binary 0 before its tests run, spelt without `os.Exit`: every package
    # must pass as a package since the must-fail canary has a package of its own.
    ("calc/calc.go", 'package calc\n\nimport xos "os"\n', 'xos "os"'),
    ("calc/calc.go", 'package calc\n\nimport (\n\t. "os"\n)\n', '. "os"'),
    ("calc/calc.go", 'package calc\n\nimport (\n\tu "golang.org/x/sys/unix"\n)\n', "u "),
    ("calc/calc.go", "package calc\n\nfunc init() { unix.Exit(0) }\n", "unix.Exit(0)"),
    (
        "calc/calc.go",
        'package calc\n\n// #include <stdlib.h>\nimport "C"\n\nfunc init() { C.exit(0) }\n',
        "C.exit(0)",
    ),
    (
        "calc/calc.go",
        'package calc\n\n// static void leave(void) {\n//   exit(0);\n// }\nimport "C"\n',
        "exit(0);",
    ),
    (
        "calc/calc.go",
        'package calc\n\n// __attribute__((constructor))\n// static void f(void) {}\nimport "C"\n',
        "constructor",
    ),
    (
        "calc/calc.go",
        'package calc\n\nfunc init() { syscall.Exec("/bin/true", nil, nil) }\n',
        "syscall.Exec(",
    ),
    (
        "calc/calc.go",
        'package calc\n\nimport _ "unsafe"\n\n//go:linkname leave runtime.exit\nfunc leave(int32)\n',
        "runtime.exit",
    ),
    (
        "calc/calc.go",
        'package calc\n\nfunc init() { os.Args = []string{"x", "-h"}; flag.Parse() }\n',
        "flag.Parse()",
    ),
    (
        "calc/calc.go",
        'package calc\n\nvar f = flag.NewFlagSet("x", flag.ExitOnError)\n',
        "flag.ExitOnError",
    ),
    (
        "calc/calc.go",
        'package calc\n\nimport "testing"\n\nvar T = testing.Testing()\n',
        "testing.Testing()",
    ),
    ("calc/calc.go", 'package calc\n\nconst E = `{"Action":"pass"}`\n', "Action"),
    ("calc/calc.go", 'package calc\n\nconst P = "/proc/%d/fd/1"\n', "/proc/%d/fd/1"),
    ("src/lib.rs", "pub fn f() { std::process::exit(0) }\n", "std::process::exit(0)"),
    ("src/lib.rs", "use std::process::exit;\npub fn f(c: i32) { exit(c) }\n", "exit(c)"),
    (
        "calc/calc.go",
        'package calc\n\nimport "os"\n\nfunc Stop(c int) { os.Exit(c) }\n',
        "os.Exit(c)",
    ),
    ("src/lib.rs", 'pub const P: &str = "/proc/self/fd/1";\n', "/proc/self/fd/1"),
    # A main package's test binary runs its inits and initialisers, never its main; and a
    # package is main by its clause, not by a line of a raw string.
    (
        "cmd/tool/main.go",
        'package main\n\nimport "os"\n\nfunc init() { os.Exit(0) }\n',
        "os.Exit(0)",
    ),
    (
        "cmd/tool/main.go",
        "package main\n\nvar _ = stop()\n\nfunc stop() int { main(); return 0 }\n",
        "main()",
    ),
    (
        "cmd/tool/main.go",
        'package main\n\nfunc main() {\n\ts := "}"\n\t_ = s\n}\n\nfunc init() { os.Exit(0) }\n',
        "os.Exit(0)",
    ),
    (
        "calc/calc.go",
        'package calc\n\nimport "os"\n\nconst doc = `\npackage main\n`\n\nfunc init() { os.Exit(0) }\n',
        "os.Exit(0)",
    ),
    ("pyproject.toml", "[project.entry-points.pytest11]\nforge = 'calc'\n", "pytest11"),
    # Round four: code the runtime runs that the scan read otherwise (a `//` line inside a
    # template literal, a `#` line inside an f-string, an identifier escape, a fullwidth
    # letter, a file of another suffix), and output rewired below the language's own names.
    ("lib/calc.js", "const s = `\n// ${assert.strictEqual = () => {}}\n`;\n", ".strictEqual ="),
    ("lib/calc.js", "assert.strictEq\\u0075al = () => {};\n", ".strictEqual ="),
    ("lib/calc.js", "require('./calc.data');\n", "calc.data"),
    ("calc.py", 'import os\nS = f"""\n# {os._exit(0)}\n"""\n', "os._exit(0)"),
    ("calc.py", "import os\nos._\uff45xit(0)\n", "os._"),
    (
        "calc/fd.go",
        'package calc\n\nimport "syscall"\n\nfunc init() { syscall.Syscall(6, 1, 0, 9) }\n',
        "syscall.Syscall(",
    ),
    ("src/lib.rs", '#[no_mangle]\npub extern "C" fn write() {}\n', "no_mangle"),
    # An exit status is its code's low byte: 256 ends the process 0.
    (
        "calc/calc.go",
        'package calc\n\nimport "os"\n\nfunc init() { os.Exit(256) }\n',
        "os.Exit(256)",
    ),
    ("calc.py", "import os\nos._exit(512)\n", "os._exit(512)"),
    ("src/lib.rs", "pub fn f() { std::process::exit(-256) }\n", "exit(-256)"),
    ("lib/calc.js", "process.exit(256);\n", "process.exit(256)"),
    (
        "calc/calc.go",
        (
            "package calc\n\n/*\n#include <stdlib.h>\n"
            "static void leave(void) { void (*f)(int) = exit; f(0); }\n"
            '*/\nimport "C"\n'
        ),
        "= exit;",
    ),
    ("src/lib.rs", '#[path = "platform.txt"]\nmod out;\n', "path ="),
    ("src/lib.rs", 'pub fn f() { unsafe { core::arch::asm!("nop") } }\n', "asm!"),
    # A checker turned off for a whole file: the configuration is the base's under --protect,
    # and the type error below it passed.
    ("calc.py", "# mypy: ignore-errors\nX: int = 'a'\n", "mypy: ignore-errors"),
    ("calc.py", "# mypy: ignore_errors\nX: int = 'a'\n", "mypy: ignore_errors"),
    ("calc.py", "# mypy: warn-unreachable, ignore-errors\nX: int = 'a'\n", "ignore-errors"),
    ("calc.py", '# mypy: strict, disable_error_code="assignment"\n', "disable_error_code"),
    ("calc.py", "# type: ignore\nX: int = 'a'\n", "type: ignore"),
    ("calc.py", "# ruff: noqa\nimport os\n", "ruff: noqa"),
    # The same with a reason after them, as the tools read them: each turned its checker off.
    ("calc.py", "# type: ignore  # vendored\nX: int = 'a'\n", "type: ignore  # vendored"),
    ("calc.py", "# ruff: noqa -- legacy\nimport os\n", "ruff: noqa -- legacy"),
    ("calc.py", "# ruff: NOQA\nimport os\n", "ruff: NOQA"),
    ("calc.py", "# vendored; pylint: skip-file\n", "pylint: skip-file"),
    ("lib/calc.js", "/* eslint-disable -- legacy */\nvar x = y;\n", "eslint-disable -- legacy"),
    ("lib/calc.js", "/* eslint-disable no-undef */\nvar x = y;\n", "eslint-disable no-undef"),
    ("lib/calc.js", "/*\n  eslint-disable\n*/\nvar x = y;\n", "eslint-disable"),
    ("lib/calc.js", "// biome-ignore-all lint: legacy\nvar x = y;\n", "biome-ignore-all"),
    ("lib/calc.ts", "// @ts-nocheck\nexport const x: number = 'a';\n", "@ts-nocheck"),
    ("lib/calc.js", "/* eslint-disable */\nvar x = y;\n", "eslint-disable"),
    ("src/lib.rs", "#![allow(warnings)]\n", "allow(warnings)"),
]


@pytest.mark.parametrize(("path", "added", "quoted"), REACHES)
def test_a_reach_the_change_adds_is_quoted_with_its_line(
    tmp_path: Path, path: str, added: str, quoted: str
) -> None:
    base = {path: "# base\n" if path.endswith((".py", ".toml")) else "// base\n"}
    if path.endswith(".go"):
        base = {path: "package calc\n"}
    found = reaches(tmp_path, base, {path: added})
    assert found, f"{added!r} in {path} was not seen"
    signal = found[0]
    assert signal.kind is TamperKind.CODE_REACHES_RUNNER
    assert signal.path == path
    assert quoted in signal.excerpt and quoted in signal.detail
    assert signal.line is not None
    lines = added.splitlines()
    assert quoted in lines[signal.line - 1] or signal.line == 1


#: Ordinary code each rule leaves alone (the module docstring says why).
ORDINARY = [
    ("cli.py", "import sys\n\n\ndef main():\n    return 0\n\n\nsys.exit(main())\n"),
    ("calc.py", "import pytest\n\n\ndef check(x):\n    if not x:\n        pytest.fail('no')\n"),
    ("calc.py", "MEM = open('/proc/meminfo').read()\nME = open('/proc/self/status').read()\n"),
    ("calc.py", "import sys\nsys.stdout = open('log.txt', 'w')\n"),
    ("calc.py", "# os._exit(0) is never called here\n"),
    ("calc.py", "import os\n\n\ndef die():\n    os._exit(1)\n"),
    ("calc.py", "import os\n\n\ndef die():\n    os._exit(255)\n"),
    ("calc/calc.go", 'package calc\n\nimport "os"\n\nfunc Die() { os.Exit(-1) }\n'),
    ("lib/calc.js", "if (!ok) { process.exit(1); }\n"),
    ("src/main/java/tiny/Cli.java", "class Cli {\n  void f() { System.exit(1); }\n}\n"),
    (
        "src/main/java/tiny/Cli.java",
        "class Cli {\n  public static void main(String[] a) { System.exit(run(a)); }\n}\n",
    ),
    ("src/main/java/tiny/Add.java", "// System.exit(0) is never called here\nclass Add {}\n"),
    ("src/main/java/tiny/Vm.java", "class Vm {\n  void stop() { machine.halt(); }\n}\n"),
    ("calc/calc.go", 'package calc\n\nimport "os"\n\nfunc Die() { os.Exit(2) }\n'),
    ("calc/calc.go", 'package calc\n\nimport (\n\t"os"\n\t_ "embed"\n\tstr "strings"\n)\n'),
    ("calc/calc.go", 'package calc\n\nvar f = flag.NewFlagSet("x", flag.ContinueOnError)\n'),
    ("calc/calc.go", "package calc\n\n// exit(0) and atexit( are C, and this file has none\n"),
    ("cmd/tool/main.go", "package main\n\nfunc main() { flag.Parse() }\n"),
    ("src/lib.rs", "use std::process::exit;\npub fn die() { exit(1) }\n"),
    ("bin/cli.js", "#!/usr/bin/env node\nprocess.exit(main());\n"),
    ("lib/calc.js", "expect.extend({ toBeEven(x) { return { pass: x % 2 === 0 } } });\n"),
    ("calc.py", "class Tally:\n    def __init__(self):\n        self.assertions = []\n"),
    ("lib/calc.js", "res.ok = res.status < 300;\nthis.fail = onFailure;\n"),
    ("calc.py", "conn.assert_hostname = False\n"),
    ("lib/calc.js", "// process.exit(0) would be wrong here\n"),
    ("lib/calc.js", "function E() {}\nObject.setPrototypeOf(this, MyError.prototype);\n"),
    ("calc.py", "class Missing(LookupError, KeyError):\n    pass\n"),
    ("calc.py", "import mockito_like\nmocked = False\n"),
    ("cmd/tool/main.go", 'package main\n\nimport "os"\n\nfunc main() { os.Exit(run()) }\n'),
    (
        "cmd/tool/main.go",
        (
            "// Command tool.\npackage main\n\nfunc main() {\n\tif done {\n\t\tos.Exit(0)\n\t}\n"
            '\tflag.Parse() // "}"\n\tos.Exit(run())\n}\n'
        ),
    ),
    ("src/main.rs", "fn main() { std::process::exit(run()) }\n"),
    ("src/bin/tool.rs", "fn main() { std::process::exit(run()) }\n"),
    ("calc.py", "import pluggy\n\nhookspec = pluggy.HookspecMarker('myapp')\n"),
    ("calc.py", "JUNIT_DIR = 'reports/junit'\n"),
    ("calc.py", "code = compile(source, '<template>', 'exec')\nexec(code, namespace)\n"),
    ("calc.py", "if func.__code__ == other.__code__:\n    pass\n"),
    ("README.md", "Call `os._exit(0)` and read /proc/self/fd.\n"),
    ("lib/calc.js", "import styles from './calc.css';\nconst data = require('./data.json');\n"),
    ("lib/calc.js", "const name = 'caf\\u00e9';\n"),
    # One line's suppression, with its reason in the code it follows.
    ("calc.py", "import os  # noqa: F401\nX: int = f()  # type: ignore[assignment]\n"),
    ("calc.py", "# ruff: noqa: E501\n"),
    ("lib/calc.js", "// eslint-disable-next-line no-console\nconsole.log(1);\n"),
    ("src/lib.rs", "#![allow(dead_code)]\n"),
    ("src/lib.rs", "pub fn equal<T: PartialEq>(a: &T, b: &T) -> bool { a == b }\n"),
    ("calc/sum.go", "package calc\n\nfunc Equal(a, b int) bool { return a == b }\n"),
    ("calc/sum.go", "package calc\n\nfunc (s Set) Contains(x int) bool { return s[x] }\n"),
    ("calc/err.go", "package calc\n\nfunc (e *wrapped) Unwrap() error { return e.err }\n"),
    ("calc/err.go", "package calc\n\nfunc Is(err, target error) bool { return err == target }\n"),
    ("calc/err.go", "package calc\n\nvar ok = errors.Is(err, ErrX) || f(x).Equal(y)\n"),
]


@pytest.mark.parametrize(("path", "text"), ORDINARY)
def test_ordinary_code_is_not_a_signal(tmp_path: Path, path: str, text: str) -> None:
    assert reaches(tmp_path, {"calc.py": "X = 1\n"}, {path: text}) == []


@pytest.mark.parametrize(
    "path", ["difflib.py", "sysconfig.py", "src/json/__init__.py", "packaging/__init__.py"]
)
def test_a_new_module_standing_in_for_the_standard_librarys_is_a_signal(
    tmp_path: Path, path: str
) -> None:
    """A red team's: a root difflib.py, imported by pytest's own start-up once the working
    directory is on the path, loaded the real module and patched pytest's report first."""
    (found,) = reaches(tmp_path, {"calc.py": "X = 1\n"}, {path: "import os\n"})
    assert found.kind is TamperKind.CODE_REACHES_RUNNER and found.path == path
    assert "stands in for the " in found.detail


@pytest.mark.parametrize("path", ["pkg/types.py", "src/pkg/json.py", "test.py", "tools/difflib.py"])
def test_a_module_named_as_the_standard_librarys_elsewhere_is_not(
    tmp_path: Path, path: str
) -> None:
    assert reaches(tmp_path, {"calc.py": "X = 1\n"}, {path: "X = 2\n"}) == []
    # One the base already had is the project's own.
    assert reaches(tmp_path / "again", {"difflib.py": "X = 1\n"}, {"difflib.py": "X = 2\n"}) == []


def test_a_new_module_standing_in_for_a_declared_dependency_is_a_signal(tmp_path: Path) -> None:
    """A red team's: a root `hypothesis/` package whose `@given` fed a broken function only
    the values it passed for. What the base declares is not the project's to replace."""
    base = {"pyproject.toml": '[project]\nname = "calc"\ndependencies = ["Hypothesis>=6"]\n'}
    found = reaches(tmp_path / "declared", base, {"hypothesis/__init__.py": "def given(): ...\n"})
    assert [s.path for s in found] == ["hypothesis/__init__.py"], found
    assert "stands in for hypothesis" in found[0].detail
    # The project's own name, and a module nothing declares, are its own to add.
    own = reaches(tmp_path / "own", base, {"calc/__init__.py": "", "helpers.py": "X = 1\n"})
    assert own == []


def test_a_new_module_standing_in_for_an_installed_one_is_a_signal(tmp_path: Path) -> None:
    """The environment the checks run in has it, the base's manifests do not name it."""
    from assay.discovery.model import ProjectEnv
    from assay.installed_modules import installed_modules

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    write(site, {"shadowed/__init__.py": "", "tests/__init__.py": "", "single.py": ""})
    write(site, {"_private_plugin.py": "", "extras.pth": "", "x-1.0.dist-info/RECORD": ""})
    env = ProjectEnv(python=str(venv / "bin" / "python"), python_source="PATH")
    installed = installed_modules(tmp_path, env)
    assert {"shadowed", "single", "_private_plugin"} <= installed, installed
    assert not {"tests", "extras", "x-1"} & installed, installed
    write(tmp_path / "base", {"calc.py": "X = 1\n"})
    write(tmp_path / "change", {"calc.py": "X = 1\n", "shadowed/__init__.py": ""})
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set(), installed)
    assert [s.path for s in report.signals] == ["shadowed/__init__.py"], report.signals
    # The project's own module, installed in its environment, moved into `src/`: no stand-in.
    write(site, {"calc/__init__.py": ""})
    installed = installed_modules(tmp_path, env)
    write(tmp_path / "moved", {"src/calc/__init__.py": "X = 1\n"})
    report = detect_tampering(tmp_path / "base", tmp_path / "moved", protected_set(), installed)
    assert not [s for s in report.signals if "stands in" in s.detail], report.signals


def test_test_code_is_judged_as_a_protected_file_not_scanned_here(tmp_path: Path) -> None:
    change = {
        "tests/test_calc.py": "import pytest\n\n\ndef test_a():\n    pytest.skip('later')\n",
        "test/calc.test.js": "process.exit(0);\n",
        "calc_test.go": 'package calc\n\nimport "os"\n\nfunc init() { os.Exit(0) }\n',
    }
    assert reaches(tmp_path, {"calc.py": "X = 1\n"}, change) == []


def test_only_lines_the_change_added_count(tmp_path: Path) -> None:
    """A forking server that always had its `os._exit` is not the change's reach."""
    server = "import os\n\n\ndef serve():\n    if os.fork() == 0:\n        os._exit(0)\n"
    edited = server + "\n\ndef stop():\n    return None\n"
    assert reaches(tmp_path, {"server.py": server}, {"server.py": edited}) == []
    (tmp_path / "base").rename(tmp_path / "base1")
    (tmp_path / "change").rename(tmp_path / "change1")
    twice = edited + "\n\ndef again():\n    os._exit(0)\n"
    (found,) = reaches(tmp_path, {"server.py": server}, {"server.py": twice})
    assert found.line == twice.splitlines().index("    os._exit(0)", 6) + 1


def test_many_lines_of_one_kind_are_counted_and_do_not_crowd_out_another(tmp_path: Path) -> None:
    added = "import os\n" + "os._exit(0)\n" * 40 + "open('/proc/self/fd/1', 'w')\n"
    found = reaches(tmp_path, {"calc.py": "X = 1\n"}, {"calc.py": added})
    assert [s.line for s in found] == [2, 42]
    assert "39 more" in found[0].detail
    assert "/proc/self/fd/1" in found[1].excerpt


@pytest.mark.parametrize("newline", ["\u2028", "\u2029"])
def test_a_comment_hides_nothing_after_a_javascript_line_terminator(
    tmp_path: Path, newline: str
) -> None:
    added = f"// a note{newline}process.exit(0);\n"
    (found,) = reaches(tmp_path, {"calc.js": "// base\n"}, {"calc.js": added})
    assert "process.exit(0)" in found.excerpt


def test_a_comment_hides_nothing_after_a_carriage_return_in_python(tmp_path: Path) -> None:
    added = "# a note\rimport os; os._exit(0)\n"
    (found,) = reaches(tmp_path, {"calc.py": "X = 1\n"}, {"calc.py": added})
    assert "os._exit(0)" in found.excerpt


def test_the_quote_is_safe_on_a_terminal_and_short(tmp_path: Path) -> None:
    added = "import os; X = '\x1b]52;c;ZXZpbA==\x07\u202e'; " + "Y = 1; " * 100 + "os._exit(0)\n"
    (found,) = reaches(tmp_path, {"calc.py": "X = 1\n"}, {"calc.py": added})
    assert "\x1b" not in found.excerpt and "\u202e" not in found.excerpt
    assert "\x07" not in found.detail
    assert "os._exit(0)" in found.excerpt  # shortened around what matched
    assert len(found.excerpt) < 200


def test_a_link_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("import os\nos._exit(0)\n")
    write(tmp_path / "base", {"calc.py": "X = 1\n"})
    (tmp_path / "change").mkdir()
    (tmp_path / "change" / "calc.py").symlink_to(outside)
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    assert [s for s in report.signals if s.kind is TamperKind.CODE_REACHES_RUNNER] == []


def test_a_hard_link_to_a_file_outside_the_tree_is_never_quoted(tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'SECRET-e1'; os._exit(0)\n")
    write(tmp_path / "base", {"calc.py": "X = 1\n"})
    (tmp_path / "change").mkdir()
    os.link(secret, tmp_path / "change" / "calc.py")
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    assert "SECRET-e1" not in str(report.to_dict())
    (signal,) = report.signals
    assert signal.kind is TamperKind.CODE_NOT_INSPECTED and "hard links" in signal.detail


def test_a_fifo_is_reported_not_inspected_without_hanging(tmp_path: Path) -> None:
    write(tmp_path / "base", {"calc.py": "X = 1\n"})
    (tmp_path / "change").mkdir()
    os.mkfifo(tmp_path / "change" / "calc.py")
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    (signal,) = [s for s in report.signals if s.kind is TamperKind.CODE_NOT_INSPECTED]
    assert signal.path == "calc.py" and "FIFO" in signal.detail


def test_code_past_the_bound_is_reported_not_inspected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_signals, "FILE_MAX_BYTES", 1024)
    big = "X = 1\n" * 400 + "import os\nos._exit(0)\n"
    (found,) = reaches(tmp_path, {"calc.py": "X = 1\n"}, {"calc.py": big})
    assert found.kind is TamperKind.CODE_NOT_INSPECTED and "larger than" in found.detail


def test_the_change_as_a_whole_is_read_within_a_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(code_signals, "CHANGE_MAX_BYTES", 100)
    change = {f"m{i}.py": "X = 1  # " + "x" * 40 + "\n" for i in range(4)}
    found = reaches(tmp_path, {"calc.py": "X = 1\n"}, change)
    assert found and all(s.kind is TamperKind.CODE_NOT_INSPECTED for s in found)
    assert "budget" in found[0].detail


def test_the_signal_is_in_the_run_record_form(tmp_path: Path) -> None:
    write(tmp_path / "base", {"calc.py": "X = 1\n"})
    write(tmp_path / "change", {"calc.py": "import os\nos._exit(0)\n"})
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    (signal,) = report.to_dict()["signals"]
    assert signal == {
        "kind": "code_reaches_runner",
        "path": "calc.py",
        "detail": "ends the process without cleanup: os._exit(0)",
        "line": 2,
        "excerpt": "os._exit(0)",
    }
    assert report.touched == ()  # not a protected file


def test_importing_compiles_no_pattern() -> None:
    """Start-up time: the patterns are compiled when a change is first scanned."""
    probe = (
        "import assay.code_signals as c; "
        "assert c._compiled.cache_info().currsize == 0; "
        "assert c.comment_pattern.cache_info().currsize == 0"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)


def test_a_code_file_made_a_link_to_code_no_scan_reads_is_not_inspected(tmp_path: Path) -> None:
    write(tmp_path / "base", {"calc.js": "// base\n", "lib/other.js": "// other\n"})
    write(tmp_path / "change", {"lib/other.js": "// other\n", "lib/calc.impl": "x\n"})
    (tmp_path / "change" / "calc.js").symlink_to("lib/calc.impl")
    (tmp_path / "change" / "index.js").symlink_to("lib/other.js")  # scanned itself
    report = detect_tampering(tmp_path / "base", tmp_path / "change", protected_set())
    [found] = [s for s in report.signals if s.kind is TamperKind.CODE_NOT_INSPECTED]
    assert found.path == "calc.js" and "lib/calc.impl" in found.detail


@pytest.mark.parametrize("path", ["calc/fd_amd64.s", "calc/rsrc.syso"])
def test_assembly_and_linked_objects_the_change_adds_are_not_inspected(
    tmp_path: Path, path: str
) -> None:
    found = reaches(tmp_path, {"calc/calc.go": "package calc\n"}, {path: "TEXT ·f(SB),$0\n"})
    assert [(s.kind, s.path) for s in found] == [(TamperKind.CODE_NOT_INSPECTED, path)]
    assert "builds it in as it is" in found[0].detail


#: A command that keeps its exit in a helper: `func main` is the only caller, at the base.
COMMAND = {
    "cmd/tool/main.go": (
        'package main\n\nimport "os"\n\nfunc main() { leave(run()) }\n\nfunc run() int { return 0 }\n\n'
        "func stop() { leave(0) }\n\nfunc leave(code int) { os.Exit(code) }\n\n"
        "var quit = func(code int) { os.Exit(code) }\n"
    ),
    "cmd/tool/main_test.go": 'package main\n\nimport "testing"\n\nfunc TestRun(t *testing.T) {}\n',
}


@pytest.mark.parametrize("call", ["leave(0)", "stop()", "quit(0)", "go leave(0)"])
def test_a_main_package_init_that_calls_the_commands_exit_is_quoted(
    tmp_path: Path, call: str
) -> None:
    hook = f"package main\n\nfunc init() {{\n\t{call}\n}}\n"
    found = reaches(tmp_path, COMMAND, {"cmd/tool/hook.go": hook})
    assert [(s.path, s.line, s.excerpt) for s in found] == [("cmd/tool/hook.go", 4, call)]
    assert "cmd/tool/main.go:" in found[0].detail


def test_a_main_package_with_no_tests_or_calls_from_main_alone_is_no_signal(
    tmp_path: Path,
) -> None:
    untested = {"cmd/tool/main.go": COMMAND["cmd/tool/main.go"]}
    hook = "package main\n\nfunc init() {\n\tleave(0)\n}\n"
    assert reaches(tmp_path / "untested", untested, {"cmd/tool/hook.go": hook}) == []
    main = COMMAND["cmd/tool/main.go"].replace(
        "func main() { leave(run()) }",
        "func main() {\n\tif run() > 0 {\n\t\tstop()\n\t}\n\tleave(run())\n}",
    )
    assert reaches(tmp_path / "main", COMMAND, {"cmd/tool/main.go": main}) == []
