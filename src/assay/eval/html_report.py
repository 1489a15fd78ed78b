"""`assay report --html`: one self-contained HTML file (inline CSS, inline SVG, no script,
nothing fetched), from the same summary `--json` prints and the attempts' evidence.

Everything shown is read from the store and escaped: task ids, templates, messages and
the agent's output are the evaluated agent's text, and must never become markup. A
Content-Security-Policy that allows no script and no load backs that up: an escaping
slip shows as text, or as a blocked load, never as something that runs.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from html import escape
from typing import Any

from assay.eval.plots import Bar, bar_chart, histogram, line_chart

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
#: Task fields whose pass rates are plotted with their intervals.
PLOTTED_GROUPS = ("language", "difficulty", "template")

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;
text-align:left;vertical-align:top}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
svg{display:block;margin:.5em 0;font:12px system-ui,sans-serif}svg .bar{fill:#4c78a8}
svg .whisker{stroke:#222;stroke-width:1.5;fill:none}svg .axis,svg .grid{stroke:#bbb;fill:none}
svg .line{stroke:#4c78a8;stroke-width:2;fill:none}svg .dot{fill:#4c78a8}
svg .median{stroke:#e45756;stroke-dasharray:4 3}.outcome-error{color:#b00}
.status-VERIFIED{color:#070}pre{white-space:pre-wrap;word-break:break-all;background:#f7f7f7;
padding:.5em;max-height:40em;overflow:auto}dl{display:grid;grid-template-columns:max-content auto;
gap:2px 1em}dt{color:#555}dd{margin:0}.empty{color:#777}
"""


def render_html(summary: dict[str, Any], attempts: Sequence[dict[str, Any]]) -> str:
    """The report page; `attempts` are the store's, in the order of `summary["attempts"]`."""
    title = f"assay eval {summary['eval_id']}"
    body = [
        f"<h1>{escape(title)}</h1>",
        _overview(summary),
        *(_group_section(summary, name) for name in PLOTTED_GROUPS),
        _pass_at_k_section(summary),
        _distributions(summary["attempts"], attempts),
        _errors_section(summary),
        _attempts_section(summary["attempts"], attempts),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _overview(summary: dict[str, Any]) -> str:
    created = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(summary["created_at"]))
    ci = summary.get("ci95")
    rows = [
        ("agent", escape(str(summary["agent"]))),
        ("created", escape(created)),
        ("pass rate", _metric("pass_rate", summary["pass_rate"], _percent)),
        ("95% interval", _interval(ci)),
        ("passed", _metric("passed", summary["passed"])),
        ("scored", _metric("scored", summary["scored"])),
        ("errors (not scored)", _metric("errors", summary["errors"])),
        (
            "attempts",
            (
                f"{_metric('total', summary['total'])} of "
                f"{_metric('planned', summary['planned'])} planned"
            ),
        ),
    ]
    items = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    return f'<section id="summary"><h2>Summary</h2><dl>{items}</dl></section>'


def _group_section(summary: dict[str, Any], name: str) -> str:
    groups: dict[str, dict[str, Any]] = summary["groups"].get(name, {})
    bars = []
    rows = []
    for key, group in groups.items():
        ci = group.get("ci95")
        if group["pass_rate"] is not None:
            bars.append(
                Bar(
                    key,
                    group["pass_rate"],
                    ci[0] if ci else None,
                    ci[1] if ci else None,
                    f" ({group['passed']}/{group['scored']})",
                )
            )
        rows.append(
            f'<tr data-group="{escape(name)}" data-key="{escape(key)}"><td>{escape(key)}</td>'
            f'<td class="num">{_metric("pass_rate", group["pass_rate"], _percent)}</td>'
            f'<td class="num">{_interval(ci)}</td>'
            f'<td class="num">{_metric("passed", group["passed"])}</td>'
            f'<td class="num">{_metric("scored", group["scored"])}</td>'
            f'<td class="num">{_metric("errors", group["errors"])}</td></tr>'
        )
    chart = bar_chart(bars, title=f"pass rate by {name}, 95% Wilson interval")
    table = (
        f"<table><tr><th>{escape(name)}</th><th class=num>pass rate</th>"
        "<th class=num>95% interval</th><th class=num>passed</th><th class=num>scored</th>"
        "<th class=num>errors</th></tr>" + "".join(rows) + "</table>"
    )
    return f'<section id="by-{escape(name)}"><h2>Pass rate by {escape(name)}</h2>{chart}{table}</section>'


