"""Sessions end, passwords are checked, and cookies are HTTP-only (and secure behind TLS)."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone


def test_an_expired_session_signs_the_reviewer_out(client: Any, project: Any, alice: Any) -> None:
    client.force_login(alice)
    queue = reverse("queue", args=[project.slug])
    assert client.get(queue).status_code == 200
    session = Session.objects.get(session_key=client.session.session_key)
    lifetime = session.expire_date - timezone.now()
    assert abs(lifetime.total_seconds() - settings.SESSION_COOKIE_AGE) < 60
    Session.objects.filter(pk=session.pk).update(expire_date=timezone.now() - timedelta(seconds=1))
    response = client.get(queue)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("password", ["password", "short", "12345678", "qwertyuiop"])
def test_weak_passwords_are_refused(password: str) -> None:
    with pytest.raises(ValidationError):
        validate_password(password)


def test_a_long_uncommon_password_is_accepted() -> None:
    validate_password("violet-harbour-kettle-91")


def test_cookies_are_secure_and_http_only_behind_tls() -> None:
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, "
        "s.SECURE_PROXY_SSL_HEADER)"
    )
    env = {**os.environ, "HTTPS": "true", "DJANGO_SETTINGS_MODULE": "grounding_site.settings"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert out[:3] == ["True", "True", "True"], out
    assert "HTTP_X_FORWARDED_PROTO" in " ".join(out[3:])
