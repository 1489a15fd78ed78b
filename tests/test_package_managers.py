"""The project's pnpm or yarn, fetched from npm into assay's cache when the machine has
none: which release a project names, and a real `assay verify --install` that fetches it,
checks the sha512 `packageManager` pins and runs the project's scripts with it."""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from assay.package_managers import Release, on_path, provide, wanted
from assay.tools.node import PNPM_STORE
from assay.verdict import Kind
from assay.verification import Check
from tests.cli import assay, no_traceback

#: pnpm 9.15.0's tarball digest as the npm registry publishes it (`dist.integrity`).
PNPM_9_15_0 = base64.b64decode(
    "duI3l2CkMo7EQVgVvNZije5yevN3mqpMkU45RBVsQpmSGon5djge4QfUHxLPpLZmgcqccY8GaPoIMe1MbYulbA=="
)
#: What pnpm 9 writes for a project with no dependencies.
EMPTY_PNPM_LOCK = """lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

importers:

  .: {}
"""

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
no_pnpm_here = pytest.mark.skipif(
    shutil.which("pnpm") is not None, reason="the machine's own pnpm would be used"
)


def _project(root: Path, manifest: dict[str, object], **files: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps(manifest))
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def _installed_and_verified(root: Path, cache: Path) -> dict[str, Any]:
    """`assay verify --install` of `root` under bubblewrap, with its own cache: the report."""
    done = assay(
        "verify", "--install", "--sandbox", "bwrap", "--json", str(root),
        env={**os.environ, "ASSAY_CACHE_DIR": str(cache)},
        timeout=300,
    )  # fmt: skip
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("pnpm@9.15.0", Release("pnpm", "pnpm", "9.15.0")),
        (f"pnpm@9.15.0+sha512.{PNPM_9_15_0.hex()}", Release("pnpm", "pnpm", "9.15.0", PNPM_9_15_0)),
        ("yarn@1.22.22", Release("yarn", "yarn", "1.22.22")),
        ("yarn@4.4.1", Release("yarn", "@yarnpkg/cli-dist", "4.4.1")),
        ("pnpm@10.0.0-rc.1", Release("pnpm", "pnpm", "10.0.0-rc.1")),
        ("npm@10.9.0", None),
        ("bun@1.1.0", Release("bun", "bun", "1.1.0")),
        ("pnpm@latest", None),  # no release: npm would pick one the project never ran
        ("pnpm@9.15.0 && curl evil", None),
        ("pnpm@https://example.com/pnpm.tgz", None),
        ("pnpm@9.15.0+sha512.abc", None),  # a digest that is no sha512
    ],
)
def test_the_release_a_package_manager_field_names(
    tmp_path: Path, field: str, expected: Release | None
) -> None:
    assert wanted(_project(tmp_path, {"packageManager": field})) == expected


@pytest.mark.parametrize(
    ("lockfile", "head", "expected"),
    [
        ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n", Release("pnpm", "pnpm", "10")),
        ("pnpm-lock.yaml", "lockfileVersion: '6.0'\n", Release("pnpm", "pnpm", "8")),
        ("pnpm-lock.yaml", "lockfileVersion: 5.4\n", Release("pnpm", "pnpm", "7")),
        ("pnpm-lock.yaml", "lockfileVersion: '99.0'\n", None),
        ("yarn.lock", "# yarn lockfile v1\n\n\nleft-pad@^1.3.0:\n", Release("yarn", "yarn", "1")),
        (
            "yarn.lock",
            "__metadata:\n  version: 8\n  cacheKey: 10c0\n",
            Release("yarn", "@yarnpkg/cli-dist", "4"),
        ),
    ],
)
def test_without_the_field_the_lockfile_says_which_release(
    tmp_path: Path, lockfile: str, head: str, expected: Release | None
) -> None:
    # A real lockfile is far longer than its head: only the head is read.
    root = _project(tmp_path, {"name": "p"}, **{lockfile: head + "# entry\n" * 50_000})
    assert wanted(root) == expected


