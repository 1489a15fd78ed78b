"""`assay verify` and `assay plan` end to end, through the real console script.

Every test builds its fixture repositories on disk, runs the `assay` executable as a
subprocess with its own verdict cache, and reads the exit code and the JSON it prints.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.cli import ASSAY, VENV_BIN, path_with_venv
from tests.repos import git, write

BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"
CARGO = shutil.which("cargo")

# --------------------------------------------------------------------------- helpers


def base_env(cache_dir: Path, path: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["ASSAY_CACHE_DIR"] = str(cache_dir)
    env["PATH"] = path if path is not None else path_with_venv()
    env.pop("PYTHONPATH", None)
    return env


class Assay:
    """Runs the console script with a private cache and a PATH that has the project's tools."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir

    def __call__(
        self, *args: str, path: str | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ASSAY, *args],
            capture_output=True,
            text=True,
            env=base_env(self.cache_dir, path),
            timeout=timeout,
            check=False,
        )

    def json(self, *args: str, path: str | None = None) -> tuple[int, dict[str, Any]]:
        done = self(*args, "--json", path=path)
        assert "Traceback" not in done.stderr, done.stderr
        try:
            document = json.loads(done.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"not JSON ({exc}): {done.stdout!r} {done.stderr!r}") from exc
        return done.returncode, document

    def verify(self, repo: Path, *args: str, path: str | None = None) -> dict[str, Any]:
        code, report = self.json("verify", str(repo), *args, path=path)
        assert code == report["exit_code"], (code, report["status"], report["note"])
        return report

    def plan(self, repo: Path) -> dict[str, Any]:
        code, document = self.json("plan", str(repo))
        assert code == 0, document
        return document


@pytest.fixture
def assay(tmp_path: Path) -> Assay:
    return Assay(tmp_path / "cache")