def _pass_at_k_section(summary: dict[str, Any]) -> str:
    found: dict[str, dict[str, Any]] = summary.get("pass_at_k", {})
    points = [(int(k), v["value"]) for k, v in found.items()]
    rows = "".join(
        f'<tr data-k="{escape(k)}"><td class="num">{escape(k)}</td>'
        f'<td class="num">{_metric("pass_at_k", v["value"], _percent)}</td>'
        f'<td class="num">{_metric("tasks", v["tasks"])}</td></tr>'
        for k, v in found.items()
    )
    return (
        '<section id="pass-at-k"><h2>pass@k over epochs</h2>'
        "<p>Unbiased estimator 1 − C(n−c, k)/C(n, k) per task (n scored attempts, c passed),"
        " averaged over the tasks with at least k scored attempts.</p>"
        + line_chart(points, title="pass@k", x_label="k (attempts per task)")
        + "<table><tr><th class=num>k</th><th class=num>pass@k</th><th class=num>tasks</th></tr>"
        + rows
        + "</table></section>"
    )


def _distributions(rows: Sequence[dict[str, Any]], attempts: Sequence[dict[str, Any]]) -> str:
    wall = [float(r["duration_s"]) for r in rows if r.get("duration_s") is not None]
    agents = [a["evidence"].get("agent") or {} for a in attempts]
    agent = [_number_in(a, "duration_s") for a in agents if _numeric(a, "duration_s")]
    tokens = [
        _number_in(a["telemetry"], "tokens_in") + _number_in(a["telemetry"], "tokens_out")
        for a in attempts
        if _numeric(a["telemetry"], "tokens_in") or _numeric(a["telemetry"], "tokens_out")
    ]
    cost = [
        _number_in(a["telemetry"], "cost_usd")
        for a in attempts
        if _numeric(a["telemetry"], "cost_usd")
    ]
    plots = [
        ("attempt duration", histogram(wall, title="attempt duration", unit="seconds")),
        ("agent duration", histogram(agent, title="agent duration", unit="agent seconds")),
        ("tokens per attempt", histogram(tokens, title="tokens", unit="tokens in + out")),
        ("cost per attempt", histogram(cost, title="cost per attempt", unit="US dollars")),
    ]
    totals = (
        f"<p>total tokens {_metric('tokens_total', sum(tokens), _count)}, "
        f"total cost ${_metric('cost_total', sum(cost), lambda v: f'{v:.4f}')}</p>"
    )
    return (
        '<section id="distributions"><h2>Durations, tokens and cost</h2>'
        + totals
        + "".join(f"<figure><figcaption>{name}</figcaption>{plot}</figure>" for name, plot in plots)
        + "</section>"
    )


def _errors_section(summary: dict[str, Any]) -> str:
    by_stage: dict[str, int] = summary["errors_by_stage"]
    bars = [Bar(cause, count) for cause, count in by_stage.items()]
    rows = "".join(
        f'<tr data-cause="{escape(cause)}"><td>{escape(cause.partition(":")[0])}</td>'
        f"<td>{escape(cause.partition(':')[2])}</td>"
        f'<td class="num">{_metric("count", count)}</td></tr>'
        for cause, count in by_stage.items()
    )
    chart = bar_chart(
        bars,
        title="errors by stage and cause",
        top=max(by_stage.values(), default=1),
        percent=False,
    )
    return (
        '<section id="errors"><h2>Errors by stage and cause</h2>'
        "<p>Infrastructure errors are not scored: the pass rates above are over scored"
        " attempts only.</p>"
        + (chart if bars else "<p>No errors.</p>")
        + "<table><tr><th>stage</th><th>cause</th><th class=num>attempts</th></tr>"
        + rows
        + "</table></section>"
    )


