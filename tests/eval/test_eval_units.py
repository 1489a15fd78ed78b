"""Task folders, the generator registry, the store and the harness's seams, without an agent
or a verification run: each a small real thing (real TOML, a real SQLite file)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from assay.eval.failures import StageError
from assay.eval.generators import FolderGenerator, default_registry
from assay.eval.harness import Harness, Planned
from assay.eval.record import SCORED, AttemptRecord
from assay.eval.runners import NopRunner
from assay.eval.score import Score
from assay.eval.store import SCHEMA_VERSION, Store, StoreError
from assay.eval.task import TaskError, find_task_folders, load_task
from assay.eval.verify_stage import AssayVerifier, normalize_test_id, outcomes
from assay.evidence import Check, TestCase, evidence_for
from assay.parsers.pytest import read_junit
from assay.report import Report, Status
from assay.sandbox import LocalSandbox
from assay.verdict import Cause, Kind

TOML = """\
schema = "1.0"
id = "t-1"
language = "python"

[source]
repo = "repo"
commit = "HEAD"
"""


def _task(folder: Path, toml: str = TOML, instruction: str | None = "Fix it.\n") -> Path:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    if instruction is not None:
        (folder / "instruction.md").write_text(instruction)
    return folder


def test_a_task_folder_loads_with_its_defaults(tmp_path: Path) -> None:
    spec = load_task(_task(tmp_path / "t"))
    assert (spec.id, spec.language, spec.source.commit) == ("t-1", "python", "HEAD")
    assert spec.source.repo == (tmp_path / "t" / "repo").resolve()
    assert spec.limits.wall_s > 0 and spec.solution is None and spec.kinds is None


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            TOML.replace('"1.0"', '"2.0"'),
            "schema '2.0' is not supported: this assay reads schema 1.x",
        ),
        (TOML.replace('schema = "1.0"\n', ""), "no `schema` key"),
        (TOML.replace('id = "t-1"', 'id = "../t"'), "id: '../t' does not match"),
        (TOML + 'difficulty = "impossible"\n', "difficulty"),
        (TOML + "surprise = 1\n", "'surprise' was unexpected"),
        (TOML.replace('repo = "repo"', ""), "source"),
        ("schema = [", "not valid TOML"),
    ],
)
def test_a_bad_task_is_refused_with_what_is_wrong(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(TaskError) as caught:
        load_task(_task(tmp_path / "t", toml))
    assert message in str(caught.value)
    assert "task.toml" in str(caught.value)


def test_a_task_without_an_instruction_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="instruction.md: missing"):
        load_task(_task(tmp_path / "t", instruction=None))
    with pytest.raises(TaskError, match="the instruction is empty"):
        load_task(_task(tmp_path / "u", instruction="  \n"))


def test_a_bundle_must_be_in_the_task_folder(tmp_path: Path) -> None:
    toml = TOML.replace('repo = "repo"', 'bundle = "../elsewhere.bundle"')
    with pytest.raises(TaskError, match="must be in the task folder"):
        load_task(_task(tmp_path / "t", toml))


def test_task_folders_are_found_in_a_folder_of_them(tmp_path: Path) -> None:
    _task(tmp_path / "all" / "b")
    _task(tmp_path / "all" / "a")
    assert [p.name for p in find_task_folders([str(tmp_path / "all")])] == ["a", "b"]
    with pytest.raises(TaskError, match="no task.toml"):
        find_task_folders([str(tmp_path)])


def test_a_language_without_a_generator_is_an_error_of_its_run() -> None:
    registry = default_registry(["python"])
    assert isinstance(registry.lookup("Python"), FolderGenerator)
    with pytest.raises(StageError) as caught:
        registry.lookup("cobol")
    assert (caught.value.stage, caught.value.cause) == ("generate", "no_generator")


def test_test_ids_are_compared_in_one_spelling() -> None:
    assert normalize_test_id("tests/test_a.py::test_x") == normalize_test_id("tests.test_a::test_x")


def _report_with(*cases: tuple[str, str]) -> Report:
    check = Check(name="pytest", kind=Kind.TEST, argv=("pytest",))
    tests = tuple(TestCase(name=name, outcome=outcome) for name, outcome in cases)
    evidence = evidence_for(check, Cause.EXIT_NONZERO, test_cases=tests)
    return Report(status=Status.FAILED, checks=(evidence,), note="")


def test_an_id_cut_at_its_first_space_stands_for_the_tests_it_cuts_from() -> None:
    report = _report_with(
        ("tests.test_t::test_title[david's code-David's Code]", "passed"),
        ("tests.test_t::test_title[action web-Action Web]", "passed"),
        ("tests.test_t::test_title[action pack-Action Pack]", "failed"),
        ("tests.test_t::test_plain", "passed"),
    )
    found = outcomes(
        report,
        [
            "tests/test_t.py::test_title[david's",  # as SWE-bench's parser cuts it
            "tests/test_t.py::test_title[action",  # two tests cut to it: the worst counts
            "tests/test_t.py::test_title[david's code-David's Code]",
            "tests/test_t.py::test_title[david's other",  # nothing cuts to it
            "tests/test_t.py::test_plai",  # a prefix that is no cut at a space
        ],
    )
    assert list(found.values()) == ["passed", "failed", "passed", "not_run", "not_run"]


def test_an_expected_failure_is_read_as_such_from_pytests_junit() -> None:
    xml = (
        b'<testsuites><testsuite name="pytest">'
        b'<testcase classname="tests.test_t" name="test_xfail">'
        b'<skipped type="pytest.xfail" message="known bug"/></testcase>'
        b'<testcase classname="tests.test_t" name="test_skip">'
        b'<skipped type="pytest.skip" message="no network"/></testcase>'
        b"</testsuite></testsuites>"
    )
    read = read_junit(xml)
    assert read is not None
    counts, cases = read
    assert [c.outcome for c in cases] == ["xfailed", "skipped"]
    assert (counts.passed, counts.skipped) == (0, 2)


def test_the_harness_refuses_a_missing_seam(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite")
    seams = {
        "registry": default_registry(),
        "sandbox": LocalSandbox(),
        "runner": NopRunner(),
        "verifier": AssayVerifier(),
        "store": store,
    }
    for name in seams:
        with pytest.raises(ValueError, match=f"missing: {name}"):
            Harness(**{**seams, name: None})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retries"):
        Harness(**seams, retries=-1)  # type: ignore[arg-type]


def test_an_infrastructure_error_is_retried_then_recorded_once_never_scored(
    tmp_path: Path,
) -> None:
    toml = TOML.replace('"python"', '"cobol"')
    spec = load_task(_task(tmp_path / "t", toml))
    store = Store(tmp_path / "s.sqlite")
    eval_id = store.create_eval("nop", {"epochs": 1}, [spec.to_dict()])
    harness = Harness(
        default_registry(["python"]), LocalSandbox(), NopRunner(), AssayVerifier(), store, retries=2
    )

    (record,) = harness.run(eval_id, [Planned(spec, 1)])

    assert record.outcome == "error" and record.score is None
    assert (record.error and record.error.stage, record.error and record.error.cause) == (
        "generate",
        "no_generator",
    )
    assert record.tries == 3
    assert len(record.evidence["earlier_tries"]) == 2
    (stored,) = store.attempts(eval_id)
    assert stored["outcome"] == "error" and stored["score"] is None and stored["tries"] == 3


def _record(eval_id: str, task_id: str = "t-1") -> AttemptRecord:
    now = time.time()
    return AttemptRecord(
        eval_id=eval_id,
        task_id=task_id,
        epoch=1,
        outcome=SCORED,
        started_at=now,
        finished_at=now,
        status="VERIFIED",
        score=Score(1.0, status="VERIFIED"),
        evidence={"task": {"language": "python"}},
    )


def test_the_store_is_versioned_and_records_an_attempt_once(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION
    eval_id = store.create_eval("nop", {"epochs": 1}, [{"id": "t-1"}])
    store.record_attempt(_record(eval_id))
    with pytest.raises(StoreError, match="already recorded"):
        store.record_attempt(_record(eval_id))
    store.close()

    again = Store(path)  # reopening migrates nothing and keeps everything
    assert [a["score"] for a in again.attempts(eval_id)] == [1.0]
    assert again.recorded(eval_id) == {("t-1", 1)}
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    again.close()


def test_a_store_from_a_newer_assay_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer than this assay's"):
        Store(path)


def test_a_file_that_is_no_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(StoreError, match="cannot be used as a store"):
        Store(path)


def test_a_store_that_will_not_take_an_attempt_never_loses_it_nor_its_first_error(
    tmp_path: Path,
) -> None:
    spec = load_task(_task(tmp_path / "t", TOML.replace('"python"', '"cobol"')))
    store = Store(tmp_path / "s.sqlite")
    eval_id = store.create_eval("nop", {"epochs": 1}, [spec.to_dict()])
    with sqlite3.connect(tmp_path / "s.sqlite") as other:  # the file damaged under it
        other.execute("DROP TABLE stage_timings")
    harness = Harness(
        default_registry(["python"]), LocalSandbox(), NopRunner(), AssayVerifier(), store
    )

    (record,) = harness.run(eval_id, [Planned(spec, 1)])

    assert record.outcome == "error"
    assert record.error is not None
    assert (record.error.stage, record.error.cause) == ("generate", "no_generator")
    assert "write failed" in record.error.message
    assert store.recorded(eval_id) == set()  # the transaction left nothing half-written


def test_the_report_rates_scored_attempts_and_shows_errors_beside_them(tmp_path: Path) -> None:
    import dataclasses

    from assay.eval.record import AttemptError
    from assay.eval.summary import render_text, summarize

    store = Store(tmp_path / "s.sqlite")
    eval_id = store.create_eval("nop", {"epochs": 1, "planned": 3}, [])
    store.record_attempt(_record(eval_id, "a"))
    failed = dataclasses.replace(
        _record(eval_id, "b"), status="FAILED", score=Score(0.0, status="FAILED")
    )
    store.record_attempt(failed)
    error = AttemptError("provision", "source_missing", "no repository at /x")
    store.record_attempt(
        dataclasses.replace(_record(eval_id, "c"), outcome="error", score=None, error=error)
    )
    info = store.get_eval(eval_id)
    assert info is not None

    summary = summarize(store, info)

    assert (summary["total"], summary["scored"], summary["passed"]) == (3, 2, 1)
    assert summary["pass_rate"] == 0.5
    assert summary["errors_by_stage"] == {"provision:source_missing": 1}
    assert summary["groups"]["language"]["python"]["pass_rate"] == 0.5
    assert summary["groups"]["task"]["c"]["pass_rate"] is None
    text = render_text(summary)
    assert "pass rate: 50.0% (1/2 scored)  errors: 1  attempts: 3/3" in text
    assert "provision/source_missing: no repository at /x" in text
