"""A step that needs the network, run where there is none (the sandbox), is `inconclusive`
with a note that says so and how to allow it: never a failure of the code. Real programs,
really cut off from the network (`unshare -n`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.classify import classify
from assay.evidence import Check
from assay.parsers import parse_output
from assay.process import ProcessResult
from assay.verdict import Cause, Kind, Verdict
from tests.repos import write
from tests.results import process_result

# What each program says when it cannot reach the network.
OFFLINE = {
    "curl": ["curl", "-sS", "https://example.com"],
    "node": [
        "node",
        "-e",
        (
            "require('https').get('https://registry.npmjs.org/', () => {})"
            ".on('error', e => { console.error(e); process.exit(1); })"
        ),
    ],
    "npm": ["npm", "view", "left-pad", "version", "--fetch-retries=0"],
    "python-dns": [
        sys.executable,
        "-c",
        "import urllib.request as u; u.urlopen('https://pypi.org')",
    ],
    "python-route": [
        sys.executable,
        "-c",
        "import urllib.request as u; u.urlopen('http://1.1.1.1')",
    ],
    "pip": [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--isolated",
        "--no-deps",
        "--retries=1",
        "--timeout=2",
        "--index-url=https://pypi.org/simple",
        "six",
    ],
    # cargo offline (as the sandbox runs it) without a crate never fetched (itoa's
    # dev-dependency): a missing download, not the code failing to build.
    "cargo": ["cargo", "build", "--offline"],
    # ulid's `go mod download` of a module never fetched.
    "go": ["go", "mod", "download"],
    # How checks run pip after `--install` (PIP_NO_INDEX, the kept wheels): it finds nothing.
    "pip-no-index": [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--isolated",
        "--no-deps",
        "--no-index",
        "--find-links=.",
        "types-PyMySQL",
    ],
}


#: Files a case's program reads from its working directory.
OFFLINE_FILES = {
    "cargo": {
        "Cargo.toml": (
            '[package]\nname = "offline"\nversion = "0.1.0"\nedition = "2021"\n\n'
            '[dependencies]\nno-panic = "0.1"\n'
        ),
        "src/main.rs": "fn main() {}\n",
    },
    "go": {
        "go.mod": (
            "module example.com/offline\n\ngo 1.19\n\n"
            "require github.com/pborman/getopt v0.0.0-20170112200414-7148bc3a4c30\n"
        ),
    },
}


def _offline(argv: list[str], cwd: Path) -> ProcessResult:
    assert shutil.which("unshare") is not None, "unshare is not installed"
    assert shutil.which(argv[0]) is not None, f"{argv[0]} is not installed"
    # npm answers `npm view` from its cache where the machine fetched that package once:
    # a cache of its own, empty, as a fresh machine's.
    env = {**os.environ, "npm_config_cache": str(cwd / ".npm-cache")}
    done = subprocess.run(
        ["unshare", "-n", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "unshare:" not in done.stderr, done.stderr  # the namespace itself was refused
    return process_result(
        tuple(argv), cwd=str(cwd), exit_code=done.returncode, stdout=done.stdout, stderr=done.stderr
    )


@pytest.mark.parametrize("kind", [Kind.BUILD, Kind.TEST])
@pytest.mark.parametrize("case", sorted(OFFLINE))
def test_no_network_is_inconclusive_not_a_failure(case: str, kind: Kind, tmp_path: Path) -> None:
    write(tmp_path, OFFLINE_FILES.get(case, {}))
    ran = _offline(OFFLINE[case], tmp_path)
    assert ran.exit_code not in (0, None)
    c = Check(name="install", kind=kind, argv=ran.argv, tool="shell")
    ev = classify(c, ran, parse_output(c, ran), sandbox="bwrap")
    assert (ev.verdict, ev.cause) == (Verdict.INCONCLUSIVE, Cause.NETWORK_UNAVAILABLE), ev.note
    assert "no network" in ev.note and "assay verify --install" in ev.note


def test_a_host_that_does_not_resolve_is_no_network(tmp_path: Path) -> None:
    """zipp's build backend fetches a licence text from a host outside the registries; with
    DNS answering, that is "Name or service not known" (`.invalid` never resolves)."""
    argv = (sys.executable, "-c", "import urllib.request as u; u.urlopen('https://x.invalid')")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    ran = process_result(argv, cwd=str(tmp_path), exit_code=done.returncode, stderr=done.stderr)
    c = Check(name="install", kind=Kind.BUILD, argv=ran.argv, tool="shell")
    ev = classify(c, ran, parse_output(c, ran), sandbox="bwrap")
    assert (ev.verdict, ev.cause) == (Verdict.INCONCLUSIVE, Cause.NETWORK_UNAVAILABLE), ev.note


def test_a_passing_run_that_mentions_the_network_is_judged_as_usual(tmp_path: Path) -> None:
    # A suite that tests its own offline handling prints these words and passes.
    ran = process_result(
        ("x",), cwd=str(tmp_path), exit_code=0, stdout="getaddrinfo EAI_AGAIN x\n2 passed\n"
    )
    c = Check(name="test", kind=Kind.TEST, argv=ran.argv, tool="shell")
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.PASS, Cause.EXIT_ZERO)


def test_a_failure_that_does_not_mention_the_network_is_still_a_failure(tmp_path: Path) -> None:
    ran = process_result(("x",), cwd=str(tmp_path), exit_code=1, stdout="1 passed, 1 failed\n")
    c = Check(name="test", kind=Kind.TEST, argv=ran.argv, tool="shell")
    ev = classify(c, ran, parse_output(c, ran))
    assert (ev.verdict, ev.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO)


@pytest.mark.slow
def test_an_npm_script_that_fetches_a_package_is_no_network_at_once(tmp_path: Path) -> None:
    """object-inspect's `posttest` runs `npx aud`, which no install provides: in the
    sandbox npm is offline, so it says so at once instead of retrying a registry it cannot
    resolve for over a minute, silent, which read as a hang."""
    import json

    from tests.cli import assay, assay_env

    repo = write(
        tmp_path / "repo",
        {
            "package.json": json.dumps(
                {
                    "name": "offline",
                    "version": "1.0.0",
                    "scripts": {
                        "test": "node test.js",
                        "posttest": "npx --yes assay-never-published-package-x",
                    },
                }
            ),
            "test.js": "console.log('1..1\\nok 1 adds\\n# pass 1');\n",
        },
    )
    done = assay(
        "verify",
        "--json",
        "--no-cache",
        "--sandbox",
        "bwrap",
        str(repo),
        env=assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state")),
        timeout=120,
    )
    report = json.loads(done.stdout)
    (test,) = [c for c in report["checks"] if c["kind"] == "test"]
    assert (test["verdict"], test["cause"]) == ("inconclusive", "network_unavailable"), test
    assert "ENOTCACHED" in test["note"], test["note"]
    assert test["duration_s"] < 30, test["duration_s"]
