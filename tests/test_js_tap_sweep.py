"""node-tap, tape, borp and `standard | snazzy` as a sweep of npm packages found them
misread: plain node-tap TAP (no `# pass N`) read as no tests; snazzy's bare `✖ 1 problem`
read as a failure that said nothing; tape, node-tap and borp failures counted but not
named; node-tap's own per-test timeout read as a failure, not a hang. The outputs are
those runs' own, trimmed where marked."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import ParsedOutput, parse_output
from assay.process import ProcessResult
from assay.verdict import Cause, Kind, Verdict
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.results import process_result
from tests.test_node_failures import GLOBAL

NPM_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "test"), tool="npm-test")


#: on-exit-leak-free-2.1.2-pristine: `npm test`'s stdout.
NODE_TAP_PASS = """\
> on-exit-leak-free@2.1.2 test
> standard | snazzy && tap test/*.js

TAP version 13
# Subtest: test/base.test.js
    # Subtest: close.js
        ok 1 - should be equal
        1..1
    ok 1 - close.js # time=213.215ms

    # Subtest: beforeExit
        ok 1 - should be equal
        1..1
    ok 2 - beforeExit # time=305.089ms

    # Subtest: gc-not-close.js
        ok 1 - should be equal
        1..1
    ok 3 - gc-not-close.js # time=207.117ms

    # Subtest: unregister.js
        ok 1 - should be equal
        1..1
    ok 4 - unregister.js # time=217.285ms

    # Subtest: undefined
        ok 1 - expected to throw
        1..1
    ok 5 - undefined # time=2.083ms

    1..5
    # time=950.338ms
ok 1 - test/base.test.js # time=950.338ms

# Subtest: test/event-emitter-leak.test.js
    ok 1 - completed
    1..1
    # time=3.91ms
ok 2 - test/event-emitter-leak.test.js # time=3.91ms

1..2
# time=2593.802ms
----------|---------|----------|---------|---------|-------------------
File      | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s
----------|---------|----------|---------|---------|-------------------
All files |     100 |      100 |     100 |     100 |
 index.js |     100 |      100 |     100 |     100 |
----------|---------|----------|---------|---------|-------------------
"""
NODE_TAP_PASS_CWD = "/dev/shm/assay-bwrap-c1c56c529ea9cd9b-19613_41492_4026531836-297y4m9b"


#: on-exit-leak-free-2.1.2-wrong2: `npm test`'s stdout.
NODE_TAP_FAIL = """\
> on-exit-leak-free@2.1.2 test
> standard | snazzy && tap test/*.js

TAP version 13
# Subtest: test/base.test.js
    # Subtest: close.js
        ok 1 - should be equal
        1..1
    ok 1 - close.js # time=269.307ms

    # Subtest: beforeExit
        ok 1 - should be equal
        1..1
    ok 2 - beforeExit # time=390.413ms

    # Subtest: gc-not-close.js
        ok 1 - should be equal
        1..1
    ok 3 - gc-not-close.js # time=248.15ms

    # Subtest: unregister.js
        ok 1 - should be equal
        1..1
    ok 4 - unregister.js # time=170.581ms

    # Subtest: undefined
        not ok 1 - expected to throw
          ---
          at:
            line: 29
            column: 3
            file: test/base.test.js
            type: Test
          stack: |
            Test.<anonymous> (test/base.test.js:29:3)
          source: |
            test('undefined', async ({ throws }) => {
              throws(() => register(undefined))
            --^
            })
          ...

        1..1
        # failed 1 test
    not ok 5 - undefined # time=17.004ms

    1..5
    # failed 1 of 5 tests
    # time=1099.912ms
not ok 1 - test/base.test.js # time=1099.912ms
  ---
  env: {}
  file: test/base.test.js
  timeout: 30000
  command: /usr/bin/node
  args:
    - test/base.test.js
  stdio:
    - 0
    - pipe
    - 2
  cwd: /dev/shm/assay-bwrap-21cdabf135b2a540-17011_139824_4026531836-h7g3duok
  exitCode: 1
  ...

# Subtest: test/event-emitter-leak.test.js
    ok 1 - completed
    1..1
    # time=4.035ms
ok 2 - test/event-emitter-leak.test.js # time=4.035ms

1..2
# failed 1 of 2 tests
# time=3291.136ms
----------|---------|----------|---------|---------|-------------------
File      | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s
----------|---------|----------|---------|---------|-------------------
All files |     100 |      100 |     100 |     100 |
 index.js |     100 |      100 |     100 |     100 |
----------|---------|----------|---------|---------|-------------------
"""
NODE_TAP_FAIL_CWD = "/dev/shm/assay-bwrap-21cdabf135b2a540-17011_139824_4026531836-h7g3duok"


#: fast-redact-3.5.0-wrong: `npm test`'s stdout (excerpt).
NODE_TAP_FAILS = """\
> fast-redact@3.5.0 test
> tap test

TAP version 13
# Subtest: test/index.js
    # Subtest: returns no-op when passed no paths [serialize: false]
        ok 1 - expected to not throw
        ok 2 - expected to not throw
        1..2
    ok 1 - returns no-op when passed no paths [serialize: false] # time=2.56ms

    # Subtest: returns serializer when passed no paths [serialize: default]
        ok 1 - should be equal
        ok 2 - should be equal
        1..2
    ok 2 - returns serializer when passed no paths [serialize: default] # time=0.87ms

    # Subtest: returns censored values when passed array at wildcard key
        not ok 1 - should be equivalent strictly
          ---
          found:
            - '[REDACTD]'
            - '[REDACTD]'
          wanted:
            - '[REDACTED]'
            - '[REDACTED]'
          at:
            line: 117
            column: 3
            file: test/index.js
            type: Test
          stack: |
            Test.<anonymous> (test/index.js:117:3)
            Object.<anonymous> (test/index.js:110:1)
            Generator.next (<anonymous>)
          source: |
            strictSame(res.a, [censor, censor])
          ...

        1..1
        # failed 1 test
    not ok 9 - returns censored values when passed array at wildcard key # time=11.842ms

    1..3
    # failed 1 of 3 tests
    # time=820.596ms
not ok 1 - test/index.js # time=1285.696ms
  ---
  timeout: 30000
  file: test/index.js
  childId: 1
  command: /usr/bin/node
  args:
    - '-r'
    - >-
      /dev/shm/assay-bwrap-4238d0c21ec651ea-28960_82203_4026531836-_jdx8i2i/node_modules/esm/esm.js
    - test/index.js
  stdio:
    - 0
    - pipe
    - 2
  cwd: /dev/shm/assay-bwrap-4238d0c21ec651ea-28960_82203_4026531836-_jdx8i2i
  exitCode: 1
  ...

1..1
# failed 1 test
# time=1303.803ms
"""
NODE_TAP_FAILS_CWD = "/dev/shm/assay-bwrap-4238d0c21ec651ea-28960_82203_4026531836-_jdx8i2i"


#: fast-redact-3.5.0-hang: `npm test`'s stdout.
NODE_TAP_TIMEOUT = """\
> fast-redact@3.5.0 test
> tap test

TAP version 13
# Subtest: test/index.js
    # Subtest: returns no-op when passed no paths [serialize: false]
        ok 1 - expected to not throw
        ok 2 - expected to not throw
        1..2
    ok 1 - returns no-op when passed no paths [serialize: false] # time=4.694ms

    # Subtest: returns serializer when passed no paths [serialize: default]
        ok 1 - should be equal
        ok 2 - should be equal
        1..2
    ok 2 - returns serializer when passed no paths [serialize: default] # time=3.596ms


    not ok 3 - timeout!
      ---
      expired: test/index.js
      ...
    1..3
    # failed 1 of 3 tests
not ok 1 - test/index.js # time=31047.531ms
  ---
  timeout: 30000
  file: test/index.js
  childId: 1
  command: /usr/bin/node
  args:
    - '-r'
    - >-
      /dev/shm/assay-bwrap-53d210ec60751308-29411_84401_4026531836-roxdi8kt/node_modules/esm/esm.js
    - test/index.js
  stdio:
    - 0
    - pipe
    - 2
  cwd: /dev/shm/assay-bwrap-53d210ec60751308-29411_84401_4026531836-roxdi8kt
  ...

1..1
# failed 1 test
# time=31062.855ms
"""
NODE_TAP_TIMEOUT_CWD = "/dev/shm/assay-bwrap-53d210ec60751308-29411_84401_4026531836-roxdi8kt"


#: on-exit-leak-free-2.1.2-compile: `npm test`'s stdout.
SNAZZY_PARSE_ERROR = """\
> on-exit-leak-free@2.1.2 test
> standard | snazzy && tap test/*.js


/dev/shm/assay-bwrap-2b3c5866b2e60b2f-30951_89828_4026531836-jkfgk4j2/index.js
  90:26  error  Parsing error: Unexpected token {  null

✖ 1 problem
"""
SNAZZY_PARSE_ERROR_CWD = "/dev/shm/assay-bwrap-2b3c5866b2e60b2f-30951_89828_4026531836-jkfgk4j2"


SNAZZY_PARSE_ERROR_STDERR = "standard: Use JavaScript Standard Style (https://standardjs.com)\n"


#: on-exit-leak-free-2.1.2-hang: `npm test`'s stdout.
SNAZZY_FINDINGS = """\
> on-exit-leak-free@2.1.2 test
> standard | snazzy && tap test/*.js


/dev/shm/assay-bwrap-8105d19be8f94ac4-31744_93928_4026531836-v7ov6eah/index.js
   91:16  error  Empty block statement  no-empty
   92:3   error  Unreachable code       no-unreachable
  101:5   error  Unreachable code       no-unreachable

✖ 3 problems
"""
SNAZZY_FINDINGS_CWD = "/dev/shm/assay-bwrap-8105d19be8f94ac4-31744_93928_4026531836-v7ov6eah"


SNAZZY_FINDINGS_STDERR = "standard: Use JavaScript Standard Style (https://standardjs.com)\n"


#: events-3.3.0-wrong: `npm test`'s stdout.
TAPE_THROWN = """\
> events@3.3.0 test
> node tests/index.js

TAP version 13
# ./add-listeners.js
# ./check-listener-leaks.js
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 11 default listeners added. Use emitter.setMaxListeners() to increase limit
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 6 specific listeners added. Use emitter.setMaxListeners() to increase limit
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 2 only one listeners added. Use emitter.setMaxListeners() to increase limit
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 43 fortytwo listeners added. Use emitter.setMaxListeners() to increase limit
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 45 fortytwo listeners added. Use emitter.setMaxListeners() to increase limit
# MaxListenersExceededWarning: Possible EventEmitter memory leak detected. 2 uno listeners added. Use emitter.setMaxListeners() to increase limit
# ./errors.js
# ./events-list.js
# ./events-once.js
# ./listener-count.js
not ok 1 AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 3 !== 2
  ---
    operator: fail
    at: Test.<anonymous> (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/tests/index.js:24:13)
    stack: |-
      Error: AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

      3 !== 2

          at Test.assert [as _assert] (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/node_modules/tape/lib/test.js:548:48)
          at Test.fail (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/node_modules/tape/lib/test.js:657:7)
          at Test.<anonymous> (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/tests/index.js:24:13)
          at Test.run (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/node_modules/tape/lib/test.js:151:28)
          at Immediate.next [as _onImmediate] (/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
# ./listeners-side-effects.js
# ./listeners.js
# ./max-listeners.js
# ./method-names.js
# ./modify-in-emit.js
# ./num-args.js
# ./once.js
# ./prepend.js
# ./set-max-listeners-side-effects.js
# ./special-event-names.js
# skipped __proto__
# ./subclass.js
# ./symbols.js
# ./remove-all-listeners.js
# ./remove-listeners.js

1..1
# tests 1
# pass  0
# fail  1
"""
TAPE_THROWN_CWD = "/dev/shm/assay-bwrap-0d5135d41efe4b38-10163_118285_4026531836-d8azyq6p"


#: fastq-1.20.3-wrong: `npm test`'s stdout (excerpt).
TAPE_FAILS = """\
> fastq@1.20.3 test
> npm run lint && npm run unit


> fastq@1.20.3 lint
> eslint .


> fastq@1.20.3 unit
> nyc --lines 100 --branches 100 --functions 100 --check-coverage --reporter=text tape test/test.js test/promise.js

TAP version 13
# concurrency
ok 1 should throw
ok 2 should throw
# getQueue
not ok 132 nothing waiting
  ---
    operator: equal
    expected: 0
    actual:   1
    at: Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:364:5)
    stack: |-
      Error: nothing waiting
          at Test.assert [as _assert] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:548:48)
          at Test.strictEqual (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:734:7)
          at Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:364:5)
          at Test.run (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:151:28)
          at Immediate.next [as _onImmediate] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
not ok 133 nothing waiting
  ---
    operator: equal
    expected: 0
    actual:   1
    at: Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:366:5)
    stack: |-
      Error: nothing waiting
          at Test.assert [as _assert] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:548:48)
          at Test.strictEqual (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:734:7)
          at Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:366:5)
          at Test.run (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:151:28)
          at Immediate.next [as _onImmediate] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
not ok 134 one task waiting
  ---
    operator: equal
    expected: 1
    actual:   2
    at: Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:368:5)
    stack: |-
      Error: one task waiting
          at Test.assert [as _assert] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:548:48)
          at Test.strictEqual (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:734:7)
          at Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:368:5)
          at Test.run (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:151:28)
          at Immediate.next [as _onImmediate] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
ok 135 should be equal
not ok 136 two tasks waiting
  ---
    operator: equal
    expected: 2
    actual:   3
    at: Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:371:5)
    stack: |-
      Error: two tasks waiting
          at Test.assert [as _assert] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:548:48)
          at Test.strictEqual (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:734:7)
          at Test.<anonymous> (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/test/test.js:371:5)
          at Test.run (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/test.js:151:28)
          at Immediate.next [as _onImmediate] (/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9/node_modules/tape/lib/results.js:175:7)
          at process.processImmediate (node:internal/timers:483:21)
  ...
ok 273 all promises were rejected
ok 274 queue is empty

1..274
# tests 274
# pass  270
# fail  4

----------|---------|----------|---------|---------|-------------------
File      | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s
----------|---------|----------|---------|---------|-------------------
All files |     100 |      100 |     100 |     100 |
 queue.js |     100 |      100 |     100 |     100 |
----------|---------|----------|---------|---------|-------------------
"""
TAPE_FAILS_CWD = "/dev/shm/assay-bwrap-69d46b8c9237de83-15497_133792_4026531836-jhiaypw9"


#: avvio-9.3.1-wrong: `npm test`'s stdout (excerpt).
BORP_FAILS = """\
> avvio@9.3.1 test
> npm run test:unit && npm run test:typescript


> avvio@9.3.1 test:unit
> borp --coverage --check-coverage --reporter=@jsumners/line-reporter

passed: /dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/twice-done.test.js (230.8 ms)
passed: /dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/to-json.test.js (180.5 ms)
passed: /dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/symbol-async-dispose.test.js (209.6 ms)
failed: /dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/pretty-print.test.js (369.6 ms)
failed: /dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/plugin-timeout-await.test.js (396.3 ms)


Failed tests:

/dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/pretty-print.test.js
\tline: 6, column: 1
\t\tPromise resolution is still pending but the event loop has already resolved

/dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/plugin-timeout-await.test.js
\tline: 8, column: 1
\t\tAssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
\t\t+ actual - expected

\t\t+ "Plugin did not start in time: 'first'. You may have forgotten to call 'done' function or to resolve a Promise"
\t\t- "Plugin did not start in time: 'third'. You may have forgotten to call 'done' function or to resolve a Promise"
\t\t    at assert.<computed> [as strictEqual] (node:internal/test_runner/test:242:18)
\t\t    at TestContext.<anonymous> (/dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc/test/plugin-timeout-await.test.js:31:14)
\t\t    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)
\t\t    at async Test.run (node:internal/test_runner/test:797:9)
\t\t    at async Test.processPendingSubtests (node:internal/test_runner/test:526:7) {
\t\t  generatedMessage: true,
\t\t  code: 'ERR_ASSERTION',
\t\t  actual: "Plugin did not start in time: 'first'. You may have forgotten to call 'done' function or to resolve a Promise",
\t\t  expected: "Plugin did not start in time: 'third'. You may have forgotten to call 'done' function or to resolve a Promise",
\t\t  operator: 'strictEqual'
\t\t}


Passed: 329
Failed: 2
Total: 331
"""
BORP_FAILS_CWD = "/dev/shm/assay-bwrap-fb9b7e0716af2780-26947_68689_4026531836-sn4ttguc"


BORP_FAILS_STDERR = "parsed config: test/**/*.test.js\n"


