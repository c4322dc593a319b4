"""A project's refusals: what each API key sent that gave no conversation, and why.

Every member may read it (an integrator whose traces are missing is not always an admin);
outsiders get 404, as on every project page. The reason is the one the sender was given;
the shape says what the payload looked like (content type, keys, span and attribute
names), never what it held."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from ..models import ApiKey, Refusal
from .access import project_for


@login_required
def refusals(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    rows = list(
        Refusal.objects.filter(project=project).select_related("api_key").order_by("-created_at", "-id")
    )
    # A project keeps a bounded number (RECEIPTS_REFUSALS_KEPT), so grouping here is cheap.
    by_key: dict[int | None, list[Refusal]] = {}
    for row in rows:
        by_key.setdefault(row.api_key_id, []).append(row)
    keys = {key.pk: key for key in ApiKey.objects.filter(project=project, pk__in=[k for k in by_key if k])}
    groups: list[dict[str, Any]] = [
        {"key": keys.get(key_id) if key_id else None, "refusals": [_shown(r) for r in found]}
        for key_id, found in by_key.items()
    ]
    context = {"project": project, "membership": membership, "groups": groups, "count": len(rows)}
    return render(request, "checks/refusals.html", context)


def _shown(refusal: Refusal) -> dict[str, Any]:
    """A refusal with its shape as (name, text) pairs, lists joined: what the page shows."""
    shape = refusal.shape if isinstance(refusal.shape, dict) else {}
    fields = [
        (str(name).replace("_", " "), ", ".join(map(str, value)) if isinstance(value, list) else str(value))
        for name, value in shape.items()
        if value not in ("", None, [])
    ]
    return {"refusal": refusal, "shape": fields}
