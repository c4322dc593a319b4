"""Charts as plain data: coordinates, labels and colours that a template draws as inline SVG.

Presentation attributes only, so the same chart shows on a page under the strict CSP and in
the PDF WeasyPrint renders. Every chart carries its numbers as a table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

# Okabe–Ito: told apart by people with any common colour vision deficiency.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F"]


STATUS_COLOURS = {"open": "#D55E00", "confirmed": "#B42318", "dismissed": "#98A2B3"}


# Charts are drawn in a wide coordinate space and fill their card (the SVG is 100% wide and
# keeps the viewBox's proportions), so a wide screen draws them across the card.
WIDTH = 960


# Up to this many days a chart has a point a day; up to MAX_WEEKS a point a week; beyond, a
# point a month: a year stays 12 points, so labels never run into one another.
MAX_DAYS = 45


MAX_WEEKS = 200


# At most this many labels under the x axis.
X_LABELS = 8


@dataclass
class Series:
    name: str
    colour: str
    points: str  # "x,y x,y …" for a polyline
    dots: list[tuple[float, float, str]]  # (x, y, tooltip)
    # (x, y, text): the value beside a point drawn alone, which a line cannot show
    labels: list[tuple[float, float, str]] = field(default_factory=list)


@dataclass
class ColumnBar:
    """One series' rate over a period of a single point: a column with its value above it."""

    x: float
    y: float
    width: float
    height: float
    colour: str
    tip: str
    text: str

    @property
    def centre(self) -> float:
        return round(self.x + self.width / 2, 1)


@dataclass
class LineChart:
    """Rates (0–1) per day, week or month for a few named series."""

    title: str
    ident: str
    width: int = WIDTH
    height: int = 260
    series: list[Series] = field(default_factory=list)
    columns: list[ColumnBar] = field(default_factory=list)  # instead of lines, for one point
    x_labels: list[tuple[float, str]] = field(default_factory=list)
    y_lines: list[tuple[float, str]] = field(default_factory=list)
    # left, top, right, bottom: room on the right for the last label and a value beside a point
    plot: tuple[int, int, int, int] = (52, 28, WIDTH - 48, 220)
    unit: str = "day"
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
    width: int = WIDTH
    height: int = 0
    label_width: int = 220
    plot_width: int = WIDTH - 220 - 150  # the rest holds each bar's text
    bar_height: int = 20
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


@dataclass(frozen=True)
class Bucket:
    """The days one point of a chart sums: a day, a week (from its Monday) or a month."""

    days: tuple[date, ...]
    label: str  # under the axis
    name: str  # in tooltips and the table


def buckets(days: list[date]) -> tuple[str, list[Bucket]]:
    """The unit ("day", "week" or "month") a period of ``days`` is drawn in, and its points."""
    if len(days) <= MAX_DAYS:
        return "day", [Bucket((d,), f"{d:%b %d}", f"{d:%Y-%m-%d}") for d in days]
    groups: dict[date, list[date]] = {}
    weekly = len(days) <= MAX_WEEKS
    for d in days:
        start = d - timedelta(days=d.weekday()) if weekly else d.replace(day=1)
        groups.setdefault(start, []).append(d)
    if weekly:
        return "week", [
            Bucket(tuple(ds), f"{ds[0]:%b %d}", f"{ds[0]:%Y-%m-%d} to {ds[-1]:%Y-%m-%d}")
            for ds in groups.values()
        ]
    return "month", [Bucket(tuple(ds), f"{ds[0]:%b %Y}", f"{ds[0]:%Y-%m}") for ds in groups.values()]


def _rate_ceiling(peak: float) -> tuple[float, float]:
    """The top of the rate axis for the highest rate drawn, and the step of its grid lines."""
    top = 1.0 if peak > 0.5 else 0.5 if peak > 0.2 else 0.2 if peak > 0.1 else 0.1
    return top, {1.0: 0.25, 0.5: 0.1, 0.2: 0.05, 0.1: 0.02}[top]


