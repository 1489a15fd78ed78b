"""pytest run on a commit of a repository inside the sandbox, with a small plugin that
writes what happened to a report directory outside the workspace: each test's outcome and
failure message and, when asked, the lines each test executed (coverage.py, one dynamic
context per test id). The report is read back on the host without following links, within
a bound; nothing of the repository runs on the host.

coverage.py is assay's own dependency: its package is copied into the report directory and
put first on the sandboxed interpreter's path (PYTHONPATH, which a virtualenv's interpreter
honours too, its own site-packages still after it), so a repository needs nothing installed
for it. The interpreter is the one `assay verify` plans the project's tests with
(`project_python`): its in-tree virtualenv's when it has one, else the host's `python3`
(a pyenv shim resolved to its version); either is shown read-only in the sandbox like any
probed toolchain.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.errors import AssayError
from assay.scratch import make_scratch, remove_scratch
from assay.untrusted_files import read_untrusted

#: The most of the plugin's report that is read back.
REPORT_LIMIT_BYTES = 64 * 1024 * 1024
#: The longest failure message kept per test.
MESSAGE_CHARS = 400
PLUGIN_MODULE = "assay_graph_plugin"
REPORT_NAME = "pytest-report.json"

PLUGIN_SOURCE = '''
"""Written by assay: per-test outcomes and, when asked, per-test line coverage."""
import json, os
import pytest

_outcomes = {}
_cov = None


def pytest_configure(config):
    global _cov
    if os.environ.get("ASSAY_GRAPH_COVER") == "1":
        import coverage
        _cov = coverage.Coverage(data_file=None, config_file=False, source=[os.getcwd()])
        _cov.start()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if _cov is not None:
        _cov.switch_context(item.nodeid)
    yield
    if _cov is not None:
        _cov.switch_context("")


def _message(report):
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = getattr(crash, "message", None) or str(getattr(report, "longrepr", "") or "")
    return text[:MESSAGE_CHARS]


def pytest_runtest_logreport(report):
    previous = _outcomes.get(report.nodeid, {}).get("outcome")
    if report.failed:
        _outcomes[report.nodeid] = {"outcome": "failed", "message": _message(report)}
    elif report.skipped and previous is None:
        _outcomes[report.nodeid] = {"outcome": "skipped", "message": ""}
    elif report.when == "call" and previous is None:
        _outcomes[report.nodeid] = {"outcome": "passed", "message": ""}


def pytest_collectreport(report):
    if report.failed:
        _outcomes[report.nodeid or "<collection>"] = {
            "outcome": "error", "message": _message(report)}


def pytest_unconfigure(config):
    lines = {}
    if _cov is not None:
        _cov.stop()
        data = _cov.get_data()
        root = os.getcwd()
        for path in data.measured_files():
            rel = os.path.relpath(path, root)
            if rel.startswith(".."):
                continue
            found = {}
            for number, contexts in data.contexts_by_lineno(path).items():
                named = sorted(c for c in contexts if c)
                if named:
                    found[str(number)] = named
            lines[rel] = found
    with open(os.environ["ASSAY_GRAPH_OUT"], "w") as handle:
        json.dump({"tests": _outcomes, "lines": lines}, handle)
'''.replace("MESSAGE_CHARS", str(MESSAGE_CHARS))


class PytestRunError(AssayError):
    """pytest could not be run in the sandbox, or its report could not be read."""


@dataclass(frozen=True, slots=True)
class TestOutcome:
    outcome: str
    """`passed`, `failed`, `skipped` or `error` (a module that did not collect)."""
    message: str = ""


@dataclass(frozen=True, slots=True)
class PytestRun:
    exit_code: int | None
    timed_out: bool
    outcomes: dict[str, TestOutcome]
    lines: dict[str, dict[int, tuple[str, ...]]] = field(default_factory=dict)
    """Path -> line -> the test ids that executed it (with coverage only)."""
    output: str = ""

    @property
    def failed(self) -> dict[str, TestOutcome]:
        return {t: o for t, o in self.outcomes.items() if o.outcome in ("failed", "error")}


@dataclass(frozen=True, slots=True)
class ProjectPython:
    """The Python the repository's tests run with in the sandbox."""

    argv0: str
    """What is executed: an absolute path, the same inside the sandbox as on the host (the
    mutants' workspaces come from a scratch clone that holds no environment)."""
    host_path: str
    """The binary on the host, for the sandbox to show its installation read-only."""
    source: str
    """How it was chosen, as discovery says (`in-tree virtualenv .venv`, `PATH`)."""


