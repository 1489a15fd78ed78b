"""What an agent says it spent is its own account: a count past JSON's exact integers,
or a cost that is infinite or NaN, is dropped with a note, never kept to break the
limits' maths, the JSON report or the HTML page."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.eval import run_eval
from tests.eval.tasks import make_repo, write_agent, write_task

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

#: Fixes nothing; reports 10**400 tokens read and an infinite cost.
BOASTER = textwrap.dedent(
    """
    import os
    big = "1" + "0" * 400
    with open(os.environ["ASSAY_TELEMETRY"], "w") as f:
        f.write('{"tokens_in": ' + big + ', "tokens_out": 5, "turns": ' + big
                + ', "cost_usd": ' + ("1e999" if os.environ["ASSAY_TASK_ID"] == "calc-1" else "NaN")
                + '}')
    """
)


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_usage_past_any_real_count_is_dropped_and_every_report_is_written(tmp_path: Path) -> None:
    repo, bases = make_repo(tmp_path)
    tasks = tmp_path / "tasks"
    for number in (1, 2):
        write_task(
            tasks / f"task-{number}",
            number,
            repo=repo,
            commit=bases[number],
            extra="\n[limits]\ntokens = 1000\ncost_usd = 1.0\n",
        )
    agent = write_agent(tmp_path, "boaster", BOASTER)
    store = tmp_path / "evals.sqlite"

    result = run_eval([tasks], f"python3 {agent}", store=store)

    assert result.summary["errors"] == 0, [r.get("error") for r in result.summary["attempts"]]
    for record in result.records:
        assert record.telemetry == {"tokens_out": 5}
        assert "tokens_in" in record.evidence["agent"]["note"]
    command = [sys.executable, "-m", "assay", "report", result.eval_id, "--store", str(store)]
    document = subprocess.run([*command, "--json"], capture_output=True, text=True, check=True)
    _strict(document.stdout)
    page = tmp_path / "report.html"
    made = subprocess.run(
        [*command, "--html", str(page)], check=False, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr[-2000:]
    assert "<html" in page.read_text()
