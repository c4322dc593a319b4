"""One error shape for the whole API: `{"detail": …, "errors": [{"path", "message"}]}`."""

from __future__ import annotations

from typing import Any

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def error_response(
    status_code: int, detail: str, errors: list[dict[str, str]] | None = None, **headers: str
) -> Response:
    response = Response({"detail": detail, "errors": errors or []}, status=status_code)
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and "errors" in data:
        return response
    if isinstance(data, dict) and set(data) == {"detail"}:
        detail = str(data["detail"])
        errors: list[dict[str, str]] = []
    else:
        detail = "The request is not valid."
        errors = _flatten(data, "$")
    response.data = {"detail": detail, "errors": errors}
    return response


def _flatten(data: Any, path: str) -> list[dict[str, str]]:
    if isinstance(data, dict):
        return [e for key, value in data.items() for e in _flatten(value, f"{path}.{key}")]
    if isinstance(data, list) and data and all(isinstance(item, str) for item in data):
        return [{"path": path, "message": " ".join(str(item) for item in data)}]
    if isinstance(data, list):
        return [e for i, item in enumerate(data) for e in _flatten(item, f"{path}[{i}]")]
    return [{"path": path, "message": str(data)}]


TOO_LARGE = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
