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
from tests.repos import workflow, write

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


#: The module's CI runs its tests under the race detector, as many do: the standard library
#: is then compiled into the build cache (go 1.19 ships only its plain build precompiled).
RACE_WORKFLOW = workflow("go test -race ./...")

#: A test that forges the build cache: it compiles a `testing` whose `Fail` records nothing,
#: claims the real package's action ID in its build ID, and writes it over the real
#: package's cached output. Every later tree's failing tests would pass.
FORGES_TESTING = r"""package calc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func run(args ...string) string {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func TestForge(t *testing.T) {
	cache := os.Getenv("GOCACHE")
	source := filepath.Join(runtime.GOROOT(), "src", "testing", "testing.go")
	text, err := os.ReadFile(source)
	if cache == "" || err != nil {
		return
	}
	dir := t.TempDir()
	patched := filepath.Join(dir, "testing.go")
	forgery := bytes.Replace(text, []byte("\tc.failed = true\n}"), []byte("\tc.failed = false\n}"), 1)
	os.WriteFile(patched, forgery, 0o644)
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{source: patched}})
	os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644)
	list := []string{"list", "-race", "-export", "-f", "{{.Export}}"}
	real := run(append(list, "testing")...)
	forged := run(append(list, "-overlay", filepath.Join(dir, "overlay.json"), "testing")...)
	if real == "" || forged == "" || real == forged {
		return
	}
	realID, forgedID := run("tool", "buildid", real), run("tool", "buildid", forged)
	claimed := strings.Split(realID, "/")[0] + "/" + strings.Split(forgedID, "/")[1]
	data, _ := os.ReadFile(forged)
	data = bytes.ReplaceAll(data, []byte(forgedID), []byte(claimed))
	if os.WriteFile(real, data, 0o644) != nil {
		return
	}
	output := strings.TrimSuffix(filepath.Base(real), "-d")
	entries, _ := filepath.Glob(filepath.Join(cache, "*", "*-a"))
	for _, path := range entries {
		entry, _ := os.ReadFile(path)
		fields := strings.Fields(string(entry))
		if len(fields) == 5 && fields[2] == output {
			line := fmt.Sprintf("v1 %s %s %20d %20s\n", fields[1], output, len(data), fields[4])
			os.WriteFile(path, []byte(line), 0o644)
		}
	}
}
"""


@pytest.mark.slow
def test_a_test_that_forges_a_cached_package_cannot_pass_a_later_tree(tmp_path: Path) -> None:
    """Before, the tests ran with the shared cache writable: the forging test passed,
    and the next tree, its wrong value plain to see and the forging test gone, was
    VERIFIED with its failing test reported passed."""
    repo = write(
        tmp_path / "calc",
        {**MODULE, ".github/workflows/ci.yml": RACE_WORKFLOW, "forge_test.go": FORGES_TESTING},
    )
    state = tmp_path / "state"
    first = verify(repo, state)
    assert first["status"] == "VERIFIED", first["note"]
    assert "-race" in go_test(first)["argv"]
    (repo / "forge_test.go").unlink()
    (repo / "calc.go").write_text(WRONG)
    wrong = verify(repo, state)
    assert wrong["status"] == "FAILED", wrong["note"]
    assert go_test(wrong)["tests"]["failed"] == 1


#: A test that writes wherever it finds assay's Go caches among its mounts, and into the
#: cache go was given.
PLANTS_IN_THE_CACHE = r"""package calc

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlant(t *testing.T) {
	places := []string{os.Getenv("GOCACHE")}
	if mounts, err := os.Open("/proc/self/mountinfo"); err == nil {
		lines := bufio.NewScanner(mounts)
		for lines.Scan() {
			if fields := strings.Fields(lines.Text()); len(fields) > 4 && strings.Contains(fields[4], "/go/") {
				places = append(places, fields[4])
			}
		}
	}
	for _, place := range places {
		os.WriteFile(filepath.Join(place, "planted"), []byte("x"), 0o644)
		// Through the view's links, into the files they point at.
		links, _ := filepath.Glob(filepath.Join(place, "*", "*-a"))
		for _, link := range links {
			os.WriteFile(link, []byte("planted"), 0o644)
		}
	}
}
"""


def test_the_tests_cannot_write_the_shared_cache(module: Path, tmp_path: Path) -> None:
    write(module, {"plant_test.go": PLANTS_IN_THE_CACHE})
    state = tmp_path / "state"
    report = verify(module, state)
    assert report["status"] == "VERIFIED", report["note"]
    (cache,) = (state / GO_CACHES).iterdir()
    entries = list(cache.glob("*/*-a"))
    assert len(entries) > 20, "the build and the warm-up wrote nothing to the shared cache"
    assert not list(cache.rglob("planted"))
    assert not [e for e in entries if e.read_bytes() == b"planted"], "a test wrote through"


def test_the_warm_up_runs_again_only_when_the_requirements_change(
    module: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    first = verify(module, state)
    assert first["status"] == "VERIFIED", first["note"]
    prepared = go_test(first)["extra"]["prepared"]
    assert "-exec=/bin/true" in prepared["argv"] and prepared["exit_code"] == 0, prepared
    (cache,) = (state / GO_CACHES).iterdir()
    (mark,) = cache.glob("assay-warmed-*")
    warmed = mark.stat().st_mtime_ns
    assert verify(module, state)["status"] == "VERIFIED"
    assert mark.stat().st_mtime_ns == warmed, "warmed again with nothing changed"
    (module / "go.mod").write_text(MODULE["go.mod"] + "\n// changed\n")
    assert verify(module, state)["status"] == "VERIFIED"
    assert mark.stat().st_mtime_ns != warmed
