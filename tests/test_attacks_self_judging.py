"""Canaries: jest and vitest values that decide their own comparison.

Their equality asks a value with an `asymmetricMatch` method whether it matches instead of
comparing it, so code under test that returns `{ asymmetricMatch: () => true }` (or jest's
own `expect.anything()`), or passes one to a mock, passes `toEqual`, `toMatchObject` and
`toHaveBeenCalledWith` with a wrong answer; nothing of the runner's is replaced. The guard
in the planted setup file refuses such a received value: each attack, verified as untrusted
work (`--base HEAD~1 --protect`), is INDETERMINATE (`report_tampered`), and code that takes
the guard out of the way is found by the must-pass canary. Honest projects that use
asymmetric matchers where they belong, in what the test expects, stay VERIFIED.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.report import Report
from assay.verdict import Cause, Status, Verdict
from tests.attacks import change_on_base, explain, verify_change

pytestmark = pytest.mark.slow

CALC_CJS = """\
exports.add = (a, b) => a + b;
exports.pair = (a, b) => ({ sum: a + b, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: a + b });
"""
CALC_ESM = CALC_CJS.replace("exports.", "export const ")

TESTS = """\
const { add, pair, report } = require('../calc.js');

test('adds', () => {
  expect(add(2, 3)).toEqual(5);
});

test('pairs', () => {
  expect(pair(2, 3)).toMatchObject({ sum: 5, parts: [2, expect.any(Number)] });
  expect({ n: 1, of: expect.any(Number) }).toEqual({ n: 1, of: expect.any(Number) });
});

test('reports', () => {
  const log = MOCK();
  report(log, 2, 3);
  expect(log).toHaveBeenCalledWith({ sum: 5 });
  expect(log).toHaveBeenCalledWith(expect.objectContaining({ sum: expect.any(Number) }));
});