def planned(plan: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """name -> (kind, tool) of every planned check."""
    return {c["name"]: (c["kind"], c["tool"]) for c in plan["checks"]}


def verdicts(report: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["name"]: (c["verdict"], c["cause"]) for c in report["checks"]}


def explain(report: dict[str, Any]) -> str:
    return f"{report['status']}: {report['note']}\n{report['output']}"


# --------------------------------------------------------------------------- fixture repositories

PY_CODE = "def add(a, b):\n    return a + b\n"
PY_TEST = "from fx import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
PY_FAILING_TEST = "from fx import add\n\n\ndef test_add():\n    assert add(1, 2) == 4\n"
PY_HANGING_TEST = "import time\n\n\ndef test_hangs():\n    time.sleep(120)\n"
PY_SYNTAX_ERROR = "def add(a, b)\n    return a + b\n"
SIMPLE_TEST = "def test_one():\n    assert 1 + 1 == 2\n"

PYPROJECT = """\
[project]
name = "fx"
version = "0.1.0"

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.ruff]
line-length = 100
"""


def python_repo(root: Path) -> Path:
    return write(root, {"pyproject.toml": PYPROJECT, "fx.py": PY_CODE, "tests/test_fx.py": PY_TEST})


NODE_TEST = (
    "const test = require('node:test');\n"
    "const assert = require('node:assert');\n"
    "test('adds', () => { assert.strictEqual(1 + 1, 2); });\n"
)
NODE_FAILING_TEST = NODE_TEST.replace("1 + 1, 2", "1 + 1, 3")


def js_repo(root: Path) -> Path:
    package = {
        "name": "fx",
        "version": "1.0.0",
        "private": True,
        "scripts": {"test": "node --test"},
    }
    return write(root, {"package.json": json.dumps(package), "test/add.test.js": NODE_TEST})


def make_repo(root: Path) -> Path:
    return write(root, {"Makefile": "test:\n\tpython3 -m pytest -q\n", "test_one.py": SIMPLE_TEST})


WORKFLOW = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m pytest
"""


def workflow_repo(root: Path) -> Path:
    return write(root, {".github/workflows/ci.yml": WORKFLOW, "test_one.py": SIMPLE_TEST})


def readme_repo(root: Path) -> Path:
    readme = "# fx\n\n## Testing\n\nRun the tests with:\n\n```\npython -m pytest\n```\n"
    return write(root, {"README.md": readme, "test_one.py": SIMPLE_TEST})


GO_TEST = (
    'package fx\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n'
    '\tif Add(1, 2) != 3 {\n\t\tt.Fatal("bad sum")\n\t}\n}\n'
)


def go_repo(root: Path) -> Path:
    return write(
        root,
        {
            "go.mod": "module example.com/fx\n\ngo 1.18\n",
            "fx.go": "package fx\n\nfunc Add(a, b int) int { return a + b }\n",
            "fx_test.go": GO_TEST,
        },
    )


RUST_LIB = (
    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n"
    "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 2), 3);\n    }\n}\n"
)


def rust_repo(root: Path) -> Path:
    cargo = '[package]\nname = "fx"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    return write(root, {"Cargo.toml": cargo, "src/lib.rs": RUST_LIB})


def polyglot_repo(root: Path) -> Path:
    python_repo(root)
    tsconfig = {
        "compilerOptions": {"strict": True, "noEmit": True, "target": "es2020"},
        "include": ["web"],
    }
    return write(
        root,
        {
            "tsconfig.json": json.dumps(tsconfig),
            "web/add.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
        },
    )


# name -> (builder, expected planned checks {name: (kind, tool)})
ECOSYSTEMS: dict[str, tuple[Any, dict[str, tuple[str, str]]]] = {
    "pyproject": (
        python_repo,
        {
            "compileall": ("build", "compileall"),
            "ruff": ("lint", "ruff"),
            "pytest": ("test", "pytest"),
        },
    ),
    "package-json": (js_repo, {"npm-test": ("test", "npm-test")}),
    "makefile": (make_repo, {"compileall": ("build", "compileall"), "make-test": ("test", "make")}),
    "workflow": (
        workflow_repo,
        {"compileall": ("build", "compileall"), "pytest": ("test", "pytest")},
    ),
    "readme": (readme_repo, {"compileall": ("build", "compileall"), "pytest": ("test", "pytest")}),
    "go": (go_repo, {"go-test": ("test", "go")}),
    "rust": (rust_repo, {"cargo-check": ("build", "cargo"), "cargo-test": ("test", "cargo")}),
    "polyglot": (
        polyglot_repo,
        {
            "compileall": ("build", "compileall"),
            "tsc": ("typecheck", "tsc"),
            "ruff": ("lint", "ruff"),
            "pytest": ("test", "pytest"),
        },
    ),
}

EXPECTED_SOURCES = {
    "package-json": ("npm-test", "package.json"),
    "makefile": ("make-test", "Makefile"),
    "workflow": ("pytest", ".github/workflows/ci.yml"),
    "readme": ("pytest", "README.md"),
    "go": ("go-test", "go.mod"),
    "rust": ("cargo-test", "Cargo.toml"),
    "pyproject": ("pytest", "pyproject.toml"),
    "polyglot": ("tsc", "tsconfig.json"),
}


# --------------------------------------------------------------------------- each ecosystem: plan and VERIFIED


@pytest.mark.slow
@pytest.mark.parametrize("ecosystem", list(ECOSYSTEMS))
def test_each_ecosystem_plans_and_verifies(ecosystem: str, tmp_path: Path, assay: Assay) -> None:
    build, expected = ECOSYSTEMS[ecosystem]
    repo = build(tmp_path / "repo")

    plan = assay.plan(repo)
    assert planned(plan) == expected
    assert plan["runnable"] is True and plan["errors"] == []
    name, source = EXPECTED_SOURCES[ecosystem]
    by_name = {c["name"]: c for c in plan["checks"]}
    assert by_name[name]["source"].split(":")[0] == source
    assert by_name[name]["reason"]

    report = assay.verify(repo)
    assert (report["status"], report["exit_code"], report["verified"]) == ("VERIFIED", 0, True), (
        explain(report)
    )
    assert set(verdicts(report)) == set(expected)
    assert all(v == ("pass", "exit_zero") for v in verdicts(report).values()), verdicts(report)
    tests = [c for c in report["checks"] if c["kind"] == "test"]
    assert tests and all(c["tests"] is None or c["tests"]["executed"] >= 1 for c in tests)
    for check in report["checks"]:
        assert check["checker"]["tool"] == expected[check["name"]][1]
        assert check["checker"]["version"]
        assert check["sandbox"].startswith("bwrap")


# --------------------------------------------------------------------------- broken variants


def _python_broken(root: Path, how: str) -> Path:
    python_repo(root)
    if how == "syntax":
        write(root, {"fx.py": PY_SYNTAX_ERROR})
    elif how == "failing":
        write(root, {"tests/test_fx.py": PY_FAILING_TEST})
    elif how == "hanging":
        write(root, {"tests/test_fx.py": PY_HANGING_TEST})
    return root


def test_a_hang_beside_a_failure_is_named_in_the_text_and_the_note(
    tmp_path: Path, assay: Assay
) -> None:
    """A lint failure decides the run, and the hung test is said beside it: in the text
    under its check, and in the note (wcwidth's hang was said only in the JSON's check)."""
    repo = _python_broken(tmp_path / "repo", "hanging")
    write(repo, {"fx.py": PY_CODE + "import os\n"})  # ruff: an unused import
    done = assay("verify", str(repo), "--timeout", "3")
    hung = "while running tests/test_fx.py::test_hangs"
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"  pytest: pytest was killed at its deadline, {hung}" in done.stdout, done.stdout
    note = done.stdout.rsplit("note: ", 1)[-1]
    assert note.startswith("ruff failed") and "Also inconclusive: pytest was killed" in note, note


@pytest.mark.slow
@pytest.mark.parametrize(
    ("how", "status", "culprit", "cause"),
    [
        ("syntax", "FAILED", "compileall", "exit_nonzero"),
        ("failing", "FAILED", "pytest", "exit_nonzero"),
        ("hanging", "INDETERMINATE", "pytest", "timeout"),
    ],
)
def test_broken_python(
    how: str, status: str, culprit: str, cause: str, tmp_path: Path, assay: Assay
) -> None:
    repo = _python_broken(tmp_path / "repo", how)
    started = time.monotonic()
    # Short enough to cut the hang, long enough for a loaded 2-core machine's pytest.
    report = assay.verify(repo, "--timeout", "2" if how == "hanging" else "15")
    assert report["status"] == status, explain(report)
    assert report["exit_code"] == {"FAILED": 1, "INDETERMINATE": 3}[status]
    assert verdicts(report)[culprit][1] == cause
    assert report["verified"] is False and report["note"]
    assert time.monotonic() - started < 30
    if how == "hanging":  # a timeout is not a trustworthy verdict: never served from the cache
        again = assay.verify(repo, "--timeout", "1")
        assert again["status"] == "INDETERMINATE" and "cached" not in again.get("extra", {})


@pytest.mark.slow
def test_syntax_error_is_located(tmp_path: Path, assay: Assay) -> None:
    report = assay.verify(_python_broken(tmp_path / "repo", "syntax"))
    compileall = next(c for c in report["checks"] if c["name"] == "compileall")
    assert any(d["file"] == "fx.py" and d["line"] == 1 for d in compileall["diagnostics"]), (
        compileall["diagnostics"]
    )
    # compileall runs beside the tests (it produces nothing they need); its diagnostic
    # is the one the note gives, because the first failing check in plan order explains.
    assert "fx.py:1" in report["note"], report["note"]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["failing", "syntax"])
def test_broken_js(how: str, tmp_path: Path, assay: Assay) -> None:
    repo = js_repo(tmp_path / "repo")
    write(
        repo, {"test/add.test.js": NODE_FAILING_TEST if how == "failing" else "test('x', () => {\n"}
    )
    report = assay.verify(repo)
    assert report["status"] == "FAILED", explain(report)
    assert report["exit_code"] == 1


@pytest.mark.slow
def test_broken_go(tmp_path: Path, assay: Assay) -> None:
    repo = go_repo(tmp_path / "repo")
    write(repo, {"fx_test.go": GO_TEST.replace("!= 3", "!= 4")})
    report = assay.verify(repo)
    assert report["status"] == "FAILED", explain(report)
    test = next(c for c in report["checks"] if c["name"] == "go-test")
    assert test["tests"]["failed"] == 1


@pytest.mark.slow
def test_broken_rust(tmp_path: Path, assay: Assay) -> None:
    repo = rust_repo(tmp_path / "repo")
    write(repo, {"src/lib.rs": RUST_LIB.replace("a + b", 'a + "b"')})
    report = assay.verify(repo)
    assert report["status"] == "FAILED", explain(report)
    assert verdicts(report)["cargo-check"] == ("fail", "exit_nonzero")


def path_without(tool: str) -> str:
    """PATH with every directory that holds `tool` left out."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if d and not (Path(d) / tool).exists())


# The bubblewrap backend needs util-linux helpers from PATH, which may share a directory
# with the toolchain taken away here; the local backend needs nothing from PATH.
def test_missing_go_is_unverified_with_install_hint(tmp_path: Path, assay: Assay) -> None:
    repo = go_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "local", path=path_without("go"))
    assert (report["status"], report["exit_code"]) == ("UNVERIFIED", 4), explain(report)
    assert set(verdicts(report).values()) == {("unverified", "toolchain_missing")}
    assert "install Go" in report["note"], report["note"]
    assert all(c["checker"] is None for c in report["checks"])