def _attempts_section(rows: Sequence[dict[str, Any]], attempts: Sequence[dict[str, Any]]) -> str:
    lines = []
    blocks = []
    for number, (row, attempt) in enumerate(zip(rows, attempts, strict=True), start=1):
        anchor = f"evidence-{number}"
        note = ""
        if row["error"]:
            note = f"{row['error']['stage']}/{row['error']['cause']}: {row['error']['message']}"
        elif row["tampering"]:
            note = "tampering: " + "; ".join(str(t) for t in row["tampering"])
        elif row.get("flaky_tests"):
            note = "flaky (failed, then passed on a rerun): " + ", ".join(row["flaky_tests"])
        elif row["agent_timed_out"]:
            note = "agent killed at its wall time"
        score = "" if row["score"] is None else f"{row['score']:.1f}"
        status = str(row["status"] or "-")
        lines.append(
            f'<tr class="attempt" data-task="{escape(row["task_id"])}" data-epoch="{row["epoch"]}"'
            f' data-outcome="{escape(row["outcome"])}" data-score="{escape(score)}">'
            f"<td>{escape(row['task_id'])}</td><td class=num>{row['epoch']}</td>"
            f'<td class="outcome-{escape(row["outcome"])}">{escape(row["outcome"])}</td>'
            f'<td class="status-{escape(status)}">{escape(status)}</td>'
            f"<td class=num>{escape(score)}</td><td class=num>{row['tries']}</td>"
            f"<td class=num>{_seconds(row.get('duration_s'))}</td>"
            f"<td>{escape(note[:300])}</td>"
            f'<td><a href="#{anchor}-json">evidence</a></td></tr>'
        )
        document = json.dumps(attempt, indent=2, ensure_ascii=False, sort_keys=True, default=str)
        blocks.append(
            f'<details id="{anchor}"><summary>{escape(row["task_id"])} #{row["epoch"]}</summary>'
            f'<pre id="{anchor}-json">{escape(document)}</pre></details>'
        )
    return (
        '<section id="attempts"><h2>Attempts</h2><table><tr><th>task</th><th class=num>epoch</th>'
        "<th>outcome</th><th>status</th><th class=num>score</th><th class=num>tries</th>"
        "<th class=num>seconds</th><th>note</th><th></th></tr>"
        + "".join(lines)
        + '</table></section><section id="evidence"><h2>Evidence</h2>'
        + "".join(blocks)
        + "</section>"
    )


def _metric(name: str, value: Any, shown: Any = None) -> str:
    """A figure with its exact value in `data-value`, for readers and tests alike."""
    if value is None:
        return f'<span data-metric="{name}" data-value="">n/a</span>'
    text = shown(value) if shown else str(value)
    return f'<span data-metric="{name}" data-value="{escape(repr(value))}">{escape(text)}</span>'


def _interval(ci: Sequence[float] | None) -> str:
    if not ci:
        return '<span data-metric="ci95" data-value="">n/a</span>'
    return (
        f'<span data-metric="ci95" data-value="{ci[0]!r} {ci[1]!r}">'
        f"{ci[0] * 100:.1f}% – {ci[1] * 100:.1f}%</span>"
    )


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _numeric(document: dict[str, Any], key: str) -> bool:
    value = document.get(key)
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number_in(document: dict[str, Any], key: str) -> float:
    """`document[key]` as a number; 0 for anything else (telemetry is the agent's text)."""
    return float(document[key]) if _numeric(document, key) else 0.0
