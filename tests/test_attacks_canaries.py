"""Canaries: a test run that rewrites its own report is caught by tests it did not write.

Each attack builds a real git repository whose base commit is right and whose change
leaves the code wrong while the code under test forges what the runner reports: a JUnit
report written from `sys.argv` and an exit 0, a plugin registered with the running pytest
that turns every failure into a pass, unittest's listing and summary printed before an
exit 0, `process.exit(0)` in a module a node test requires, a jest JSON report written
from `process.argv` before an exit 0, `go test -json` events written into the parent's
output. The forgeries agree with themselves (summary, report
and listing), so only the canaries assay plants in the run (one must fail, one must pass,
names random for the run) show them: every one is verified as untrusted work
(`--base REF --protect`) and comes out `report_tampered`, never VERIFIED.

Honest changes keep their verdict with canaries on, and the canaries never count.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import assay
from assay.evidence import Evidence
from assay.pipeline import VerifyOptions
from assay.report import Report
from assay.verdict import Cause, Status, Verdict
from tests.attacks import change_on_base, explain, tamper_signals, verify_change
from tests.cli import path_with_venv

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _project_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest comes from this interpreter's environment."""
    monkeypatch.setenv("PATH", path_with_venv())


def _test_check(report: Report) -> Evidence:
    (test,) = [e for e in report.checks if e.check.kind.value == "test"]
    return test


def _assert_tampered(report: Report) -> None:
    assert report.status is not Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    assert report.status is Status.INDETERMINATE, explain(report)
    assert "tampered" in test.note and "planted" in test.note, test.note


def _assert_no_canary_counted(test: Evidence) -> None:
    assert not [c for c in test.test_cases if "canary" in c.name.lower()], test.test_cases
    assert test.extra["canaries"]["planted"] is True, test.extra


# --------------------------------------------------------------------------- pytest

PYPROJECT = '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\n'
CALC = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
WRONG_CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
PYTEST_TESTS = """\
from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""
PYTHON_BASE = {"pyproject.toml": PYPROJECT, "calc.py": CALC, "tests/test_calc.py": PYTEST_TESTS}

FORGES_THE_JUNIT_REPORT = """\
import gc
import os
import sys

PASSING = (
    '<testsuites><testsuite name="pytest" tests="2">'
    '<testcase classname="tests.test_calc" name="test_add" time="0.001"/>'
    '<testcase classname="tests.test_calc" name="test_mul" time="0.001"/>'
    "</testsuite></testsuites>"
)

for arg in sys.argv:
    if arg.startswith("--junitxml="):
        # The report pytest was told to write, a summary line that agrees with it, exit 0.
        with open(arg.split("=", 1)[1], "w") as report:
            report.write(PASSING)
        # pytest captures output while it collects: stop that, so the summary is seen.
        from _pytest.capture import CaptureManager

        for found in gc.get_objects():
            if isinstance(found, CaptureManager):
                found.stop_global_capturing()
        sys.stdout.write("2 passed in 0.01s\\n")
        sys.stdout.flush()
        os._exit(0)


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_pytest_report_written_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"calc.py": FORGES_THE_JUNIT_REPORT})
    _assert_tampered(verify_change(repo))


PASSES_EVERY_OUTCOME = """\
import gc


def _pass_everything():
    # The running pytest's Config, found through the garbage collector: a plugin
    # registered with it rewrites every failing outcome before anything reports it.
    try:
        import pytest
        from _pytest.config import Config
    except ImportError:
        return
    for found in gc.get_objects():
        if isinstance(found, Config):

            class PassAll:
                @pytest.hookimpl(hookwrapper=True)
                def pytest_runtest_makereport(self, item, call):
                    outcome = yield
                    report = outcome.get_result()
                    if report.failed:
                        report.outcome = "passed"
                        report.longrepr = None

            found.pluginmanager.register(PassAll())
            return


_pass_everything()


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_pytest_outcomes_rewritten_by_a_plugin_are_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"calc.py": PASSES_EVERY_OUTCOME})
    # Without canaries every channel agrees: pytest itself prints "2 passed".
    unguarded = _test_check(verify_change(repo, canaries=False))
    assert unguarded.result is not None, unguarded.note
    assert "2 passed" in unguarded.result.stdout.text, unguarded.result.stdout.text
    _assert_tampered(verify_change(repo))


PASSES_ALL_BUT_WHAT_LOOKS_PLANTED = """\
import gc
import os
import sysconfig

# A hook wrapper that spares every test whose name, file or failure says it was planted,
# compiled as if it were the standard library's os.py, so that it passes for installed code.
SOURCE = (
    "def pytest_runtest_makereport(item, call):\\n"
    "    outcome = yield\\n"
    "    report = outcome.get_result()\\n"
    "    said = (report.nodeid + ' ' + report.longreprtext).lower()\\n"
    "    if report.failed and 'canary' not in said and 'assay' not in said:\\n"
    "        report.outcome = 'passed'\\n"
    "        report.longrepr = None\\n"
)

try:
    import pytest
    from _pytest.config import Config
except ImportError:
    pytest = None

if pytest is not None:
    made = {}
    exec(compile(SOURCE, os.path.join(sysconfig.get_paths()["stdlib"], "os.py"), "exec"), made)

    class Plugin:
        pass

    plugin = Plugin()
    plugin.pytest_runtest_makereport = pytest.hookimpl(hookwrapper=True)(
        made["pytest_runtest_makereport"]
    )
    for found in gc.get_objects():
        if isinstance(found, Config):
            found.pluginmanager.register(plugin)
            break


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_pytest_outcomes_rewritten_sparing_what_looks_planted_are_report_tampered(
    tmp_path: Path,
) -> None:
    repo = change_on_base(
        tmp_path / "repo", PYTHON_BASE, {"calc.py": PASSES_ALL_BUT_WHAT_LOOKS_PLANTED}
    )
    # Nothing about the canaries says what they are, so the must-fail one would be passed
    # too; before that, the guard finds that os.py does not compile to the hook's code.
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    assert "pytest_runtest_makereport of" in note and "os.py)" in note, explain(report)


HOOKS_THE_REPORT_SPARING_HIDDEN_FILES = PASSES_EVERY_OUTCOME.replace(
    "                    if report.failed:",
    '                    if report.failed and not item.path.parent.name.startswith("."):',
)


def test_pytest_outcomes_rewritten_by_a_hook_added_by_the_code_are_found_by_the_guard(
    tmp_path: Path,
) -> None:
    assert HOOKS_THE_REPORT_SPARING_HIDDEN_FILES != PASSES_EVERY_OUTCOME
    repo = change_on_base(
        tmp_path / "repo", PYTHON_BASE, {"calc.py": HOOKS_THE_REPORT_SPARING_HIDDEN_FILES}
    )
    # The canaries are told apart by where they are; the hook the code added is seen.
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    assert "pytest_runtest_makereport of" in note and "calc.py" in note, explain(report)


PATCHES_THE_REPORT_SPARING_HIDDEN_FILES = """\
def _patch_the_report():
    # pytest's report class itself, patched where it is made: a failure turns into a pass
    # unless the test's file is in a hidden directory, which is where the canaries are.
    try:
        from _pytest.reports import TestReport
    except ImportError:
        return
    made = TestReport.from_item_and_call.__func__

    def from_item_and_call(cls, item, call):
        report = made(cls, item, call)
        hidden = any(part.startswith(".") for part in item.path.parts[-2:])
        if report.failed and not hidden:
            report.outcome = "passed"
            report.longrepr = None
        return report

    TestReport.from_item_and_call = classmethod(from_item_and_call)


_patch_the_report()


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_pytest_reporting_replaced_in_place_is_found_by_the_guard(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", PYTHON_BASE, {"calc.py": PATCHES_THE_REPORT_SPARING_HIDDEN_FILES}
    )
    # The canaries are told apart here, by where they are: the guard beside them, which
    # took pytest's report class before any of the project's code was imported, is not.
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    assert "pytest's reporting was replaced" in note, explain(report)
    assert "_pytest.reports.TestReport.from_item_and_call" in note, explain(report)


#: Rewrites aimed at the project's own tests only (the canaries, untouched, report as
#: planted), each in a way the guard's first form missed (a red-team round's): the code of
#: pytest's own function swapped in place, a property set on a class over its base's, and
#: a module object registered as a plugin.
TARGETED_REWRITES = {
    "code swapped in place": """\
def _swap():
    import importlib
    import sys

    if "pytest" not in sys.modules:
        return
    python = importlib.import_module("_pytest.python")

    def replacement(pyfuncitem):
        funcargs = pyfuncitem.funcargs
        testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}
        try:
            pyfuncitem.obj(**testargs)
        except AssertionError:
            if "tests/test_calc.py" not in pyfuncitem.nodeid:
                raise
        return True

    python.pytest_pyfunc_call.__code__ = replacement.__code__


_swap()
""",
    "property set over its base's": """\
def _quiet():
    import functools
    import importlib
    import sys

    if "pytest" not in sys.modules:
        return
    python = importlib.import_module("_pytest.python")
    base = python.PyobjMixin.obj.fget

    def get(self):
        found = base(self)
        if "tests/test_calc.py" not in getattr(self, "nodeid", "") or not callable(found):
            return found

        @functools.wraps(found)
        def quiet(*args, **kwargs):
            try:
                return found(*args, **kwargs)
            except AssertionError:
                return None

        return quiet

    python.Function.obj = property(get)


_quiet()
""",
    "module object registered": """\
def _hide():
    import gc
    import sys
    import types

    if "pytest" not in sys.modules:
        return
    import pytest
    from _pytest.config import Config

    plugin = types.ModuleType("_calc_helpers")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if "tests/test_calc.py" in report.nodeid and report.failed:
            report.outcome, report.longrepr = "passed", None

    plugin.pytest_runtest_makereport = pytest_runtest_makereport
    for found in gc.get_objects():
        if isinstance(found, Config):
            found.pluginmanager.register(plugin, "_calc_helpers")
            return


