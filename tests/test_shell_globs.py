"""A pattern the project's shell expands (`mypy pkg tests/*.py` in a CI step) is given the
tree's matches, as that shell would (`assay.discovery.shell_globs`): asttokens 3.0.2."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.files import RepoFiles
from assay.discovery.shell_globs import expand, unquoted_patterns
from assay.pipeline import VerifyOptions, verify
from assay.plan import plan_repository
from assay.verdict import Status
from tests.cli import path_with_venv
from tests.repos import write

WORKFLOW = ".github/workflows/ci.yml"


def ci(step: str) -> str:
    return (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n      - run: {step}\n"
    )


@pytest.mark.parametrize(
    ("line", "patterns"),
    [
        ("python -m mypy asttokens tests/*.py", {"tests/*.py"}),
        ("pytest tests/test_[ab]?.py && flake8 *.py", {"tests/test_[ab]?.py", "*.py"}),
        ("mypy 'tests/*.py'", set()),
        ('mypy "tests/*.py"', set()),
        ("mypy tests/\\*.py", set()),
        ("mypy $SRC/*.py", set()),
        ("flake8 --exclude=build/* .", set()),
        ("ruff check --exclude 'docs/*' .", set()),
    ],
)
def test_only_unquoted_unescaped_words_are_patterns(line: str, patterns: set[str]) -> None:
    assert unquoted_patterns(line) == patterns


@pytest.fixture
def tree(tmp_path: Path) -> RepoFiles:
    write(
        tmp_path,
        {
            "tests/test_b.py": "",
            "tests/test_a.py": "",
            "tests/.hidden.py": "",
            "tests/data/x.py": "",
            "sub/tests/test_c.py": "",
            "setup.py": "",
        },
    )
    (tmp_path / "out").symlink_to("/usr/lib")
    return RepoFiles(str(tmp_path))


@pytest.mark.parametrize(
    ("cwd", "pattern", "matches"),
    [
        (".", "tests/*.py", ("tests/test_a.py", "tests/test_b.py")),
        (".", "tests/.*.py", ("tests/.hidden.py",)),
        (".", "*/*.py", ("tests/test_a.py", "tests/test_b.py")),
        (".", "tests/*/x.py", ("tests/data/x.py",)),
        ("sub", "tests/*.py", ("tests/test_c.py",)),
        (".", "docs/*.rst", ()),
        (".", "../*", ()),
        (".", "/etc/*", ()),
        (".", "out/*", ()),
    ],
)
def test_a_pattern_is_expanded_inside_the_tree_as_bash_would(
    tree: RepoFiles, cwd: str, pattern: str, matches: tuple[str, ...]
) -> None:
    assert expand(tree, cwd, pattern) == matches


def test_a_ci_step_gets_the_matches_and_a_tox_command_does_not(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "tests/test_a.py": "", "tests/test_b.py": ""}
    stepped = write(tmp_path / "ci", {**files, WORKFLOW: ci("mypy pkg tests/*.py")})
    (mypy,) = [c for c in plan_repository(stepped).checks if c.name == "mypy"]
    assert mypy.argv[-3:] == ("pkg", "tests/test_a.py", "tests/test_b.py")
    # tox starts its commands without a shell: its pattern is mypy's to read, as written.
    tox = "[tox]\nenvlist = py\n[testenv]\ncommands = mypy pkg tests/*.py\n"
    toxed = write(tmp_path / "tox", {**files, "tox.ini": tox, "setup.py": ""})
    (mypy,) = [c for c in plan_repository(toxed).checks if c.name.startswith("mypy")]
    assert mypy.argv[-2:] == ("pkg", "tests/*.py")


def test_the_maintainers_mypy_runs_for_real(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    root = write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'pkg'\nversion = '1'\n",
            "pkg/__init__.py": "def double(x: int) -> int:\n    return x * 2\n",
            "tests/test_pkg.py": "from pkg import double\n\n\ndef test_double() -> None:\n"
            "    assert double(2) == 4\n",
            WORKFLOW: ci("python -m mypy pkg tests/*.py && python -m pytest"),
        },
    )
    report = verify(root, VerifyOptions(sandbox="local", use_cache=False))
    assert report.status is Status.VERIFIED, report.note
    (tests,) = [e for e in report.checks if e.check.name == "mypy"]
    assert "tests/test_pkg.py" in tests.check.argv
    (root / "tests" / "test_pkg.py").write_text(
        "from pkg import double\n\n\ndef test_double() -> None:\n    assert double('2') == 4\n"
    )
    failed = verify(root, VerifyOptions(sandbox="local", use_cache=False))
    assert failed.status is Status.FAILED
    assert any(not e.passed and e.check.name == "mypy" for e in failed.checks)
