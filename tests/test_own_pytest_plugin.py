"""A project that is a pytest plugin, verified as untrusted work (`--install --base
--protect`): its plugin patches pytest as it configures (pytest-subtests 0.15 replaces
`TestCaseFunction.addSkip`), which the canaries' guard took for a forged run, since the
plugin's code lives in the workspace, not among installed files. The base's own plugin
module is believed now (`assay.own_plugins`); a change that edits it to rewrite the
report is still found."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from assay.base_requirements import Declared
from assay.own_plugins import own_plugin_files
from assay.verdict import Cause, Status, Verdict
from tests.attacks import change_on_base, explain, verify_change
from tests.repos import git_repo

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "tinyplug"
version = "0.1"
dependencies = ["pytest>=7.4"]

[project.entry-points.pytest11]
tinyplug = "tinyplug.plugin"

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

#: pytest-subtests' way: a method of pytest's wrapped while pytest is configured.
PLUGIN = """\
from _pytest.unittest import TestCaseFunction

_original = TestCaseFunction.addSkip


def _addSkip(self, testcase, reason):
    return _original(self, testcase, reason)


def pytest_configure(config):
    TestCaseFunction.addSkip = _addSkip


def pytest_unconfigure(config):
    TestCaseFunction.addSkip = _original


def double(x):
    return 2 * x
"""

#: The same plugin, changed to pass every failure but a hidden directory's (the canaries').
FORGING_PLUGIN = (
    PLUGIN.replace("return 2 * x", "return 3 * x")
    + """

from _pytest.reports import TestReport

_made = TestReport.from_item_and_call.__func__


def _from_item_and_call(cls, item, call):
    report = _made(cls, item, call)
    if report.failed and not any(p.startswith(".") for p in item.path.parts[-2:]):
        report.outcome, report.longrepr = "passed", None
    return report


TestReport.from_item_and_call = classmethod(_from_item_and_call)
"""
)

TESTS = """\
from tinyplug.plugin import double


def test_double():
    assert double(2) == 4


def test_double_zero():
    assert double(0) == 0
"""

BASE = {
    "pyproject.toml": PYPROJECT,
    "src/tinyplug/__init__.py": "",
    "src/tinyplug/plugin.py": PLUGIN,
    "tests/test_plug.py": TESTS,
}


def test_the_bases_declared_plugin_modules_are_pinned_to_their_bytes(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo", BASE)
    (repo / "src/tinyplug/plugin.py").write_text("# changed\n")  # the base's bytes count
    workspace = tmp_path / "workspace"
    declared = Declared(
        entry_points=frozenset(
            {
                ("pytest11", "tinyplug", "tinyplug.plugin"),
                ("pytest11", "gone", "tinyplug.absent:plugin"),  # no such file at the base
                ("console_scripts", "tiny", "tinyplug.__init__:main"),  # not a pytest plugin
            }
        )
    )
    pinned = own_plugin_files(repo, "HEAD", workspace, declared)
    digest = hashlib.sha256(PLUGIN.encode()).hexdigest()
    assert pinned == {str(workspace / "src/tinyplug/plugin.py"): digest}
    assert own_plugin_files(repo, "HEAD", workspace, Declared()) == {}
    assert own_plugin_files(repo, "no-such-ref", workspace, declared) == {}


@pytest.mark.slow
def test_a_pytest_plugin_project_patching_pytest_as_it_configures_is_verified(
    tmp_path: Path,
) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, {"README.md": "tinyplug\n"}, dedent=False)
    report = verify_change(repo, install=True, kinds=frozenset({"test"}))
    assert report.status is Status.VERIFIED, explain(report)
    (test,) = report.checks
    assert test.extra["canaries"]["finding"] == "as planted", explain(report)


#: The plugin's file rewritten as the package is imported, before its module is: the code
#: then runs from the base plugin's path, but the file's bytes are no longer the base's.
REWRITES_THE_PLUGIN_FILE = f"""\
import pathlib

pathlib.Path(__file__).with_name("plugin.py").write_text({FORGING_PLUGIN!r})
"""

FORGERIES = {
    "the plugin changed to rewrite the report": {"src/tinyplug/plugin.py": FORGING_PLUGIN},
    "the plugin's file rewritten during the run": {
        "src/tinyplug/__init__.py": REWRITES_THE_PLUGIN_FILE
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_a_plugin_that_is_not_the_bases_is_not_believed(tmp_path: Path, how: str) -> None:
    repo = change_on_base(tmp_path / "repo", BASE, FORGERIES[how], dedent=False)
    report = verify_change(repo, install=True, kinds=frozenset({"test"}))
    (test,) = report.checks
    assert (test.verdict, test.cause) == (Verdict.INCONCLUSIVE, Cause.REPORT_TAMPERED), explain(
        report
    )
    assert "_pytest.reports.TestReport.from_item_and_call" in test.note, explain(report)