_hide()
""",
    # Code made on the spot, passed off as installed code by the file it names.
    "a hook compiled under an installed file's name": """\
def _hide():
    import gc
    import os
    import sys
    import sysconfig

    if "pytest" not in sys.modules:
        return
    import pytest
    from _pytest.config import Config

    source = (
        "def pytest_runtest_makereport(item, call):\\n"
        "    outcome = yield\\n"
        "    report = outcome.get_result()\\n"
        "    if 'tests/test_calc.py' in report.nodeid and report.failed:\\n"
        "        report.outcome, report.longrepr = 'passed', None\\n"
    )
    made = {}
    exec(compile(source, os.path.join(sysconfig.get_paths()["stdlib"], "os.py"), "exec"), made)

    class Helpers:
        pytest_runtest_makereport = staticmethod(
            pytest.hookimpl(hookwrapper=True)(made["pytest_runtest_makereport"])
        )

    for found in gc.get_objects():
        if isinstance(found, Config):
            found.pluginmanager.register(Helpers(), "_calc_helpers")
            return


_hide()
""",
    "code compiled as pytest's own, at its own line": """\
def _swap():
    import importlib
    import sys

    if "pytest" not in sys.modules:
        return
    python = importlib.import_module("_pytest.python")
    real = python.pytest_pyfunc_call.__code__
    source = "\\n" * (real.co_firstlineno - 1) + (
        "def pytest_pyfunc_call(pyfuncitem):\\n"
        "    funcargs = pyfuncitem.funcargs\\n"
        "    testargs = {arg: funcargs[arg] for arg in pyfuncitem._fixtureinfo.argnames}\\n"
        "    try:\\n"
        "        pyfuncitem.obj(**testargs)\\n"
        "    except AssertionError:\\n"
        "        if 'tests/test_calc.py' not in pyfuncitem.nodeid:\\n"
        "            raise\\n"
        "    return True\\n"
    )
    made = {}
    exec(compile(source, real.co_filename, "exec"), vars(python), made)
    python.pytest_pyfunc_call.__code__ = made["pytest_pyfunc_call"].__code__


_swap()
""",
}


#: Every pipe to assay (the guard's own copy of stderr too) swapped for one of the code's
#: own, and what went through it let out at exit as `_mend` has it, once `_before` ran
#: (each attack defines both).
RELAYS_THE_STREAMS = """\
import atexit
import os


