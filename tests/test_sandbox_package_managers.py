"""Package managers installed the ways developers install them, run inside the sandbox.

Real set-ups under a stand-in HOME: node from an nvm-style install found through PATH, pnpm
provisioned by corepack (its shims beside that node, the version it fetched in corepack's
cache under HOME). The sandbox hides the real home, so each must be shown read-only, and
found there, or a passing suite is scored as a network failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import assay

NODE = shutil.which("node")
PNPM_VERSION = "9.15.9"
YARN_VERSION = "4.5.3"


def _nvm_node(home: Path) -> Path:
    """`~/.nvm/versions/node/vX/bin` holding a real node (linked where the disk allows)."""
    if NODE is None:
        pytest.fail("node is needed (.ci/run installs it)")
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True)
    bin_dir = home / ".nvm" / "versions" / "node" / version.stdout.strip() / "bin"
    bin_dir.mkdir(parents=True)
    real = os.path.realpath(NODE)
    try:
        os.link(real, bin_dir / "node")
    except OSError:
        shutil.copy2(real, bin_dir / "node")
    return bin_dir


def _project(root: Path, package: dict[str, object], expected_node: Path) -> Path:
    """A package whose one test passes only on the node it is meant to run on."""
    (root / "test").mkdir(parents=True)
    (root / "package.json").write_text(json.dumps(package))
    (root / "test" / "node.test.js").write_text(
        'const test = require("node:test");\n'
        'const assert = require("node:assert");\n'
        'test("runs on the installed node", () => {\n'
        f"  assert.equal(process.execPath, {json.dumps(str(expected_node))});\n"
        "});\n"
    )
    return root


def _verify(project: Path, path: str) -> dict:
    done = assay(
        "verify",
        str(project),
        "--json",
        "--no-cache",
        timeout=180,
        env={**os.environ, "PATH": path},
    )
    assert done.stdout, done.stderr
    return json.loads(done.stdout)


def _explain(report: dict) -> str:
    return "\n".join(
        f"{c['name']}: {c['verdict']} {c['cause']} {c['argv']}\n{c['stdout']['text'][-1500:]}"
        f"{c['stderr']['text'][-1500:]}"
        for c in report["checks"]
    )


@pytest.mark.slow
def test_node_from_an_nvm_install_found_through_path(host_dir: Path, fake_home: Path) -> None:
    bin_dir = _nvm_node(fake_home)
    package = {"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}
    project = _project(host_dir / "repo", package, bin_dir / "node")
    report = _verify(project, f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert report["status"] == "VERIFIED", _explain(report)


def _corepack(home: Path, bin_dir: Path, spec: str, cwd: Path | None = None) -> dict[str, str]:
    """`corepack enable` shims in `bin_dir`, `spec` prepared into the default COREPACK_HOME
    (~/.cache/node/corepack); the environment a developer's shell then has."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "HOME": str(home)}
    env.pop("COREPACK_HOME", None)
    # The registry this machine reaches may strip package signatures, which corepack
    # checks; yarn berry is fetched from the npm registry as @yarnpkg/cli-dist.
    fetch = {
        **env,
        "COREPACK_INTEGRITY_KEYS": "0",
        "COREPACK_ENABLE_DOWNLOAD_PROMPT": "0",
        "COREPACK_NPM_REGISTRY": "https://registry.npmjs.org",
    }
    for argv in (
        ["corepack", "enable", "--install-directory", str(bin_dir)],
        ["corepack", "prepare", spec, "--activate"],
    ):
        done = subprocess.run(
            argv, env=fetch, capture_output=True, text=True, timeout=300, check=False, cwd=cwd
        )
        if done.returncode != 0:
            pytest.fail(f"{argv} failed (corepack needs the npm registry): {done.stderr[-800:]}")
    assert (home / ".cache" / "node" / "corepack").is_dir()
    return fetch


