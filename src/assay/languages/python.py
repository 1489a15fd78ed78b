"""Python: byte-compile, mypy or pyright, ruff, pytest."""

from __future__ import annotations

import tomllib
from pathlib import Path

from assay.evidence import Check
from assay.languages import LanguageAdapter
from assay.toolchains import Language
from assay.verdict import Kind

#: Directories byte-compiling skips: environments and caches are not the project's code.
COMPILE_EXCLUDE = r"(^|/)(\.venv|venv|\.tox|\.nox|node_modules|\.git|build|dist)/"


def _interpreter(root: Path) -> str:
    # The project's own virtualenv when it has one: its Python is the one its code targets.
    for candidate in (".venv/bin/python", "venv/bin/python"):
        if (root / candidate).is_file():
            return candidate
    return "python3"


def _pyright_configured(root: Path) -> bool:
    """Whether the project configures pyright: then it, not mypy, is the type checker."""
    if (root / "pyrightconfig.json").is_file():
        return True
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, ValueError):
        return False
    tools = data.get("tool")
    return isinstance(tools, dict) and "pyright" in tools


def checks(root: Path) -> list[Check]:
    source = "default:python"
    python = _interpreter(root)
    typecheck = (
        Check(
            "pyright",
            Kind.TYPECHECK,
            ("pyright",),
            tool="pyright",
            source=source,
            reason="pyright is configured for this project",
        )
        if _pyright_configured(root)
        else Check(
            "mypy",
            Kind.TYPECHECK,
            ("mypy", "."),
            tool="mypy",
            source=source,
            reason="mypy is the default Python type checker",
        )
    )
    return [
        Check(
            "compileall",
            Kind.BUILD,
            (python, "-m", "compileall", "-q", "-x", COMPILE_EXCLUDE, "."),
            tool="compileall",
            source=source,
            reason="every module must at least byte-compile",
        ),
        typecheck,
        Check(
            "ruff",
            Kind.LINT,
            ("ruff", "check", "."),
            tool="ruff",
            source=source,
            reason="ruff is the default Python linter",
        ),
        Check(
            "pytest",
            Kind.TEST,
            ("pytest",),
            tool="pytest",
            source=source,
            reason="pytest runs pytest and unittest suites",
        ),
    ]


ADAPTER = LanguageAdapter(
    language=Language.PYTHON,
    markers=("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"),
    checks=checks,
)