def _run(stdout: str, cwd: str, exit_code: int, stderr: str = "") -> ProcessResult:
    return process_result(stdout=stdout, stderr=stderr, cwd=cwd, exit_code=exit_code)


def _read(result: ProcessResult) -> tuple[ParsedOutput, Verdict, Cause]:
    parsed = parse_output(NPM_TEST, result)
    evidence = classify(NPM_TEST, result, parsed)
    return parsed, evidence.verdict, evidence.cause


def _failed(parsed: ParsedOutput) -> list[str]:
    return [c.name for c in parsed.test_cases if c.outcome == "failed"]


# --------------------------------------------------------------------------- A: plain TAP


def test_node_tap_without_a_summary_counts_its_innermost_tests() -> None:
    parsed, verdict, _ = _read(_run(NODE_TAP_PASS, NODE_TAP_PASS_CWD, 0))
    assert parsed.tests is not None
    # Five subtests of base.test.js, and event-emitter-leak.test.js with no subtest.
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.errors) == (6, 0, 0)
    assert not parsed.no_tests_reported
    assert verdict is Verdict.PASS


#: fast-content-type-parse-2.0.1-pristine: `npm run test:unit`'s stdout (tap 19), two of
#: parse's 24 tests and one of safeParse's kept; node-tap's own closing counts assertions.
NODE_TAP_NESTED = """\
> fast-content-type-parse@2.0.1 test:unit
> tap

TAP version 14
1..1
# Subtest: test/index.test.js
    # Subtest: parse
        1..2
        # Subtest: should parse basic type
            1..1
            ok 1 - should be equivalent strictly
        ok 1 - should parse basic type # time=4.672ms

        # Subtest: should parse parameters
            1..2
            ok 1 - should be equivalent strictly
            ok 2 - should be equivalent
        ok 2 - should parse parameters # time=1.679ms

    ok 1 - parse # time=21.1ms

    # Subtest: safeParse
        1..1
        # Subtest: should safeParse basic type
            1..1
            ok 1 - should be equivalent strictly
        ok 1 - should safeParse basic type # time=1.093ms

    ok 2 - safeParse # time=73.002ms

    1..2
ok 1 - test/index.test.js # time=1241.312ms

# { total: 4, pass: 4 }
# time=1289.986ms
"""


