"""Export jobs: an export too large to stream on a page is written to a file by a worker.

A job records who asked for which export with which filters; the task at the end of this
module writes the file under ``var/exports`` and the exports page offers it, once done, to
whoever asked for it and nobody else (``jobs_of``).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from ..filters import FindingFilter
from ..models import (
    ExportJob,
    ExportStatus,
    Project,
)
from . import pdf
from .exports import FORMATS, filename_for


def inline_limit() -> int:
    """Exports of more findings than this run in the background instead of streaming."""
    return int(getattr(settings, "RECEIPTS_EXPORT_INLINE_MAX", 5000))


def exports_dir() -> Path:
    path = Path(settings.VAR_DIR) / "exports"
    path.mkdir(parents=True, exist_ok=True)
    return path


def jobs_of(project: Project, user: Any) -> QuerySet[ExportJob]:
    """The export jobs ``user`` started in the project, newest first.

    A job belongs to its starter alone: its file holds what they may see (under blind double
    review, their own verdicts and corrections on a finding and no other reviewer's), so no
    other member, admin or viewer, lists it, follows its progress or downloads it."""
    if getattr(user, "pk", None) is None:
        return ExportJob.objects.none()
    return ExportJob.objects.filter(project=project, requested_by=user)


def start_job(*, project: Project, user: Any, kind: str, filters: dict[str, Any]) -> ExportJob:
    """Records an export to make in the background and enqueues it after the commit."""
    job = ExportJob.objects.create(
        project=project,
        requested_by=user if getattr(user, "is_authenticated", False) else None,
        kind=kind,
        filters=filters,
        filename=filename_for(project, kind),
    )
    transaction.on_commit(lambda: run_export_task.delay(job.pk))
    return job


def run_job(job_id: int) -> ExportJob | None:
    """Writes a job's file, saying how far it got as it goes. A job already taken is left be."""
    taken = ExportJob.objects.filter(pk=job_id, status=ExportStatus.PENDING).update(
        status=ExportStatus.RUNNING
    )
    if not taken:
        return None
    job = ExportJob.objects.select_related("project", "requested_by").get(pk=job_id)
    filters = dict(job.filters)
    base_url = filters.pop("_base_url", "")
    target = exports_dir() / f"{job.pk}-{secrets.token_hex(8)}-{job.filename or 'export'}"

    def progress(n: int) -> None:
        ExportJob.objects.filter(pk=job.pk).update(progress=n)

    try:
        if job.kind == "pdf":
            data = pdf.render_pdf_for_filters(job.project, filters)
            ExportJob.objects.filter(pk=job.pk).update(total=1)
            target.write_bytes(data)
            progress(1)
        else:
            fmt = FORMATS[job.kind]
            # "mine" is whoever asked for the export.
            selection, user = FindingFilter.parse(filters), job.requested_by
            ExportJob.objects.filter(pk=job.pk).update(total=fmt.count(job.project, selection, user))
            with open(target, "w", encoding="utf-8", newline="") as out:
                for piece in fmt.write(job.project, selection, user, base_url, progress):
                    out.write(piece)
    except Exception as exc:  # the job says what went wrong; the page shows it
        target.unlink(missing_ok=True)
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.FAILED,
            error=f"{type(exc).__name__}: {exc}"[:2000],
            finished_at=timezone.now(),
        )
    else:
        ExportJob.objects.filter(pk=job.pk).update(
            status=ExportStatus.DONE,
            path=str(target.relative_to(Path(settings.VAR_DIR))),
            finished_at=timezone.now(),
        )
    job.refresh_from_db()
    return job


def job_file(job: ExportJob) -> Path | None:
    """The finished file of a job, only if it lies where exports are written."""
    if job.status != ExportStatus.DONE or not job.path:
        return None
    path = (Path(settings.VAR_DIR) / job.path).resolve()
    if exports_dir().resolve() not in path.parents or not path.is_file():
        return None
    return path


# The task runs the workflow above; the name is the one messages already in a queue carry.
@shared_task(name="checks.tasks.run_export")
def run_export_task(job_id: int) -> str:
    """Writes a large export (or a report) to a file under var/exports; returns its status."""
    job = run_job(job_id)
    return job.status if job else "skipped"
