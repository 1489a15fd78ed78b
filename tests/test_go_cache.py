"""go starts warm in the sandbox, from a build cache of assay's per repository, and still
compiles every edit and really runs every test.

A real Go module through the command line under bubblewrap: the first run fills the cache,
the second compiles only the module's own packages yet runs its tests (no "(cached)"
result), and a planted wrong value on a warm cache is FAILED."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from assay.go_cache import GO, GO_CACHE_ENV, GO_CACHES, go_cache_for, with_go_cache
from assay.pipeline import VerifyOptions, make_plan
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="needs go")

MODULE = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\n// Double returns twice x.\nfunc Double(x int) int { return x * 2 }\n",
    "calc_test.go": (
        'package calc\n\nimport "testing"\n\n'
        "func TestDouble(t *testing.T) {\n"
        '\tif Double(2) != 4 {\n\t\tt.Fatal("Double(2) != 4")\n\t}\n}\n'
    ),
}
WRONG = "package calc\n\n// Double returns twice x.\nfunc Double(x int) int { return x * 3 }\n"


@pytest.fixture
def module(tmp_path: Path) -> Path:
    return write(tmp_path / "calc", MODULE)


def verify(repo: Path, state: Path, sandbox: str = "bwrap") -> dict[str, Any]:
    done = assay(
        "verify",
        "--json",
        "--no-cache",
        "--sandbox",
        sandbox,
        str(repo),
        env=assay_env(ASSAY_CACHE_DIR=str(state)),
        timeout=300,
    )
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def go_test(report: dict[str, Any]) -> dict[str, Any]:
    (check,) = [c for c in report["checks"] if c["name"] == "go-test"]
    return check


def cached_files(state: Path) -> set[Path]:
    (cache,) = (state / GO_CACHES).iterdir()
    return {p.relative_to(cache) for p in cache.rglob("*") if p.is_file()}


def test_a_second_run_compiles_only_the_module_and_still_runs_its_tests(
    module: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    first = verify(module, state)
    assert first["status"] == "VERIFIED", first["note"]
    filled = cached_files(state)
    assert len(filled) > 20, "go did not keep its build cache in assay's"

    second = verify(module, state)
    assert second["status"] == "VERIFIED", second["note"]
    # The standard library and the testing packages came from the cache: only the module's
    # own packages were compiled again (each workspace is at a path of its own, which is
    # part of their action IDs), a few entries against the hundreds of a cold run.
    warm = cached_files(state)
    assert filled <= warm
    assert len(warm - filled) < len(filled) / 10, (len(filled), len(warm - filled))
    ran = go_test(second)
    assert "-count=1" in ran["argv"]
    assert "(cached)" not in ran["stdout"]["text"], "the test result was replayed, not run"
    assert ran["tests"]["passed"] == 1, ran["tests"]


def test_a_planted_wrong_value_fails_on_a_warm_cache(module: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert verify(module, state)["status"] == "VERIFIED"
    (module / "calc.go").write_text(WRONG)
    wrong = verify(module, state)
    assert wrong["status"] == "FAILED", wrong["note"]
    assert go_test(wrong)["verdict"] == "fail"
    (module / "calc.go").write_text(MODULE["calc.go"])
    assert verify(module, state)["status"] == "VERIFIED"


def test_each_repository_has_its_own_and_a_judged_change_none(module: Path, tmp_path: Path) -> None:
    other = write(tmp_path / "other", MODULE)
    checks = make_plan(module, VerifyOptions()).checks
    state = tmp_path / "state"
    mine = go_cache_for(module, checks, sandbox="auto", judged_against_base=False, state_dir=state)
    theirs = go_cache_for(other, checks, sandbox="auto", judged_against_base=False, state_dir=state)
    assert mine is not None and theirs is not None and mine != theirs
    assert go_cache_for(module, checks, sandbox="auto", judged_against_base=True) is None
    # In place, go already has the caller's own cache.
    assert go_cache_for(module, checks, sandbox="none", judged_against_base=False) is None
    told = with_go_cache(checks, mine)
    assert all(c.env[GO_CACHE_ENV] == str(mine) for c in told if c.tool == "go")
    assert told, "the plan has no Go check"


def test_a_checks_own_gocache_wins(module: Path, tmp_path: Path) -> None:
    checks = [
        replace(c, env={GO_CACHE_ENV: "/theirs"}) for c in make_plan(module, VerifyOptions()).checks
    ]
    told = with_go_cache(checks, tmp_path / "ours")
    assert all(c.env[GO_CACHE_ENV] == "/theirs" for c in told)


def test_a_cache_grown_past_its_bound_starts_again_empty(
    module: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checks = make_plan(module, VerifyOptions()).checks
    state = tmp_path / "state"
    cache = go_cache_for(module, checks, sandbox="auto", judged_against_base=False, state_dir=state)
    assert cache is not None
    (cache / "small").write_bytes(b"x" * 100)
    monkeypatch.setattr("assay.go_cache.GO", replace(GO, max_bytes=1000))
    again = go_cache_for(module, checks, sandbox="auto", judged_against_base=False, state_dir=state)
    assert again == cache and (cache / "small").exists()
    (cache / "large").write_bytes(b"x" * 2000)
    emptied = go_cache_for(
        module, checks, sandbox="auto", judged_against_base=False, state_dir=state
    )
    assert emptied == cache and emptied.is_dir() and not any(emptied.iterdir())
