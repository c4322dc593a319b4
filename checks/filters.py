"""The finding filter: which findings a page, an export, a report, a bulk action or the API
selects. Every one of them reads the same names from its query string or form:

    status        open, confirmed, dismissed, or all (``any`` says the same)
    severity      flag, info, or all (``any``)
    checker       a checker's name
    code          a finding's code
    agent         the agent of the finding's conversation
    model         the model of the finding's conversation
    assignee      ``mine``, ``none`` (nobody), or a member's username
    since, until  the first and last day a finding was raised, as YYYY-MM-DD, both included
    q             words of the answer, each the start of a word in it
    conversation  a conversation's external id, or its number (as in its page's address)
    disputed      ``yes``: findings whose reviewers disagree, split evenly, until a third
                  reviewer's decision settles them (whatever their status)

``from`` and ``to`` are read as ``since`` and ``until``: the queue wrote them once, and saved
views and bookmarks that carry them select what they always did.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.utils import timezone

from . import search
from .models import Conversation, Decision, Finding, FindingStatus, Project, Severity, Verdict

# In the order a query string is written.
PARAMS = (
    "status",
    "severity",
    "checker",
    "code",
    "agent",
    "model",
    "assignee",
    "since",
    "until",
    "q",
    "conversation",
    "disputed",
)
# The names the dates were once given, still read.
ALIASES = {"since": "from", "until": "to"}
ALL = "all"
CHOICES = {"status": tuple(FindingStatus.values), "severity": tuple(Severity.values)}
YES = "yes"
MAX_LENGTH = 200


class InvalidFilter(ValueError):
    """A filter value that cannot be read; the message names the field and what it accepts."""

    def __init__(self, field: str, fix: str) -> None:
        super().__init__(f"{field}: {fix}")
        self.field, self.fix = field, fix


def _given(data: Any, name: str) -> tuple[str, str]:
    """The name a value was given under (the filter's own, else its older alias) and the value."""
    for key in (name, ALIASES.get(name)):
        if key is not None:
            value = str(data.get(key, "") or "").strip()[:MAX_LENGTH]
            if value:
                return key, value
    return name, ""


def _checked(name: str, key: str, value: str) -> str:
    """The value as the filter keeps it; InvalidFilter (naming ``key``) when it cannot be read."""
    if "\x00" in value:
        # No stored value holds U+0000, and PostgreSQL can neither compare with it nor keep it.
        raise InvalidFilter(key, "remove the U+0000 character from it.")
    if name in CHOICES:
        if value in (ALL, "any"):
            return ALL
        if value not in CHOICES[name]:
            raise InvalidFilter(key, f"use one of {', '.join(CHOICES[name])}, or leave it empty for all.")
        return value
    if name in ALIASES:
        try:
            day = date.fromisoformat(value)
        except ValueError:
            raise InvalidFilter(key, "use a date as YYYY-MM-DD, such as 2026-11-30.") from None
        # A day's bounds are computed as datetimes in the site's time zone: the first and last
        # days Python can hold have no room on one side of them.
        if not FIRST_DAY <= day <= LAST_DAY:
            raise InvalidFilter(key, f"use a date from {FIRST_DAY} to {LAST_DAY}.")
        return day.isoformat()
    if name == "disputed":
        if value != YES:
            raise InvalidFilter(
                key, "use yes for the findings reviewers disagree on, or leave it empty for all."
            )
        return value
    return value


def conversations_named(project: Project, value: str) -> QuerySet[Conversation]:
    """The project's conversation a filter names: by its external id (what the runtime sent
    and every page shows), or by its number, as in its page's address."""
    match = Q(external_id=value)
    if is_row_id(value):
        match |= Q(pk=int(value))
    return Conversation.objects.filter(project=project).filter(match)


def is_row_id(value: str) -> bool:
    """Whether ``value`` can be a row's id: ASCII digits ("²" passes str.isdigit) that fit
    the 64-bit integer every database here stores ids in."""
    return value.isascii() and value.isdigit() and int(value) < 2**63


FIRST_DAY = date(1900, 1, 1)
LAST_DAY = date(9998, 12, 31)


def read_date(data: Any, name: str) -> date | None:
    """One date of a query string (``since`` or ``until``, or its alias), or None when absent."""
    key, value = _given(data, name)
    return date.fromisoformat(_checked(name, key, value)) if value else None


def _day_start(day: str) -> datetime:
    return timezone.make_aware(datetime.combine(date.fromisoformat(day), time.min))


@dataclass(frozen=True)
class FindingFilter:
    """What a page selects of a project's current findings; an empty value selects all."""

    status: str = ALL
    severity: str = ALL
    checker: str = ""
    code: str = ""
    agent: str = ""
    model: str = ""
    assignee: str = ""
    since: str = ""  # YYYY-MM-DD, inclusive
    until: str = ""  # YYYY-MM-DD, inclusive
    q: str = ""
    conversation: str = ""  # a conversation's external id, or its number
    disputed: str = ""  # "yes", or empty for all

    @classmethod
    def parse(cls, data: Any, *, defaults: FindingFilter | None = None, strict: bool = True) -> FindingFilter:
        """The filter a query string or form (or a dict of them) asks for; what it leaves out
        keeps its value in ``defaults``. A value that cannot be read raises InvalidFilter, or
        with ``strict=False`` keeps its default (the queue falls back rather than refuse)."""
        values = {}
        for name in PARAMS:
            key, value = _given(data, name)
            if not value:
                continue
            try:
                values[name] = _checked(name, key, value)
            except InvalidFilter:
                if strict:
                    raise
        return replace(defaults or cls(), **values)

    def params(self, defaults: FindingFilter | None = None) -> list[tuple[str, str]]:
        """(name, value) of each filter that differs from ``defaults`` (by default, from the
        filter that selects everything), in the order of PARAMS."""
        base = defaults or EVERYTHING
        return [(name, getattr(self, name)) for name in PARAMS if getattr(self, name) != getattr(base, name)]

    def query(self, defaults: FindingFilter | None = None) -> str:
        """The filter as a query string, leaving out what is at its default."""
        return urlencode(self.params(defaults))

    def as_dict(self) -> dict[str, str]:
        """The filters set, to keep (an export job stores them) and read back with parse."""
        return dict(self.params())

    def findings(self, project: Project, *, user: Any = None, turn_dates: bool = False) -> QuerySet[Finding]:
        """The current findings of the project that the filter selects. ``assignee=mine`` means
        ``user`` (nothing without one). The dates select findings by when they were raised,
        which is when their turn arrived or when a newer suite first reported them: the
        finding's own indexes answer it, where the turn's time needs a join. ``turn_dates``
        selects by the turn's arrival instead, as the overview's rates count turns."""
        findings = Finding.objects.current().filter(project=project)
        if self.severity != ALL:
            findings = findings.filter(severity=self.severity)
        if self.status != ALL:
            findings = findings.filter(status=self.status)
        if self.checker:
            findings = findings.filter(checker=self.checker)
        if self.code:
            findings = findings.filter(code=self.code)
        if self.conversation:
            findings = findings.filter(
                conversation_id__in=conversations_named(project, self.conversation).values("id")
            )
        if self.agent or self.model:
            # The project's conversations of that agent or model first, then their findings: a
            # join would read each finding's conversation, one row at a time.
            conversations = Conversation.objects.filter(project=project)
            if self.agent:
                conversations = conversations.filter(agent_name=self.agent)
            if self.model:
                conversations = conversations.filter(agent_model=self.model)
            findings = findings.filter(conversation_id__in=conversations.values("id"))
        if self.assignee == "mine":
            user_id = getattr(user, "pk", None)
            findings = findings.filter(assignee_id=user_id) if user_id is not None else findings.none()
        elif self.assignee == "none":
            findings = findings.filter(assignee__isnull=True)
        elif self.assignee:
            findings = findings.filter(assignee__username=self.assignee)
        field = "turn__created_at" if turn_dates else "created_at"
        if self.since:
            findings = findings.filter(**{f"{field}__gte": _day_start(self.since)})
        if self.until:
            findings = findings.filter(**{f"{field}__lt": _day_start(self.until) + timedelta(days=1)})
        if self.q:
            turn_ids = search.turns_with_words(self.q)
            findings = findings.filter(turn_id__in=turn_ids) if turn_ids is not None else findings.none()
        if self.disputed:
            findings = findings.filter(pk__in=disputed_findings(project))
        return findings


def disputed_findings(project: Project) -> QuerySet[Any, Any]:
    """The ids of the project's findings whose reviewers disagree with no majority: as many
    latest verdicts confirm as dismiss. A third reviewer's decision tips it, which settles it.

    Read from the decisions alone (one grouped query over the project's decisions, which
    people make, so far fewer than findings), each reviewer counted by their latest verdict."""
    later = Decision.objects.filter(
        finding=OuterRef("finding"), reviewer=OuterRef("reviewer"), id__gt=OuterRef("id")
    )
    return (
        Decision.objects.filter(project=project)
        .exclude(Exists(later))
        .order_by()
        .values("finding")
        .annotate(
            confirmed=Count("id", filter=Q(verdict=Verdict.CONFIRMED)),
            dismissed=Count("id", filter=Q(verdict=Verdict.DISMISSED)),
        )
        .filter(confirmed__gt=0, confirmed=F("dismissed"))
        .values("finding")
    )


EVERYTHING = FindingFilter()
