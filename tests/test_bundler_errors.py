"""A bundler's build errors, printed by a package script that builds before it tests, are
why it failed: dotenv 17.4.2's `npm test` runs `node scripts/build.js` (esbuild) first, and
a syntax error in lib/main.js read as "npm-test failed: 1 of 1 tests failed", its
`Build failed with 1 error:` counted as a test and the error itself named nowhere."""

from __future__ import annotations

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.verdict import Cause, Kind, Verdict
from tests.results import process_result

CWD = "/work/dotenv"

#: dotenv-17.4.2 with `const = 1` in parseRegex: `npm test`'s output (excerpt).
STDOUT = """\

> dotenv@17.4.2 test
> npm run build && npm run lint && npm run dts-check && tap run tests/**/*.js

> dotenv@17.4.2 build
> node scripts/build.js
"""
STDERR = f"""\
\u2718 [ERROR] Expected identifier but found "="

    lib/main.js:25:8:
      25 \u2502   const = 1
         \u2575         ^

{CWD}/node_modules/esbuild/lib/main.js:2436
      throw reject;
      ^

Error: Build failed with 1 error:
lib/main.js:25:8: ERROR: Expected identifier but found "="
    at failureErrorWithLog ({CWD}/node_modules/esbuild/lib/main.js:1748:15)
    at {CWD}/node_modules/esbuild/lib/main.js:1207:25
  errors: [
    {{
      location: {{
        column: 8,
        file: 'lib/main.js',
        line: 25,
        lineText: '  const = 1',
      }},
      text: 'Expected identifier but found "="'
    }}
  ],
  warnings: []
}}

Node.js v20.20.2
"""
NPM_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "run", "test"), tool="npm-test")


def test_a_build_error_is_named_and_counts_no_test() -> None:
    ran = process_result(("npm",), cwd=CWD, exit_code=1, stdout=STDOUT, stderr=STDERR)
    parsed = parse_output(NPM_TEST, ran, None)
    assert parsed.tests is None, parsed.tests
    [error] = parsed.diagnostics
    assert (error.file, error.line, error.column, error.tool) == ("lib/main.js", 25, 8, "esbuild")
    assert error.message == 'Expected identifier but found "="'
    evidence = classify(NPM_TEST, ran, parsed)
    assert (evidence.verdict, evidence.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)


def test_webpacks_closing_count_is_no_count_of_tests() -> None:
    text = "webpack 5.90.0 compiled with 2 errors in 310 ms\n"
    ran = process_result(("npm",), cwd=CWD, exit_code=1, stdout=text, stderr="")
    assert parse_output(NPM_TEST, ran, None).tests is None
