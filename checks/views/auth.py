"""Signing in: one limiter for every sign-in path (the site's page and the Django admin's), and
each sign-in, failed sign-in and sign-out written to the site's audit log.

Failures are counted where Django reports them (``user_login_failed``), whichever form asked;
a sign-in page refuses a locked attempt before it checks a password (``limit_sign_in``,
around both views in grounding_site/urls.py), with 429 and Retry-After.

Two counts, each over LOGIN_LOCKOUT_SECONDS from its first failure:

- per username and client address: LOGIN_MAX_FAILURES failures pause that pair. Only someone
  at that address can cause it, so guessing from one place is slow and nobody else is locked
  out, even behind a proxy (RECEIPTS_TRUSTED_PROXY_HOPS tells the clients apart).
- per username, from every address: past LOGIN_USER_MAX_FAILURES, guessing spread over many
  addresses (each under the pair limit) is stopped, but only for addresses the user has not
  signed in from in the last KNOWN_SECONDS. A count per username alone would let anyone lock
  any user out by failing on purpose; this way they can keep the user off new addresses at
  worst, never off the ones the user signs in from.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render
from django.views.decorators.debug import sensitive_post_parameters

from .. import audit

log = logging.getLogger(__name__)

KNOWN_SECONDS = 30 * 24 * 3600  # how long an address the user signed in from stays known


def client_address(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or behind RECEIPTS_TRUSTED_PROXY_HOPS proxies the
    right-most X-Forwarded-For entry they did not write (the one the outermost proxy saw).
    Entries to the left of it are the client's to forge, and are never read."""
    if request is None:
        return ""
    remote = str(request.META.get("REMOTE_ADDR", ""))
    hops = settings.RECEIPTS_TRUSTED_PROXY_HOPS
    if hops <= 0:
        return remote
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    forwarded = [part for part in forwarded if part]
    if len(forwarded) < hops:
        return remote  # it did not come through every proxy: nothing in the header is theirs
    candidate = forwarded[-hops]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote


def _username(value: Any) -> str:
    return str(value or "").strip().lower()[:150]


def _key(kind: str, *parts: str) -> str:
    return f"login-{kind}:" + hashlib.sha256("|".join(parts).encode()).hexdigest()


def _read(key: str) -> int:
    try:
        return int(cache.get(key, 0))
    except Exception:  # the cache is down: sign-in still works, unlimited
        log.warning("sign-in failures not read: the cache is unavailable", exc_info=True)
        return 0


def _count(key: str) -> None:
    try:
        cache.add(key, 0, settings.LOGIN_LOCKOUT_SECONDS)
        cache.incr(key)
    except Exception:
        log.warning("sign-in failure not counted: the cache is unavailable", exc_info=True)


def is_locked(username: str, address: str) -> bool:
    if _read(_key("failures", username, address)) >= settings.LOGIN_MAX_FAILURES:
        return True
    if _read(_key("user-failures", username)) < settings.LOGIN_USER_MAX_FAILURES:
        return False
    return not _read(_key("known", username, address))


def limit_sign_in(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """A sign-in view that answers 429 instead while the username is paused for this client."""

    @wraps(view)
    @sensitive_post_parameters()
    def limited(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method == "POST":
            username = _username(request.POST.get(get_user_model().USERNAME_FIELD))
            if is_locked(username, client_address(request)):
                minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
                response = render(
                    request,
                    "registration/login.html",
                    {"locked": f"Too many failed sign-ins. Try again in {minutes} minutes."},
                    status=429,
                )
                response["Retry-After"] = str(settings.LOGIN_LOCKOUT_SECONDS)
                return response
        return view(request, *args, **kwargs)

    return limited


# --- what Django reports, counted and audited ---------------------------------------------
# These go to the site's chain: a sign-in belongs to no project (models.SiteEvent).


@receiver(user_login_failed, dispatch_uid="receipts-sign-in-failed")
def _sign_in_failed(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None = None, **_: Any
) -> None:
    username = _username(credentials.get(get_user_model().USERNAME_FIELD))
    address = client_address(request)
    _count(_key("failures", username, address))
    _count(_key("user-failures", username))
    audit.record(
        project=None,
        actor=None,
        verb="user.sign_in_failed",
        target=None,
        after={"username": username, "address": address, "path": getattr(request, "path", "")},
    )


@receiver(user_logged_in, dispatch_uid="receipts-signed-in")
def _signed_in(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    username, address = _username(user.get_username()), client_address(request)
    try:
        cache.delete(_key("failures", username, address))
        cache.set(_key("known", username, address), 1, KNOWN_SECONDS)
    except Exception:
        log.warning("sign-in not noted: the cache is unavailable", exc_info=True)
    audit.record(
        project=None,
        actor=user,
        verb="user.signed_in",
        target=user,
        after={"address": address, "path": getattr(request, "path", "")},
    )


@receiver(user_logged_out, dispatch_uid="receipts-signed-out")
def _signed_out(sender: Any, request: HttpRequest | None, user: Any, **_: Any) -> None:
    if user is None:  # signing out without being signed in
        return
    audit.record(
        project=None,
        actor=user,
        verb="user.signed_out",
        target=user,
        after={"address": client_address(request)},
    )
