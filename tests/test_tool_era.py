"""`--install` installs the tools a tree does not pin as they were on the tree's date
(`assay.tool_era`): a clean tree of 2024 is not failed by a linter rule of 2026."""

from __future__ import annotations

import datetime
import os
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from assay import install
from assay.pipeline import VerifyOptions, verify
from assay.tool_era import PYPI_JSON, newest_release, tools_as_of, tree_date
from tests.cli import installed_and_verified
from tests.repos import commit_all, git, write, write_dedented

UTC = datetime.UTC


def uploaded(day: str, *, yanked: bool = False, requires: str | None = None) -> dict[str, Any]:
    return {
        "upload_time_iso_8601": f"{day}T12:00:00.000000Z",
        "yanked": yanked,
        "requires_python": requires,
    }


RELEASES = {
    "1.0": [uploaded("2021-01-01")],
    "1.1": [uploaded("2022-06-01"), uploaded("2022-06-05")],
    "1.2": [uploaded("2022-06-02", yanked=True)],
    "2.0rc1": [uploaded("2022-06-03")],
    "1.3": [uploaded("2022-06-04", requires=">=3.12")],
    "1.4": [uploaded("2023-01-01")],
    "not a version": [uploaded("2020-01-01")],
    "0.9": [],
}


def on(day: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(day).replace(tzinfo=UTC)


def test_the_release_pip_would_have_picked_on_that_day() -> None:
    """Final, unyanked, uploaded by then (its first file), for this interpreter."""
    assert newest_release(RELEASES, on("2022-12-31"), Version("3.11.7")) == "1.1"
    assert newest_release(RELEASES, on("2022-12-31"), Version("3.12.1")) == "1.3"
    assert newest_release(RELEASES, on("2024-01-01"), Version("3.11.7")) == "1.4"
    assert newest_release(RELEASES, on("2020-01-01"), Version("3.11.7")) is None


def test_never_a_release_older_than_the_interpreter() -> None:
    """A tool older than the Python it runs on may not run at all: a tree of 2019 gets
    the tools of the day Python 3.11 came out (2022-10-24)."""
    asked: list[str] = []

    def fetch(url: str) -> dict[str, Any]:
        asked.append(url)
        return {"releases": RELEASES}

    assert tools_as_of(["tool"], on("2019-01-01"), "3.11.7", fetch=fetch) == {"tool": "1.1"}
    assert asked == [PYPI_JSON.format(project="tool")]
    assert tools_as_of(["tool"], on("2019-01-01"), "3.7.1", fetch=fetch) == {}


def test_a_tool_whose_releases_cannot_be_read_is_left_to_its_newest() -> None:
    def offline(url: str) -> Any:
        raise OSError("no network")

    assert tools_as_of(["ruff"], on("2024-01-01"), "3.11.7", fetch=offline) == {}
    asked: list[str] = []

    def unreachable(url: str) -> Any:
        asked.append(url)
        raise TimeoutError("timed out")

    assert tools_as_of(["mypy", "ruff"], on("2024-01-01"), "3.11.7", fetch=unreachable) == {}
    assert len(asked) == 1  # the second would have waited out the timeout too
    assert tools_as_of(["ruff"], on("2024-01-01"), "3.11.7", fetch=lambda url: []) == {}


def test_a_git_tree_dates_from_its_head_commit(tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", {"a.py": "x = 1\n"})
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    stamp = "2021-03-04T05:06:07+00:00"
    env = {**os.environ, "GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": "2030-01-01T00:00:00"}
    git(repo, "commit", "-qm", "old", env=env)
    assert tree_date(repo) == datetime.datetime.fromisoformat(stamp)


def test_an_sdist_dates_from_its_release_on_pypi(tmp_path: Path) -> None:
    """Its files' times are its build backend's (hatchling's 2020-02-02, flit's 1970)."""
    sdist = write(
        tmp_path / "sdist",
        {"PKG-INFO": "Metadata-Version: 2.1\nName: Some.Thing\nVersion: 1.01\n\nBody: x\n"},
    )
    asked: list[str] = []

    def fetch(url: str) -> dict[str, Any]:
        asked.append(url)
        return {"releases": {"1.0": [uploaded("2020-01-01")], "1.1": RELEASES["1.1"]}}

    assert tree_date(sdist, fetch=fetch) == on("2022-06-01T12:00:00")
    assert asked == [PYPI_JSON.format(project="Some.Thing")]


def test_an_sdist_put_under_git_still_dates_from_its_release(tmp_path: Path) -> None:
    """Unpacked and committed today, as an agent's harness does: its commit says nothing
    of when its maintainers last ran their linters."""
    sdist = write(
        tmp_path / "sdist",
        {"PKG-INFO": "Metadata-Version: 2.1\nName: thing\nVersion: 1.1\n\nBody: x\n"},
    )
    commit_all(sdist, "unpacked")

    def fetch(url: str) -> dict[str, Any]:
        return {"releases": {"1.1": RELEASES["1.1"]}}

    assert tree_date(sdist, fetch=fetch) == on("2022-06-01T12:00:00")


@pytest.mark.parametrize(
    "pkg_info",
    [
        "Name: ../../admin\nVersion: 1.0\n",
        "Name: thing\nVersion: 1.0?x=1\n",
        "Name: thing\n",
        "Version: 1.0\n",
    ],
)
def test_a_pkg_info_naming_no_release_is_not_looked_up(tmp_path: Path, pkg_info: str) -> None:
    sdist = write(tmp_path / "sdist", {"PKG-INFO": pkg_info})

    def fetch(url: str) -> Any:
        raise AssertionError(f"looked up {url}")

    assert tree_date(sdist, fetch=fetch) is None


def test_a_tree_with_neither_commit_nor_release_has_no_date(tmp_path: Path) -> None:
    assert tree_date(write(tmp_path / "tree", {"a.py": ""})) is None


PROJECT = {
    "pyproject.toml": """
        [project]
        name = "dated"
        version = "0.1"
        [tool.ruff]
        line-length = 100
        [tool.pytest.ini_options]
        pythonpath = ["."]
    """,
    "dated.py": "def double(x):\n    return 2 * x\n",
    "tests/test_dated.py": """
        from dated import double


        def test_double():
            assert double(2) == 4
    """,
}


@pytest.mark.slow
def test_a_commit_of_june_2024_is_verified_with_the_tools_of_then(tmp_path: Path) -> None:
    """For real, through PyPI: ruff 0.5.0 came out on 2024-06-27, pytest 8.2.2 on
    2024-06-04, and nothing the project declares pins either."""
    repo = dated_repo(tmp_path / "repo", PROJECT, "2024-06-01")
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "VERIFIED", report["note"]
    versions = {c["name"]: c["checker"]["version"] for c in report["checks"]}
    assert versions["ruff"].startswith("0.4."), versions
    assert versions["pytest"].startswith("8.2."), versions
    (tools,) = [s for s in report["extra"]["install"] if s["name"] == "install-python-tools"]
    assert "as of the tree's date, 2024-06-01:" in tools["check"]["reason"]


def dated_repo(root: Path, files: dict[str, str], day: str) -> Path:
    """A git repository whose one commit of `files` was made on `day`."""
    repo = write_dedented(root, files)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-qm",
        day,
        env={**os.environ, "GIT_COMMITTER_DATE": f"{day}T00:00:00+00:00"},
    )
    return repo


@pytest.mark.slow
def test_a_plugin_installed_later_does_not_take_its_tool_past_the_trees_date(
    tmp_path: Path,
) -> None:
    """flake8-bugbear's newest release wants flake8 7.2, whose pyflakes 3.3 added F824
    (an unused `nonlocal`), which the flake8 of June 2024 did not report: the tox deps
    are held to the tools' releases of then, and pip takes the bugbear of then too."""
    repo = dated_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "dated"\nversion = "0.1"\n',
            "tox.ini": """
                [testenv:lint]
                deps =
                    flake8
                    flake8-bugbear
                commands = flake8 dated.py
            """,
            "dated.py": """
                def counter():
                    hits = 0

                    def seen():
                        nonlocal hits
                        return hits

                    return seen
            """,
        },
        "2024-06-01",
    )
    report = installed_and_verified(repo, tmp_path)
    lint = next(c for c in report["checks"] if c["check"]["kind"] == "lint")
    assert lint["verdict"] == "pass", lint["stdout"]["text"]
    assert lint["check"]["argv"][0].endswith("flake8"), lint["check"]["argv"]


