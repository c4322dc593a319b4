"""What an API key may do (its scopes) and how often (its rate)."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from ..models import ApiKey

log = logging.getLogger(__name__)


def needs_scope(scope: str, **by_method: str) -> type[BasePermission]:
    """A permission class: an API key must carry ``scope`` (or, for a method named in
    ``by_method``, that method's scope); a signed-in member passes, the view checks membership."""

    class KeyHasScope(BasePermission):
        message = (
            "This API key lacks the scope this request needs; make a key with it on the project's Keys page."
        )

        def has_permission(self, request: Request, view: Any) -> bool:
            if isinstance(request.auth, ApiKey):
                return by_method.get(request.method or "", scope) in (request.auth.scopes or [])
            return bool(request.user and request.user.is_authenticated)

    KeyHasScope.__name__ = f"KeyHas{scope.title()}Scope"
    return KeyHasScope


def needs_any_scope(*scopes: str) -> type[BasePermission]:
    """A permission class: an API key must carry one of ``scopes``; a signed-in member passes,
    the view checks membership."""

    class KeyHasAnyScope(BasePermission):
        message = (
            f"This API key lacks the scope this request needs (one of: {', '.join(scopes)}); make a key "
            "with it on the project's Keys page."
        )

        def has_permission(self, request: Request, view: Any) -> bool:
            if isinstance(request.auth, ApiKey):
                return any(scope in (request.auth.scopes or []) for scope in scopes)
            return bool(request.user and request.user.is_authenticated)

    KeyHasAnyScope.__name__ = "KeyHas" + "Or".join(scope.title() for scope in scopes) + "Scope"
    return KeyHasAnyScope


class ApiKeyRateThrottle(SimpleRateThrottle):
    """Requests per key (or per signed-in user); over the rate, 429 with Retry-After.

    The counts live in the cache (Redis in production). If the cache cannot be reached the
    request goes through uncounted: a rate limit must not stop conversations from being
    stored while the database can take them."""

    scope = "api_key"

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except Exception:  # the cache backend's own connection errors, whatever the backend
            log.warning("rate limit not counted: the cache is unavailable", exc_info=True)
            return True

    def get_rate(self) -> str:
        return settings.RECEIPTS_API_RATE

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiKey):
            return f"throttle:key:{request.auth.pk}"
        if request.user and request.user.is_authenticated:
            return f"throttle:user:{request.user.pk}"
        return None