def line_chart(
    title: str,
    ident: str,
    days: list[date],
    series: dict[str, dict[date, tuple[int, int]]],
) -> LineChart:
    """``series`` maps a name to {day: (flagged, of)}; the chart draws flagged/of per day, or
    per week or month over a long period (the sums of its days). A period of one point draws
    a column per series with its value, where a line would be a lone dot."""
    unit, points = buckets(days)
    chart = LineChart(f"{title}, per {unit}", ident, unit=unit)
    left, top, right, bottom = chart.plot
    n = len(points)
    sums: dict[str, list[tuple[int, int] | None]] = {}
    for name, by_day in series.items():
        sums[name] = []
        for bucket in points:
            present = [by_day[d] for d in bucket.days if d in by_day]
            sums[name].append((sum(f for f, _ in present), sum(o for _, o in present)) if present else None)
    rates = {name: [v[0] / v[1] if v and v[1] else None for v in values] for name, values in sums.items()}
    peak = max([r for values in rates.values() for r in values if r is not None], default=0.0)
    top_rate, tick = _rate_ceiling(peak)

    def y(rate: float) -> float:
        return round(bottom - (bottom - top) * min(rate / top_rate, 1.0), 1)

    for k in range(round(top_rate / tick) + 1):
        chart.y_lines.append((y(k * tick), f"{k * tick * 100:.0f}%"))

    def tip(name: str, i: int) -> str:
        flagged, of = sums[name][i] or (0, 0)
        return f"{name} {points[i].name}: {flagged} of {of} ({percent(flagged / of if of else None)})"

    if n == 1:
        _columns(chart, rates, tip, y)
        chart.x_labels = [((left + right) / 2, points[0].label)]
    else:

        def x(i: int) -> float:
            return round(left + (right - left) * i / (n - 1), 1)

        step = -(-n // X_LABELS)
        chart.x_labels = [(x(i), b.label) for i, b in enumerate(points) if i % step == 0]
        for k, (name, values) in enumerate(rates.items()):
            drawn = [(i, rate) for i, rate in enumerate(values) if rate is not None]
            dots = [(x(i), y(rate), tip(name, i)) for i, rate in drawn]
            labels = [(x(i), y(rate), percent(rate)) for i, rate in drawn] if len(drawn) == 1 else []
            points_text = " ".join(f"{px},{py}" for px, py, _ in dots)
            chart.series.append(Series(name, PALETTE[k % len(PALETTE)], points_text, dots, labels))
    chart.empty = not any(v is not None for values in rates.values() for v in values)
    chart.table_head = [{"day": "Day", "week": "Week", "month": "Month"}[unit], *series.keys()]
    for i, bucket in enumerate(points):
        row = [bucket.name]
        for name in series:
            flagged, of = sums[name][i] or (0, 0)
            row.append(f"{flagged}/{of} ({percent(flagged / of)})" if of else "—")
        if any(cell != "—" for cell in row[1:]):
            chart.table_rows.append(row)
    return chart


def _columns(
    chart: LineChart,
    rates: dict[str, list[float | None]],
    tip: Any,
    y: Any,
) -> None:
    """One column per series, side by side across the plot, each with its rate above it."""
    left, _top, right, bottom = chart.plot
    slot = (right - left) / max(len(rates), 1)
    width = min(slot * 0.6, 120)
    for k, (name, values) in enumerate(rates.items()):
        colour = PALETTE[k % len(PALETTE)]
        chart.series.append(Series(name, colour, "", []))
        rate = values[0]
        if rate is None:
            continue
        x = round(left + slot * k + (slot - width) / 2, 1)
        top = y(rate)
        chart.columns.append(
            ColumnBar(x, top, round(width, 1), round(bottom - top, 1), colour, tip(name, 0), percent(rate))
        )


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
