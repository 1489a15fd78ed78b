"""Detector 8: the language's defaults when the language is evident (compileall, pytest, node --test).

These rank below every other source; the planner uses them only for the
kinds and ecosystems nothing else answered.
"""

from __future__ import annotations

from assay.discovery.files import RepoFiles
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.python import TEST_DIRS
from assay.verdict import Kind

NAME = "fallback"

PYTHON_MARKERS = (
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "Pipfile",
    "tox.ini",
)

#: Directories compileall must not descend into (other people's code, or not code).
COMPILE_EXCLUDE = (".git", ".tox", ".nox", "node_modules", "build", "dist", "__pycache__")


def python_evidence(root_names: set[str], test_dirs_with_py: list[str]) -> str | None:
    """Why the repository looks like Python, or None. Pure."""
    for marker in PYTHON_MARKERS:
        if marker in root_names:
            return marker
    py_files = sorted(n for n in root_names if n.endswith(".py"))
    if py_files:
        return py_files[0]
    return test_dirs_with_py[0] if test_dirs_with_py else None


def python_defaults(
    evidence: str, env: ProjectEnv, root_dirs: set[str], has_tests: bool
) -> list[Candidate]:
    """compileall (a syntax check of the project's code) and, when tests exist, pytest. Pure."""
    target = "src" if "src" in root_dirs else "."
    excluded = "|".join(d.replace(".", r"\.") for d in (*env.venv_dirs, *COMPILE_EXCLUDE))
    found = [
        Candidate(
            kind=Kind.BUILD,
            argv=env.python_module("compileall", "-q", "-x", f"(^|/)({excluded})(/|$)", target),
            tool="compileall",
            ecosystem=Ecosystem.PYTHON,
            origin=Origin.FALLBACK,
            source=Source(evidence),
            reason="Python project: byte-compiling every module finds syntax errors, cheaply",
        )
    ]
    if has_tests:
        found.append(
            Candidate(
                kind=Kind.TEST,
                argv=env.python_module("pytest"),
                tool="pytest",
                ecosystem=Ecosystem.PYTHON,
                origin=Origin.FALLBACK,
                source=Source(evidence),
                reason="Python project with tests and no configured runner: "
                "pytest's default discovery "
                "(it also runs unittest test cases)",
            )
        )
    return found


#: File names node's own test runner (`node --test`) discovers, by suffix.
NODE_TEST_SUFFIXES = (".test.js", ".test.mjs", ".test.cjs", "_test.js", "-test.js")
#: Directories whose JavaScript files `node --test` runs.
NODE_TEST_DIRS = ("test", "tests")


def node_defaults(root_names: set[str], test_dir_files: dict[str, list[str]]) -> list[Candidate]:
    """`node --test` for a package.json project whose JavaScript tests follow node's own
    naming, for when no script answers the test question. Pure."""
    if "package.json" not in root_names:
        return []
    by_name = sorted(n for n in root_names if n.endswith(NODE_TEST_SUFFIXES))
    in_dirs = sorted(
        f"{d}/{n}"
        for d, names in test_dir_files.items()
        for n in names
        if n.endswith((".js", ".mjs", ".cjs"))
    )
    tests = by_name + in_dirs
    if not tests:
        return []
    return [
        Candidate(
            kind=Kind.TEST,
            argv=("node", "--test"),
            tool="node-test",
            ecosystem=Ecosystem.NODE,
            origin=Origin.FALLBACK,
            source=Source("package.json"),
            reason=f"JavaScript tests ({tests[0]}{', ...' if len(tests) > 1 else ''}) and no test "
            "script: node's built-in runner finds them by name",
        )
    ]


def detect(files: RepoFiles, env: ProjectEnv) -> DetectorReport:
    root_names = set(files.list_dir("."))
    root_dirs = {n for n in root_names if files.is_dir(n)}
    test_dirs = [
        d for d in TEST_DIRS if d in root_dirs and any(n.endswith(".py") for n in files.list_dir(d))
    ]
    found: list[Candidate] = []
    evidence = python_evidence(root_names, test_dirs)
    if evidence is not None:
        has_tests = bool(test_dirs) or any(
            n.startswith("test_") and n.endswith(".py") for n in root_names
        )
        found += python_defaults(evidence, env, root_dirs, has_tests)
    node_test_dirs = {d: files.list_dir(d) for d in NODE_TEST_DIRS if d in root_dirs}
    found += node_defaults(root_names, node_test_dirs)
    return report(NAME, found)