def test_node_tap_counts_the_tests_inside_a_files_groups_not_the_file() -> None:
    """fast-content-type-parse's 48 tests in two groups of one file were "1 passed"."""
    parsed, verdict, _ = _read(_run(NODE_TAP_NESTED, "/w", 0))
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed, parsed.tests.errors) == (3, 0, 0)
    assert verdict is Verdict.PASS


PLAIN = "TAP version 13\n# Subtest: a.js\n    ok 1 - fine\n    1..1\nok 1 - a.js # time=3ms\n"


@pytest.mark.parametrize(
    ("tail", "counts"),
    [
        # A plan of 3 with 2 results: the run died before its last test.
        ("ok 2 - b.js # time=1ms\n1..3\n# time=9ms\n", (2, 0, 1, 0)),
        ("ok 2 - b.js # SKIP no database\n1..2\n", (1, 0, 0, 1)),
        ("ok 2 - b.js # skip\nnot ok 3 - c.js # TODO later\n1..3\n", (1, 0, 0, 2)),
        ("not ok 2 - b.js # time=1ms\n1..2\n", (1, 1, 0, 0)),
        ("Bail out! database gone\n1..1\n", (1, 0, 1, 0)),
    ],
)
def test_plain_tap_counts_plans_skips_and_bail_outs(
    tail: str, counts: tuple[int, int, int, int]
) -> None:
    parsed = parse_output(NPM_TEST, _run(PLAIN + tail, "/w", 0))
    tests = parsed.tests
    assert tests is not None
    assert (tests.passed, tests.failed, tests.errors, tests.skipped) == counts


