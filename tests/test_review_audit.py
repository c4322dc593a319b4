"""An object's history from the audit log, and `manage.py audit verify` naming the first
event that does not verify."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from checks import review
from checks.models import AuditEvent, Finding
from tests.conftest import tampering_with_the_audit_log

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(ingest: Any, alice: Any, bob: Any) -> Finding:
    ingest("01")
    finding = Finding.objects.get(severity="flag")
    review.assign(finding=finding, assignee=bob, actor=alice)
    review.record_decision(finding=finding, reviewer=bob, verdict="correction")
    correction = finding.corrections.get()
    review.edit_correction(correction=correction, editor=bob, text="I did not save it.")
    review.approve_correction(correction=correction, approver=alice)
    review.add_comment(finding=finding, author=alice, text="Fine now.")
    return finding


def test_a_findings_history_has_its_corrections_and_comments(client: Any, vic: Any, decided: Any) -> None:
    client.force_login(vic)
    response = client.get(f"/p/acme/history/finding/{decided.pk}")
    assert response.status_code == 200
    verbs = [e.verb for e in response.context["events"]]
    assert verbs == [
        "finding.assigned",
        "finding.confirmed",
        "correction.proposed",
        "correction.edited",
        "correction.approved",
        "comment.added",
    ]
    html = response.content.decode()
    assert "The project's audit log verifies: 6 events" in html
    assert "I did not save it." in html


def test_history_is_for_members_only(client: Any, olga: Any, decided: Any) -> None:
    client.force_login(olga)
    assert client.get(f"/p/acme/history/finding/{decided.pk}").status_code == 404


def test_audit_verify_passes_an_intact_chain(decided: Any) -> None:
    out = StringIO()
    call_command("audit", "verify", stdout=out)
    assert "acme: 6 events, chain intact" in out.getvalue()


def test_audit_verify_names_the_tampered_event(decided: Any) -> None:
    edited = AuditEvent.objects.get(verb="correction.edited")
    # What someone with database access might do: rewrite history in place.
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=edited.pk).update(after={"text": "I saved it."})
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit", "verify", "--project", "acme", stdout=out)
    said = out.getvalue()
    assert f"chain broken at event {edited.pk}" in said
    assert "bob correction.edited correction:" in said and "does not match its hash" in said


def test_audit_verify_names_the_event_after_a_deleted_one(decided: Any) -> None:
    events = list(AuditEvent.objects.order_by("id"))
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=events[2].pk)._raw_delete(AuditEvent.objects.db)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit", "verify", stdout=out)
    assert f"chain broken at event {events[3].pk}" in out.getvalue()
    assert "link to the previous event is broken" in out.getvalue()
    # The older command says the same.
    with pytest.raises(CommandError):
        call_command("verify_audit", stdout=StringIO())


def test_audit_show_lists_an_objects_events(decided: Any) -> None:
    out = StringIO()
    call_command("audit", "show", "--project", "acme", "--object", f"finding:{decided.pk}", stdout=out)
    lines = out.getvalue().splitlines()
    assert [line.split("\t")[3] for line in lines] == ["finding.assigned", "finding.confirmed"]