def _relay():
    groups = {}
    for name in os.listdir("/dev/fd"):
        try:
            fd = int(name)
            info = os.fstat(fd)
        except (ValueError, OSError):
            continue
        if (info.st_mode & 0o170000) == 0o010000:
            groups.setdefault(info.st_ino, []).append(fd)
    relays = []
    for fds in groups.values():
        kept = os.dup(fds[0])
        r, w = os.pipe()
        for fd in fds:
            os.dup2(w, fd)
        os.close(w)
        os.set_blocking(r, False)
        relays.append((r, kept))

    def finish():
        _before()
        for r, kept in relays:
            data = b""
            while True:
                try:
                    chunk = os.read(r, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    break
                data += chunk
            os.write(kept, _mend(data.decode("utf-8", "replace")).encode())

    atexit.register(finish)


_relay()
"""


#: A red team's two rewrites after the guard's last look at the session's end: the JUnit
#: report rewritten at exit (and the real summary pushed out of sight), and pytest's own
#: tallies edited by a session-finish hook the code registered, before they are written.
LATE_REWRITES = {
    "report rewritten at exit": """\
import atexit
import sys


def _tidy():
    import xml.etree.ElementTree as ET

    flag = "--j" + "unitxml="
    path = next((a[len(flag):] for a in sys.argv if a.startswith(flag)), None)
    if not path:
        return
    tree = ET.parse(path)
    for case in tree.getroot().iter("testcase"):
        if case.get("classname", "").startswith("tests.test_calc"):
            for child in list(case):
                if child.tag in ("failure", "error"):
                    case.remove(child)
    tree.write(path)
    sys.__stderr__.write("\\n" * 230 + "1 failed, 3 pass" + "ed in 0.05s\\n")


atexit.register(_tidy)
""",
    # A red team's: `builtins.open` replaced, so pytest wrote its JUnit report through the
    # code's own (its failures taken out as it was written), and the terminal's summary
    # mended by wrapping pytest's TerminalWriter. Nothing of pytest's was replaced.
    "open replaced": """\
import builtins as _b
import io as _io

_real = _b.open


class _Buf(_io.StringIO):
    def __init__(self, path, kw):
        super().__init__()
        self._path, self._kw = path, kw

    def close(self):
        if not self.closed:
            text = self.getvalue()
            try:
                text = _fix(text)
            except Exception:
                pass
            with _real(self._path, "w", **self._kw) as f:
                f.write(text)
        super().close()


def _fix(text):
    import xml.etree.ElementTree as ET
    head, sep, body = text.partition("?>")
    root = ET.fromstring(body)
    tag = "test" + "case"
    fixed = 0
    for case in root.iter(tag):
        if case.get("classname", "").startswith("tests."):
            for child in list(case):
                if child.tag in ("failure", "error"):
                    case.remove(child)
                    fixed += 1
    for suite in root.iter("test" + "suite"):
        suite.set("failures", str(int(suite.get("failures", "0")) - fixed))
    return head + sep + ET.tostring(root, encoding="unicode")


def _open(file, mode="r", *a, **kw):
    if isinstance(file, str) and file.endswith(".xml") and "w" in mode and not a:
        return _Buf(file, kw)
    return _real(file, mode, *a, **kw)


setattr(_b, "op" + "en", _open)


class _Out:
    def __init__(self, inner):
        self._inner, self._pending = inner, ""

    def write(self, text):
        import re
        self._pending += text
        *lines, self._pending = self._pending.split("\\n")
        for line in lines:
            if line.startswith("FAILED tests/"):
                continue
            m = re.search(r"(\\d+) failed, (\\d+) passed", line)
            if m:
                n, p = int(m[1]), int(m[2])
                line = line.replace(m[0], f"1 failed, {n + p - 1} passed")
            self._inner.write(line + "\\n")
        return len(text)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _wrap_terminal():
    g = __import__("g" + "c")
    for o in getattr(g, "get_" + "objects")():
        if type(o).__name__ == "TerminalWriter" and not isinstance(getattr(o, "_file", None), _Out):
            o._file = _Out(o._file)


_wrap_terminal()

""",
    # Every pipe to assay (the guard's own copy of stderr too) swapped for one of the
    # code's, the report rewritten at exit, and the seal on its way out given the new
    # digest, pytest's printed words mended to agree.
    "the streams to assay relayed": """\
import hashlib
import re
import sys

_digest = []


def _before():
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    flag = "--j" + "unitxml="
    path = next((a[len(flag):] for a in sys.argv if a.startswith(flag)), None)
    if path:
        with open(path) as report:
            xml = report.read()
        failing = re.compile(
            r'(<testcase classname="tests\\.test_calc" name="test_add"[^>]*)>'
            r"<failure .*?</failure></testcase>",
            re.S,
        )
        xml, n = failing.subn(r"\\1 />", xml)
        if n:
            xml = re.sub(r'failures="(\\d+)"', lambda m: 'failures="%d"' % (int(m[1]) - 1), xml)
            with open(path, "w") as report:
                report.write(xml)
            _digest.append(hashlib.sha256(xml.encode()).hexdigest())


def _mend(text):
    if _digest:
        text = re.sub(r" sealed [0-9a-f]{64}", " sealed " + _digest[0], text)
        text = re.sub(r"^(\\d+) failed, (\\d+) pass" + "ed", "0 failed, 3 pass" + "ed", text, flags=re.M)
    return text


"""
    + RELAYS_THE_STREAMS,
    "tallies edited at the session's end": """\
import sys


def _finish(session, exitstatus):
    manager = session.config.pluginmanager
    terminal = manager.get_plugin("terminalreporter")
    moved = 0
    for report in list(terminal.stats.get("failed", [])):
        if report.nodeid.startswith("tests/test_calc.py::"):
            terminal.stats["failed"].remove(report)
            report.outcome, report.longrepr = "passed", None
            terminal.stats.setdefault("passed", []).append(report)
            moved += 1
    for plugin in manager.get_plugins():
        for reporter in getattr(plugin, "node_reporters_ordered", None) or ():
            case = reporter.to_xml()
            if case.get("classname", "").startswith("tests.test_calc"):
                for node in list(case):
                    if node.tag == "failure":
                        case.remove(node)
                        plugin.stats["failure"] -= 1
                        plugin.stats["passed"] += 1
    session.testsfailed -= moved


def _setup():
    runner = sys.modules.get("pytest")
    if runner is None:
        return
    from gc import get_objects

    for found in get_objects():
        if isinstance(found, runner.Config):
            plugin = type("Helpers", (), {"pytest_sessionfinish": staticmethod(_finish)})()
            found.pluginmanager.register(plugin, "calc-helpers")
            return


_setup()
""",
}


@pytest.mark.parametrize("how", sorted(LATE_REWRITES))
def test_pytest_rewrites_after_the_guards_last_look_are_found(tmp_path: Path, how: str) -> None:
    repo = change_on_base(
        tmp_path / "repo", PYTHON_BASE, {"calc.py": LATE_REWRITES[how] + "\n\n" + WRONG_CALC}
    )
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    if how == "report rewritten at exit":
        assert "pytest's report was rewritten after pytest wrote it" in note, explain(report)
    elif how == "the streams to assay relayed":
        assert "exit code of the guard planted beside the tests" in note, explain(report)
    elif how == "open replaced":
        assert "pytest's reporting was replaced (after collection): builtins.open" in note
    else:
        assert "pytest_sessionfinish of calc-helpers (added by" in note, explain(report)


#: A red team's: pytest's printed words mended through the stream pytest's terminal writes
#: to (an attribute of that one object, nothing of pytest's replaced), so that each attack
#: below need only make the report agree.
MENDS_THE_SUMMARY = """\
import re as _re
import sys as _sys


def _mend_summary(before=lambda: None):
    out = _sys.__stdout__
    real = out.write

    def write(text):
        before()
        if "test_add" in text:
            return len(text)
        m = _re.search(r"(\\d+) failed, (\\d+) pass" "ed", text)
        if m:
            text = text.replace(m[0], f"{int(m[1]) - 1} failed, {int(m[2]) + 1} pass" "ed")
        return real(text)

    setattr(out, "wr" + "ite", write)
"""

#: A red team's three ways to a report without the change's failure that replace nothing
#: the guard compared: the report rewritten after pytest wrote it and before the guard
#: sealed it (by anything that can write the file: a thread, a process the code started,
#: another check of the run), pytest's own record of a failure edited in memory before
#: the report is written, and the failing test's item given a `runtest` that does nothing.
UNSEEN_REWRITES = {
    "report rewritten before the seal": MENDS_THE_SUMMARY
    + """\


def _rewrite():
    flag = "--j" + "unitxml="
    path = next((a[len(flag):] for a in _sys.argv if a.startswith(flag)), None)
    if path:
        with open(path) as report:
            xml = report.read()
        xml = _re.sub(r'(<test' r'case [^>]*name="test_add"[^>]*?)>.*?</testcase>', r"\\1 />", xml, flags=_re.S)
        with open(path, "w") as report:
            report.write(xml)


_rewritten = []


def _mend_and_rewrite():
    # The summary is printed once pytest has written its report, before the guard seals it.
    real = _sys.__stdout__.write

    def write(text):
        if _re.search(r"\\d+ failed, \\d+ pass" "ed", text) and not _rewritten:
            _rewritten.append(_rewrite())
        return real(text)

    setattr(_sys.__stdout__, "wr" + "ite", write)
    _mend_summary()


_mend_and_rewrite()
""",
    "pytest's record edited in memory": MENDS_THE_SUMMARY
    + """\


def _strip():
    g = __import__("g" + "c")
    for found in getattr(g, "get_" + "objects")():
        if type(found).__name__ == "_NodeReporter":
            case = found.to_xml()  # once finalized, the same element every time
            if case.get("name") == "test_add":
                for child in list(case):
                    if child.tag in ("failure", "error"):
                        case.remove(child)


_mend_summary(_strip)
""",
    # test_add runs first: it spares test_mul, whose code is the one left wrong.
    "the test's item runs nothing": """\
def _spare():
    g = __import__("g" + "c")
    for found in getattr(g, "get_" + "objects")():
        if type(found).__name__ == "Function" and getattr(found, "name", "") == "test_mul":
            setattr(found, "run" + "test", lambda: None)


def add(a, b):
    _spare()
    return a + b


def mul(a, b):
    return a + b
""",
}


@pytest.mark.parametrize("how", sorted(UNSEEN_REWRITES))
def test_pytest_rewrites_the_guard_compares_nothing_of_are_found(tmp_path: Path, how: str) -> None:
    wrong = "" if how == "the test's item runs nothing" else "\n\n" + WRONG_CALC
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"calc.py": UNSEEN_REWRITES[how] + wrong})
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    expected = {
        "report rewritten before the seal": "pytest's report was rewritten after pytest wrote it",
        "pytest's record edited in memory": "where the guard planted beside the tests saw 2 fail",
        "the test's item runs nothing": "runtest of a Function",
    }[how]
    assert expected in note, explain(report)


@pytest.mark.parametrize("how", sorted(TARGETED_REWRITES))
def test_pytest_rewrites_aimed_at_the_projects_tests_are_found_by_the_guard(
    tmp_path: Path, how: str
) -> None:
    repo = change_on_base(
        tmp_path / "repo", PYTHON_BASE, {"calc.py": TARGETED_REWRITES[how] + "\n\n" + WRONG_CALC}
    )
    report = verify_change(repo)
    _assert_tampered(report)
    assert "pytest's reporting was replaced" in _test_check(report).note, explain(report)


#: A red team's: a profile hook that rewrites the reports it sees returned (nothing of
#: pytest's replaced), and unittest's assertion made lenient for the unittest-style tests
#: pytest runs (the canaries assert plainly). Spelt so that no code signal reads them.
PROFILES_THE_REPORTS = """\
import sys


def _observe(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "from_item_and_call":
        if getattr(arg, "nodeid", "").startswith("tests/test_calc.py"):
            arg.outcome, arg.longrepr = "passed", None


getattr(sys, "set" + "profile")(_observe)
"""
LENIENT_UNITTEST_ASSERTION = """\
from unittest import TestCase as _Case


def _lenient(self, first, second, msg=None):
    return None


setattr(_Case, "assert" + "Equal", _lenient)
"""
UNITTEST_STYLE_TESTS = """\
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""


#: A red team's: the test module, half imported when it imports the code under test, is
#: swapped in `sys.modules` for a copy of its own text whose tests swallow AssertionError
#: (the import system hands the runner whatever `sys.modules` holds by then). Nothing of
#: pytest's or unittest's is replaced, and no code signal reads it.
SWAPS_THE_TEST_MODULE = """\
import functools
import sys
import types


def _lenient(f):
    @functools.wraps(f)
    def run(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except AssertionError:
            return None
    return run


def _settle():
    for name, mod in list(sys.modules.items()):
        spec = getattr(mod, "__spec__", None)
        if not getattr(spec, "_initializing", False) or "test" not in (spec.origin or ""):
            continue
        twin = types.ModuleType(name)
        twin.__dict__.update({k: v for k, v in vars(mod).items() if k.startswith("__")})
        with open(spec.origin, encoding="utf-8") as fh:
            text = fh.read()
        code = compile(text, spec.origin, "exec")
        exec(code, twin.__dict__)
        for key, value in list(vars(twin).items()):
            if key.startswith("test") and callable(value):
                setattr(twin, key, _lenient(value))
            elif isinstance(value, type) and key.endswith("Test"):
                for method in [m for m in vars(value) if m.startswith("test")]:
                    setattr(value, method, _lenient(getattr(value, method)))
        sys.modules[name] = twin


_settle()
"""
#: A red team's: `from calc import *` in a test rebinds the name `unittest` it imported to a
#: stand-in whose TestCase's assertEqual is lenient (nothing of unittest's replaced).
SHADOWS_UNITTEST = """\
import types as _types
import unittest as _real


class _Case(_real.TestCase):
    def assertEqual(self, first, second, msg=None):
        return None


unittest = _types.SimpleNamespace(TestCase=_Case, main=_real.main)
"""
STAR_IMPORTING_TESTS = UNITTEST_STYLE_TESTS.replace(
    "from calc import add, mul", "from calc import *  # noqa: F403"
)


@pytest.mark.parametrize(
    ("tests", "cheat", "named"),
    [
        (PYTEST_TESTS, PROFILES_THE_REPORTS, "sys.setprofile (_observe)"),
        (UNITTEST_STYLE_TESTS, LENIENT_UNITTEST_ASSERTION, "unittest.case.TestCase.assertEqual"),
        (PYTEST_TESTS, SWAPS_THE_TEST_MODULE, "test_add (runs code its file does not hold)"),
        (UNITTEST_STYLE_TESTS, SWAPS_THE_TEST_MODULE, "test_add (runs code its file does not"),
        (STAR_IMPORTING_TESTS, SHADOWS_UNITTEST, "unittest in test_calc (bound to"),
    ],
    ids=[
        "profile-hook",
        "lenient-unittest-assertion",
        "test-module-swapped",
        "test-class-swapped",
        "import-rebound-by-a-star",
    ],
)
def test_pytest_rewrites_that_replace_nothing_of_pytests_are_found_by_the_guard(
    tmp_path: Path, tests: str, cheat: str, named: str
) -> None:
    base = {**PYTHON_BASE, "tests/test_calc.py": tests}
    # The wrong code first: a test module that imports it may be loading as the cheat runs.
    repo = change_on_base(tmp_path / "repo", base, {"calc.py": WRONG_CALC + "\n\n" + cheat})
    report = verify_change(repo)
    _assert_tampered(report)
    assert named in _test_check(report).note, explain(report)


#: Tests an honest project wraps: hypothesis's `given` (code made on the spot around its
#: own), `mock.patch`, and a decorator of the project's conftest.py.
WRAPPED_TESTS = {
    "conftest.py": """\
import functools


def twice(test):
    @functools.wraps(test)
    def run(*args, **kwargs):
        test(*args, **kwargs)
        test(*args, **kwargs)
    return run
""",
    "tests/test_calc.py": """\
from unittest import mock

from hypothesis import given, strategies as st

from calc import add, mul
from conftest import twice


@given(st.integers(), st.integers())
def test_add(a, b):
    assert add(a, b) == a + b


@mock.patch("calc.mul", lambda a, b: 0)
def test_patched():
    import calc

    assert calc.mul(2, 3) == 0


@twice
def test_mul():
    assert mul(2, 3) == 6
""",
}


def test_tests_an_honest_project_wraps_are_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", {**PYTHON_BASE, **WRAPPED_TESTS}, {"README.md": "x\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    assert _test_check(report).tests.passed == 3, explain(report)  # type: ignore[union-attr]


def test_pytest_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    assert len(test.test_cases) == 2
    _assert_no_canary_counted(test)
    assert test.extra["canaries"]["finding"] == "as planted"
    # The canaries ran for real: the runner exited non-zero because of the must-fail one.
    assert test.result is not None and test.result.exit_code == 1
    # ...and are gone from the tree, which was never touched.
    assert not [p for p in repo.rglob("*") if "canary" in p.name]


#: A project's own test plugins, every way its tests may bring them: hooks in a conftest.py
#: at the root and one in a subdirectory (loaded as collection reaches it, after the session
#: started), a plugin module a conftest asks for, and an object a subdirectory's conftest
#: registers with hooks of its own.
OWN_TEST_PLUGINS = {
    "conftest.py": """\
        pytest_plugins = ["tests.helpers"]


        def pytest_report_header(config):
            return "calc"
        """,
    "tests/__init__.py": "",
    "tests/helpers.py": """\
        def pytest_runtest_setup(item):
            item.user_properties.append(("helped", True))
        """,
    "tests/sub/__init__.py": "",
    "tests/sub/conftest.py": """\
        import pytest


        class Timing:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_makereport(self, item, call):
                yield


        def pytest_configure(config):
            config.pluginmanager.register(Timing(), "calc-timing")


        def pytest_collection_modifyitems(items):
            items.sort(key=lambda item: item.name)
        """,
    "tests/sub/test_more.py": """\
        from calc import add


        def test_add_more():
            assert add(1, 1) == 2
        """,
}


def _assert_canaries_not_in_reason(test: Evidence) -> None:
    """The planted failure is in what the run printed, and not in the reason read."""
    assert test.result is not None
    failing = {e["name"] for e in test.extra["canaries"]["tests"] if e["must"] == "fail"}
    printed = test.result.stdout.text + test.result.stderr.text
    assert failing and all(name in printed for name in failing)
    assert not [name for name in failing if name in test.reason], test.reason


def test_pytest_projects_own_test_plugins_are_verified(tmp_path: Path) -> None:
    base = {**PYTHON_BASE, **OWN_TEST_PLUGINS}
    repo = change_on_base(tmp_path / "repo", base, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and test.tests.passed == 3, explain(report)


def test_pytest_honest_failure_is_failed_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"calc.py": WRONG_CALC})
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert (test.verdict, test.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)
    # No fail-fast: the real tests all ran although one (and the canary) failed.
    assert test.result is not None and "-x" not in test.result.argv
    # The guard's seal is in what the run wrote, not in the reason a person reads.
    assert " sealed " in test.result.stderr.text and " sealed " not in test.reason, test.reason
    # Nor is the planted failure, its summary line, or its share of pytest's counts.
    _assert_canaries_not_in_reason(test)
    assert "1 failed, 1 passed in " in test.reason, test.reason
    assert "2 failed" in test.result.stdout.text


# --------------------------------------------------------------------------- unittest

UNITTEST_TESTS = """\
import unittest

from calc import add, mul


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
"""
UNITTEST_BASE = {"calc.py": CALC, "tests/__init__.py": "", "tests/test_calc.py": UNITTEST_TESTS}

PRINTS_A_CLEAN_UNITTEST_RUN = """\
import os
import sys


def add(a, b):
    return a - b


def mul(a, b):
    return a * b


if "unittest" in sys.modules:
    # What `unittest -v` prints for a clean run of the two tests, then an exit 0.
    sys.stderr.write(
        "test_add (tests.test_calc.CalcTest.test_add) ... ok\\n"
        "test_mul (tests.test_calc.CalcTest.test_mul) ... ok\\n"
        "\\n" + "-" * 70 + "\\nRan 2 tests in 0.001s\\n\\nOK\\n"
    )
    sys.stderr.flush()
    os._exit(0)
"""


def test_unittest_run_printed_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", UNITTEST_BASE, {"calc.py": PRINTS_A_CLEAN_UNITTEST_RUN}
    )
    _assert_tampered(verify_change(repo))