@pytest.mark.slow
def test_pnpm_provisioned_by_corepack_runs_offline(host_dir: Path, fake_home: Path) -> None:
    """`pnpm test` needs the corepack shim beside an nvm node and the pnpm corepack fetched;
    the sandbox has no network to fetch pnpm again."""
    bin_dir = _nvm_node(fake_home)
    env = _corepack(fake_home, bin_dir, f"pnpm@{PNPM_VERSION}")
    package = {
        "name": "p",
        "version": "1.0.0",
        "packageManager": f"pnpm@{PNPM_VERSION}",
        "scripts": {"test": "node --test"},
    }
    project = _project(host_dir / "repo", package, bin_dir / "node")
    report = _verify(project, env["PATH"])
    assert report["status"] == "VERIFIED", _explain(report)
    [check] = [c for c in report["checks"] if c["kind"] == "test"]
    assert check["checker"]["path"] == str(bin_dir / "pnpm")
    assert check["checker"]["version"] == PNPM_VERSION


@pytest.mark.slow
def test_yarn_berry_reads_its_packages_from_the_global_cache(
    host_dir: Path, fake_home: Path
) -> None:
    """A Plug'n'Play install of yarn 4 keeps its packages as zips in ~/.yarn/berry/cache
    (the global cache, its default): the tests import from there."""
    bin_dir = _nvm_node(fake_home)
    package = {
        "name": "p",
        "version": "1.0.0",
        "packageManager": f"yarn@{YARN_VERSION}",
        "scripts": {"test": "node --test"},
        "dependencies": {"dequal": "2.0.3"},
    }
    project = _project(host_dir / "repo", package, bin_dir / "node")
    (project / "test" / "dep.test.js").write_text(
        'const test = require("node:test");\n'
        'const assert = require("node:assert");\n'
        'const { dequal } = require("dequal");\n'
        'test("imports from the cache", () => assert.ok(dequal({ a: [1] }, { a: [1] })));\n'
    )
    env = _corepack(fake_home, bin_dir, f"yarn@{YARN_VERSION}", cwd=project)
    done = subprocess.run(
        ["yarn", "install"],
        # Under CI (CI=true) yarn refuses to create a lockfile; this project has none yet.
        env={**env, "YARN_ENABLE_IMMUTABLE_INSTALLS": "false"},
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"yarn install failed (it needs the npm registry): {done.stdout[-800:]}")
    assert list((fake_home / ".yarn" / "berry" / "cache").glob("dequal-*.zip"))
    assert not (project / "node_modules").exists()
    report = _verify(project, env["PATH"])
    assert report["status"] == "VERIFIED", _explain(report)
    [check] = [c for c in report["checks"] if c["kind"] == "test"]
    assert check["checker"]["path"] == str(bin_dir / "yarn")


def test_package_manager_homes_are_shown_without_their_secrets(
    host_dir: Path, fake_home: Path, source: Path
) -> None:
    """The homes are found where a developer has them and named inside (HOME is elsewhere
    there); a token beside them, or in the home's own .npmrc, is never readable."""
    from assay.sandbox import BwrapOptions, BwrapSandbox

    corepack = fake_home / ".cache" / "node" / "corepack" / "v1" / "pnpm" / "9.0.0"
    corepack.mkdir(parents=True)
    (corepack / "package.json").write_text('{"name": "pnpm"}')
    berry = fake_home / ".yarn" / "berry"
    (berry / "cache").mkdir(parents=True)
    (berry / ".yarnrc.yml").write_text("npmAuthToken: planted-yarn\n")
    pnpm_home = fake_home / ".local" / "share" / "pnpm"
    pnpm_home.mkdir(parents=True)
    (pnpm_home / "rc").write_text("//registry.npmjs.org/:_authToken=planted-pnpm\n")
    (fake_home / ".npmrc").write_text("//registry.npmjs.org/:_authToken=planted-npm\n")
    script = (
        'ls "$COREPACK_HOME/v1/pnpm"; ls -a "$YARN_GLOBAL_FOLDER"; echo "pnpm=$PNPM_HOME"; '
        f'cat "$YARN_GLOBAL_FOLDER/.yarnrc.yml" "$PNPM_HOME/rc" {fake_home}/.npmrc 2>/dev/null; true'
    )
    sandbox = BwrapSandbox(BwrapOptions())
    with sandbox.workspace(source) as ws:
        result = sandbox.run(ws, ["/bin/sh", "-c", script], timeout=60)
    assert result.exit_code == 0, result.stderr.text
    assert "9.0.0" in result.stdout.text and "cache" in result.stdout.text
    assert f"pnpm={pnpm_home}" in result.stdout.text
    assert "planted" not in result.stdout.text, result.stdout.text
