"""The REST API: one view per operation."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from itertools import islice
from typing import Any

from django.conf import settings
from django.db.models import Count, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes
from rest_framework.request import Request
from rest_framework.response import Response

from .. import checking, ingestion, raw_exports, refusals, suite
from ..filters import FindingFilter, InvalidFilter
from ..ingest import ADAPTERS, AUTO
from ..ingest.json_input import JsonRefused
from ..models import ApiKey, CheckRun, Conversation, Project, RunStatus, Turn
from . import parsers
from .auth import project_of
from .errors import TOO_LARGE, error_response
from .filter_params import FILTERS
from .idempotency import idempotent
from .permissions import needs_scope
from .serializers import ConversationSerializer, FindingSerializer, RunSerializer

# The names `?format=` takes, as the OpenAPI page lists them (README: the formats table).
OTHER_FORMATS = ", ".join(f"`{name}`" for name in ADAPTERS if name != "native")
FORMATS = f"`native` (the default), {OTHER_FORMATS} or `{AUTO}`"

ERROR_SHAPE = OpenApiResponse(
    description='`{"detail": "…", "errors": [{"path": "$.turns[0]…", "message": "…"}]}`'
)


def visible_projects(request: Request) -> QuerySet[Project]:
    """An API key sees its project; a signed-in person, the projects they belong to."""
    project = project_of(request)
    if project is not None:
        return Project.objects.filter(pk=project.pk)
    return Project.objects.for_user(request.user)


def visible_conversations(request: Request) -> QuerySet[Conversation]:
    """With what ConversationSerializer shows fetched alongside: the project (for the URL)
    and the latest run, one query for a whole page of conversations.

    The turns are counted in a subquery, not by joining them and grouping: grouping would be
    by every column of the conversation, its stored document among them, which made a list
    take minutes; and the document, which no reader here shows, is left in the database."""
    turns = Turn.objects.filter(conversation=OuterRef("pk")).order_by().values("conversation")
    return (
        Conversation.objects.filter(project__in=visible_projects(request))
        .defer("document", "metadata", "system")
        .annotate(turn_count=Coalesce(Subquery(turns.annotate(n=Count("pk")).values("n")), 0))
        .select_related("project")
        .prefetch_related(
            Prefetch(
                "runs", queryset=CheckRun.objects.order_by("-created_at", "-id")[:1], to_attr="latest_runs"
            )
        )
    )


@extend_schema(
    operation_id="conversations_create",
    summary="Send a conversation",
    description=(
        "Stores one conversation (CONTRACT.md §1) and schedules its check. Resending the same "
        "`external_id` with the same content changes nothing (200); a payload whose turns extend the "
        "stored ones appends them (200); any other change is a conflict (409)."
    ),
    parameters=[OpenApiParameter("format", str, description=f"Input format: {FORMATS}.", required=False)],
    request={"application/json": OpenApiTypes.OBJECT},
    responses={
        201: ConversationSerializer,
        200: ConversationSerializer,
        400: ERROR_SHAPE,
        401: ERROR_SHAPE,
        409: ERROR_SHAPE,
        413: ERROR_SHAPE,
    },
    methods=["POST"],
)
@extend_schema(
    operation_id="conversations_list",
    summary="Find conversations",
    parameters=[OpenApiParameter("external_id", str, description="The id the sender gave it.")],
    responses={200: ConversationSerializer(many=True)},
    methods=["GET"],
)
@api_view(["GET", "POST"])
@permission_classes([needs_scope("read", POST="ingest")])
@idempotent("conversations")
def conversations(request: Request) -> Response:
    if request.method == "GET":
        found = visible_conversations(request).order_by("-created_at", "-id")
        if external_id := request.query_params.get("external_id"):
            # No stored id holds U+0000 (ingestion refuses it), and PostgreSQL cannot compare one.
            found = found.none() if "\x00" in external_id else found.filter(external_id=external_id)
        return Response(ConversationSerializer(found[:100], many=True, context={"request": request}).data)
    return _create_conversation(request)


def _create_conversation(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        return _key_required()
    payload, refusal = _read_json(request, settings.RECEIPTS_MAX_BODY_BYTES)
    if refusal:
        return refused(request, project, refusal, _json_shape(request))
    try:
        result = ingestion.ingest_conversation(
            project=project, payload=payload, body=request.body.decode("utf-8"), format=_format(request)
        )
    except ingestion.IngestError as exc:
        # The ingestion's transaction has rolled back; the refusal is kept outside it.
        response = error_response(exc.status_code, exc.detail, exc.errors)
        return refused(request, project, response, _json_shape(request, payload))
    # Answered from what ingestion holds, as visible_conversations would have read it back:
    # reading it again (with its document) was a fifth of the request.
    conversation: Any = result.conversation  # given the attributes the serializer reads
    conversation.project = project
    conversation.turn_count = len(conversation.document["turns"])
    if result.run is not None:
        conversation.latest_runs = [result.run]
    data = ConversationSerializer(conversation, context={"request": request}).data
    data["status"] = result.status
    data["run"] = RunSerializer(result.run).data if result.run else None
    code = status.HTTP_201_CREATED if result.status == "created" else status.HTTP_200_OK
    response = Response(data, status=code)
    if code == status.HTTP_201_CREATED:
        response["Location"] = data["url"]
    return response


def key_of(request: Request) -> ApiKey | None:
    """The API key a request came with, if it came with one."""
    return request.auth if isinstance(request.auth, ApiKey) else None


def refused(request: Request, project: Project, response: Response, shape: dict[str, Any]) -> Response:
    """Answers a refusal, and keeps its reason and the payload's shape for the project's
    Refusals page. Called once the ingestion that refused has rolled back, so it is kept."""
    data = response.data if isinstance(response.data, dict) else {}
    refusals.record(
        project=project,
        api_key=key_of(request),
        endpoint=request.path,
        status_code=response.status_code,
        reason=refusals.reason_of(str(data.get("detail", "")), data.get("errors")),
        shape=shape,
    )
    return response


def declared_length(request: Request) -> int:
    length = request.META.get("CONTENT_LENGTH") or "0"
    return int(length) if length.isascii() and length.isdigit() else 0


def _json_shape(request: Request, payload: Any = None) -> dict[str, Any]:
    return refusals.json_shape(
        payload,
        content_type=request.META.get("CONTENT_TYPE", ""),
        size=declared_length(request),
        format=request.query_params.get("format"),
    )


def _key_required() -> Response:
    return error_response(
        status.HTTP_403_FORBIDDEN, "Send this with a project's API key (Authorization: Bearer …)."
    )


def _format(request: Request) -> str:
    return request.query_params.get("format") or "native"


def _too_large(request: Request, limit: int) -> Response | None:
    """413 before the body is read when its declared length is over the limit."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    if length.isascii() and length.isdigit() and int(length) <= limit:
        return None
    return error_response(
        TOO_LARGE,
        f"The body is over the limit of {limit} bytes; send less at once, or raise the limit "
        "(RECEIPTS_MAX_BODY_BYTES, RECEIPTS_BULK_MAX_BYTES).",
    )