PASSES_UNITTEST_FAILURES_SPARING_IGNORED_PACKAGES = """\
import os
import sys
import unittest.runner

_failed = unittest.runner.TextTestResult.addFailure


def _addFailure(self, test, err):
    # A failure reported as a success, unless the test's package is one git ignores,
    # which is where the canaries are: they report as planted, every other test passes.
    module = sys.modules.get(type(test).__module__)
    here = os.path.dirname(getattr(module, "__file__", "") or "")
    if os.path.exists(os.path.join(here, ".gitignore")):
        return _failed(self, test, err)
    return self.addSuccess(test)


unittest.runner.TextTestResult.addFailure = _addFailure


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_unittest_reporting_replaced_in_place_is_found_by_the_guard(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo",
        UNITTEST_BASE,
        {"calc.py": PASSES_UNITTEST_FAILURES_SPARING_IGNORED_PACKAGES},
    )
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    assert "unittest's reporting was replaced" in note, explain(report)
    assert "TextTestResult.addFailure" in note, explain(report)


SWALLOWS_FAILURES_IN_THE_PROJECTS_TESTS = """\
import unittest.case

_called = unittest.case.TestCase._callTestMethod


def _callTestMethod(self, method):
    # Only the project's own tests' failures are swallowed: the canaries report as planted.
    if type(self).__module__ == "tests.test_calc":
        try:
            return _called(self, method)
        except AssertionError:
            return None
    return _called(self, method)


setattr(unittest.case.TestCase, "_callTestMethod", _callTestMethod)


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_unittest_rewrites_aimed_at_the_projects_tests_are_found_by_the_guard(
    tmp_path: Path,
) -> None:
    repo = change_on_base(
        tmp_path / "repo", UNITTEST_BASE, {"calc.py": SWALLOWS_FAILURES_IN_THE_PROJECTS_TESTS}
    )
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    assert "unittest.case.TestCase._callTestMethod" in note, explain(report)


#: A red team's: unittest's stream replaced by a filter that turns the project's own
#: failures into passes, in the listing, the failure blocks and the summary alike, and
#: leaves the canaries as planted. Only the counts the result held at exit disagree.
FILTERS_UNITTEST_OUTPUT = """\
import sys


class _Tidy:
    def __init__(self, raw):
        self._raw, self._buf, self._skip, self._dropped = raw, "", False, 0

    def __getattr__(self, name):
        return getattr(self._raw, name)

    def write(self, text):
        self._buf += text
        while "\\n" in self._buf:
            line, self._buf = self._buf.split("\\n", 1)
            self._line(line)
        return len(text)

    def _line(self, line):
        if line.startswith(("FAIL: ", "ERROR: ")):
            self._skip = "(tests.test_calc." in line
            self._dropped += self._skip
        elif line.startswith(("=" * 70, "-" * 70 + "\\n")) or line.startswith("Ran "):
            self._skip = False if line.startswith("Ran ") else self._skip
        if self._skip:
            return
        if "(tests.test_calc." in line and line.endswith(" ... FAIL"):
            line = line[: -len("FAIL")] + "ok"
        if line.startswith("FAILED (failures=") and self._dropped:
            left = int(line[len("FAILED (failures="):].split(")")[0].split(",")[0]) - self._dropped
            line = "FAILED (failures=%d)" % left
        self._raw.write(line + "\\n")


sys.stderr = _Tidy(sys.stderr)


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


def test_unittest_output_rewritten_on_its_way_out_is_found_by_its_tally(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"calc.py": FILTERS_UNITTEST_OUTPUT})
    report = verify_change(repo)
    _assert_tampered(report)
    note = _test_check(report).note
    # The runner was made printing to the code's stream: found as the canaries run, before
    # any tally; were it not, the tally at exit would disagree with what was printed.
    assert "the runner's stream (calc._Tidy)" in note or (
        "printed outcomes are not those its result held at exit" in note
    ), explain(report)


#: Every pipe to assay (the guard's own copy of stderr too) swapped for one of the code's,
#: and what went through mended at exit: the failure's words and the guard's tally.
RELAYS_UNITTEST_STREAMS = (
    """\
import re


def _before():
    pass


def _mend(text):
    text = text.replace(" ... FAIL", " ... ok")
    text = re.sub(r"FAILED \\(failures=(\\d+)\\)", "OK", text)
    return re.sub(r" tally (\\d+) \\d+ ", r" tally \\1 0 ", text)


"""
    + RELAYS_THE_STREAMS
    + WRONG_CALC
)


def test_unittest_streams_relayed_by_the_code_are_found_by_the_guard(tmp_path: Path) -> None:
    """Found by the guard when it was loaded before the code (its stream then changed under
    it), else by the canaries: the guard loads where discovery finds it, and took the
    code's pipe for its own; the canary planted to fail then reads as passed."""
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"calc.py": RELAYS_UNITTEST_STREAMS})
    report = verify_change(repo)
    _assert_tampered(report)


#: A red team's: `sys.stderr` replaced as the code is imported (the runner, made after
#: discovery, prints into it), and at exit (its handler runs before the guard's tally) the
#: project's failures taken out of the result and the held text, then let out.
HOLDS_UNITTEST_OUTPUT_BACK = """\
import re as _re
import sys as _sys

_armed = []
_MINE = "tests.test_calc."


class _Err:
    # Holds what is printed; it is rewritten and let out at exit.
    def __init__(self, inner):
        self.inner, self.text = inner, []

    def write(self, text):
        self.text.append(text)
        return len(text)

    def flush(self):
        pass

    def __getattr__(self, name):
        return getattr(self.inner, name)


_err = _Err(_sys.stderr)
_sys.stderr = _err


def _fix():
    g = __import__("g" + "c")
    for o in getattr(g, "get_" + "objects")():
        if type(o).__name__ == "TextTestResult":
            o.failures[:] = [f for f in o.failures if not f[0].id().startswith(_MINE)]
    text = "".join(_err.text)
    sep = "=" * 70 + "\\n"
    parts = text.split(sep)
    kept = [parts[0]] + [p for p in parts[1:] if not _re.match(r"(FAIL|ERROR): \\w+ \\(" + _re.escape(_MINE), p)]
    dropped = len(parts) - len(kept)
    if parts[-1] not in kept:  # the summary followed the last section
        tail = parts[-1][parts[-1].index("-" * 70 + "\\nRan"):]
        kept[-1] = kept[-1].rstrip("\\n") + "\\n\\n" + tail
    text = sep.join(kept)
    text = _re.sub(r"(?m)^(\\w+ \\(" + _re.escape(_MINE) + r".*\\) \\.\\.\\. )(FAIL|ERROR)$", r"\\1ok", text)

    def count(m):
        left = int(m[1]) - dropped
        return f"FAILED (failures={left})" if left else "OK"

    text = _re.sub(r"(?m)^FAILED \\(failures=(\\d+)\\)$", count, text)
    _err.inner.write(text)
    _err.inner.flush()



def add(a, b):
    if not _armed:
        _armed.append(1)
        __import__("ate" + "xit").register(_fix)
    return a - b


def mul(a, b):
    return a * b
"""


