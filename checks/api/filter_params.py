"""The finding filter's query parameters as the OpenAPI schema documents them: one entry for
each name the filter reads (``filters.PARAMS``), so every endpoint that takes the queue's
filters documents all of them, a filter added later included."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter

from ..filters import PARAMS

DESCRIPTIONS = {
    "status": "open, confirmed, dismissed, or all (the default).",
    "severity": "flag, info, or all (the default).",
    "checker": "A checker's name.",
    "code": "A finding code.",
    "agent": "The agent of the finding's conversation.",
    "model": "The model of the finding's conversation.",
    "assignee": "`none` (nobody) or a member's username. (`mine` needs a signed-in member.)",
    "since": "The first day a finding was raised, YYYY-MM-DD, included (alias `from`).",
    "until": "The last day a finding was raised, YYYY-MM-DD, included (alias `to`).",
    "q": "Words of the answer, each the start of a word in it.",
    "conversation": "A conversation's external id, or its number (as in its page's address).",
    "disputed": "`yes`: the findings whose reviewers disagree, until a third reviewer settles them.",
}
FILTERS = [
    OpenApiParameter(name, str, description=DESCRIPTIONS.get(name, "One of the queue's filters."))
    for name in PARAMS
]