@pytest.mark.parametrize("exit_code", [0, 1])
def test_a_plan_the_results_fall_short_of_is_never_a_pass(exit_code: int) -> None:
    short = PLAIN + "ok 2 - b.js # time=1ms\n1..3\n# time=9ms\n"
    _, verdict, _ = _read(_run(short, "/w", exit_code))
    assert verdict is not Verdict.PASS


def test_a_nested_not_ok_under_a_top_level_ok_is_counted_as_the_runner_says() -> None:
    """A top-level `not ok` is a failure whatever its children said; the unnamed failing
    exit of a stream whose results all passed is not a pass."""
    text = PLAIN.replace("ok 1 - fine", "not ok 1 - broken") + "1..1\n"
    _, verdict, _ = _read(_run(text, "/w", 1))
    assert verdict is not Verdict.PASS


# --------------------------------------------------------------------------- B: snazzy


@pytest.mark.parametrize(
    ("stdout", "stderr", "cwd", "first"),
    [
        (
            SNAZZY_PARSE_ERROR,
            SNAZZY_PARSE_ERROR_STDERR,
            SNAZZY_PARSE_ERROR_CWD,
            ("index.js", 90, 26, None, "Parsing error: Unexpected token {"),
        ),
        (
            SNAZZY_FINDINGS,
            SNAZZY_FINDINGS_STDERR,
            SNAZZY_FINDINGS_CWD,
            ("index.js", 91, 16, "no-empty", "Empty block statement"),
        ),
    ],
)
def test_snazzys_bare_total_fails_the_check_with_its_findings(
    stdout: str, stderr: str, cwd: str, first: tuple[object, ...]
) -> None:
    parsed, verdict, cause = _read(_run(stdout, cwd, 1, stderr))
    assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    found = parsed.diagnostics[0]
    assert (found.file, found.line, found.column, found.code, found.message) == first
    assert all(d.severity == "error" for d in parsed.diagnostics)


