"""The overview's figures kept per day, and the days whose figures must be counted again.

Every path that changes what the overview counts (findings written or withdrawn by a check
run, a decision, its undo) marks the (project, day) it touched with one cheap upsert into
``DirtyDay``; ``checks.reporting.daily`` counts those days again from the findings before
the overview reads ``DailyFigure``. A day is the local date of the turn's arrival, as the
overview's period counts it (``figures.Period.findings``).

Imported by ``checks.models`` (its last line) so Django finds the models; this module
imports nothing of ``checks.models``, so there is no circle.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from django.db import models
from django.db.models import QuerySet
from django.utils import timezone


class FigureKind(models.TextChoices):
    """What one row of a day's figures counts, and over which of its columns."""

    TURNS = "turns", "Turns and flagged turns, per agent and model"
    FLAGS = "flags", "Current flags, per checker and status"
    CHECKER = "checker", "Turns flagged by a checker"
    CODE = "code", "Turns flagged with a code"
    WAITS = "waits", "Flags' waits for a first decision, and the oldest undecided, per agent"
    CONVERSATIONS = "convs", "The conversations with a turn that day"


class DailyFigure(models.Model):
    project = models.ForeignKey("checks.Project", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    kind = models.CharField(max_length=10, choices=FigureKind.choices)
    agent_name = models.CharField(max_length=200, blank=True)
    agent_model = models.CharField(max_length=200, blank=True)
    name = models.CharField(max_length=50, blank=True)  # the checker or the code
    status = models.CharField(max_length=10, blank=True)
    turns = models.IntegerField(default=0)
    flagged = models.IntegerField(default=0)  # turns with at least one current flag
    findings = models.IntegerField(default=0)
    # WAITS: hours from each decided flag to its first decision (a median is not a sum, so
    # the waits themselves are kept: people decide, so they are few), and the oldest flag
    # still open and undecided.
    waits = models.JSONField(default=list, blank=True)
    oldest_open = models.DateTimeField(null=True, blank=True)
    # CONVERSATIONS: their ids, as a conversation may have turns on several days and a period
    # counts it once (a few hundred a day; a year's ids are still read in milliseconds).
    conversation_ids = models.JSONField(default=list, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "day"], name="daily_figure_project_day")]

    def __str__(self) -> str:
        return f"{self.day} {self.kind} {self.agent_name or self.name}"


class DirtyDay(models.Model):
    """A (project, day) whose figures no longer match its findings."""

    project = models.ForeignKey("checks.Project", on_delete=models.CASCADE, related_name="+")
    day = models.DateField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "day"], name="one_dirty_day")]

    def __str__(self) -> str:
        return f"{self.project_id} {self.day}"


def day_of(moment: datetime) -> date:
    """The day a turn that arrived at ``moment`` counts on: its local date."""
    return timezone.localtime(moment).date()


def mark_days(project_id: int, days: Iterable[date]) -> None:
    """Marks the project's ``days`` to be counted again; one statement, never a conflict."""
    rows = [DirtyDay(project_id=project_id, day=day) for day in sorted(set(days))]
    if rows:
        DirtyDay.objects.bulk_create(rows, ignore_conflicts=True)


def mark_turns(project_id: int, turns: Iterable[Any]) -> None:
    """Marks the days of these turns (anything with a ``created_at``)."""
    mark_days(project_id, (day_of(turn.created_at) for turn in turns))


def mark_findings(findings: QuerySet[Any]) -> None:
    """Marks the days of the turns of these findings (a queryset of findings)."""
    by_project: dict[int, set[date]] = {}
    for project_id, arrived in findings.order_by().values_list("project_id", "turn__created_at").distinct():
        by_project.setdefault(project_id, set()).add(day_of(arrived))
    for project_id, days in by_project.items():
        mark_days(project_id, days)
