"""The API's reports: a project's findings as CSV or JSON Lines, selected by the queue's
filters under the queue's names, and the project's audit report as a PDF.

They need a key's ``read`` scope; a key speaks for its project, and a signed-in member names
one with ``project``. The findings are streamed as they are read (in keyset batches, however
many there are), in the very formats the exports page writes: the CSV's cells neutralized
against spreadsheet formulas, each JSON line a finding with its provenance and decisions.
Every download is an event in the project's audit chain, as on the pages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from .. import audit
from ..filters import PARAMS, FindingFilter, InvalidFilter, conversations_named
from ..models import ApiKey, Conversation, Project
from ..reporting import exports, figures, pdf
from .auth import project_of
from .errors import error_response
from .filter_params import FILTERS
from .permissions import needs_scope

PROJECT = OpenApiParameter(
    "project",
    str,
    description=(
        "The project's slug, as in its pages' address (/p/<slug>/). A key's own project when "
        "left out; a signed-in member must give it."
    ),
)
# What the report takes of the filters: a period, or one conversation.
REPORT_PARAMS = ("since", "until", "conversation")
ERROR_SHAPE = OpenApiResponse(
    description='`{"detail": "…", "errors": [{"path": "<parameter>", "message": "…"}]}`'
)
REFUSALS: dict[int | tuple[int, str], Any] = {
    (400, "application/json"): ERROR_SHAPE,
    (401, "application/json"): ERROR_SHAPE,
    (403, "application/json"): ERROR_SHAPE,
    (404, "application/json"): ERROR_SHAPE,
}


class IgnoreAccept(BaseContentNegotiation):
    """The path names what comes back; errors are JSON whatever the client accepts (without
    this, ``Accept: text/csv`` would be refused with 406 before the view could answer)."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        first = next(iter(renderers))
        return first, first.media_type


def _answers_by_path[F: Callable[..., Any]](view: F) -> F:
    view.content_negotiation_class = IgnoreAccept  # type: ignore[attr-defined]  # read by api_view
    return view


def _refused(code: int, detail: str, field: str, message: str) -> Response:
    return error_response(code, detail, [{"path": field, "message": message}])


def _invalid(exc: InvalidFilter) -> Response:
    return _refused(status.HTTP_400_BAD_REQUEST, "The filters are not valid.", exc.field, str(exc))


def _unreadable(request: Request) -> Response | None:
    """A 400 for a parameter holding U+0000: no stored value holds one, and PostgreSQL cannot
    compare with one (nor keep it in the audit event's JSON)."""
    for key, values in request.query_params.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return _invalid(InvalidFilter(key.replace("\x00", ""), "remove the U+0000 character from it."))
    return None


def _project(request: Request) -> Project | Response:
    """The project a request reads: its key's, or the one a signed-in member names."""
    asked = str(request.query_params.get("project", "")).strip()
    own = project_of(request)
    if own is not None:
        if asked and asked != own.slug:
            return _refused(
                status.HTTP_404_NOT_FOUND,
                "No such project.",
                "project",
                "project: a key reads its own project only; leave project out, or use that project's key.",
            )
        return own
    if not asked:
        return _refused(
            status.HTTP_400_BAD_REQUEST,
            "Name the project.",
            "project",
            "project: give the project's slug, as in its pages' address (/p/<slug>/).",
        )
    project = Project.objects.for_user(request.user).filter(slug=asked).first()
    if project is None:  # a project the caller is not in is not revealed
        return _refused(
            status.HTTP_404_NOT_FOUND,
            "No such project.",
            "project",
            f"project: you belong to no project {asked!r}.",
        )
    return project


def _reader(request: Request) -> Any:
    """Whose reading decides what an export shows: the signed-in member, who sees what their
    pages show; for a key nobody. A key is no reviewer and never decides, so on a finding
    under blind double review (``blind_review``) it sees no reviewer's verdict, reason or
    proposed correction until two reviewers have decided it."""
    return AnonymousUser() if isinstance(request.auth, ApiKey) else request.user


def _selection(request: Request) -> FindingFilter | Response:
    try:
        selection = FindingFilter.parse(request.query_params)
    except InvalidFilter as exc:
        return _invalid(exc)
    if selection.assignee == "mine" and isinstance(request.auth, ApiKey):
        return _invalid(
            InvalidFilter(
                "assignee", "mine is the signed-in member, and a key is none; give a username, or none."
            )
        )
    return selection


@dataclass(frozen=True)
class KeyActor:
    """Who an audit event names for a key's request: the project's client, not a person, so
    the event is tied to no account (the key's prefix goes in the event's details)."""

    username: str
    is_authenticated: bool = False


def _audited(request: Request, project: Project, verb: str, target: Any, after: dict[str, Any]) -> None:
    actor: Any = request.user
    if isinstance(request.auth, ApiKey):
        actor, after = KeyActor(str(request.user)), {**after, "key": request.auth.prefix}
    audit.record(project=project, actor=actor, verb=verb, target=target, after={**after, "via": "api"})


