"""When the database cannot be reached, say so with 503 and Retry-After, never a bare 500.

Every write runs in a transaction, so a request cut off by a lost database leaves nothing
half-written; the client only needs to know to send it again later.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

log = logging.getLogger(__name__)
RETRY_AFTER_SECONDS = 5


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        log.warning("database unavailable for %s %s: %s", request.method, request.path, exception)
        detail = "The database is unavailable; nothing from this request was stored. Send it again shortly."
        if request.path.startswith(("/api/", "/v1/")):
            response: HttpResponse = JsonResponse(
                {"detail": detail, "errors": [{"path": "$", "message": "database unavailable"}]}, status=503
            )
        else:
            response = HttpResponse(detail, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