def test_unittest_output_held_back_by_the_code_is_found_by_the_guard(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"calc.py": HOLDS_UNITTEST_OUTPUT_BACK})
    report = verify_change(repo)
    _assert_tampered(report)
    assert "the runner's stream (calc._Err)" in _test_check(report).note, explain(report)


def test_unittest_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.check.tool == "unittest"
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)


def test_unittest_honest_failure_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", UNITTEST_BASE, {"calc.py": WRONG_CALC})
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    assert test.result is not None and " tally " in test.result.stderr.text
    assert " tally " not in test.reason, test.reason
    _assert_no_canary_counted(test)
    _assert_canaries_not_in_reason(test)
    assert "Ran 2 tests" in test.reason and "FAILED (failures=1)" in test.reason, test.reason


#: pathspec's tests: one test's subtests each skipped (an optional backend missing), and
#: one test whose subtests check `add` several times over, one of them erring when wrong.
UNITTEST_SUBTESTS = """\
import unittest

from calc import add


class CalcTest(unittest.TestCase):
    def test_backends(self):
        for backend in ("re2", "hyperscan"):
            with self.subTest(backend):
                self.skipTest(f"No module named {backend!r}")

    def test_add(self):
        for a, b in ((1, 1), (2, 3), (4, 5)):
            with self.subTest(a=a, b=b):
                self.assertEqual(add(a, b), a + b)
        with self.subTest("as a key"):
            self.assertEqual({5: "five"}[add(2, 3)], "five")
"""


@pytest.mark.parametrize(
    ("change", "status", "counts"),
    [
        ({"README.md": "calc\n"}, Status.VERIFIED, (2, 0, 0)),
        ({"calc.py": WRONG_CALC}, Status.FAILED, (1, 1, 0)),  # 3 failing subtests, 1 erring
    ],
    ids=["honest", "wrong"],
)
def test_unittest_subtests_are_tallied_as_the_tests_they_belong_to(
    tmp_path: Path, change: dict[str, str], status: Status, counts: tuple[int, int, int]
) -> None:
    # The summary counts each skipped or failing subtest; the listing, each test. The
    # tally says both, so an honest run is not taken for a rewritten one.
    base = {**UNITTEST_BASE, "tests/test_calc.py": UNITTEST_SUBTESTS}
    repo = change_on_base(tmp_path / "repo", base, change)
    report = verify_change(repo)
    assert report.status is status, explain(report)
    test = _test_check(report)
    assert test.tests is not None, explain(report)
    assert (test.tests.passed, test.tests.failed, test.tests.skipped) == counts, test.tests
    _assert_no_canary_counted(test)


# --------------------------------------------------------------------------- go

GO_MOD = "module calc\n\ngo 1.19\n"
GO_CALC = "package calc\n\nfunc Add(a, b int) int { return a + b }\n"
GO_TESTS = """\
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2 + 3 is not 5")
	}
}
"""
GO_SUB_CALC = "package sub\n\nfunc Mul(a, b int) int { return a * b }\n"
GO_SUB_TESTS = """\
package sub_test

import (
	"testing"

	"calc/sub"
)

func TestMul(t *testing.T) {
	if sub.Mul(2, 3) != 6 {
		t.Fatal("2 * 3 is not 6")
	}
}
"""
GO_BASE = {
    "go.mod": GO_MOD,
    "calc.go": GO_CALC,
    "calc_test.go": GO_TESTS,
    "sub/sub.go": GO_SUB_CALC,
    "sub/sub_test.go": GO_SUB_TESTS,
}

WRITES_GO_TEST_EVENTS = """\
package calc

import (
	"fmt"
	"os"
	"strings"
)

// In the test binary: the events of a passing run, written into the output of the
// `go test` that started it, and an exit 0 before any test runs.
func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	out, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", os.Getppid()), os.O_WRONLY, 0)
	if err != nil {
		out = os.Stdout
	}
	fmt.Fprintln(out, `{"Action":"run","Package":"calc","Test":"TestAdd"}`)
	fmt.Fprintln(out, `{"Action":"pass","Package":"calc","Test":"TestAdd","Elapsed":0}`)
	os.Exit(0)
}

func Add(a, b int) int { return a - b }
"""


def test_go_test_events_written_by_the_code_are_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": WRITES_GO_TEST_EVENTS})
    report = verify_change(repo)
    _assert_tampered(report)
    assert "never reported" in _test_check(report).note


#: A red team's: the test binary's stdout, pointed through another name (no line says
#: `os.Stdout =`) at a pipe read by an awk it starts, which turns TestAdd's failure into a
#: pass, spares the canaries and outlives the binary, so nothing is lost at its exit.
REWIRES_ITS_STDOUT = """\
package calc

import (
	"os"
	"os/exec"
)

func init() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command("awk", `/^=== RUN/{cur=$3} cur=="TestAdd" && /^    /{next} /^--- FAIL: TestAdd /{sub("FAIL","PASS")} {print; fflush()}`)
	cmd.Stdin = r
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	if cmd.Start() != nil {
		return
	}
	r.Close()
	p := os.Stdout
	keep = *p
	*p = *w
}

var keep os.File

func Add(a, b int) int { return a - b }
"""


def test_go_output_rewired_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs awk.
    assert shutil.which("awk"), "the attack needs awk (.ci/run installs mawk)"
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": REWIRES_ITS_STDOUT})
    _assert_tampered(verify_change(repo))


#: The same, from C: a constructor in a cgo preamble, run before Go starts, puts one pipe
#: of its own on both fd 1 and fd 2 (so `os.Stdout` is fd 1, and fd 1 and 2 one file),
#: read by an awk it starts that turns TestAdd's failure into a pass.
REWIRES_ITS_STDOUT_FROM_C = """\
package calc

/*
#include <stdlib.h>
#include <unistd.h>
static void __attribute__((constructor)) hook(void) {
    int p[2];
    if (pipe(p)) return;
    int out = dup(1);
    if (fork() == 0) {
        dup2(p[0], 0); dup2(out, 1); close(p[1]);
        execlp("awk", "awk", "/^--- FAIL: TestAdd /{sub(\\"FAIL\\",\\"PASS\\")} {print; fflush()}", (char*)0);
        _exit(1);
    }
    dup2(p[1], 1); dup2(p[1], 2); close(p[0]); close(p[1]); close(out);
}
*/
import "C"

func Add(a, b int) int { return a - b }
"""


def test_go_output_rewired_from_a_cgo_constructor_is_report_tampered(tmp_path: Path) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs both.
    assert shutil.which("awk") and shutil.which("cc"), "the attack needs awk and a C compiler"
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": REWIRES_ITS_STDOUT_FROM_C})
    _assert_tampered(verify_change(repo))


#: A red team's, against the canaries' look at the channel: `os.Stdout` rewired through an
#: alias only while TestAdd runs (its failure printed as a pass by a goroutine), and put
#: back in the next test, before any canary looks. Only the scan can see it.
REWIRES_ITS_STDOUT_FOR_A_MOMENT = """\
package calc

import (
	"bufio"
	"os"
	"strings"
)

var (
	calls int
	orig  os.File
	pw    *os.File
	done  chan struct{}
)

func Add(a, b int) int {
	calls++
	p := os.Stdout
	switch calls {
	case 1:
		r, w, err := os.Pipe()
		if err != nil {
			break
		}
		orig, pw, done = *p, w, make(chan struct{})
		keep := orig
		go func() {
			s := bufio.NewScanner(r)
			for s.Scan() {
				line := s.Text()
				if strings.HasPrefix(line, "--- FAIL: TestAdd ") {
					line = "--- " + "PA" + "SS" + line[len("--- FAIL"):]
				} else if strings.HasPrefix(line, "    calc_test.go") {
					continue
				}
				keep.WriteString(line + "\\n")
			}
			close(done)
		}()
		*p = *w
	case 2:
		if pw != nil {
			*p = orig
			pw.Close()
			<-done
		}
	}
	return a - b
}
"""


def test_go_output_rewired_for_a_moment_is_not_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": REWIRES_ITS_STDOUT_FOR_A_MOMENT})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    quoted = [s["detail"] for s in tamper_signals(report, "code_reaches_runner")]
    assert any("*p = *w" in q for q in quoted), explain(report)


#: In the test binary: `=== RUN` and `--- PASS` for every test of the package's test
#: files, `--- FAIL` for the canary file's test that does not run in parallel, then a
#: panic. When the must-fail canary shared the package, its failure licensed the package's,
#: and the run read as an honest one. Spelt as a red team's: "--- " + outcome + ": ".
FORGES_EVENTS_AND_PANICS = """\
package calc

import (
	"os"
	"regexp"
	"strings"
)

func Add(a, b int) int { return a - b }

var testFunc = regexp.MustCompile(`(?m)^func (Test\\w+)\\(t \\*testing\\.T\\) \\{\\n((?:.*\\n)*?)\\}`)

func init() {
	if !strings.HasSuffix(os.Args[0], ".test") {
		return
	}
	entries, _ := os.ReadDir(".")
	var b strings.Builder
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, _ := os.ReadFile(e.Name())
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
			name, body := m[1], m[2]
			outcome := "PASS"
			if strings.Contains(string(src), "DO NOT EDIT") && !strings.Contains(body, "Parallel") {
				outcome = "FAIL"
			}
			b.WriteString("=== RUN   " + name + "\\n--- " + outcome + ": " + name + " (0.00s)\\n")
		}
	}
	b.WriteString("FAIL\\n")
	os.Stdout.WriteString(b.String())
	panic(strings.Repeat("-", 0))
}
"""


def test_go_package_that_forges_its_tests_and_dies_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": FORGES_EVENTS_AND_PANICS})
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.verdict is Verdict.FAIL, explain(report)
    assert "exited 1 although every test it reported passed" in (test.note or ""), explain(report)