@pytest.mark.slow
def test_a_linter_a_make_target_runs_is_held_to_the_trees_date(tmp_path: Path) -> None:
    """more-itertools 10.5.0's `make check` runs `black --check .`, black unpinned in its
    development requirements: black 25 lower-cases a string's hex escapes (`"\\xAB"`),
    black 24 of June 2024 leaves them, and the tree was clean then."""
    repo = dated_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": '[project]\nname = "dated"\nversion = "0.1"\n',
            "requirements-dev.txt": "black\n",
            "Makefile": "check:\n\tblack --check .\n",
            "dated.py": 'MARK = "\\xAB"\n',
        },
        "2024-06-01",
    )
    report = installed_and_verified(repo, tmp_path)
    lint = next(c for c in report["checks"] if c["check"]["kind"] == "lint")
    assert lint["verdict"] == "pass", lint["stdout"]["text"] + lint["stderr"]["text"]
    (tools,) = [s for s in report["extra"]["install"] if s["name"] == "install-python-tools"]
    assert "black 24." in tools["check"]["reason"], tools["check"]["reason"]


def test_a_release_below_a_ceiling_is_the_newest_of_then() -> None:
    assert newest_release(RELEASES, on("2024-01-01"), Version("3.11.7"), below=Version("1.4")) == (
        "1.1"
    )
    fetch = {PYPI_JSON.format(project="tool"): {"releases": RELEASES}}.__getitem__
    assert tools_as_of(["tool"], on("2024-01-01"), "3.11.7", fetch=fetch) == {"tool": "1.4"}
    held_back: set[str] = set()
    capped = tools_as_of(
        ["tool"],
        on("2024-01-01"),
        "3.11.7",
        fetch=fetch,
        below={"tool": "1.1"},
        held_back=held_back,
    )
    assert (capped, held_back) == ({"tool": "1.0"}, {"tool"})
    # A ceiling above the release of then holds nothing back.
    held_back.clear()
    capped = tools_as_of(
        ["tool"],
        on("2024-01-01"),
        "3.11.7",
        fetch=fetch,
        below={"tool": "2.0"},
        held_back=held_back,
    )
    assert (capped, held_back) == ({"tool": "1.4"}, set())


