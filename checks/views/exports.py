"""Exports of a project's findings and corrections: streamed when small, made in the
background with a progress bar when large. Any member may export what they may read; a
background export is its starter's alone, as its file holds what they may read."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from .. import audit
from ..filters import EVERYTHING, FindingFilter, InvalidFilter
from ..models import ExportJob, ExportStatus
from ..reporting import exports, figures, jobs
from .access import project_for
from .filter_form import filter_fields
from .htmx import HtmxHttpRequest


def _base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _page(
    request: HttpRequest, project: Any, membership: Any, filters: FindingFilter = EVERYTHING, **extra: Any
) -> HttpResponse:
    status = extra.pop("status", 200)
    context = {
        "project": project,
        "membership": membership,
        "formats": exports.FORMATS.values(),
        "jobs": jobs.jobs_of(project, request.user)[:20],
        "limit": jobs.inline_limit(),
        "error": "",
        "large": None,
        # The same fields as the queue's filters, every name FindingFilter reads among them.
        **filter_fields(project, filters),
        **extra,
    }
    return render(request, "checks/exports.html", context, status=status)


def _selection(data: Any) -> FindingFilter:
    """The filter a query or form asks for; InvalidFilter names a field it cannot read, or one
    holding U+0000, which no stored value holds and PostgreSQL cannot compare with."""
    for key, value in data.items():
        if "\x00" in key + value:
            raise InvalidFilter(key.replace("\x00", ""), "remove the U+0000 character from it.")
    return FindingFilter.parse(data)


@login_required
def exports_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    try:
        filters = _selection(request.GET)
    except InvalidFilter as exc:
        # The form keeps what could be read, so the one field named can be put right.
        shown = FindingFilter.parse(request.GET, strict=False)
        return _page(request, project, membership, filters=shown, error=str(exc), status=400)
    large = None
    kind = request.GET.get("kind", "")
    if request.GET.get("large") and kind in exports.FORMATS:
        large = {"kind": kind, "count": exports.FORMATS[kind].count(project, filters, request.user)}
    return _page(request, project, membership, filters=filters, large=large)


@login_required
def export_file(request: HttpRequest, slug: str) -> HttpResponse | StreamingHttpResponse:
    """The export the query asks for, streamed; over the inline limit, the page offers to make
    it in the background instead."""
    project, membership = project_for(request, slug)
    kind = request.GET.get("kind", "csv")
    if kind not in exports.FORMATS:
        return HttpResponse(
            f"kind: use one of {', '.join(exports.FORMATS)}", status=400, content_type="text/plain"
        )
    try:
        filters = _selection(request.GET)
    except InvalidFilter as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    fmt = exports.FORMATS[kind]
    if fmt.count(project, filters, request.user) > jobs.inline_limit():
        query = urlencode([*filters.params(), ("kind", kind), ("large", 1)])
        return redirect(f"{reverse('exports', args=[project.slug])}?{query}")
    # Data leaving the site is audited: who took which findings out, and when.
    audit.record(
        project=project,
        actor=request.user,
        verb="export.downloaded",
        target=project,
        after={"kind": kind, "query": request.GET.urlencode()},
    )
    response = StreamingHttpResponse(
        fmt.write(project, filters, request.user, _base_url(request), lambda n: None),
        content_type=fmt.content_type,
    )
    response["Content-Disposition"] = f'attachment; filename="{exports.filename_for(project, kind)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_POST
def start_export(request: HttpRequest, slug: str) -> HttpResponse:
    project, membership = project_for(request, slug)
    kind = request.POST.get("kind", "")
    if kind not in exports.FORMATS and kind != "pdf":
        return _page(
            request, project, membership, error="kind: choose one of the listed exports.", status=400
        )
    try:
        filters: dict[str, Any] = _selection(request.POST).as_dict()
        if kind == "pdf":
            figures.period_from(request.POST)
    except InvalidFilter as exc:
        shown = FindingFilter.parse(request.POST, strict=False)
        return _page(request, project, membership, filters=shown, error=str(exc), status=400)
    filters["_base_url"] = _base_url(request)
    filters["_by"] = request.user.get_username()
    job = jobs.start_job(project=project, user=request.user, kind=kind, filters=filters)
    return redirect("export-job", project.slug, job.pk)


@login_required
def export_job(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """A background export's progress; polled by htmx until it is finished (286 stops it)."""
    project, membership = project_for(request, slug)
    job = get_object_or_404(jobs.jobs_of(project, request.user), pk=pk)
    context = {"project": project, "membership": membership, "job": job, "percent": _percent(job)}
    if request.htmx:
        response = render(request, "checks/export_job.html#progress", context)
        if job.status in (ExportStatus.DONE, ExportStatus.FAILED):
            response.status_code = 286
        return response
    return render(request, "checks/export_job.html", context)


def _percent(job: ExportJob) -> int:
    if job.status == ExportStatus.DONE:
        return 100
    return min(100, int(100 * job.progress / job.total)) if job.total else 0


@login_required
def export_job_file(request: HttpRequest, slug: str, pk: int) -> FileResponse:
    project, _ = project_for(request, slug)
    job = get_object_or_404(jobs.jobs_of(project, request.user), pk=pk)
    path = jobs.job_file(job)
    if path is None:
        raise Http404("This export is not ready, or its file is gone.")
    audit.record(
        project=project,
        actor=request.user,
        verb="export.downloaded",
        target=job,
        after={"kind": job.kind, "file": job.filename or path.name},
    )
    content_type = "application/pdf" if job.kind == "pdf" else exports.FORMATS[job.kind].content_type
    return FileResponse(
        open(path, "rb"),  # noqa: SIM115 (FileResponse closes it)
        as_attachment=True,
        filename=job.filename or path.name,
        content_type=content_type,
    )