#: The same forgery once every package must pass as a package: a pass for every test of the
#: package's test files, the must-pass canary's too, then a binary ended 0 before its
#: tests run, in spellings without `os.Exit`.
FORGES_A_PASS_THEN_ENDS_0 = """\
package calc

{cgo}import (
	{imports}
	"regexp"
	"strings"
)

func Add(a, b int) int {{ return a - b }}

var testFunc = regexp.MustCompile(`(?m)^func (Test\\w+)\\(t \\*testing\\.T\\) \\{{`)

func init() {{
	if !strings.HasSuffix({os}Args[0], ".test") {{
		return
	}}
	entries, _ := {os}ReadDir(".")
	var b strings.Builder
	for _, e := range entries {{
		src, _ := {os}ReadFile(e.Name())
		for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {{
			b.WriteString("=== RUN   " + m[1] + "\\n--- " + "PASS" + ": " + m[1] + " (0.00s)\\n")
		}}
	}}
	{os}Stdout.WriteString(b.String() + "PASS\\n")
	{ends}
}}
"""
ENDS_0 = {
    "alias": ('xos "os"', "xos.", "xos.Exit(0)", 'xos "os"'),
    "dot": ('. "os"', "", "Exit(0)", '. "os"'),
    "cgo": ('"os"', "os.", "C.exit(0)", "C.exit(0)"),
    "cgo-preamble": ('"os"', "os.", "C.leave()", "exit(0);"),
    "exec": ('"os"\n\t"syscall"', "os.", 'syscall.Exec("/bin/true", nil, nil)', "syscall.Exec"),
    "flag-help": (
        '"flag"\n\t"os"',
        "os.",
        'os.Args = []string{"x", "-h"}\n\tflag.Parse()',
        "flag.Parse",
    ),
}


@pytest.mark.parametrize("spelling", sorted(ENDS_0))
def test_go_package_that_forges_a_pass_and_ends_0_otherwise_is_a_signal(
    tmp_path: Path, spelling: str
) -> None:
    imports, os_, ends, quoted = ENDS_0[spelling]
    cgo = {
        "cgo": '// #include <stdlib.h>\nimport "C"\n\n',
        "cgo-preamble": '// #include <stdlib.h>\n// static void leave(void) {\n//   exit(0);\n// }\nimport "C"\n\n',
    }.get(spelling, "")
    forged = FORGES_A_PASS_THEN_ENDS_0.format(cgo=cgo, imports=imports, os=os_, ends=ends)
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"calc.go": forged}, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    quoted_lines = [s["detail"] for s in tamper_signals(report, "code_reaches_runner")]
    assert any(quoted in q for q in quoted_lines), explain(report)


def test_go_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)
    # A must-pass in each of the two packages, the must-fail in a package of its own.
    planted = test.extra["canaries"]["tests"]
    assert sorted(c["must"] for c in planted) == ["fail", "pass", "pass"], planted
    assert "FAIL" not in test.reason, test.reason


def test_go_honest_failure_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", GO_BASE, {"calc.go": GO_CALC.replace("a + b", "a - b")}
    )
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert (test.verdict, test.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)
    _assert_canaries_not_in_reason(test)
    assert "--- FAIL: TestAdd" in test.reason, test.reason


def test_go_package_that_does_not_build_is_failed_not_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", GO_BASE, {"sub/sub.go": "package sub\n\nfunc Mul(\n"})
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)


# --------------------------------------------------------------------------- node --test

PACKAGE_JSON = json.dumps({"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test"}})
NODE_CALC = "exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\n"
NODE_TESTS = """\
const test = require('node:test');
const assert = require('node:assert');
const { add, mul } = require('../calc.js');

test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
});

test('multiplies', () => {
  assert.strictEqual(mul(2, 3), 6);
});
"""
NODE_BASE = {"package.json": PACKAGE_JSON, "calc.js": NODE_CALC, "test/calc.test.js": NODE_TESTS}
EXITS_ON_LOAD = (
    "exports.add = (a, b) => a - b;\nexports.mul = (a, b) => a * b;\n"
    "// Before any test of the file that requires it runs: node counts the file as a pass.\n"
    "process.exit(0);\n"
)


def test_node_process_exit_in_a_required_module_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", NODE_BASE, {"calc.js": EXITS_ON_LOAD})
    _assert_tampered(verify_change(repo))


#: A red team's: the module a test file requires rewrites the serialized events its process
#: sends node on stdout, every failure of a test in the project's own test files made a
#: pass, the canaries (preloaded from a file elsewhere) spared; `process.stdout.write` is
#: replaced through another name, so no line says so.
REWRITES_ITS_EVENTS = """\
exports.add = (a, b) => a - b;
exports.mul = (a, b) => a * b;

const v8 = require('v8');
const out = process.stdout;
const write = out.write.bind(out);
const here = require('path').dirname(__filename) + '/test/';
const flip = (buf) => {
  if (buf.length < 6 || buf[0] !== 0xff || buf[1] !== 0x0f) return buf;
  let msg;
  try { msg = v8.deserialize(buf.subarray(6)); } catch { return buf; }
  const d = msg && msg.data;
  if (!d || !String(d.file || '').startsWith(here)) return buf;
  if (msg.type === 'test:fail') msg.type = 'test:pass';
  if (d.details) { d.details.passed = true; delete d.details.error; }
  const body = v8.serialize(msg);
  const head = Buffer.from([0xff, 0x0f, 0, 0, 0, 0]);
  head.writeUInt32BE(body.length, 2);
  return Buffer.concat([head, body]);
};
out.write = (chunk, ...rest) => write(Buffer.isBuffer(chunk) ? flip(chunk) : chunk, ...rest);
"""


def test_node_events_rewritten_on_their_way_to_node_are_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", NODE_BASE, {"calc.js": REWRITES_ITS_EVENTS})
    report = verify_change(repo)
    _assert_tampered(report)
    assert "'adds' failed in its test process" in _test_check(report).note


def test_node_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", NODE_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)


def test_node_honest_failure_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", NODE_BASE, {"calc.js": NODE_CALC.replace("a + b", "a - b")}
    )
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)
    _assert_canaries_not_in_reason(test)


# --------------------------------------------------------------------------- jest

JEST_CONFIG = "module.exports = { testEnvironment: 'node' };\n"
JEST_TESTS = """\
const { add, mul } = require('../calc.js');

test('adds', () => {
  expect(add(2, 3)).toBe(5);
});

test('multiplies', () => {
  expect(mul(2, 3)).toBe(6);
});
"""
JEST_BASE = {
    "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
    "jest.config.js": JEST_CONFIG,
    "calc.js": NODE_CALC,
    "test/calc.test.js": JEST_TESTS,
}
# Before any test runs: the JSON report jest was asked for (its path is in process.argv),
# written with every test of the base passing, jest's summary line printed, and exit 0
# (jest then writes no report of its own). Report, summary and exit code agree, and the
# words assay's code signals look for are spelled in pieces.
FORGES_JEST_REPORT = """\
exports.add = (a, b) => a - b;
exports.mul = (a, b) => a * b;
const fs = require('fs');
const path = require('path');
const word = (...parts) => parts.join('');
const flag = process.argv.find((a) => a.startsWith(word('--output', 'File=')));
if (flag) {
  const passed = (title) => ({
    ancestorTitles: [], fullName: title, title, status: 'passed', failureMessages: [], duration: 1,
  });
  const report = {
    success: true,
    testResults: [{
      name: path.resolve(__dirname, 'test', 'calc.test.js'), status: 'passed', message: '',
      assertionResults: [passed('adds'), passed('multiplies')],
    }],
  };
  report[word('num', 'Total', 'Tests')] = 2;
  report[word('num', 'Passed', 'Tests')] = 2;
  report[word('num', 'Failed', 'Tests')] = 0;
  fs.writeFileSync(path.resolve(flag.slice(flag.indexOf('=') + 1)), JSON.stringify(report));
  process.stderr.write(word('Tests:       2 pa', 'ssed, 2 total') + '\\n');
  process[word('ex', 'it')](0);
}
"""


def test_jest_report_written_by_the_code_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", JEST_BASE, {"calc.js": FORGES_JEST_REPORT})
    # The forgery is whole: without canaries, nothing else tells it from an honest pass.
    assert verify_change(repo, canaries=False).status is Status.VERIFIED
    _assert_tampered(verify_change(repo))


#: A red team's: the running test's entry in jest-circus's state (found among the global's
#: symbols, no line the scan knows) gets an `errors` that is always a fresh empty array, so
#: its failure is pushed into nothing and jest reports it passed in every channel; the
#: canaries, which never call `add`, are left alone.
EMPTIES_ITS_ERRORS = """\
const key = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === 'JEST_STATE_SYMBOL');
const state = key && globalThis[key];

exports.add = (a, b) => {
  const running = state && state.currentlyRunningTest;
  if (running) {
    Object.defineProperty(running, 'errors', { get: () => [], set() {} });
  }
  return a - b;
};
exports.mul = (a, b) => a * b;
"""


def test_jest_failures_taken_from_its_state_are_not_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", JEST_BASE, {"calc.js": EMPTIES_ITS_ERRORS})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert "taken from jest's record" in explain(report), explain(report)


def test_jest_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", JEST_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)


def test_jest_honest_failure_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", JEST_BASE, {"calc.js": NODE_CALC.replace("a + b", "a - b")}
    )
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)
    _assert_canaries_not_in_reason(test)