def test_warnings_alone_under_a_bare_total_say_nothing() -> None:
    text = "/w/index.js\n  3:1  warning  Unexpected console statement  no-console\n\n✖ 1 problem\n"
    parsed, verdict, cause = _read(_run(text, "/w", 1))
    assert parsed.diagnostics == ()
    assert (verdict, cause) == (Verdict.INCONCLUSIVE, Cause.UNRECOGNIZED_FAILURE)


# --------------------------------------------------------------------------- D: names


def test_tape_failures_are_named_by_their_block() -> None:
    parsed, verdict, _ = _read(_run(TAPE_FAILS, TAPE_FAILS_CWD, 1))
    assert verdict is Verdict.FAIL
    assert parsed.tests is not None and parsed.tests.failed == 4
    assert _failed(parsed) == ["getQueue"] * 4
    first = parsed.test_cases[0].message or ""
    assert first.splitlines()[0] == "nothing waiting"
    assert "expected: 0" in first and "actual: 1" in first
    assert first.endswith(f"at {TAPE_FAILS_CWD}/test/test.js:364:5")


def test_a_tape_block_that_threw_is_named_with_the_error() -> None:
    parsed, _, _ = _read(_run(TAPE_THROWN, TAPE_THROWN_CWD, 1))
    (case,) = parsed.test_cases
    assert case.name == "./listener-count.js"
    assert "3 !== 2" in (case.message or "")
    assert (case.message or "").endswith("tests/index.js:24:13")


