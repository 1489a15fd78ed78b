"""The compileall check is a real syntax check that compiles the tree's files only.

Pointing `PYTHONPYCACHEPREFIX` at a fresh directory for the whole interpreter made it
ignore the standard library's own byte-code and compile every module it imports from
source, on every run. Only the tree's byte-code belongs in the report directory."""

from __future__ import annotations

import re
import sys
import sysconfig
from pathlib import Path

import pytest

from assay.evidence import Check
from assay.instrument import instrument
from assay.parsers.python import parse_compileall
from assay.process import ProcessResult, run_process
from assay.verdict import Kind

STDLIB = sysconfig.get_paths()["stdlib"]
#: What `python -v` says when it compiles a module from its source rather than loading it.
FROM_SOURCE = re.compile(r"^# code object from '?(?P<path>[^'\n]+\.py)'?$", re.MULTILINE)


def compileall_check(tree: Path) -> Check:
    argv = (sys.executable, "-m", "compileall", "-q", "-x", r"(^|/)(\.git)(/|$)", ".")
    return Check(name="compileall", kind=Kind.BUILD, argv=argv, cwd=str(tree), tool="compileall")


def run(
    tree: Path, reports: Path, *, verbose: bool = False, env: dict[str, str] | None = None
) -> tuple[Check, ProcessResult]:
    check = compileall_check(tree)
    planned = instrument(check, None, reports)
    # `-v`, not PYTHONVERBOSE: the check's interpreter takes no PYTHON* variable.
    argv = (planned.argv[0], "-v", *planned.argv[1:]) if verbose else planned.argv
    return check, run_process(argv, cwd=tree, env={**planned.env, **(env or {})}, timeout=60)


def make_tree(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "mod.py").write_text("import os\n\n\ndef f() -> str:\n    return os.sep\n")
    return tree


def test_no_standard_library_module_is_compiled_from_source(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _, result = run(tree, tmp_path / "reports", verbose=True)
    assert result.exit_code == 0, result.stderr.text
    compiled = [m["path"] for m in FROM_SOURCE.finditer(result.stderr.text)]
    stdlib = [path for path in compiled if path.startswith(STDLIB)]
    assert not stdlib, f"compiled {len(stdlib)} standard library modules: {stdlib[:5]}"


def test_the_trees_bytecode_goes_to_the_report_dir_not_the_tree(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    _, result = run(tree, tmp_path / "reports")
    assert result.exit_code == 0, result.stderr.text
    assert not list(tree.rglob("__pycache__"))
    assert list((tmp_path / "reports" / "pycache").rglob("mod.*.pyc"))


def test_a_planted_syntax_error_fails_with_its_location(tmp_path: Path) -> None:
    tree = make_tree(tmp_path)
    (tree / "pkg" / "broken.py").write_text("x = (\n")
    check, result = run(tree, tmp_path / "reports")
    assert result.exit_code == 1
    parsed = parse_compileall(check, result, None)
    assert [(d.file, d.line) for d in parsed.diagnostics] == [("pkg/broken.py", 1)]
    assert "never closed" in parsed.diagnostics[0].message


def test_the_projects_code_is_compiled_not_its_deliberately_broken_test_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As parso's sdist: `test/normalizer_issue_files/` holds Python that is not meant to
    compile. The planned compileall checks the package; a syntax error there still fails."""
    from assay.pipeline import VerifyOptions, verify
    from assay.plan import plan_repository
    from assay.verdict import Status
    from tests.cli import path_with_venv

    monkeypatch.setenv("PATH", path_with_venv())
    tree = make_tree(tmp_path)
    (tree / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '1'\n")
    (tree / "test" / "normalizer_issue_files").mkdir(parents=True)
    (tree / "test" / "normalizer_issue_files" / "E12.py").write_text("try:\n    pass\nx = 1\n")
    (tree / "setup.py").write_text("")
    (compileall,) = [c for c in plan_repository(tree).checks if c.tool == "compileall"]
    assert compileall.argv[-1] == "pkg"  # the package: not the tree, not setup.py
    options = VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"build"}))
    assert verify(tree, options).status is Status.VERIFIED
    (tree / "pkg" / "mod.py").write_text("def f(:\n    pass\n")
    assert verify(tree, options).status is Status.FAILED


def shadowing_compileall(directory: Path) -> None:
    """A `compileall` (and a `re`) that says every file compiled."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "compileall.py").write_text("import sys\ndef main():\n    return True\n")
    (directory / "re.py").write_text("raise SystemExit(0)\n")


def test_a_compileall_of_the_trees_own_does_not_answer_for_the_check(tmp_path: Path) -> None:
    """Neither the working directory nor a `PYTHONPATH` into the tree puts the tree's own
    `compileall` in the standard library's place."""
    tree = make_tree(tmp_path)
    (tree / "pkg" / "broken.py").write_text("x = (\n")
    shadowing_compileall(tree)
    shadowing_compileall(tree / "src")
    for env in ({}, {"PYTHONPATH": str(tree / "src")}):
        check, result = run(tree, tmp_path / "reports", env=env)
        assert result.exit_code == 1, (env, result.stdout.text, result.stderr.text)
        parsed = parse_compileall(check, result, None)
        assert [(d.file, d.line) for d in parsed.diagnostics] == [("pkg/broken.py", 1)]


def test_a_pth_file_in_the_trees_environment_does_not_run(tmp_path: Path) -> None:
    """A `.venv` of the tree's, its interpreter the check's: a `.pth` file in its
    site-packages, which `site` runs at start-up, would end the check with success."""
    tree = make_tree(tmp_path)
    (tree / "pkg" / "broken.py").write_text("x = (\n")
    venv = tree / ".venv"
    run_process((sys.executable, "-m", "venv", "--without-pip", str(venv)), timeout=60)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "hook.pth").write_text("import os; os._exit(0)\n")
    check = Check(
        name="compileall",
        kind=Kind.BUILD,
        argv=(str(venv / "bin" / "python"), "-m", "compileall", "-q", "pkg"),
        cwd=str(tree),
        tool="compileall",
    )
    planned = instrument(check, None, tmp_path / "reports")
    result = run_process(planned.argv, cwd=tree, env=planned.env, timeout=60)
    assert result.exit_code == 1, (result.stdout.text, result.stderr.text)


def test_a_shadowing_compileall_in_the_tree_fails_verify_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `compileall.py` at the top of the tree was imported in the standard
    library's place and said every file compiled: VERIFIED with a syntax error."""
    from assay.pipeline import VerifyOptions, verify
    from assay.verdict import Status
    from tests.cli import path_with_venv

    monkeypatch.setenv("PATH", path_with_venv())
    tree = make_tree(tmp_path)
    (tree / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '1'\n")
    shadowing_compileall(tree)
    options = VerifyOptions(sandbox="bwrap", use_cache=False, kinds=frozenset({"build"}))
    assert verify(tree, options).status is Status.VERIFIED
    (tree / "pkg" / "broken.py").write_text("x = (\n")
    report = verify(tree, options)
    assert report.status is Status.FAILED, report.note
    assert "pkg/broken.py" in report.note
