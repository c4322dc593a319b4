"""The finding filter's form fields, for any page that asks for a selection of findings
(the queue and the exports page).

``templates/checks/filter_fields.html`` draws a field for each name of WIDGETS; every other
name the finding filter reads (``filters.PARAMS``) gets a plain text field under its own
name, so a filter added to FindingFilter reaches these forms, and what they submit, without
an edit here or in the template.
"""

from __future__ import annotations

from typing import Any

from .. import facets, review, suite
from ..filters import ALL, CHOICES, PARAMS, FindingFilter
from ..models import Project

# The names the template draws with a widget of its own (a list to choose from, a date…).
WIDGETS = (
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
# Each list offers "all" first: the value of a filter that selects everything.
STATUSES = [ALL, *CHOICES["status"]]
SEVERITIES = [ALL, *CHOICES["severity"]]


def other_filters(filters: FindingFilter) -> list[tuple[str, str]]:
    """(name, value) of each filter the template has no widget for, value empty when unset."""
    values = dict(filters.params())
    return [(name, values.get(name, "")) for name in PARAMS if name not in WIDGETS]


def _offered(values: list[str], current: str) -> list[str]:
    """The values a list offers, with the one asked for among them even when the project has
    none of it (yet): a list that lacked it would show "any" and submit a wider selection."""
    return values if not current or current in values else [*values, current]


def filter_fields(
    project: Project, filters: FindingFilter, reviewers: list[Any] | None = None
) -> dict[str, Any]:
    """What the template needs beside ``filters``: the values each list offers. ``reviewers``:
    the project's, when the page has them already (``review.reviewers_of``)."""
    if reviewers is None:
        reviewers = review.reviewers_of(project)
    names = [user.get_username() for user in reviewers]
    special = ("mine", "none")
    return {
        "filters": filters,
        "filter_statuses": STATUSES,
        "filter_severities": SEVERITIES,
        # The checkers are the suite's own; the rest are walked along their indexes.
        "filter_checkers": _offered(suite.checker_names(), filters.checker),
        "filter_codes": _offered(facets.distinct_values(project.pk, "code"), filters.code),
        "filter_agents": _offered(facets.distinct_values(project.pk, "agent"), filters.agent),
        "filter_models": _offered(facets.distinct_values(project.pk, "model"), filters.model),
        "filter_assignees": _offered(names, "" if filters.assignee in special else filters.assignee),
        "filter_others": other_filters(filters),
    }
