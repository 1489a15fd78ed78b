"""A cache hit is found without discovering or planning again (`assay.plan_memo`), and the
remembered plan never stands for one the tree or the options would not give.

The seam: `pipeline.make_plan` swapped for one that counts its calls and then plans for
real. Everything else is real: the tree, the cache in SQLite, the checks that ran.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from assay import pipeline
from assay.cache import VerdictCache
from assay.pipeline import VerifyOptions, verify
from assay.report import Report
from assay.verdict import Kind, Status
from tests.cli import path_with_venv
from tests.repos import PASSING_PYTEST, write


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PATH", path_with_venv())
    return write(tmp_path / "repo", PASSING_PYTEST)


@pytest.fixture
def plans(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every tree `verify` made a plan for, from here on."""
    made: list[Path] = []
    real: Callable[..., Any] = pipeline.make_plan

    def counted(path: Path, *args: Any, **kwargs: Any) -> Any:
        made.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pipeline, "make_plan", counted)
    return made


def run(repo: Path, cache: Path, **options: Any) -> Report:
    return verify(repo, VerifyOptions(sandbox="local", cache_dir=str(cache), **options))


def test_a_hit_is_found_without_planning(repo: Path, tmp_path: Path, plans: list[Path]) -> None:
    cache = tmp_path / "cache"
    first = run(repo, cache)
    assert first.status is Status.VERIFIED, first.note
    assert len(plans) == 1
    again = run(repo, cache)
    assert again.status is Status.VERIFIED, again.note
    assert again.record.cached is not None
    assert again.record.cached.key == run(repo, cache).record.cached.key  # type: ignore[union-attr]
    assert len(plans) == 1, "the tree was planned again"
    assert again.plan == first.plan


def test_an_edited_tree_is_planned_again_and_judged(
    repo: Path, tmp_path: Path, plans: list[Path]
) -> None:
    cache = tmp_path / "cache"
    assert run(repo, cache).status is Status.VERIFIED
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert 1 + 1 == 3\n")
    edited = run(repo, cache)
    assert edited.status is Status.FAILED
    assert edited.record.cached is None
    assert len(plans) == 2


def test_each_planning_option_has_a_plan_of_its_own(
    repo: Path, tmp_path: Path, plans: list[Path]
) -> None:
    cache = tmp_path / "cache"
    each: list[dict[str, Any]] = [
        {},
        {"timeout_s": 30.0},
        {"all_tests": True},
        {"kinds": {Kind.TEST}},
    ]
    for options in each:
        first = run(repo, cache, **options)
        assert first.status is Status.VERIFIED, (options, first.note)
        assert first.record.cached is None, f"{options} was given another option's verdict"
    assert len(plans) == len(each)
    for options in each:  # in turn: one memo for all would hold only the last one's plan
        again = run(repo, cache, **options)
        assert again.record.cached is not None, options
        assert len(plans) == len(each), f"{options}: its own plan was not remembered"
    timed = run(repo, cache, timeout_s=30.0).plan["checks"][0]
    assert timed["timeout_s"] == 30.0


def test_an_unreadable_memo_is_a_miss_and_is_written_again(
    repo: Path, tmp_path: Path, plans: list[Path]
) -> None:
    cache = tmp_path / "cache"
    assert run(repo, cache).status is Status.VERIFIED
    with sqlite3.connect(cache / "verdicts.sqlite3") as db:
        changed = db.execute("UPDATE plan_memo SET plan = 'not a plan'").rowcount
    assert changed == 1
    again = run(repo, cache)
    assert again.status is Status.VERIFIED, again.note
    assert again.record.cached is not None  # found under the early key, with the plan made again
    assert len(plans) == 2
    run(repo, cache)
    assert len(plans) == 2, "the memo was not written again"


def test_a_memo_goes_with_its_verdict(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "cache", max_bytes=2_000)
    cache.put("old", {"status": "VERIFIED", "padding": "x" * 1_000})
    cache.remember_plan("memo", '{"checks": []}', verdict_key="old")
    assert cache.remembered_plan("memo") == '{"checks": []}'
    cache.put("new", {"status": "VERIFIED", "padding": "y" * 1_500})  # evicts "old"
    assert cache.get("old") is None
    assert cache.remembered_plan("memo") is None
