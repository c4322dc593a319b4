"""What became of an OTLP export: `GET /api/v1/otlp-exports/<id>`.

/v1/traces and /v1/logs answer before an export's rows exist (checks/raw_exports.py), naming
it in their Receipts-Export header; a sender reads here whether it is still waiting, stored
(with what of it was refused, and why) or refused whole, with the reason. A key that may
send (ingest) or read reads its project's exports; a signed-in member, their projects'.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.request import Request
from rest_framework.response import Response

from ..models import RawExport
from .permissions import needs_any_scope
from .serializers import RawExportSerializer
from .views import ERROR_SHAPE, visible_projects


@extend_schema(
    operation_id="otlp_export",
    summary="What became of an OTLP export",
    description=(
        "The export named by the `Receipts-Export` header of a `/v1/traces` or `/v1/logs` answer: "
        "`waiting` to be stored, `stored` (with `rejected` records refused and the `reason`, when "
        "any were), or `refused` whole with the `reason`; `conversations` counts them by what became "
        "of each (created, appended, unchanged, conflict, invalid; not_built: groups of spans that "
        "gave no conversation)."
    ),
    responses={200: RawExportSerializer, 404: ERROR_SHAPE},
)
@api_view(["GET"])
@permission_classes([needs_any_scope("ingest", "read")])
def otlp_export(request: Request, pk: int) -> Response:
    exports = RawExport.objects.filter(project__in=visible_projects(request)).defer("body")
    return Response(RawExportSerializer(get_object_or_404(exports, pk=pk)).data)