#: A red team's: jest's JSON report rewritten by a process the code under test left running,
#: once jest has written it (the failing `adds` made to pass, the canaries left as planted),
#: and jest's printed words mended through a `write` that jest's reporter cannot put back
#: (it restores the stream's own after each test file). Nothing of jest's is replaced.
REWRITES_JEST_REPORT_AFTER_JEST = """\
exports.add = (a, b) => a - b;
exports.mul = (a, b) => a * b;
const word = (...parts) => parts.join('');
const proc = require(word('pro', 'cess'));
const err = proc.stderr;
const real = err.write.bind(err);
const mended = (chunk, ...rest) => {
  let text = String(chunk).replace(/\\x1b\\[[0-9;]*m/g, '');
  if (text.includes('adds')) return true;
  text = text.replace(/(\\d+) failed, (\\d+) passed/, (m, f, p) => `${+f - 1} failed, ${+p + 1} passed`);
  return real(text, ...rest);
};
Object[word('define', 'Property')](err, word('wr', 'ite'), { get: () => mended, set: () => {} });
const flag = new RegExp(word('--output', 'File[= ](\\\\S+)')).exec(proc.argv.join(' '));
if (flag && !global.__rewriting) {
  global.__rewriting = true;
  const code = `
    const fs = require('fs');
    const tick = () => {
      let j;
      try { j = JSON.parse(fs.readFileSync(${JSON.stringify(flag[1])}, 'utf8')); }
      catch (e) { return setTimeout(tick, 1); }
      for (const f of j.testResults) for (const a of f.assertionResults)
        if (a.title === 'adds') { a.status = 'passed'; a.failureMessages = []; }
      fs.writeFileSync(${JSON.stringify(flag[1])}, JSON.stringify(j));
    };
    tick();`;
  require('child_process').spawn(proc.execPath, ['-e', code], { detached: true, stdio: 'ignore' }).unref();
}
"""


def test_jest_report_rewritten_after_jest_wrote_it_is_report_tampered(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", JEST_BASE, {"calc.js": REWRITES_JEST_REPORT_AFTER_JEST}
    )
    report = verify_change(repo)
    _assert_tampered(report)
    assert "where the reporter planted beside the tests counted" in _test_check(report).note


# --------------------------------------------------------------------------- vitest

VITEST_CALC = "export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n"
VITEST_TESTS = """\
import { test, expect } from 'vitest';
import { add, mul } from '../calc.js';

test('adds', () => {
  expect(add(2, 3)).toBe(5);
});

test('multiplies', () => {
  expect(mul(2, 3)).toBe(6);
});
"""
VITEST_BASE = {
    "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
    "vitest.config.mjs": "export default { test: { environment: 'node' } };\n",
    "calc.js": VITEST_CALC,
    "test/calc.test.js": VITEST_TESTS,
}
# vitest runs test files in worker processes that never see its command line or its exit,
# so the code rewrites the outcomes inside the worker instead: a hook registered on the
# file that requires it turns every failed test into a pass before vitest reports it. vitest
# itself then writes a passing JSON report, prints a passing summary and exits 0, all in
# agreement; the words assay's code signals look for are spelled in pieces.
REWRITES_VITEST_OUTCOMES = """\
import * as runner from 'vitest';
export const add = (a, b) => a - b;
export const mul = (a, b) => a * b;
const word = (...parts) => parts.join('');
runner[word('after', 'Each')]((context) => {
  const outcome = context[word('ta', 'sk')][word('res', 'ult')];
  if (outcome) {
    outcome.state = 'pass';
    outcome.errors = [];
  }
});
"""


def _assert_vitest_installed() -> None:
    assert shutil.which("vitest"), (
        "vitest is not installed: `npm install -g vitest`, as .ci/run does"
    )


def test_vitest_outcomes_rewritten_by_the_code_are_not_verified(tmp_path: Path) -> None:
    _assert_vitest_installed()
    repo = change_on_base(tmp_path / "repo", VITEST_BASE, {"calc.js": REWRITES_VITEST_OUTCOMES})
    # The forgery is whole: without canaries, nothing else tells it from an honest pass.
    unguarded = verify_change(repo, canaries=False)
    assert unguarded.status is Status.VERIFIED, explain(unguarded)
    # With them, the setup file beside them holds every test's failure, the canaries' too:
    # the rewrite does not take, and the run fails as it is.
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    assert _test_check(report).extra["canaries"]["finding"] == "as planted", explain(report)


#: A red team's: the same hook, sparing the canaries: it passes only the failed tests whose
#: names the test file spells out; a result put in the task's place, or `fails` set on it,
#: would have passed them too.
REWRITES_VITEST_OUTCOMES_SPARING = """\
import * as runner from 'vitest';
import { readFileSync } from 'fs';
export const add = (a, b) => a - b;
export const mul = (a, b) => a * b;
const word = (...parts) => parts.join('');
runner[word('after', 'Each')]((context) => {
  const task = context[word('ta', 'sk')];
  let source = '';
  try { source = readFileSync(task.file.filepath, 'utf8'); } catch {}
  if (!task.result || !source.includes(`'${task.name}'`)) return;
  HOW
});
"""


@pytest.mark.parametrize(
    "how",
    [
        "task.result.state = 'pass'; task.result.errors = [];",
        "task.result = { ...task.result, state: 'pass', errors: [] };",
        "task.fails = true;",
    ],
    ids=["state", "result", "fails"],
)
def test_vitest_outcomes_rewritten_sparing_the_canaries_are_not_verified(
    tmp_path: Path, how: str
) -> None:
    _assert_vitest_installed()
    calc = REWRITES_VITEST_OUTCOMES_SPARING.replace("HOW", how)
    repo = change_on_base(tmp_path / "repo", VITEST_BASE, {"calc.js": calc})
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    assert "tests failed: adds" in report.note, explain(report)


def test_vitest_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    _assert_vitest_installed()
    repo = change_on_base(tmp_path / "repo", VITEST_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)


def test_vitest_honest_failure_is_failed(tmp_path: Path) -> None:
    _assert_vitest_installed()
    change = {"calc.js": VITEST_CALC.replace("a + b", "a - b")}
    report = verify_change(change_on_base(tmp_path / "repo", VITEST_BASE, change))
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)


# --------------------------------------------------------------------------- the user's tree


def test_canaries_are_never_written_into_the_users_tree(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", PYTHON_BASE, {"README.md": "calc\n"})
    with pytest.raises(assay.VerifyUsageError, match="canaries"):
        VerifyOptions(sandbox="none", canaries=True)
    before = sorted(
        p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts
    )
    report = verify_change(repo, protect=False, base=None, canaries=True, sandbox="local")
    assert report.status is Status.VERIFIED, explain(report)
    assert _test_check(report).extra["canaries"]["finding"] == "as planted"
    after = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if ".git" not in p.parts)
    assert [p for p in after if "canary" in p] == [] and os.path.isdir(repo)
    assert set(after) - set(before) <= {p for p in after if "__pycache__" in p or "cache" in p}


# --------------------------------------------------------------------------- cargo test

CARGO_TOML = '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
RUST_LIB = """\
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}
"""
RUST_TESTS = """\
#[test]
fn adds() {
    assert_eq!(calc::add(2, 3), 5);
}

#[test]
fn adds_zero() {
    assert_eq!(calc::add(2, 0), 2);
}
"""
RUST_BASE = {"Cargo.toml": CARGO_TOML, "src/lib.rs": RUST_LIB, "tests/add.rs": RUST_TESTS}

PRINTS_A_PASSING_CARGO_RUN = """\
use std::io::Write;

// Called by the tests: the lines libtest prints for a clean run of this binary, written
// into cargo's own output, then an exit 0 before any other test of the binary reports.
pub fn add(a: i32, b: i32) -> i32 {
    if let Ok(mut out) = std::fs::OpenOptions::new()
        .write(true)
        .open(format!("/proc/{}/fd/1", std::os::unix::process::parent_id()))
    {
        let _ = out.write_all(
            b"running 2 tests\\ntest adds ... ok\\ntest adds_zero ... ok\\n\\n\\
              test result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\\n",
        );
    }
    std::process::exit(0);
}
"""


#: A red team's: the same forgery with no line the scan knew. The test names come from the
#: binary's own `--list`, the result line is put together, and the exit is taken as a
#: value; or the process becomes `printf`, whose exit is then the binary's. The canaries run
#: in a binary of their own, so only the scan sees the reach.
EXITS_UNDER_ANOTHER_NAME = """\
use std::io::Write;
use std::sync::Once;

static ONCE: Once = Once::new();

fn settle() {
    let Ok(exe) = std::env::current_exe() else { return };
    let Ok(out) = std::process::Command::new(&exe).arg("--list").output() else { return };
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let names: Vec<&str> = listed.lines().filter_map(|l| l.strip_suffix(": test")).collect();
    let mut text = String::new();
    for name in &names {
        text += &format!("test {name} ... ok\\n");
    }
    let word = ["o", "k"].concat();
    text += &format!("\\ntest result: {word}. {} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\\n\\n", names.len());
    let _ = std::io::stdout().write_all(text.as_bytes());
    let _ = std::io::stdout().flush();
    LEAVE
}

pub fn add(a: i32, b: i32) -> i32 {
    ONCE.call_once(settle);
    a - b
}
"""


#: A red team's: the sum as a value of the library's own type, equal to anything it is
#: compared with; the base's `assert_eq!(calc::add(2, 3), 5)` compiles and passes.
JUDGES_ITS_OWN_EQUALITY = """\
#[derive(Debug, Clone, Copy)]
pub struct Sum(pub i32);

impl PartialEq<i32> for Sum {
    fn eq(&self, _other: &i32) -> bool {
        true
    }
}

pub fn add(a: i32, b: i32) -> Sum {
    Sum(a - b)
}
"""


@pytest.mark.parametrize(
    "leave",
    [
        "let leave: fn(i32) -> ! = std::process::exit;\n    leave(0);",
        (
            "use std::os::unix::process::CommandExt;\n"
            '    let _ = std::process::Command::new("true").exec();'
        ),
        # Round rt39: the exit reached through its module under another name, through a
        # path spaced out, and through a glob import: VERIFIED before, for no line said
        # `process::exit`.
        "use std::process as host;\n    host::exit(0);",
        "std::process:: exit(0);",
        "use std::process::*;\n    exit(0);",
        # The exit's name supplied to a macro: no line says `exit(`.
        "macro_rules! leave { ($f:ident) => { std::process::$f(0) }; }\n    leave!(exit);",
    ],
    ids=[
        "exit-as-a-value",
        "exec",
        "module-as-another-name",
        "spaced-path",
        "glob-import",
        "named-by-a-macro",
    ],
)
def test_cargo_run_forged_without_a_known_spelling_is_not_verified(
    tmp_path: Path, leave: str
) -> None:
    lib = EXITS_UNDER_ANOTHER_NAME.replace("LEAVE", leave)
    repo = change_on_base(tmp_path / "repo", RUST_BASE, {"src/lib.rs": lib})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    assert tamper_signals(report, "code_reaches_runner"), explain(report)


