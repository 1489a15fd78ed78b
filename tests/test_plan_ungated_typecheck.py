"""A type checker only its configuration implies is left out where the project says what
its CI runs and nothing there runs it (`plan._drop_ungated_type_checkers`): cattrs'
strict `[tool.mypy]` serves pytest-typing, and fails its own `src` by 477 errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.pipeline import VerifyOptions, verify
from assay.plan import PlanOptions, plan_repository
from assay.verdict import Kind, Status
from tests.cli import path_with_venv
from tests.repos import write

WORKFLOW = ".github/workflows/ci.yml"
PYPROJECT = "[project]\nname = 'pkg'\nversion = '1'\n\n[tool.mypy]\nstrict = true\n"
#: Well-typed enough for tests, not for strict mypy: an unannotated function.
MODULE = "def double(x):\n    return x * 2\n"
TEST = "from pkg import double\n\n\ndef test_double():\n    assert double(2) == 4\n"


def ci(*steps: str) -> str:
    runs = "".join(f"      - run: {step}\n" for step in steps)
    return (
        "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
        f"    steps:\n      - uses: actions/checkout@v4\n{runs}"
    )


def project(root: Path, files: dict[str, str] | None = None) -> Path:
    return write(
        root,
        {
            "pyproject.toml": PYPROJECT,
            "pkg/__init__.py": MODULE,
            "tests/test_pkg.py": TEST,
            **(files or {}),
        },
    )


def planned(root: Path, **options: object) -> list[str]:
    return [c.name for c in plan_repository(root, PlanOptions(**options)).checks]  # type: ignore[arg-type]


def test_a_configured_mypy_no_command_runs_is_left_out(tmp_path: Path) -> None:
    root = project(tmp_path, {WORKFLOW: ci("pip install -e .", "pytest")})
    the_plan = plan_repository(root)
    assert "mypy" not in [c.name for c in the_plan.checks]
    assert "pytest" in [c.name for c in the_plan.checks]
    why = next(d.reason for d in the_plan.dropped if d.what.startswith("mypy"))
    assert "not part of the maintainers' gate" in why


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({WORKFLOW: ci("pytest", "mypy pkg")}, id="ci-runs-it"),
        pytest.param({}, id="no-ci-at-all"),
        pytest.param(
            {
                WORKFLOW: ci("pytest"),
                ".pre-commit-config.yaml": "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n"
                "    rev: v1.10.0\n    hooks:\n      - id: mypy\n",
            },
            id="a-hook-names-it",
        ),
        pytest.param(
            {
                WORKFLOW: ci("pip install hatch", "hatch run types:check"),
                "pyproject.toml": PYPROJECT
                + "\n[tool.hatch.envs.types.scripts]\ncheck = 'mypy pkg'\n",
            },
            id="a-hatch-script-runs-it",
        ),
    ],
)
def test_a_configured_mypy_is_kept_where_something_may_run_it(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert "mypy" in planned(project(tmp_path, files))


def test_stubtest_is_no_mypy_run(tmp_path: Path) -> None:
    """more-itertools 10.5.0: CI's `make check` runs stubtest, which passes, where `mypy
    more_itertools` finds an unannotated argument in more.pyi: the `[mypy]` section serves
    stubtest, and a mypy the maintainers never run would fail their tree."""
    makefile = "check:\n\tstubtest pkg\n"
    root = project(tmp_path, {WORKFLOW: ci("pytest", "make check"), "Makefile": makefile})
    assert "mypy" not in planned(root)


def test_mypy_among_the_test_dependencies_is_no_command(tmp_path: Path) -> None:
    pyproject = PYPROJECT + "\n[dependency-groups]\ntest = ['pytest', 'mypy', 'pytest-typing']\n"
    root = project(tmp_path, {WORKFLOW: ci("pytest"), "pyproject.toml": pyproject})
    assert "mypy" not in planned(root)


def test_asked_for_by_kind_it_runs(tmp_path: Path) -> None:
    root = project(tmp_path, {WORKFLOW: ci("pytest")})
    assert planned(root, kinds=frozenset({Kind.TYPECHECK})) == ["mypy"]


def test_the_maintainers_answer_for_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real mypy and pytest: strict mypy fails this code; the project whose CI runs only
    its tests is VERIFIED, the one whose CI also runs mypy FAILED."""
    monkeypatch.setenv("PATH", path_with_venv())
    options = VerifyOptions(sandbox="local", use_cache=False)
    tests_only = project(tmp_path / "tests-only", {WORKFLOW: ci("pytest")})
    typed = project(tmp_path / "typed", {WORKFLOW: ci("pytest", "mypy pkg")})
    passed = verify(tests_only, options)
    assert passed.status is Status.VERIFIED, passed.note
    failed = verify(typed, options)
    assert failed.status is Status.FAILED, failed.note
    assert [e.check.name for e in failed.checks if not e.passed] == ["mypy"]


TSCONFIG = '{"compilerOptions": {"strict": true, "noEmit": true}, "include": ["src"]}\n'
#: Fine for node, not for strict tsc: a parameter with no type.
TS_MODULE = "export function double(x) {\n  return x * 2;\n}\n"


def ts_project(root: Path, workflow: str | None) -> Path:
    files = {
        "package.json": '{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}',
        "tsconfig.json": TSCONFIG,
        "src/index.ts": TS_MODULE,
        "test/a.test.js": "require('node:test')('a', () => {});\n",
    }
    if workflow is not None:
        files[WORKFLOW] = workflow
    return write(root, files)


@pytest.mark.parametrize(
    ("workflow", "planned"),
    [
        (ci("npm ci", "npm test"), False),  # cookie-es: its CI's type check is commented out
        (ci("npm ci", "npx tsc --noEmit", "npm test"), True),
        (ci("npm ci", "npm test  # tsc is run by the editor"), True),  # named: it may run
        (None, True),  # nothing says what the maintainers run
    ],
)
def test_a_tsconfig_no_command_runs_is_left_out_like_a_configured_mypy(
    tmp_path: Path, workflow: str | None, planned: bool
) -> None:
    checks = plan_repository(ts_project(tmp_path, workflow)).checks
    assert any(c.tool == "tsc" for c in checks) is planned, checks
    asked = plan_repository(tmp_path, PlanOptions(kinds=frozenset({Kind.TYPECHECK}))).checks
    assert [c.tool for c in asked] == ["tsc"]
