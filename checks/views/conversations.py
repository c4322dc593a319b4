"""Every conversation of a project, flagged or not: searchable by external id and by the words
of its answers, filtered by agent, model, the day it arrived and whether it has open flags,
newest first, paged by keyset as the queue is.

The filters read indexed columns only: the conversation's (project, created_at), (project,
agent_name) and (project, agent_model) indexes, the unique (project, external_id), the
answers' full-text index, and the findings' conversation key; a page never counts the
project's conversations, so it costs the same at a thousand as at a million."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from .. import facets, search
from ..filters import InvalidFilter, read_date
from ..models import Conversation, Finding, Turn
from .access import project_for
from .htmx import HtmxHttpRequest

PAGE_SIZE = 50
MAX_SEARCH = 200
FLAGS = {"": "any", "yes": "with open flags", "no": "without open flags"}
# The highest character there is: a prefix's range of external ids ends just below it.
LAST_CHAR = "\U0010ffff"


def text_param(data: Any, name: str, limit: int = MAX_SEARCH) -> str:
    """A text value of the query string, trimmed and cut to ``limit``, without NUL characters:
    no column holds one, and PostgreSQL refuses a query that carries one."""
    return str(data.get(name, "") or "").replace("\x00", "").strip()[:limit]


@dataclass(frozen=True)
class ConversationFilter:
    """What the conversations page selects; an empty value selects all."""

    q: str = ""
    agent: str = ""
    model: str = ""
    since: str = ""  # YYYY-MM-DD: received on or after that day
    until: str = ""  # YYYY-MM-DD: received on or before that day
    flags: str = ""  # "", "yes" or "no"

    @classmethod
    def parse(cls, data: Any) -> ConversationFilter:
        """The filter a query string asks for; InvalidFilter names a value it cannot read."""
        flags = str(data.get("flags", "") or "").strip()
        if flags not in FLAGS:
            raise InvalidFilter("flags", "use yes, no, or leave it empty for any.")
        since, until = read_date(data, "since"), read_date(data, "until")
        return cls(
            q=text_param(data, "q"),
            agent=text_param(data, "agent"),
            model=text_param(data, "model"),
            since=since.isoformat() if since else "",
            until=until.isoformat() if until else "",
            flags=flags,
        )

    def query(self) -> str:
        return urlencode([(f.name, getattr(self, f.name)) for f in fields(self) if getattr(self, f.name)])

    def conversations(self, project: Any) -> QuerySet[Conversation]:
        rows = Conversation.objects.filter(project=project)
        if self.agent:
            rows = rows.filter(agent_name=self.agent)
        if self.model:
            rows = rows.filter(agent_model=self.model)
        if self.since:
            rows = rows.filter(created_at__gte=_day_start(self.since))
        if self.until:
            rows = rows.filter(created_at__lt=_day_start(self.until) + timedelta(days=1))
        if self.flags:
            flagged = Exists(Finding.objects.open().flags().filter(conversation=OuterRef("pk")))
            rows = rows.filter(flagged if self.flags == "yes" else ~flagged)
        if self.q:
            rows = rows.filter(_matching(project, self.q))
        return rows


def _day_start(day: str) -> datetime:
    return timezone.make_aware(datetime.combine(date.fromisoformat(day), time.min))


# A search matching at most this many conversations hands the page their ids, which the
# database looks up by key; one matching more is left as subqueries, and the page walks the
# newest conversations, where that many matches are soon found.
MATCHES_LOOKED_UP = 5_000


def _matching(project: Any, text: str) -> Q:
    """Conversations whose external id starts with ``text`` (as typed: ids are exact), or one
    of whose answers has a word starting with each of its words, each found through its own
    index: the unique (project, external_id) and the answers' full-text index."""
    # A range, not LIKE: the unique index answers a range in every database, where SQLite's
    # LIKE ignores case and so reads every row.
    sides: list[QuerySet[Any, int]] = [
        Conversation.objects.filter(
            project=project, external_id__gte=text, external_id__lt=text + LAST_CHAR
        ).values_list("id", flat=True)
    ]
    turn_ids = search.turns_with_words(text)
    if turn_ids is not None:
        sides.append(
            Turn.objects.filter(project=project, pk__in=turn_ids).values_list("conversation_id", flat=True)
        )
    found: set[int] = set()
    for side in sides:
        ids = list(side.order_by()[: MATCHES_LOOKED_UP + 1])
        found.update(ids)
        if len(ids) > MATCHES_LOOKED_UP or len(found) > MATCHES_LOOKED_UP:
            return _any_of(sides)
    return Q(pk__in=sorted(found))


