"""The checks `verify` plans, run against real toolchains, on tiny projects written into tmp_path.

Each check is the one discovery and the plan choose for the project (what `assay verify`
runs), run by `run_check`. Nothing here is skipped when a toolchain is absent: a missing
compiler is a broken test machine, and the test says so by failing.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from assay.check_execution import run_check
from assay.evidence import Check, Evidence
from assay.plan import plan_repository
from assay.probe import ProbeCache
from assay.verdict import Cause, Kind, Verdict
from tests.repos import write_dedented

pytestmark = pytest.mark.slow

#: Deadline for the hanging-test cases: long enough to start the runner, short for the suite.
HANG_TIMEOUT_S = 4.0

_PROBES = ProbeCache()  # one run's worth of probing, shared by every test in this module


def check_named(root: Path, name: str, **env: str) -> Check:
    """The planned check called `name` (what verify runs), with tool directories on PATH."""
    by_name = {c.name: c for c in plan_repository(root).checks}
    assert name in by_name, f"no planned check {name!r} for {root}: {sorted(by_name)}"
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    return dataclasses.replace(by_name[name], env={"PATH": path, **env})


def run(
    check: Check,
    root: Path,
    tmp_path_factory: pytest.TempPathFactory,
    *,
    timeout_s: float | None = None,
) -> Evidence:
    if timeout_s is not None:
        check = dataclasses.replace(check, timeout_s=timeout_s)
    reports = tmp_path_factory.mktemp("reports")
    return run_check(check, root=root, probes=_PROBES, report_dir=reports)


def assert_verdict(evidence: Evidence, verdict: Verdict, cause: Cause) -> None:
    detail = f"{evidence.verdict}/{evidence.cause}: {evidence.reason[-2000:]} {evidence.note}"
    assert (evidence.verdict, evidence.cause) == (verdict, cause), detail


def assert_diagnostic(evidence: Evidence, file: str, line: int) -> None:
    where = [(d.file, d.line) for d in evidence.diagnostics]
    assert (file, line) in where, f"no diagnostic at {file}:{line}; got {evidence.diagnostics}"


# --------------------------------------------------------------------------- Python

PY_CLEAN = {
    # mypy and ruff configured, so that verify plans them; compileall and pytest are defaults.
    "pyproject.toml": "[project]\nname = 'tiny'\nversion = '0'\n\n[tool.mypy]\n\n[tool.ruff]\n",
    "tiny.py": """
        def add(a: int, b: int) -> int:
            return a + b
    """,
    "test_tiny.py": """
        from tiny import add


        def test_add() -> None:
            assert add(1, 2) == 3
    """,
}


@pytest.fixture
def py_project(tmp_path: Path) -> Path:
    return write_dedented(tmp_path / "proj", PY_CLEAN)


@pytest.mark.parametrize("name", ["compileall", "mypy", "ruff", "pytest"])
def test_python_clean_project_passes(
    py_project: Path, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    evidence = run(check_named(py_project, name), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert evidence.checker is not None and evidence.checker.version


def test_python_clean_compile_writes_no_bytecode_into_the_workspace(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    run(check_named(py_project, "compileall"), py_project, tmp_path_factory)
    assert not list(py_project.rglob("*.pyc"))


def test_python_syntax_error_fails_compile_with_location(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(py_project, {"broken.py": "x = 1\ndef f(:\n    pass\n"})
    evidence = run(check_named(py_project, "compileall"), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "broken.py", 2)


@pytest.mark.parametrize(
    "options",
    # With `--install-types`, mypy writes its findings to stderr (freezegun's tox runs it so).
    [(), ("--install-types", "--non-interactive")],
)
def test_python_type_error_fails_mypy_with_location(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory, options: tuple[str, ...]
) -> None:
    write_dedented(py_project, {"typed.py": "from tiny import add\n\nresult: str = add(1, 2)\n"})
    check = check_named(py_project, "mypy")
    check = dataclasses.replace(check, argv=(*check.argv, *options))
    evidence = run(check, py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "typed.py", 3)
    assert any(d.code == "assignment" for d in evidence.diagnostics)


@pytest.mark.parametrize("form", ["full", "concise"])
def test_ty_run_as_ci_runs_it_passes_clean_code_and_fails_a_type_error_with_location(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory, form: str
) -> None:
    """`uvx ty check` in CI: the launcher is peeled, and ty runs from the environment."""
    concise = " --output-format concise" if form == "concise" else ""
    workflow = f"jobs:\n  t:\n    steps:\n      - run: uvx ty check{concise} tiny.py typed.py\n"
    # The only type checker the project names (a configured mypy would outrank CI's ty).
    pyproject = "[project]\nname = 'tiny'\nversion = '0'\n"
    files = {
        ".github/workflows/ci.yml": workflow,
        "typed.py": "X = 1\n",
        "pyproject.toml": pyproject,
    }
    write_dedented(py_project, files)
    check = check_named(py_project, "ty")
    assert check.kind is Kind.TYPECHECK and check.argv[:2] == ("ty", "check"), check.argv
    assert_verdict(run(check, py_project, tmp_path_factory), Verdict.PASS, Cause.EXIT_ZERO)
    write_dedented(py_project, {"typed.py": "from tiny import add\n\nresult: str = add(1, 2)\n"})
    evidence = run(check, py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "typed.py", 3)
    assert evidence.checker is not None and evidence.checker.version
    assert any(d.code == "invalid-assignment" for d in evidence.diagnostics), evidence.diagnostics


@pytest.mark.parametrize(("typed", "verdict"), [("-> int", Verdict.PASS), ("-> str", Verdict.FAIL)])
def test_mypy_files_missing_from_the_tree_are_not_a_failure_of_the_code(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, typed: str, verdict: Verdict
) -> None:
    """As packaging 26.4's sdist: mypy's `files` names a noxfile.py the release leaves out.
    mypy run on its `files` stops at the missing file; the code named beside it is checked."""
    root = write_dedented(
        tmp_path / "proj",
        {
            "pyproject.toml": "[tool.mypy]\nstrict = true\nfiles = ['tiny.py', 'noxfile.py']\n",
            "tiny.py": f"def add(a: int, b: int) {typed}:\n    return a + b\n",
        },
    )
    evidence = run(check_named(root, "mypy"), root, tmp_path_factory)
    assert_verdict(
        evidence, verdict, Cause.EXIT_ZERO if verdict is Verdict.PASS else Cause.EXIT_NONZERO
    )
    if verdict is Verdict.FAIL:
        assert_diagnostic(evidence, "tiny.py", 2)


@pytest.mark.parametrize(("typed", "verdict"), [("-> int", Verdict.PASS), ("-> str", Verdict.FAIL)])
def test_a_configured_mypy_checks_what_the_projects_own_mypy_command_names(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, typed: str, verdict: Verdict
) -> None:
    """exceptiongroup 1.3.2: `[tool.mypy]`, the package untyped on purpose, and mypy run only
    on the type tests, by a tox env `env_list` leaves out. The package's type errors are
    not the project's; the type tests' are."""
    root = write_dedented(
        tmp_path / "proj",
        {
            "pyproject.toml": (
                "[tool.mypy]\nwarn_unused_ignores = true\n\n"
                '[tool.tox]\nenv_list = ["3.11"]\n\n'
                '[tool.tox.env.typing]\ncommands = [["mypy", "tests/check_types.py"]]\n'
            ),
            "src/eg/__init__.py": "def name() -> int:\n    return 'not typed on purpose'\n",
            "tests/check_types.py": f"def add(a: int, b: int) {typed}:\n    return a + b\n",
        },
    )
    evidence = run(check_named(root, "mypy"), root, tmp_path_factory)
    assert_verdict(
        evidence, verdict, Cause.EXIT_ZERO if verdict is Verdict.PASS else Cause.EXIT_NONZERO
    )
    if verdict is Verdict.FAIL:
        assert_diagnostic(evidence, "tests/check_types.py", 2)


@pytest.mark.parametrize(("hooked", "verdict"), [(True, Verdict.PASS), (False, Verdict.UNVERIFIED)])
def test_a_configured_mypy_runs_with_its_pre_commit_hooks_options(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, hooked: bool, verdict: Verdict
) -> None:
    """marko: mypy through pre-commit's mirror, whose `--ignore-missing-imports` lets an
    optional extra's module (objprint) go unfollowed; run without it, mypy reported the
    module missing on a pristine tree."""
    hook = (
        "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v2.3.0\n"
        "    hooks:\n      - id: mypy\n"
    )
    root = write_dedented(
        tmp_path / "proj",
        {
            "pyproject.toml": "[tool.mypy]\n[project.optional-dependencies]\nrepr = ['objprint']\n",
            "tiny.py": "import objprint\n\n\ndef show(x: int) -> str:\n    return str(x)\n",
            **({".pre-commit-config.yaml": hook} if hooked else {}),
        },
    )
    evidence = run(check_named(root, "mypy"), root, tmp_path_factory)
    assert evidence.verdict is verdict, evidence.reason


def test_mypy_printing_only_notes_passes(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """marshmallow 4.4.0: an annotation inside an untyped function makes mypy note that it
    is not checked. mypy exits 0; asked for JSON, it would exit 1 on that note alone."""
    write_dedented(py_project, {"untyped.py": "def f():\n    x: int = 1\n    return x\n"})
    evidence = run(check_named(py_project, "mypy"), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert [d.code for d in evidence.diagnostics] == ["annotation-unchecked"]


def test_python_lint_error_fails_ruff_with_location(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(py_project, {"unused.py": "import os\n"})
    evidence = run(check_named(py_project, "ruff"), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "unused.py", 1)
    assert any(d.code == "F401" for d in evidence.diagnostics)


@pytest.mark.parametrize("stated", [(), ("--fix",)])
def test_ruff_never_fixes_what_it_finds(
    py_project: Path, stated: tuple[str, ...], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """itsdangerous sets `fix = true` for ruff: ruff fixed the copy it checked and exited
    0, and an unused import CI fails on was VERIFIED."""
    (py_project / "pyproject.toml").write_text(PY_CLEAN["pyproject.toml"] + "fix = true\n")
    write_dedented(py_project, {"unused.py": "import os\n"})
    check = check_named(py_project, "ruff")
    check = dataclasses.replace(check, argv=(*check.argv, *stated))
    evidence = run(check, py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "unused.py", 1)
    assert (py_project / "unused.py").read_text() == "import os\n"


def test_python_failing_test_fails_with_junit_counts(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # Named to run after test_tiny.py: the planned `pytest -x` stops at the first failure.
    write_dedented(py_project, {"test_wrong.py": "def test_bad() -> None:\n    assert 1 == 2\n"})
    evidence = run(check_named(py_project, "pytest"), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.tests is not None
    assert (evidence.tests.passed, evidence.tests.failed, evidence.tests.source) == (1, 1, "junit")
    assert [c.outcome for c in evidence.test_cases if "test_bad" in c.name] == ["failed"]


def test_python_hanging_test_is_a_timeout(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        py_project,
        {"test_hang.py": "import time\n\ndef test_hang() -> None:\n    time.sleep(120)\n"},
    )
    check = check_named(py_project, "pytest")
    evidence = run(check, py_project, tmp_path_factory, timeout_s=HANG_TIMEOUT_S)
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_python_no_tests_is_inconclusive(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # pytest is configured, so verify plans it, but there is no test to run.
    project = write_dedented(
        tmp_path / "empty", {"pyproject.toml": "[tool.pytest.ini_options]\n", "tiny.py": "X = 1\n"}
    )
    evidence = run(check_named(project, "pytest"), project, tmp_path_factory)
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.NO_TESTS_OBSERVED)


@pytest.mark.parametrize(
    "conftest",
    [
        # Prints pytest's summary and leaves before any test runs or any report is written.
        'import os, sys\nprint("==== 5 passed in 0.01s ====")\nsys.stdout.flush()\nos._exit(0)\n',
        # Deselects every test, so the real report lists none, and prints a pass anyway.
        (
            "def pytest_collection_modifyitems(config, items):\n"
            "    items.clear()\n"
            "def pytest_sessionfinish(session, exitstatus):\n"
            '    print("5 passed in 0.01s")\n'
            "    session.exitstatus = 0\n"
        ),
    ],
    ids=["exit-before-tests", "deselect-all"],
)
def test_python_forged_pass_is_not_a_pass(
    py_project: Path, conftest: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    (py_project / "conftest.py").write_text(conftest)
    evidence = run(check_named(py_project, "pytest"), py_project, tmp_path_factory)
    assert evidence.verdict is not Verdict.PASS, evidence.reason
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.NO_TESTS_OBSERVED)


@pytest.mark.parametrize("name", ["compileall", "mypy", "ruff", "pytest"])
def test_python_missing_toolchain_is_unverified(
    py_project: Path, name: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    check = dataclasses.replace(check_named(py_project, name), env={"PATH": str(empty)})
    evidence = run_check(check, root=py_project, probes=ProbeCache())
    assert_verdict(evidence, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert evidence.result is None, "nothing may run without an identified tool"
    assert "install" in evidence.note


def test_ruff_findings_past_the_capture_bound_are_still_read(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """ruff's JSON is one array: cut at the capture's bound, it did not parse, and the note
    said `ruff failed (exited 1): [`. The findings before the cut are read."""
    (py_project / "many.py").write_text("".join(f"import m{i}\n" for i in range(5000)))
    evidence = run(check_named(py_project, "ruff"), py_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.result is not None and evidence.result.stdout.truncated
    assert len(evidence.diagnostics) > 100
    assert_diagnostic(evidence, "many.py", 1)


@pytest.mark.parametrize(
    ("declared", "installed", "verdict", "cause"),
    [
        # is-number's fresh clone: `mocha`, a devDependency, with no node_modules.
        (True, False, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING),
        # A package the project does not declare: no install would mend it.
        (False, False, Verdict.INCONCLUSIVE, Cause.UNRECOGNIZED_FAILURE),
        (True, True, Verdict.PASS, Cause.EXIT_ZERO),
    ],
)
def test_a_node_check_without_its_declared_dependencies_is_unverified(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    declared: bool,
    installed: bool,
    verdict: Verdict,
    cause: Cause,
) -> None:
    dependencies = '"devDependencies": {"left-pad": "^1.3.0"}, ' if declared else ""
    files = {
        "package.json": f'{{"name": "p", {dependencies}"scripts": {{"test": "node test.js"}}}}',
        "test.js": """
            const pad = require('left-pad/index.js');
            if (pad('1', 3, '0') !== '001') process.exit(1);
            console.log('1 passed');
        """,
    }
    if installed:
        files["node_modules/left-pad/index.js"] = (
            "module.exports = (s, n, c) => String(s).padStart(n, c);\n"
        )
    project = write_dedented(tmp_path, files)
    evidence = run(check_named(project, "npm-test"), project, tmp_path_factory)
    assert_verdict(evidence, verdict, cause)
    if verdict is Verdict.UNVERIFIED:
        assert "could not load left-pad" in evidence.note and "npm ci" in evidence.note


@pytest.mark.parametrize(
    ("installed", "verdict", "cause"),
    [
        # mitt's fresh clone: `tsc --noEmit` ran the host's TypeScript, not its own 4.9.
        (False, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING),
        (True, Verdict.FAIL, Cause.EXIT_NONZERO),
    ],
)
def test_a_script_that_ran_the_hosts_release_of_a_declared_tool_is_unverified(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    installed: bool,
    verdict: Verdict,
    cause: Cause,
) -> None:
    """The host's tsc, where package.json declares typescript and node_modules lacks it:
    its failure is that release's word on the project's configuration, not the project's
    (mitt: "Option 'moduleResolution=node10' has been removed", FAILED)."""
    files = {
        "package.json": '{"name": "p", "scripts": {"typecheck": "tsc --noEmit"}, '
        '"devDependencies": {"typescript": "^4.9.5"}}',
        "tsconfig.json": '{"compilerOptions": {"strict": true}, "include": ["src"]}',
        "src/index.ts": "export const n: number = 'not a number';\n",
    }
    if installed:  # declared and installed: whatever runs, it is no stand-in
        files["node_modules/typescript/package.json"] = '{"name": "typescript"}'
    project = write_dedented(tmp_path, files)
    evidence = run(check_named(project, "npm-typecheck"), project, tmp_path_factory)
    assert_verdict(evidence, verdict, cause)
    if verdict is Verdict.UNVERIFIED:
        assert "ran the host's tsc, not the project's" in evidence.note, evidence.note


def test_uvus_loader_missing_a_declared_package_is_unverified(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """clsx's fresh clone: `uvu -r esm` (the global uvu) says `Cannot find module "esm"`,
    in double quotes, where node says it in single ones: INDETERMINATE before."""
    project = write_dedented(
        tmp_path,
        {
            "package.json": '{"name": "p", "scripts": {"test": "uvu -r esm test"}, '
            '"devDependencies": {"esm": "^3.2.25", "uvu": "^0.5.6"}}',
            "test/index.js": """
                import { test } from "uvu";
                test("one", () => {});
                test.run();
            """,
        },
    )
    evidence = run(check_named(project, "npm-test"), project, tmp_path_factory)
    assert_verdict(evidence, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert "could not load esm" in evidence.note


@pytest.mark.parametrize(
    ("answer", "verdict", "cause"),
    [("2", Verdict.PASS, Cause.EXIT_ZERO), ("3", Verdict.FAIL, Cause.EXIT_NONZERO)],
)
def test_a_tox_doctest_file_is_counted(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    answer: str,
    verdict: Verdict,
    cause: Cause,
) -> None:
    """natsort 8.4.0's tox runs `python -m doctest docs/howitworks.rst`, silent when it
    passes: it was `inconclusive` (no test seen). Run with `-v`, it says how many ran."""
    project = write_dedented(
        tmp_path,
        {
            "tox.ini": "[testenv]\ncommands = python -m doctest docs/guide.rst\n",
            "docs/guide.rst": f"Adding\n\n>>> 1 + 1\n{answer}\n>>> 2 * 2\n4\n",
        },
    )
    evidence = run(check_named(project, "python3-test"), project, tmp_path_factory)
    assert_verdict(evidence, verdict, cause)
    assert evidence.tests is not None and evidence.tests.executed == 2, evidence.tests


@pytest.mark.parametrize(
    ("module", "verdict", "cause"),
    [
        # `-S` leaves site-packages out: a real interpreter with no pytest, saying so itself.
        ("pytest", Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING),
        # A module that is not a tool may be the project's own, which the change removed.
        ("shapes", Verdict.INCONCLUSIVE, Cause.UNRECOGNIZED_FAILURE),
    ],
)
def test_a_recipes_python_without_the_tool_module_is_a_missing_tool(
    tmp_path: Path,
    tmp_path_factory: pytest.TempPathFactory,
    module: str,
    verdict: Verdict,
    cause: Cause,
) -> None:
    project = write_dedented(tmp_path, {"Makefile": f"test:\n\tpython3 -S -m {module} -q\n"})
    evidence = run(check_named(project, "make-test"), project, tmp_path_factory)
    assert_verdict(evidence, verdict, cause)
    if verdict is Verdict.UNVERIFIED:
        assert "could not run python -m pytest" in evidence.note, evidence.note


def test_python_project_local_tool_is_probed_at_its_path(
    py_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    venv_bin = py_project / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    tool = venv_bin / "ruff"
    tool.write_text(
        f"#!{sys.executable}\nimport sys\nprint('ruff 0.0.1-local') if '--version' in sys.argv else print('[]')\n"
    )
    tool.chmod(0o755)
    evidence = run(check_named(py_project, "ruff"), py_project, tmp_path_factory)
    assert evidence.checker is not None
    assert (evidence.checker.path, evidence.checker.version) == (str(tool), "0.0.1-local")
    assert evidence.result is not None and evidence.result.argv[0] == ".venv/bin/ruff"


# --------------------------------------------------------------------------- TypeScript / JavaScript

TS_CLEAN = {
    "package.json": '{"name": "tiny", "version": "0.0.0", "type": "module"}',
    "tsconfig.json": '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",'
    ' "module": "nodenext"}, "include": ["src"]}',
    "eslint.config.mjs": 'export default [{ files: ["**/*.js", "**/*.mjs"], rules: { "no-unused-vars": "error" } }];\n',
    "src/add.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    "lib.mjs": "export function add(a, b) {\n  return a + b;\n}\n",
    "add.test.mjs": """
        import { test } from "node:test";
        import assert from "node:assert/strict";
        import { add } from "./lib.mjs";

        test("adds", () => {
          assert.equal(add(1, 2), 3);
        });
    """,
}


@pytest.fixture
def ts_project(tmp_path: Path) -> Path:
    return write_dedented(tmp_path / "proj", TS_CLEAN)


@pytest.mark.parametrize("name", ["tsc", "eslint", "node-test"])
def test_typescript_clean_project_passes(
    ts_project: Path, name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    evidence = run(check_named(ts_project, name), ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert evidence.checker is not None and evidence.checker.version


def test_typescript_syntax_error_fails_tsc_with_location(
    ts_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(ts_project, {"src/broken.ts": "export const x = 1;\nlet y = ;\n"})
    evidence = run(check_named(ts_project, "tsc"), ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "src/broken.ts", 2)


def test_typescript_type_error_fails_tsc_with_code(
    ts_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        ts_project,
        {
            "src/typed.ts": 'import { add } from "./add.js";\n\nexport const s: string = add(1, 2);\n'
        },
    )
    evidence = run(check_named(ts_project, "tsc"), ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "src/typed.ts", 3)
    assert any(d.code == "TS2322" for d in evidence.diagnostics)


def test_javascript_lint_error_fails_eslint_with_rule(
    ts_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(ts_project, {"unused.mjs": "const z = 1;\n"})
    evidence = run(check_named(ts_project, "eslint"), ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "unused.mjs", 1)
    assert any(d.code == "no-unused-vars" for d in evidence.diagnostics)


@pytest.mark.parametrize(
    ("line", "name", "bad", "code"),
    [
        (
            "npx biome check lib.mjs",
            "biome",
            "export const b = (a) => a == 2;\n",
            "lint/suspicious/noDoubleEquals",
        ),
        ("npx biome format lib.mjs", "biome", "export const  b = 1\n", "format"),
        ("npx oxlint --deny-warnings lib.mjs", "oxlint", "debugger;\nexport const b = 1;\n", None),
    ],
)
def test_biome_and_oxlint_as_ci_runs_them(
    ts_project: Path,
    tmp_path_factory: pytest.TempPathFactory,
    line: str,
    name: str,
    bad: str,
    code: str | None,
) -> None:
    workflow = f"jobs:\n  t:\n    steps:\n      - run: {line}\n"
    clean = "export function add(a, b) {\n\treturn a + b;\n}\n"  # biome indents with tabs
    write_dedented(ts_project, {".github/workflows/ci.yml": workflow, "lib.mjs": clean})
    check = check_named(ts_project, name)
    assert check.kind is Kind.LINT, check
    evidence = run(check, ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert evidence.checker is not None and evidence.checker.version
    write_dedented(ts_project, {"lib.mjs": bad})
    evidence = run(check, ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    if code is not None:
        found = [(d.file, d.code, d.severity) for d in evidence.diagnostics]
        assert ("lib.mjs", code, "error") in found, found


def test_javascript_failing_test_fails_with_counts(
    ts_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        ts_project,
        {
            "bad.test.mjs": 'import { test } from "node:test";\nimport assert from "node:assert/strict";\n'
            'test("bad", () => { assert.equal(1, 2); });\n'
        },
    )
    evidence = run(check_named(ts_project, "node-test"), ts_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (1, 1)


def test_javascript_hanging_test_is_a_timeout(
    ts_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        ts_project,
        {
            "hang.test.mjs": 'import { test } from "node:test";\n'
            "test('hang', async () => { await new Promise((r) => setTimeout(r, 120000)); });\n"
        },
    )
    check = check_named(ts_project, "node-test")
    evidence = run(check, ts_project, tmp_path_factory, timeout_s=HANG_TIMEOUT_S)
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.TIMEOUT)


@pytest.mark.parametrize("name", ["tsc", "eslint", "node-test"])
def test_typescript_missing_toolchain_is_unverified(
    ts_project: Path, name: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    check = dataclasses.replace(check_named(ts_project, name), env={"PATH": str(empty)})
    evidence = run_check(check, root=ts_project, probes=ProbeCache())
    assert_verdict(evidence, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)


# --------------------------------------------------------------------------- Go

GO_CLEAN = {
    "go.mod": "module example.com/tiny\n\ngo 1.19\n",
    "add.go": "package tiny\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n",
    "add_test.go": """
        package tiny

        import "testing"

        func TestAdd(t *testing.T) {
        \tif Add(1, 2) != 3 {
        \t\tt.Fatal("wrong sum")
        \t}
        }
    """,
}


@pytest.fixture
def go_project(tmp_path: Path) -> Path:
    return write_dedented(tmp_path / "proj", GO_CLEAN)


# `go build` is not planned: `go test` compiles every package, so it answers the build question.
def test_go_clean_project_passes(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    evidence = run(check_named(go_project, "go-test"), go_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert evidence.checker is not None and evidence.checker.version.startswith("1.")


def test_go_syntax_error_fails_build_with_location(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(go_project, {"broken.go": "package tiny\n\nfunc Broken( {\n}\n"})
    evidence = run(check_named(go_project, "go-test"), go_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "broken.go", 3)


def test_go_type_error_fails_build_with_location(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(go_project, {"typed.go": "package tiny\n\nvar S string = Add(1, 2)\n"})
    evidence = run(check_named(go_project, "go-test"), go_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "typed.go", 3)


def test_a_vet_error_go_test_checks_fails_with_location(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        go_project,
        {
            "vet.go": 'package tiny\n\nimport "fmt"\n\nfunc Say() string {\n\treturn fmt.Sprintf("%d", "x")\n}\n'
        },
    )
    # printf is among the vet checks `go test` runs before the tests.
    evidence = run(check_named(go_project, "go-test"), go_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "vet.go", 6)


def test_go_failing_test_fails_with_counts(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        go_project,
        {
            "bad_test.go": 'package tiny\n\nimport "testing"\n\nfunc TestBad(t *testing.T) {\n\tt.Fatal("no")\n}\n'
        },
    )
    evidence = run(check_named(go_project, "go-test"), go_project, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.tests is not None
    assert (evidence.tests.passed, evidence.tests.failed, evidence.tests.source) == (
        1,
        1,
        "go-json",
    )


def test_go_hanging_test_is_a_timeout(
    go_project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    write_dedented(
        go_project,
        {
            "hang_test.go": 'package tiny\n\nimport (\n\t"testing"\n\t"time"\n)\n\n'
            "func TestHang(t *testing.T) {\n\ttime.Sleep(2 * time.Minute)\n}\n"
        },
    )
    check = check_named(go_project, "go-test")
    evidence = run(check, go_project, tmp_path_factory, timeout_s=HANG_TIMEOUT_S)
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.TIMEOUT)
    # Named from the event stream (it started and never ended), and its line from the stacks
    # the test binary printed on the SIGQUIT it was sent before the kill.
    assert evidence.note.endswith(
        "while running example.com/tiny.TestHang (stuck at hang_test.go:9 in "
        "example.com/tiny.TestHang); raise the timeout if it is just slow."
    ), evidence.note


def test_go_missing_toolchain_is_unverified(go_project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    check = dataclasses.replace(check_named(go_project, "go-test"), env={"PATH": str(empty)})
    evidence = run_check(check, root=go_project, probes=ProbeCache())
    assert_verdict(evidence, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
    assert "golang-go" in evidence.note


# --------------------------------------------------------------------------- Rust


@pytest.fixture(scope="session")
def cargo_target(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One target directory for every crate: dependencies-free crates still share std's metadata."""
    return str(tmp_path_factory.mktemp("cargo-target"))


