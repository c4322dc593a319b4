"""The REST API: one view per operation."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from .. import services
from ..models import CheckRun, Conversation, Finding, Project
from .auth import project_of
from .errors import TOO_LARGE, error_response
from .serializers import ConversationSerializer, FindingSerializer, RunSerializer

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
    return Conversation.objects.filter(project__in=visible_projects(request)).annotate(
        turn_count=Count("turns")
    )


@extend_schema(
    operation_id="conversations_create",
    summary="Send a conversation",
    description=(
        "Stores one conversation (CONTRACT.md §1) and schedules its check. Resending the same "
        "`external_id` with the same content changes nothing (200); a payload whose turns extend the "
        "stored ones appends them (200); any other change is a conflict (409)."
    ),
    parameters=[
        OpenApiParameter("format", str, description="Input format; `native` (the default).", required=False)
    ],
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
def conversations(request: Request) -> Response:
    if request.method == "GET":
        found = visible_conversations(request).order_by("-created_at", "-id")
        if external_id := request.query_params.get("external_id"):
            found = found.filter(external_id=external_id)
        return Response(ConversationSerializer(found[:100], many=True, context={"request": request}).data)
    return _create_conversation(request)


def _create_conversation(request: Request) -> Response:
    project = project_of(request)
    if project is None:
        return error_response(
            status.HTTP_403_FORBIDDEN,
            "Conversations are sent with a project's API key (Authorization: Bearer …).",
        )
    limit = settings.RECEIPTS_MAX_BODY_BYTES
    length = request.META.get("CONTENT_LENGTH") or "0"
    if not length.isdigit() or int(length) > limit:
        return error_response(
            TOO_LARGE,
            f"The body is over the limit of {limit} bytes; split the conversation or raise "
            "RECEIPTS_MAX_BODY_BYTES.",
        )
    payload, error = _decode_json(request.body)
    if error:
        return error_response(status.HTTP_400_BAD_REQUEST, "The body is not valid JSON.", [error])
    body = request.body.decode("utf-8")
    try:
        result = services.ingest_conversation(
            project=project, payload=payload, body=body, format=request.query_params.get("format", "native")
        )
    except services.IngestError as exc:
        detail = "The conversation is not valid." if exc.status_code == 400 else "The conversation conflicts."
        return error_response(exc.status_code, detail, exc.errors)
    conversation = visible_conversations(request).get(pk=result.conversation.pk)
    data = ConversationSerializer(conversation, context={"request": request}).data
    data["status"] = result.status
    data["run"] = RunSerializer(result.run).data if result.run else None
    code = status.HTTP_201_CREATED if result.status == "created" else status.HTTP_200_OK
    response = Response(data, status=code)
    if code == status.HTTP_201_CREATED:
        response["Location"] = data["url"]
    return response


def _decode_json(raw: bytes) -> tuple[Any, dict[str, str] | None]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, {
            "path": "$",
            "message": f"the body must be UTF-8 encoded JSON ({exc.reason} at byte {exc.start})",
        }
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, {
            "path": "$",
            "message": f"{exc.msg} at line {exc.lineno} column {exc.colno}; send one JSON object",
        }
    except RecursionError:
        return None, {"path": "$", "message": "the JSON is nested too deeply"}


@extend_schema(summary="A conversation and its latest check run", responses={200: ConversationSerializer})
@api_view(["GET"])
def conversation_detail(request: Request, pk: int) -> Response:
    conversation = get_object_or_404(visible_conversations(request), pk=pk)
    return Response(ConversationSerializer(conversation, context={"request": request}).data)


@extend_schema(
    summary="The findings of a conversation",
    description="In the CONTRACT.md §2 shape, with each finding's review status and page URL.",
    responses={200: OpenApiTypes.OBJECT},
)
@api_view(["GET"])
def conversation_findings(request: Request, pk: int) -> Response:
    conversation = get_object_or_404(visible_conversations(request), pk=pk)
    run = CheckRun.objects.filter(conversation=conversation).order_by("-created_at", "-id").first()
    done = conversation.runs.filter(status="done").order_by("-finished_at", "-id").first()
    findings = (
        Finding.objects.current()
        .filter(conversation=conversation)
        .select_related("turn", "project")
        .order_by("turn__index", "claim_start", "id")
    )
    summary = done.summary if done else {}
    return Response(
        {
            "external_id": conversation.external_id,
            "suite_version": done.suite_version if done else None,
            "run": RunSerializer(run).data if run else None,
            "findings": FindingSerializer(findings, many=True, context={"request": request}).data,
            "provenance": summary.get("provenance", []),
            "turns": summary.get("turns", []),
        }
    )
