"""A check that fails because the project needs a newer toolchain is UNVERIFIED, not FAILED.

go-cmp's go.mod says `go 1.21`; under Go 1.19 its tests call `time.Time.Compare`, and
`go test` fails with "note: module requires Go 1.21". assay said FAILED: the code is not
wrong, the toolchain is too old to judge it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.toolchain_too_old import go_mod_too_new, toolchain_too_old
from tests.repos import write
from tests.test_go_cache import verify

#: pnpm 11 under Node 20 (ohash's packageManager): it warns, then crashes on node:sqlite.
PNPM_TOO_NEW = (
    "warn: This version of pnpm requires at least Node.js v22.13\n"
    "warn: The current version of Node.js is v20.20.2\n"
    "Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite\n"
)
YARN_TOO_NEW = (
    "Usage Error: This tool requires a Node version compatible with >=18.12.0 "
    "(got 16.20.2). Upgrade Node, or set `YARN_IGNORE_NODE=1` in your environment.\n"
)

VITE_TOO_OLD_NODE = (
    "You are using Node.js 20.11.0. Vite requires Node.js version 20.19+ or 22.12+. "
    "Please upgrade your Node.js version.\n"
)
#: yarn 1's install, for a package whose `engines` exclude this Node.js.
YARN1_ENGINE = (
    'error p@1.0.0: The engine "node" is incompatible with this module. Expected '
    'version ">=22". Got "20.20.2"\n'
)
#: pnpm's warning for a package whose `engines` this Node.js or this pnpm does not meet.
PNPM_ENGINE = (
    ' WARN  Unsupported engine: wanted: {{"node":"{wanted}","pnpm":">=11"}} '
    '(current: {{"node":"v20.20.2","pnpm":"10.34.9"}})\n'
)


@pytest.mark.parametrize(
    ("output", "wanted"),
    [
        ("x.go:3:2: undefined: cmp.Or\nnote: module requires Go 1.21\n", "Go 1.21"),
        (
            (
                "# p\n./p.go:3:9: undefined: min\n./c.go:4:2: package slices is not in GOROOT "
                "(/usr/lib/go-1.19/src/slices)\n./t.go:9:7: a.Compare undefined (type time.Time "
                "has no field or method Compare)\n./r.go:2:17: cannot range over 10 (untyped int "
                "constant)\nnote: module requires Go 1.22\n"
            ),
            "Go 1.22",
        ),
        # An error no later Go would take back: the code's, whatever the note.
        ("./v.go:605:3: syntax error: unexpected return\nnote: module requires Go 1.21\n", None),
        ("./v.go:7:2: undefined: parseVersion\nnote: module requires Go 1.21\n", None),
        (
            "go: go.mod requires go >= 1.23 (running go 1.21.0; GOTOOLCHAIN=local)\n",
            "go >= 1.23",
        ),
        (
            (
                "error: package `p v0.1.0 (/w)` cannot be built because it requires rustc "
                "1.80 or newer, while the currently active rustc version is 1.63.0\n"
            ),
            "rustc 1.80",
        ),
        (
            "/usr/bin/node: bad option: --experimental-transform-types\n",
            "a Node.js that knows --experimental-transform-types",
        ),
        (PNPM_TOO_NEW, "Node.js v22.13"),
        (YARN_TOO_NEW, "Node.js >=18.12.0"),
        ("test:coverage: You need Node.js >= 22.8 to use test coverage\n", "Node.js >= 22.8"),
        (VITE_TOO_OLD_NODE, "Node.js 20.19+ or 22.12+"),
        (YARN1_ENGINE, "Node.js >=22"),
        (
            PNPM_ENGINE.format(wanted="^22.0.0 || ^24.0.0 || >=26.0.0"),
            "Node.js ^22.0.0 || ^24.0.0 || >=26.0.0",
        ),
        (PNPM_ENGINE.format(wanted="22.x"), "Node.js 22.x"),
        # pnpm names every engine when one of them is not met: this Node.js is.
        (PNPM_ENGINE.format(wanted=">=18 <21"), None),
        (PNPM_ENGINE.format(wanted="^18 || ^20"), None),
        (PNPM_ENGINE.format(wanted="*"), None),
        # Said in passing, not as the toolchain says it: nothing.
        ("--- FAIL: TestNote\n    want: note: module requires Go 1.21 (got none)\n", None),
        ("FAIL\texample.com/p\t0.01s\n", None),
    ],
)
def test_the_toolchains_own_words_name_the_release(output: str, wanted: str | None) -> None:
    assert toolchain_too_old(output) == wanted


@pytest.mark.parametrize(
    ("directive", "running", "wanted"),
    [
        ("go 1.21", "1.19.8", "Go 1.21"),
        ("go 1.21.0", "1.21.0", None),
        ("go 1.19", "1.19.8", None),
        ("go 1.22rc1", "1.21.5", "Go 1.22rc1"),
        ("toolchain go1.23", "1.19.8", None),  # not the `go` line
    ],
)
def test_go_mod_asks_for_a_newer_go(
    tmp_path: Path, directive: str, running: str, wanted: str | None
) -> None:
    write(tmp_path, {"go.mod": f"module example.com/p\n\n{directive}\n"})
    assert go_mod_too_new(str(tmp_path), running) == wanted


def module(root: Path, go: str, *, broken: bool = False) -> Path:
    body = "return 2 * x" if not broken else "return 2 *"
    return write(
        root,
        {
            "go.mod": f"module example.com/p\n\ngo {go}\n",
            "p.go": f"package p\n\nfunc Double(x int) int {{ {body} }}\n",
            # Calls what a later Go has and this one lacks (1.21's `min`): a compile error here.
            "p_test.go": (
                'package p\n\nimport "testing"\n\n'
                "func TestDouble(t *testing.T) {\n\tif min(Double(2), 5) != 4 {\n"
                '\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
            ),
        },
    )


@pytest.mark.parametrize(
    ("go", "broken", "status"),
    [
        ("1.99", False, "UNVERIFIED"),
        ("1.13", False, "FAILED"),
        # Go 1.19 adds its note to any failed build of a module for a later Go: a syntax
        # error is the code's all the same (Masterminds/semver's, UNVERIFIED before).
        ("1.99", True, "FAILED"),
    ],
)
def test_a_module_that_needs_a_newer_go_is_not_failed(
    tmp_path: Path, go: str, broken: bool, status: str
) -> None:
    report = verify(module(tmp_path / "repo", go, broken=broken), tmp_path / "state")
    assert report["status"] == status, report["note"]
    if status == "UNVERIFIED":
        # go test adds "note: module requires Go 1.99" to its compile errors.
        assert (
            "because the project needs Go 1.99, newer than the toolchain here" in (report["note"])
        ), report["note"]
        assert {c["verdict"] for c in report["checks"]} == {"unverified"}


def test_a_node_option_this_release_lacks_is_not_a_failure(tmp_path: Path) -> None:
    """sindresorhus/is 8 tests with `node --experimental-transform-types --test`, which
    Node 20 refuses ("bad option"): the tests could not run here, not fail."""
    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps(
                {
                    "name": "p",
                    "version": "1.0.0",
                    "scripts": {"test": "node --no-such-option-yet --test"},
                }
            ),
            "add.test.js": "require('node:test')('adds', () => {});\n",
        },
    )
    report = verify(repo, tmp_path / "state")
    assert report["status"] == "UNVERIFIED", report["note"]
    assert "needs a Node.js that knows --no-such-option-yet" in report["note"], report["note"]
    # Not "newer": a release drops options too (has-symbols 1.0.3's `--es-staging`).
    assert "newer" not in report["note"], report["note"]


def test_an_install_step_too_new_for_this_node_is_unverified_naming_the_release(
    tmp_path: Path,
) -> None:
    """ohash names pnpm 11, which needs Node.js 22.13: under Node 20 its install warns,
    then crashes. That is the toolchain here, not the project: UNVERIFIED, naming it. (A
    set-up command stands in for that pnpm: it prints what pnpm prints, and fails.)"""
    from assay.pipeline import VerifyOptions
    from assay.pipeline import verify as verify_in_process

    repo = write(tmp_path / "repo", {"Makefile": "test:\n\ttrue\n"})
    too_new = (
        "echo 'warn: This version of pnpm requires at least Node.js v22.13' >&2; "
        "echo 'Error [ERR_UNKNOWN_BUILTIN_MODULE]: No such built-in module: node:sqlite' >&2; "
        "exit 1"
    )
    options = VerifyOptions(install=True, install_commands=(too_new,), use_cache=False)
    report = verify_in_process(repo, options)
    assert report.status.value == "UNVERIFIED", report.note
    assert report.note == (
        "install step install-command-1 could not run: the project needs Node.js v22.13, newer than "
        "the toolchain here; the checks were not run. Install it, then verify again."
    )


@pytest.mark.parametrize(("engine", "status"), [(">=99", "UNVERIFIED"), (">=18", "FAILED")])
def test_a_failure_on_a_node_the_package_does_not_support_is_unverified(
    tmp_path: Path, engine: str, status: str
) -> None:
    """nanoevents 10 wants Node.js 22 (`engines`); under Node 20 its `pnpm test` failed and
    assay said the output does not say why. For real, with pnpm: a failing test on a Node.js
    the package excludes is UNVERIFIED, naming the release; on one it admits, FAILED."""
    from tests.cli import assay, no_traceback
    from tests.test_package_managers import PNPM_9_15_0, _node_test, _pnpm_project

    root = _pnpm_project(tmp_path / "repo", PNPM_9_15_0, _node_test(3))
    manifest = json.loads((root / "package.json").read_text())
    (root / "package.json").write_text(json.dumps({**manifest, "engines": {"node": engine}}))
    done = assay("verify", "--install", "--json", str(root), timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    if status == "UNVERIFIED":
        assert f"the project needs Node.js {engine}, newer than" in report["note"], report["note"]