def rust_project(root: Path, name: str, lib: str, tests: str = "") -> Path:
    return write_dedented(
        root / name,
        {
            "Cargo.toml": f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
            "src/lib.rs": lib
            + ("\n#[cfg(test)]\nmod tests {\n    use super::*;\n" + tests + "}\n" if tests else ""),
        },
    )


RUST_ADD = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
RUST_TEST_OK = "    #[test]\n    fn adds() {\n        assert_eq!(add(1, 2), 3);\n    }\n"


def rust_check(root: Path, name: str, target: str) -> Check:
    return check_named(root, name, CARGO_TARGET_DIR=target)


@pytest.mark.parametrize("name", ["cargo-check", "cargo-test"])
def test_rust_clean_crate_passes(
    tmp_path: Path, name: str, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    crate = rust_project(tmp_path, "tiny_clean", RUST_ADD, RUST_TEST_OK)
    evidence = run(rust_check(crate, name, cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.PASS, Cause.EXIT_ZERO)
    assert evidence.checker is not None and evidence.checker.tool == "cargo"


def test_rust_syntax_error_fails_build_with_location(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    crate = rust_project(tmp_path, "tiny_syntax", "pub fn f() -> i32 {\n    let x = ;\n    x\n}\n")
    evidence = run(rust_check(crate, "cargo-check", cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "src/lib.rs", 2)


def test_rust_unclosed_delimiter_is_placed_where_rustc_points(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """rustc's JSON gives this error two primary spans, the `}` that closed the function
    first; its `-->` points at the unclosed `(`, where the edit was (heck: 175, not 180)."""
    lib = "pub fn double(x: i32) -> i32 {\n    let y = (x * 2;\n    y\n}\n"
    crate = rust_project(tmp_path, "tiny_unclosed", lib)
    evidence = run(rust_check(crate, "cargo-check", cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    first = evidence.diagnostics[0]
    assert (first.file, first.line, first.column) == ("src/lib.rs", 2, 13), first


def test_rust_type_error_fails_build_with_code(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    crate = rust_project(
        tmp_path, "tiny_types", RUST_ADD + "pub fn s() -> String {\n    add(1, 2)\n}\n"
    )
    evidence = run(rust_check(crate, "cargo-check", cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert_diagnostic(evidence, "src/lib.rs", 5)
    assert any(d.code == "E0308" for d in evidence.diagnostics)


def test_rust_failing_test_fails_with_counts(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    bad = "    #[test]\n    fn wrong() {\n        assert_eq!(add(1, 2), 4);\n    }\n"
    crate = rust_project(tmp_path, "tiny_fails", RUST_ADD, RUST_TEST_OK + bad)
    evidence = run(rust_check(crate, "cargo-test", cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.tests is not None and (evidence.tests.passed, evidence.tests.failed) == (1, 1)


def test_rust_hanging_test_is_a_timeout(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    hang = "    #[test]\n    fn hangs() {\n        std::thread::sleep(std::time::Duration::from_secs(120));\n    }\n"
    crate = rust_project(tmp_path, "tiny_hangs", RUST_ADD, hang)
    check = rust_check(crate, "cargo-test", cargo_target)
    # The test binary is built first, so that the deadline is spent in the test.
    build = dataclasses.replace(
        check, kind=Kind.BUILD, argv=(*check.argv, "--no-run"), timeout_s=None
    )
    assert_verdict(run(build, crate, tmp_path_factory), Verdict.PASS, Cause.EXIT_ZERO)
    evidence = run(check, crate, tmp_path_factory, timeout_s=HANG_TIMEOUT_S)
    assert_verdict(evidence, Verdict.INCONCLUSIVE, Cause.TIMEOUT)


def test_rust_tests_behind_required_features_are_run(
    tmp_path: Path, cargo_target: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # tiny-keccak's shape: every tests/*.rs is a [[test]] with required-features, so a plain
    # `cargo test` builds and runs none of them and a wrong result passes.
    crate = rust_project(tmp_path, "tiny_features", RUST_ADD, RUST_TEST_OK)
    manifest = crate / "Cargo.toml"
    manifest.write_text(
        manifest.read_text()
        + "\n[features]\ndefault = []\nwide = []\n\n"
        + '[[test]]\nname = "wide"\nrequired-features = ["wide"]\n'
    )
    (crate / "tests").mkdir()
    (crate / "tests" / "wide.rs").write_text(
        "#[test]\nfn wide_add() {\n    assert_eq!(tiny_features::add(1, 2), 4);\n}\n"
    )
    evidence = run(rust_check(crate, "cargo-test", cargo_target), crate, tmp_path_factory)
    assert_verdict(evidence, Verdict.FAIL, Cause.EXIT_NONZERO)
    assert evidence.tests is not None and evidence.tests.failed == 1


def test_rust_missing_toolchain_is_unverified(tmp_path: Path) -> None:
    crate = rust_project(tmp_path, "tiny_missing", RUST_ADD)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    check = dataclasses.replace(check_named(crate, "cargo-check"), env={"PATH": str(empty)})
    evidence = run_check(check, root=crate, probes=ProbeCache())
    assert_verdict(evidence, Verdict.UNVERIFIED, Cause.TOOLCHAIN_MISSING)
