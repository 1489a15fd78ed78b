"""Recorded predictions applied as SWE-bench's harness applies them, for real: `git apply`,
then GNU `patch --fuzz=5` for a patch whose context is off; a patch that applies under none
is a scored failure with the reason; a patch that names a path outside the workspace (`..`,
an absolute path, a symlink in the tree) never reaches `patch`.

Instances are imported from a real git clone; `assay eval` grades them through bubblewrap,
and the hostile patches also through the `local` backend, where nothing but assay's own
check stands between `patch` and the host.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.cli import assay, no_traceback
from tests.eval.swebench_repos import make_instance, write_jsonl
from tests.eval.tasks import git

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None or shutil.which("patch") is None,
    reason="needs bubblewrap and GNU patch",
)

FUZZY, OFFSET, NEVER, DOTDOT, ABSOLUTE, THROUGH_LINK, TESTS_ONLY = (
    f"acme__calc-{name}"
    for name in ("fuzzy", "offset", "never", "dotdot", "absolute", "link", "tests-only")
)

#: The gold fix, its last context line one that is not in the file (`    # the sum`, as a
#: patch made against an edited copy has it): git apply refuses it; patch applies it with
#: fuzz 1.
FUZZY_PATCH = (
    "diff --git a/calc.py b/calc.py\n"
    "--- a/calc.py\n"
    "+++ b/calc.py\n"
    "@@ -1,3 +1,3 @@\n"
    " def add(a, b):\n"
    "-    return a - b\n"
    "+    return a + b\n"
    "     # the sum\n"
)
#: The fix at the wrong line numbers only: git apply finds it itself.
OFFSET_PATCH = (
    "diff --git a/calc.py b/calc.py\n"
    "--- a/calc.py\n"
    "+++ b/calc.py\n"
    "@@ -7,4 +7,4 @@\n"
    " def add(a, b):\n"
    "-    return a - b\n"
    "+    return a + b\n"
    " \n"
    " \n"
)
#: A line that is in no version of the file: nothing applies it.
NEVER_PATCH = OFFSET_PATCH.replace("-    return a - b", "-    return a * b")


def _new_file(path: str) -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+written\n"


def _edit(path: str) -> str:
    return f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-outside\n+changed through the link\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("swebench-apply")
    outside = root / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside\n")
    instance = make_instance(root / "repos")
    clone = root / "repos" / "acme__calc"
    # A real symlink in the tree, to a real directory outside it, in a commit of its own.
    os.symlink(outside, clone / "link")
    git(clone, "add", "link")
    git(clone, "commit", "-qm", "a link out of the tree")
    instance["base_commit"] = git(clone, "rev-parse", "HEAD")
    ids = (FUZZY, OFFSET, NEVER, DOTDOT, ABSOLUTE, THROUGH_LINK, TESTS_ONLY)
    jsonl = write_jsonl(root / "instances.jsonl", [dict(instance, instance_id=i) for i in ids])
    done = assay("tasks", "import", str(jsonl), "--repos", str(root / "repos"), "--out", str(root / "tasks"))  # fmt: skip
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    escape = f"../../../../../../../..{root}/escaped.txt"
    predictions = {
        FUZZY: FUZZY_PATCH,
        OFFSET: OFFSET_PATCH,
        NEVER: NEVER_PATCH,
        DOTDOT: _new_file(escape),
        # git apply itself would take a plain `+++ /abs/path` as `abs/path`, in the tree;
        # a git diff whose new name is absolute it refuses, and patch is not asked.
        ABSOLUTE: (
            "diff --git a/calc.py b/calc.py\n--- a/calc.py\n"
            f"+++ {root}/absolute.txt\n@@ -1 +1 @@\n-def add(a, b):\n+written\n"
        ),
        THROUGH_LINK: _edit("link/f.txt"),
        # Only a protected file: nothing is left to apply, which is not a refusal.
        TESTS_ONLY: (
            "diff --git a/tests/test_calc.py b/tests/test_calc.py\n"
            "--- a/tests/test_calc.py\n+++ b/tests/test_calc.py\n"
            "@@ -1 +1 @@\n-from calc import sub\n+from calc import sub  # edited\n"
        ),
    }
    preds = write_jsonl(
        root / "preds.jsonl",
        [
            {"instance_id": i, "model_name_or_path": "m", "model_patch": p}
            for i, p in predictions.items()
        ],
    )
    return {"root": root, "tasks": root / "tasks", "preds": preds, "outside": outside}


def _rows(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["task_id"]: row for row in summary["attempts"]}


def _assert_untouched(world: dict[str, Any]) -> None:
    root: Path = world["root"]
    assert (world["outside"] / "f.txt").read_text() == "outside\n"
    assert sorted(p.name for p in world["outside"].iterdir()) == ["f.txt"]
    assert not (root / "escaped.txt").exists() and not (root / "absolute.txt").exists()


def test_predictions_apply_as_swebench_applies_them(world: dict[str, Any], tmp_path: Path) -> None:
    done = assay(
        "eval", str(world["tasks"]), "--agent", f"patch:{world['preds']}",
        "--store", str(tmp_path / "evals.sqlite"), "--concurrency", "2", "--json",
        timeout=900,
    )  # fmt: skip
    no_traceback(done)
    assert done.returncode == 0, done.stderr
    rows = _rows(json.loads(done.stdout))

    # Context that is off: git apply refuses it, patch --fuzz=5 applies it, and it fixes.
    assert rows[FUZZY]["resolved"] is True, json.dumps(rows[FUZZY])
    assert "patch --batch --forward --fuzz=5 -p1" in rows[FUZZY]["agent_note"]
    assert rows[OFFSET]["resolved"] is True
    assert "git apply" in rows[OFFSET]["agent_note"]

    # Applied by none: a scored failure with every method's reason, not an error.
    never = rows[NEVER]
    assert never["outcome"] == "scored" and never["resolved"] is False
    reason = never["unresolved_reason"]
    assert reason.startswith("the patch did not apply: "), reason
    assert "git apply" in reason and "patch" in reason and "calc.py" in reason

    tests_only = rows[TESTS_ONLY]
    assert tests_only["agent_exit_code"] == 0, tests_only
    assert "tests/test_calc.py" in tests_only["agent_note"]
    assert "nothing left to apply" in tests_only["agent_note"], tests_only["agent_note"]
    assert tests_only["unresolved_reason"].startswith("fail_to_pass ")

    # Paths out of the workspace: refused before any tool writes, named in the reason.
    for task_id, named in (
        (DOTDOT, "escaped.txt"),
        (ABSOLUTE, "absolute.txt"),
        (THROUGH_LINK, "link/f.txt"),
    ):
        row = rows[task_id]
        assert row["outcome"] == "scored" and row["resolved"] is False, task_id
        assert row["unresolved_reason"].startswith("the patch did not apply: ")
        assert "outside the workspace" in row["unresolved_reason"], row["unresolved_reason"]
        assert named in row["unresolved_reason"]
    _assert_untouched(world)


def test_hostile_paths_never_reach_patch_without_bubblewrap(
    world: dict[str, Any], tmp_path: Path
) -> None:
    # The local backend runs `patch` on the host, in a temporary workspace: only assay's
    # own check of the paths keeps it in there.
    from assay.eval.api import run_eval

    tasks = [world["tasks"] / t for t in (DOTDOT, ABSOLUTE, THROUGH_LINK)]
    result = run_eval(
        tasks, f"patch:{world['preds']}", store=tmp_path / "evals.sqlite", sandbox="local"
    )
    rows = _rows(result.summary)
    for task_id in (DOTDOT, ABSOLUTE, THROUGH_LINK):
        assert rows[task_id]["outcome"] == "scored", rows[task_id]
        assert "outside the workspace" in rows[task_id]["unresolved_reason"]
    _assert_untouched(world)


def test_the_paths_a_patch_names_are_read_from_every_header() -> None:
    from assay.eval.swebench.patch_apply import split_patch

    text = (
        "preamble\n"
        "diff --git a/calc.py b/calc.py\n"
        "index 1..2 100644\n"
        "--- a/calc.py\n"
        "+++ b/calc.py\n"
        "@@ -1,2 +1,2 @@\n"
        "--- a/not-a-header\n"  # a removed line that looks like a header
        "+++ b/not-a-header\n"
        "diff --git a/old.py b/new.py\n"
        "similarity index 90%\n"
        "rename from old.py\n"
        "rename to new.py\n"
        "--- plain.txt\t2024-01-01 00:00:00\n"
        "+++ plain.txt\t2024-01-01 00:00:00\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
        "\\ No newline at end of file\n"
    )
    sections = split_patch(text.encode())
    assert [sorted(s.paths) for s in sections] == [
        [],
        ["calc.py"],
        ["new.py", "old.py"],
        ["plain.txt"],
    ]
    assert b"".join(s.text for s in sections) == text.encode()
