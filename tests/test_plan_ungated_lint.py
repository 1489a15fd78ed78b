"""A task runner's lint that CI never runs, where CI runs the project's checks and none of
them lints, is left out (`plan._drop_unstated_lints`): jsmn's `make lint` runs clang-tidy
with every check on, for its authors; its CI runs `make test`. Planned, a machine without
clang-tidy made every verdict UNVERIFIED."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.plan import plan_repository
from tests.cli import assay, no_traceback
from tests.repos import workflow, write

WORKFLOW = ".github/workflows/ci.yml"
MAKEFILE = "test:\n\tcc -o t t.c && ./t\n\nlint:\n\tno-such-linter-q7 --checks='*' t.c\n"
PROGRAM = '#include <stdio.h>\nint main(void) { puts("1 passed"); return 0; }\n'


def project(root: Path, files: dict[str, str]) -> Path:
    return write(root, {"Makefile": MAKEFILE, "t.c": PROGRAM, **files})


@pytest.mark.parametrize(
    ("files", "kept"),
    [
        pytest.param({WORKFLOW: workflow("make test")}, False, id="ci-tests-only"),
        pytest.param({WORKFLOW: workflow("make test", "make lint")}, True, id="ci-lints-with-it"),
        pytest.param({}, True, id="no-ci"),
    ],
)
def test_a_task_runner_lint_ci_never_runs_is_left_out(
    tmp_path: Path, files: dict[str, str], kept: bool
) -> None:
    the_plan = plan_repository(project(tmp_path, files))
    names = [c.name for c in the_plan.checks]
    assert "make-test" in names
    assert ("make-lint" in names) is kept, names
    if not kept:
        why = next(d.reason for d in the_plan.dropped if "lint" in d.what)
        assert "none of them lints" in why


def test_its_missing_tool_no_longer_leaves_the_verdict_unverified(tmp_path: Path) -> None:
    root = project(tmp_path / "repo", {WORKFLOW: workflow("make test")})
    done = assay("verify", "--json", "--no-cache", str(root), timeout=300)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == "VERIFIED", report["note"]


#: path-to-regexp's: a `lint` script its ts-scripts no longer has, beside the tests CI runs.
PACKAGE_JSON = (
    '{"name": "p", "version": "1.0.0", "scripts": '
    '{"test": "node --test", "lint": "no-such-linter-q7 src"}}'
)


@pytest.mark.parametrize(
    ("files", "kept"),
    [
        pytest.param({WORKFLOW: workflow("npm test")}, False, id="ci-tests-only"),
        pytest.param({WORKFLOW: workflow("npm test", "npm run lint")}, True, id="ci-lints-too"),
        pytest.param({}, True, id="no-ci"),
    ],
)
def test_a_package_scripts_lint_ci_never_runs_is_left_out(
    tmp_path: Path, files: dict[str, str], kept: bool
) -> None:
    root = write(tmp_path, {"package.json": PACKAGE_JSON, "test/a.test.js": "", **files})
    names = [c.name for c in plan_repository(root).checks]
    assert ("npm-lint" in names) is kept, names
