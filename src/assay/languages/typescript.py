"""TypeScript/JavaScript: tsc --noEmit, eslint, and the test runner the package uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.evidence import Check
from assay.languages import LanguageAdapter
from assay.toolchains import Language
from assay.verdict import Kind

#: npm's placeholder test script: it exits 1 without running anything.
NPM_PLACEHOLDER_TEST = "no test specified"

_ESLINT_CONFIGS = (
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    ".eslintrc",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yml",
    ".eslintrc.yaml",
)


def _package(root: Path) -> dict[str, Any]:
    try:
        data = json.loads((root / "package.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _table(package: dict[str, Any], key: str) -> dict[str, Any]:
    """`package[key]` when it is an object; a hand-edited package.json may hold anything."""
    value = package.get(key)
    return value if isinstance(value, dict) else {}


def _test_check(package: dict[str, Any], source: str) -> Check:
    deps = {**_table(package, "dependencies"), **_table(package, "devDependencies")}
    script = str(_table(package, "scripts").get("test") or "")
    if "vitest" in deps:
        return Check(
            "vitest",
            Kind.TEST,
            ("vitest", "run"),
            tool="vitest",
            source=source,
            reason="vitest is a dependency",
        )
    if "jest" in deps:
        return Check(
            "jest", Kind.TEST, ("jest",), tool="jest", source=source, reason="jest is a dependency"
        )
    if script and NPM_PLACEHOLDER_TEST not in script:
        return Check(
            "npm-test",
            Kind.TEST,
            ("npm", "test"),
            tool="npm",
            source="package.json:scripts.test",
            reason="the package's test script",
        )
    return Check(
        "node-test",
        Kind.TEST,
        ("node", "--test"),
        tool="node-test",
        source=source,
        reason="no test runner configured: Node's built-in runner",
    )


def checks(root: Path) -> list[Check]:
    source = "default:typescript"
    package = _package(root)
    found: list[Check] = []
    if (root / "tsconfig.json").is_file():
        found.append(
            Check(
                "tsc",
                Kind.TYPECHECK,
                ("tsc", "--noEmit"),
                tool="tsc",
                source=source,
                reason="tsconfig.json is present",
            )
        )
    if any((root / name).is_file() for name in _ESLINT_CONFIGS) or "eslintConfig" in package:
        found.append(
            Check(
                "eslint",
                Kind.LINT,
                ("eslint", "."),
                tool="eslint",
                source=source,
                reason="an ESLint configuration is present",
            )
        )
    found.append(_test_check(package, source))
    return found


ADAPTER = LanguageAdapter(
    language=Language.TYPESCRIPT, markers=("package.json", "tsconfig.json"), checks=checks
)
