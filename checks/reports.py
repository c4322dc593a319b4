"""A project's figures at a glance, the charts that show them, and the audit report as a PDF.

Charts are plain data (coordinates, labels, colours) that a template draws as inline SVG with
presentation attributes only, so the same chart shows on a page under the strict CSP and in
the PDF WeasyPrint renders. Every chart carries its numbers as a table.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import TruncDate
from django.template.loader import render_to_string
from django.utils import timezone

from . import audit
from .evidence_calls import StoredCalls, evidence_call, stored_calls
from .models import (
    Conversation,
    Correction,
    CorrectionState,
    Decision,
    Finding,
    FindingStatus,
    Project,
    Turn,
)

DEFAULT_DAYS = 30
MAX_DAYS = 366
TOP_SERIES = 6
# Okabe–Ito: told apart by people with any common colour vision deficiency.
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C6D1F"]
STATUS_COLOURS = {"open": "#D55E00", "confirmed": "#B42318", "dismissed": "#98A2B3"}
UNNAMED = "(unnamed)"


# --- the period ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Period:
    since: date
    until: date  # inclusive

    @property
    def days(self) -> list[date]:
        return [self.since + timedelta(days=i) for i in range((self.until - self.since).days + 1)]

    @property
    def start(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.since, time.min))

    @property
    def end(self) -> datetime:
        return timezone.make_aware(datetime.combine(self.until + timedelta(days=1), time.min))

    def __str__(self) -> str:
        return f"{self.since:%Y-%m-%d} to {self.until:%Y-%m-%d}"


class InvalidPeriod(ValueError):
    pass


def period_from(data: Any) -> Period:
    """The period a query string asks for: ``since`` and ``until`` (YYYY-MM-DD, inclusive);
    the last 30 days by default."""
    today = timezone.localdate()
    values = {}
    for key in ("since", "until"):
        raw = (data.get(key) or "").strip()
        try:
            values[key] = date.fromisoformat(raw) if raw else None
        except ValueError:
            raise InvalidPeriod(f"{key}: use a date as YYYY-MM-DD, such as 2026-11-30.") from None
    until = values["until"] or today
    since = values["since"] or until - timedelta(days=DEFAULT_DAYS - 1)
    if since > until:
        raise InvalidPeriod("since: must be on or before until.")
    if (until - since).days >= MAX_DAYS:
        raise InvalidPeriod(f"since: a period covers at most {MAX_DAYS} days.")
    return Period(since, until)


# --- charts as data -----------------------------------------------------------------------


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


# --- the figures --------------------------------------------------------------------------


def _agent(value: str) -> str:
    return value or UNNAMED


def _flags(project: Project, period: Period | None) -> QuerySet[Finding]:
    findings = Finding.objects.current().flags().filter(project=project)
    if period is not None:
        findings = findings.filter(turn__created_at__gte=period.start, turn__created_at__lt=period.end)
    return findings


def _turns(project: Project, period: Period | None) -> QuerySet[Turn]:
    turns = Turn.objects.filter(project=project)
    if period is not None:
        turns = turns.filter(created_at__gte=period.start, created_at__lt=period.end)
    return turns


def _rate_series(
    project: Project, period: Period, dimension: str, limit: int = TOP_SERIES
) -> dict[str, dict[date, tuple[int, int]]]:
    """Per value of ``dimension`` (a finding field, or the turn's agent or model) and per day:
    (turns flagged, turns checked). Checker and code rates are over all turns of the day."""
    turns_by_day = dict(
        _turns(project, period)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    out: dict[str, dict[date, tuple[int, int]]] = {}
    if dimension in ("checker", "code"):
        rows = (
            _flags(project, period)
            .annotate(day=TruncDate("turn__created_at"))
            .values_list(dimension, "day")
            .annotate(n=Count("turn", distinct=True))
        )
        totals: dict[str, int] = defaultdict(int)
        for name, _day, n in rows:
            totals[name] += n
        keep = sorted(totals, key=lambda k: (-totals[k], k))[:limit]
        for name, day, n in rows:
            if name in keep:
                out.setdefault(name, {})[day] = (n, turns_by_day.get(day, 0))
        for name in keep:
            for day, of in turns_by_day.items():
                out[name].setdefault(day, (0, of))
        return {name: out[name] for name in keep}
    field_name = {"agent": "conversation__agent_name", "model": "conversation__agent_model"}[dimension]
    flagged = Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))
    rows = (
        _turns(project, period)
        .annotate(day=TruncDate("created_at"), flagged=flagged)
        .values_list(field_name, "day")
        .annotate(n=Count("id"), f=Count("id", filter=Q(flagged=True)))
    )
    totals = defaultdict(int)
    for name, _, n, _f in rows:
        totals[_agent(name)] += n
    keep = sorted(totals, key=lambda k: (-totals[k], k))[:limit]
    for name, day, n, f in rows:
        if _agent(name) in keep:
            out.setdefault(_agent(name), {})[day] = (f, n)
    return {name: out[name] for name in keep}


def _by_dimension(project: Project, period: Period | None, field_name: str) -> list[dict[str, Any]]:
    flagged = Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))
    rows = (
        _turns(project, period)
        .annotate(flagged=flagged)
        .values_list(field_name)
        .annotate(n=Count("id"), f=Count("id", filter=Q(flagged=True)))
    )
    out = [
        {"name": _agent(name), "turns": n, "flagged": f, "rate": f / n if n else None} for name, n, f in rows
    ]
    return sorted(out, key=lambda r: (-(r["rate"] or 0), -r["turns"], r["name"]))


def _status_by_checker(project: Project, period: Period | None) -> list[dict[str, Any]]:
    return _status_rows(_flags(project, period))


def _review_speed(project: Project, period: Period | None) -> list[dict[str, Any]]:
    """Per agent: how long its flags wait for a first decision, and the oldest still open."""
    flags = _flags(project, period)
    first: dict[int, datetime] = {}
    for finding_id, at in (
        Decision.objects.filter(finding__in=flags)
        .order_by("created_at")
        .values_list("finding_id", "created_at")
    ):
        first.setdefault(finding_id, at)
    waits: dict[str, list[float]] = defaultdict(list)
    oldest_open: dict[str, datetime] = {}
    now = timezone.now()
    for pk, agent, created, status in flags.values_list(
        "pk", "conversation__agent_name", "created_at", "status"
    ):
        name = _agent(agent)
        if pk in first:
            waits[name].append((first[pk] - created).total_seconds() / 3600)
        elif status == FindingStatus.OPEN:
            oldest_open[name] = min(oldest_open.get(name, now), created)
    rows = []
    for name in set(waits) | set(oldest_open):
        rows.append(
            {
                "name": name,
                "decided": len(waits.get(name, [])),
                "median_hours": statistics.median(waits[name]) if waits.get(name) else None,
                "oldest_open_hours": (now - oldest_open[name]).total_seconds() / 3600
                if name in oldest_open
                else None,
            }
        )
    return sorted(rows, key=lambda r: (-(r["median_hours"] or 0), -(r["oldest_open_hours"] or 0), r["name"]))


def hours(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 1:
        return f"{value * 60:.0f} min"
    if value < 48:
        return f"{value:.1f} h"
    return f"{value / 24:.1f} days"


@dataclass
class Overview:
    period: Period | None
    figures: dict[str, Any]
    by_checker: list[dict[str, Any]]
    by_agent: list[dict[str, Any]]
    by_model: list[dict[str, Any]]
    review_speed: list[dict[str, Any]]
    charts: dict[str, Any]


def summary_figures(
    project: Project, period: Period | None, conversation: Conversation | None = None
) -> dict[str, Any]:
    turns = _turns(project, period)
    flags = _flags(project, period)
    if conversation is not None:
        turns, flags = turns.filter(conversation=conversation), flags.filter(conversation=conversation)
    n_turns = turns.count()
    flagged = turns.filter(Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))).count()
    status = dict(flags.values_list("status").annotate(n=Count("id")).values_list("status", "n").order_by())
    confirmed, dismissed = status.get("confirmed", 0), status.get("dismissed", 0)
    precision = confirmed / (confirmed + dismissed) if confirmed + dismissed else None
    return {
        "conversations": turns.values("conversation").distinct().count(),
        "turns": n_turns,
        "flagged_turns": flagged,
        "flag_rate": flagged / n_turns if n_turns else None,
        "flag_rate_text": percent(flagged / n_turns if n_turns else None),
        "flags": sum(status.values()),
        "open": status.get("open", 0),
        "confirmed": confirmed,
        "dismissed": dismissed,
        "precision": precision,
        "precision_text": percent(precision),
        "approved_corrections": Correction.objects.filter(
            finding__in=flags, state=CorrectionState.APPROVED
        ).count(),
    }


def overview(project: Project, period: Period) -> Overview:
    by_checker = _status_by_checker(project, period)
    by_agent = _by_dimension(project, period, "conversation__agent_name")
    by_model = _by_dimension(project, period, "conversation__agent_model")
    speed = _review_speed(project, period)
    days = period.days
    charts: dict[str, Any] = {}
    for dimension, title in [
        ("checker", "Flag rate per checker"),
        ("code", "Flag rate per code"),
        ("agent", "Flag rate by agent"),
        ("model", "Flag rate by model"),
    ]:
        charts[f"{dimension}_over_time"] = line_chart(
            f"{title}, per day (turns flagged ÷ turns checked)",
            f"rate-{dimension}",
            days,
            _rate_series(project, period, dimension),
        )
    charts["status"] = status_chart(by_checker)
    charts["precision"] = precision_chart(by_checker)
    charts["agents"] = rate_bars("Most-flagged agents", "agents", by_agent, "Agent")
    charts["models"] = rate_bars("Flag rate by model", "models", by_model, "Model")
    charts["speed"] = bar_chart(
        "Slowest to resolve: median time from a flag to its first decision, per agent",
        "speed",
        [(r["name"], [("median", r["median_hours"] or 0)], hours(r["median_hours"])) for r in speed[:10]],
        table_head=["Agent", "Flags decided", "Median wait", "Oldest open flag"],
        table_rows=[
            [r["name"], str(r["decided"]), hours(r["median_hours"]), hours(r["oldest_open_hours"])]
            for r in speed
        ],
    )
    return Overview(period, summary_figures(project, period), by_checker, by_agent, by_model, speed, charts)


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


# --- the audit report (PDF) ---------------------------------------------------------------

NO_EVIDENCE = "No tool result of the conversation supports this claim."


def _confirmed(project: Project, period: Period | None, conversation: Conversation | None) -> list[Finding]:
    findings = Finding.objects.current().filter(project=project, status=FindingStatus.CONFIRMED)
    if conversation is not None:
        findings = findings.filter(conversation=conversation)
    elif period is not None:
        findings = findings.filter(turn__created_at__gte=period.start, turn__created_at__lt=period.end)
    return list(
        findings.select_related("conversation", "turn")
        .prefetch_related("decisions__reviewer", "corrections__author", "corrections__approver")
        .order_by("conversation__external_id", "turn__index", "claim_start", "pk")
    )


def _finding_entry(finding: Finding, calls: StoredCalls) -> dict[str, Any]:
    evidence = []
    for item in finding.evidence:
        if not isinstance(item, dict):
            continue
        call = evidence_call(finding, item, calls)
        start, end = item.get("start"), item.get("end")
        text = ""
        if call is not None:
            text = call["result"][start:end] if start is not None and end is not None else call["result"]
        evidence.append(
            {
                "tool": call["tool"] if call else "",
                "call_id": item.get("call_id") or "",
                "path": item.get("path") or "",
                "span": f"{start}–{end}" if start is not None else "",
                "text": text[:1200],
                "cut": len(text) > 1200,
            }
        )
    decisions = list(finding.decisions.all())  # newest first
    decision = next((d for d in decisions if d.verdict == "confirmed"), decisions[0] if decisions else None)
    approved = [c for c in finding.corrections.all() if c.state == CorrectionState.APPROVED]
    return {
        "finding": finding,
        "evidence": evidence,
        "decision": decision,
        "correction": max(approved, key=lambda c: c.decided_at or c.created_at) if approved else None,
    }


def report_context(
    project: Project,
    *,
    period: Period | None = None,
    conversation: Conversation | None = None,
    prepared_by: str = "",
) -> dict[str, Any]:
    findings = _confirmed(project, period, conversation)
    calls = stored_calls(findings)
    figures = summary_figures(project, None if conversation else period, conversation)
    charts: list[Any] = []
    if conversation is None and period is not None:
        over = overview(project, period)
        charts = [
            over.charts["checker_over_time"],
            over.charts["agents"],
            over.charts["status"],
            over.charts["precision"],
        ]
    else:
        scope_flags = _flags(project, None).filter(conversation=conversation)
        rows = _status_rows(scope_flags)
        charts = [status_chart(rows)]
    chain = audit.verify(project)
    generated_at = timezone.now()
    scope = f"Conversation {conversation.external_id}" if conversation else f"Period {period}"
    digest_source = "|".join(
        [project.slug, scope, generated_at.isoformat(), str(figures), *(str(f.pk) for f in findings)]
    )
    return {
        "project": project,
        "conversation": conversation,
        "period": period,
        "scope": scope,
        "figures": figures,
        "charts": charts,
        "entries": [_finding_entry(f, calls) for f in findings],
        "chain": chain,
        "generated_at": generated_at,
        "prepared_by": prepared_by,
        "reference": "RCPT-" + hashlib.sha256(digest_source.encode()).hexdigest()[:12].upper(),
        "no_evidence": NO_EVIDENCE,
    }


def _status_rows(flags: QuerySet[Finding]) -> list[dict[str, Any]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(FindingStatus.values, 0))
    for checker, status, n in flags.values_list("checker", "status").annotate(n=Count("id")).order_by():
        counts[checker][status] = n
    rows = []
    for checker in sorted(counts):
        c = counts[checker]
        decided = c["confirmed"] + c["dismissed"]
        rows.append(
            {
                "checker": checker,
                **c,
                "decided": decided,
                "total": decided + c["open"],
                "precision": c["confirmed"] / decided if decided else None,
            }
        )
    return rows


def render_report_html(context: dict[str, Any]) -> str:
    return render_to_string("reports/audit.html", context)


def render_pdf(
    project: Project,
    *,
    period: Period | None = None,
    conversation: Conversation | None = None,
    prepared_by: str = "",
) -> bytes:
    from weasyprint import HTML

    context = report_context(project, period=period, conversation=conversation, prepared_by=prepared_by)
    return HTML(string=render_report_html(context)).write_pdf()


def render_pdf_for_filters(project: Project, filters: dict[str, Any]) -> bytes:
    """The report a background job was asked for (its filters as the page sent them)."""
    conversation = None
    if filters.get("conversation"):
        conversation = Conversation.objects.get(project=project, pk=int(filters["conversation"]))
    period = None if conversation else period_from(filters)
    return render_pdf(project, period=period, conversation=conversation, prepared_by=filters.get("_by", ""))