def _findings(request: Request, kind: str) -> HttpResponse | StreamingHttpResponse | Response:
    if refusal := _unreadable(request):
        return refusal
    project = _project(request)
    if isinstance(project, Response):
        return project
    selection = _selection(request)
    if isinstance(selection, Response):
        return selection
    _audited(request, project, "export.downloaded", project, {"kind": kind, "filters": selection.as_dict()})
    fmt = exports.FORMATS[kind]
    base_url = request.build_absolute_uri("/").rstrip("/")
    response = StreamingHttpResponse(
        fmt.write(project, selection, _reader(request), base_url, lambda n: None),
        content_type=fmt.content_type,
    )
    response["Content-Disposition"] = f'attachment; filename="{exports.filename_for(project, kind)}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


FINDINGS_DESCRIPTION = (
    "The project's current findings that the filters select, with their decisions and "
    "corrections, streamed. The filters are the queue's, under the same names; a value that "
    "cannot be read is a 400 naming the parameter. Under blind double review, a key sees no "
    "reviewer's verdict, reason or proposed correction on an open finding fewer than two "
    "reviewers have decided (a key is no reviewer); a signed-in member sees what the pages "
    "show them."
)


@extend_schema(
    operation_id="findings_csv",
    summary="The findings of a project as CSV",
    description=FINDINGS_DESCRIPTION
    + " A cell a spreadsheet would run as a formula (even after any run of blank or invisible "
    "characters, or in full-width signs) "
    "starts with an apostrophe, so it is shown and never run.",
    parameters=[PROJECT, *FILTERS],
    responses={(200, "text/csv"): OpenApiTypes.STR, **REFUSALS},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
@_answers_by_path
def findings_csv(request: Request) -> HttpResponse | StreamingHttpResponse | Response:
    return _findings(request, "csv")


@extend_schema(
    operation_id="findings_jsonl",
    summary="The findings of a project as JSON Lines",
    description=FINDINGS_DESCRIPTION
    + " Each line is one finding: its conversation and turn, claim, evidence (with excerpts of "
    "the tool results), explanation, provenance (suite version, run, fingerprint), decisions "
    "and corrections.",
    parameters=[PROJECT, *FILTERS],
    responses={(200, "application/jsonl"): OpenApiTypes.STR, **REFUSALS},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
@_answers_by_path
def findings_jsonl(request: Request) -> HttpResponse | StreamingHttpResponse | Response:
    return _findings(request, "jsonl")


def _report_scope(request: Request, project: Project) -> figures.Period | Conversation | Response:
    """The period the report covers, or the one conversation it covers."""
    query = request.query_params
    for name in PARAMS:
        if name not in REPORT_PARAMS and query.get(name):
            return _invalid(
                InvalidFilter(
                    name,
                    "the report covers a period or one conversation: give since and until, or conversation.",
                )
            )
    try:
        selection = FindingFilter.parse(query)  # only the report's own names are left to read
        if not selection.conversation:
            return figures.period_from(query)
    except InvalidFilter as exc:
        return _invalid(exc)
    if selection.since or selection.until:
        return _invalid(
            InvalidFilter("since", "a conversation's report covers all of it; leave out since and until.")
        )
    conversation = conversations_named(project, selection.conversation).first()
    if conversation is None:
        return _refused(
            status.HTTP_404_NOT_FOUND,
            "No such conversation.",
            "conversation",
            f"conversation: the project has no conversation {selection.conversation}.",
        )
    return conversation


@extend_schema(
    operation_id="report_pdf",
    summary="The audit report of a project as a PDF",
    description=(
        "The summary figures, the charts, each confirmed finding with its evidence, decision and "
        "approved correction, and the audit chain's verification, for a period (`since` and "
        "`until`, the last 30 days by default, at most a year) or for one `conversation`. The "
        "other filters do not apply to it and are refused."
    ),
    parameters=[PROJECT, *(f for f in FILTERS if f.name in REPORT_PARAMS)],
    responses={(200, "application/pdf"): OpenApiTypes.BINARY, **REFUSALS},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
@_answers_by_path
def report_pdf(request: Request) -> HttpResponse | Response:
    if refusal := _unreadable(request):
        return refusal
    project = _project(request)
    if isinstance(project, Response):
        return project
    scope = _report_scope(request, project)
    if isinstance(scope, Response):
        return scope
    by = str(request.user)  # a member's username, or "api:<project>" for a key
    if isinstance(scope, Conversation):
        data = pdf.render_pdf(project, conversation=scope, prepared_by=by)
        _audited(request, project, "report.downloaded", scope, {})
        filename = f"{project.slug}-audit-conversation-{scope.pk}.pdf"
    else:
        data = pdf.render_pdf(project, period=scope, prepared_by=by)
        period = {"since": scope.since.isoformat(), "until": scope.until.isoformat()}
        _audited(request, project, "report.downloaded", project, period)
        filename = f"{project.slug}-audit-{scope.since:%Y%m%d}-{scope.until:%Y%m%d}.pdf"
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
