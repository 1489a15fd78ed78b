"""A failure a lockfile-less install would put down to today's dependencies is the code's
when the project's own JavaScript does not parse: dset 3.1.4 with a syntax error in
`src/index.js`, whose bundler (bundt) crashed in zlib on the minifier's empty answer, every
place in its stack inside `node_modules/bundt`, read as drift (UNVERIFIED)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from assay.own_js_syntax import own_js_files, syntax_check
from tests.cli import assay, assay_env, installed_and_verified
from tests.repos import write

#: A bundler as bundt behaves: what it cannot parse gives it nothing, and it then crashes
#: inside itself, naming no file of the project.
BUNDLER = """#!/usr/bin/env node
const fs = require("fs"), vm = require("vm"), zlib = require("zlib");
let code;
try {
  const source = fs.readFileSync("src/index.js", "utf8").replace(/^export /gm, "");
  new vm.Script(source);
  code = source.includes("@drift") ? undefined : source; // a release that cannot bundle it

} catch (e) {}
zlib.gzipSync(code);
"""


def _bundler_tarball(directory: Path) -> Path:
    """`bundler` 1.0.0 packed by npm itself into `directory`, installed from the file as
    from a registry (into `node_modules/bundler`, not linked)."""
    package = write(
        directory.parent / "bundler",
        {
            "package.json": json.dumps(
                {"name": "bundler", "version": "1.0.0", "bin": {"bundler": "index.js"}}
            ),
            "index.js": BUNDLER,
        },
    )
    subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(directory)],
        cwd=package,
        check=True,
        capture_output=True,
    )
    return directory / "bundler-1.0.0.tgz"


def _project(root: Path, source: str) -> Path:
    root.mkdir(parents=True)
    tarball = _bundler_tarball(root)
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "scripts": {"build": "bundler", "test": "node --test test/"},
        "devDependencies": {"bundler": f"file:{tarball.name}"},
    }
    test = (
        'const test = require("node:test"), assert = require("node:assert");\n'
        'const { double } = require("../dist.js");\n'
        'test("doubles", () => assert.strictEqual(double(2), 4));\n'
    )
    return write(
        root,
        {
            "package.json": json.dumps(manifest),
            "src/index.js": source,
            "dist.js": "exports.double = (x) => 2 * x;\n",
            "test/test.js": test,
        },
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("source", "status"),
    [
        ("export function double(x) {\n  return 2 * x;\n}\n", "VERIFIED"),
        # Code that parses, which today's bundler cannot handle: the drift stands.
        ("// @drift\nexport function double(x) {\n  return 2 * x;\n}\n", "UNVERIFIED"),
        ("export function double(x) {\n  const broken = (1;\n  return 2 * x;\n}\n", "FAILED"),
    ],
)
def test_a_crash_inside_a_dependency_on_code_that_does_not_parse_fails(
    tmp_path: Path, source: str, status: str
) -> None:
    report = installed_and_verified(_project(tmp_path / "repo", source), tmp_path)
    assert report["status"] == status, report["note"]
    if status == "FAILED":
        assert report["note"].startswith(
            "the project's own code does not parse: src/index.js:2: SyntaxError"
        ), report["note"]


def test_only_the_projects_own_shipped_javascript_is_checked(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "index.js": "",
            "lib/a.mjs": "",
            "lib/b.cjs": "",
            "lib/c.min.js": "",
            "lib/d.ts": "",
            "node_modules/x/index.js": "",
            "dist/index.js": "",
            "test/fixtures/broken.js": "",
            ".github/x.js": "",
        },
    )
    assert own_js_files(root) == ["index.js", "lib/a.mjs", "lib/b.cjs"]


def test_javascript_a_compiler_transforms_first_is_not_nodes_to_judge(tmp_path: Path) -> None:
    root = write(tmp_path, {"src/app.js": "export const App = () => <div />;\n"})
    (root / "package.json").write_text(json.dumps({"dependencies": {"react": "^18"}}))
    assert syntax_check(root) is None
    (root / "package.json").write_text(json.dumps({"dependencies": {"left-pad": "^1"}}))
    assert syntax_check(root) is not None


def test_flow_files_of_a_project_without_a_compiler_are_not_nodes_to_judge(
    tmp_path: Path,
) -> None:
    """tiny-invariant ships Flow's types for its TypeScript beside it: a syntax error in the
    TypeScript was put on `src/tiny-invariant.flow.js:5`, which never parses as JavaScript."""
    root = write(
        tmp_path,
        {
            "src/tiny-invariant.flow.js": "// @flow\ndeclare export default function x(): void;\n",
            "src/typed.js": "/**\n * @flow strict\n */\nexport type N = number;\n",
            "src/plain.js": 'const note = "@flow";\n',
        },
    )
    assert own_js_files(root) == ["src/plain.js"]


ADD = "export function add(a, b) {\n  return a + b;\n}\n\n"
MOCHA_PROJECT = {
    "package.json": json.dumps({"name": "q", "type": "module", "scripts": {"test": "mocha"}}),
    "test/add.test.js": (
        "import assert from 'node:assert';\nimport { add } from '../index.js';\n"
        "it('adds', () => assert.equal(add(1, 2), 3));\n"
    ),
}


@pytest.mark.parametrize("broken", [False, True])
def test_a_syntax_error_a_runner_blames_on_the_test_is_found_in_the_code(
    tmp_path: Path, broken: bool
) -> None:
    """mocha says `SyntaxError[ @test/add.test.js ]` for the module the test imports, and
    its "Exception during run" read as a failure it did not explain: INDETERMINATE."""
    assert shutil.which("mocha") is not None, "mocha is not installed (.ci/run installs it)"
    tail = "export function bad( {\n  return 1;\n}\n" if broken else ""
    repo = write(tmp_path / "repo", {**MOCHA_PROJECT, "index.js": ADD + tail})
    done = assay("verify", "--json", str(repo), env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "c")))
    report = json.loads(done.stdout)
    if broken:
        assert report["status"] == "FAILED", report["note"]
        assert report["note"].startswith(
            "the project's own code does not parse: index.js:6: SyntaxError"
        ), report["note"]
    else:
        assert report["status"] == "VERIFIED", report["note"]
        assert [c["name"] for c in report["checks"]] == ["npm-test"], report["checks"]
