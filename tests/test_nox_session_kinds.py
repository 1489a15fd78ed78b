"""A nox session's command is taken as the kind of check it is where the session's name
says lint or typing: resolvelib's `lint` session runs `mypy src tests`, which was dropped
as "not a lint command", and assay type-checked `src` alone from `[tool.mypy]`: a type
error in the tests, which the maintainers' session fails on, was VERIFIED."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.plan import plan_repository
from assay.verdict import Kind
from tests.cli import assay, assay_env, no_traceback
from tests.repos import write_dedented

NOXFILE = """
    import nox

    @nox.session
    def lint(session):
        session.install(".[lint]")
        session.run("ruff", "check", ".")
        session.run("mypy", "src", "tests")
"""


def _tree(root: Path, test_body: str) -> Path:
    return write_dedented(
        root,
        {
            "noxfile.py": NOXFILE,
            "pyproject.toml": """
                [project]
                name = "eg"
                version = "1"
                [tool.mypy]
                warn_unused_configs = true
            """,
            "src/eg/__init__.py": "def one() -> int:\n    return 1\n",
            "tests/test_one.py": test_body,
        },
    )


def test_a_lint_session_s_type_check_is_planned_as_the_session_runs_it(tmp_path: Path) -> None:
    p = plan_repository(_tree(tmp_path, "x: int = 1\n"))
    (mypy,) = [c for c in p.checks if c.kind is Kind.TYPECHECK]
    assert mypy.argv[-3:] == ("mypy", "src", "tests"), mypy.argv
    assert str(mypy.source).startswith("noxfile.py"), mypy.source
    assert not [d for d in p.dropped if d.source.file == "noxfile.py"], p.dropped


def test_a_type_error_in_the_tests_the_lint_session_checks_fails(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", 'x: int = "one"\n')
    env = assay_env(ASSAY_CACHE_DIR=str(tmp_path / "state"))
    done = assay(
        "verify", "--json", "--no-cache", "--kind", "typecheck", str(repo), env=env, timeout=300
    )
    no_traceback(done)
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["status"] == "FAILED", report["note"]
    (mypy,) = [c for c in report["checks"] if c["kind"] == "typecheck"]
    assert [d["file"] for d in mypy["diagnostics"]] == ["tests/test_one.py"], mypy["diagnostics"]
