"""Canaries: code under test that makes an assertion library lenient for the whole run.

The code the tests load replaces an assertion (`node:assert`'s strictEqual, jest's and
vitest's `toBe`) with one that never fails, spelled in pieces no static signal reads. The
canaries then stay as planted (the must-fail one fails by throwing, not by asserting), the
project's own failing test passes, and nothing else tells the run from an honest one. So
the must-pass canary proves, inside the run, that the assertions the tests use still fail
on unequal values and pass on equal ones: each attack is verified with the real `assay
verify --base HEAD~1 --protect --json` as INDETERMINATE (`report_tampered`), and honest
projects (CommonJS and ESM, globals on and off) stay VERIFIED.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.attacks import change_on_base, verify_change
from tests.cli import verified_json

pytestmark = pytest.mark.slow


def _verify(repo: Path) -> dict[str, Any]:
    """`assay verify --base HEAD~1 --protect --json`: the change as work nobody trusts."""
    return verified_json(repo, None, "--base", "HEAD~1", "--protect")


def _verify_with_canaries(repo: Path) -> dict[str, Any]:
    """The tree as the user's own work, canaries planted in the sandbox's copy."""
    report = verify_change(repo, protect=False, base=None, canaries=True)
    return json.loads(json.dumps(report.to_dict()))  # type: ignore[no-any-return]


def _test_check(report: dict[str, Any]) -> dict[str, Any]:
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    return test


def _explain(report: dict[str, Any]) -> str:
    return json.dumps(
        {"status": report["status"], "note": report["note"], "checks": report["checks"]}
    )[:6000]


def _assert_caught(report: dict[str, Any], replaced: str) -> None:
    test = _test_check(report)
    assert report["status"] == "INDETERMINATE", _explain(report)
    assert (test["verdict"], test["cause"]) == ("inconclusive", "report_tampered"), _explain(report)
    # The note says what the planted test found, not only that it failed.
    assert f"{replaced} did not fail on unequal values" in test["note"], test["note"]


def _assert_verified(report: dict[str, Any]) -> None:
    assert report["status"] == "VERIFIED", _explain(report)
    test = _test_check(report)
    assert test["extra"]["canaries"]["finding"] == "as planted", _explain(report)


def _needs(tool: str) -> None:
    assert shutil.which(tool), f"{tool} is not installed: `npm install -g {tool}`, as .ci/run does"


# --------------------------------------------------------------------------- node --test

CALC_CJS = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n"
CALC_ESM = "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n"
NODE_TESTS_CJS = """\
const test = require('node:test');
const assert = require('node:assert');
const { add, mul } = require('../calc.js');

test('multiplies', () => {
  assert.strictEqual(mul(2, 3), 6);
});

test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});
"""
NODE_TESTS_ESM = """\
import test from 'node:test';
import assert from 'node:assert/strict';
import { add, mul } from '../calc.js';

test('adds', () => {
  assert.equal(add(2, 3), 5);
});

test('multiplies', async () => {
  assert.deepEqual({ product: mul(2, 3) }, { product: 6 });
});
"""


def _node_base(module: bool) -> dict[str, str]:
    manifest: dict[str, Any] = {
        "name": "calc",
        "version": "1.0.0",
        "scripts": {"test": "node --test"},
    }
    if module:
        manifest["type"] = "module"
    return {
        "package.json": json.dumps(manifest),
        "calc.js": CALC_ESM if module else CALC_CJS,
        "test/calc.test.js": NODE_TESTS_ESM if module else NODE_TESTS_CJS,
    }


# `add` is wrong, and node:assert's strictEqual never fails again in this process: the
# property's name is built at run time, so no pattern reads it.
NEUTERS_NODE_ASSERT = """\
const lib = require('node:' + 'assert');
lib[['strict', 'Equal'].join('')] = () => {};
exports.add = (a, b) => a - b;
exports.mul = (a, b) => a * b;
"""


def test_node_assert_made_lenient_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", _node_base(False), {"calc.js": NEUTERS_NODE_ASSERT})
    _assert_caught(_verify(repo), "node:assert.strictEqual")


@pytest.mark.parametrize("module", [False, True], ids=["commonjs", "esm"])
def test_node_honest_project_is_verified(tmp_path: Path, module: bool) -> None:
    repo = change_on_base(tmp_path / "repo", _node_base(module), {"README.md": "calc\n"})
    _assert_verified(_verify(repo))


# --------------------------------------------------------------------------- jest

JEST_TESTS = """\
const { add, mul } = require('../calc.js');

