"""The finding filter: which findings a page, an export, a report or a bulk action selects."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from .models import (
    Finding,
    FindingStatus,
    Project,
    Severity,
)

FILTER_KEYS = ("checker", "code", "severity", "status", "since", "until", "conversation")


class InvalidFilter(ValueError):
    """A filter value that cannot be read; the message names the field and what it accepts."""


def parse_filters(data: Any) -> dict[str, str]:
    """The filters of a query string or form, checked; unknown keys are ignored."""
    filters = {key: str(data.get(key, "") or "").strip()[:100] for key in FILTER_KEYS}
    if filters["severity"] and filters["severity"] not in Severity.values:
        raise InvalidFilter(f"severity: use one of {', '.join(Severity.values)}, or leave it empty for all.")
    if filters["status"] in ("all", "any"):
        filters["status"] = ""
    if filters["status"] and filters["status"] not in FindingStatus.values:
        raise InvalidFilter(
            f"status: use one of {', '.join(FindingStatus.values)}, or leave it empty for all."
        )
    for key in ("since", "until"):
        if filters[key]:
            try:
                date.fromisoformat(filters[key])
            except ValueError:
                raise InvalidFilter(f"{key}: use a date as YYYY-MM-DD, such as 2026-11-30.") from None
    if filters["conversation"] and not filters["conversation"].isdigit():
        raise InvalidFilter("conversation: use a conversation's number, as in its page's address.")
    return {key: value for key, value in filters.items() if value}


def _day_start(value: str) -> datetime:
    return timezone.make_aware(datetime.combine(date.fromisoformat(value), time.min))


def select_findings(project: Project, filters: dict[str, str]) -> QuerySet[Finding]:
    """The current findings of the project that the filters select (dates are inclusive)."""
    findings = Finding.objects.current().filter(project=project)
    for key in ("checker", "code", "severity", "status"):
        if filters.get(key):
            findings = findings.filter(**{key: filters[key]})
    if filters.get("conversation"):
        findings = findings.filter(conversation_id=int(filters["conversation"]))
    if filters.get("since"):
        findings = findings.filter(created_at__gte=_day_start(filters["since"]))
    if filters.get("until"):
        findings = findings.filter(created_at__lt=_day_start(filters["until"]) + timedelta(days=1))
    return findings