def test_node_tap_failures_are_named_by_their_subtests() -> None:
    parsed, verdict, _ = _read(_run(NODE_TAP_FAIL, NODE_TAP_FAIL_CWD, 1))
    assert verdict is Verdict.FAIL
    assert parsed.tests is not None
    assert (parsed.tests.passed, parsed.tests.failed) == (5, 1)
    (case,) = parsed.test_cases
    assert case.name == "test/base.test.js > undefined"
    assert case.message == "expected to throw\nat test/base.test.js:29:3"


def test_node_tap_names_each_failing_subtest_not_its_parents() -> None:
    parsed, _, _ = _read(_run(NODE_TAP_FAILS, NODE_TAP_FAILS_CWD, 1))
    assert _failed(parsed) == [
        "test/index.js > returns censored values when passed array at wildcard key"
    ]
    assert (parsed.test_cases[0].message or "").startswith("should be equivalent strictly")


@pytest.mark.parametrize("took", ["(369.6 ms)", "(2,160 ms)"])
def test_borp_failures_are_named_by_file(took: str) -> None:
    stdout = BORP_FAILS.replace("pretty-print.test.js (369.6 ms)", f"pretty-print.test.js {took}")
    parsed, verdict, _ = _read(_run(stdout, BORP_FAILS_CWD, 1, BORP_FAILS_STDERR))
    assert verdict is Verdict.FAIL
    assert parsed.tests is not None and (parsed.tests.passed, parsed.tests.failed) == (329, 2)
    assert _failed(parsed) == ["test/pretty-print.test.js", "test/plugin-timeout-await.test.js"]
    pending, assertion = (c.message or "" for c in parsed.test_cases)
    assert pending.startswith("Promise resolution is still pending")
    assert pending.endswith("test/pretty-print.test.js:6:1")
    assert assertion.startswith("AssertionError [ERR_ASSERTION]")
    assert assertion.endswith("test/plugin-timeout-await.test.js:31:14")