test('adds', () => {
  expect(add(2, 3)).toBe(5);
});

test('multiplies', () => {
  expect.assertions(1);
  expect({ product: mul(2, 3) }).toEqual({ product: 6 });
});
"""
# The project turns jest's globals off: the tests take them from @jest/globals.
JEST_TESTS_NO_GLOBALS = "const { test, expect } = require('@jest/globals');\n" + JEST_TESTS


def _jest_base(globals_on: bool) -> dict[str, str]:
    config = "{ testEnvironment: 'node'" + ("" if globals_on else ", injectGlobals: false") + " }"
    return {
        "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
        "jest.config.js": f"module.exports = {config};\n",
        "calc.js": CALC_CJS,
        "test/calc.test.js": JEST_TESTS if globals_on else JEST_TESTS_NO_GLOBALS,
    }


# `add` is wrong, and jest's `toBe` passes whatever it is given: a matcher of the same
# name added through `expect.extend`, every name built at run time.
NEUTERS_JEST_EXPECT = """\
const lenient = globalThis[['exp', 'ect'].join('')];
lenient[['ext', 'end'].join('')]({
  [['to', 'Be'].join('')]: () => ({ pass: true, message: () => '' }),
});
exports.add = (a, b) => a - b;
exports.mul = (a, b) => a * b;
"""


def test_jest_expect_made_lenient_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    _needs("jest")
    repo = change_on_base(tmp_path / "repo", _jest_base(True), {"calc.js": NEUTERS_JEST_EXPECT})
    _assert_caught(_verify(repo), "expect().toBe")


@pytest.mark.parametrize("globals_on", [True, False], ids=["globals", "injectGlobals-false"])
def test_jest_honest_project_is_verified(tmp_path: Path, globals_on: bool) -> None:
    _needs("jest")
    repo = change_on_base(tmp_path / "repo", _jest_base(globals_on), {"README.md": "calc\n"})
    _assert_verified(_verify(repo))


# --------------------------------------------------------------------------- vitest

VITEST_TESTS = """\
import { test, expect } from 'vitest';
import { add, mul } from '../calc.js';

test('adds', () => {
  expect(add(2, 3)).toBe(5);
});