@pytest.mark.parametrize(
    ("files", "defaults"),
    [
        ({}, True),  # no configuration at all
        ({"pyproject.toml": "[tool.ruff]\n"}, True),
        ({"pyproject.toml": "[tool.ruff]\nsrc = ['src']\n[tool.ruff.isort]\nx = 1\n"}, True),
        ({"pyproject.toml": "[tool.ruff.lint]\nextend-select = ['B']\n"}, True),
        ({"pyproject.toml": "[tool.ruff]\nselect = ['E', 'F']\n"}, False),
        ({"pyproject.toml": "[tool.ruff.lint]\nselect = ['E4', 'E7', 'E9', 'F']\n"}, False),
        ({"pyproject.toml": "[tool.ruff]\nextend = '../base.toml'\n"}, False),
        # ruff reads ruff.toml before pyproject.toml, .ruff.toml before both.
        (
            {"ruff.toml": "line-length = 99\n", "pyproject.toml": "[tool.ruff]\nselect=['F']\n"},
            True,
        ),
        ({".ruff.toml": "[lint]\nselect = ['F']\n", "ruff.toml": ""}, False),
        ({"pyproject.toml": "[project]\nname = 'x'\n", "ruff.toml": "select = ['F']\n"}, False),
        ({"pyproject.toml": "[tool.ruff\n"}, False),  # unreadable: says nothing
        # Rules only the new defaults run, ignored: written for them (exceptiongroup 1.3.2).
        (
            {
                "pyproject.toml": "[tool.ruff.lint]\nextend-select = ['I', 'UP']\n"
                "ignore = ['BLE001', 'S102', 'TRY002']\n"
            },
            False,
        ),
        ({"ruff.toml": "[lint.per-file-ignores]\n'tests/*' = ['S101']\n"}, False),
        # What the old defaults or the project's own selection run: no such sign.
        ({"pyproject.toml": "[tool.ruff]\nignore = ['E402', 'F401']\n"}, True),
        ({"pyproject.toml": "[tool.ruff.lint]\nextend-select = ['B']\nignore = ['B008']\n"}, True),
    ],
)
def test_which_trees_leave_the_rule_selection_to_ruff(
    tmp_path: Path, files: dict[str, str], defaults: bool
) -> None:
    from assay.ruff_selection import written_for_old_defaults
    from assay.tool_era import ceilings

    write(tmp_path, files)
    assert written_for_old_defaults(tmp_path) is defaults
    assert ceilings(tmp_path, {"ruff", "mypy"}) == ({"ruff": "0.16.0"} if defaults else {})
    assert ceilings(tmp_path, {"mypy"}) == {}


