"""Failing node tests as a person reads them in `assay verify`: each failing test by name,
its message and where it failed, relative to the repository, without the runner's own
stack frames. A real failing suite per runner, run by the real runner in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay, no_traceback
from tests.repos import write

#: Where .ci/run installs the global node tools (npm install -g).
GLOBAL = Path("/usr/lib/node_modules")

SUITE = """\
{imports}
describe("sum", () => {{
  {it}("adds small numbers", () => {{
    {fails}
  }});
  {it}("adds zero", () => {{
    {passes}
  }});
}});
"""
EXPECT = {"fails": "expect(1 + 2).toBe(4);", "passes": "expect(0 + 0).toBe(0);"}
ASSERT = {"fails": "assert.strictEqual(1 + 2, 4);", "passes": "assert.strictEqual(0, 0);"}


def _linked(root: Path, package: str, bin_rel: str) -> None:
    """node_modules/PACKAGE and its .bin entry, linked to the globally installed runner."""
    if not (GLOBAL / package).is_dir():
        pytest.fail(f"{package} is needed at {GLOBAL / package} (.ci/run installs it)")
    (root / "node_modules" / ".bin").mkdir(parents=True, exist_ok=True)
    (root / "node_modules" / package).symlink_to(GLOBAL / package)
    (root / "node_modules" / ".bin" / package).symlink_to(f"../{package}/{bin_rel}")


def _package(scripts: dict[str, str] | None = None, **more: str) -> str:
    return json.dumps({"name": "fx", "version": "1.0.0", "scripts": scripts or {}, **more})


def _jest(root: Path, *, script: bool) -> Path:
    files = {
        "package.json": _package({"test": "jest"} if script else None),
        "jest.config.js": 'module.exports = { testEnvironment: "node" };\n',
        "test/sum.test.js": SUITE.format(imports="", it="test", **EXPECT),
    }
    repo = write(root, files)
    _linked(repo, "jest", "bin/jest.js")
    return repo


def _vitest(root: Path, *, script: bool) -> Path:
    imports = 'import { describe, test, expect } from "vitest";'
    files = {
        "package.json": _package({"test": "vitest run"} if script else None, type="module"),
        "vitest.config.js": "export default {};\n",
        "test/sum.test.js": SUITE.format(imports=imports, it="test", **EXPECT),
    }
    repo = write(root, files)
    _linked(repo, "vitest", "vitest.mjs")
    return repo


def _node_test(root: Path) -> Path:
    imports = (
        'const { describe, test } = require("node:test");\nconst assert = require("node:assert");'
    )
    suite = SUITE.format(imports=imports, it="test", **ASSERT)
    suite += 'test("top level fails", () => {\n  assert.ok(false, "top-level message");\n});\n'
    return write(
        root,
        {"package.json": _package({"test": "node --test"}), "test/sum.test.js": suite},
    )


def _mocha(root: Path) -> Path:
    imports = 'const assert = require("node:assert");'
    files = {
        "package.json": _package({"test": "mocha"}),
        "test/sum.test.js": SUITE.format(imports=imports, it="it", **ASSERT),
    }
    repo = write(root, files)
    _linked(repo, "mocha", "bin/mocha.js")
    return repo


def _shown(repo: Path) -> str:
    done = assay("verify", "--no-cache", str(repo), timeout=180)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    return done.stdout


def _without_sandbox_or_runner_paths(shown: str) -> None:
    for noise in ("/dev/shm", "assay-bwrap", str(GLOBAL), "node:internal", '{"'):
        assert noise not in shown, (noise, shown)


@pytest.mark.slow
@pytest.mark.parametrize("script", [False, True], ids=["jest-json", "npm-test-jest"])
def test_jest_failures_are_named_with_their_message_and_place(host_dir: Path, script: bool) -> None:
    shown = _shown(_jest(host_dir, script=script))
    assert "FAILED sum › adds small numbers" in shown or "FAILED sum adds small numbers" in shown
    assert "Expected: 4" in shown and "Received: 3" in shown, shown
    assert "test/sum.test.js:4:" in shown, shown
    assert "adds zero" not in shown
    _without_sandbox_or_runner_paths(shown)


@pytest.mark.slow
@pytest.mark.parametrize("script", [False, True], ids=["vitest-json", "npm-test-vitest"])
def test_vitest_failures_are_named_with_their_message_and_place(
    host_dir: Path, script: bool
) -> None:
    shown = _shown(_vitest(host_dir, script=script))
    assert "adds small numbers" in shown.split("FAILED", 1)[-1], shown
    assert "expected 3 to be 4" in shown, shown
    assert "test/sum.test.js:4:" in shown, shown
    assert "adds zero" not in shown
    _without_sandbox_or_runner_paths(shown)


@pytest.mark.slow
def test_node_test_failures_are_named_with_their_message_and_place(host_dir: Path) -> None:
    shown = _shown(_node_test(host_dir))
    assert "FAILED sum" in shown and "FAILED top level fails" in shown, shown
    assert "adds small numbers: Expected values to be strictly equal:" in shown, shown
    assert "3 !== 4" in shown
    # Where each assertion failed (the stack's first frame in the project).
    assert "test/sum.test.js:5:" in shown, shown
    assert "top-level message" in shown and "test/sum.test.js:12:" in shown, shown
    assert "adds zero" not in shown
    _without_sandbox_or_runner_paths(shown)


@pytest.mark.slow
def test_mocha_failures_are_named_with_their_message_and_place(host_dir: Path) -> None:
    shown = _shown(_mocha(host_dir))
    assert "FAILED sum adds small numbers" in shown, shown
    assert "Expected values to be strictly equal:" in shown and "3 !== 4" in shown, shown
    assert "test/sum.test.js:4:" in shown, shown
    assert "adds zero" not in shown
    _without_sandbox_or_runner_paths(shown)


def _uvu(root: Path, *, in_a_suite: bool = True) -> Path:
    suite = (
        'const { suite, test } = require("uvu");\nconst assert = require("uvu/assert");\n'
        + ('const sum = suite("sum");\n' if in_a_suite else "const sum = test;\n")
        + 'sum("adds small numbers", () => {\n  assert.is(1 + 2, 4);\n});\n'
        'sum("adds zero", () => {\n  assert.is(0 + 0, 0);\n});\nsum.run();\n'
    )
    repo = write(root, {"package.json": _package({"test": "uvu test"}), "test/sum.js": suite})
    _linked(repo, "uvu", "bin.js")
    return repo


@pytest.mark.slow
def test_uvu_failures_are_named_with_their_message_and_place(host_dir: Path) -> None:
    """klona's `npm test` runs uvu: "1 of 137 tests failed", with no name, where uvu printed
    `FAIL  Date  "date"` and the assertion."""
    shown = _shown(_uvu(host_dir))
    assert "FAILED sum > adds small numbers" in shown, shown
    assert "Expected values to be strictly equal:" in shown, shown
    assert "test/sum.js:5:" in shown, shown
    assert "adds zero" not in shown
    _without_sandbox_or_runner_paths(shown)


@pytest.mark.slow
def test_uvu_failures_outside_a_suite_are_named_too(host_dir: Path) -> None:
    """clsx (uvu 0.5): `test(...)` of the default suite prints `FAIL  "name"`, with no
    suite before it: "21 of 32 tests failed" named none of them."""
    shown = _shown(_uvu(host_dir, in_a_suite=False))
    assert "FAILED adds small numbers" in shown, shown
    assert "Expected values to be strictly equal:" in shown, shown
    assert "adds zero" not in shown


@pytest.mark.slow
def test_a_node_test_file_that_does_not_load_is_named_with_its_error(host_dir: Path) -> None:
    repo = write(
        host_dir,
        {
            "package.json": _package({"test": "node --test"}),
            "test/broken.test.js": 'const test = require("node:test");\nconst x = ;\n',
        },
    )
    shown = _shown(repo)
    assert "FAILED test/broken.test.js" in shown, shown
    assert "SyntaxError: Unexpected token" in shown, shown
    assert "at test/broken.test.js:2:" in shown and "Node.js v" not in shown, shown
    _without_sandbox_or_runner_paths(shown)


def test_broken_tap_and_reporter_text_read_without_error() -> None:
    """Output the code under test can shape: an unclosed YAML block, keys without values,
    a block scalar running to the end, headers with nothing under them."""
    from assay.parsers.node_failures import printed_failures, tap_top_level

    tap = (
        "not ok 1 - unclosed\n"
        "  ---\n"
        "  error: |-\n"
        "    boom\n"
        "  stack:\n"
        "  location: '/elsewhere/x.js:1:1'\n"
        "    not ok 1 - orphan nested\n"
        "ok 2 - fine # SKIP\n"
        "not ok 3 - last\n"
        "  ---"
    )
    cases = tap_top_level(tap, "/ws")
    assert [(c.name, c.outcome) for c in cases] == [
        ("unclosed", "failed"),
        ("fine", "skipped"),
        ("last", "failed"),
    ]
    assert cases[0].message == "boom"
    assert printed_failures("  1 failing\n\n  1) x", "/ws")[0].name == "x"
    assert printed_failures("  ● \n  ●  ", "/ws") == []
    assert printed_failures("Failed Tests 1\n FAIL  a > b\n", "/ws")[0].message is None


@pytest.mark.slow
def test_mocha_summary_before_a_long_failure_listing_is_read(host_dir: Path) -> None:
    """yargs-parser's wrong value: mocha prints `N passing` / `M failing` and then every
    failure's diff and stack, here hundreds of lines, and a coverage table after them; the
    summary is far from the end of the output, and the run is still a recognised failure."""
    cases = "\n".join(
        f'  it("case {n}", () => {{ assert.deepStrictEqual({{ a: {n}, b: [1, 2, 3] }}, '
        f"{{ a: {n + 1}, b: [1, 2, 4] }}); }});"
        for n in range(60)
    )
    suite = f'const assert = require("node:assert");\ndescribe("many", () => {{\n{cases}\n}});\n'
    repo = write(
        host_dir,
        {
            "package.json": _package({"test": "mocha && node coverage-table.js"}),
            "test/many.test.js": suite,
            "coverage-table.js": 'console.log("File | % Stmts\\n".repeat(30));\n',
        },
    )
    _linked(repo, "mocha", "bin/mocha.js")
    done = assay("verify", "--no-cache", "--json", str(repo), timeout=180)
    no_traceback(done)
    report = json.loads(done.stdout)
    test = next(c for c in report["checks"] if c["kind"] == "test")
    assert report["status"] == "FAILED", (report["note"], test["cause"])
    assert test["tests"]["failed"] == 60, test["tests"]


#: A passing test, and one whose promise never settles, stopped at a 500 ms test timeout.
HANGING = {
    "jest": (
        'test("adds", () => { expect(1 + 2).toBe(3); });\n'
        'test("waits forever", async () => { await new Promise(() => {}); }, 500);\n'
    ),
    "mocha": (
        'const assert = require("node:assert");\n'
        'it("adds", () => { assert.strictEqual(1 + 2, 3); });\n'
        'it("waits forever", function () { this.timeout(500); return new Promise(() => {}); });\n'
    ),
}


@pytest.mark.parametrize("runner", ["jest-json", "npm-test-jest", "npm-test-mocha"])
def test_a_test_the_runner_stopped_at_its_timeout_is_a_hang_not_a_failure(
    host_dir: Path, runner: str
) -> None:
    repo = _mocha(host_dir) if runner.endswith("mocha") else _jest(host_dir, script="npm" in runner)
    (repo / "test" / "sum.test.js").write_text(HANGING["mocha" if "mocha" in runner else "jest"])
    done = assay("verify", "--no-cache", "--json", str(repo), timeout=180)
    no_traceback(done)
    report = json.loads(done.stdout)
    (check,) = [c for c in report["checks"] if c["check"]["kind"] == "test"]
    assert report["status"] == "INDETERMINATE", report["note"]
    assert check["cause"] == "timeout", check["note"]
    assert "waits forever did not finish within the runner's per-test timeout" in check["note"]