test('multiplies', () => {
  expect.assertions(1);
  expect({ product: mul(2, 3) }).toStrictEqual({ product: 6 });
});
"""
# With `globals: true`, the tests use vitest's globals and import nothing of it.
VITEST_TESTS_GLOBALS = "\n".join(VITEST_TESTS.splitlines()[1:]) + "\n"


def _vitest_base(globals_on: bool) -> dict[str, str]:
    test = "{ environment: 'node'" + (", globals: true" if globals_on else "") + " }"
    return {
        "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
        "vitest.config.mjs": f"export default {{ test: {test} }};\n",
        "calc.js": CALC_ESM,
        "test/calc.test.js": VITEST_TESTS_GLOBALS if globals_on else VITEST_TESTS,
    }


# `add` is wrong, and vitest's `toBe` passes whatever it is given, every name built at run
# time.
NEUTERS_VITEST_EXPECT = """\
import * as runner from 'vitest';
const lenient = runner[['exp', 'ect'].join('')];
lenient[['ext', 'end'].join('')]({
  [['to', 'Be'].join('')]: () => ({ pass: true, message: () => '' }),
});
export const add = (a, b) => a - b;
export const mul = (a, b) => a * b;
"""


def test_vitest_expect_made_lenient_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    _needs("vitest")
    change = {"calc.js": NEUTERS_VITEST_EXPECT}
    repo = change_on_base(tmp_path / "repo", _vitest_base(False), change)
    _assert_caught(_verify(repo), "expect().toBe")


@pytest.mark.parametrize("globals_on", [False, True], ids=["imported", "globals"])
def test_vitest_honest_project_is_verified(tmp_path: Path, globals_on: bool) -> None:
    _needs("vitest")
    repo = change_on_base(tmp_path / "repo", _vitest_base(globals_on), {"README.md": "calc\n"})
    _assert_verified(_verify(repo))


# --------------------------------------------------------------------------- late changes

# The same, made only when a test of the project's calls the code: after the canaries ran.
# (node's `assert.strictEqual(add(...), 5)` reads the function before calling `add`: the
# change is made in `mul`, which the test before calls.)
NEUTERS_NODE_ASSERT_LATE = """\
const lib = require('node:' + 'assert');
exports.add = (a, b) => a - b;
exports.mul = (a, b) => {
  lib[['strict', 'Equal'].join('')] = () => {};
  return a * b;
};
"""
NEUTERS_JEST_EXPECT_LATE = """\
exports.add = (a, b) => {
  globalThis[['exp', 'ect'].join('')][['ext', 'end'].join('')]({
    [['to', 'Be'].join('')]: () => ({ pass: true, message: () => '' }),
  });
  return a - b;
};
exports.mul = (a, b) => a * b;
"""
NEUTERS_VITEST_EXPECT_LATE = """\
import * as runner from 'vitest';
export const add = (a, b) => {
  runner[['exp', 'ect'].join('')][['ext', 'end'].join('')]({
    [['to', 'Be'].join('')]: () => ({ pass: true, message: () => '' }),
  });
  return a - b;
};
export const mul = (a, b) => a * b;
"""


@pytest.mark.parametrize("runner", ["node", "jest", "vitest"])
def test_assertion_made_lenient_during_the_projects_own_test_is_not_verified(
    tmp_path: Path, runner: str
) -> None:
    _needs(runner)
    base, change, replaced = {
        "node": (_node_base(False), NEUTERS_NODE_ASSERT_LATE, "node:assert.strictEqual"),
        "jest": (_jest_base(True), NEUTERS_JEST_EXPECT_LATE, "expect().toBe"),
        "vitest": (_vitest_base(False), NEUTERS_VITEST_EXPECT_LATE, "expect().toBe"),
    }[runner]
    repo = change_on_base(tmp_path / "repo", base, {"calc.js": change})
    _assert_caught(_verify(repo), replaced)


# --------------------------------------------------------------------------- chai

# chai's assert and expect as far as the tests and the planted checks use them, ESM only
# as chai 5 is, in the project's node_modules. `--protect` runs nothing that needs a
# node_modules it cannot prove, so these verify the tree as the user's own work, with
# canaries asked for (the API's option: the CLI plants them only under `--protect`).
CHAI = """\
const fail = (what) => {
  throw new Error(what);
};
const same = (x, y) => JSON.stringify(x) === JSON.stringify(y);
export const assert = (value, message) => value || fail(message || 'not ok');
assert.isOk = (value) => value || fail('not ok');
assert.equal = (x, y) => x == y || fail(`${x} != ${y}`);
assert.strictEqual = (x, y) => x === y || fail(`${x} !== ${y}`);
assert.deepEqual = (x, y) => same(x, y) || fail('not deep equal');
export const expect = (x) => {
  const equal = (y) => x === y || fail(`${x} !== ${y}`);
  const deep = { equal: (y) => same(x, y) || fail('not deep equal') };
  return { to: { equal, eql: deep.equal, deep, be: { get ok() { return x || fail('not ok'); } } } };
};
"""
CHAI_PACKAGE = json.dumps(
    {
        "name": "chai",
        "version": "5.0.0",
        "type": "module",
        "exports": {".": {"import": "./index.js"}},
    }
)
CHAI_TESTS = """\
import test from 'node:test';
import { assert } from 'chai';
import { add, mul } from '../calc.js';

test('multiplies', () => {
  assert.equal(mul(2, 3), 6);
});

