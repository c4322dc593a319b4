"""A project's checker options (CONTRACT.md §3), edited as JSON by its admins, and its judge
key, which they can set or clear but never read back."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from .. import administration, checking
from ..models import Finding, Project
from .access import project_for, require_admin

EXAMPLE = {
    "evidence": {"min_digits": 4, "figures": True, "posture": "assist", "exempt": ["0x650000"]},
    "arguments": {"arguments_from": {"backup_status": ["fleet_report"]}},
    "negative_claims": {"unestablished": "fallback"},
}


JUDGE_KEY_CLEARED = (
    "The judge URL changed, so the project's judge key was cleared: it was entered for the judge "
    "before. Enter the key for the new judge under Judge key."
)


@login_required
def project_settings(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    require_admin(membership, "change its checker options")
    text = json.dumps(project.options, indent=2)
    error = ""
    status = 200
    if request.method == "POST" and request.POST.get("form") == "judge_key":
        return _judge_key(request, project)
    if request.method == "POST":
        text = request.POST.get("options", "")
        try:
            options = administration.options_from_text(text)
            saved = administration.update_project_options(project=project, user=request.user, options=options)
        except administration.InvalidOptions as exc:
            error, status = str(exc), 400
        else:
            if request.POST.get("recheck"):
                count = checking.recheck_project(project=project)
                messages.success(request, f"Options saved; {count} conversations queued for a new check.")
            else:
                messages.success(request, "Options saved; they apply to the next check of each conversation.")
            if saved.judge_key_cleared:
                messages.warning(request, JUDGE_KEY_CLEARED)
            return redirect("project-settings", project.slug)
    context = {
        "project": project,
        "membership": membership,
        "options_text": text,
        "error": error,
        "example": json.dumps(EXAMPLE, indent=2),
        # Whether a key is set, never the key: the field is write-only.
        "judge_key_set": bool(project.judge_api_key),
        "unjudged": _unjudged(project),
    }
    return render(request, "checks/project_settings.html", context, status=status)


# Conversations whose judge questions went unasked are counted up to this many.
UNJUDGED_CAP = 1_000


def _unjudged(project: Project) -> dict[str, Any] | None:
    """Why the judge model last left questions unanswered, and on how many conversations:
    the suite reports it on each conversation it checks (judge_unavailable), and this page,
    where the judge is set up, is where it is said, once for the project."""
    findings = Finding.objects.current().filter(project=project, code="judge_unavailable")
    latest = findings.order_by("-id").only("explanation", "created_at", "conversation_id").first()
    if latest is None:
        return None
    count = findings.order_by()[: UNJUDGED_CAP + 1].count()
    return {
        "latest": latest,
        "count": f"{UNJUDGED_CAP:,}+" if count > UNJUDGED_CAP else f"{count:,}",
        "n": count,
        "explanation": latest.explanation.removeprefix("Not judged: "),
    }


def _judge_key(request: HttpRequest, project: Project) -> HttpResponse:
    """Sets or clears the project's judge key; the page shows only whether one is set."""
    key = "" if request.POST.get("clear") else request.POST.get("judge_key", "")
    if not key.strip() and not request.POST.get("clear"):
        messages.error(request, "judge key: type the key to set, or tick the box to clear it.")
        return redirect("project-settings", project.slug)
    try:
        administration.set_judge_key(project=project, actor=request.user, key=key)
    except administration.AdminError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Judge key saved." if key.strip() else "Judge key cleared.")
    return redirect("project-settings", project.slug)
