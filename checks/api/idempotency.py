"""`Idempotency-Key` on a POST: the first answer is kept and replayed to every repeat.

The record is written in the same transaction as the work it answers for, and its key is
unique, so of concurrent requests with one key exactly one does the work; the others wait
for its commit, find the record and replay it. The same key with another body is a 422.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from rest_framework.request import Request
from rest_framework.response import Response

from ..models import IdempotencyRecord
from .auth import project_of
from .errors import error_response

MAX_KEY_LENGTH = 255
KEPT_HEADERS = ("Location",)


class _Unkept(Exception):
    """An answer not worth keeping (a server-side failure): undo the record, pass it on."""

    def __init__(self, response: Response) -> None:
        self.response = response


def idempotent(endpoint: str) -> Callable[[Callable[..., Response]], Callable[..., Response]]:
    def decorate(view: Callable[..., Response]) -> Callable[..., Response]:
        @functools.wraps(view)
        def wrapper(request: Request, *args: Any, **kwargs: Any) -> Response:
            key = request.headers.get("Idempotency-Key")
            project = project_of(request)
            if key is None or project is None:
                return view(request, *args, **kwargs)
            if not key.strip() or len(key) > MAX_KEY_LENGTH or not key.isprintable():
                return error_response(
                    400,
                    "The Idempotency-Key header is not usable.",
                    [
                        {
                            "path": "Idempotency-Key",
                            "message": f"must be 1 to {MAX_KEY_LENGTH} printable characters",
                        }
                    ],
                )
            digest = hashlib.sha256(request.body + request.get_full_path().encode()).hexdigest()
            try:
                with transaction.atomic():
                    record = IdempotencyRecord.objects.create(
                        project=project,
                        key=key,
                        endpoint=endpoint,
                        request_hash=digest,
                        status_code=0,
                        body={},
                    )
                    response = view(request, *args, **kwargs)
                    if response.status_code >= 500 or response.status_code == 429:
                        raise _Unkept(response)
                    record.status_code = response.status_code
                    record.body = response.data
                    record.headers = {h: response[h] for h in KEPT_HEADERS if response.has_header(h)}
                    record.save(update_fields=["status_code", "body", "headers"])
                    return response
            except _Unkept as unkept:
                return unkept.response
            except IntegrityError:
                # Another request with this key committed first: answer as it did.
                first = IdempotencyRecord.objects.filter(project=project, endpoint=endpoint, key=key).first()
                if first is None:
                    raise  # the conflict was not over the key
            if first.request_hash != digest:
                return error_response(
                    422,
                    "This Idempotency-Key came with a different request; use a new key for a new request.",
                    [{"path": "Idempotency-Key", "message": "already used with another body"}],
                )
            replay = Response(first.body, status=first.status_code, headers=first.headers)
            replay["Idempotent-Replayed"] = "true"
            return replay

        return wrapper

    return decorate