test('adds', () => {
  assert.equal(add(2, 3), 5);
});
"""


def _chai_base() -> dict[str, str]:
    return {
        **_node_base(True),
        "node_modules/chai/package.json": CHAI_PACKAGE,
        "node_modules/chai/index.js": CHAI,
        "test/calc.test.js": CHAI_TESTS,
    }


NEUTERS_CHAI_ASSERT = """\
import { assert } from 'chai';
assert[['eq', 'ual'].join('')] = () => {};
export const add = (a, b) => a - b;
export const mul = (a, b) => a * b;
"""


def test_chai_made_lenient_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", _chai_base(), {"calc.js": NEUTERS_CHAI_ASSERT})
    _assert_caught(_verify_with_canaries(repo), "chai.assert.equal")


def test_node_honest_project_with_chai_is_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", _chai_base(), {"README.md": "calc\n"})
    _assert_verified(_verify_with_canaries(repo))


# --------------------------------------------------------------------------- failures beside


def test_jest_file_that_fails_after_its_tests_is_failed_with_canaries_too(tmp_path: Path) -> None:
    """jest exits 1 for a file whose `afterAll` threw, as for the must-fail canary, and its
    report lists every test passed: the failure is the project's, not discounted."""
    _needs("jest")
    hook = "afterAll(() => {\n  throw new Error('teardown broke');\n});\n"
    base = {**_jest_base(True), "test/calc.test.js": JEST_TESTS + hook}
    repo = change_on_base(tmp_path / "repo", base, {"README.md": "calc\n"})
    report = _verify(repo)
    assert report["status"] == "FAILED", _explain(report)


# --------------------------------------------------------------------------- error kinds

AGE = """\
exports.parseAge = (text) => {
  if (typeof text !== 'string') throw new TypeError('text must be a string');
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new RangeError('not an age');
  return value;
};
"""
AGE_NODE_TESTS = """\
const test = require('node:test');
const assert = require('node:assert');
const { parseAge } = require('../age.js');

test('rejects a number', () => {
  assert.throws(() => parseAge(5), TypeError);
});

test('rejects a negative age', () => {
  assert.throws(() => parseAge('-3'), RangeError);
});
"""
AGE_JEST_TESTS = """\
const { parseAge } = require('../age.js');

test('rejects a number', () => {
  expect(() => parseAge(5)).toThrow(TypeError);
});

test('rejects a negative age', () => {
  expect(() => parseAge('-3')).toThrow(RangeError);
});
"""
# Nothing is validated, and every error is of every kind the tests expect: a RangeError's
# prototype made TypeError's for the whole realm, the call's name built at run time.
ONE_ERROR_OF_EVERY_KIND = """\
Object[['setProto', 'typeOf'].join('')](RangeError.prototype, TypeError.prototype);
exports.parseAge = (text) => {
  throw new RangeError(String(text));
};
"""


@pytest.mark.parametrize("runner", ["node", "jest"])
def test_built_in_errors_made_one_kind_by_the_code_are_report_tampered(
    tmp_path: Path, runner: str
) -> None:
    if runner == "jest":
        _needs("jest")
        base = {
            "package.json": json.dumps({"name": "age", "version": "1.0.0"}),
            "jest.config.js": "module.exports = { testEnvironment: 'node' };\n",
            "age.js": AGE,
            "test/age.test.js": AGE_JEST_TESTS,
        }
    else:
        base = {
            "package.json": json.dumps(
                {"name": "age", "version": "1.0.0", "scripts": {"test": "node --test"}}
            ),
            "age.js": AGE,
            "test/age.test.js": AGE_NODE_TESTS,
        }
    repo = change_on_base(tmp_path / "repo", base, {"age.js": ONE_ERROR_OF_EVERY_KIND})
    report = _verify(repo)
    test = _test_check(report)
    assert report["status"] == "INDETERMINATE", _explain(report)
    assert (test["verdict"], test["cause"]) == ("inconclusive", "report_tampered"), _explain(report)
    assert "a RangeError is an instance of TypeError" in json.dumps(report), _explain(report)
