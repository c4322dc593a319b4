"""API keys: `Authorization: Bearer <key>`, one project per key, looked up by prefix."""

from __future__ import annotations

import hmac
from datetime import timedelta
from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ..models import ApiKey, Project


class ProjectClient:
    """The caller behind an API key: a project, not a person."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, project: Project) -> None:
        self.project = project
        self.username = f"api:{project.slug}"

    def __str__(self) -> str:
        return self.username


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[ProjectClient, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != self.keyword.lower():
            return None
        secret = secret.strip()
        key = (
            ApiKey.objects.usable()
            .select_related("project")
            .filter(prefix=secret[: ApiKey.PREFIX_LENGTH])
            .first()
        )
        if key is None or not hmac.compare_digest(key.hashed, ApiKey.hash(secret)):
            raise exceptions.AuthenticationFailed(
                "The API key is not valid: it is unknown, revoked or expired. "
                "Create one with `python manage.py apikey create --project NAME`."
            )
        self._touch(key)
        return ProjectClient(key.project), key

    def authenticate_header(self, request: Request) -> str:
        return self.keyword

    @staticmethod
    def _touch(key: ApiKey) -> None:
        # Recording every use would turn each read into a write; once a minute is enough.
        now = timezone.now()
        if key.last_used_at is None or now - key.last_used_at > timedelta(minutes=1):
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)


def project_of(request: Any) -> Project | None:
    """The project an API key speaks for, or None for a signed-in person."""
    return request.auth.project if isinstance(request.auth, ApiKey) else None
