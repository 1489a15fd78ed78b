"""`assay tasks import`: SWE-bench instances made into task folders, with real git."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from assay.eval.swebench import ImportFailed, import_instances
from assay.eval.task import load_task
from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import INSTANCE_ID, NEW_TESTS, make_instance, write_jsonl


@pytest.fixture
def instance(tmp_path: Path) -> dict[str, object]:
    return make_instance(tmp_path / "repos")


def test_an_instance_becomes_a_valid_task_with_its_tests_protected(
    instance: dict[str, object], tmp_path: Path
) -> None:
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])

    written = import_instances(jsonl, repos=tmp_path / "repos", out=tmp_path / "tasks")

    assert [p.name for p in written] == [INSTANCE_ID]
    task = load_task(written[0])
    assert task.id == INSTANCE_ID
    assert task.fail_to_pass == ("tests/test_calc.py::test_add",)
    assert task.pass_to_pass == ("tests/test_calc.py::test_sub",)
    assert task.protected == ("tests/test_calc.py",)
    assert task.kinds == ("test",)
    assert task.instruction == instance["problem_statement"]
    assert task.solution is not None and task.solution.read_text() == instance["patch"]
    assert task.source.bundle is not None and task.source.bundle.parent == written[0]
    # The bundle's task commit is the base with the test patch applied on top.
    shown = subprocess.run(
        ["git", "bundle", "list-heads", str(task.source.bundle)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert task.source.commit in shown.stdout
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(task.source.bundle), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", task.source.commit], check=True)
    assert (clone / "tests" / "test_calc.py").read_text() == NEW_TESTS
    kept = json.loads((written[0] / "swebench.json").read_text())
    assert kept["base_commit"] == instance["base_commit"]
    assert kept["environment_setup_commit"] == instance["environment_setup_commit"]


def test_plain_lists_are_read_too(instance: dict[str, object], tmp_path: Path) -> None:
    instance["FAIL_TO_PASS"] = ["tests/test_calc.py::test_add"]
    instance["PASS_TO_PASS"] = []
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])

    [folder] = import_instances(jsonl, repos=tmp_path / "repos", out=tmp_path / "tasks")

    assert load_task(folder).pass_to_pass == ()


@pytest.mark.parametrize("layout", ["owner/name", "name"])
def test_the_clone_may_be_laid_out_as_owner_slash_name_or_name(
    instance: dict[str, object], tmp_path: Path, layout: str
) -> None:
    moved = tmp_path / "other" / layout.replace("owner", "acme").replace("name", "calc")
    moved.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "repos" / "acme__calc").rename(moved)
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])

    [folder] = import_instances(jsonl, repos=tmp_path / "other", out=tmp_path / "tasks")

    assert load_task(folder).id == INSTANCE_ID


def test_a_missing_repository_is_named_and_nothing_is_written(
    instance: dict[str, object], tmp_path: Path
) -> None:
    other = dict(instance, instance_id="acme__gone-2", repo="acme/gone")
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance, other])
    out = tmp_path / "tasks"

    with pytest.raises(ImportFailed, match=r"line 2: .*acme/gone.*acme__gone"):
        import_instances(jsonl, repos=tmp_path / "repos", out=out)

    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", r"line 2: not JSON"),
        ('["a list"]', r"line 2: .*not a JSON object"),
        ("{}", r"line 2: .*instance_id"),
    ],
)
def test_a_malformed_line_is_named_and_nothing_is_written(
    instance: dict[str, object], tmp_path: Path, line: str, expected: str
) -> None:
    jsonl = tmp_path / "instances.jsonl"
    jsonl.write_text(json.dumps(instance) + "\n" + line + "\n")
    out = tmp_path / "tasks"

    with pytest.raises(ImportFailed, match=expected):
        import_instances(jsonl, repos=tmp_path / "repos", out=out)

    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("FAIL_TO_PASS", "[not json", r"FAIL_TO_PASS: not a JSON list"),
        ("FAIL_TO_PASS", json.dumps([1]), r"FAIL_TO_PASS: .*strings"),
        ("instance_id", "../escape", r"instance_id"),
        ("repo", "no-slash", r"repo: .*owner/name"),
        ("base_commit", "0" * 40, r"base_commit 0{40}"),
        ("test_patch", "not a patch\n", r"test_patch does not apply"),
    ],
)
def test_a_bad_field_is_named_with_its_line(
    instance: dict[str, object], tmp_path: Path, field: str, value: str, expected: str
) -> None:
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [dict(instance, **{field: value})])

    with pytest.raises(ImportFailed, match=rf"line 1: .*{expected}"):
        import_instances(jsonl, repos=tmp_path / "repos", out=tmp_path / "tasks")

    out = tmp_path / "tasks"
    assert not out.exists() or list(out.iterdir()) == []


def test_an_existing_task_folder_is_not_overwritten(
    instance: dict[str, object], tmp_path: Path
) -> None:
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])
    (tmp_path / "tasks" / INSTANCE_ID).mkdir(parents=True)

    with pytest.raises(ImportFailed, match="already exists"):
        import_instances(jsonl, repos=tmp_path / "repos", out=tmp_path / "tasks")


def test_the_command_reports_a_clear_error_not_a_traceback(
    instance: dict[str, object], tmp_path: Path
) -> None:
    jsonl = write_jsonl(tmp_path / "instances.jsonl", [instance])

    missing = assay("tasks", "import", str(jsonl), "--repos", str(tmp_path), "--out", "x")
    done = assay(
        "tasks",
        "import",
        str(jsonl),
        "--repos",
        str(tmp_path / "repos"),
        "--out",
        str(tmp_path / "tasks"),
    )

    no_traceback(missing)
    assert missing.returncode == 2, missing.stderr
    assert "acme/calc" in missing.stderr
    assert done.returncode == 0, done.stderr
    assert INSTANCE_ID in done.stdout
