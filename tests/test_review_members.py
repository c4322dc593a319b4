"""The members page: admins add reviewers and viewers, change roles and remove people; the
last admin stays; every change is audited."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from checks.models import AuditEvent, Finding, Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db: Any) -> Any:
    return get_user_model().objects.create_user(username="carol", password="password")


def test_every_member_sees_who_is_on_the_project(client: Any, alice: Any, vic: Any) -> None:
    client.force_login(vic)
    response = client.get("/p/acme/members")
    assert response.status_code == 200
    html = response.content.decode()
    assert "alice" in html and "Change role" not in html


def test_an_admin_adds_a_reviewer_by_username(client: Any, alice: Any, carol: Any) -> None:
    client.force_login(alice)
    response = client.post("/p/acme/members", {"username": "carol", "role": "reviewer"})
    assert response.status_code == 302
    membership = Membership.objects.get(user=carol)
    assert membership.role == "reviewer"
    event = AuditEvent.objects.get()
    assert (event.verb, event.after) == ("member.added", {"user": "carol", "role": "reviewer"})
    again = client.post("/p/acme/members", {"username": "carol", "role": "viewer"})
    assert again.status_code == 400 and "already a member" in again.content.decode()
    unknown = client.post("/p/acme/members", {"username": "nobody", "role": "viewer"})
    assert unknown.status_code == 400 and "No user is called" in unknown.content.decode()


def test_an_admin_changes_a_role_and_removes_someone(client: Any, alice: Any, bob: Any, ingest: Any) -> None:
    ingest("01")
    Finding.objects.filter(severity="flag").update(assignee=bob)
    client.force_login(alice)
    bob_membership = Membership.objects.get(user=bob)
    client.post(f"/p/acme/members/{bob_membership.pk}/role", {"role": "viewer"})
    assert Membership.objects.get(user=bob).role == "viewer"
    # Remove asks first, on a page that says what removing does; nothing changes until then.
    asked = client.post(f"/p/acme/members/{bob_membership.pk}/remove").content.decode()
    assert "Remove bob from Acme support?" in asked and 'name="confirm" value="yes"' in asked
    assert "open finding" in asked and Membership.objects.filter(user=bob).exists()
    client.post(f"/p/acme/members/{bob_membership.pk}/remove", {"confirm": "yes"})
    assert not Membership.objects.filter(user=bob).exists()
    assert not Finding.objects.filter(assignee=bob).exists()  # his open findings go back to the pool
    verbs = list(AuditEvent.objects.order_by("id").values_list("verb", flat=True))
    assert verbs == ["member.role_changed", "member.removed"]
    assert AuditEvent.objects.get(verb="member.removed").before == {"user": "bob", "role": "viewer"}


def test_the_last_admin_cannot_be_removed_or_demoted(client: Any, alice: Any, bob: Any) -> None:
    client.force_login(alice)
    mine = Membership.objects.get(user=alice)
    response = client.post(f"/p/acme/members/{mine.pk}/remove", {"confirm": "yes"}, follow=True)
    assert "last admin cannot be removed" in response.content.decode()
    client.post(f"/p/acme/members/{mine.pk}/role", {"role": "reviewer"})
    assert Membership.objects.get(user=alice).role == "admin"
    assert not AuditEvent.objects.exists()
    # With a second admin, the first may step down.
    client.post(f"/p/acme/members/{Membership.objects.get(user=bob).pk}/role", {"role": "admin"})
    client.post(f"/p/acme/members/{mine.pk}/role", {"role": "reviewer"})
    assert Membership.objects.get(user=alice).role == "reviewer"


def test_only_admins_change_members(client: Any, alice: Any, bob: Any, olga: Any, carol: Any) -> None:
    target = Membership.objects.get(user=alice)
    client.force_login(bob)
    assert client.post("/p/acme/members", {"username": "carol", "role": "admin"}).status_code == 403
    assert client.post(f"/p/acme/members/{target.pk}/role", {"role": "viewer"}).status_code == 403
    assert client.post(f"/p/acme/members/{target.pk}/remove").status_code == 403
    client.force_login(olga)
    assert client.get("/p/acme/members").status_code == 404
    assert client.post(f"/p/acme/members/{target.pk}/remove").status_code == 404
    assert Membership.objects.filter(project__slug="acme").count() == 2 and not AuditEvent.objects.exists()


def _invite(client: Any, role: str = "reviewer", note: str = "Dana, the new auditor") -> str:
    page = client.post("/p/acme/members/invite", {"role": role, "note": note}).content.decode()
    link = re.search(r'value="(http[^"]+/invite/[^"]+/)"', page)
    assert link is not None, page
    return link.group(1).split("testserver", 1)[1]


def test_someone_with_no_account_joins_by_an_invitation_link_that_works_once(client: Any, alice: Any) -> None:
    from django.contrib.auth import get_user_model

    from checks.models import Invitation

    client.force_login(alice)
    path = _invite(client)
    assert "Dana, the new auditor" in client.get("/p/acme/members").content.decode()
    client.logout()

    # A password the validators refuse is a 400 naming the fix; nothing is made.
    weak = client.post(path, {"username": "dana", "password": "123"})
    assert weak.status_code == 400 and "too short" in weak.content.decode()
    assert not get_user_model().objects.filter(username="dana").exists()

    joined = client.post(path, {"username": "dana", "password": "a long enough passphrase 42"})
    assert joined.status_code == 302 and joined["Location"] == "/p/acme/"
    dana = get_user_model().objects.get(username="dana")
    assert Membership.objects.get(user=dana).role == "reviewer"
    assert client.get("/p/acme/").status_code == 200  # signed in as dana
    verbs = list(AuditEvent.objects.order_by("id").values_list("verb", flat=True))
    assert verbs == ["member.invited", "member.joined"]
    assert Invitation.objects.get().accepted_by == dana

    # Used once: the link is gone for anyone after.
    client.logout()
    assert client.get(path).status_code == 410
    assert client.post(path, {"username": "eve", "password": "another long passphrase 42"}).status_code == 410
    assert not get_user_model().objects.filter(username="eve").exists()


def test_an_invitation_can_be_revoked_and_only_admins_invite(client: Any, alice: Any, bob: Any) -> None:
    client.force_login(bob)
    assert client.post("/p/acme/members/invite", {"role": "admin"}).status_code == 403
    client.force_login(alice)
    path = _invite(client, role="viewer")
    from checks.models import Invitation

    invitation = Invitation.objects.get()
    client.post(f"/p/acme/invitations/{invitation.pk}/revoke")
    client.logout()
    assert client.get(path).status_code == 410
    assert client.get("/invite/not-a-token/").status_code == 410
