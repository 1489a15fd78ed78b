"""A project's pre-commit hooks of known tools, where its CI runs them, are checks, run as
the hook runs them and only at the release its `rev` pins: termcolor type-checks only
through its mypy hook, and a type error in its code was VERIFIED."""

from __future__ import annotations

import textwrap
from importlib.metadata import version
from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.cli import installed_and_verified, path_with_venv, verified_json
from tests.repos import commit_all, write_dedented

MYPY = version("mypy")
RUFF = version("ruff")

#: No [tool.mypy], no ruff configuration: only the hooks say these tools run.
PROJECT = {
    "pyproject.toml": """
        [project]
        name = "hooked"
        version = "0.1"
        [tool.pytest.ini_options]
        pythonpath = ["src"]
    """,
    "src/hooked/__init__.py": """
        def double(x: int) -> int:
            return 2 * x
    """,
    "tests/test_hooked.py": """
        from hooked import double


        def test_double() -> None:
            assert double(2) == 4
    """,
    "docs/conf.py": "project = 'left out by the hook'\n",
}


def hooks(mypy: str, ruff: str, *, ci: bool = True) -> str:
    section = "ci:\n          autoupdate_schedule: monthly" if ci else ""
    return f"""
        {section}
        repos:
          - repo: https://github.com/pre-commit/mirrors-mypy
            rev: v{mypy}
            hooks:
              - id: mypy
                args: [--strict]
                exclude: ^docs/
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v{ruff}
            hooks:
              - id: ruff-format
                files: ^(src|tests)/
          - repo: local
            hooks:
              - id: mine
                name: mine
                entry: ./check.sh
                language: system
    """


def _appended(rel: str, text: str) -> dict[str, str]:
    return {rel: textwrap.dedent(PROJECT[rel]).lstrip("\n") + text}


TYPE_ERROR = _appended("src/hooked/__init__.py", '\n\nLIMIT: int = "3"\n')
UNFORMATTED = _appended("tests/test_hooked.py", "\n\nNAMES = [ 'a' ]\n")


@pytest.fixture(autouse=True)
def venv_tools_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan reads the release of the tool on PATH, as `assay` run from here finds it."""
    monkeypatch.setenv("PATH", path_with_venv())


def project(root: Path, config: str, *changes: dict[str, str]) -> Path:
    files = {**PROJECT, ".pre-commit-config.yaml": config}
    for change in changes:
        files.update(change)
    return write_dedented(root, files)


def checks(report: dict[str, object]) -> dict[str, str]:
    found = report["checks"]
    assert isinstance(found, list)
    return {c["name"]: c["verdict"] for c in found}


def test_hooks_at_the_tools_release_here_are_planned_as_the_hook_runs_them(tmp_path: Path) -> None:
    plan = plan_repository(project(tmp_path, hooks(MYPY, RUFF)))
    argvs = {c.name: c.argv for c in plan.checks}
    assert argvs["mypy"][-3:] == ("--strict", "src/hooked/__init__.py", "tests/test_hooked.py")
    assert argvs["ruff-format"][-5:-2] == ("format", "--force-exclude", "--check")
    assert "docs/conf.py" not in argvs["ruff-format"]


def test_hooks_ci_does_not_run_are_no_checks(tmp_path: Path) -> None:
    plan = plan_repository(project(tmp_path, hooks(MYPY, RUFF, ci=False)))
    assert not {"mypy", "ruff-format"} & {c.name for c in plan.checks}


def test_a_hook_whose_expression_may_never_end_is_left_out_saying_so(tmp_path: Path) -> None:
    """`(a|aa)+$` on a name of sixty `a`s and a `b` backtracks for longer than the universe
    has existed; the plan still comes, in the budget's time, without the hook."""
    config = hooks(MYPY, RUFF).replace("exclude: ^docs/", "exclude: (a|aa)+$")
    repo = project(tmp_path, config, {f"src/hooked/{'a' * 60}b.py": "X = 1\n"})
    plan = plan_repository(repo)
    assert "mypy" not in {c.name for c in plan.checks}
    assert any("pre-commit hook mypy" in n and "never end" in n for n in plan.notes), plan.notes


def test_expressions_re_finds_quickly_are_evaluated(tmp_path: Path) -> None:
    """Bounded repetitions in a row (`x{0,500}` three times: seconds a path with `re`)
    and three unbounded ones are matched as pre-commit matches them."""
    config = hooks(MYPY, RUFF).replace("exclude: ^docs/", "exclude: ^d{0,500}o{0,500}.*c.*s.*/")
    plan = plan_repository(project(tmp_path, config))
    mypy = next(c for c in plan.checks if c.name == "mypy")
    assert "docs/conf.py" not in mypy.argv and "src/hooked/__init__.py" in mypy.argv


@pytest.mark.slow
def test_a_type_error_fails_through_the_mypy_hook_at_its_release(tmp_path: Path) -> None:
    clean = verified_json(project(tmp_path / "clean", hooks(MYPY, RUFF)), tmp_path / "s1")
    assert clean["status"] == "VERIFIED", clean["note"]
    assert checks(clean) == {
        "compileall": "pass",
        "mypy": "pass",
        "ruff-format": "pass",
        "pytest": "pass",
    }
    wrong = verified_json(
        project(tmp_path / "wrong", hooks(MYPY, RUFF), TYPE_ERROR), tmp_path / "s2"
    )
    assert wrong["status"] == "FAILED", wrong["note"]
    assert checks(wrong)["mypy"] == "fail"
    assert "Incompatible types in assignment" in str(wrong["note"])
    unformatted = project(tmp_path / "unformatted", hooks(MYPY, RUFF), UNFORMATTED)
    report = verified_json(unformatted, tmp_path / "s3")
    assert report["status"] == "FAILED", report["note"]
    assert checks(report)["ruff-format"] == "fail"


