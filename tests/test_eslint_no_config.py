"""A lint or test run that stops because ESLint found no configuration checked nothing of
the code: UNVERIFIED, naming the file to restore, not FAILED.

Measured on a real project: ts-dedent 2.2.0's npm tarball leaves its `.eslintrc` out. Its
`lint` script (`eslint .`) and `test` (whose `pretest` hook runs the lint) stop at "ESLint
couldn't find a configuration file"; assay said FAILED, "npm-lint failed (exited 2): Oops!
Something went wrong! :(", and the tests "exited 2 and its output does not say why".
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from assay.missing_config import no_config_found
from tests.cli import assay
from tests.repos import write


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("ESLint couldn't find a configuration file. To set up", ".eslintrc.*"),
        ("ESLint couldn't find an eslint.config.(js|mjs|cjs) file.", "eslint.config.(js|mjs|cjs)"),
        ("ESLint couldn't find an eslint.config.* file.", "eslint.config.*"),
    ],
    ids=["eslint8", "eslint9", "eslint10"],
)
def test_each_eslint_says_it_found_none(said: str, named: str) -> None:
    found = no_config_found(f"\nOops! Something went wrong! :(\n\n{said}\n")
    assert found is not None and named in found


def test_a_line_that_only_quotes_it_is_not_eslint_saying_it() -> None:
    assert no_config_found("  > ESLint couldn't find a configuration file.\n") is None


@pytest.mark.slow
def test_a_lint_and_its_pretest_without_an_eslint_configuration_are_unverified(
    tmp_path: Path,
) -> None:
    assert shutil.which("eslint") is not None, "eslint is not installed (.ci/run installs it)"
    scripts = {"lint": "eslint .", "pretest": "npm run lint", "test": "node --test"}
    files = {
        "package.json": json.dumps({"name": "x", "version": "1.0.0", "scripts": scripts}),
        "index.js": "module.exports = 1;\n",
        "test/a.test.js": "require('node:test')('a', () => {})\n",
    }
    repo = write(tmp_path / "repo", files)
    done = assay("verify", "--json", str(repo), timeout=300)
    report = json.loads(done.stdout)
    assert report["status"] == "UNVERIFIED", report["note"]
    verdicts = {c["name"]: (c["verdict"], c["note"]) for c in report["checks"]}
    for name in ("npm-lint", "npm-test"):
        verdict, note = verdicts[name]
        assert verdict == "unverified"
        assert note.startswith(f"{name} stopped because it found no ESLint configuration file")