def test_a_linked_manifest_or_lockfile_names_nothing(tmp_path: Path) -> None:
    outside = _project(tmp_path / "outside", {"packageManager": "pnpm@9.15.0"})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").symlink_to(outside / "package.json")
    assert wanted(root) is None
    (root / "package.json").unlink()
    (root / "package.json").write_text("{}")
    (outside / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    (root / "pnpm-lock.yaml").symlink_to(outside / "pnpm-lock.yaml")
    assert wanted(root) is None


def test_a_manifest_that_is_no_object_names_nothing(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('["pnpm@9.15.0"]')
    assert wanted(tmp_path) is None
    (tmp_path / "package.json").write_text("{not json")
    assert wanted(tmp_path) is None


@no_pnpm_here
def test_without_install_a_release_not_yet_fetched_is_named_not_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    root = _project(tmp_path / "repo", {"packageManager": "pnpm@9.15.0"})
    provided = provide(root, fetch=False)
    assert provided is not None and provided.bin_dir is None
    assert "pnpm@9.15.0 is not on PATH; `--install` fetches it" in provided.note
    assert not (tmp_path / "cache").exists()


@no_pnpm_here
def test_a_cache_that_cannot_hold_the_release_is_a_reason_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cache").write_text("a file where the cache should be")
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    root = _project(tmp_path / "repo", {"packageManager": "pnpm@9.15.0"})
    provided = provide(root, fetch=True)
    assert provided is not None and provided.bin_dir is None
    assert provided.note.startswith("pnpm@9.15.0 could not be kept in "), provided.note


def test_the_directory_goes_on_path_after_what_the_check_had() -> None:
    check = Check("pnpm-test", Kind.TEST, ("pnpm", "test"), env={"PATH": "/venv/bin:/usr/bin"})
    (moved,) = on_path([check], Path("/cache/pnpm/node_modules/.bin"))
    assert moved.env["PATH"] == f"/venv/bin:/usr/bin{os.pathsep}/cache/pnpm/node_modules/.bin"


def _node_test(expected: int) -> str:
    return (
        "const test = require('node:test');\nconst assert = require('node:assert');\n"
        f"test('adds', () => assert.strictEqual(1 + 1, {expected}));\n"
    )


def _pnpm_project(root: Path, digest: bytes, test: str) -> Path:
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "packageManager": f"pnpm@9.15.0+sha512.{digest.hex()}",
        "scripts": {"test": "node --test test.js"},
    }
    return _project(root, manifest, **{"pnpm-lock.yaml": EMPTY_PNPM_LOCK, "test.js": test})


@needs_bwrap
@no_pnpm_here
def test_install_fetches_the_pinned_pnpm_and_the_scripts_run_with_it(tmp_path: Path) -> None:
    """For real: npm fetches pnpm 9.15.0 into assay's cache, its digest is the pinned one,
    the install step and the test script run with it in the sandbox, and a wrong value in
    the test is FAILED by the same way."""
    cache = tmp_path / "cache"
    env = {**os.environ, "ASSAY_CACHE_DIR": str(cache)}
    root = _pnpm_project(tmp_path / "repo", PNPM_9_15_0, _node_test(2))
    args = ("verify", "--install", "--sandbox", "bwrap", "--json", str(root))
    done = assay(*args, env=env, timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", done.stdout
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert test["checker"]["version"] == "9.15.0"
    assert test["checker"]["path"].startswith(str(cache / "package-managers" / "pnpm@9.15.0"))

    (root / "test.js").write_text(_node_test(3))
    done = assay(*args, env=env, timeout=300)
    assert json.loads(done.stdout)["status"] == "FAILED", done.stdout


@needs_bwrap
@no_pnpm_here
def test_a_fetched_release_without_the_pinned_digest_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    wrong = bytes(64)
    root = _pnpm_project(tmp_path / "repo", wrong, _node_test(2))
    report = _installed_and_verified(root, cache)
    assert report["status"] == "UNVERIFIED", report
    assert "does not have the sha512 packageManager pins" in report["note"]
    notes = report["plan"]["notes"]
    assert any("does not have the sha512 packageManager pins" in n for n in notes), notes
    assert list((cache / "package-managers").iterdir()) == []  # nothing kept to use later


#: pnpm 9's lockfile for one dependency from the registry.
ONE_DEPENDENCY_LOCK = """lockfileVersion: '9.0'

settings:
  autoInstallPeers: true
  excludeLinksFromLockfile: false

importers:

  .:
    dependencies:
      is-number:
        specifier: 7.0.0
        version: 7.0.0

packages:

  is-number@7.0.0:
    resolution: {integrity: sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==}
    engines: {node: '>=0.12.0'}

snapshots:

  is-number@7.0.0: {}
"""


@needs_bwrap
@no_pnpm_here
def test_pnpms_store_stays_out_of_the_linters_way(tmp_path: Path) -> None:
    """Left to itself, pnpm kept its store at the root of the workspace's mount, the
    project's own directory, where antfu/utils' eslint linted its JSON index (154,427
    errors). The store now lives under node_modules, which every linter leaves alone; this
    lint fails where a `.pnpm-store` appears at the root, as that eslint did."""
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "packageManager": f"pnpm@9.15.0+sha512.{PNPM_9_15_0.hex()}",
        "dependencies": {"is-number": "7.0.0"},
        "scripts": {
            "lint": "node -e \"process.exit(require('fs').existsSync('.pnpm-store') ? 1 : 0)\"",
            "test": "node --test test.js",
        },
    }
    test = (
        "require('node:test')('is a number', () => require('assert')(require('is-number')(5)));\n"
    )
    root = _project(
        tmp_path / "repo", manifest, **{"pnpm-lock.yaml": ONE_DEPENDENCY_LOCK, "test.js": test}
    )
    report = _installed_and_verified(root, tmp_path / "cache")
    assert report["status"] == "VERIFIED", report["note"]
    assert {c["name"] for c in report["checks"]} >= {"pnpm-lint", "pnpm-test"}


#: What yarn 4 writes for a project with one dependency from the registry, which has a bin.
YARN_4_LOCK = """# This file is generated by running "yarn install" inside your project.
# Manual changes might be lost - proceed with caution!

__metadata:
  version: 8
  cacheKey: 10c0

"p@workspace:.":
  version: 0.0.0-use.local
  resolution: "p@workspace:."
  dependencies:
    semver: "npm:7.6.3"
  languageName: unknown
  linkType: soft

"semver@npm:7.6.3":
  version: 7.6.3
  resolution: "semver@npm:7.6.3"
  bin:
    semver: bin/semver.js
  checksum: 10c0/88f33e148b210c153873cb08cfe1e281d518aaa9a666d4d148add6560db5cd3c582f3a08ccb91f38d5f379ead256da9931234ed122057f40bb5766e65e58adaf
  languageName: node
  linkType: hard
"""


def _yarn_project(root: Path, linker: str | None, test: str) -> Path:
    """A yarn 4 project whose test script runs its dependency's bin, then `test`."""
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "packageManager": "yarn@4.4.1",
        "dependencies": {"semver": "7.6.3"},
        "scripts": {"test": "semver 1.2.3 && node --test test.js"},
    }
    files = {"yarn.lock": YARN_4_LOCK, "test.js": test}
    if linker:
        files[".yarnrc.yml"] = f"nodeLinker: {linker}\n"
    return _project(root, manifest, **files)