def test_missing_python_tool_is_unverified(tmp_path: Path, assay: Assay) -> None:
    # ruff is configured, but neither the project nor PATH has it.
    repo = python_repo(tmp_path / "repo")
    path = os.pathsep.join(p for p in path_without("ruff").split(os.pathsep) if p != str(VENV_BIN))
    report = assay.verify(repo, "--sandbox", "local", "--kind", "lint", path=path)
    assert (report["status"], report["exit_code"]) == ("UNVERIFIED", 4), explain(report)
    assert verdicts(report) == {"ruff": ("unverified", "toolchain_missing")}
    assert "pip install ruff" in report["note"], report["note"]


def test_empty_directory_is_unverified(tmp_path: Path, assay: Assay) -> None:
    (tmp_path / "empty").mkdir()
    report = assay.verify(tmp_path / "empty")
    assert (report["status"], report["exit_code"], report["checks"]) == ("UNVERIFIED", 4, [])
    assert "nothing" in report["note"] or "no build" in report["note"]


def test_nonexistent_path_is_a_usage_error(tmp_path: Path, assay: Assay) -> None:
    missing = tmp_path / "does-not-exist"
    for command in ("verify", "plan"):
        done = assay(command, str(missing), "--json")
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr + done.stdout
        assert str(missing) in done.stderr and "no such" in done.stderr.lower()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"package.json": "{not json"}, "package.json: not valid JSON"),
        (
            {"pyproject.toml": "[tool.pytest\n", "tests/test_a.py": SIMPLE_TEST},
            "pyproject.toml: not valid TOML",
        ),
        ({"package.json": "\x00\xff binary garbage"}, "package.json"),
    ],
)
def test_malformed_config_gives_a_clear_note(
    files: dict[str, str], message: str, tmp_path: Path, assay: Assay
) -> None:
    repo = write(tmp_path / "repo", files)
    plan = assay.plan(repo)
    assert any(message in e for e in plan["errors"]), plan["errors"]
    human = assay("plan", str(repo))
    assert human.returncode == 0 and message in human.stdout
    report = assay.verify(repo)
    assert "Traceback" not in report["output"]
    # pytest refuses to start on an unreadable pyproject.toml; either way the note names the file.
    assert report["status"] in ("UNVERIFIED", "INDETERMINATE"), explain(report)
    assert message in report["note"], report["note"]


