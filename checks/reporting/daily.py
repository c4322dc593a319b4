"""Counting a project's day again from its findings, and reading the figures kept per day.

The overview reads a few hundred ``DailyFigure`` rows for a period instead of aggregating
every turn and finding of it. A day is counted again, from that day's turns and flags alone
(their (project, created_at) indexes), when something marked it dirty
(``checks.models_daily``): ``refresh`` does so for the marked days before the overview
reads, the worker's schedule does so for every project (``refresh_marked_days``, every
RECEIPTS_DAILY_FIGURES_SECONDS) so the overview seldom finds a day left to count, and
``rebuild`` counts every day anew (the ``rebuild_daily_figures`` command).

Counting takes the day's mark first, in the transaction that writes its figures: a writer
marking the day meanwhile waits for that transaction and its mark stays for the next
refresh, and a second refresh finds no mark and leaves the day to the first.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta

from celery import shared_task
from django.db import transaction
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet
from django.db.models.functions import TruncDate
from django.utils import timezone

from ..filters import FindingFilter
from ..models import Conversation, Finding, FindingStatus, Project, Severity, Turn
from ..models_daily import DailyFigure, DirtyDay, FigureKind, mark_days

# Conversation ids asked for at once, under SQLite's limit of bound parameters.
ID_BATCH = 900


def day_bounds(since: date, until: date) -> tuple[datetime, datetime]:
    """From the start of ``since`` to the start of the day after ``until``, local time, as
    the overview's period and the finding filter read their dates."""
    start = timezone.make_aware(datetime.combine(since, time.min))
    end = timezone.make_aware(datetime.combine(until + timedelta(days=1), time.min))
    return start, end


def _flags_of_day(project: Project, day: date) -> QuerySet[Finding]:
    """The day's current flags, selected as the overview's period selects them."""
    iso = day.isoformat()
    return FindingFilter(since=iso, until=iso, severity=Severity.FLAG.value).findings(
        project, turn_dates=True
    )


def count_day(project: Project, day: date) -> list[DailyFigure]:
    """The figures of one day of the project, counted from its turns and current flags."""
    start, end = day_bounds(day, day)
    flags = _flags_of_day(project, day).order_by()
    out: list[DailyFigure] = []

    def row(kind: FigureKind, **values: object) -> None:
        out.append(DailyFigure(project=project, day=day, kind=kind, **values))

    # The day's turns per conversation, then those conversations' agents and models: a join
    # would have PostgreSQL read every conversation of the project to group a day's turns.
    flagged = Exists(Finding.objects.current().flags().filter(turn=OuterRef("pk")))
    per_conversation = {
        pk: (n, f)
        for pk, n, f in Turn.objects.filter(project=project, created_at__gte=start, created_at__lt=end)
        .annotate(flagged=flagged)
        .order_by()
        .values_list("conversation_id")
        .annotate(n=Count("id"), f=Count("id", filter=Q(flagged=True)))
    }
    per_agent: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    ids = sorted(per_conversation)
    for chunk in range(0, len(ids), ID_BATCH):
        for pk, agent, model in Conversation.objects.filter(pk__in=ids[chunk : chunk + ID_BATCH]).values_list(
            "pk", "agent_name", "agent_model"
        ):
            per_agent[agent, model][0] += per_conversation[pk][0]
            per_agent[agent, model][1] += per_conversation[pk][1]
    for (agent, model), (n, f) in sorted(per_agent.items()):
        row(FigureKind.TURNS, agent_name=agent, agent_model=model, turns=n, flagged=f)
    row(FigureKind.CONVERSATIONS, conversation_ids=ids)
    # The day's flags in one read (a few thousand rows at most), counted here: one query
    # instead of one per figure, each of which would join the day's turns again.
    by_status: Counter[tuple[str, str]] = Counter()
    turns_of: dict[tuple[FigureKind, str], set[int]] = defaultdict(set)
    waits: dict[str, list[float]] = defaultdict(list)
    oldest: dict[str, datetime] = {}
    for _pk, checker, code, status, turn_id, agent, raised, first in flags.values_list(
        "pk", "checker", "code", "status", "turn_id", "conversation__agent_name", "created_at"
    ).annotate(first=Min("decisions__created_at")):
        by_status[checker, status] += 1
        turns_of[FigureKind.CHECKER, checker].add(turn_id)
        turns_of[FigureKind.CODE, code].add(turn_id)
        if first is not None:
            waits[agent].append((first - raised).total_seconds() / 3600)
        elif status == FindingStatus.OPEN:
            oldest[agent] = min(oldest.get(agent, raised), raised)
    for (checker, status), n in sorted(by_status.items()):
        row(FigureKind.FLAGS, name=checker, status=status, findings=n)
    for (kind, name), turn_ids in sorted(turns_of.items()):
        row(kind, name=name, flagged=len(turn_ids))
    for agent in sorted(set(waits) | set(oldest)):
        row(
            FigureKind.WAITS,
            agent_name=agent,
            findings=len(waits.get(agent, [])),
            waits=sorted(waits.get(agent, [])),
            oldest_open=oldest.get(agent),
        )
    return out


def recount(project: Project, day: date) -> bool:
    """Counts a marked day again; False when it was not marked (or another refresh has it)."""
    with transaction.atomic():
        taken, _ = DirtyDay.objects.filter(project=project, day=day).delete()
        if not taken:
            return False
        DailyFigure.objects.filter(project=project, day=day).delete()
        DailyFigure.objects.bulk_create(count_day(project, day))
    return True


def refresh(project: Project, since: date | None = None, until: date | None = None) -> int:
    """Counts again the project's marked days (those from ``since`` to ``until`` only, when
    given); returns how many."""
    marked = DirtyDay.objects.filter(project=project)
    if since is not None:
        marked = marked.filter(day__gte=since)
    if until is not None:
        marked = marked.filter(day__lte=until)
    return sum(recount(project, day) for day in marked.order_by("day").values_list("day", flat=True))


@shared_task(name="checks.tasks.refresh_daily_figures")
def refresh_marked_days() -> int:
    """Counts again every project's marked days; returns how many. A day a writer marks
    meanwhile keeps its mark for the next run (see ``recount``)."""
    projects = Project.objects.filter(pk__in=DirtyDay.objects.values("project_id")).order_by("pk")
    return sum(refresh(project) for project in projects)


def rebuild(project: Project) -> int:
    """Counts every day of the project anew, from its findings; returns the days counted."""
    days = set(
        Turn.objects.filter(project=project)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values_list("day", flat=True)
        .distinct()
    )
    with transaction.atomic():
        DailyFigure.objects.filter(project=project).delete()
        DirtyDay.objects.filter(project=project).delete()
        mark_days(project.pk, days)
    return refresh(project)


@dataclass
class Rollup:
    """A period's figures kept per day, summed as the overview reads them."""

    rows: list[DailyFigure] = field(default_factory=list)

    def of(self, kind: FigureKind) -> list[DailyFigure]:
        return [r for r in self.rows if r.kind == kind]


def read(project: Project, since: date, until: date) -> Rollup:
    """The figures of the days from ``since`` to ``until``, the marked ones counted first."""
    refresh(project, since, until)
    rows = DailyFigure.objects.filter(project=project, day__gte=since, day__lte=until).order_by("day", "id")
    return Rollup(list(rows))