# --------------------------------------------------------------------------- E: node-tap timeout


def test_node_taps_own_timeout_is_a_hang_not_a_failure() -> None:
    parsed, verdict, cause = _read(_run(NODE_TAP_TIMEOUT, NODE_TAP_TIMEOUT_CWD, 1))
    assert parsed.hung_tests == ("test/index.js",)
    assert parsed.tests is not None and not parsed.tests.any_failed
    assert (verdict, cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_node_taps_timeouts_cut_short_by_assays_deadline_are_hangs_not_failures() -> None:
    """npm/ini with a loop in its decoder: node-tap timed two files out (30 s each), then
    assay's deadline stopped the run before node-tap's closing plan. Read as plain text,
    that was "2 of 2 tests failed": FAILED for a hang."""
    cut_short = NODE_TAP_TIMEOUT.split("\n1..1\n")[0] + "\n"
    second = cut_short.split("TAP version 13\n", 1)[1].replace("test/index.js", "test/two.js")
    cut_short += second.replace("not ok 1 - test/two.js", "not ok 2 - test/two.js")
    result = dataclasses.replace(
        _run(cut_short, NODE_TAP_TIMEOUT_CWD, 1), exit_code=None, signal=15, timed_out=True
    )
    parsed, verdict, cause = _read(result)
    assert parsed.hung_tests == ("test/index.js", "test/two.js")
    assert parsed.tests is not None and not parsed.tests.any_failed, parsed.tests
    assert (verdict, cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_a_real_failure_beside_node_taps_timeout_still_fails() -> None:
    failing = NODE_TAP_TIMEOUT.replace(
        "        ok 2 - should be equal\n        1..2\n    ok 2 -",
        "        not ok 2 - should be equal\n        1..2\n    not ok 2 -",
    )
    assert failing != NODE_TAP_TIMEOUT
    parsed, verdict, cause = _read(_run(failing, NODE_TAP_TIMEOUT_CWD, 1))
    assert (verdict, cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)
    assert parsed.tests is not None and parsed.tests.failed == 1
    assert _failed(parsed) == [
        "test/index.js > returns serializer when passed no paths [serialize: default]"
    ]


# --------------------------------------------------------------------------- end to end


TAPE_TEST = (
    "var test = require('tape');\n"
    "test('adds', function (t) { t.equal(1 + 1, 2); t.end(); });\n"
    "test('subtracts', function (t) { t.equal(2 - 1, {value}, 'one less'); t.end(); });\n"
)


@pytest.mark.parametrize(("value", "status"), [("1", "VERIFIED"), ("3", "FAILED")])
def test_a_real_tape_run_names_its_failing_block(tmp_path: Path, value: str, status: str) -> None:
    if not (GLOBAL / "tape").is_dir():
        pytest.fail(f"tape is needed at {GLOBAL / 'tape'} (.ci/run installs it)")
    package = {"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}}
    repo = write(
        tmp_path / "repo",
        {"package.json": json.dumps(package), "test.js": TAPE_TEST.replace("{value}", value)},
    )
    (repo / "node_modules").mkdir()
    (repo / "node_modules" / "tape").symlink_to(GLOBAL / "tape")
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", str(repo), env=env, timeout=180)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (check,) = report["checks"]
    failed = [c for c in check["test_cases"] if c["outcome"] == "failed"]
    if status == "VERIFIED":
        assert check["tests"]["passed"] == 2 and not failed, check
    else:
        assert [c["name"] for c in failed] == ["subtracts"], check["test_cases"]
        assert failed[0]["message"].startswith("one less\nexpected: 3\nactual: 1")


#: node-tap's reporter replayed by a node script (node-tap itself is not installed here).
REPLAY = "process.stdout.write({text});\nprocess.exitCode = {code};\n"


@pytest.mark.parametrize(
    ("text", "code", "status", "cause"),
    [
        (NODE_TAP_PASS, 0, "VERIFIED", "exit_zero"),
        (NODE_TAP_TIMEOUT, 1, "INDETERMINATE", "timeout"),
        (NODE_TAP_FAIL, 1, "FAILED", "exit_nonzero"),
    ],
)
def test_node_tap_output_through_npm_test(
    tmp_path: Path, text: str, code: int, status: str, cause: str
) -> None:
    package = {"name": "t", "version": "1.0.0", "scripts": {"test": "node replay.js"}}
    replay = REPLAY.format(text=json.dumps(text), code=code)
    repo = write(tmp_path / "repo", {"package.json": json.dumps(package), "replay.js": replay})
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay("verify", "--json", "--no-cache", str(repo), env=env, timeout=180)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    (check,) = report["checks"]
    assert check["cause"] == cause, check


# --------------------------------------------------------------------------- F: uvu hang

#: dequal's `npm test` (uvu) with an infinite loop in `dequal()`: the suite `scalars` of
#: `index.js` began and never closed with its `(n / m)` count when the deadline came.
UVU_HUNG = (
    "\n> dequal@2.0.3 test\n> uvu -r esm test\n\n"
    "\x1b[1m\x1b[4m\x1b[37mindex.js\x1b[22m\x1b[24m\x1b[39m\n"
    "\x1b[47m\x1b[1m\x1b[30m exports \x1b[39m\x1b[49m\x1b[22m \x1b[90m• \x1b[39m\x1b[32m  (1 / 1)\n"
    "\x1b[39m\x1b[47m\x1b[1m\x1b[30m scalars \x1b[39m\x1b[49m\x1b[22m "
)


def test_a_uvu_suite_stopped_at_the_deadline_is_named() -> None:
    result = dataclasses.replace(_run(UVU_HUNG, "/w", 1), exit_code=None, signal=15, timed_out=True)
    parsed, verdict, cause = _read(result)
    assert parsed.hung_tests == ("index.js > scalars",)
    assert (verdict, cause) == (Verdict.INCONCLUSIVE, Cause.TIMEOUT)
    assert "while running index.js > scalars" in classify(NPM_TEST, result, parsed).note


def test_a_finished_uvu_run_names_no_hang() -> None:
    done = UVU_HUNG + "\x1b[90m• • \x1b[39m\x1b[32m  (2 / 2)\n\n  Total:     3\n"
    result = dataclasses.replace(_run(done, "/w", 1), exit_code=None, signal=15, timed_out=True)
    parsed, _, _ = _read(result)
    assert parsed.hung_tests == ()