@needs_bwrap
@pytest.mark.skipif(shutil.which("yarn") is not None, reason="the machine's own yarn would be used")
@pytest.mark.parametrize("linker", ["node-modules", None])  # None: Plug'n'Play, yarn's default
def test_yarn_that_finds_no_install_is_unverified_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, linker: str | None
) -> None:
    """yarn 2 and later refuse to run a script before an install ("Couldn't find the
    node_modules state file"): the code was not judged. The yarn the project names is
    fetched first (as an earlier `--install` would have), then verified without one."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(cache))
    root = _yarn_project(tmp_path / "repo", linker, _node_test(2))
    provided = provide(root, fetch=True)
    assert provided is not None and provided.bin_dir is not None, provided
    done = assay("verify", "--sandbox", "bwrap", "--json", str(root), env={**os.environ})
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert "could not load its dependencies" in report["note"], report["note"]


@needs_bwrap
@pytest.mark.skipif(shutil.which("yarn") is not None, reason="the machine's own yarn would be used")
@pytest.mark.parametrize("linker", ["node-modules", None])  # None: Plug'n'Play, yarn's default
def test_yarn_installs_into_the_workspace_and_its_checks_find_what_it_installed(
    tmp_path: Path, linker: str | None
) -> None:
    """yarn 2 and later keep downloads in a global folder: the host's is read-only in the
    sandbox (reselect's install failed copying into its mirror), and the sandbox's home
    is gone after each step (Plug'n'Play reads its packages from there when the checks
    run). The folder is the workspace's now: the install writes it, the checks read it."""
    test = (
        "require('node:test')('parses', () => "
        "require('assert').strictEqual(require('semver').major('1.2.3'), 1));\n"
    )
    root = _yarn_project(tmp_path / "repo", linker, test)
    host_folder = tmp_path / "host-yarn"  # a host's own global folder, empty
    host_folder.mkdir()
    env = {**os.environ, "YARN_GLOBAL_FOLDER": str(host_folder)}
    done = assay(
        "verify", "--install", "--sandbox", "bwrap", "--json", str(root),
        env={**env, "ASSAY_CACHE_DIR": str(tmp_path / "cache")},
        timeout=300,
    )  # fmt: skip
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]
    assert list(host_folder.iterdir()) == []  # the host's is never written


#: yarn 1's lockfile for is-number 7.0.0.
YARN_1_LOCK = """\
# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.
# yarn lockfile v1


is-number@7.0.0:
  version "7.0.0"
  resolved "https://registry.yarnpkg.com/is-number/-/is-number-7.0.0.tgz#7535345b896734d5f80c4d06c50955527a14f12b"
  integrity sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==
"""


