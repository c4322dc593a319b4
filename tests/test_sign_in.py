"""One limiter for every sign-in path, counting each client apart, behind a proxy too."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from tests.conftest import _member

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.1"


@pytest.fixture
def root(db: Any) -> Any:
    return get_user_model().objects.create_superuser("root", password="password")


def _sign_in(client: Any, path: str, password: str, *, username: str = "root", **headers: str) -> Any:
    return client.post(path, {"username": username, "password": password}, **headers)


def test_the_admin_sign_in_is_paused_before_twenty_guesses_get_through(client: Any, root: Any) -> None:
    answers = [_sign_in(client, "/admin/login/", f"guess-{n}").status_code for n in range(20)]
    assert answers[0] == 200  # the form again: a wrong password
    assert 429 in answers and answers.index(429) <= 5, answers
    right = _sign_in(client, "/admin/login/", "password")
    assert right.status_code == 429 and int(right["Retry-After"]) > 0
    assert client.get("/admin/").status_code == 302  # still not signed in


def test_failures_on_one_sign_in_page_count_on_the_other(client: Any, settings: Any, root: Any) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        assert _sign_in(client, "/login/", "wrong").status_code == 200
    assert _sign_in(client, "/admin/login/", "password").status_code == 429


def test_behind_one_trusted_proxy_clients_are_told_apart(client: Any, settings: Any, root: Any) -> None:
    settings.RECEIPTS_TRUSTED_PROXY_HOPS = 1
    settings.LOGIN_MAX_FAILURES = 3
    for _ in range(3):
        # What a client writes into the header is to the left of what the proxy appends.
        forged = {"HTTP_X_FORWARDED_FOR": "198.51.100.9, 203.0.113.1", "REMOTE_ADDR": PROXY}
        assert _sign_in(client, "/admin/login/", "wrong", **forged).status_code == 200
    other_forgery = {"HTTP_X_FORWARDED_FOR": "192.0.2.50, 203.0.113.1", "REMOTE_ADDR": PROXY}
    assert _sign_in(client, "/admin/login/", "password", **other_forgery).status_code == 429
    elsewhere = {"HTTP_X_FORWARDED_FOR": "203.0.113.2", "REMOTE_ADDR": PROXY}
    assert _sign_in(client, "/admin/login/", "password", **elsewhere).status_code == 302


def test_without_a_trusted_proxy_a_forged_forwarded_for_is_ignored(
    client: Any, settings: Any, alice: Any
) -> None:
    assert settings.RECEIPTS_TRUSTED_PROXY_HOPS == 0  # the default: no proxy is trusted
    settings.LOGIN_MAX_FAILURES = 3
    for n in range(3):
        forged = {"HTTP_X_FORWARDED_FOR": f"203.0.113.{n}", "REMOTE_ADDR": "192.0.2.7"}
        assert _sign_in(client, "/login/", "wrong", username="alice", **forged).status_code == 200
    fresh = {"HTTP_X_FORWARDED_FOR": "203.0.113.99", "REMOTE_ADDR": "192.0.2.7"}
    assert _sign_in(client, "/login/", "password", username="alice", **fresh).status_code == 429


def test_guessing_from_many_addresses_is_stopped_but_not_where_the_user_signs_in(
    client: Any, settings: Any, alice: Any
) -> None:
    settings.LOGIN_MAX_FAILURES = 3
    settings.LOGIN_USER_MAX_FAILURES = 6
    home = {"REMOTE_ADDR": "192.0.2.1"}
    assert _sign_in(client, "/login/", "password", username="alice", **home).status_code == 302
    client.post("/logout/")
    # Six addresses, each under the per-address limit, together reach the username's ceiling.
    for n in range(6):
        guess = _sign_in(client, "/login/", "wrong", username="alice", REMOTE_ADDR=f"198.51.100.{n}")
        assert guess.status_code == 200
    new_place = {"REMOTE_ADDR": "198.51.100.77"}
    assert _sign_in(client, "/login/", "password", username="alice", **new_place).status_code == 429
    # Where alice signed in before, only that address's own failures count.
    assert _sign_in(client, "/login/", "password", username="alice", **home).status_code == 302
    # Another user is not affected at all.
    _member(None, "zoe", "viewer")
    assert _sign_in(client, "/login/", "password", username="zoe", **new_place).status_code == 302