@pytest.mark.slow
def test_a_hook_at_another_release_than_the_tool_here_is_left_out_with_a_note(
    tmp_path: Path,
) -> None:
    repo = project(tmp_path / "repo", hooks("1.0.0", RUFF), TYPE_ERROR)
    report = verified_json(repo, tmp_path / "state")
    assert report["status"] == "VERIFIED", report["note"]
    assert "mypy" not in checks(report)
    notes = report["plan"]["notes"]  # type: ignore[index]
    assert any(f"pins mypy 1.0.0 and the mypy here is {MYPY}" in n for n in notes), notes
    assert any("pre-commit hooks not run: mine" in n for n in notes), notes


@pytest.mark.slow
def test_install_installs_the_hooks_release_and_runs_it(tmp_path: Path) -> None:
    """For real: pip from the index. mypy 1.13.0 and ruff 0.8.0 are no release this
    machine's tools are, so only the install makes the hooks run."""
    clean = installed_and_verified(project(tmp_path / "clean", hooks("1.13.0", "0.8.0")), tmp_path)
    versions = {c["checker"]["tool"]: c["checker"]["version"] for c in clean["checks"]}
    assert clean["status"] == "VERIFIED", clean["note"]
    assert (versions["mypy"], versions["ruff"]) == ("1.13.0", "0.8.0"), versions
    wrong = project(tmp_path / "wrong", hooks("1.13.0", "0.8.0"), TYPE_ERROR)
    report = installed_and_verified(wrong, tmp_path)
    assert report["status"] == "FAILED", report["note"]
    assert checks(report)["mypy"] == "fail"


@pytest.mark.slow
def test_a_change_to_the_hooks_is_the_bases_under_protect(tmp_path: Path) -> None:
    """A change that excludes its own type error from the hook, or pins a release that is
    not here so that the hook is left out, is checked with the base's hooks."""
    repo = commit_all(project(tmp_path / "repo", hooks(MYPY, RUFF)))
    for config in (
        hooks(MYPY, RUFF).replace("exclude: ^docs/", "exclude: ^(docs|src|tests)/"),
        hooks("1.0.0", RUFF),
    ):
        commit_all(project(repo, config, TYPE_ERROR), "change")
        report = verified_json(repo, tmp_path / "state", "--protect", "--base", "HEAD~1")
        assert report["status"] == "FAILED", report["note"]
        assert checks(report)["mypy"] == "fail"
        commit_all(project(repo, hooks(MYPY, RUFF)), "back")


def test_a_readme_badge_of_pre_commit_ci_says_its_ci_runs_the_hooks(tmp_path: Path) -> None:
    """pytest-mock 3.14.1 has pre-commit.ci run its hooks with no `ci:` section: its README
    shows the service's badge."""
    repo = project(tmp_path, hooks(MYPY, RUFF, ci=False))
    badge = "[![pre-commit.ci](https://results.pre-commit.ci/badge/github/o/hooked/main.svg)]\n"
    write_dedented(repo, {"README.md": badge})
    assert {"mypy", "ruff-format"} <= {c.name for c in plan_repository(repo).checks}


@pytest.mark.slow
def test_a_hooked_tool_that_breaks_in_its_own_code_fails_nothing(tmp_path: Path) -> None:
    """For real: black 21.5b0 imports `click._unicodefun`, which click 8.1 removed; at its
    pin it dies on import. That says nothing of the code: UNVERIFIED, naming the crash,
    where it was FAILED."""
    black = """
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/psf/black
            rev: 21.5b0
            hooks:
              - id: black
    """
    repo = project(tmp_path / "repo", black)
    report = installed_and_verified(repo, tmp_path)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert checks(report)["black"] == "unverified"
    assert "black broke in its own installed code" in report["note"], report["note"]
    assert "cannot import name '_unicodefun'" in report["note"], report["note"]


def import_hooks(isort: str, ruff: str) -> str:
    return f"""
        ci:
          autoupdate_schedule: monthly
        repos:
          - repo: https://github.com/astral-sh/ruff-pre-commit
            rev: v{ruff}
            hooks:
              - id: ruff-format
          - repo: https://github.com/PyCQA/isort
            rev: {isort}
            hooks:
              - id: isort
    """


UNSORTED = {"src/hooked/paths.py": "import sys\nimport os\n\nSEP = os.sep + sys.platform\n"}


def test_every_hook_ci_runs_is_a_check_not_one_formatter_per_language(tmp_path: Path) -> None:
    """CI runs every hook: with ruff's formatter chosen, isort's hook was outranked, and a
    change only isort rejects was VERIFIED."""
    repo = project(tmp_path, import_hooks(version("isort"), RUFF), UNSORTED)
    assert {"ruff-format", "isort"} <= {c.name for c in plan_repository(repo).checks}
    report = verified_json(repo, tmp_path / "state")
    assert report["status"] == "FAILED", report["note"]
    assert checks(report)["isort"] == "fail"


@pytest.mark.slow
def test_install_runs_a_hook_at_its_pin_where_path_has_another_release(tmp_path: Path) -> None:
    """`--install` puts isort 5.13.2 in `.venv`; the plan looked for isort on PATH only
    (this machine's, another release), and left the hook out."""
    report = installed_and_verified(
        project(tmp_path, import_hooks("5.13.2", "0.8.0"), UNSORTED), tmp_path
    )
    assert report["status"] == "FAILED", report["note"]
    assert checks(report)["isort"] == "fail"
    (isort,) = [c for c in report["checks"] if c["name"] == "isort"]
    assert isort["argv"][0] == ".venv/bin/isort"  # the pin --install put there
