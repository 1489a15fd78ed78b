"""`assay tasks generate`, for real: a small Python repository and a Go package, their
knowledge graphs built by running their tests in bubblewrap (per-test coverage for
Python), mutants caught by those tests, every task validated by real runs of the oracle
and nop, and the graph reused from the store when the tree has not changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.eval.mutation.difficulty import BANDS
from assay.eval.mutation.generate import GenerateError, generate_tasks
from assay.eval.mutation.model import OPERATORS
from assay.eval.store import Store
from assay.eval.task import load_task
from tests.eval.mutation_repos import make_go_calc, make_shop

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

VALID = "oracle VERIFIED 3 times in a row; nop FAILED"


def _check_task(folder: Path, language: str) -> None:
    spec = load_task(folder)
    assert spec.language == language
    assert spec.template in OPERATORS
    assert spec.difficulty in BANDS
    assert spec.fail_to_pass
    assert not set(spec.fail_to_pass) & set(spec.pass_to_pass)
    assert spec.source.bundle is not None
    # A bug report from the failing tests: it names one, and never shows the change.
    assert any(f"`{test}`" in spec.instruction for test in spec.fail_to_pass)
    patch = (folder / "solution.patch").read_text()
    changed = [
        line[1:].strip()
        for line in patch.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed
    for marker in ("@@", "+++", "---", "diff --git"):
        assert marker not in spec.instruction, marker
    shown = {line.strip() for line in spec.instruction.splitlines()}
    for line in changed:  # neither the mutated code nor the original, as a line or within one
        assert line not in shown, line
        assert len(line) < 8 or line not in spec.instruction, line


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_shop(tmp_path_factory.mktemp("mutation-python"))


def test_python_tasks_are_generated_validated_and_the_graph_is_reused(
    shop: Path, tmp_path: Path
) -> None:
    store = Store(tmp_path / "store.sqlite")
    try:
        report = generate_tasks(
            shop, language="python", count=3, out=tmp_path / "tasks", store=store, concurrency=2
        )
        assert not report.graph_reused
        assert report.units == 9 and report.covered_units == 9
        assert [t.reason for t in report.tasks] == [VALID] * 3
        assert sorted(p.name for p in (tmp_path / "tasks").iterdir()) == [
            f"shop-{n}" for n in range(1, 4)
        ]
        for task in report.tasks:
            _check_task(task.folder, "python")
        # Operators are taken in turn, not three of the same.
        assert len({t.template for t in report.tasks}) == 3
        built = store._query("SELECT built_at FROM graphs")

        again = generate_tasks(
            shop,
            language="python",
            count=1,
            out=tmp_path / "more",
            store=store,
            seed=7,
            stack=2,
            validate=False,
        )

        # No second coverage run: the store still holds the one graph, built once.
        assert again.graph_reused
        assert store.graph_count() == 1
        assert store._query("SELECT built_at FROM graphs") == built
        edges = store._query("SELECT count(*) FROM graph_edges")[0][0]
        assert edges >= 9  # every test exercises at least one unit of shop.py
        # Two mutations stacked in one task: both undone by its solution, and it says so.
        (stacked,) = again.tasks
        spec = load_task(stacked.folder)
        assert "stacked" in spec.tags
        patch = (stacked.folder / "solution.patch").read_text().splitlines()
        assert len([line for line in patch if line.startswith("-") and line[:3] != "---"]) == 2
        assert stacked.site.count(" at shop.py:") == 2
    finally:
        store.close()


def test_tasks_are_written_under_a_relative_out_directory(
    shop: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git writes each task's bundle from a directory of its own: a relative `--out` was
    # taken from there ("Unable to create 'tasks/shop-1/source.bundle.lock'").
    monkeypatch.chdir(tmp_path)
    store = Store(tmp_path / "store.sqlite")
    try:
        report = generate_tasks(
            shop, language="python", count=1, out="tasks", store=store, validate=False
        )
    finally:
        store.close()
    (task,) = report.tasks
    assert task.folder == tmp_path / "tasks" / "shop-1"
    assert (task.folder / "source.bundle").is_file()


def test_a_repository_whose_tests_fail_is_refused_with_the_reason(
    shop: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    subprocess.run(["git", "clone", "-q", str(shop), str(broken)], check=True)
    test_file = broken / "tests" / "test_shop.py"
    test_file.write_text(test_file.read_text().replace("== 12.0", "== 13.0"))
    from tests.eval.tasks import git

    git(broken, "commit", "-qam", "a failing test")
    store = Store(tmp_path / "store.sqlite")
    try:
        with pytest.raises(GenerateError, match="test_price_with_tax"):
            generate_tasks(broken, language="python", count=1, out=tmp_path / "t", store=store)
        assert store.graph_count() == 0
    finally:
        store.close()
    assert not (tmp_path / "t").exists()


@pytest.mark.skipif(shutil.which("go") is None, reason="needs go")
def test_go_tasks_through_the_command_line(tmp_path: Path) -> None:
    repo = make_go_calc(tmp_path)
    argv = [sys.executable, "-m", "assay", "tasks", "generate", str(repo), "--language", "go"]
    argv += ["--count", "2", "--out", str(tmp_path / "tasks"), "--json"]
    argv += ["--store", str(tmp_path / "store.sqlite"), "--concurrency", "2"]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=1200)

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["graph"] == {"reused": False, "units": 1, "covered_units": 1}
    assert [t["reason"] for t in report["tasks"]] == [VALID, VALID]
    for task in report["tasks"]:
        _check_task(Path(task["folder"]), "go")
        spec = load_task(task["folder"])
        assert all(t.startswith("example.com/gocalc/calc.Test") for t in spec.fail_to_pass)


def test_bad_options_are_usage_errors(shop: Path, tmp_path: Path) -> None:
    store = Store(tmp_path / "store.sqlite")
    try:
        cases: list[tuple[dict[str, Any], str]] = [
            ({"language": "cobol"}, "no mutation generator for language 'cobol'"),
            ({"language": "python", "template": "x"}, "template must be one of"),
            ({"language": "python", "difficulty": "x"}, "difficulty must be one of"),
            ({"language": "python", "count": 0}, "count must be an integer"),
        ]
        for options, message in cases:
            with pytest.raises(GenerateError, match=message):
                generate_tasks(
                    shop, **{"count": 1, "out": tmp_path / "t", "store": store, **options}
                )
        with pytest.raises(GenerateError, match="not a git repository"):
            generate_tasks(tmp_path, language="python", count=1, out=tmp_path / "t", store=store)
    finally:
        store.close()


def test_a_report_the_repository_turns_into_a_link_is_refused_never_followed(
    shop: Path, tmp_path: Path
) -> None:
    hostile = tmp_path / "hostile"
    subprocess.run(["git", "clone", "-q", str(shop), str(hostile)], check=True)
    # When the run ends (after the plugin wrote its report), the code under test puts a
    # link to a root-only file where the report was.
    (hostile / "conftest.py").write_text(
        "import atexit, os\n"
        "def _swap():\n"
        "    out = os.environ.get('ASSAY_GRAPH_OUT')\n"
        "    if out:\n"
        "        os.replace(out, out + '.real')\n"
        "        os.symlink('/etc/shadow', out)\n"
        "atexit.register(_swap)\n"
    )
    from tests.eval.tasks import git

    git(hostile, "add", "conftest.py")
    git(hostile, "commit", "-qm", "a conftest")
    store = Store(tmp_path / "store.sqlite")
    try:
        with pytest.raises(GenerateError, match="symbolic link; refused"):
            generate_tasks(hostile, language="python", count=1, out=tmp_path / "t", store=store)
        assert store.graph_count() == 0
    finally:
        store.close()