# --------------------------------------------------------------------------- the JSON document


@pytest.mark.slow
def test_json_gate_keys_and_evidence(tmp_path: Path, assay: Assay) -> None:
    report = assay.verify(python_repo(tmp_path / "repo"))
    keys = list(report)
    assert keys[:5] == ["status", "exit_code", "output", "verified", "note"]
    types = [type(report[k]) for k in keys[:5]]
    assert types == [str, int, str, bool, str]
    assert report["schema"].startswith("assay.report/")
    assert report["assay_version"]
    assert report["plan"]["checks"] and report["tool_versions"]
    for check in report["checks"]:
        assert check["schema"].startswith("assay.evidence/")
        assert isinstance(check["checker"]["tool"], str) and check["checker"]["tool"]
        assert (
            isinstance(check["checker"]["version"], str)
            and check["checker"]["version"][0].isdigit()
        )
        assert isinstance(check["argv"], list) and check["argv"]
        for stream in ("stdout", "stderr"):
            assert set(check[stream]) >= {"text", "truncated", "bytes"}
    version = assay("--version").stdout.split()[-1]
    assert report["assay_version"] == version


@pytest.mark.slow
@pytest.mark.parametrize("status", ["FAILED", "UNVERIFIED"])
def test_human_output_exit_codes(status: str, tmp_path: Path, assay: Assay) -> None:
    repo = tmp_path / "repo"
    if status == "VERIFIED":
        python_repo(repo)
    elif status == "FAILED":
        _python_broken(repo, "failing")
    elif status == "INDETERMINATE":
        _python_broken(repo, "hanging")
    else:
        repo.mkdir()
    done = assay("verify", str(repo), "--timeout", "2" if status == "INDETERMINATE" else "15")
    assert (
        done.returncode == {"VERIFIED": 0, "FAILED": 1, "INDETERMINATE": 3, "UNVERIFIED": 4}[status]
    )
    assert status in done.stdout.splitlines()[-1] or status in done.stdout
    assert "Traceback" not in done.stderr


