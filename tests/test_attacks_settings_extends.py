"""Under `--protect`, the files a base's linter and type checker settings extend or load
are its own.

`ruff.toml`, `pyproject.toml`'s `[tool.ruff]` and `eslint.config.js` are protected by
their names; what they say may live in a file of another name they extend or import. A
change that ignored F821 in the file `[tool.ruff]` extends, or turned `no-undef` off in
the module `eslint.config.js` spreads, was VERIFIED with the error the base's linter
reported.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from assay.discovery.files import RepoFiles
from assay.discovery.settings_extends import extended_settings
from tests.cli import verified_json
from tests.repos import commit_all, write

RUFF_BASE = {
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "0.1.0"\n\n'
        '[tool.ruff]\nextend = "config/ruff-base.toml"\n'
    ),
    "config/ruff-base.toml": '[lint]\nselect = ["E", "F"]\n',
    "calc.py": "def add(a, b):\n    return a + b\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}

ESLINT_RULES = """export default [
  {
    files: ["**/*.js"],
    languageOptions: { sourceType: "module", globals: { console: "readonly" } },
    rules: { "no-undef": "error" },
  },
];
"""
ESLINT_BASE = {
    "package.json": (
        '{"name": "calc", "version": "1.0.0", "type": "module",'
        ' "scripts": {"test": "node --test", "lint": "eslint ."}}\n'
    ),
    "eslint.config.js": 'import base from "./config/eslint.base.js";\n\nexport default [...base];\n',
    "config/eslint.base.js": ESLINT_RULES,
    "src/calc.js": "export function add(a, b) {\n  return a + b;\n}\n",
    "test/calc.test.js": (
        "import test from 'node:test';\nimport assert from 'node:assert';\n"
        "import { add } from '../src/calc.js';\n\n"
        "test('adds', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n"
    ),
}


def test_a_change_to_the_file_ruff_extends_is_undone(tmp_path: Path) -> None:
    repo = commit_all(write(tmp_path / "repo", RUFF_BASE))
    write(
        repo,
        {
            "config/ruff-base.toml": '[lint]\nselect = ["E", "F"]\nignore = ["F821"]\n',
            "calc.py": RUFF_BASE["calc.py"].replace("len(xs)", "lenght(xs)"),
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect")
    assert report["status"] == "FAILED", report["note"]
    assert "lenght" in report["note"], report["note"]


def test_a_change_to_the_module_eslint_config_imports_is_undone(tmp_path: Path) -> None:
    repo = write(tmp_path / "repo", ESLINT_BASE)
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--offline", "--no-audit", "--no-fund"],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    commit_all(repo)
    write(
        repo,
        {
            "config/eslint.base.js": ESLINT_RULES.replace('"error"', '"off"'),
            "src/calc.js": ESLINT_BASE["src/calc.js"]
            + "export function total(xs) {\n  return xs.length + count;\n}\n",
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect", "--install")
    assert report["status"] == "FAILED", report["note"]
    assert "'count' is not defined" in report["note"], report["note"]


MYPY_PLUGIN = """from mypy.plugin import Plugin


class UnitsPlugin(Plugin):
    pass


def plugin(version):
    return UnitsPlugin
"""
# A plugin that makes `int` and `str` Any: mypy then finds no type error anywhere.
MYPY_PLUGIN_BLIND = """from mypy.plugin import Plugin
from mypy.types import AnyType, TypeOfAny


class UnitsPlugin(Plugin):
    def get_type_analyze_hook(self, fullname):
        if fullname in ("builtins.str", "builtins.int"):
            return lambda ctx: AnyType(TypeOfAny.special_form)
        return None


def plugin(version):
    return UnitsPlugin
"""
MYPY_BASE = {
    "pyproject.toml": (
        '[project]\nname = "calc"\nversion = "0.1.0"\n\n'
        '[tool.mypy]\nfiles = ["calc.py"]\nplugins = ["tools/mypy_units.py"]\n'
    ),
    "tools/mypy_units.py": MYPY_PLUGIN,
    "calc.py": (
        "def add(a: int, b: int) -> int:\n    return a + b\n\n\n"
        "def label(n: int) -> str:\n    return 'n=' + str(n)\n"
    ),
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_a_change_to_a_mypy_plugin_the_base_names_is_undone(tmp_path: Path) -> None:
    repo = commit_all(write(tmp_path / "repo", MYPY_BASE))
    write(
        repo,
        {
            "tools/mypy_units.py": MYPY_PLUGIN_BLIND,
            "calc.py": MYPY_BASE["calc.py"].replace("'n=' + str(n)", "n + 1"),
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect")
    assert report["status"] == "FAILED", report["note"]
    assert "Incompatible return value type" in report["note"], report["note"]


def test_what_settings_extend_is_followed_from_file_to_file(tmp_path: Path) -> None:
    root = write(
        tmp_path / "t",
        {
            "package.json": (
                '{"main": "./plugin.js", "eslintConfig": {"extends": ["eslint:recommended",'
                ' "./lint/legacy"], "overrides": [{"extends": "./lint/tests.yml"}]}}\n'
            ),
            "plugin.js": "",
            "lint/legacy.js": "module.exports = { extends: ['./more.json'] };\n",
            "lint/more.json": "{}\n",
            "lint/tests.yml": "rules: {}\n",
            "eslint.config.mjs": (
                'import own from "./plugin.js";\nimport code from "./src/rules.js";\n'
                'import shared from "./lint/flat.mjs";\n'
            ),
            "src/rules.js": "",
            "lint/flat.mjs": 'export { default } from "./flat-rules.mjs";\n',
            "lint/flat-rules.mjs": "",
            "pkg/pyrightconfig.json": '{\n  // strict, shared\n  "extends": "../types/base.json"\n}\n',
            "types/base.json": '{"extends": "./root.json"}\n',
            "types/root.json": "{}\n",
            "biome.json": '{"extends": ["./biome.base.json", "@org/biome-config", "//"]}\n',
            "biome.base.json": "{}\n",
            "ruff.toml": 'extend = "../outside.toml"\n',
            "mypy.ini": "[mypy]\nplugins = tools/units.py, checks.plugin:entry, pydantic.mypy\n",
            "tools/units.py": "",
            "src/checks/plugin.py": "",
        },
    )
    assert sorted(extended_settings(RepoFiles(str(root)))) == [
        "biome.base.json",
        "lint/flat-rules.mjs",
        "lint/flat.mjs",
        "lint/legacy.js",
        "lint/more.json",
        "lint/tests.yml",
        "src/checks/plugin.py",
        "tools/units.py",
        "types/base.json",
        "types/root.json",
    ]
