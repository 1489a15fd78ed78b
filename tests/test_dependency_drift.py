"""A failure that lies only inside dependencies a lockfile-less install chose today is
UNVERIFIED, not FAILED: mitt 3.0.1 (no lockfile) was failed on today's `@types/node`, which
its TypeScript 4.9 cannot parse, and on a `get-intrinsic` its eslint 7 cannot load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.dependency_drift import drifted_dependencies
from tests.cli import installed_and_verified
from tests.repos import write

WORKSPACE = "/dev/shm/assay-bwrap-20be2800-a88qcbch"
#: mitt's `npm run typecheck` under TypeScript 4.9 with today's @types/node.
TSC_IN_TYPES = (
    "> mitt@3.0.1 typecheck\n> tsc --noEmit\n\n"
    "node_modules/@types/node/ffi.d.ts(94,20): error TS1139: Type parameter declaration expected.\n"
    "node_modules/@types/node/ffi.d.ts(257,34): error TS1005: ',' expected.\n"
)
#: mitt's `npm run lint`: eslint 7 crashes loading what get-intrinsic requires.
ESLINT_CRASH = f"""Oops! Something went wrong! :(

ESLint: 7.32.0

{WORKSPACE}/node_modules/async-function/require.mjs:1
(function (exports, require, module, __filename, __dirname) {{ import getAsyncFunction from './index.js';
                                                              ^^^^^^

SyntaxError: Cannot use import statement outside a module
    at new Script (node:vm:117:7)
    at NativeCompileCache._moduleCompile ({WORKSPACE}/node_modules/v8-compile-cache/v8-compile-cache.js:240:18)
    at Module._extensions..js (node:internal/modules/cjs/loader:1623:10)
    at Object.<anonymous> ({WORKSPACE}/node_modules/get-intrinsic/index.js:154:24)
"""
#: A test of the project's own that fails, its stack through a dependency.
MOCHA_FAILURE = f"""  1) mitt#
       on()
         should register handler:
     AssertionError: expected 2 to equal 3
      at Context.<anonymous> (test/index_test.ts:45:10)
      at callFn ({WORKSPACE}/node_modules/mocha/lib/runnable.js:366:21)
"""


@pytest.mark.parametrize(
    ("output", "names"),
    [
        (TSC_IN_TYPES, ["@types/node"]),
        (ESLINT_CRASH, ["async-function", "v8-compile-cache", "get-intrinsic"]),
        (MOCHA_FAILURE, []),
        # The project's own file beside a dependency's: the failure stands.
        (TSC_IN_TYPES + "src/index.ts(52,23): error TS1005: ')' expected.\n", []),
        ("npm error Lifecycle script `test` failed with error:\nnpm error code 1\n", []),
    ],
)
def test_a_failure_is_placed_by_every_location_it_names(output: str, names: list[str]) -> None:
    assert drifted_dependencies(output) == names


def _project(root: Path, source: str) -> Path:
    """A TypeScript 4.9 project that leaves @types/node to its range, as mitt does."""
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "scripts": {"typecheck": "tsc --noEmit"},
        "devDependencies": {"typescript": "4.9.5", "@types/node": "*"},
    }
    return write(
        root,
        {
            "package.json": json.dumps(manifest),
            "tsconfig.json": '{"compilerOptions": {"strict": true}, "include": ["src"]}\n',
            "src/index.ts": source,
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("export const double = (x: number): number => 2 * x;\n", "UNVERIFIED"),
        # tsc reports no type errors past a file it cannot parse: a syntax error it can.
        ("export const double = (x: number: number => 2 * x;\n", "FAILED"),
    ],
)
def test_todays_dependencies_failing_an_old_compiler_are_not_the_codes_failure(
    tmp_path: Path, source: str, status: str
) -> None:
    """For real, from the npm registry: today's @types/node is past what TypeScript 4.9
    parses. With no lockfile, only those errors: UNVERIFIED, naming the package; an error
    in the project's own file beside them: FAILED."""
    report = installed_and_verified(_project(tmp_path / "repo", source), tmp_path)
    assert report["status"] == status, report["note"]
    if status == "UNVERIFIED":
        assert "failed only inside dependencies (@types/node)" in report["note"], report["note"]
    else:
        [typecheck] = report["checks"]
        assert "src/index.ts(1," in typecheck["stdout"]["text"], typecheck["stdout"]
