"""`assay report --html` opened in a real headless browser (Debian's chromium): the page
renders with no console message (no script runs, nothing is fetched), hostile task ids and
agent output stay text, and every figure in the DOM matches the store."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from assay.eval.store import Store
from tests.cli import assay, no_traceback
from tests.eval.report_store import ATTEMPTS, HOSTILE_ID, HOSTILE_OUTPUT, TASKS, fill_store

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs chromium")


class _Dom(HTMLParser):
    """The rendered DOM as chromium dumped it: tags seen, metrics with where they sit,
    attempt rows, links, and the evidence blocks' text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.metrics: list[tuple[str, str, str]] = []  # (where, metric, data-value)
        self.rows: list[dict[str, str]] = []
        self.links: list[str] = []
        self.evidence: dict[str, str] = {}
        self.opened: list[str] = []  # <details> shown open
        self._where: list[str] = []
        self._pre: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "section":
            self._where = [a.get("id", "")]
        elif tag == "tr" and "data-group" in a:
            self._where = [self._where[0], f"{a['data-group']}={a['data-key']}"]
        elif tag == "tr" and "data-k" in a:
            self._where = [self._where[0], f"k={a['data-k']}"]
        elif tag == "tr" and "data-cause" in a:
            self._where = [self._where[0], a["data-cause"]]
        elif tag == "tr" and a.get("class") == "attempt":
            self.rows.append(a)
        if "data-metric" in a:
            self.metrics.append(("/".join(self._where), a["data-metric"], a["data-value"]))
        if tag == "details" and "open" in a:
            self.opened.append(a.get("id", ""))
        if tag == "a":
            self.links.append(a.get("href", ""))
        if tag == "pre":
            self._pre = a["id"]
            self.evidence[a["id"]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "pre":
            self._pre = None

    def handle_data(self, data: str) -> None:
        if self._pre is not None:
            self.evidence[self._pre] += data

    def metric(self, where: str, name: str) -> str:
        found = [v for w, m, v in self.metrics if w == where and m == name]
        assert len(found) == 1, (where, name, self.metrics)
        return found[0]


def _render(page: Path, tmp_path: Path, fragment: str = "") -> tuple[_Dom, str]:
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
        + [f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
        + ["--dump-dom", page.as_uri() + fragment],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    dom = _Dom()
    dom.feed(done.stdout)
    return dom, done.stderr


def _from_store(path: Path, eval_id: str) -> dict[str, Any]:
    """The figures counted from the store's tables directly, not through assay's summary."""
    with sqlite3.connect(path) as db:
        scored, passed = db.execute(
            "SELECT count(*), sum(s.value >= 1) FROM attempts a JOIN scores s "
            "USING (eval_id, task_id, epoch) WHERE a.eval_id = ? AND a.outcome = 'scored'",
            (eval_id,),
        ).fetchone()
        errors = db.execute(
            "SELECT error_stage || ':' || error_cause, count(*) FROM attempts "
            "WHERE eval_id = ? AND outcome = 'error' GROUP BY 1",
            (eval_id,),
        ).fetchall()
        scores = {
            (t, e): v
            for t, e, v in db.execute(
                "SELECT task_id, epoch, value FROM scores WHERE eval_id = ?", (eval_id,)
            )
        }
        attempts = db.execute(
            "SELECT task_id, epoch, outcome FROM attempts WHERE eval_id = ?", (eval_id,)
        ).fetchall()
    return {
        "scored": scored,
        "passed": passed,
        "errors": dict(errors),
        "scores": scores,
        "attempts": attempts,
    }


@needs_chromium
def test_the_html_report_renders_in_chromium_and_its_figures_match_the_store(
    tmp_path: Path,
) -> None:
    path = tmp_path / "evals.sqlite"
    store = Store(path)
    eval_id = fill_store(store)
    store.close()
    page = tmp_path / "report.html"

    done = assay("report", eval_id, "--store", str(path), "--html", str(page))

    no_traceback(done)
    assert done.returncode == 0, done.stderr
    assert "pass rate: 60.0% (3/5 scored)" in done.stdout  # the terminal table as before
    dom, log = _render(page, tmp_path)
    assert ":CONSOLE" not in log, log  # no script ran, no load was blocked, nothing failed
    # The hostile text stayed text: nothing it carried became an element.
    assert not {"script", "img", "link", "iframe", "b"} & set(dom.tags), set(dom.tags)
    assert all(link.startswith("#") for link in dom.links), dom.links  # nothing to fetch

    truth = _from_store(path, eval_id)
    assert float(dom.metric("summary", "pass_rate")) == truth["passed"] / truth["scored"]
    assert int(dom.metric("summary", "scored")) == truth["scored"] == 5
    assert int(dom.metric("summary", "passed")) == truth["passed"] == 3
    assert int(dom.metric("summary", "errors")) == sum(truth["errors"].values()) == 1
    assert int(dom.metric("summary", "planned")) == 8
    # Pass rate by language with its interval: python is a (2/2), the hostile task (0/1),
    # and c (an error, not scored); go is b (1/2).
    python = "by-language/language=python"
    assert (dom.metric(python, "passed"), dom.metric(python, "scored")) == ("2", "3")
    assert float(dom.metric(python, "pass_rate")) == pytest.approx(2 / 3)
    assert dom.metric(python, "errors") == "1"
    lo, hi = (float(v) for v in dom.metric(python, "ci95").split())
    assert (round(lo, 4), round(hi, 4)) == (0.2077, 0.9385)
    assert float(dom.metric("by-language/language=go", "pass_rate")) == 0.5
    assert float(dom.metric("by-difficulty/difficulty=hard", "pass_rate")) == 0.0
    assert float(dom.metric("by-template/template=<b>bold</b>", "pass_rate")) == 0.0
    # pass@k over epochs: k=1 (a 1, b 1/2, hostile 0) / 3; k=2 over a and b only.
    assert float(dom.metric("pass-at-k/k=1", "pass_at_k")) == pytest.approx(0.5)
    assert float(dom.metric("pass-at-k/k=2", "pass_at_k")) == 1.0
    assert dom.metric("pass-at-k/k=2", "tasks") == "2"
    for cause, count in truth["errors"].items():
        assert dom.metric(f"errors/{cause}", "count") == str(count)
    tokens = sum(t + t // 10 for task, _e, status, _s, t, _c in ATTEMPTS if status)
    assert float(dom.metric("distributions", "tokens_total")) == tokens

    # A row per attempt, each linking to its evidence, whose JSON is the stored attempt's.
    assert sorted((r["data-task"], int(r["data-epoch"]), r["data-outcome"]) for r in dom.rows) == (
        sorted(truth["attempts"])
    )
    assert {r["data-task"] for r in dom.rows} == set(TASKS)  # the hostile id, to the byte
    for row in dom.rows:
        stored = truth["scores"].get((row["data-task"], int(row["data-epoch"])))
        assert row["data-score"] == ("" if stored is None else f"{stored:.1f}")
    evidence_links = [link for link in dom.links if link.startswith("#evidence-")]
    assert len(evidence_links) == len(dom.rows)
    documents = {}
    for link in evidence_links:
        assert link[1:] in dom.ids
        document = json.loads(dom.evidence[link[1:]])
        documents[(document["task_id"], document["epoch"])] = document
    assert sorted(documents) == sorted((t, e) for t, e, _o in truth["attempts"])
    assert documents[(HOSTILE_ID, 1)]["evidence"]["agent"]["stdout"] == HOSTILE_OUTPUT


def test_an_html_report_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "evals.sqlite"
    store = Store(path)
    fill_store(store)
    store.close()

    done = assay("report", "--store", str(path), "--html", str(tmp_path / "no" / "r.html"))

    no_traceback(done)
    assert done.returncode == 2
    assert "cannot write the HTML report" in done.stderr


def test_telemetry_that_is_not_numbers_is_left_out_of_the_plots(tmp_path: Path) -> None:
    from assay.eval.html_report import render_html
    from assay.eval.summary import summarize

    store = Store(tmp_path / "s.sqlite")
    eval_id = fill_store(store)
    info = store.get_eval(eval_id)
    assert info is not None
    attempts = store.attempts(eval_id)
    attempts[0]["telemetry"] = {"tokens_in": "lots", "cost_usd": float("nan")}
    attempts[1]["evidence"]["agent"] = {"duration_s": True}
    attempts[2]["telemetry"] = {"tokens_in": 1e309, "tokens_out": None}

    page = render_html(summarize(store, info), attempts)

    assert 'data-metric="tokens_total" data-value="' in page
    assert "\udc80" not in page


@needs_chromium
def test_following_an_attempts_link_opens_its_evidence(tmp_path: Path) -> None:
    path = tmp_path / "evals.sqlite"
    store = Store(path)
    fill_store(store)
    store.close()
    page = tmp_path / "report.html"
    no_traceback(assay("report", "--store", str(path), "--html", str(page)))
    dom, _log = _render(page, tmp_path)
    assert dom.opened == []  # closed until asked for
    hostile = next(i for i, r in enumerate(dom.rows) if r["data-task"] == HOSTILE_ID)
    link = [x for x in dom.links if x.startswith("#evidence-")][hostile]

    followed, log = _render(page, tmp_path, fragment=link)

    assert ":CONSOLE" not in log, log
    assert followed.opened == [link[1:].removesuffix("-json")]
    assert json.loads(followed.evidence[link[1:]])["task_id"] == HOSTILE_ID
