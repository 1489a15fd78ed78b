"""An install step that failed in a project whose own Python code does not compile.

A build backend reads the project's code while pip installs it: flit_core parses the
module for its docstring and version, setuptools' `version = attr:` and hatch's version
source read it too, a setup.py imports the package. tabulate 0.10 with a syntax error in
`tabulate/__init__.py`: flit_core's `ast.parse` fails, and the traceback names the file as
`"<unknown>"`, so nothing in the install's output says where. That is the code failing,
not an environment that could not be set up.

The byte-compile check the plan already holds needs nothing installed, so it runs after
such a failure anyway, sandboxed and offline as every check. When it fails on a file of the
project (not the environment the install made, not its downloads), its evidence decides the
verdict, FAILED, with the file and line, and the install step's note says why the other
checks did not run. When it passes, or fails only outside the project's code, it is left
out: the install's failure stands as it was, never a pass.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from assay.evidence import Check, Diagnostic, Evidence
from assay.verdict import Kind, Verdict

__all__ = ["blamed_on_code", "compile_checks", "own_code_errors"]

#: The tool of the check that byte-compiles the project's Python code (`python -m compileall`).
COMPILE_TOOL = "compileall"


def compile_checks(checks: Sequence[Check]) -> list[Check]:
    """The checks of a plan that byte-compile Python code: they need nothing installed."""
    return [c for c in checks if c.tool == COMPILE_TOOL and c.kind is Kind.BUILD]


def own_code_errors(evidence: Evidence, outside: Sequence[str]) -> tuple[Diagnostic, ...]:
    """The errors a failed compile check found in the project's own files: not in a file
    out of the workspace, nor under one of `outside` (the environment the install made,
    its downloads), which are other people's code."""
    if evidence.verdict is not Verdict.FAIL:
        return ()
    return tuple(
        d for d in evidence.diagnostics if _in_project(d.file, evidence.check.cwd, outside)
    )


def _in_project(file: str | None, cwd: str, outside: Sequence[str]) -> bool:
    if not file or os.path.isabs(file):
        return False  # the parser leaves a file out of the workspace absolute
    path = os.path.normpath(os.path.join(cwd, file))
    if path == ".." or path.startswith("../"):
        return False
    return not any(path == o or path.startswith(f"{o}/") for o in outside)


def blamed_on_code(
    install: Sequence[Evidence],
    compiled: Evidence,
    errors: Sequence[Diagnostic],
    how_it_ended: str,
) -> list[Evidence]:
    """The install steps' evidence, then the compile check's, holding only `errors` (those
    in the project's own code). The failed step keeps its verdict, its note saying how it
    ended (`how_it_ended`) and that the code does not compile; the compile check's note
    names the first error and the step that failed with it."""
    first = errors[0]
    where = first.place
    failed = next((e for e in install if not e.passed), None)
    step = failed.check.name if failed is not None else "the install"
    compile_note = (
        f"{compiled.check.name} failed: {where}: {first.message}; install step {step} "
        "failed too, so the other checks were not run"
    )
    explained = f"the project's own code does not compile ({compiled.check.name}: {where})"
    steps = [
        replace(e, note=_consequence(e.check.name, how_it_ended, explained)) if e is failed else e
        for e in install
    ]
    return [*steps, replace(compiled, diagnostics=tuple(errors), note=compile_note)]


def _consequence(step: str, how_it_ended: str, explained: str) -> str:
    # A build backend reads the code as it installs: the step's failure follows from it.
    return (
        f"install step {step} did not succeed ({how_it_ended}), and {explained}: "
        "a build backend that reads the code stops there; the other checks were not run"
    )
