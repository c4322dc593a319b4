"""A project's overview: its figures and charts for a period, and the audit report as a PDF
(each download of which is itself in the audit log)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from .. import audit
from ..models import Conversation
from ..reporting import figures, pdf
from .access import project_for


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    context = {"project": project, "membership": membership, "error": "", "data": None}
    try:
        period = figures.period_from(request.GET)
    except figures.InvalidPeriod as exc:
        context["error"] = str(exc)
        return render(request, "checks/overview.html", context, status=400)
    context["period"] = period
    context["data"] = figures.overview(project, period)
    return render(request, "checks/overview.html", context)


def _pdf(data: bytes, filename: str) -> HttpResponse:
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    return response


@login_required
def project_report(request: HttpRequest, slug: str) -> HttpResponse:
    """The audit report of the project for a period, as a PDF."""
    project, _ = project_for(request, slug)
    try:
        period = figures.period_from(request.GET)
    except figures.InvalidPeriod as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    data = pdf.render_pdf(project, period=period, prepared_by=request.user.get_username())
    audit.record(
        project=project,
        actor=request.user,
        verb="report.downloaded",
        target=project,
        after={"since": period.since.isoformat(), "until": period.until.isoformat()},
    )
    return _pdf(data, f"{project.slug}-audit-{period.since:%Y%m%d}-{period.until:%Y%m%d}.pdf")


@login_required
def conversation_report(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """The audit report of one conversation, as a PDF."""
    project, _ = project_for(request, slug)
    conversation = get_object_or_404(Conversation.objects.filter(project=project), pk=pk)
    data = pdf.render_pdf(project, conversation=conversation, prepared_by=request.user.get_username())
    audit.record(project=project, actor=request.user, verb="report.downloaded", target=conversation)
    return _pdf(data, f"{project.slug}-audit-conversation-{conversation.pk}.pdf")
