"""The composite GitHub Action (`action.yml`): validated against GitHub's published schema
for action metadata, and its shell steps run for real, as the runner runs them.

Each `run:` step is executed with bash, with its `env:` values and `if:` conditions
evaluated from the action's inputs and the outputs earlier steps wrote to
`$GITHUB_OUTPUT`, against tiny real repositories verified in the real sandbox: a passing
project ends the job green, a failing one fails it after the SARIF is written, a path
that is not a project fails it with nothing to upload.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli import VENV_BIN, assay_env
from tests.repos import git_repo

CHECKOUT = Path(__file__).resolve().parents[1]
ACTION = CHECKOUT / "action.yml"
CHECK_JSONSCHEMA = VENV_BIN / "check-jsonschema"

PASSING = {
    "pyproject.toml": '[project]\nname = "tiny"\nversion = "0"\n',
    "test_math.py": "def add(a, b):\n    return a + b\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
}
FAILING = {
    **PASSING,
    "test_math.py": "def add(a, b):\n    return a - b\n\n\ndef test_add_sums():\n    assert add(2, 2) == 4\n",
}

WORKFLOW = """
name: verify
on: [push, pull_request]
permissions:
  contents: read
  security-events: write
jobs:
  assay:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - run: pip install pytest
      - uses: ./
        with:
          args: --all
