"""Detector 8: the language's defaults when the language is evident (compileall, pytest,
node --test, go test without a go.mod).

These rank below every other source; the planner uses them only for the
kinds and ecosystems nothing else answered.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Sequence

from assay.discovery.files import RepoFiles, UnreadableFile
from assay.discovery.model import (
    Candidate,
    DetectorReport,
    Ecosystem,
    Origin,
    ProjectEnv,
    Source,
    report,
)
from assay.discovery.python import TEST_DIRS, project_code
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


#: How deep and how wide the search for a test file goes: a package's tests sit a few
#: levels down, and a hostile tree must not turn discovery into a crawl.
TEST_SEARCH_DEPTH = 6
TEST_SEARCH_MAX_DIRS = 2_000


def _pytest_skips(name: str) -> bool:
    """Directory names pytest's default `norecursedirs` leaves out (`.*`, `*.egg`, build
    output, node_modules, venv; `__pycache__` holds no source)."""
    return (
        name.startswith(".")
        or name.endswith(".egg")
        or name in ("_darcs", "CVS", "{arch}", "venv", "__pycache__", *COMPILE_EXCLUDE)
    )


def _pytest_enters(files: RepoFiles, skip: Iterable[str]) -> Callable[[str, str], bool]:
    """Whether pytest's discovery from the root enters a directory (its name and path):
    not one it skips by name, one of `skip` (the project's virtualenvs), or any other
    virtualenv (a directory with a `pyvenv.cfg`)."""
    skipped = set(skip)
    return lambda name, path: (
        not (_pytest_skips(name) or path in skipped or files.lexists(f"{path}/pyvenv.cfg"))
    )


def test_file_anywhere(files: RepoFiles, skip: Iterable[str] = ()) -> str | None:
    """The first Python test file (`test_*.py`, `*_test.py`) pytest's own discovery from
    the root would collect, breadth first, or None; `skip`: the project's virtualenvs.

    Tests inside the package (`toolz/tests/`) are found as well as `tests/`; a virtualenv
    (any directory with a `pyvenv.cfg`) is passed over as pytest passes it over."""
    return _first_file(files, _is_test_file, _pytest_enters(files, skip))


#: Test modules named so that pytest's default patterns (`test_*.py`, `*_test.py`) pass
#: them over: webencodings keeps its tests in webencodings/tests.py, which its maintainers
#: ran as `py.test webencodings/tests.py`, and pytest from the root collects nothing.
UNPATTERNED_TEST_MODULES = ("tests.py", "test.py")
#: A test pytest would collect from a module it is pointed at.
_DEFINES_A_TEST = re.compile(r"^(?:def test\w*\s*\(|class Test\w*\b)", re.MULTILINE)
#: How many such modules are read before the search gives up.
_UNPATTERNED_READ_MAX = 20


def unpatterned_test_module(files: RepoFiles, skip: Iterable[str] = ()) -> str | None:
    """The first `tests.py` or `test.py` that defines a test pytest collects once named
    (`def test_...`, `class Test...`), breadth first as `test_file_anywhere`, or None."""
    found = files.breadth_first(
        lambda name: name in UNPATTERNED_TEST_MODULES,
        _pytest_enters(files, skip),
        depth=TEST_SEARCH_DEPTH,
        max_dirs=TEST_SEARCH_MAX_DIRS,
    )
    for path in itertools.islice(found, _UNPATTERNED_READ_MAX):
        try:
            text = files.read_text(path)
        except UnreadableFile:
            continue
        if text is not None and _DEFINES_A_TEST.search(text):
            return path
    return None


def _first_file(
    files: RepoFiles, wanted: Callable[[str], bool], enters: Callable[[str, str], bool]
) -> str | None:
    """The first file whose name is `wanted`, breadth first from the root, entering only
    the directories `enters` (their name and path) allows; None past `TEST_SEARCH_DEPTH`
    levels or `TEST_SEARCH_MAX_DIRS` directories (a hostile tree must not make discovery
    a crawl)."""
    found = files.breadth_first(
        wanted, enters, depth=TEST_SEARCH_DEPTH, max_dirs=TEST_SEARCH_MAX_DIRS
    )
    return next(found, None)


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def python_evidence(root_names: set[str], test_dirs_with_py: list[str]) -> str | None:
    """Why the repository looks like Python, or None. Pure."""
    for marker in PYTHON_MARKERS:
        if marker in root_names:
            return marker
    py_files = sorted(n for n in root_names if n.endswith(".py"))
    if py_files:
        return py_files[0]
    return test_dirs_with_py[0] if test_dirs_with_py else None


def compile_targets(files: RepoFiles, env: ProjectEnv) -> tuple[str, ...]:
    """What compileall checks in a tree: `src`, else the project's packages and modules at
    the root (`project_code`), else the whole tree.

    Not the whole tree when the code is known: tests, docs and examples may hold files
    that are not meant to compile (parso's test data is deliberately broken Python), and a
    syntax error in a test is pytest's collection error anyway."""
    root_names = set(files.list_dir("."))
    if "src" in root_names and files.is_dir("src"):
        return ("src",)
    return project_code(files, root_names, env) or (".",)


def retargeted_compile(argv: Sequence[str], targets: Sequence[str]) -> tuple[str, ...] | None:
    """assay's own compileall command `argv` (`python_defaults`'), checking `targets`
    instead; None for any other command (one a project states is its own)."""
    words = list(argv)
    at = words.index("-x") if "-x" in words else -1
    if at < 2 or words[at - 2 : at] != ["compileall", "-q"] or at + 1 >= len(words):
        return None
    if not words[at + 1].startswith(_EXCLUDED_PREFIX):
        return None
    return (*words[: at + 2], *targets)


#: How the pattern of directories assay's compileall leaves out starts.
_EXCLUDED_PREFIX = "(^|/)("


def python_defaults(
    evidence: str,
    env: ProjectEnv,
    targets: tuple[str, ...],
    test_file: str | None,
    unpatterned: str | None = None,
) -> list[Candidate]:
    """compileall (a syntax check of the project's code, `targets`: `compile_targets`')
    and, when a test file exists (`test_file`, the first found), pytest; else, where a
    test module pytest's patterns miss exists (`unpatterned`), pytest pointed at it. Pure."""
    excluded = "|".join(d.replace(".", r"\.") for d in (*env.venv_dirs, *COMPILE_EXCLUDE))
    pattern = f"{_EXCLUDED_PREFIX}{excluded})(/|$)"
    found = [
        Candidate(
            kind=Kind.BUILD,
            argv=env.python_module("compileall", "-q", "-x", pattern, *targets),
            tool="compileall",
            ecosystem=Ecosystem.PYTHON,
            origin=Origin.FALLBACK,
            source=Source(evidence),
            reason="Python project: byte-compiling every module finds syntax errors, cheaply",
        )
    ]
    if test_file is not None:
        found.append(
            Candidate(
                kind=Kind.TEST,
                argv=env.python_module("pytest"),
                tool="pytest",
                ecosystem=Ecosystem.PYTHON,
                origin=Origin.FALLBACK,
                source=Source(evidence),
                reason=f"Python project with tests ({test_file}, ...) and no configured "
                "runner: pytest's default discovery from the root finds them "
                "(it also runs unittest test cases)",
            )
        )
    elif unpatterned is not None:
        found.append(
            Candidate(
                kind=Kind.TEST,
                argv=env.python_module("pytest", unpatterned),
                tool="pytest",
                ecosystem=Ecosystem.PYTHON,
                origin=Origin.FALLBACK,
                source=Source(unpatterned),
                reason=f"Python tests in {unpatterned}, a name pytest's default discovery "
                "passes over, and no configured runner: pytest is pointed at it",
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


def go_test_file_anywhere(files: RepoFiles) -> str | None:
    """The first Go test file (`*_test.go`) `go test ./...` from the root would reach,
    breadth first, or None. Go's pattern skips directories named `.*`, `_*`, `testdata`
    and `vendor`; a directory with its own go.mod is another module, whose rules are its
    own. Bounded as the Python search is."""
    return _first_file(
        files,
        lambda name: name.endswith("_test.go"),
        lambda name, path: (
            name[:1] not in "._"
            and name not in ("testdata", "vendor")
            and not files.lexists(f"{path}/go.mod")
        ),
    )


def go_defaults(root_names: set[str], test_file: str | None) -> list[Candidate]:
    """`go test ./...` in GOPATH mode (`GO111MODULE=off`) for Go code with tests and no
    go.mod at the root: a package from before modules (go-shellquote at the root,
    go-difflib in difflib/), which module mode refuses ("go.mod file not found"). Its own
    packages are found by their paths from the root; imports from elsewhere would need a
    GOPATH. `test_file`: the first Go test file found (go_test_file_anywhere). Pure."""
    if "go.mod" in root_names or test_file is None:
        return []
    why = (
        f"Go tests ({test_file}, ...) and no go.mod: a package from before modules, in GOPATH mode"
    )
    # go test compiles the packages and runs vet's high-confidence checks (see go.mod's).
    return [
        Candidate(
            kind=Kind.TEST,
            argv=("go", "test", "./..."),
            tool="go",
            ecosystem=Ecosystem.GO,
            origin=Origin.FALLBACK,
            source=Source(test_file),
            reason=why,
            env={"GO111MODULE": "off"},
            name="go-test",
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
        # A conventional test directory with Python in it counts even when its files are
        # named otherwise: the run then says whether pytest found tests there.
        tests = test_file_anywhere(files, env.venv_dirs) or (
            f"{test_dirs[0]}/" if test_dirs else None
        )
        unpatterned = None if tests else unpatterned_test_module(files, env.venv_dirs)
        targets = compile_targets(files, env)
        found += python_defaults(evidence, env, targets, tests, unpatterned)
    node_test_dirs = {d: files.list_dir(d) for d in NODE_TEST_DIRS if d in root_dirs}
    found += node_defaults(root_names, node_test_dirs)
    if "go.mod" not in root_names:
        found += go_defaults(root_names, go_test_file_anywhere(files))
    return report(NAME, found)
