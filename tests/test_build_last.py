"""A build the project's CI runs after its other checks runs after them here too.

prop-types' CI job lints, tests, then builds `prop-types.js` at the root, which its eslint
does not ignore. assay built first, so eslint linted the bundle: a pristine tree FAILED
where CI passes. The CI job's step order now decides; a build CI runs first stays first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.plan import Stage, plan_repository
from tests.cli import assay, no_traceback
from tests.repos import write

# The build writes a bundle with a lint error of its own (a `debugger` statement).
BUILD = "node -e \"require('fs').writeFileSync('bundle.js', 'debugger;\\\\n')\""
LINT = "node -e \"if (require('fs').existsSync('bundle.js')) { console.error('bundle.js:1:1: error: debugger'); process.exit(1) }\""


def _ci(*steps: str) -> str:
    lines = "\n".join(f"      - run: {step}" for step in steps)
    return (
        "name: ci\non: push\njobs:\n  ci:\n    runs-on: ubuntu-latest\n    steps:\n"
        f"      - uses: actions/checkout@v4\n{lines}\n"
    )


def _repo(root: Path, *steps: str) -> Path:
    manifest = {
        "name": "p",
        "version": "1.0.0",
        "scripts": {"build": BUILD, "lint": LINT, "test": "node --test test.js"},
    }
    return write(
        root,
        {
            ".github/workflows/ci.yml": _ci(*steps),
            "package.json": json.dumps(manifest),
            "test.js": "require('node:test')('adds', () => {});\n",
        },
    )


def _stages(root: Path) -> dict[str, str]:
    the_plan = plan_repository(root)
    return {c.name: the_plan.stage_of(c).value for c in the_plan.checks}


def test_a_build_ci_runs_after_the_other_checks_is_planned_last(tmp_path: Path) -> None:
    root = _repo(tmp_path, "npm ci", "npm run lint", "npm test", "npm run build")
    assert _stages(root) == {"npm-lint": "check", "npm-test": "check", "npm-build": "last"}


@pytest.mark.parametrize(
    "steps",
    [
        ("npm ci", "npm run build", "npm run lint", "npm test"),  # CI builds first
        ("npm ci", "npm run lint", "npm run build", "npm test"),  # the tests read the build
        ("npm ci", "npm run build"),  # nothing else in the job to order it against
    ],
)
def test_a_build_ci_runs_before_any_other_check_stays_first(
    tmp_path: Path, steps: tuple[str, ...]
) -> None:
    stages = _stages(_repo(tmp_path, *steps))
    assert stages["npm-build"] == Stage.BUILD.value, stages


@pytest.mark.parametrize(
    ("steps", "status"),
    [
        (("npm ci", "npm run lint", "npm test", "npm run build"), "VERIFIED"),
        (("npm ci", "npm run build", "npm run lint", "npm test"), "FAILED"),
    ],
)
def test_the_lint_sees_the_bundle_only_where_ci_builds_first(
    tmp_path: Path, steps: tuple[str, ...], status: str
) -> None:
    """For real: where CI builds last, the lint never sees the bundle and passes; where CI
    builds first, its lint sees it and fails, here as there."""
    done = assay("verify", "--json", "--no-cache", str(_repo(tmp_path / "repo", *steps)))
    no_traceback(done)
    report = json.loads(done.stdout)
    assert report["status"] == status, report["note"]
    order = [c["name"] for c in report["checks"]]
    assert order.index("npm-build") == (2 if status == "VERIFIED" else 0), order