def project_python(repo: Path) -> ProjectPython:
    """The interpreter `assay verify` would plan `repo`'s tests with: the in-tree
    virtualenv's (or pdm's in-tree one), whose site-packages hold what the tests import,
    else `host_python()`. Only looked up by path: nothing of the repository runs here."""
    from assay.discovery.files import RepoFiles
    from assay.discovery.toolenv import detect_env

    files = RepoFiles(str(repo))
    env = detect_env(files)
    if not env.in_tree_python:
        python = host_python()
        return ProjectPython(python, python, env.python_source)
    # Not resolved: a virtualenv's python finds its pyvenv.cfg by the path it was run as.
    python = os.path.join(files.root, env.python)
    return ProjectPython(python, python, env.python_source)


def host_python() -> str:
    """The interpreter tests run with: the host's `python3`, a pyenv shim seen through."""
    from assay.pyenv_shim import resolve_shim

    found = shutil.which("python3")
    if found is None:
        raise PytestRunError("no python3 on PATH to run the repository's tests with")
    target = resolve_shim(found, cwd=os.getcwd(), env=os.environ)
    return target.binary if target is not None else os.path.realpath(found)


def run_pytest(
    repo: Path,
    commit: str,
    *,
    tests: Sequence[str] = (),
    coverage: bool = False,
    sandbox: str = "auto",
    timeout: float = 600.0,
    environment: Path | None = None,
) -> PytestRun:
    """pytest on `repo` at `commit` in a fresh sandboxed workspace (only `tests` when
    given), with the interpreter of `environment` (the repository whose installed
    environment the tests need; `repo` itself by default); raises `PytestRunError` when it
    could not run or left no readable report."""
    from assay.sandbox import BwrapOptions, SandboxError, select_sandbox

    python = project_python(environment if environment is not None else repo)
    report = make_scratch("eval-graph")
    try:
        kit = report / "kit"
        kit.mkdir()
        (kit / f"{PLUGIN_MODULE}.py").write_text(PLUGIN_SOURCE)
        if coverage:
            import coverage as coverage_package

            shutil.copytree(Path(coverage_package.__file__).parent, kit / "coverage")
        options = BwrapOptions(toolchain_paths=(python.host_path,), writable_paths=(str(report),))
        box = select_sandbox(sandbox, bwrap_options=options)
        argv = [python.argv0, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", PLUGIN_MODULE]
        env = {
            "PYTHONPATH": str(kit),
            "PYTHONDONTWRITEBYTECODE": "1",
            "ASSAY_GRAPH_OUT": str(report / REPORT_NAME),
            "ASSAY_GRAPH_COVER": "1" if coverage else "0",
        }
        try:
            with box.workspace(repo, commit=commit) as workspace:
                result = box.run(workspace, [*argv, "--", *tests], env=env, timeout=timeout)
        except SandboxError as exc:
            raise PytestRunError(f"the sandbox could not run pytest: {exc}") from exc
        if result.start_error:
            raise PytestRunError(f"pytest did not start: {result.start_error}")
        output = result.stdout.text[-4000:] + result.stderr.text[-2000:]
        if result.timed_out:
            return PytestRun(result.exit_code, True, {}, output=output)
        data = _read_report(report, output)
        return PytestRun(
            exit_code=result.exit_code,
            timed_out=False,
            outcomes=_outcomes(data.get("tests")),
            lines=_lines(data.get("lines")),
            output=output,
        )
    finally:
        remove_scratch(report)


def _read_report(report: Path, output: str) -> dict[str, Any]:
    data = read_untrusted(report, REPORT_NAME, limit=REPORT_LIMIT_BYTES)
    if not isinstance(data, bytes):
        why = "missing" if data is None else data.reason
        raise PytestRunError(f"pytest left no readable report ({why}); its output:\n{output}")
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise PytestRunError(f"pytest's report is not JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise PytestRunError("pytest's report is not a JSON object")
    return parsed


def _outcomes(raw: Any) -> dict[str, TestOutcome]:
    found: dict[str, TestOutcome] = {}
    for test_id, item in (raw if isinstance(raw, dict) else {}).items():
        if isinstance(test_id, str) and isinstance(item, dict):
            found[test_id] = TestOutcome(
                str(item.get("outcome", "")), str(item.get("message", ""))[:MESSAGE_CHARS]
            )
    return found


def _lines(raw: Any) -> dict[str, dict[int, tuple[str, ...]]]:
    found: dict[str, dict[int, tuple[str, ...]]] = {}
    for path, by_line in (raw if isinstance(raw, dict) else {}).items():
        if not isinstance(path, str) or not isinstance(by_line, dict):
            continue
        found[path] = {
            int(n): tuple(t for t in tests if isinstance(t, str))
            for n, tests in by_line.items()
            if isinstance(n, str) and n.isdigit() and isinstance(tests, list)
        }
    return found
