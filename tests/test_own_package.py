"""A src-layout project that is not installed cannot be tested: UNVERIFIED, not FAILED.

Real `assay verify` runs (the default sandbox) on small src-layout projects with no
install step done, as a fresh checkout is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import assay

pytestmark = pytest.mark.slow


def _src_layout(root: Path, name: str, package: str, test: str) -> Path:
    """A src-layout project `name`: its package's `__init__.py`, and one test module."""
    (root / "src" / name).mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n')
    (root / "src" / name / "__init__.py").write_text(package)
    (root / "tests").mkdir()
    (root / "tests" / f"test_{name}.py").write_text(test)
    return root


def _src_project(root: Path, test_imports: str) -> Path:
    test = f"{test_imports}\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
    return _src_layout(root, "calc", "def add(a, b):\n    return a + b\n", test)


def _verify(repo: Path) -> tuple[int, dict[str, object]]:
    done = assay("verify", "--json", "--no-cache", str(repo), timeout=180)
    assert "Traceback" not in done.stderr, done.stderr  # pytest's own output quotes one
    return done.returncode, json.loads(done.stdout)


def _pytest_check(report: dict[str, object]) -> dict[str, object]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == "pytest")


def test_the_projects_own_package_not_installed_is_unverified(tmp_path: Path) -> None:
    code, report = _verify(_src_project(tmp_path, "from calc import add"))
    check = _pytest_check(report)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert code == 4
    assert check["cause"] == "toolchain_missing"
    assert "could not import calc, the project's own package under src/" in str(check["note"])
    assert "assay verify --install" in str(check["note"])


def test_a_module_missing_from_the_tree_still_fails(tmp_path: Path) -> None:
    # A change that deletes or misspells a module: no install step would mend it.
    code, report = _verify(_src_project(tmp_path, "from calcc import add"))
    assert report["status"] == "FAILED", report["note"]
    assert code == 1
    assert _pytest_check(report)["cause"] == "exit_nonzero"


def _shadowing_project(root: Path, test_body: str) -> Path:
    """A src-layout project named as a distribution the checks' environment has installed
    (defusedxml, one of assay's own): its tree holds a broken copy of the package."""
    test = f"import defusedxml\n\n\ndef test_it():\n{test_body}\n"
    return _src_layout(root, "defusedxml", "def parse(text):\n    return None\n", test)


@pytest.mark.parametrize(
    "test_body",
    [
        # passes on the installed copy, fails on the tree's (which has no defuse_stdlib)
        "    assert callable(defusedxml.defuse_stdlib)",
        # fails on either: still no word on the tree's code
        "    assert defusedxml.parse('<a/>') is not None",
    ],
    ids=["passing", "failing"],
)
def test_tests_that_imported_an_installed_copy_of_the_package_tested_nothing(
    tmp_path: Path, test_body: str
) -> None:
    """iniconfig's sdist: the tests imported pytest's own iniconfig from site-packages, and
    every change to `src/` was VERIFIED (a wrong value, a hang) or FAILED for nothing."""
    code, report = _verify(_shadowing_project(tmp_path, test_body))
    check = _pytest_check(report)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert (code, check["cause"]) == (4, "toolchain_missing")
    note = str(check["note"])
    assert "imported defusedxml, the project's own package under src/, from an installed" in note
    assert "site-packages/defusedxml/__init__.py" in note


def test_a_conftest_that_could_not_import_from_an_installed_copy_tested_nothing(
    tmp_path: Path,
) -> None:
    """packaging's tree with an older packaging installed: its conftest imports a name only
    the tree's package has, the installed copy lacks it, and pytest stops before any session
    (exit 4): the tree went untested, as when the tests import that copy."""
    root = _shadowing_project(tmp_path, "    assert True")
    (root / "tests" / "conftest.py").write_text("from defusedxml import parse\n")
    code, report = _verify(root)
    check = _pytest_check(report)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert (code, check["cause"]) == (4, "toolchain_missing")
    note = str(check["note"])
    assert "imported defusedxml, the project's own package under src/, from an installed" in note
    assert "site-packages/defusedxml/__init__.py" in note


