"""Every test and doctest the project's stated pytest commands collect is run.

toolz's tox runs a bare `py.test`, its CI `pytest --doctest-modules toolz/`; boltons' tox
runs `pytest --doctest-modules {env_site_packages_dir}/boltons {tox_root}/tests`. assay
kept the tox command, or fell back to a bare `pytest`, and a wrong value in a docstring
example was VERIFIED. A stated command that reaches what the kept one does not is run in
its place when it covers it whole, else beside it (`plan._with_uncovered_pytest`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.discovery.files import RepoFiles
from assay.discovery.pytest_reach import holds_tests, pytest_reach
from assay.plan import plan_repository
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write
from tests.test_build_variants import workflow

DOUBLE = 'def double(x):\n    """\n    >>> double(2)\n    {result}\n    """\n    return x * 2\n'

#: A package with a docstring example, its tests, and a benchmark directory of tests.
PROJECT = {
    "calc/__init__.py": "",
    "calc/tests/__init__.py": "",
    "calc/tests/test_double.py": (
        "from calc.double import double\n\ndef test_double():\n    assert double(3) == 6\n"
    ),
    "bench/test_speed.py": "def test_speed():\n    assert sum(range(10)) == 45\n",
    "tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands = py.test {posargs}\n",
}


def project(root: Path, *, result: str = "4", testpaths: str | None = "calc") -> Path:
    files = {**PROJECT, "calc/double.py": DOUBLE.format(result=result)}
    if testpaths is not None:
        files["pyproject.toml"] = f"[tool.pytest.ini_options]\ntestpaths = ['{testpaths}']\n"
    files[".github/workflows/ci.yml"] = workflow(
        "pip install pytest", "pytest --doctest-modules calc/", "pytest bench/"
    )
    return write(root, files)


def reach(root: Path, *argv: str, cwd: str = ".") -> tuple[tuple[str, ...], bool]:
    found = pytest_reach(("python3", "-m", "pytest", *argv), cwd, RepoFiles(str(root)))
    return found.paths, found.doctest_modules


def test_the_reach_of_a_command_is_read_from_its_words(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert reach(root) == (("calc",), False), "no paths: the configuration's testpaths"
    assert reach(root, "--doctest-modules", "calc/") == (("calc",), True)
    # Option values and node ids: `-k double` names no path, `::` picks within a file.
    assert reach(root, "-k", "double", "calc/tests/test_double.py::test_double") == (
        ("calc/tests/test_double.py",),
        False,
    )
    # A plugin option's value is no path: a word naming nothing in the tree is left out.
    assert reach(root, "--hypothesis-show-statistics", "ci") == (("calc",), False)
    assert reach(root, "tests", cwd="bench") == (("bench",), False)
    assert reach(project(tmp_path / "flat", testpaths=None)) == (("",), False)


def test_covering_needs_every_path_and_every_doctest(tmp_path: Path) -> None:
    files = RepoFiles(str(project(tmp_path)))

    def of(*argv: str):  # type: ignore[no-untyped-def]
        return pytest_reach(("pytest", *argv), ".", files)

    assert of("--doctest-modules", "calc").covers(of("calc/tests"))
    assert not of("calc").covers(of("--doctest-modules", "calc")), "doctests are more"
    assert not of("calc").covers(of("bench")), "another directory"
    assert of(".").covers(of("bench")) and of(".").covers(of("calc"))
    assert not of("calc").covers(of("--doctest-glob=*.rst", "calc"))


def planned_tests(root: Path) -> dict[str, str]:
    return {
        c.name: " ".join(c.argv[3:])
        for c in plan_repository(root).checks
        if c.kind.value == "test" and c.argv[2:3] == ("pytest",)
    }


def test_a_ci_command_collecting_doctests_runs_in_place_of_the_tox_one(tmp_path: Path) -> None:
    # testpaths = calc: CI's `--doctest-modules calc/` covers the bare run whole. Its
    # `pytest bench/` reaches another directory, no doctests: left out as before (a CI job
    # may give such a directory services assay does not).
    plan = plan_repository(project(tmp_path))
    assert planned_tests(tmp_path) == {"pytest": "--doctest-modules calc/ -q -x"}
    (tox,) = [d for d in plan.dropped if d.source.file == "tox.ini"]
    assert "collects all it does, and more" in tox.reason, tox


def test_a_ci_command_collecting_doctests_runs_beside_a_wider_one(tmp_path: Path) -> None:
    # No testpaths: the bare run collects the whole tree (bench too), but no doctests.
    assert planned_tests(project(tmp_path, testpaths=None)) == {
        "pytest": "-q -x",
        "pytest-doctest-calc": "--doctest-modules calc/ -q -x",
    }


#: The same environment in tox's two forms.
TOX_SITE_PACKAGES = {
    "tox.ini": (
        "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\n"
        "commands = pytest --doctest-modules {env_site_packages_dir}/calc {tox_root}/tests\n"
    ),
    "tox.toml": (
        'env_list = ["py3"]\n[env_run_base]\ndeps = ["pytest"]\ncommands = [["pytest", '
        '"--doctest-modules", "{env_site_packages_dir}/calc", "{tox_root}/tests"]]\n'
    ),
}


@pytest.mark.parametrize("tox", sorted(TOX_SITE_PACKAGES))
@pytest.mark.parametrize(("layout", "expected"), [("", "calc"), ("src/", "src/calc")])
def test_tox_site_packages_is_the_trees_copy_of_the_package(
    tmp_path: Path, layout: str, expected: str, tox: str
) -> None:
    files = {
        f"{layout}calc/__init__.py": DOUBLE.format(result="4"),
        "tests/test_calc.py": "def test_nothing():\n    pass\n",
        tox: TOX_SITE_PACKAGES[tox],
    }
    assert planned_tests(write(tmp_path, files)) == {
        "pytest": f"--doctest-modules {expected} tests -q -x"
    }


def test_tox_site_packages_naming_no_package_of_the_tree_is_left_out(tmp_path: Path) -> None:
    files = {
        "tests/test_calc.py": "def test_nothing():\n    pass\n",
        "tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ncommands = pytest {envsitepackagesdir}/elsewhere\n",
    }
    plan = plan_repository(write(tmp_path, files))
    assert [" ".join(c.argv[2:]) for c in plan.checks if c.kind.value == "test"] == ["pytest -q -x"]
    (why,) = [d.reason for d in plan.dropped if "elsewhere" in d.what]
    assert "site-packages that the tree does not hold" in why


@pytest.mark.parametrize(("result", "status"), [("4", "VERIFIED"), ("5", "FAILED")])
def test_a_wrong_docstring_example_fails_what_ci_would_fail(
    tmp_path: Path, result: str, status: str
) -> None:
    repo = project(tmp_path / "repo", result=result)
    done = assay("verify", "--json", "--no-cache", str(repo), env=assay_env(), timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    if status == "FAILED":
        assert "calc.double.double" in report["note"]


def test_a_command_assays_configuration_names_runs_alone(tmp_path: Path) -> None:
    root = project(tmp_path)
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text() + "\n[tool.assay.commands]\ntest = 'python3 -m pytest calc'\n"
    )
    assert planned_tests(root) == {"pytest": "calc"}, "as written, and nothing beside it"


#: Tests beside the package, not in it: the tox run collects `tests/unit`.
SPLIT = {
    "calc/__init__.py": "",
    "calc/double.py": DOUBLE.format(result="4"),
    "tests/unit/test_double.py": "def test_double():\n    pass\n",
    "tests/integration/test_db.py": "def test_db():\n    pass\n",
    "tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ncommands = pytest tests/unit\n",
}


@pytest.mark.parametrize(
    ("ci", "planned"),
    [
        # The package's doctests, beyond the tox run's paths: taken, in its place.
        (
            "pytest --doctest-modules calc tests/unit",
            {"pytest": "--doctest-modules calc tests/unit"},
        ),
        # Doctests, and tests of a directory the tox run leaves out (a CI job may give them
        # a database): left out, as any command reaching other tests.
        ("pytest --doctest-modules calc tests", {"pytest": "tests/unit"}),
    ],
)
def test_doctests_beyond_the_kept_paths_are_taken_other_tests_are_not(
    tmp_path: Path, ci: str, planned: dict[str, str]
) -> None:
    write(tmp_path, {**SPLIT, ".github/workflows/ci.yml": workflow(ci)})
    assert planned_tests(tmp_path) == {k: f"{v} -q -x" for k, v in planned.items()}


def test_a_directory_holds_tests_when_a_file_pytest_collects_is_in_it(tmp_path: Path) -> None:
    files = RepoFiles(str(write(tmp_path, SPLIT)))
    assert holds_tests(files, "tests") and holds_tests(files, "tests/integration/test_db.py")
    assert not holds_tests(files, "calc") and holds_tests(files, "")
