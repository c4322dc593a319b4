"""A project's figures at a glance over a period: flag rates, review status, review speed."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import Count, Exists, OuterRef, QuerySet
from django.utils import timezone

from .. import review
from ..filters import FindingFilter, InvalidFilter, read_date
from ..models import (
    Conversation,
    Correction,
    CorrectionState,
    Finding,
    FindingStatus,
    Project,
    Severity,
    Turn,
)
from ..models_daily import FigureKind
from . import daily
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
    rollup: daily.Rollup, dimension: str, limit: int = TOP_SERIES
) -> dict[str, dict[date, tuple[int, int]]]:
    """Per value of ``dimension`` (checker, code, agent or model) and per day: (turns flagged,
    turns checked), for the ``limit`` values with the most. Checker and code rates are over
    all turns of the day; an agent's or a model's over its own turns."""
    turns_by_day: dict[date, int] = defaultdict(int)
    for r in rollup.of(FigureKind.TURNS):
        turns_by_day[r.day] += r.turns
    out: dict[str, dict[date, tuple[int, int]]] = defaultdict(dict)
    totals: dict[str, int] = defaultdict(int)
    if dimension in ("checker", "code"):
        rows = rollup.of(FigureKind.CHECKER if dimension == "checker" else FigureKind.CODE)
        for r in rows:
            totals[r.name] += r.flagged
        keep = sorted(totals, key=lambda k: (-totals[k], k))[:limit]
        for r in rows:
            if r.name in keep:
                out[r.name][r.day] = (r.flagged, turns_by_day.get(r.day, 0))
        for name in keep:
            for day, of in turns_by_day.items():
                out[name].setdefault(day, (0, of))
        return {name: out[name] for name in keep}
    column = {"agent": "agent_name", "model": "agent_model"}[dimension]
    counts: dict[tuple[str, date], list[int]] = defaultdict(lambda: [0, 0])
    for r in rollup.of(FigureKind.TURNS):
        name = _agent(getattr(r, column))
        totals[name] += r.turns
        counts[name, r.day][0] += r.flagged
        counts[name, r.day][1] += r.turns
    keep = sorted(totals, key=lambda k: (-totals[k], k))[:limit]
    for (name, day), (f, n) in counts.items():
        if name in keep:
            out[name][day] = (f, n)
    return {name: dict(sorted(out[name].items())) for name in keep}


def _by_dimension(rollup: daily.Rollup, column: str) -> list[dict[str, Any]]:
    """Turns, flagged turns and their rate per agent (``agent_name``) or model (``agent_model``)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rollup.of(FigureKind.TURNS):
        counts[getattr(r, column)][0] += r.turns
        counts[getattr(r, column)][1] += r.flagged
    out = [
        {"name": _agent(name), "turns": n, "flagged": f, "rate": f / n if n else None}
        for name, (n, f) in counts.items()
    ]
    return sorted(out, key=lambda r: (-(r["rate"] or 0), -r["turns"], r["name"]))


def _status_by_checker(rollup: daily.Rollup) -> list[dict[str, Any]]:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rollup.of(FigureKind.FLAGS):
        counts[r.name][r.status] += r.findings
    return [
        _status_row(checker, c[FindingStatus.OPEN], c[FindingStatus.CONFIRMED], c[FindingStatus.DISMISSED])
        for checker, c in sorted(counts.items())
    ]


def _status_row(checker: str, open_: int, confirmed: int, dismissed: int) -> dict[str, Any]:
    return {
        "checker": checker,
        "open": open_,
        "confirmed": confirmed,
        "dismissed": dismissed,
        "decided": confirmed + dismissed,
        "total": open_ + confirmed + dismissed,
        "precision": review.precision_of(confirmed, dismissed),
    }


