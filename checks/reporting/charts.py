"""Charts as plain data: coordinates, labels and colours that a template draws as inline SVG.

Presentation attributes only, so the same chart shows on a page under the strict CSP and in
the PDF WeasyPrint renders. Every chart carries its numbers as a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

# Okabe–Ito: told apart by people with any common colour vision deficiency.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F"]


STATUS_COLOURS = {"open": "#D55E00", "confirmed": "#B42318", "dismissed": "#98A2B3"}


@dataclass
class Series:
    name: str
    colour: str
    points: str  # "x,y x,y …" for a polyline
    dots: list[tuple[float, float, str]]  # (x, y, tooltip)


@dataclass
class LineChart:
    """Rates (0–1) per day for a few named series."""

    title: str
    ident: str
    width: int = 720
    height: int = 240
    series: list[Series] = field(default_factory=list)
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    y_lines: list[tuple[float, str]] = field(default_factory=list)
    plot: tuple[int, int, int, int] = (48, 16, 700, 200)  # left, top, right, bottom
    # the numbers: header and rows
    table_head: list[str] = field(default_factory=list)
    table_rows: list[list[str]] = field(default_factory=list)
    kind: str = "line"
    empty: bool = False


@dataclass
class Bar:
    label: str
    parts: list[tuple[float, float, str, str]]  # (x, width, colour, tooltip)
    text: str
    y: float = 0


@dataclass
class BarChart:
    title: str
    ident: str
    bars: list[Bar] = field(default_factory=list)
    width: int = 720
    height: int = 0
    label_width: int = 200
    plot_width: int = 410
    bar_height: int = 18
    legend: list[tuple[str, str]] = field(default_factory=list)
    table_head: list[str] = field(default_factory=list)
    table_rows: list[list[str]] = field(default_factory=list)
    kind: str = "bar"
    empty: bool = False

    @property
    def text_x(self) -> int:
        return self.label_width + self.plot_width + 8


def percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def line_chart(
    title: str,
    ident: str,
    days: list[date],
    series: dict[str, dict[date, tuple[int, int]]],
) -> LineChart:
    """``series`` maps a name to {day: (flagged, of)}; the chart draws flagged/of per day."""
    chart = LineChart(title, ident)
    left, top, right, bottom = chart.plot
    n = len(days)
    rates: dict[str, list[float | None]] = {}
    for name, by_day in series.items():
        rates[name] = [by_day[d][0] / by_day[d][1] if d in by_day and by_day[d][1] else None for d in days]
    peak = max([r for values in rates.values() for r in values if r is not None], default=0.0)
    top_rate = 1.0 if peak > 0.5 else 0.5 if peak > 0.2 else 0.2 if peak > 0.1 else 0.1

    def x(i: int) -> float:
        return round(left + (right - left) * (i / (n - 1) if n > 1 else 0.5), 1)

    def y(rate: float) -> float:
        return round(bottom - (bottom - top) * min(rate / top_rate, 1.0), 1)

    tick = {1.0: 0.25, 0.5: 0.1, 0.2: 0.05, 0.1: 0.02}[top_rate]
    for k in range(round(top_rate / tick) + 1):
        chart.y_lines.append((y(k * tick), f"{k * tick * 100:.0f}%"))
    step = max(1, n // 6)
    chart.x_labels = [(x(i), f"{d:%b %d}") for i, d in enumerate(days) if i % step == 0]
    for k, (name, values) in enumerate(rates.items()):
        colour = PALETTE[k % len(PALETTE)]
        points, dots = [], []
        for i, rate in enumerate(values):
            if rate is None:
                continue
            flagged, of = series[name][days[i]]
            points.append(f"{x(i)},{y(rate)}")
            dots.append((x(i), y(rate), f"{name} {days[i]:%Y-%m-%d}: {flagged} of {of} ({percent(rate)})"))
        chart.series.append(Series(name, colour, " ".join(points), dots))
    chart.empty = not any(s.dots for s in chart.series)
    chart.table_head = ["Day", *series.keys()]
    for d in days:
        row = [f"{d:%Y-%m-%d}"]
        for name in series:
            flagged, of = series[name].get(d, (0, 0))
            row.append(f"{flagged}/{of} ({percent(flagged / of)})" if of else "—")
        if any(cell != "—" for cell in row[1:]):
            chart.table_rows.append(row)
    return chart


def bar_chart(
    title: str,
    ident: str,
    rows: Sequence[tuple[str, Sequence[tuple[str, float]], str]],
    *,
    scale: float | None = None,
    colours: dict[str, str] | None = None,
    table_head: list[str] | None = None,
    table_rows: list[list[str]] | None = None,
) -> BarChart:
    """Horizontal bars, each of one or more stacked parts: (label, [(part, value)], text)."""
    chart = BarChart(title, ident)
    total_max = scale or max([sum(v for _, v in parts) for _, parts, _ in rows], default=0) or 1
    plot_width = chart.plot_width
    names: list[str] = []
    for i, (label, parts, text) in enumerate(rows):
        x = float(chart.label_width)
        drawn = []
        for j, (part, value) in enumerate(parts):
            if part not in names:
                names.append(part)
            colour = (colours or {}).get(part) or PALETTE[(names.index(part) if len(parts) > 1 else j) % 8]
            w = round(plot_width * value / total_max, 1)
            drawn.append((round(x, 1), w, colour, f"{label} · {part}: {value:g}"))
            x += w
        chart.bars.append(Bar(label[:32], drawn, text, y=8 + i * (chart.bar_height + 8)))
    chart.height = 16 + len(rows) * (chart.bar_height + 8)
    if any(len(parts) > 1 for _, parts, _ in rows):
        chart.legend = [(n, (colours or {}).get(n) or PALETTE[i % 8]) for i, n in enumerate(names)]
    chart.empty = not rows
    chart.table_head = table_head or []
    chart.table_rows = table_rows or []
    return chart


def hours(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 1:
        return f"{value * 60:.0f} min"
    if value < 48:
        return f"{value:.1f} h"
    return f"{value / 24:.1f} days"


def status_chart(by_checker: list[dict[str, Any]]) -> BarChart:
    return bar_chart(
        "Open versus decided flags, per checker",
        "status",
        [
            (
                r["checker"],
                [(s, r[s]) for s in ("confirmed", "dismissed", "open")],
                f"{r['decided']} of {r['total']} decided",
            )
            for r in by_checker
        ],
        colours=STATUS_COLOURS,
        table_head=["Checker", "Open", "Confirmed", "Dismissed", "Decided"],
        table_rows=[
            [
                r["checker"],
                str(r["open"]),
                str(r["confirmed"]),
                str(r["dismissed"]),
                f"{r['decided']}/{r['total']}",
            ]
            for r in by_checker
        ],
    )


def precision_chart(by_checker: list[dict[str, Any]]) -> BarChart:
    rows = [r for r in by_checker if r["decided"]]
    return bar_chart(
        "Reviewer-measured precision per checker: confirmed ÷ (confirmed + dismissed)",
        "precision",
        [(r["checker"], [("precision", r["precision"])], percent(r["precision"])) for r in rows],
        scale=1.0,
        table_head=["Checker", "Confirmed", "Dismissed", "Precision"],
        table_rows=[
            [r["checker"], str(r["confirmed"]), str(r["dismissed"]), percent(r["precision"])]
            for r in by_checker
        ],
    )


def rate_bars(title: str, ident: str, rows: list[dict[str, Any]], head: str) -> BarChart:
    ranked = sorted(rows, key=lambda r: (-r["flagged"], -(r["rate"] or 0), r["name"]))
    return bar_chart(
        title,
        ident,
        [
            (r["name"], [("rate", r["rate"] or 0)], f"{r['flagged']}/{r['turns']} · {percent(r['rate'])}")
            for r in ranked[:10]
        ],
        scale=1.0,
        table_head=[head, "Turns", "Flagged turns", "Flag rate"],
        table_rows=[[r["name"], str(r["turns"]), str(r["flagged"]), percent(r["rate"])] for r in ranked],
    )