test('hands over', () => {
  // A value whose asymmetricMatch leaves the comparing to the runner, as a deep mock's does.
  const handle = { id: 1, asymmetricMatch: () => undefined };
  const log = MOCK();
  log(handle);
  expect(log).toHaveBeenCalledWith(handle);
  expect(handle).toMatchObject({ id: 1 });
});
"""
JEST_TESTS = TESTS.replace("MOCK()", "jest.fn()")
VITEST_IMPORTS = (
    "import { test, expect, vi } from 'vitest';\nimport { add, pair, report } from '../calc.js';"
)
VITEST_TESTS = TESTS.replace("MOCK()", "vi.fn()").replace(
    "const { add, pair, report } = require('../calc.js');", VITEST_IMPORTS
)


def _base(runner: str) -> dict[str, str]:
    if runner == "jest":
        return {
            "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
            "jest.config.js": "module.exports = { testEnvironment: 'node' };\n",
            "calc.js": CALC_CJS,
            "test/calc.test.js": JEST_TESTS,
        }
    return {
        "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
        "vitest.config.mjs": "export default { test: { environment: 'node' } };\n",
        "calc.js": CALC_ESM,
        "test/calc.test.js": VITEST_TESTS,
    }


def _module(runner: str, code: str) -> str:
    return code if runner == "jest" else code.replace("exports.", "export const ")


# Each wrong answer is a value that says it matches whatever it is compared with.
RETURNS_A_JUDGE = """\
const yes = { asymmetricMatch: () => true };
exports.add = (a, b) => yes;
exports.pair = (a, b) => ({ sum: a + b, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: a + b });
"""
NESTS_A_JUDGE = """\
exports.add = (a, b) => a + b;
exports.pair = (a, b) => ({ sum: { asymmetricMatch: () => true }, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: a + b });
"""
HANDS_A_MOCK_A_JUDGE = """\
exports.add = (a, b) => a + b;
exports.pair = (a, b) => ({ sum: a + b, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: { asymmetricMatch: () => true } });
"""
# jest's own matcher, reached through the global the test file's realm has.
RETURNS_JESTS_ANYTHING = """\
exports.add = (a, b) => globalThis.expect.anything();
exports.pair = (a, b) => ({ sum: a + b, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: a + b });
"""


def _needs(tool: str) -> None:
    assert shutil.which(tool), f"{tool} is not installed: `npm install -g {tool}`, as .ci/run does"


def _assert_refused(report: Report, where: str, matcher: str) -> None:
    (test,) = [c for c in report.checks if c.check.kind.value == "test"]
    assert report.status is Status.INDETERMINATE, explain(report)
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    said = (
        f"{where} has its own asymmetricMatch, which says it matches a value it never saw, "
        f"and {matcher} asks it instead of comparing it"
    )
    assert said in test.note, test.note


@pytest.mark.parametrize(
    ("runner", "change", "where", "matcher"),
    [
        ("jest", RETURNS_A_JUDGE, "received", "toEqual"),
        ("vitest", RETURNS_A_JUDGE, "received", "toEqual"),
        ("jest", NESTS_A_JUDGE, "received.sum", "toMatchObject"),
        ("vitest", NESTS_A_JUDGE, "received.sum", "toMatchObject"),
        ("jest", HANDS_A_MOCK_A_JUDGE, "received.mock.calls[0][0].sum", "toHaveBeenCalledWith"),
        ("vitest", HANDS_A_MOCK_A_JUDGE, "received.mock.calls[0][0].sum", "toHaveBeenCalledWith"),
        ("jest", RETURNS_JESTS_ANYTHING, "received", "toEqual"),
    ],
    ids=[
        "jest-returned",
        "vitest-returned",
        "jest-nested",
        "vitest-nested",
        "jest-mock-argument",
        "vitest-mock-argument",
        "jest-expect-anything",
    ],
)
def test_a_value_that_decides_its_own_comparison_is_report_tampered(
    tmp_path: Path, runner: str, change: str, where: str, matcher: str
) -> None:
    _needs(runner)
    repo = change_on_base(tmp_path / "repo", _base(runner), {"calc.js": _module(runner, change)})
    _assert_refused(verify_change(repo), where, matcher)


# The guard taken out of the way: a layer over jest's `toEqual` that hands the guard what
# is expected in place of a received value that claims to match, every name built at run
# time. The must-pass canary's own self-judging value then passes, which it must not.
UNGUARDS_JEST = """\
const store = globalThis[Symbol.for(['$$jest', 'matchers', 'object'].join('-'))];
const name = ['to', 'Equal'].join('');
const guarded = store.matchers[name];
store.matchers[name] = function (received, expected) {
  const judge = received && typeof received.asymmetricMatch === 'function';
  return guarded.call(this, judge ? expected : received, expected);
};
exports.add = (a, b) => ({ asymmetricMatch: () => true });
exports.pair = (a, b) => ({ sum: a + b, parts: [a, b] });
exports.report = (log, a, b) => log({ sum: a + b });
"""


def test_code_that_takes_the_guard_out_of_the_way_is_report_tampered(tmp_path: Path) -> None:
    _needs("jest")
    repo = change_on_base(tmp_path / "repo", _base("jest"), {"calc.js": UNGUARDS_JEST})
    report = verify_change(repo)
    (test,) = [c for c in report.checks if c.check.kind.value == "test"]
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    assert "expect().toEqual(asymmetricMatch) did not fail on unequal values" in test.note


@pytest.mark.parametrize("runner", ["jest", "vitest"])
def test_asymmetric_matchers_where_the_test_expects_them_stay_verified(
    tmp_path: Path, runner: str
) -> None:
    """Matchers on the expected side, on both sides at once, and inside what a mock is
    expected to have been called with, as honest tests use them; and a value whose
    `asymmetricMatch` says nothing (a deep mock's), which the runner compares itself."""
    _needs(runner)
    repo = change_on_base(tmp_path / "repo", _base(runner), {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = [c for c in report.checks if c.check.kind.value == "test"]
    assert test.tests is not None and test.tests.passed == 4, explain(report)


#: A matcher of the project's own, in its protected setup file: it compares with jest's
#: `this.equals`, which asks a self-judging value as `toEqual` does.
OWN_MATCHER = """\
expect.extend({
  toSumTo(received, expected) {
    const pass = this.equals(received, expected);
    return { pass, message: () => `expected ${received} to sum to ${expected}` };
  },
});
"""
OWN_MATCHER_TESTS = """\
const { add } = require('../calc.js');

test('adds', () => {
  expect(add(2, 3)).toSumTo(5);
});
"""


def _with_own_matcher() -> dict[str, str]:
    return {
        **_base("jest"),
        "jest.config.js": (
            "module.exports = { testEnvironment: 'node', setupFilesAfterEnv: ['./matchers.js'] };\n"
        ),
        "matchers.js": OWN_MATCHER,
        "test/calc.test.js": OWN_MATCHER_TESTS,
    }


def test_a_self_judging_value_through_the_projects_own_matcher_is_report_tampered(
    tmp_path: Path,
) -> None:
    _needs("jest")
    repo = change_on_base(tmp_path / "repo", _with_own_matcher(), {"calc.js": RETURNS_A_JUDGE})
    _assert_refused(verify_change(repo), "received", "toSumTo")


def test_the_projects_own_matcher_on_honest_values_stays_verified(tmp_path: Path) -> None:
    _needs("jest")
    repo = change_on_base(tmp_path / "repo", _with_own_matcher(), {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
