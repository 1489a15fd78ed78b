"""Protected-path patterns."""

from __future__ import annotations

import pytest

from assay.protect import protected_set
from assay.tools.spec import Ecosystem


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
    ],
)
def test_defaults_protect_tests_and_config(path: str) -> None:
    assert protected_set().matches(path)


@pytest.mark.parametrize(
    "path", ["src/app.py", "src/lib.rs", "main.go", "testsuite/x.py", "README.md"]
)
def test_code_is_not_protected(path: str) -> None:
    assert not protected_set().matches(path)


def test_languages_extra_and_exclude() -> None:
    go_only = protected_set([Ecosystem.GO])
    assert go_only.matches("a_test.go")
    assert not go_only.matches("tests/test_a.py")
    assert go_only.matches(".github/workflows/ci.yml")  # CI config whatever the language
    custom = protected_set(["python"], extra=["fixtures/**"], exclude=["tox.ini"])
    assert custom.matches("fixtures/data.json")
    assert not custom.matches("tox.ini")


def test_shared_files_protect_sections() -> None:
    protected = protected_set()
    assert "tool.pytest" in protected.section_keys("pyproject.toml")
    assert "jest" in protected.section_keys("web/package.json")
    assert protected.section_keys("src/app.py") == ()