@pytest.mark.slow
def test_ruff_is_kept_below_the_release_that_widened_the_default_rules(tmp_path: Path) -> None:
    """pyproject-hooks 1.3.3 (September 2026): `[tool.ruff]` selects no rules, ruff pinned
    only by pre-commit hooks its sdist leaves out. The ruff of its date, 0.16.7, found 45
    findings (I001, RUF022...) in a tree its maintainers' ruff passed: 0.16.0 widened the
    default selection from 59 rules to 413. Below 0.16 the tree is clean, and a finding of
    the old defaults is still found."""
    files = {
        "pyproject.toml": '[project]\nname = "dated"\nversion = "0.1"\n[tool.ruff]\nsrc = ["."]\n',
        "dated.py": "import sys\nimport os\n\nPATHS = (sys.path, os.sep)\n",
    }
    repo = dated_repo(tmp_path / "repo", files, "2026-09-16")
    report = installed_and_verified(repo, tmp_path)
    lint = next(c for c in report["checks"] if c["check"]["kind"] == "lint")
    assert lint["verdict"] == "pass", lint["stdout"]["text"]
    assert lint["checker"]["version"].startswith("0.15."), lint["checker"]
    (tools,) = [s for s in report["extra"]["install"] if s["name"] == "install-python-tools"]
    assert "ruff below 0.16.0 (whose default rule selection" in tools["check"]["reason"]
    # An unused import is a finding of the old defaults too.
    write(repo, {"dated.py": "import sys\nimport os\n\nPATHS = sys.path\n"})
    commit_all(repo, "unused")
    report = installed_and_verified(repo, tmp_path / "again")
    assert report["status"] == "FAILED", report["note"]
    assert "F401" in report["note"] or "imported but unused" in report["note"], report["note"]