def _review_speed(rollup: daily.Rollup) -> list[dict[str, Any]]:
    """Per agent: how long its flags wait for a first decision, and the oldest still open."""
    waits: dict[str, list[float]] = defaultdict(list)
    oldest_open: dict[str, datetime] = {}
    for r in rollup.of(FigureKind.WAITS):
        name = _agent(r.agent_name)
        waits[name].extend(r.waits)
        if r.oldest_open is not None:
            oldest_open[name] = min(oldest_open.get(name, r.oldest_open), r.oldest_open)
    now = timezone.now()
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
    project: Project,
    period: Period | None,
    conversation: Conversation | None = None,
    rollup: daily.Rollup | None = None,
) -> dict[str, Any]:
    """The headline figures of the project over the period (from the figures kept per day),
    of one conversation, or of all time (both counted from the rows)."""
    if period is not None and conversation is None:
        rollup = rollup or daily.read(project, period.since, period.until)
        status: Counter[str] = Counter()
        for r in rollup.of(FigureKind.FLAGS):
            status[r.status] += r.findings
        turns = rollup.of(FigureKind.TURNS)
        start, end = daily.day_bounds(period.since, period.until)
        return _summary(
            conversations=len({pk for r in rollup.of(FigureKind.CONVERSATIONS) for pk in r.conversation_ids}),
            turns=sum(r.turns for r in turns),
            flagged=sum(r.flagged for r in turns),
            status=status,
            # Approved corrections are few: read from them outward, not from the period's flags.
            approved=Correction.objects.filter(
                project=project,
                state=CorrectionState.APPROVED,
                finding__withdrawn_at__isnull=True,
                finding__severity=Severity.FLAG,
                finding__turn__created_at__gte=start,
                finding__turn__created_at__lt=end,
            ).count(),
        )
    turn_rows = _turns(project, period)
    flags = flags_of(project, period, conversation)
    if conversation is not None:
        turn_rows = turn_rows.filter(conversation=conversation)
    current_flag = Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))
    return _summary(
        conversations=turn_rows.values("conversation").distinct().count(),
        turns=turn_rows.count(),
        flagged=turn_rows.filter(current_flag).count(),
        status=Counter(
            dict(flags.values_list("status").annotate(n=Count("id")).values_list("status", "n").order_by())
        ),
        approved=Correction.objects.filter(finding__in=flags, state=CorrectionState.APPROVED).count(),
    )


def _summary(
    *, conversations: int, turns: int, flagged: int, status: Counter[str], approved: int
) -> dict[str, Any]:
    confirmed, dismissed = status[FindingStatus.CONFIRMED], status[FindingStatus.DISMISSED]
    precision = review.precision_of(confirmed, dismissed)
    rate = flagged / turns if turns else None
    return {
        "conversations": conversations,
        "turns": turns,
        "flagged_turns": flagged,
        "flag_rate": rate,
        "flag_rate_text": percent(rate),
        "flags": sum(status.values()),
        "open": status[FindingStatus.OPEN],
        "confirmed": confirmed,
        "dismissed": dismissed,
        "precision": precision,
        "precision_text": percent(precision),
        "approved_corrections": approved,
    }


def overview(project: Project, period: Period) -> Overview:
    """The overview of a period, read from the figures kept per day (counted again first for
    any day something changed since)."""
    rollup = daily.read(project, period.since, period.until)
    by_checker = _status_by_checker(rollup)
    by_agent = _by_dimension(rollup, "agent_name")
    by_model = _by_dimension(rollup, "agent_model")
    speed = _review_speed(rollup)
    days = period.days
    charts: dict[str, Any] = {}
    for dimension, title in [
        ("checker", "Flag rate per checker"),
        ("code", "Flag rate per code"),
        ("agent", "Flag rate by agent"),
        ("model", "Flag rate by model"),
    ]:
        charts[f"{dimension}_over_time"] = line_chart(
            f"{title} (turns flagged ÷ turns checked)",
            f"rate-{dimension}",
            days,
            _rate_series(rollup, dimension),
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
    figures = summary_figures(project, period, rollup=rollup)
    return Overview(period, figures, by_checker, by_agent, by_model, speed, charts)


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