"""


def action() -> dict[str, Any]:
    document = yaml.safe_load(ACTION.read_text())
    assert isinstance(document, dict)
    return document


def validate(path: Path, schema: str) -> subprocess.CompletedProcess[str]:
    if not CHECK_JSONSCHEMA.exists():
        pytest.skip("check-jsonschema is not installed (the test extra)")
    return subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_action_yml_matches_githubs_schema_for_actions(tmp_path: Path) -> None:
    done = validate(ACTION, "vendor.github-actions")
    assert done.returncode == 0, done.stdout + done.stderr
    # The validator can say no: a composite step without a shell is refused.
    broken = action()
    del broken["runs"]["steps"][1]["shell"]
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken))
    assert validate(tmp_path / "action.yml", "vendor.github-actions").returncode != 0


def test_a_workflow_using_the_action_matches_githubs_schema_for_workflows(tmp_path: Path) -> None:
    (tmp_path / "verify.yml").write_text(WORKFLOW)
    done = validate(tmp_path / "verify.yml", "vendor.github-workflows")
    assert done.returncode == 0, done.stdout + done.stderr


def readme_snippet(section: str, language: str) -> str:
    """The first ```LANGUAGE block of the README's `## SECTION`."""
    text = (CHECKOUT / "README.md").read_text()
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return body.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_the_readmes_workflow_matches_githubs_schema_for_workflows(tmp_path: Path) -> None:
    snippet = readme_snippet("GitHub Actions", "yaml")
    assert "security-events: write" in snippet
    (tmp_path / "verify.yml").write_text(snippet)
    done = validate(tmp_path / "verify.yml", "vendor.github-workflows")
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_input_is_pasted_into_a_script() -> None:
    # `${{ inputs.x }}` inside `run:` is shell code an input can inject into; env is data.
    for step in action()["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["name"]
    uploads = [s for s in action()["runs"]["steps"] if "uses" in s]
    assert [s["uses"] for s in uploads] == ["github/codeql-action/upload-sarif@v3"]


# ------------------------------------------------------------------ running the steps


@dataclass
class Run:
    """One run of the action's steps: what each did, and the job's outcome."""

    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    ran: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    uploads: list[dict[str, str]] = field(default_factory=list)
    log: str = ""
    failed_step: str | None = None


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def run_action(inputs: dict[str, str], workspace: Path, runner_temp: Path) -> Run:
    """Run the action's steps as the runner would; stops at the first failing step."""
    declared = action()["inputs"]
    values = {name: spec.get("default", "") for name, spec in declared.items()}
    unknown = set(inputs) - set(values)
    assert not unknown, f"not inputs of the action: {unknown}"
    values.update(inputs)
    action_path = snapshot(runner_temp / "action")
    context = {
        "inputs": values,
        "github": {"action_path": str(action_path), "workspace": str(workspace)},
        "runner": {"os": "Linux", "temp": str(runner_temp)},
    }
    result = Run()

    def lookup(expression: str) -> str:
        value: Any = {**context, "steps": {k: {"outputs": v} for k, v in result.outputs.items()}}
        for part in expression.split("."):
            value = value.get(part, "") if isinstance(value, dict) else ""
        return str(value)

    def condition(text: str) -> bool:
        """`a == 'x' && b == 'y'`: the only form the action's conditions use."""
        for clause in text.split("&&"):
            left, right = (side.strip() for side in clause.split("=="))
            if lookup(left) != right.strip("'"):
                return False
        return True

    for step in action()["runs"]["steps"]:
        name = step["name"]
        if "if" in step and not condition(step["if"]):
            result.skipped.append(name)
            continue
        if "uses" in step:  # GitHub's own action: what it would have been given
            with_ = {
                k: _EXPRESSION.sub(lambda m: lookup(m.group(1)), str(v))
                for k, v in step["with"].items()
            }
            result.uploads.append(with_)
            result.ran.append(name)
            continue
        output_file = runner_temp / f"output-{len(result.ran)}"
        output_file.write_text("")
        env = assay_env(
            RUNNER_TEMP=str(runner_temp),
            GITHUB_OUTPUT=str(output_file),
            GITHUB_WORKSPACE=str(workspace),
            ASSAY_CACHE_DIR=str(runner_temp / "assay-state"),
            **{
                k: _EXPRESSION.sub(lambda m: lookup(m.group(1)), str(v))
                for k, v in step.get("env", {}).items()
            },
        )
        assert step["shell"] == "bash"
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        result.ran.append(name)
        result.log += done.stdout + done.stderr
        if "id" in step:
            lines = output_file.read_text().splitlines()
            result.outputs[step["id"]] = dict(line.split("=", 1) for line in lines if "=" in line)
        if done.returncode != 0:
            result.failed_step = name
            break
    return result


def snapshot(target: Path) -> Path:
    """The files pip needs to install assay from the action's path, copied from this
    checkout (a build in the checkout itself would write into it)."""
    if not target.exists():
        ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
        target.mkdir(parents=True)
        for name in ("pyproject.toml", "README.md", "action.yml"):
            shutil.copy2(CHECKOUT / name, target / name)
        for tree in ("src", "scripts"):
            shutil.copytree(CHECKOUT / tree, target / tree, ignore=ignore)
    return target


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The runner's temporary directory, shared: assay is installed into it once."""
    return tmp_path_factory.mktemp("runner-temp")


def inputs_for() -> dict[str, str]:
    return {"python": sys.executable, "sarif": "out/assay.sarif", "junit": "out/junit.xml"}


@pytest.mark.slow
def test_a_passing_project_ends_the_job_green(tmp_path: Path, runner_temp: Path) -> None:
    workspace = git_repo(tmp_path / "workspace", PASSING)
    (workspace / "out").mkdir()
    run = run_action(inputs_for(), workspace, runner_temp)
    assert run.failed_step is None, run.log
    assert run.outputs["verify"]["status"] == "VERIFIED"
    assert "assay verify: VERIFIED" in run.log
    sarif = json.loads((workspace / "out/assay.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert "<testsuite" in (workspace / "out/junit.xml").read_text()
    assert run.uploads == [{"sarif_file": "out/assay.sarif", "category": "assay"}]


@pytest.mark.slow
def test_a_failing_project_fails_the_job_after_uploading_its_sarif(
    tmp_path: Path, runner_temp: Path
) -> None:
    workspace = git_repo(tmp_path / "workspace", FAILING)
    (workspace / "out").mkdir()
    run = run_action(inputs_for(), workspace, runner_temp)
    assert run.outputs["verify"] == {
        "exit-code": "1",
        "status": "FAILED",
        "sarif-written": "true",
    }
    assert run.uploads, "the findings must be uploaded before the job fails"
    assert run.failed_step == "Fail unless VERIFIED"
    assert "::error title=assay verify::FAILED" in run.log
    assert "test_add_sums" in run.log


@pytest.mark.slow
def test_a_path_that_is_no_project_fails_the_job_with_nothing_to_upload(
    tmp_path: Path, runner_temp: Path
) -> None:
    workspace = git_repo(tmp_path / "workspace", PASSING)
    run = run_action(
        {**inputs_for(), "path": "missing", "sarif": "assay.sarif"}, workspace, runner_temp
    )
    assert run.outputs["verify"]["status"] == "USAGE_ERROR"
    assert "Upload SARIF for code scanning" in run.skipped
    assert run.failed_step == "Fail unless VERIFIED"