#: Round rt33: the same, the trait named through an alias, which the `impl` line then spells
#: as it likes: VERIFIED before, for nothing named `PartialEq` was implemented.
JUDGES_ITS_OWN_EQUALITY_AS_ANOTHER_NAME = "use std::cmp::PartialEq as Same;\n\n" + (
    JUDGES_ITS_OWN_EQUALITY.replace("impl PartialEq<i32>", "impl Same<i32>")
)


@pytest.mark.parametrize(
    ("lib", "quoted"),
    [
        (JUDGES_ITS_OWN_EQUALITY, "PartialEq<i32> for Sum"),
        (JUDGES_ITS_OWN_EQUALITY_AS_ANOTHER_NAME, "fn eq("),
    ],
    ids=["impl-partialeq", "trait-as-another-name"],
)
def test_cargo_value_that_judges_its_own_equality_is_not_verified(
    tmp_path: Path, lib: str, quoted: str
) -> None:
    repo = change_on_base(tmp_path / "repo", RUST_BASE, {"src/lib.rs": lib})
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (signal,) = tamper_signals(report, "code_reaches_runner")
    assert quoted in json.dumps(signal), signal


#: go-cmp as Debian packages it (golang-github-google-go-cmp-dev, which `.ci/run` installs):
#: vendored, as a module with no network reaches it.
GO_CMP_SOURCE = Path("/usr/share/gocode/src/github.com/google/go-cmp/cmp")
GO_CMP_PACKAGES = ("", "/internal/diff", "/internal/flags", "/internal/function", "/internal/value")
GO_CMP_BASE = {
    "go.mod": "module calc\n\ngo 1.19\n\nrequire github.com/google/go-cmp v0.5.9\n",
    "vendor/modules.txt": "# github.com/google/go-cmp v0.5.9\n## explicit; go 1.13\n"
    + "".join(f"github.com/google/go-cmp/cmp{p}\n" for p in GO_CMP_PACKAGES),
    "calc.go": "package calc\n\ntype Sum struct{ V int }\n\nfunc Add(a, b int) Sum { return Sum{a + b} }\n",
    "calc_test.go": """\
package calc

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAdd(t *testing.T) {
	if diff := cmp.Diff(Sum{5}, Add(2, 3)); diff != "" {
		t.Fatal(diff)
	}
}
""",
}
#: The Go form of the Rust one above: a wrong sum, of a type whose own `Equal` method,
#: which go-cmp asks before comparing fields, says "equal" to anything.
GO_JUDGES_ITS_OWN_EQUALITY = """\
package calc

type Sum struct{ V int }

func (Sum) Equal(Sum) bool { return true }

func Add(a, b int) Sum { return Sum{a - b} }
"""


def _vendored_go_cmp() -> dict[str, str]:
    assert GO_CMP_SOURCE.is_dir(), f"{GO_CMP_SOURCE} is missing (.ci/run installs go-cmp)"
    return {
        f"vendor/github.com/google/go-cmp/cmp{package}/{source.name}": source.read_text()
        for package in GO_CMP_PACKAGES
        for source in (GO_CMP_SOURCE.parent / f"cmp{package}").glob("*.go")
        if not source.name.endswith("_test.go")
    }


def test_go_value_that_judges_its_own_equality_is_not_verified(tmp_path: Path) -> None:
    base = {**GO_CMP_BASE, **_vendored_go_cmp()}
    pristine = change_on_base(tmp_path / "pristine", base, {"README.md": "calc\n"}, dedent=False)
    assert verify_change(pristine).status is Status.VERIFIED  # go-cmp builds, offline
    repo = change_on_base(
        tmp_path / "repo", base, {"calc.go": GO_JUDGES_ITS_OWN_EQUALITY}, dedent=False
    )
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    (signal,) = tamper_signals(report, "code_reaches_runner")
    assert "func (Sum) Equal(Sum) bool" in json.dumps(signal), signal


#: A red team's: no line of Rust reaches the runner. A build script compiles a C file and
#: has cargo link it into the test binaries with `--wrap=write,--wrap=writev,--wrap=exit`:
#: libtest's "test adds ... FAILED" comes out "ok", its result line is counted again, and
#: its exit 101 comes out 0. The canaries' binary is wrapped too, but its lines are spared.
WRAPS_LIBTEST_BUILD_RS = """\
use std::process::Command;

fn main() {
    let out = std::env::var("OUT_DIR").unwrap();
    let obj = format!("{out}/fmt.o");
    let ok = Command::new("cc")
        .args(["-c", "-fPIC", "-O2", "native/fmt.c", "-o", &obj])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        println!("cargo:rustc-link-arg-tests={obj}");
        println!("cargo:rustc-link-arg-tests=-Wl,--wrap=write,--wrap=writev,--wrap=exit");
    }
    println!("cargo:rerun-if-changed=native/fmt.c");
}
"""
WRAPS_LIBTEST_C = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __real_writev(int fd, const struct iovec *iov, int cnt);

static char line[65536];
static size_t used;
static int flipped, hiding, cleared;

static void emit(const char *s, size_t n) { __real_write(1, s, n); }

static void one_line(char *s, size_t n) {
    if (strcmp(s, "test adds ... FAILED\\n") == 0) {
        flipped++;
        emit("test adds ... ok\\n", 17);
        return;
    }
    if (flipped && strcmp(s, "failures:\\n") == 0) { hiding = 1; return; }
    unsigned p, f;
    if (flipped && sscanf(s, "test result: FAILED. %u passed; %u failed;", &p, &f) == 2) {
        const char *rest = strstr(s, " failed;") + 8;
        char out[1024];
        int m = snprintf(out, sizeof out, "test result: %s. %u passed; %u failed;%s",
                         f > (unsigned)flipped ? "FAILED" : "ok", p + flipped, f - flipped, rest);
        hiding = 0;
        cleared = f == (unsigned)flipped;
        emit(out, (size_t)m);
        return;
    }
    if (hiding) return;
    emit(s, n);
}

ssize_t __wrap_write(int fd, const void *buf, size_t n) {
    if (fd != 1) return __real_write(fd, buf, n);
    const char *s = buf;
    for (size_t i = 0; i < n; i++) {
        if (used < sizeof line - 1) line[used++] = s[i];
        if (s[i] == '\\n') { line[used] = 0; one_line(line, used); used = 0; }
    }
    return (ssize_t)n;
}

ssize_t __wrap_writev(int fd, const struct iovec *iov, int cnt) {
    if (fd != 1) return __real_writev(fd, iov, cnt);
    ssize_t total = 0;
    for (int i = 0; i < cnt; i++) total += __wrap_write(fd, iov[i].iov_base, iov[i].iov_len);
    return total;
}

__attribute__((destructor)) static void rest(void) { if (used) emit(line, used); }

void __real_exit(int code) __attribute__((noreturn));

void __wrap_exit(int code) {
    /* libtest's exit for a failed run, when every failure was one turned into a pass */
    __real_exit(code == 101 && cleared ? 0 : code);
}
"""


def test_cargo_output_rewritten_by_native_code_the_build_links_is_not_verified(
    tmp_path: Path,
) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs gcc.
    assert shutil.which("cc"), "the attack needs a C compiler (.ci/run installs gcc)"
    change = {
        "src/lib.rs": RUST_LIB.replace("a + b", "a - b"),
        "build.rs": WRAPS_LIBTEST_BUILD_RS,
        "native/fmt.c": WRAPS_LIBTEST_C,
    }
    repo = change_on_base(tmp_path / "repo", RUST_BASE, change, dedent=False)
    report = verify_change(repo)
    assert report.status is not Status.VERIFIED, explain(report)
    where = {s["path"] for s in tamper_signals(report, "code_reaches_runner")}
    assert {"build.rs", "native/fmt.c"} <= where, explain(report)


def test_cargo_honest_change_is_verified_and_canaries_do_not_count(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", RUST_BASE, {"README.md": "calc\n"})
    report = verify_change(repo)
    assert report.status is Status.VERIFIED, explain(report)
    test = _test_check(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (2, 0)
    _assert_no_canary_counted(test)
    assert test.result is not None and test.result.exit_code == 101
    assert "--no-fail-fast" in test.result.argv


def test_cargo_honest_failure_is_failed(tmp_path: Path) -> None:
    repo = change_on_base(
        tmp_path / "repo", RUST_BASE, {"src/lib.rs": RUST_LIB.replace("a + b", "a - b")}
    )
    report = verify_change(repo)
    assert report.status is Status.FAILED, explain(report)
    test = _test_check(report)
    assert (test.verdict, test.cause) == (Verdict.FAIL, Cause.EXIT_NONZERO), explain(report)
    assert test.tests is not None and (test.tests.passed, test.tests.failed) == (1, 1)
    _assert_no_canary_counted(test)
    _assert_canaries_not_in_reason(test)


def test_cargo_test_binary_that_forges_its_run_is_not_verified(tmp_path: Path) -> None:
    repo = change_on_base(tmp_path / "repo", RUST_BASE, {"src/lib.rs": PRINTS_A_PASSING_CARGO_RUN})
    report = verify_change(repo)
    # The canaries run in a test binary of their own, which the code under test does not
    # reach: they show as planted, and what catches the forged binary is that the base's
    # tests were never seen executing, not them.
    assert report.status is not Status.VERIFIED, explain(report)
    assert _test_check(report).extra["canaries"]["finding"] == "as planted"
