"""A guard against values that decide their own comparison, for jest and vitest.

Their equality (`toEqual`, `toMatchObject`, `toHaveBeenCalledWith`...) asks a value that
has an `asymmetricMatch` method whether it matches, instead of comparing it: meant for what
a test expects (`expect.any(Number)`), it lets a value the code under test returns, or
passes to a mock, equal anything (`{ asymmetricMatch: () => true }`, or jest's own
`expect.anything()`). No assertion is replaced and no canary is touched, so nothing else
tells such a run from an honest one.

The setup file planted beside the tests wraps each comparing matcher: a received value
holding such a method that says it matches a value made afresh for it, where what is
expected holds no such method at the same place, fails the test, saying so (`REFUSED`,
read back by the canaries as a tampering finding). A method that says nothing (a deep
mock's, which makes every property a function) leaves the runner to compare, and is left
alone. The must-pass
canary then also asks that a self-judging value still be refused, so code that unwraps the
matchers is found like code that makes them lenient. A value that answers differently each
time it is read, or hides the method behind an iterator of its own, is beyond the guard.
"""

from __future__ import annotations

import json
import re

#: The built-in matchers of jest and vitest whose verdict rests on their equality with the
#: received value, or with what a mock received or returned.
_COMPARING = (
    "toEqual",
    "toStrictEqual",
    "toMatchObject",
    "toContainEqual",
    "toHaveProperty",
    "toHaveBeenCalledWith",
    "toBeCalledWith",
    "toHaveBeenCalledExactlyOnceWith",
    "toHaveBeenLastCalledWith",
    "lastCalledWith",
    "toHaveBeenNthCalledWith",
    "nthCalledWith",
    "toHaveReturnedWith",
    "toReturnWith",
    "toHaveLastReturnedWith",
    "lastReturnedWith",
    "toHaveNthReturnedWith",
    "nthReturnedWith",
    "toHaveResolvedWith",
    "toHaveLastResolvedWith",
    "toHaveNthResolvedWith",
)
#: Matchers whose first argument is what the received value itself is compared with.
_PAIRED = ("toEqual", "toStrictEqual", "toMatchObject")

#: What a refused value's test fails with; `REFUSED` reads it back from the report.
_SAID = "the value under test decides its own comparison"
REFUSED = re.compile(rf"{_SAID}: [^\n]{{1,300}}? asks it instead of comparing it")

_GUARD = """\
// Values that decide their own comparison: the runner's equality asks a value with an
// `asymmetricMatch` method instead of comparing it. A comparing matcher refuses a received
// value holding one where what is expected holds none at the same place.
const comparing = new Set(__COMPARING__);
const paired = new Set(__PAIRED__);
const claims = (value) => {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return false;
  try {
    return typeof value.asymmetricMatch === "function";
  } catch {
    return true;
  }
};
// A value decides when its method says it matches one of these, made afresh and never
// seen by it: an honest one that returns nothing (a deep mock's method) leaves the runner to
// compare, as the runner does.
const decides = (value) => {
  if (!claims(value)) return false;
  const unlike = [Object.create(null), Math.random(), `${Math.random()}`];
  try {
    return unlike.some((probe) => Boolean(value.asymmetricMatch(probe)));
  } catch {
    return false;
  }
};
const read = (value, key) => {
  try {
    return value[key];
  } catch {
    return undefined;
  }
};
// Where in `received` a value decides its own match while `expected` at the same place
// has no `asymmetricMatch` (null: nowhere). Read as the runner's equality reads it: elements, own enumerable keys,
// Map and Set entries, and what a mock function was called with and returned.
const selfJudged = (received, expected) => {
  const seen = new Set();
  const stack = [{ value: received, against: expected, key: "received", parent: null }];
  while (stack.length) {
    const node = stack.pop();
    const { value, against } = node;
    if (value === null || (typeof value !== "object" && typeof value !== "function")) continue;
    if (seen.has(value)) continue;
    seen.add(value);
    if (!claims(against) && decides(value)) {
      const path = [];
      for (let at = node; at; at = at.parent) path.unshift(at.key);
      return path.join("");
    }
    const nested = against !== null && typeof against === "object";
    const push = (child, key, pairedWith) => {
      if (child !== null && (typeof child === "object" || typeof child === "function")) {
        stack.push({ value: child, against: pairedWith, key, parent: node });
      }
    };
    try {
      if (typeof value === "function") {
        const mock = read(value, "mock");
        if (mock !== null && typeof mock === "object") {
          for (const part of ["calls", "results", "settledResults"]) {
            push(read(mock, part), `.mock.${part}`, undefined);
          }
        }
      } else if (types.isMap(value)) {
        for (const [key, item] of Map.prototype.entries.call(value)) {
          push(key, ".keys()", undefined);
          push(item, ".values()", undefined);
        }
      } else if (types.isSet(value)) {
        for (const item of Set.prototype.values.call(value)) push(item, ".values()", undefined);
      } else if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          push(read(value, index), `[${index}]`, nested ? read(against, index) : undefined);
        }
      } else if (!ArrayBuffer.isView(value) && !types.isAnyArrayBuffer(value)) {
        const keys = Object.keys(value).concat(
          Object.getOwnPropertySymbols(value).filter((symbol) =>
            Object.prototype.propertyIsEnumerable.call(value, symbol),
          ),
        );
        for (const key of keys) {
          push(read(value, key), `.${String(key)}`, nested ? read(against, key) : undefined);
        }
      }
    } catch {}
  }
  return null;
};
const refuse = (name, received, args) => {
  const where = selfJudged(received, paired.has(name) ? args[0] : undefined);
  if (where !== null) {
    const error = new Error(
      "__SAID__: " + where + " has its own asymmetricMatch, which says it matches a " +
        "value it never saw, and " + name + " asks it instead of comparing it",
    );
    // Pointing at the test that asserted, not at this file.
    error.stack = error.stack
      .split("\\n")
      .filter((line) => !line.includes(here))
      .join("\\n");
    throw error;
  }
};
// Each matcher wrapped once, however many test files this realm's setup runs for.
const wrapper = Symbol.for(__MARK__);
let guarded = false;
__INSTALL__
"""

