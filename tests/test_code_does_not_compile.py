"""An install step that failed in a project whose own code does not compile: the compile
check's evidence decides, never anything outside the project's code."""

from __future__ import annotations

from assay.code_does_not_compile import blamed_on_code, compile_checks, own_code_errors
from assay.evidence import Check, Diagnostic, Evidence, evidence_for
from assay.verdict import Cause, Kind, Verdict

OUTSIDE = (".venv", ".assay-deps")


def compileall(*found: Diagnostic, cwd: str = ".", cause: Cause = Cause.EXIT_NONZERO) -> Evidence:
    check = Check(name="compileall", kind=Kind.BUILD, argv=("python3",), cwd=cwd, tool="compileall")
    return evidence_for(check, cause, diagnostics=found)


def step(name: str, cause: Cause, note: str = "") -> Evidence:
    return evidence_for(Check(name=name, kind=Kind.BUILD, argv=("pip",)), cause, note=note)


def test_only_the_checks_that_byte_compile_are_run_after_a_failed_install() -> None:
    build = Check(name="compileall", kind=Kind.BUILD, argv=("python3",), tool="compileall")
    tests = Check(name="pytest", kind=Kind.TEST, argv=("python3",), tool="pytest")
    lint = Check(name="ruff", kind=Kind.LINT, argv=("ruff",), tool="ruff")
    assert compile_checks([lint, build, tests]) == [build]


def test_errors_in_the_environment_the_install_made_are_not_the_projects() -> None:
    own = Diagnostic("invalid syntax", file="pkg/__init__.py", line=5)
    found = compileall(
        own,
        Diagnostic("invalid syntax", file=".venv/lib/python3.11/site-packages/x.py", line=1),
        Diagnostic("invalid syntax", file=".assay-deps/pip/y.py", line=2),
        Diagnostic("invalid syntax", file="/usr/lib/python3/z.py", line=3),
        Diagnostic("invalid syntax", file=None, line=None),
    )
    assert own_code_errors(found, OUTSIDE) == (own,)


def test_a_check_run_below_the_root_is_judged_from_the_root() -> None:
    """A file named from the check's directory: `../.venv/...` from `src` is the environment."""
    own = Diagnostic("invalid syntax", file="pkg/a.py", line=1)
    env = Diagnostic("invalid syntax", file="../.venv/lib/b.py", line=1)
    above = Diagnostic("invalid syntax", file="../../elsewhere.py", line=1)
    assert own_code_errors(compileall(own, env, above, cwd="src"), OUTSIDE) == (own,)


def test_a_compile_check_that_did_not_fail_blames_nothing() -> None:
    said = Diagnostic("invalid syntax", file="pkg/a.py", line=1)
    assert own_code_errors(compileall(said, cause=Cause.EXIT_ZERO), OUTSIDE) == ()
    assert own_code_errors(compileall(said, cause=Cause.TIMEOUT), OUTSIDE) == ()


def test_the_failed_step_keeps_its_verdict_and_the_compile_check_names_the_file() -> None:
    """tabulate 0.10: flit_core's `ast.parse` of `tabulate/__init__.py` stops the install;
    compileall names the line. The install is still not a pass; the code's failure is
    compileall's, holding only the project's errors."""
    install = [
        step("install-venv", Cause.EXIT_ZERO),
        step("install-python", Cause.START_FAILED, note="install step install-python did not"),
    ]
    own = Diagnostic("invalid syntax", file="tabulate/__init__.py", line=2903)
    env = Diagnostic("invalid syntax", file=".venv/lib/x.py", line=1)
    venv, python, compiled = blamed_on_code(
        install, compileall(own, env), (own,), "exited 1: SyntaxError: invalid syntax"
    )
    assert venv is install[0]
    assert python.verdict is Verdict.INCONCLUSIVE and python.cause is Cause.START_FAILED
    assert python.note == (
        "install step install-python did not succeed (exited 1: SyntaxError: invalid syntax), "
        "and the project's own code does not compile (compileall: tabulate/__init__.py:2903): "
        "a build backend that reads the code stops there; the other checks were not run"
    )
    assert compiled.verdict is Verdict.FAIL and compiled.diagnostics == (own,)
    assert compiled.note == (
        "compileall failed: tabulate/__init__.py:2903: invalid syntax; install step "
        "install-python failed too, so the other checks were not run"
    )