def test_tests_that_import_the_trees_package_are_judged_on_it(tmp_path: Path) -> None:
    """The same project with its tree on the import path (pytest's `pythonpath`): the
    tree's package is what ran, and its failure is the verdict."""
    root = _shadowing_project(tmp_path, "    assert defusedxml.parse('<a/>') is not None")
    with (root / "pyproject.toml").open("a") as config:
        config.write('\n[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    code, report = _verify(root)
    assert (report["status"], code) == ("FAILED", 1), report["note"]
    assert _pytest_check(report)["cause"] == "exit_nonzero"


def test_only_the_trees_own_packages_from_an_installed_place_count(tmp_path: Path) -> None:
    from assay.own_package import installed_copies

    (tmp_path / "src" / "calc").mkdir(parents=True)
    (tmp_path / "src" / "single.py").write_text("")
    record = "\n".join(
        [
            "calc\t/venv/lib/python3.11/site-packages/calc/__init__.py",
            "single\t/usr/lib/python3/dist-packages/single.py",
            f"calc\t{tmp_path}/src/calc/__init__.py",  # the tree's: fine
            "json\t/usr/lib/python3.11/json/__init__.py",  # not the project's
            "pytest\t/venv/lib/python3.11/site-packages/pytest/__init__.py",
            "no tab here",
            "../calc\t/venv/lib/python3.11/site-packages/calc/__init__.py",
            "calc\t/home/u/my-site-packages-notes/calc.py",  # a name like it, not the place
        ]
    )
    assert installed_copies(record, str(tmp_path)) == [
        ("calc", "/venv/lib/python3.11/site-packages/calc/__init__.py"),
        ("single", "/usr/lib/python3/dist-packages/single.py"),
    ]


def _flat_project(root: Path, version_test: str, other_test: str = "") -> Path:
    """A flat-layout project (importable as it lies) whose test reads its own installed
    version, as toolz's `test_has_version` does (`importlib.metadata.version("toolz")`)."""
    (root / "pyproject.toml").write_text('[project]\nname = "flat-calc"\nversion = "1.0"\n')
    (root / "flat_calc").mkdir()
    (root / "flat_calc" / "__init__.py").write_text(
        "def __getattr__(name):\n"
        "    if name == '__version__':\n"
        "        from importlib.metadata import version\n"
        f"        return version({version_test!r})\n"
        "    raise AttributeError(name)\n\n\n"
        "def add(a, b):\n    return a + b\n"
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_flat.py").write_text(
        "import flat_calc\n\n\ndef test_add():\n    assert flat_calc.add(2, 2) == 4\n\n\n"
        "def test_has_version():\n    assert flat_calc.__version__.startswith('1.')\n" + other_test
    )
    return root


def test_a_flat_project_not_installed_whose_test_reads_its_metadata_is_unverified(
    tmp_path: Path,
) -> None:
    """toolz 1.1.0 without `pip install -e .`: 245 tests pass, `test_has_version` fails with
    `PackageNotFoundError: No package metadata was found for toolz`. Its CI installs the
    project first and passes; the tree is not at fault, a set-up step is missing."""
    code, report = _verify(_flat_project(tmp_path, "flat_calc"))
    check = _pytest_check(report)
    assert report["status"] == "UNVERIFIED", report["note"]
    assert code == 4
    assert check["cause"] == "toolchain_missing"
    assert "flat-calc, the project itself, is not installed" in str(check["note"])


def test_metadata_of_another_distribution_missing_still_fails(tmp_path: Path) -> None:
    # Not the project's own name: no install of the project would mend it.
    code, report = _verify(_flat_project(tmp_path, "not-this-project"))
    assert report["status"] == "FAILED", report["note"]
    assert code == 1


def test_a_real_failure_beside_the_missing_metadata_still_fails(tmp_path: Path) -> None:
    wrong = "\n\ndef test_zz_wrong():\n    assert flat_calc.add(2, 2) == 5\n"
    # With --all both failures are seen: one that is not the metadata's keeps it FAILED.
    repo = _flat_project(tmp_path, "flat_calc", wrong)
    done = assay("verify", "--json", "--no-cache", "--all", str(repo), timeout=180)
    assert json.loads(done.stdout)["status"] == "FAILED"


def test_the_projects_name_is_read_only_from_its_own_files(tmp_path: Path) -> None:
    """The name is read as discovery reads the tree: a pyproject.toml that is a link out of
    the tree (a host file, /dev/zero) names nothing, and never hangs the read."""
    from assay.own_package import uninstalled_own_distribution

    failure = "PackageNotFoundError: No package metadata was found for flat-calc"
    outside = tmp_path / "outside.toml"
    outside.write_text('[project]\nname = "flat-calc"\n')
    for target in (outside, Path("/dev/zero")):
        tree = tmp_path / f"tree-{target.name}"
        tree.mkdir()
        (tree / "pyproject.toml").symlink_to(target)
        assert uninstalled_own_distribution([failure], str(tree)) is None
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "pyproject.toml").write_text("[build-system]\nrequires = []\n")
    (tmp_path / "cfg" / "setup.cfg").write_text("[metadata]\nname = Flat_Calc\n")
    assert uninstalled_own_distribution([failure], str(tmp_path / "cfg")) == "flat-calc"


def test_an_import_error_names_the_installed_copy_it_loaded(tmp_path: Path) -> None:
    from assay.own_package import installed_copies_named

    (tmp_path / "src" / "packaging").mkdir(parents=True)
    site = "/venv/lib/python3.11/site-packages"
    output = (
        "E   ImportError: cannot import name '_cached_default_environment' from "
        f"'packaging.markers' ({site}/packaging/markers.py)\n"
        f"E   ImportError: cannot import name 'x' from 'pytest' ({site}/pytest/__init__.py)\n"
        f"E   ImportError: cannot import name 'y' from 'packaging' ({tmp_path}/src/packaging/a.py)"
    )
    assert installed_copies_named(output, str(tmp_path)) == [
        ("packaging", f"{site}/packaging/markers.py")
    ]
