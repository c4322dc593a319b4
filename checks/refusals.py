"""Refusals: what an API key sent that gave no conversation, and why, kept for the project.

An integrator whose traces are missing reads them on the project's Refusals page: the time,
the endpoint, the reason given to the sender, and the payload's shape (its content type and
size, its top-level keys, the span names and attribute keys of an OTLP export), never its
content, which may be large or sensitive. Each project keeps the newest
RECEIPTS_REFUSALS_KEPT; older ones are pruned as new ones come.

Names and reasons come from the refused request, which may hold what no database keeps
(U+0000, an unpaired surrogate: often the very reason it was refused); each such character
is kept as U+FFFD as the refusal is stored, so it is stored whatever it quotes.

A refusal is written after the ingestion it reports on has rolled back (or committed what
it could), so it is kept whatever became of the rest of the request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db.models import Q

from .ingestion import UNSTORABLE_TEXT
from .models import ApiKey, Project, Refusal

MAX_REASON = 4000
# How many distinct names of each kind a shape lists: enough to recognise a convention.
MAX_NAMES = 40


def record(
    *,
    project: Project,
    api_key: ApiKey | None,
    endpoint: str,
    status_code: int,
    reason: str,
    shape: dict[str, Any],
    rejected: int = 1,
) -> Refusal:
    """Keeps one refusal, and prunes the project's beyond the newest RECEIPTS_REFUSALS_KEPT."""
    refusal = Refusal.objects.create(
        project=project,
        api_key=api_key,
        endpoint=_storable(endpoint[:100]),
        status_code=status_code,
        rejected=max(0, rejected),
        reason=_storable(reason[:MAX_REASON]),
        shape=_storable(shape),
    )
    prune(project)
    return refusal


def prune(project: Project) -> int:
    """Deletes the project's refusals older than its newest RECEIPTS_REFUSALS_KEPT."""
    kept = max(1, settings.RECEIPTS_REFUSALS_KEPT)
    oldest_kept = (
        Refusal.objects.filter(project=project)
        .order_by("-created_at", "-id")
        .values_list("created_at", "id")[kept - 1 : kept]
        .first()
    )
    if oldest_kept is None:
        return 0
    at, pk = oldest_kept
    older = Q(created_at__lt=at) | Q(created_at=at, id__lt=pk)
    deleted, _ = Refusal.objects.filter(project=project).filter(older).delete()
    return deleted


def reason_of(detail: str, errors: Iterable[dict[str, Any]] | None) -> str:
    """A 4xx answer's words as one line: its detail, then each error with its path."""
    parts = [detail] if detail else []
    parts += [f"{e.get('path', '$')}: {e.get('message', '')}" for e in errors or () if isinstance(e, dict)]
    return "; ".join(parts)


def _names(values: Iterable[Any]) -> list[str]:
    """Distinct names, sorted, at most MAX_NAMES (each cut to 200 characters)."""
    out: set[str] = set()
    for value in values:
        if isinstance(value, str) and value:
            out.add(value[:200])
            if len(out) >= MAX_NAMES:
                break
    return sorted(out)


def json_shape(payload: Any, *, content_type: str, size: int, format: str | None = None) -> dict[str, Any]:
    """The shape of a JSON body: its type, and its keys (or its items' keys), never its values."""
    shape: dict[str, Any] = {"content_type": content_type[:100], "bytes": size}
    if format:
        shape["format"] = format[:50]
    if isinstance(payload, dict):
        shape["json"] = "object"
        shape["keys"] = _names(payload)
        for key in ("turns", "messages", "input", "items"):
            if isinstance(payload.get(key), list):
                shape[f"{key}_count"] = len(payload[key])
                shape[f"{key}_keys"] = _names(
                    k for item in payload[key][:50] if isinstance(item, dict) for k in item
                )
    elif isinstance(payload, list):
        shape["json"] = "array"
        shape["items"] = len(payload)
        shape["item_keys"] = _names(k for item in payload[:50] if isinstance(item, dict) for k in item)
    elif payload is not None:
        shape["json"] = type(payload).__name__
    return shape


def otlp_shape(
    request: dict[str, Any] | None, *, content_type: str, content_encoding: str, size: int
) -> dict[str, Any]:
    """The shape of an OTLP export (decoded to the OTLP/JSON shape, when it could be): its
    instrumentation scopes, span names, span attribute keys and span event names, never a
    value. Read straight from the request, so it shows what came whatever a reader made of it."""
    shape: dict[str, Any] = {
        "content_type": content_type[:100],
        "content_encoding": content_encoding[:20],
        "bytes": size,
    }
    if request is None:
        return shape
    scopes: list[Any] = []
    spans: list[dict[str, Any]] = []
    for rs in _dicts(request.get("resourceSpans", request.get("resource_spans"))):
        for ss in _dicts(rs.get("scopeSpans", rs.get("scope_spans"))):
            scope = ss.get("scope")
            scopes.append(scope.get("name") if isinstance(scope, dict) else None)
            spans.extend(_dicts(ss.get("spans")))
    shape["spans"] = len(spans)
    shape["scopes"] = _names(scopes)
    shape["span_names"] = _names(span.get("name") for span in spans)
    shape["attribute_keys"] = _names(key for span in spans for key in _keys(span.get("attributes")))
    events = [event for span in spans for event in _dicts(span.get("events"))]
    shape["event_names"] = _names(event.get("name") for event in events)
    shape["event_attribute_keys"] = _names(key for event in events for key in _keys(event.get("attributes")))
    return shape


def _storable(value: Any) -> Any:
    """The value (text, or a shape's lists and objects) with each character a database cannot
    keep replaced by U+FFFD, keys included."""
    if isinstance(value, str):
        return UNSTORABLE_TEXT.sub("\ufffd", value)
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(str(key)): _storable(item) for key, item in value.items()}
    return value


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _keys(attributes: Any) -> list[Any]:
    return [kv.get("key") for kv in _dicts(attributes)]
