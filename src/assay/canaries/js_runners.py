"""What the jest and vitest planters share: reading their flags and the installed
runner's version, the setup file's tests, and the per-file rule.

Both runners collect the tests a setup file registers as tests of each test file, so the
same two canaries show once in every file of the report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from assay.canaries import (
    Canary,
    Checks,
    NoCanary,
    PlantRequest,
    _name_pattern,
    unequal,
)
from assay.parsed_output import ParsedOutput
from assay.process import ProcessResult

#: The largest package.json read for a version.
_PACKAGE_JSON_MAX_BYTES = 1024 * 1024


def too_old(
    request: PlantRequest, package: str, first: tuple[int, int], needs: str
) -> NoCanary | None:
    """Why not, when the `package` the project installed (the nearest
    `node_modules/PACKAGE` above the check's directory, as node resolves it) is older than
    `first` (major, minor), the first release with what the planted files need (`needs`);
    None when it is not, or none is found there (the check names a runner of its own,
    whose run tells)."""
    from assay.untrusted_files import read_untrusted

    here = request.cwd
    while True:
        manifest = request.relative(here / "node_modules" / package / "package.json")
        data = read_untrusted(request.root, manifest, limit=_PACKAGE_JSON_MAX_BYTES)
        if isinstance(data, bytes):
            try:
                version = str(json.loads(data)["version"])
            except (ValueError, KeyError, TypeError, RecursionError):
                return None
            release = re.match(r"(\d+)\.(\d+)\.", version)
            if release is None or (int(release[1]), int(release[2])) >= first:
                return None
            since = ".".join(map(str, first))
            return NoCanary(
                f"{package} {version} cannot run the planted configuration: it needs "
                f"{needs}, which came in {package} {since}"
            )
        if here == request.root or here.parent == here:
            return None
        here = here.parent


def is_flag(arg: str, flag: str) -> bool:
    """`arg` is `flag`, alone or as `flag=value`."""
    return arg == flag or arg.startswith(flag + "=")


def flag_value(argv: Sequence[str], flags: Sequence[str]) -> str | None | NoCanary:
    """The value the command gives one of `flags` (None: not given)."""
    for index, arg in enumerate(argv):
        for flag in flags:
            if arg == flag:
                if index + 1 >= len(argv):
                    return NoCanary(f"{flag} has no value")
                return argv[index + 1]
            if arg.startswith(flag + "="):
                return arg.split("=", 1)[1]
    return None


def without_flags(
    argv: tuple[str, ...], valued: Sequence[str], switches: Sequence[str] = ()
) -> tuple[str, ...]:
    """`argv` less the `valued` flags with their values (`--flag value`, `--flag=value`) and
    the `switches` (`--flag`, `--flag=value`)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in valued:
            skip = True
            continue
        if any(is_flag(arg, flag) for flag in (*valued, *switches)):
            continue
        kept.append(arg)
    return tuple(kept)


def canary_tests(canaries: Sequence[Canary], checks: str, after_each: str) -> str:
    """The canaries as `test(...)` calls, for a setup file that has bound `test` and the
    hook `after_each` (run after every test of the file); the must-pass one runs the
    function `checks` declares (`assertion_checks`), and so does the hook, after each test
    of the project's: a test during which an assertion was made lenient fails there."""
    left, right = unequal()
    failure = json.dumps(f"expected {left} to equal {right}")
    tests = "".join(
        f"test({json.dumps(c.name)}, assertionsHold);\n"
        if c.must_pass
        else f"test({json.dumps(c.name)}, () => {{\n  throw new Error({failure});\n}});\n"
        for c in canaries
    )
    return (
        f"{checks}{tests}"
        "// Again after every test: code they load may change an assertion only once called.\n"
        f"{after_each}(assertionsHold);\n"
    )


def assertion_checks(load: str, expect: str = "undefined", guarded: str = "false") -> str:
    """The function `assertionsHold`, the must-pass canary's body: each assertion API the
    tests may use must still fail on unequal values and pass on equal ones, or it throws
    saying which did not.

    Code under test that makes an assertion lenient for the whole process (a property of
    `node:assert` replaced, a matcher redefined through `expect.extend`) leaves a canary
    that merely throws or returns as planted, however it spells the change; this one fails.
    The values are random for the run, so leniency aimed at the project's values misses
    them. `load`: an async function of a module name giving its exports (rejecting when
    the project cannot resolve it); `expect`: an expression for the runner's own `expect`
    (awaited inside the function); `guarded`: an expression, true when the setup file
    installed the guard against self-judging values (`self_judging`), which must then
    still refuse one."""
    left, right = unequal()
    return _CHECKS.format(
        left=left,
        right=right,
        load=load,
        expect=expect,
        guarded=guarded,
        expect_checks=_EXPECT_CHECKS,
    )


#: `assertion_checks`' `load` for a module as a test file of either kind gets it: imported
#: (chai 5 is ESM only), the name in a variable (vite resolves a literal one when it loads
#: the file, and fails there for a package the project does not have).
IMPORTED = (
    "async (name) => {\n    const module = await import(name);\n"
    "    return module.default ?? module;\n  }"
)

_CHECKS = """\
// Each module once per file (one the project cannot resolve, too: as null).
const loaded = new Map();
const assertionsHold = async () => {{
  const load = (name) => {{
    if (!loaded.has(name)) loaded.set(name, ({load})(name).catch(() => null));
    return loaded.get(name);
  }};
  // All that is awaited first: the checks run with nothing awaited between them.
  const asserts = [["node:assert", await load("node:assert")]];
  asserts.push(["node:assert/strict", await load("node:assert/strict")]);
  const chai = await load("chai");
  const own = {expect};
  const refusing = {guarded};
  const a = {left}, b = {right};
  const [x, y, x2] = [{{ v: [a] }}, {{ v: [b] }}, {{ v: [a] }}];
  const broken = [];
  // `unequal` must throw and `equal` must not: as a test sees its assertions.
  const check = (what, unequal, equal) => {{
    let threw = false;
    try {{
      unequal();
    }} catch {{
      threw = true;
    }}
    if (!threw) broken.push(what + " did not fail on unequal values");
    try {{
      equal();
    }} catch {{
      broken.push(what + " did not pass on equal values");
    }}
  }};
  // The checks fail on purpose, and a failure's stack is most of what it costs: none until
  // they end, here and in node's own realm (jest runs tests in a realm of their own).
  const errors = [Error, Object.getPrototypeOf(asserts[0][1].AssertionError)];
  const limits = errors.map((type) => type.stackTraceLimit);
  for (const type of errors) type.stackTraceLimit = 0;
  try {{
    for (const [name, assert] of asserts) {{
      check(name, () => assert(a === b), () => assert(a !== b));
      check(name + ".ok", () => assert.ok(a === b), () => assert.ok(b));
      for (const how of ["equal", "strictEqual"]) {{
        check(name + "." + how, () => assert[how](a, b), () => assert[how](a, a));
      }}
      for (const how of ["notEqual", "notStrictEqual"]) {{
        check(name + "." + how, () => assert[how](a, a), () => assert[how](a, b));
      }}
      for (const how of ["deepEqual", "deepStrictEqual"]) {{
        check(name + "." + how, () => assert[how](x, y), () => assert[how](x, x2));
      }}
      for (const how of ["notDeepEqual", "notDeepStrictEqual"]) {{
        check(name + "." + how, () => assert[how](x, x2), () => assert[how](x, y));
      }}
      check(name + ".throws", () => assert.throws(() => a), () => assert.throws(() => {{
        throw new Error(String(a));
      }}));
    }}
    // Each built-in error of its own kind only: `assert.throws(fn, TypeError)`, `toThrow`
    // and chai's `throw` ask `instanceof`, which code under test can rewire for the realm
    // (a RangeError's prototype set to TypeError's passes a suite of error tests).
    const kinds = [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError];
    const kindNames = ["EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError",
      "URIError"];
    kinds.forEach((kind, index) => {{
      kinds.forEach((other, otherIndex) => {{
        if (otherIndex === index) return;
        let is = true;
        try {{
          is = new kind(String(a)) instanceof other;
        }} catch {{}}
        if (is) broken.push("a " + kindNames[index] + " is an instance of " + kindNames[otherIndex]);
      }});
    }});
{expect_checks}\
    // chai only where the project resolves it.
    if (chai && chai.assert) {{
      const assert = chai.assert;
      check("chai.assert", () => assert(a === b), () => assert(a !== b));
      check("chai.assert.isOk", () => assert.isOk(a === b), () => assert.isOk(b));
      check("chai.assert.equal", () => assert.equal(a, b), () => assert.equal(a, a));
      check("chai.assert.strictEqual", () => assert.strictEqual(a, b), () =>
        assert.strictEqual(a, a));
      check("chai.assert.deepEqual", () => assert.deepEqual(x, y), () => assert.deepEqual(x, x2));
    }}
    if (chai && chai.expect) {{
      const expect = chai.expect;
      check("chai.expect().to.equal", () => expect(a).to.equal(b), () => expect(a).to.equal(a));
      check("chai.expect().to.eql", () => expect(x).to.eql(y), () => expect(x).to.eql(x2));
      check("chai.expect().to.deep.equal", () => expect(x).to.deep.equal(y), () =>
        expect(x).to.deep.equal(x2));
      check("chai.expect().to.be.ok", () => expect(a === b).to.be.ok, () => expect(b).to.be.ok);
    }}
  }} finally {{
    errors.forEach((type, index) => {{
      type.stackTraceLimit = limits[index];
    }});
  }}
  if (broken.length) {{
    throw new Error(broken.join("; ") + ": the assertion library was replaced");
  }}
}};
"""

_EXPECT_CHECKS = """\
    // The runner's own expect, and a global one that is not it, each matcher where it has
    // it (a global `expect` may be another library's).
    const expects = own ? [["expect()", own]] : [];
    if (typeof globalThis.expect === "function" && globalThis.expect !== own) {
      expects.push(["the global expect()", globalThis.expect]);
    }
    const matchers = [
      // [matcher, arguments that must fail, arguments that must pass]
      ["toBe", [a, b], [a, a]],
      ["not.toBe", [a, a], [a, b]],
      ["toEqual", [x, y], [x, x2]],
      ["not.toEqual", [x, x2], [x, y]],
      ["toStrictEqual", [x, y], [x, x2]],
      ["toMatchObject", [x, y], [x, x2]],
      ["toContain", [[a], b], [[a], a]],
      ["toBeTruthy", [a === b], [b]],
      ["toBeFalsy", [b], [a === b]],
      ["toThrow", [() => a], [() => { throw new Error(String(a)); }]],
    ];
    for (const [label, expect] of expects) {
      // What the test counts of its assertions (`expect.assertions(n)`), as it was: these
      // are not its (put back with nothing awaited between: tests may run concurrently).
      const counted = typeof expect.getState === "function" ? { ...expect.getState() } : null;
      for (const [matcher, unequal, equal] of matchers) {
        const path = matcher.split(".");
        const call = ([actual, ...expected]) => {
          let target = expect(actual);
          for (const step of path.slice(0, -1)) target = target[step];
          return target[path[path.length - 1]](...expected);
        };
        let present = false;
        try {
          let target = expect(a);
          for (const step of path) target = target[step];
          present = typeof target === "function";
        } catch {}
        if (present) check(label + "." + matcher, () => call(unequal), () => call(equal));
      }
      // A value that claims to match anything is still refused.
      if (refusing && expect === own) {
        const judge = { asymmetricMatch: () => true };
        check(label + ".toEqual(asymmetricMatch)", () => expect(judge).toEqual(b), () =>
          expect(a).toEqual(a));
      }
      if (counted && typeof expect.setState === "function") expect.setState(counted);
    }
"""


def split_mark(mark: str) -> str:
    """The run's `mark` as a JavaScript expression of two halves: no line of a planted file
    spells it, so none quoted in a stack trace reads as what the file writes after it."""
    return f"{json.dumps(mark[:8])} + {json.dumps(mark[8:])}"


def files_without_canaries(canaries: Sequence[Canary]) -> Checks:
    """The check that every test file the report lists ran every canary."""
    patterns = [_name_pattern(c.name) for c in canaries]

    def check(result: ProcessResult, parsed: ParsedOutput) -> list[str]:
        files: dict[str, int] = {}
        for case in parsed.test_cases:
            if case.file is None:
                continue
            files.setdefault(case.file, 0)
            if any(p.search(case.name) for p in patterns):
                files[case.file] += 1
        silent = sorted(f for f, seen in files.items() if seen < len(patterns))
        if not silent:
            return []
        more = f" (and {len(silent) - 1} more)" if len(silent) > 1 else ""
        return [f"the test file {silent[0]}{more} lists tests but not the tests planted in it"]

    return check