def _read_json(request: Request, limit: int) -> tuple[Any, Response | None]:
    """The decoded JSON body, or the 4xx that says why there is none."""
    if refusal := _too_large(request, limit) or _too_many_values(request.body):
        return None, refusal
    payload, error = _decode_json(request.body)
    if error:
        return None, error_response(status.HTTP_400_BAD_REQUEST, "The body is not valid JSON.", [error])
    return payload, None


def _too_many_values(raw: bytes) -> Response | None:
    """413 before the body is decoded when it holds more JSON values than the limit."""
    reason = parsers.too_many_values(raw)
    return error_response(TOO_LARGE, reason) if reason else None


def _decode_json(raw: bytes) -> tuple[Any, dict[str, str] | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, {
            "path": "$",
            "message": f"the body must be UTF-8 encoded JSON ({exc.reason} at byte {exc.start})",
        }
    return _decode_text(text)


def _decode_text(text: str) -> tuple[Any, dict[str, str] | None]:
    try:
        return parsers.loads(text), None
    except json.JSONDecodeError as exc:
        return None, {
            "path": "$",
            "message": f"{exc.msg} at line {exc.lineno} column {exc.colno}; send one JSON object",
        }
    except JsonRefused as exc:  # a number too long, nesting too deep: json's own errors say neither
        return None, {"path": "$", "message": parsers.refusal_text(exc)}


@extend_schema(
    summary="A conversation and its latest check run",
    responses={200: ConversationSerializer, 404: ERROR_SHAPE},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
def conversation_detail(request: Request, pk: int) -> Response:
    conversation = get_object_or_404(visible_conversations(request), pk=pk)
    return Response(ConversationSerializer(conversation, context={"request": request}).data)


@extend_schema(
    summary="The findings of a conversation",
    description=(
        "In the CONTRACT.md §2 shape, with each finding's review status and page URL; the "
        "queue's filters select among them."
    ),
    parameters=FILTERS,
    responses={200: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 404: ERROR_SHAPE},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
def conversation_findings(request: Request, pk: int) -> Response:
    conversation = get_object_or_404(visible_conversations(request), pk=pk)
    try:
        selection = FindingFilter.parse(request.query_params)
    except InvalidFilter as exc:
        return error_response(
            status.HTTP_400_BAD_REQUEST,
            "The filters are not valid.",
            [{"path": exc.field, "message": str(exc)}],
        )
    run = CheckRun.objects.filter(conversation=conversation).order_by("-created_at", "-id").first()
    done = conversation.runs.filter(status="done").order_by("-finished_at", "-id").first()
    findings = (
        replace(selection, conversation=str(conversation.pk))
        .findings(conversation.project, user=request.user)
        .select_related("turn__project")
        .order_by("turn__index", "claim_start", "id")
    )
    summary = done.summary if done else {}
    return Response(
        {
            "external_id": conversation.external_id,
            "suite_version": done.suite_version if done else None,
            "run": RunSerializer(run).data if run else None,
            "findings": [FindingSerializer(f, context={"request": request}).data for f in findings],
            "provenance": summary.get("provenance", []),
            "turns": summary.get("turns", []),
        }
    )


# --- bulk ---------------------------------------------------------------------------------


@extend_schema(
    operation_id="conversations_bulk",
    summary="Send many conversations",
    description=(
        "A JSON array of conversations, or JSON Lines (`Content-Type: application/x-ndjson`), up to "
        "RECEIPTS_BULK_MAX_ITEMS items. Answers 207 with one result per item: created, unchanged, "
        "appended, conflict or invalid (with its errors). Items are stored or refused one by one."
    ),
    parameters=[
        OpenApiParameter("format", str, description=f"Input format of every item: {FORMATS}.", required=False)
    ],
    request={"application/json": OpenApiTypes.OBJECT, "application/x-ndjson": OpenApiTypes.STR},
    responses={207: OpenApiTypes.OBJECT, 400: ERROR_SHAPE, 413: ERROR_SHAPE},
)
@api_view(["POST"])
@permission_classes([needs_scope("ingest")])
@idempotent("conversations/bulk")
def conversations_bulk(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        return _key_required()
    if refusal := _too_large(request, settings.RECEIPTS_BULK_MAX_BYTES):
        return refused(request, project, refusal, _json_shape(request))
    items, refusal = _bulk_items(request, settings.RECEIPTS_BULK_MAX_ITEMS)
    if refusal:
        return refused(request, project, refusal, _json_shape(request))
    results = ingestion.ingest_many(project=project, items=items, format=_format(request))
    if failed := [r for r in results if r.status in ("conflict", "invalid")]:
        refusals.record(
            project=project,
            api_key=key_of(request),
            endpoint=request.path,
            status_code=status.HTTP_207_MULTI_STATUS,
            rejected=len(failed),
            reason=f"{len(failed)} of {len(results)} items refused: "
            + "; ".join(
                f"item {r.index} ({r.external_id}): {r.status}: {refusals.reason_of('', r.errors[:3])}"
                for r in failed[:10]
            ),
            shape=_json_shape(request, [payload for payload, _ in items]),
        )
    out = []
    for result in results:
        entry: dict[str, Any] = {
            "index": result.index,
            "external_id": result.external_id,
            "status": result.status,
        }
        if result.conversation is not None:
            entry["id"] = result.conversation.pk
            entry["url"] = request.build_absolute_uri(result.conversation.get_absolute_url())
        if result.errors:
            entry["errors"] = result.errors
        out.append(entry)
    counts: dict[str, int] = {}
    for entry in out:
        counts[entry["status"]] = counts.get(entry["status"], 0) + 1
    return Response({"counts": counts, "items": out}, status=status.HTTP_207_MULTI_STATUS)


def _bulk_items(request: Request, limit: int) -> tuple[list[tuple[Any, str]], Response | None]:
    """(payload, raw text) per item from JSON Lines or a JSON array; or the 4xx that says why
    there are none. JSON Lines are counted as they are read, and reading stops past the limit:
    a body of millions of lines costs what its first ``limit`` + 1 do."""
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [], _not_a_list(
            [{"path": "$", "message": f"the body must be UTF-8 ({exc.reason} at byte {exc.start})"}]
        )
    content_type = (request.content_type or "").split(";")[0].strip()
    if content_type in ("application/x-ndjson", "application/jsonl", "application/json-lines") or (
        content_type != "application/json" and not _ARRAY_START.match(text)
    ):
        lines = list(islice(parsers.json_lines(text), limit + 1))
        if len(lines) > limit:
            return [], _too_many_items(limit)
        if refusal := _too_many_values(request.body):
            return [], refusal
        items, errors = [], []
        for number, line in lines:
            payload, error = _decode_text(line)
            if error:
                errors.append({"path": f"line {number}", "message": error["message"]})
            items.append((payload, line))
        return items, _not_a_list(errors) if errors else None
    if refusal := _too_many_values(request.body):
        return [], refusal
    payload, error = _decode_text(text)
    if error:
        return [], _not_a_list([error])
    if not isinstance(payload, list):
        return [], _not_a_list(
            [{"path": "$", "message": "must be a JSON array of conversations (or send JSON Lines)"}]
        )
    if len(payload) > limit:
        return [], _too_many_items(limit)
    return [(item, json.dumps(item, ensure_ascii=False)) for item in payload], None


_ARRAY_START = re.compile(r"\s*\[")


def _not_a_list(errors: list[dict[str, str]]) -> Response:
    return error_response(status.HTTP_400_BAD_REQUEST, "The body is not a list of conversations.", errors)


def _too_many_items(limit: int) -> Response:
    return error_response(
        TOO_LARGE,
        f"The body holds more than {limit} items, the limit (RECEIPTS_BULK_MAX_ITEMS); "
        "send them in several requests.",
    )


# --- inline checking ----------------------------------------------------------------------


@extend_schema(
    operation_id="check",
    summary="Check one conversation now",
    description=(
        "Runs the deterministic checkers on one conversation and answers with its findings, "
        "provenance and proposed corrections, for a runtime that gates an answer before it goes "
        "out. Nothing is stored unless `store=true`, which needs a key with the `ingest` scope."
    ),
    parameters=[
        OpenApiParameter("format", str, description=f"Input format: {FORMATS}.", required=False),
        OpenApiParameter("store", bool, description="Also store the conversation and queue its check."),
    ],
    request={"application/json": OpenApiTypes.OBJECT},
    responses={
        200: OpenApiTypes.OBJECT,
        400: ERROR_SHAPE,
        403: ERROR_SHAPE,
        413: ERROR_SHAPE,
        503: ERROR_SHAPE,
    },
)
@api_view(["POST"])
@permission_classes([needs_scope("check")])
@idempotent("check")
def check(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        return _key_required()
    store = request.query_params.get("store") in ("1", "true", "yes")
    # Storing is ingestion, whichever endpoint asks for it: a key that may only check may not.
    if store and isinstance(request.auth, ApiKey) and "ingest" not in (request.auth.scopes or []):
        return error_response(
            status.HTTP_403_FORBIDDEN,
            "This API key may check but not store conversations.",
            [{"path": "store", "message": "needs a key with the ingest scope; leave it out to only check"}],
        )
    payload, refusal = _read_json(request, settings.RECEIPTS_MAX_BODY_BYTES)
    if refusal:
        return refusal
    try:
        document = ingestion.to_document(payload, format=_format(request))
        options = suite.parse_options(project.options or None)
        # The web process never waits on a judge model: its questions belong to a worker,
        # which alone holds the project's judge key and the outbound allow-list.
        skip = {checking.JUDGE} if checking.judge_configured(options) else None
        report = suite.run_suite(document, options, skip=skip, seconds=settings.RECEIPTS_INLINE_CHECK_SECONDS)
    except suite.DeadlinePassed as exc:
        return _check_too_long(exc.seconds)
    except ingestion.IngestError as exc:
        return error_response(exc.status_code, exc.detail, exc.errors)
    except suite.OptionsError as exc:
        return error_response(
            status.HTTP_409_CONFLICT,
            "The project's checker options are not valid; an admin can fix them on its Settings page.",
            [{"path": "options", "message": str(exc)}],
        )
    if store:
        try:
            result = ingestion.ingest_conversation(
                project=project, payload=payload, body=request.body.decode("utf-8"), format=_format(request)
            )
        except ingestion.IngestError as exc:
            response = error_response(
                exc.status_code, "The conversation conflicts with the stored one.", exc.errors
            )
            return refused(request, project, response, _json_shape(request, payload))
        report["stored"] = {"id": result.conversation.pk, "status": result.status}
    return Response(report)


def _check_too_long(seconds: float) -> Response:
    """The inline check's answer past its time limit: no findings, since a partial list would
    read as a complete one, and the way to a check that is not limited by a request."""
    return error_response(
        status.HTTP_503_SERVICE_UNAVAILABLE,
        f"The check took longer than {seconds:g} s, the limit for an inline check "
        "(RECEIPTS_INLINE_CHECK_SECONDS), and was stopped; no findings are given.",
        [
            {
                "path": "",
                "message": "store the conversation (POST /api/v1/conversations) and read its findings once "
                "a worker has checked it, or send a shorter conversation",
            }
        ],
    )


@extend_schema(
    operation_id="capability_statement",
    summary="The ground rules for a turn",
    description="The capability statement to put beside a turn's tools: what the model can and cannot do.",
    parameters=[
        OpenApiParameter(
            "tools", str, description="Comma-separated tool names offered this turn; empty or absent: none."
        )
    ],
    responses={200: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
@permission_classes([needs_scope("check")])
def capability_statement(request: Request) -> Response:
    names = tuple(name.strip() for name in request.query_params.get("tools", "").split(",") if name.strip())
    return Response({"tools": list(names), "text": suite.capability_statement(names)})


@extend_schema(
    operation_id="stats",
    summary="How many conversations were received and checked",
    description=(
        "For the key's project (or, signed in, every project you belong to). `exports_waiting` counts "
        "the OTLP exports received and not yet stored: while any wait, `conversations` and `checked` "
        "do not hold everything sent."
    ),
    responses={200: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
@permission_classes([needs_scope("read")])
def stats(request: Request) -> Response:
    projects = visible_projects(request)
    received = Conversation.objects.filter(project__in=projects).count()
    checked = (
        CheckRun.objects.filter(project__in=projects, status=RunStatus.DONE)
        .values("conversation_id")
        .distinct()
        .count()
    )
    pending = CheckRun.objects.filter(
        project__in=projects, status__in=[RunStatus.PENDING, RunStatus.RUNNING]
    ).count()
    exports = raw_exports.waiting(projects)
    return Response(
        {"conversations": received, "checked": checked, "runs_pending": pending, "exports_waiting": exports}
    )
