"""The verdict cache answers only for the tree it saw, and only for trusted trees.

- Under `--base` (and `--protect`) the cache is neither consulted nor filled: a change
  under judgement must be run, whatever an earlier run stored.
- The key covers files git does not list: a file ignored through `.git/info/exclude`
  that forged a pass and was then deleted must not leave its VERIFIED to the tree
  without it; nor may an installed node package's file edited in place.

Real repositories, real runs of `assay.verify` in bubblewrap, a real cache on disk.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import assay
from assay.cache import VerdictCache
from assay.pipeline import VerifyOptions
from assay.report import Report
from assay.verdict import Status
from tests.repos import commit_all, git, write_dedented

pytestmark = pytest.mark.slow

PROJECT = {
    "pyproject.toml": """
        [project]
        name = "calc"
        version = "0"

        [tool.pytest.ini_options]
    """,
    "calc.py": """
        def add(a, b):
            return a + b
    """,
    "tests/test_calc.py": """
        from calc import add


        def test_add():
            assert add(2, 2) == 4
    """,
}

BROKEN = {"calc.py": "def add(a, b):\n    return a - b\n"}

#: A conftest that turns every failing test into a pass: pytest itself then says "passed".
FORGING_CONFTEST = """
    import pytest


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        outcome.get_result().outcome = "passed"
"""


def rows(cache: Path) -> list[tuple[str, str]]:
    """The verdict entries (reports) in the cache, by key. Other entries the same store
    holds (the base's per-test outcomes, `assay.base_tests`) are not verdicts."""
    with sqlite3.connect(cache / "verdicts.sqlite3") as db:
        found = db.execute("SELECT key, report FROM verdicts").fetchall()
    return sorted((key, report) for key, report in found if "status" in json.loads(report))


def verify(repo: Path, cache: Path, **options: Any) -> Report:
    return assay.verify(repo, VerifyOptions(cache_dir=str(cache), **options))


@pytest.fixture
def cache_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every read and write of a verdict in the cache's store, as (`get` or `put`, key):
    a read that found a report, a write that stored one. The real methods run; the same
    store's other entries (the base's per-test outcomes) are not recorded."""
    calls: list[tuple[str, str]] = []
    real_get, real_put = VerdictCache.get, VerdictCache.put

    def get(self: VerdictCache, key: str) -> Any:
        found = real_get(self, key)
        if found is not None and "status" in found.report:
            calls.append(("get", key))
        return found

    def put(self: VerdictCache, key: str, report: Mapping[str, Any]) -> None:
        if "status" in report:
            calls.append(("put", key))
        real_put(self, key, report)

    monkeypatch.setattr(VerdictCache, "get", get)
    monkeypatch.setattr(VerdictCache, "put", put)
    return calls


@pytest.mark.parametrize("protect", [True, False], ids=["protect", "base-only"])
def test_a_change_under_judgement_is_never_served_or_stored_by_the_cache(
    tmp_path: Path, protect: bool, cache_calls: list[tuple[str, str]]
) -> None:
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    commit_all(write_dedented(repo, PROJECT), "base")
    passing = verify(repo, cache)  # the base passes: its verdict is stored
    assert passing.status is Status.VERIFIED, passing.note
    commit_all(write_dedented(repo, BROKEN), "change")
    failing = verify(repo, cache)
    assert failing.status is Status.FAILED, failing.note
    # Forge: the failing tree's entry now holds the passing tree's report, whose evidence
    # gives its status (a cache whose entries are only re-checked would believe it).
    (_, pass_report), (fail_key, _) = sorted(
        rows(cache), key=lambda row: '"status": "FAILED"' in row[1]
    )
    with sqlite3.connect(cache / "verdicts.sqlite3") as db:
        db.execute("UPDATE verdicts SET report = ? WHERE key = ?", (pass_report, fail_key))
    forged = rows(cache)
    served = verify(repo, cache)
    assert served.status is Status.VERIFIED and served.record.cached is not None, (
        "the forged entry is not under the key plain verify computes: this test proves nothing"
    )

    cache_calls.clear()
    judged = verify(repo, cache, base="HEAD~1", protect=protect)
    assert judged.record.cached is None
    assert judged.status is Status.FAILED, judged.note
    assert cache_calls == [], f"the verdict cache was read or written under --base: {cache_calls}"
    assert rows(cache) == forged, "a verdict entry was written under --base"


def test_a_forging_file_listed_in_info_exclude_then_deleted_leaves_no_verdict(
    tmp_path: Path,
) -> None:
    """The attack: a file git does not list (ignored through `.git/info/exclude`) forges
    a pass and is deleted; the clean tree, which fails, must not get the cached VERIFIED."""
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    commit_all(write_dedented(repo, {**PROJECT, **BROKEN}), "broken")
    (repo / ".git" / "info" / "exclude").write_text("conftest.py\n")
    write_dedented(repo, {"conftest.py": FORGING_CONFTEST})
    assert git(repo, "status", "--porcelain", "--ignored") == b"!! conftest.py\n"
    forged = verify(repo, cache)
    assert forged.status is Status.VERIFIED, forged.note  # what that tree really does

    (repo / "conftest.py").unlink()
    assert git(repo, "status", "--porcelain", "--ignored") == b""  # git sees no change
    clean = verify(repo, cache)
    assert clean.record.cached is None, "the deleted file's verdict answered for the clean tree"
    assert clean.status is Status.FAILED, clean.note


def test_the_same_attack_through_the_command_line(tmp_path: Path) -> None:
    from tests.cli import assay as run_assay
    from tests.cli import assay_env

    repo, cache = tmp_path / "repo", tmp_path / "cache"
    commit_all(write_dedented(repo, {**PROJECT, **BROKEN}), "broken")
    (repo / ".git" / "info" / "exclude").write_text("/conftest.py\n")
    write_dedented(repo, {"conftest.py": FORGING_CONFTEST})
    env = assay_env(ASSAY_CACHE_DIR=str(cache))

    def status() -> tuple[str, bool]:
        done = run_assay("verify", "--json", str(repo), timeout=300, env=env)
        report = json.loads(done.stdout)
        return report["status"], "cached" in report.get("extra", {})

    assert status() == ("VERIFIED", False)
    (repo / "conftest.py").unlink()
    assert status() == ("FAILED", False)


NODE_TEST = """
    const test = require('node:test');
    const assert = require('node:assert');
    const dep = require('tinydep');

    test('dep', () => { assert.strictEqual(dep.value, 1); });
"""


def test_a_file_inside_a_node_package_edited_in_place_is_a_miss(tmp_path: Path) -> None:
    """What the tests load from node_modules is part of what they saw: an installed file
    edited in place (same size, its mtime put back, its package untouched) is not the
    tree whose verdict was stored."""
    repo, cache = tmp_path / "repo", tmp_path / "cache"
    write_dedented(
        repo,
        {
            "package.json": '{"name": "x", "version": "1.0.0"}\n',
            "test/dep.js": NODE_TEST,
            "node_modules/tinydep/package.json": '{"name": "tinydep", "main": "index.js"}\n',
            "node_modules/tinydep/index.js": "module.exports = { value: 1 };\n",
        },
    )
    commit_all(repo)
    first = verify(repo, cache)
    assert first.status is Status.VERIFIED, first.note
    assert verify(repo, cache).record.cached is not None  # unchanged: a hit

    module = repo / "node_modules" / "tinydep" / "index.js"
    before = module.stat()
    time.sleep(0.05)  # past a tick of the coarse clock change times are taken from
    module.write_text("module.exports = { value: 2 };\n")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = verify(repo, cache)
    assert again.record.cached is None, "served the verdict of the package before the edit"
    assert again.status is Status.FAILED, again.note
