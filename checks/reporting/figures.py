"""A project's figures at a glance over a period: flag rates, review status, review speed."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from .. import review
from ..filters import FindingFilter, InvalidFilter, read_date
from ..models import (
    Conversation,
    Correction,
    CorrectionState,
    Decision,
    Finding,
    FindingStatus,
    Project,
    Severity,
    Turn,
)
from .charts import bar_chart, hours, line_chart, percent, precision_chart, rate_bars, status_chart

DEFAULT_DAYS = 30


MAX_DAYS = 366


TOP_SERIES = 6


UNNAMED = "(unnamed)"


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

    def findings(self, project: Project, **values: str) -> QuerySet[Finding]:
        """The current findings the filter ``values`` select of the turns that arrived in the
        period: the figures count turns, so a finding counts on its turn's day."""
        selection = FindingFilter(since=self.since.isoformat(), until=self.until.isoformat(), **values)
        return selection.findings(project, turn_dates=True)


class InvalidPeriod(InvalidFilter):
    pass


def period_from(data: Any) -> Period:
    """The period a query string asks for: ``since`` and ``until`` (YYYY-MM-DD, inclusive, read
    as every finding filter reads them); the last 30 days by default."""
    today = timezone.localdate()
    try:
        asked_since, asked_until = read_date(data, "since"), read_date(data, "until")
    except InvalidFilter as exc:
        raise InvalidPeriod(exc.field, exc.fix) from None
    until = asked_until or today
    since = asked_since or until - timedelta(days=DEFAULT_DAYS - 1)
    if since > until:
        raise InvalidPeriod("since", "must be on or before until.")
    if (until - since).days >= MAX_DAYS:
        raise InvalidPeriod("since", f"a period covers at most {MAX_DAYS} days.")
    return Period(since, until)


def _agent(value: str) -> str:
    return value or UNNAMED


def flags_of(
    project: Project, period: Period | None, conversation: Conversation | None = None
) -> QuerySet[Finding]:
    """The current flags of the project, of the period's turns or the conversation's."""
    values = {"severity": Severity.FLAG.value}
    if conversation is not None:
        values["conversation"] = str(conversation.pk)
    if period is not None:
        return period.findings(project, **values)
    return FindingFilter(**values).findings(project)


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
            flags_of(project, period)
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
    turn_rows = (
        _turns(project, period)
        .annotate(day=TruncDate("created_at"), flagged=flagged)
        .values_list(field_name, "day")
        .annotate(n=Count("id"), f=Count("id", filter=Q(flagged=True)))
    )
    totals = defaultdict(int)
    for name, _, n, _f in turn_rows:
        totals[_agent(name)] += n
    keep = sorted(totals, key=lambda k: (-totals[k], k))[:limit]
    for name, day, n, f in turn_rows:
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
    return status_rows(flags_of(project, period))


def _review_speed(project: Project, period: Period | None) -> list[dict[str, Any]]:
    """Per agent: how long its flags wait for a first decision, and the oldest still open."""
    flags = flags_of(project, period)
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
    flags = flags_of(project, period, conversation)
    if conversation is not None:
        turns = turns.filter(conversation=conversation)
    n_turns = turns.count()
    flagged = turns.filter(Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))).count()
    status = dict(flags.values_list("status").annotate(n=Count("id")).values_list("status", "n").order_by())
    confirmed, dismissed = status.get("confirmed", 0), status.get("dismissed", 0)
    precision = review.precision_of(confirmed, dismissed)
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


def status_rows(flags: QuerySet[Finding]) -> list[dict[str, Any]]:
    """Per checker of the flags, by name: how many are open, confirmed and dismissed, and the
    precision reviewers measured."""
    return [
        {
            "checker": p.checker,
            "open": p.open,
            "confirmed": p.confirmed,
            "dismissed": p.dismissed,
            "decided": p.decided,
            "total": p.total,
            "precision": p.precision,
        }
        for p in sorted(review.precision_counts(flags, by="checker"), key=lambda p: p.checker)
    ]
