"""A CI command's variables: the values CI's own env gives them, and a command whose
variable CI sets where assay cannot read it (a Travis env matrix, the runner's own) is
not run with `${NAME}` as a literal word.

Measured on a real project: either 1.6.1's .travis.yml runs `cargo build --features
"${FEATURES}"` over `env: matrix: [FEATURES="", FEATURES="serde"]`; cargo was handed the
word `${FEATURES}` and the pristine crate was FAILED ("does not have the feature
`${FEATURES}`"). Real cargo in real bubblewrap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.discovery.ci_scripts import _expanded
from assay.pipeline import VerifyOptions, verify
from assay.plan import plan_repository
from assay.verdict import Status
from tests.cli import path_with_venv
from tests.repos import write

CRATE = {
    "Cargo.toml": (
        '[package]\nname = "feat"\nversion = "0.1.0"\nedition = "2021"\n\n'
        "[features]\ndefault = []\nextra = []\n"
    ),
    "src/lib.rs": (
        "pub fn two() -> i32 {\n    2\n}\n\n"
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn two() {\n"
        "        assert_eq!(super::two(), 2);\n    }\n}\n"
    ),
}

TRAVIS = (
    "language: rust\nscript:\n  - |\n"
    '      cargo build --features "${FEATURES}" &&\n'
    '      cargo test --features "${FEATURES}"\n'
    "env:\n  matrix:\n"
    '    - FEATURES=""\n'
    '    - FEATURES="extra"\n'
)

WORKFLOW = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    "    env:\n      FEATURES: extra\n"
    "    steps:\n      - run: cargo test --features $FEATURES\n"
)


def test_a_variable_ci_env_sets_is_given_its_value(tmp_path: Path) -> None:
    repo = write(tmp_path, {**CRATE, ".github/workflows/ci.yml": WORKFLOW})
    argvs = [c.argv for c in plan_repository(repo).checks]
    assert ("cargo", "test", "--features", "extra") in argvs, argvs


def test_a_variable_ci_sets_out_of_reach_is_no_literal_word(tmp_path: Path) -> None:
    repo = write(tmp_path, {**CRATE, ".travis.yml": TRAVIS})
    argvs = [c.argv for c in plan_repository(repo).checks]
    assert not any("${FEATURES}" in word for argv in argvs for word in argv), argvs


@pytest.mark.slow
def test_a_travis_env_matrix_crate_is_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    repo = write(tmp_path, {**CRATE, ".travis.yml": TRAVIS})
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False, timeout_s=300.0))
    assert report.status == Status.VERIFIED, [c.note for c in report.checks]


def test_a_long_value_named_many_times_is_left_named_within_the_bound(tmp_path: Path) -> None:
    # 64 KiB named 200 times would be 13 MB of one command: it stays `$BIG`, and the
    # command is left out as one naming what assay cannot tell.
    big = "x" * (64 * 1024)
    line = "pytest " + " ".join(["$BIG"] * 200)
    assert _expanded(line, {"BIG": big}, None) == line


#: The code is wrong; CI runs every test, and only a command assay reads otherwise than CI
#: runs it (fewer tests) could pass it.
BROKEN = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\n',
    "calc/__init__.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\ndef test_trivial():\n    assert True\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n"
    ),
}
#: CI's shell hands pytest `tests" -k "trivial` as one word; written into the command its
#: quotes would be syntax, and only test_trivial run.
QUOTED_VALUE = (
    "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    "    env:\n      SELECT: 'tests\" -k \"trivial'\n"
    '    steps:\n      - run: python -m pytest "$SELECT"\n'
)
#: The job's value is the matrix's, which replaces the workflow's: not test_trivial alone.
OVERRIDDEN_VALUE = (
    "on: push\nenv:\n  SELECT: test_trivial\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    '    strategy:\n      matrix:\n        select: ["test_trivial or test_add"]\n'
    "    env:\n      SELECT: ${{ matrix.select }}\n"
    '    steps:\n      - run: python -m pytest tests -k "$SELECT"\n'
)


@pytest.mark.slow
@pytest.mark.parametrize("workflow", [QUOTED_VALUE, OVERRIDDEN_VALUE], ids=["quoted", "override"])
def test_a_value_ci_would_not_run_as_written_selects_no_fewer_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workflow: str
) -> None:
    monkeypatch.setenv("PATH", path_with_venv())
    repo = write(tmp_path, {**BROKEN, ".github/workflows/ci.yml": workflow})
    argvs = [c.argv for c in plan_repository(repo).checks]
    assert not any("test_trivial" in w or "trivial" == w for a in argvs for w in a), argvs
    report = verify(repo, VerifyOptions(sandbox="bwrap", use_cache=False, timeout_s=300.0))
    assert report.status == Status.FAILED, [c.note for c in report.checks]


def test_a_value_of_shell_syntax_is_left_named() -> None:
    # `;`, `#`, `&&` and quotes in a value are its characters in CI, not syntax.
    for value in ("a; true", "x #", "a && b", 'a" "b', "`id`", "a|b", "*.py"):
        assert _expanded("pytest $V", {"V": value}, None) == "pytest $V", value
    assert _expanded("pytest $V", {"V": "-k not_slow tests/a.py"}, None) == (
        "pytest -k not_slow tests/a.py"
    )
