"""Protected-path patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.protect import protected_set
from assay.tools.spec import Ecosystem
from tests.repos import write


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_api.py",
        "pkg/tests/helpers.py",
        "test_root.py",
        "src/mod_test.py",
        "conftest.py",
        "a/b/conftest.py",
        "pytest.ini",
        "tox.ini",
        "src/app.test.ts",
        "web/__tests__/x.js",
        "jest.config.js",
        "vitest.config.ts",
        "pkg/x_test.go",
        "tests/integration.rs",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        "assay.toml",
        # every file a runner takes its configuration or its tests from
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "sub/pytest.ini",
        ".coveragerc",
        "app/tests.py",
        "testsuite.py",
        "noxfile.py",
        "calc-test.js",
        "test.mjs",
        "lib/test-helpers.js",
        ".mocharc.yml",
        "vite.config.ts",
        "babel.config.js",
        ".npmrc",
        ".yarnrc.yml",
        "pkg/testdata/golden.txt",
        "go.work",
        ".cargo/config.toml",
        "rust-toolchain.toml",
        "Makefile",
        "sub/GNUmakefile",
        "rules.mk",
        "justfile",
        # byte-code Python would import in place of a protected file
        "__pycache__/test_root.cpython-311.pyc",
        "pkg/__pycache__/conftest.cpython-311-pytest-9.2.0.pyc",
    ],
)
def test_defaults_protect_tests_and_config(path: str) -> None:
    assert protected_set().matches(path)


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "src/lib.rs",
        "main.go",
        "testsuite/x.py",
        "README.md",
        # the crate's own code, judged as the change wrote it
        "build.rs",
        "__pycache__/app.cpython-311.pyc",
    ],
)
def test_code_is_not_protected(path: str) -> None:
    assert not protected_set().matches(path)


def test_languages_extra_and_exclude() -> None:
    go_only = protected_set([Ecosystem.GO])
    assert go_only.matches("a_test.go")
    assert not go_only.matches("tests/test_a.py")
    assert go_only.matches(".github/workflows/ci.yml")  # CI config whatever the language
    # tox.ini is protected twice: as a Python test file and as pytest's configuration.
    custom = protected_set(["python"], extra=["fixtures/**"], exclude=["tox.ini", "**/tox.ini"])
    assert custom.matches("fixtures/data.json")
    assert not custom.matches("tox.ini")


def test_shared_files_protect_sections() -> None:
    protected = protected_set()
    assert "tool.pytest" in protected.section_keys("pyproject.toml")
    assert "jest" in protected.section_keys("web/package.json")
    # One script runs another: every script decides what `npm test` runs.
    assert {"scripts", "workspaces"} <= set(protected.section_keys("package.json"))
    assert {"lib.test", "package.autotests"} <= set(protected.section_keys("Cargo.toml"))
    assert protected.section_keys("src/app.py") == ()


def test_restoring_again_puts_back_rewrites_and_leaves_installed_trees_alone(
    tmp_path: Path,
) -> None:
    """What a change's setup.py or build step leaves: a rewritten test, a planted conftest
    and byte-code, beside a virtualenv and build output that hold tests of their own."""
    from assay.protected_workspace import restore_again

    base = write(tmp_path / "base", {"tests/test_a.py": "assert 1 == 2\n", "calc.py": ""})
    workspace = write(
        tmp_path / "work",
        {
            "tests/test_a.py": "assert True\n",
            "calc.py": "changed = True\n",
            "conftest.py": "forged = True\n",
            "__pycache__/conftest.cpython-311.pyc": b"\x00",
            "tests/__pycache__/test_a.cpython-311.pyc": b"\x00",
            ".venv/lib/python3.11/site-packages/pkg/tests/test_pkg.py": "",
            "dist/calc.test.js": "",
        },
    )
    done = restore_again(workspace, base, protected_set())
    assert done.restored == ("tests/test_a.py",)
    assert done.removed == ("conftest.py",)  # byte-code is removed without being reported
    assert (workspace / "tests/test_a.py").read_text() == "assert 1 == 2\n"
    assert not (workspace / "conftest.py").exists()
    assert not (workspace / "__pycache__/conftest.cpython-311.pyc").exists()
    assert not (workspace / "tests/__pycache__/test_a.cpython-311.pyc").exists()
    assert (workspace / ".venv/lib/python3.11/site-packages/pkg/tests/test_pkg.py").exists()
    assert (workspace / "dist/calc.test.js").exists()
    assert (workspace / "calc.py").read_text() == "changed = True\n"


def test_what_a_build_records_of_the_tests_is_removed_without_a_word(tmp_path: Path) -> None:
    """semver and jOOR under --protect: cargo's fingerprints of the test targets and Maven's
    compiled test classes were listed as added after the check stage, 11 to 20 a run."""
    from assay.protect import is_build_record
    from assay.protected_workspace import restore_again

    fingerprint = "target/debug/.fingerprint/calc-1a2b/test-lib-calc.json"
    base = write(tmp_path / "base", {"tests/test_a.py": "assert 1 == 2\n"})
    workspace = write(tmp_path / "work", {"tests/test_a.py": "assert 1 == 2\n", fingerprint: "{}"})
    done = restore_again(workspace, base, protected_set())
    assert done.removed == (), done
    assert not (workspace / fingerprint).exists()  # removed all the same
    assert is_build_record("target/test-classes/org/x/CalcTest.class")
    assert not is_build_record("tests/target/test_a.py")
    assert not is_build_record(".fingerprint")


def test_where_the_base_pytest_configuration_keeps_its_tests(tmp_path: Path) -> None:
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import pytest_test_files

    write(
        tmp_path,
        {
            "pytest.ini": "[pytest]\ntestpaths = checks/ ../outside /abs\n"
            "python_files = check_*.py sub/x_*.py\n"
        },
    )
    patterns = pytest_test_files(RepoFiles(str(tmp_path)))
    assert patterns == ("checks/**", "**/check_*.py")
    protected = protected_set(extra=patterns)
    assert protected.matches("checks/helpers/data.json")
    assert protected.matches("pkg/check_calc.py") and protected.matches("check_calc.py")


@pytest.mark.parametrize(
    ("testpaths", "tree"),
    [
        ("src tests", {"src/pkg/__init__.py": "", "tests/test_x.py": ""}),
        ("pkg", {"pkg/__init__.py": "", "pkg/tests/test_x.py": ""}),
        ("src/pkg", {"src/pkg/__init__.py": ""}),
        ("pytest_pkg", {"pytest_pkg/__init__.py": "", "pytest_pkg/tests/test_x.py": ""}),
        (".", {"pkg/__init__.py": ""}),
    ],
)
def test_a_testpaths_entry_that_holds_the_code_protects_only_its_tests(
    tmp_path: Path, testpaths: str, tree: dict[str, str]
) -> None:
    """humanize's `testpaths = ["src", "tests"]` protected all of src/: the change's code
    was put back to the base's before its tests ran, and a wrong value was VERIFIED."""
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import pytest_test_files

    write(tmp_path, {"pytest.ini": f"[pytest]\ntestpaths = {testpaths}\n", **tree})
    protected = protected_set(extra=pytest_test_files(RepoFiles(str(tmp_path))))
    for code in ("src/pkg/number.py", "pkg/number.py", "pkg/_version.py", "pytest_pkg/plugin.py"):
        assert not protected.matches(code), code
    for test in ("pkg/tests/test_x.py", "src/pkg/test_number.py", "tests/helpers.py"):
        assert protected.matches(test), test


@pytest.mark.parametrize("testpaths", ["testing", "unit_tests", "tests/unit", "checks"])
def test_a_testpaths_entry_of_tests_only_is_protected_whole(tmp_path: Path, testpaths: str) -> None:
    from assay.discovery.files import RepoFiles
    from assay.discovery.python import pytest_test_files

    top = testpaths.split("/")[0]
    write(
        tmp_path, {"pytest.ini": f"[pytest]\ntestpaths = {testpaths}\n", f"{top}/__init__.py": ""}
    )
    protected = protected_set(extra=pytest_test_files(RepoFiles(str(tmp_path))))
    assert protected.matches(f"{testpaths}/helpers/data.json") == (top != "checks")
