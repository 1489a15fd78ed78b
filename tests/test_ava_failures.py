"""ava's failing tests behind a package script are named, as mocha's, jest's, vitest's and
uvu's are (`node_failures.printed_failures`)."""

from __future__ import annotations

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.verdict import Kind, Verdict
from tests.results import process_result

NPM_TEST = Check(name="npm-test", kind=Kind.TEST, argv=("npm", "test"), tool="npm-test")

#: camelcase 8's `npm test` (`xo && ava && tsd`) with `capitalizeAfterNumber` defaulting to
#: false: ava's default reporter, cut to two of its five failures.
AVA_FAILS = """
> camelcase@8.0.0 test
> xo && ava && tsd


  ✔ camelCase with preserveConsecutiveUppercase option
  ✘ [fail]: camelCase
  ✔ number handling follows Google Style Guide
  ✘ [fail]: capitalizeAfterNumber edge cases
  ─

  camelCase

  test.js:66

   65:   t.is(camelCase('Hello11World'), 'hello11World');
   66:   t.is(camelCase('hello1world'), 'hello1World');
   67:   t.is(camelCase('Hello1World11foo'), 'hello1World11Foo');

  Difference (- actual, + expected):

  - 'hello1world'
  + 'hello1World'

  › file://test.js:66:4



  capitalizeAfterNumber edge cases

  test.js:260

   259: test('capitalizeAfterNumber edge cases', t => {
   260:   t.is(camelCase('foo-2bar'), 'foo2Bar');

  Difference (- actual, + expected):

  - 'foo2bar'
  + 'foo2Bar'

  › file://test.js:260:4

  ─

  2 tests failed
"""


def test_avas_failures_behind_a_package_script_are_named() -> None:
    """Read as text, this was "npm-test failed: 2 of 4 tests failed." with no test named."""
    result = process_result(stdout=AVA_FAILS, cwd="/w", exit_code=1)
    parsed = parse_output(NPM_TEST, result)
    assert classify(NPM_TEST, result, parsed).verdict is Verdict.FAIL
    failed = [c.name for c in parsed.test_cases if c.outcome == "failed"]
    assert failed == ["camelCase", "capitalizeAfterNumber edge cases"]
    first = parsed.test_cases[0].message or ""
    assert "+ 'hello1World'" in first and first.endswith("at test.js:66:4"), first


#: yocto-queue 1.2.2's `npm test` (`ava && tsd`, ava 3.15) with `enqueue` counting each value
#: twice: ava 3's reporter off a terminal marks a failure `✖ title`, without `[fail]:`.
AVA3_FAILS = """
> yocto-queue@1.2.2 test
> ava && tsd


  ✔ .enqueue()
  ✔ .dequeue()
  ✖ .size 
  ✔ iterable
  ✖ .drain() 
  ─

  .size

  Difference:

  - 2
  + 1

  › file://test.js:55:4



  .drain()

  Difference:

  - 3
  + 0

  › file://test.js:80:4

  ─

  2 tests failed
"""

#: ava 3's word on a test file that did not load takes the form of a failure's line, but no
#: recap block bears its title.
AVA3_UNCAUGHT = """
> yocto-queue@1.2.2 test
> ava && tsd


  Uncaught exception in test.js

  SyntaxError: Unexpected identifier 'current'

  ✖ test.js exited with a non-zero exit code: 1
  ─

  1 uncaught exception
"""


def test_ava_3s_failures_are_named_as_its_recap_names_them() -> None:
    """This was "npm-test failed: 2 of 7 tests failed." with no test named."""
    result = process_result(stdout=AVA3_FAILS, cwd="/w", exit_code=1)
    parsed = parse_output(NPM_TEST, result)
    assert classify(NPM_TEST, result, parsed).verdict is Verdict.FAIL
    failed = [c for c in parsed.test_cases if c.outcome == "failed"]
    assert [c.name for c in failed] == [".size", ".drain()"]
    first = failed[0].message or ""
    assert "+ 1" in first and first.endswith("at test.js:55:4"), first


def test_ava_3s_word_on_the_run_is_no_test() -> None:
    result = process_result(stdout=AVA3_UNCAUGHT, cwd="/w", exit_code=1)
    parsed = parse_output(NPM_TEST, result)
    assert classify(NPM_TEST, result, parsed).verdict is Verdict.FAIL
    assert not [c.name for c in parsed.test_cases if "exited" in c.name]
