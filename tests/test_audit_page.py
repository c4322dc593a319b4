"""The project's audit log page: every event newest first, filtered by who acted and the kind
of event, paged by event id, with the chain's state; members only; blind double review
hides there what it hides everywhere."""

from __future__ import annotations

import re
from typing import Any

import pytest

from checks import administration, review
from checks.models import AuditEvent, Finding, Project
from checks.views import audit_log as page

pytestmark = pytest.mark.django_db

URL = "/p/acme/audit"


def event_ids(response: Any) -> list[int]:
    assert response.status_code == 200, response.content[:500]
    return [int(n) for n in re.findall(r'<tr id="event-(\d+)"', response.content.decode())]


@pytest.fixture
def decided(bob: Any, alice: Any, ingest: Any, django_capture_on_commit_callbacks: Any) -> Finding:
    """A finding bob confirmed, after alice assigned it to him (the chain's head written as
    each commits)."""
    finding = Finding.objects.get(conversation=ingest("01"))
    with django_capture_on_commit_callbacks(execute=True):
        review.assign(finding=finding, assignee=bob, actor=alice)
    with django_capture_on_commit_callbacks(execute=True):
        review.record_decision(finding=finding, reviewer=bob, verdict="confirmed", reason="")
    return finding


def test_members_read_the_whole_log_newest_first(client: Any, vic: Any, decided: Finding) -> None:
    client.force_login(vic)
    ids = event_ids(client.get(URL))
    expected = list(
        AuditEvent.objects.filter(project=decided.project).order_by("-id").values_list("id", flat=True)
    )
    assert ids == expected and len(ids) >= 2
    html = client.get(URL).content.decode()
    assert "<code>finding.confirmed</code>" in html and f'href="/p/acme/history/finding/{decided.pk}"' in html


def test_it_filters_by_who_and_by_kind(client: Any, alice: Any, decided: Finding) -> None:
    client.force_login(alice)
    bobs = AuditEvent.objects.filter(project=decided.project, actor_name="bob")
    assert event_ids(client.get(URL, {"actor": "bob"})) == list(
        bobs.order_by("-id").values_list("id", flat=True)
    )
    confirmed = event_ids(client.get(URL, {"kind": "finding.confirmed"}))
    assert [AuditEvent.objects.get(pk=i).verb for i in confirmed] == ["finding.confirmed"]
    findings = event_ids(client.get(URL, {"kind": "finding"}))
    verbs = {AuditEvent.objects.get(pk=i).verb for i in findings}
    assert verbs == {"finding.assigned", "finding.confirmed"}
    assert event_ids(client.get(URL, {"actor": "nobody-at-all"})) == []


def test_it_pages_by_event_id(client: Any, alice: Any, bob: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page, "PAGE_SIZE", 2)
    project = Project.objects.get(slug="acme")
    for n in range(5):
        administration.update_project_options(
            project=project, user=alice, options={"evidence": {"min_digits": 4 + n}}
        )
    client.force_login(alice)
    seen: list[int] = []
    query: dict[str, str] = {}
    while True:
        response = client.get(URL, query)
        seen += event_ids(response)
        after = re.search(r"after=(\d+)", response.content.decode())
        if not after:
            break
        query = {"after": after.group(1)}
    assert seen == list(
        AuditEvent.objects.filter(project=project).order_by("-id").values_list("id", flat=True)
    )
    assert len(seen) >= 5


def test_it_says_whether_the_newest_event_is_the_recorded_head(
    client: Any, alice: Any, decided: Finding
) -> None:
    client.force_login(alice)
    html = client.get(URL).content.decode()
    newest = AuditEvent.objects.filter(project=decided.project).order_by("-id").first()
    assert newest is not None
    assert f"The newest event, {newest.pk}, is the head recorded outside the database." in html


def test_the_whole_chain_is_verified_on_request(client: Any, alice: Any, decided: Finding) -> None:
    client.force_login(alice)
    response = client.get(f"{URL}/verify", headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html and "The whole chain verifies" in html
    assert "The whole chain verifies" in client.get(f"{URL}/verify").content.decode()


def test_a_non_member_gets_404(client: Any, olga: Any, decided: Finding) -> None:
    client.force_login(olga)
    assert client.get(URL).status_code == 404
    assert client.get(f"{URL}/verify").status_code == 404
    client.logout()
    assert client.get(URL).status_code == 302  # to the sign-in page


def test_blind_double_review_hides_another_reviewers_verdict(
    client: Any, alice: Any, bob: Any, ingest: Any
) -> None:
    project = Project.objects.get(slug="acme")
    administration.set_double_review(project=project, actor=alice, enabled=True)
    finding = Finding.objects.get(conversation=ingest("01"))
    review.record_decision(finding=finding, reviewer=bob, verdict="dismissed", reason="The user supplied it")
    client.force_login(alice)
    html = client.get(URL).content.decode()
    assert "<code>finding.dismissed</code>" not in html and "The user supplied it" not in html
    client.force_login(bob)
    assert "<code>finding.dismissed</code>" in client.get(URL).content.decode()


def test_a_nul_character_in_a_filter_is_dropped_not_a_500(client: Any, alice: Any, decided: Finding) -> None:
    client.force_login(alice)
    assert event_ids(client.get(URL, {"actor": "bob\x00", "kind": "finding.confirmed\x00"}))
