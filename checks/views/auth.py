"""Signing in, with a pause after repeated failures for one username from one address."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

log = logging.getLogger(__name__)


def _key(request: HttpRequest) -> str:
    who = f"{request.POST.get('username', '').strip().lower()}|{request.META.get('REMOTE_ADDR', '')}"
    return "login-failures:" + hashlib.sha256(who.encode()).hexdigest()


class LoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        key = _key(request)
        if _failures(key) >= settings.LOGIN_MAX_FAILURES:
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            response = render(
                request,
                "registration/login.html",
                {"locked": f"Too many failed sign-ins. Try again in {minutes} minutes."},
                status=429,
            )
            response["Retry-After"] = str(settings.LOGIN_LOCKOUT_SECONDS)
            return response
        response = super().post(request, *args, **kwargs)
        try:
            if response.status_code == 200:  # the form came back: the password was wrong
                cache.add(key, 0, settings.LOGIN_LOCKOUT_SECONDS)
                cache.incr(key)
            else:
                cache.delete(key)
        except Exception:  # the cache is down: sign-in still works, uncounted
            log.warning("sign-in failures not counted: the cache is unavailable", exc_info=True)
        return response


def _failures(key: str) -> int:
    try:
        return int(cache.get(key, 0))
    except Exception:
        log.warning("sign-in failures not read: the cache is unavailable", exc_info=True)
        return 0