@needs_bwrap
@pytest.mark.skipif(shutil.which("yarn") is not None, reason="the machine's own yarn would be used")
def test_yarn_1_keeps_its_cache_in_the_workspace_not_the_sandboxs_home(tmp_path: Path) -> None:
    """immer: yarn 1 fetched every platform's optional rollup binary into its cache, under
    the sandbox's HOME, a tmpfs of 1 GiB, and the install failed with ENOSPC. Its cache is
    the workspace's now, beside npm's."""
    test = (
        "require('node:test')('counts', () => "
        "require('assert').strictEqual(require('is-number')(7), true));\n"
    )
    manifest = {
        "name": "p",
        "packageManager": "yarn@1.22.22",
        "dependencies": {"is-number": "7.0.0"},
        "scripts": {"test": "node --test test.js"},
    }
    root = _project(tmp_path / "repo", manifest, **{"yarn.lock": YARN_1_LOCK, "test.js": test})
    report = _installed_and_verified(root, tmp_path / "cache")
    assert report["status"] == "VERIFIED", report["note"]
    (step,) = [s for s in report["extra"]["install"] if s["name"] == "install-node"]
    assert step["check"]["argv"][-2:] == ["--cache-folder", ".assay-deps/yarn"], step


#: What bun 1.4 writes for a project with one dependency.
BUN_LOCK = """{
  "lockfileVersion": 2,
  "configVersion": 1,
  "workspaces": {
    "": {
      "name": "p",
      "devDependencies": {
        "dequal": "2.0.3",
      },
    },
  },
  "packages": {
    "dequal": ["dequal@2.0.3", "", {}, "sha512-0je+qPKHEMohvfRTCEo3CrPG6cAzAYgmzKyxRiYSSDkS6eGJdyVJm7WaYA5ECaAD9wLB2T4EEeymA5aFVcYXCA=="],
  }
}
"""


@pytest.mark.parametrize("lockfile", ["bun.lock", "bun.lockb"])
def test_a_bun_lockfile_names_bun(tmp_path: Path, lockfile: str) -> None:
    root = _project(tmp_path, {"name": "p"}, **{lockfile: "{}"})
    assert wanted(root) == Release("bun", "bun", "1")


def _bun_test(expected: int) -> str:
    return (
        'import { expect, test } from "bun:test";\n'
        'import { dequal } from "dequal";\n\n'
        f'test("adds", () => {{ expect(dequal([1 + 1], [{expected}])).toBe(true); }});\n'
    )


@needs_bwrap
def test_install_fetches_bun_and_its_lockfile_and_tests_run_with_it(tmp_path: Path) -> None:
    """elysiajs/exact-mirror keeps a bun.lock and tests with `bun test`: assay found no bun
    (UNVERIFIED) and installed its dependencies with an unlocked `npm install`. For real:
    bun comes from npm into assay's cache (its native binary, from the platform package),
    installs from the lockfile in the sandbox, and runs the tests; a wrong value FAILS."""
    cache = tmp_path / "cache"
    env = {**os.environ, "ASSAY_CACHE_DIR": str(cache)}
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "scripts": {"test": "bun test"},
        "devDependencies": {"dequal": "2.0.3"},
    }
    root = _project(
        tmp_path / "repo", manifest, **{"bun.lock": BUN_LOCK, "add.test.ts": _bun_test(2)}
    )
    args = ("verify", "--install", "--sandbox", "bwrap", "--json", str(root))
    done = assay(*args, env=env, timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", done.stdout
    (install,) = report["extra"]["install"]
    assert install["argv"][1:] == ["install", "--frozen-lockfile"], install["argv"]
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert test["tests"]["passed"] == 1, test["tests"]
    if shutil.which("bun") is None:
        assert test["checker"]["path"].startswith(str(cache / "package-managers" / "bun@1"))

    (root / "add.test.ts").write_text(_bun_test(3))
    report = json.loads(assay(*args, env=env, timeout=300).stdout)
    assert report["status"] == "FAILED", report["note"]
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert test["tests"]["failed"] == 1, test["tests"]


@needs_bwrap
def test_without_a_lockfile_the_pinned_pnpm_installs(tmp_path: Path) -> None:
    """A project that names pnpm and keeps no lockfile: pnpm installs (outside CI, where it
    may write the lockfile a fresh clone lacks), as it runs the scripts; npm did before."""
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    root = _pnpm_project(tmp_path / "repo", PNPM_9_15_0, _node_test(2))
    (root / "pnpm-lock.yaml").unlink()
    done = assay(
        "verify", "--install", "--sandbox", "bwrap", "--json", str(root), env=env, timeout=300
    )
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", done.stdout
    (install,) = report["extra"]["install"]
    assert os.path.basename(install["argv"][0]) == "pnpm" and install["argv"][1:] == [
        "install",
        *PNPM_STORE,
    ]
