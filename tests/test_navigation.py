"""The project's navigation: every page is reachable from every other, by role; the API docs
and the site link to each other; 403 and 404 are pages of the site."""

from __future__ import annotations

import re
from typing import Any

import pytest

from checks.models import Membership

pytestmark = pytest.mark.django_db

EVERY_MEMBER = {
    "Queue": "/p/acme/",
    "Conversations": "/p/acme/conversations/",
    "Overview": "/p/acme/overview",
    "Exports": "/p/acme/exports",
    "Agreement": "/p/acme/agreement",
    "Audit log": "/p/acme/audit",
    "Members": "/p/acme/members",
    "Webhooks": "/p/acme/webhooks",
    "Refusals": "/p/acme/refusals",
}
ADMINS_ONLY = {"API keys": "/p/acme/keys", "Settings": "/p/acme/settings"}


def project_links(html: str) -> dict[str, str]:
    """The project navigation's links, by their text."""
    nav = re.search(r'<nav class="projectnav"[^>]*>(.*?)</nav>', html, re.S)
    assert nav, "no project navigation on the page"
    return {text: href for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', nav.group(1))}


@pytest.mark.parametrize("who", ["alice", "bob", "vic"])
def test_every_member_finds_every_page_their_role_opens(client: Any, request: Any, who: str) -> None:
    user = request.getfixturevalue(who)
    client.force_login(user)
    links = project_links(client.get("/p/acme/").content.decode())
    is_admin = who == "alice"
    assert links == {**EVERY_MEMBER, **(ADMINS_ONLY if is_admin else {})}
    for text, href in links.items():
        assert client.get(href).status_code == 200, text


def test_the_admin_pages_refuse_other_roles_with_a_page_of_the_site(client: Any, bob: Any) -> None:
    client.force_login(bob)
    response = client.get("/p/acme/settings")
    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="topbar"' in html and "Only a project admin can change its checker options." in html


def test_the_current_page_is_marked_in_the_navigation(client: Any, alice: Any) -> None:
    client.force_login(alice)
    html = client.get("/p/acme/audit").content.decode()
    assert re.search(r'href="/p/acme/audit" aria-current="page">Audit log<', html)
    assert html.count('aria-current="page"') == 1


def test_a_404_is_a_page_of_the_site_that_reveals_no_project(client: Any, olga: Any, alice: Any) -> None:
    client.force_login(olga)
    response = client.get("/p/acme/conversations/")
    assert response.status_code == 404
    html = response.content.decode()
    assert 'class="topbar"' in html and "Nothing here" in html
    assert "Acme support" not in html


def test_the_api_docs_and_the_site_link_to_each_other(client: Any, alice: Any) -> None:
    client.force_login(alice)
    assert 'href="/api/v1/docs"' in client.get("/p/acme/").content.decode()
    docs = client.get("/api/v1/docs").content.decode()
    assert 'href="/"' in docs and "swagger-ui" in docs


def test_the_first_admins_history_link_opens(client: Any, alice: Any) -> None:
    """The first admin's membership was made with the project, before anything was logged:
    its history is empty, not missing."""
    client.force_login(alice)
    membership = Membership.objects.get(user=alice)
    html = client.get("/p/acme/members").content.decode()
    link = f"/p/acme/history/membership/{membership.pk}"
    assert link in html
    response = client.get(link)
    assert response.status_code == 200
    assert "Nothing recorded for this object yet." in response.content.decode()


def test_an_unknown_objects_history_is_still_404(client: Any, alice: Any, olga: Any) -> None:
    client.force_login(alice)
    elsewhere = Membership.objects.get(user=olga)
    assert client.get(f"/p/acme/history/membership/{elsewhere.pk}").status_code == 404
    assert client.get("/p/acme/history/membership/999999").status_code == 404


def test_a_missing_turn_reads_in_the_site_s_words_not_the_framework_s(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.get("/p/acme/turns/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Nothing here" in html and "matches the given query" not in html
