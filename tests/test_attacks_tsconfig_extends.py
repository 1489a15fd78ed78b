"""Under `--protect`, the files a base's TypeScript configuration extends are its own.

`tsconfig.json` is protected by its name; what it says may live in a file of another
name it extends. A change that excluded its source in `config/base.json` (which the
protected `tsconfig.json` extends) had tsc check nothing: VERIFIED with a type error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from assay.discovery.files import RepoFiles
from assay.discovery.tsconfig_extends import extended_configs
from tests.cli import verified_json
from tests.repos import commit_all, write

STRICT = (
    '{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022",'
    ' "module": "nodenext"}, "include": ["../src"]}\n'
)
EXCLUDED = STRICT.replace('"include": ["../src"]', '"exclude": ["../src/calc.ts"], "files": []')
BASE = {
    "package.json": (
        '{"name": "calc", "version": "1.0.0", "type": "module",'
        ' "scripts": {"test": "node --test"}}\n'
    ),
    "tsconfig.json": '{"extends": "./config/base.json"}\n',
    "config/base.json": STRICT,
    "src/calc.ts": "export function add(a: number, b: number): number {\n  return a + b;\n}\n",
    "test/calc.test.js": (
        "import test from 'node:test';\nimport assert from 'node:assert';\n\n"
        "test('adds', () => {\n  assert.strictEqual(1 + 1, 2);\n});\n"
    ),
}


def test_a_change_to_the_file_tsconfig_extends_is_undone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write(repo, BASE)
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
            "config/base.json": EXCLUDED,
            "src/calc.ts": BASE["src/calc.ts"] + 'export const label: number = "sum";\n',
        },
    )
    report = verified_json(repo, tmp_path / "state", "--base", "HEAD", "--protect", "--install")
    assert report["status"] == "FAILED", report["note"]
    assert "src/calc.ts" in report["note"], report["note"]


def test_what_is_extended_is_followed_from_file_to_file(tmp_path: Path) -> None:
    root = write(
        tmp_path / "t",
        {
            "tsconfig.json": '{\n  // two of them\n  "extends": ["./a.json", "@tsconfig/node20"]\n}\n',
            "a.json": '{"extends": "./shared/b"}\n',
            "shared/b.json": "{}\n",
            "pkg/tsconfig.build.json": '{"extends": "../../outside.json"}\n',
        },
    )
    assert sorted(extended_configs(RepoFiles(str(root)))) == ["a.json", "shared/b.json"]
