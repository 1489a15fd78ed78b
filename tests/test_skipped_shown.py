"""A failed build skips the stages after it, and the human output says so for every
language: a line per skipped test check, naming the check whose failure stopped it
(real toolchains: python, node, go, cargo)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.cli import assay, no_traceback
from tests.repos import git, write

PACKAGE_JSON = """{
  "name": "fx",
  "version": "1.0.0",
  "scripts": {"build": "node build.js", "test": "node --test"}
}
"""

REPOS: dict[str, dict[str, str]] = {
    # Byte-compiling is only a syntax check and runs beside the tests; a build the project
    # states (a C extension's, here a Makefile's) is one the tests wait for.
    "python": {
        "pyproject.toml": '[project]\nname = "fx"\nversion = "0"\n\n[tool.pytest.ini_options]\n',
        "Makefile": "build:\n\tpython3 -c 'import fx'\n",
        "fx.py": "def add(a, b)\n    return a + b\n",  # a syntax error
        "test_fx.py": "def test_one():\n    assert True\n",
    },
    "node": {
        "package.json": PACKAGE_JSON,
        "build.js": "throw new Error('the build is broken')\n",
        "fx.test.js": "const test = require('node:test');\ntest('one', () => {});\n",
    },
    # go test compiles the code itself; a stated build runs before it.
    "go": {
        "go.mod": "module example.com/fx\n\ngo 1.18\n",
        "Makefile": "build:\n\tgo build ./...\n",
        "fx.go": "package fx\n\nfunc Add(a, b int) int { return a + }\n",
        "fx_test.go": 'package fx\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {}\n',
    },
    "rust": {
        "Cargo.toml": '[package]\nname = "fx"\nversion = "0.1.0"\nedition = "2021"\n',
        "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + }\n"
        "#[cfg(test)]\nmod tests {\n    #[test]\n    fn one() {}\n}\n",
    },
}
TOOLCHAINS = {"python": "python3", "node": "node", "go": "go", "rust": "cargo"}
# The test check each plan runs, and the build check whose failure skips it.
EXPECTED = {
    "python": ("pytest", "make-build"),
    "node": ("npm-test", "npm-build"),
    "go": ("go-test", "make-build"),
    "rust": ("cargo-test", "cargo-check"),
}


@pytest.mark.slow
@pytest.mark.parametrize("language", list(REPOS))
def test_a_failed_build_shows_the_tests_it_skipped(tmp_path: Path, language: str) -> None:
    # Never a skip: a test that does not run proves nothing, and CI installs these.
    assert shutil.which(TOOLCHAINS[language]), f"{TOOLCHAINS[language]} is not installed"
    repo = write(tmp_path / "repo", REPOS[language])
    git(repo, "init", "-q")
    done = assay("verify", "--no-cache", str(repo), timeout=300)
    no_traceback(done)
    assert done.returncode == 1, done.stdout + done.stderr
    test, build = EXPECTED[language]
    lines = done.stdout.splitlines()
    assert any(re.match(rf"fail\s+build\s+{re.escape(build)}\b", line) for line in lines), (
        done.stdout
    )
    skipped = [line for line in lines if line.startswith("skipped")]
    assert f"skipped      {test} (not run: {build} failed first)" in skipped, done.stdout