# --------------------------------------------------------------------------- sandbox backends


@pytest.mark.slow
def test_bwrap_is_the_default_and_recorded(tmp_path: Path, assay: Assay) -> None:
    repo = python_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", "bwrap")
    assert report["status"] == "VERIFIED", explain(report)
    assert report["extra"]["sandbox"].startswith("bwrap")
    assert all(c["sandbox"].startswith("bwrap") for c in report["checks"])


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", "none"])
def test_local_and_none_backends_work_and_are_recorded(
    backend: str, tmp_path: Path, assay: Assay
) -> None:
    repo = python_repo(tmp_path / "repo")
    report = assay.verify(repo, "--sandbox", backend)
    assert report["status"] == "VERIFIED", explain(report)
    assert report["extra"]["sandbox"] == backend
    assert {c["sandbox"] for c in report["checks"]} == {backend}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["auto", "bwrap"])
def test_broken_bwrap_is_indeterminate_with_the_fix(
    backend: str, tmp_path: Path, assay: Assay
) -> None:
    fake_bin = tmp_path / "fakebin"
    fake_bin.mkdir()
    (fake_bin / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    (fake_bin / "bwrap").chmod(0o755)
    repo = python_repo(tmp_path / "repo")
    path = f"{fake_bin}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ['PATH']}"
    report = assay.verify(repo, "--sandbox", backend, path=path)
    assert (report["status"], report["exit_code"]) == ("INDETERMINATE", 3), explain(report)
    assert report["checks"]
    assert {v for v in verdicts(report).values()} == {("inconclusive", "sandbox_unavailable")}
    assert "--sandbox local" in report["note"] and "bubblewrap" in report["note"]
    # never a silent downgrade: nothing ran, and the refusal is not cached as a verdict
    again = assay.verify(repo, "--sandbox", backend)
    assert again["status"] == "VERIFIED" and "cached" not in again.get("extra", {}), explain(again)


# --------------------------------------------------------------------------- tampering


TAMPER_PYPROJECT = '[project]\nname = "fx"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
FORCE_PASS_CONFTEST = """\
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""


def tampered_repo(root: Path, how: str) -> Path:
    """A git repository whose base commit has a truly failing test, and a change that hides it."""
    write(
        root,
        {"pyproject.toml": TAMPER_PYPROJECT, "fx.py": PY_CODE, "tests/test_fx.py": PY_FAILING_TEST},
    )
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    if how == "assert-true":
        write(root, {"tests/test_fx.py": "def test_add():\n    assert True\n"})
    elif how == "delete":
        (root / "tests/test_fx.py").unlink()
        write(root, {"tests/test_other.py": SIMPLE_TEST})
    elif how == "conftest":
        write(root, {"conftest.py": FORCE_PASS_CONFTEST})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "change")
    return root


TAMPER_SIGNAL = {
    "assert-true": "assertion_weakened",
    "delete": "protected_deleted",
    "conftest": "conftest",
}


@pytest.mark.slow
@pytest.mark.parametrize("how", ["assert-true", "delete", "conftest"])
def test_tampering_is_judged_by_the_base_tests_with_protect(
    how: str, tmp_path: Path, assay: Assay
) -> None:
    repo = tampered_repo(tmp_path / "repo", how)
    if how == "assert-true":
        # Without a base the change looks fine: the tampering works on a naive verifier.
        naive = assay.verify(repo, "--sandbox", "none")
        assert naive["status"] == "VERIFIED", explain(naive)

    protected = assay.verify(repo, "--base", "HEAD~1", "--protect")
    assert (protected["status"], protected["exit_code"]) == ("FAILED", 1), explain(protected)
    assert verdicts(protected)["pytest"] == ("fail", "exit_nonzero")
    restored = protected["extra"]["protected"]
    assert restored["restored"] or restored["removed"]

    reported = assay.verify(repo, "--base", "HEAD~1")
    tampering = reported["extra"]["tampering"]
    assert tampering["tampered"] is True, tampering
    kinds = " ".join(s["kind"] for s in tampering["signals"])
    assert TAMPER_SIGNAL[how] in kinds, tampering
    # Verification ran in copies: the change itself is untouched.
    untouched = subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=repo, check=False)
    assert untouched.returncode == 0


@pytest.mark.slow
def test_bad_base_ref_is_a_usage_error(tmp_path: Path, assay: Assay) -> None:
    repo = tampered_repo(tmp_path / "repo", "assert-true")
    done = assay("verify", str(repo), "--base", "no-such-ref", "--json")
    assert done.returncode == 2 and "no-such-ref" in done.stderr and "Traceback" not in done.stderr
    done = assay("verify", str(repo), "--protect", "--json")
    assert done.returncode == 2 and "--base" in done.stderr


# --------------------------------------------------------------------------- the verdict cache


@pytest.mark.slow
def test_cache_hit_miss_and_bypass(tmp_path: Path, assay: Assay) -> None:
    repo = python_repo(tmp_path / "repo")
    first_mtime = (repo / "fx.py").stat().st_mtime_ns
    first = assay.verify(repo)
    assert first["status"] == "VERIFIED" and "cached" not in first["extra"]
    uncached_s = sum(c["duration_s"] for c in first["checks"])

    started = time.monotonic()
    second = assay.verify(repo)
    hit_s = time.monotonic() - started
    assert second["status"] == "VERIFIED"
    assert "cached" in second["extra"], second["extra"]
    assert second["checks"] == first["checks"]  # the original evidence
    assert hit_s < 5 and second["extra"]["cached"]["stored_at"] <= time.time()
    assert uncached_s > 0

    bypass = assay.verify(repo, "--no-cache")
    assert bypass["status"] == "VERIFIED" and "cached" not in bypass["extra"]

    (repo / "fx.py").write_text(PY_CODE + " ")  # one byte more
    changed = assay.verify(repo)
    assert "cached" not in changed["extra"], changed["extra"]

    # Back to the first tree, its times in the order they were (make would go by them):
    # its verdict is still there.
    (repo / "fx.py").write_text(PY_CODE)
    os.utime(repo / "fx.py", ns=(first_mtime, first_mtime))
    restored = assay.verify(repo)
    assert "cached" in restored["extra"] and restored["checks"] == first["checks"]


# --------------------------------------------------------------------------- JUnit and SARIF


@pytest.mark.slow
def test_junit_and_sarif_are_written_and_parse(tmp_path: Path, assay: Assay) -> None:
    repo = write(
        python_repo(tmp_path / "repo"),
        {
            "tests/test_fx.py": PY_TEST + "\n\ndef test_bad():\n    assert add(2, 2) == 5\n",
            "lint.py": "import os\n",
        },
    )
    junit, sarif = tmp_path / "out" / "report.xml", tmp_path / "out" / "report.sarif"
    junit.parent.mkdir()
    report = assay.verify(repo, "--junit", str(junit), "--sarif", str(sarif))
    assert report["status"] == "FAILED", explain(report)

    root = ET.fromstring(junit.read_text())
    suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
    assert root.tag in ("testsuites", "testsuite") and suites
    cases = list(root.iter("testcase"))
    assert cases
    assert any(c.find("failure") is not None or c.find("error") is not None for c in cases)

    document = json.loads(sarif.read_text())
    assert document["version"] == "2.1.0"
    results = [r for run in document["runs"] for r in run.get("results", [])]
    assert any(r.get("ruleId") == "F401" for r in results), results
    located = next(r for r in results if r.get("ruleId") == "F401")
    where = located["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("lint.py")
    assert where["region"]["startLine"] == 1


@pytest.mark.slow
def test_junit_for_a_verified_run(tmp_path: Path, assay: Assay) -> None:
    junit = tmp_path / "ok.xml"
    report = assay.verify(python_repo(tmp_path / "repo"), "--junit", str(junit))
    assert report["status"] == "VERIFIED"
    root = ET.fromstring(junit.read_text())
    cases = list(root.iter("testcase"))
    assert cases and all(c.find("failure") is None for c in cases)