#: jest keeps every `expect`'s matchers in one store of the test file's realm; a built-in
#: one keeps its internal flag, so jest still calls it as its own. The project's own
#: matchers (`expect.extend`, jest-extended's) are wrapped too, unpaired: what they do with
#: their arguments is theirs, and `this.equals` asks a self-judging value as `toEqual` does.
_JEST = """\
{
  const store = globalThis[Symbol.for("$$jest-matchers-object")];
  const internal = Symbol.for("$$jest-internal-matcher");
  if (store && store.matchers) {
    const names = new Set(comparing);
    for (const [name, matcher] of Object.entries(store.matchers)) {
      if (typeof matcher === "function" && !matcher[internal]) names.add(name);
    }
    for (const name of names) {
      const original = store.matchers[name];
      if (typeof original !== "function") continue;
      if (!original[wrapper]) {
        const wrapped = function (received, ...args) {
          refuse(name, received, args);
          return original.call(this, received, ...args);
        };
        Object.defineProperty(wrapped, internal, { value: original[internal] });
        Object.defineProperty(wrapped, wrapper, { value: true });
        store.matchers[name] = wrapped;
      }
      guarded = true;
    }
  }
}
"""

#: vitest's matchers are methods of its chai's `Assertion`, the received value its flag.
_VITEST = """\
{
  const { chai } = await import("vitest");
  const prototype = chai && chai.Assertion && chai.Assertion.prototype;
  if (prototype) {
    for (const name of comparing) {
      if (typeof prototype[name] !== "function") continue;
      if (!prototype[name][wrapper]) {
        chai.Assertion.overwriteMethod(
          name,
          (original) =>
            function (...args) {
              refuse(name, chai.util.flag(this, "object"), args);
              return original.apply(this, args);
            },
        );
        Object.defineProperty(prototype[name], wrapper, { value: true });
      }
      guarded = true;
    }
  }
}
"""


def _guard(install: str, mark: str) -> str:
    return (
        _GUARD.replace("__MARK__", json.dumps(mark))
        .replace("__COMPARING__", json.dumps(list(_COMPARING)))
        .replace("__PAIRED__", json.dumps(list(_PAIRED)))
        .replace("__SAID__", _SAID)
        .replace("__INSTALL__", install)
    )


def jest_guard(mark: str) -> str:
    """The guard for a jest setup file (CommonJS, in the test file's realm); `mark` names,
    for the run, what it has wrapped."""
    return (
        'const { types } = require("node:util");\n'
        'const here = require("node:path").basename(__filename);\n' + _guard(_JEST, mark)
    )


def vitest_guard(mark: str) -> str:
    """The guard for a vitest setup file (ESM); `mark` as for `jest_guard`."""
    return (
        'const { types } = await import("node:util");\n'
        'const here = import.meta.url.split("/").pop();\n' + _guard(_VITEST, mark)
    )
