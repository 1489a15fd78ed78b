"""Inline SVG plots for the HTML report, drawn here in Python: the report needs no script
and no network to open. Every label is escaped (task ids and templates are hostile text)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 640
ROW = 22
LABEL_W = 180
PAD = 8


@dataclass(frozen=True, slots=True)
class Bar:
    """One horizontal bar: `value`, with an interval [low, high] drawn as a whisker."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    note: str = ""


def bar_chart(bars: Sequence[Bar], *, title: str, top: float = 1.0, percent: bool = True) -> str:
    """Horizontal bars on a scale 0..`top`, labelled on the left, value on the right."""
    if not bars:
        return _empty(title)
    plot_w = WIDTH - LABEL_W - 120
    height = len(bars) * ROW + 2 * PAD + 16
    parts = [_open(WIDTH, height, title)]
    top = top or 1.0
    for i, bar in enumerate(bars):
        y = PAD + i * ROW
        width = max(0.0, min(1.0, bar.value / top)) * plot_w
        text = f"{bar.value * 100:.1f}%" if percent else _number(bar.value)
        parts.append(
            f'<text x="{LABEL_W - 6}" y="{y + 15}" text-anchor="end">{escape(_clip(bar.label))}'
            f"</text>"
            f'<rect x="{LABEL_W}" y="{y + 4}" width="{width:.1f}" height="{ROW - 8}" '
            f'class="bar"/>'
            f'<text x="{LABEL_W + plot_w + 8}" y="{y + 15}">{escape(text + bar.note)}</text>'
        )
        if bar.low is not None and bar.high is not None:
            x1 = LABEL_W + bar.low / top * plot_w
            x2 = LABEL_W + bar.high / top * plot_w
            mid = y + ROW / 2
            parts.append(
                f'<path d="M{x1:.1f} {mid}H{x2:.1f}M{x1:.1f} {mid - 5}V{mid + 5}'
                f'M{x2:.1f} {mid - 5}V{mid + 5}" class="whisker"/>'
            )
    axis_y = PAD + len(bars) * ROW
    parts.append(_x_axis(LABEL_W, plot_w, axis_y, top, percent))
    parts.append("</svg>")
    return "".join(parts)


def line_chart(points: Sequence[tuple[int, float]], *, title: str, x_label: str) -> str:
    """Values in 0..1 against integer x (pass@k against k), with a dot per point."""
    if not points:
        return _empty(title)
    height = 220
    left, right, top_y, bottom = 50, WIDTH - 20, 24, height - 36
    xs = [x for x, _ in points]
    lo, hi = min(xs), max(xs)

    def at(x: int, v: float) -> tuple[float, float]:
        px = left + (0.5 if hi == lo else (x - lo) / (hi - lo)) * (right - left)
        return px, bottom - max(0.0, min(1.0, v)) * (bottom - top_y)

    parts = [_open(WIDTH, height, title)]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        _, y = at(lo, tick)
        parts.append(
            f'<path d="M{left} {y:.1f}H{right}" class="grid"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick * 100:.0f}%</text>'
        )
    coords = [at(x, v) for x, v in points]
    parts.append(
        '<polyline class="line" points="' + " ".join(f"{x:.1f},{y:.1f}" for x, y in coords) + '"/>'
    )
    for (x, v), (px, py) in zip(points, coords, strict=True):
        parts.append(
            f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" class="dot"/>'
            f'<text x="{px:.1f}" y="{py - 8:.1f}" text-anchor="middle">{v * 100:.1f}%</text>'
            f'<text x="{px:.1f}" y="{bottom + 16}" text-anchor="middle">{x}</text>'
        )
    parts.append(
        f'<text x="{(left + right) / 2}" y="{height - 4}" text-anchor="middle">'
        f"{escape(x_label)}</text></svg>"
    )
    return "".join(parts)


def histogram(values: Sequence[float], *, title: str, unit: str, bins: int = 10) -> str:
    """Counts of `values` in equal-width bins, with the median marked."""
    if not values:
        return _empty(title)
    lo, hi = min(values), max(values)
    if hi == lo:
        hi = lo + 1.0
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / width))] += 1
    height = 200
    left, right, top_y, bottom = 40, WIDTH - 20, 18, height - 40
    most = max(counts)
    step = (right - left) / bins
    parts = [_open(WIDTH, height, title)]
    for i, count in enumerate(counts):
        h = count / most * (bottom - top_y)
        x = left + i * step
        parts.append(
            f'<rect x="{x + 1:.1f}" y="{bottom - h:.1f}" width="{step - 2:.1f}" '
            f'height="{h:.1f}" class="bar"><title>{count}</title></rect>'
        )
        if count:
            parts.append(
                f'<text x="{x + step / 2:.1f}" y="{bottom - h - 3:.1f}" '
                f'text-anchor="middle">{count}</text>'
            )
    median = sorted(values)[len(values) // 2]
    mx = left + (median - lo) / (hi - lo) * (right - left)
    parts.append(
        f'<path d="M{mx:.1f} {top_y}V{bottom}" class="median"/>'
        f'<path d="M{left} {bottom}H{right}" class="axis"/>'
        f'<text x="{left}" y="{bottom + 16}">{_number(lo)}</text>'
        f'<text x="{right}" y="{bottom + 16}" text-anchor="end">{_number(hi)}</text>'
        f'<text x="{(left + right) / 2}" y="{height - 6}" text-anchor="middle">'
        f"{escape(unit)} (median {_number(median)}, n={len(values)})</text></svg>"
    )
    return "".join(parts)


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(title)}">'
        f"<title>{escape(title)}</title>"
    )


def _x_axis(left: float, width: float, y: float, top: float, percent: bool) -> str:
    parts = [f'<path d="M{left} {y}H{left + width}" class="axis"/>']
    for tick in (0.0, 0.5, 1.0):
        x = left + tick * width
        label = f"{tick * top * 100:.0f}%" if percent else _number(tick * top)
        parts.append(f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle">{label}</text>')
    return "".join(parts)


def _empty(title: str) -> str:
    return f'<p class="empty">{escape(title)}: nothing to plot</p>'


def _clip(label: str, most: int = 28) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"


def _number(value: float) -> str:
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"