@pytest.mark.slow
def test_releases_of_then_that_do_not_install_give_way_to_the_newest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release that cannot be installed here (no wheel for this platform; here, none
    at all) does not leave the plan's tools missing."""
    repo = commit_all(write_dedented(tmp_path / "repo", PROJECT))
    monkeypatch.setattr(install, "_era", lambda root, tools: ("2001-01-01", {"pytest": "0.0.0.1"}))
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "cache"))
    report = verify(repo, VerifyOptions(install=True, sandbox="local")).to_dict()
    assert report["status"] == "VERIFIED", report["note"]
    (tools,) = [s for s in report["extra"]["install"] if s["name"] == "install-python-tools"]
    assert "pytest<=0.0.0.1" in tools["argv"]
    assert tools["verdict"] == "pass"


#: The jaraco skeleton's test extra (zipp 3.19.2, inflect 7.3.1): mypy and ruff run as
#: tests, through plugins pytest-enabler turns on.
JARACO_TEST_EXTRA = """
    [project]
    name = "dated"
    version = "0.1"
    [project.optional-dependencies]
    test = [
        "pytest >= 6",
        "pytest-mypy",
        "pytest-ruff >= 0.2.1",
        "pytest-mypy-plugins",
    ]
"""


@pytest.mark.parametrize(
    ("files", "held"),
    [
        ({"pyproject.toml": JARACO_TEST_EXTRA}, {"mypy", "ruff"}),
        ({"setup.cfg": "[options.extras_require]\ntesting =\n    pytest-flake8\n"}, {"flake8"}),
        ({"requirements-dev.txt": "pytest\nPytest-Black==0.3.12\n"}, {"black"}),
        # Another plugin whose name begins alike is not the linter's.
        ({"requirements-dev.txt": "pytest-mypy-plugins\npytest-isort-extra\n"}, set()),
    ],
)
def test_a_linter_a_declared_pytest_plugin_runs_is_held_to_the_trees_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], held: set[str]
) -> None:
    """inflect 7.3.1 was FAILED by today's mypy, which pytest-mypy brings unpinned; with
    the mypy of its date, its 269 tests pass, as they did for its maintainers."""
    project = {"pyproject.toml": '[project]\nname = "dated"\nversion = "0.1"\n', **files}
    tested = {"dated.py": "x = 1\n", "tests/test_dated.py": "def test_x():\n    pass\n"}
    repo = commit_all(write_dedented(tmp_path / "repo", {**project, **tested}))
    asked: list[set[str]] = []

    def era(root: Path, tools: set[str]) -> tuple[str, dict[str, str]]:
        asked.append(set(tools))
        return "2024-06-01", {tool: "1.0" for tool in tools}

    monkeypatch.setattr(install, "_era", era)
    steps = install.install_steps(repo)
    (unpinned,) = asked
    assert unpinned == {"pytest", *held}, unpinned
    (tools,) = [s for s in steps if s.name == "install-python-tools"]
    assert all(f"{tool}<=1.0" in tools.argv for tool in held), tools.argv


def test_a_change_judged_against_a_base_has_the_base_commits_date(tmp_path: Path) -> None:
    """A change's commit dated 2019 had mypy 0.982 check it under `--base --protect
    --install`, which does not know `truthy-function`: an `if is_empty:` was VERIFIED."""
    from assay.pipeline import VerifyOptions, _dating
    from assay.sandbox import export_commit

    repo = write(tmp_path / "repo", {"a.py": "x = 1\n"})
    git(repo, "init", "-q")
    base_stamp = "2026-11-01T00:00:00+00:00"
    for stamp, text in ((base_stamp, "x = 1\n"), ("2019-01-01T00:00:00+00:00", "x = 2\n")):
        write(repo, {"a.py": text})
        git(repo, "add", "-A")
        env = {**os.environ, "GIT_COMMITTER_DATE": stamp}
        git(repo, "commit", "-qm", "work", env=env)
    base_files = tmp_path / "base"
    export_commit(repo, "HEAD~1", base_files)
    options = VerifyOptions(base="HEAD~1", protect=True)
    assert tree_date(_dating(repo, options, base_files)) == datetime.datetime.fromisoformat(
        base_stamp
    )
    assert _dating(repo, VerifyOptions(), None) == repo