def _any_of(sides: list[QuerySet[Any, int]]) -> Q:
    match = Q(pk__in=sides[0])
    for side in sides[1:]:
        match |= Q(pk__in=side)
    return match


# What a row shows: the document and the metadata are large JSON the list never reads.
ROW_FIELDS = ["external_id", "title", "agent_name", "agent_model", "started_at", "created_at", "project_id"]


@login_required
def conversations(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    try:
        chosen = ConversationFilter.parse(request.GET)
    except InvalidFilter as exc:
        # The page again, with what to fix and no rows: a list filtered on less than was
        # asked would pass for the answer.
        refused = {
            "project": project,
            "membership": membership,
            "filters": ConversationFilter(),
            "error": exc,
        }
        return render(request, "checks/conversations.html", {**refused, **_choices(project)}, status=400)
    rows = chosen.conversations(project).only(*ROW_FIELDS).order_by("-created_at", "-id")
    cursor = parse_cursor(request.GET.get("after", ""))
    if cursor:
        created_at, pk = cursor
        # As in the queue: the first condition is the one the (project, created_at) index
        # starts from; with the OR alone every newer conversation is read.
        rows = rows.filter(created_at__lte=created_at).filter(
            Q(created_at__lt=created_at) | Q(created_at=created_at, id__lt=pk)
        )
    page = list(rows[: PAGE_SIZE + 1])
    has_more = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    ids = [c.pk for c in page]
    turns = dict(
        Turn.objects.filter(conversation_id__in=ids)
        .order_by()
        .values_list("conversation_id")
        .annotate(n=Count("*"))
        .values_list("conversation_id", "n")
    )
    flags = dict(
        Finding.objects.open()
        .flags()
        .filter(conversation_id__in=ids)
        .order_by()
        .values_list("conversation_id")
        .annotate(n=Count("*"))
        .values_list("conversation_id", "n")
    )
    context: dict[str, Any] = {
        "project": project,
        "membership": membership,
        "filters": chosen,
        "query": chosen.query(),
        "rows": [
            {"conversation": c, "turns": turns.get(c.pk, 0), "open_flags": flags.get(c.pk, 0)} for c in page
        ],
        "next_cursor": cursor_of(page[-1]) if has_more else "",
        **_choices(project),
    }
    template = "checks/conversations.html"
    if request.htmx and not request.htmx.boosted:
        template += "#rows" if request.GET.get("after") else "#results"
    return render(request, template, context)


def _choices(project: Any) -> dict[str, Any]:
    """The values the filter's lists offer, walked along their indexes (facets.py)."""
    return {
        "flag_choices": FLAGS,
        "agents": facets.distinct_values(project.pk, "agent"),
        "models": facets.distinct_values(project.pk, "model"),
    }


# The cursor is the (created_at, id) of the last row shown, written as the queue writes its
# own; one that cannot be read starts from the top.
CURSOR_TIME = "%Y%m%dT%H%M%S%f"


def cursor_of(row: Any) -> str:
    return f"{row.created_at.astimezone(UTC).strftime(CURSOR_TIME)}_{row.pk}"


def parse_cursor(value: str) -> tuple[datetime, int] | None:
    stamp, _, pk = value.partition("_")
    try:
        return datetime.strptime(stamp, CURSOR_TIME).replace(tzinfo=UTC), int(pk)
    except ValueError:
        return None
