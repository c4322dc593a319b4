"""The audit log is append-only and hash-chained, and `verify_audit` proves it."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from checks import audit, review
from checks.models import AuditEvent, Finding
from tests.conftest import tampering_with_the_audit_log

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(ingest: Any, alice: Any, bob: Any) -> list[AuditEvent]:
    ingest("07")
    first, second = Finding.objects.order_by("id")
    review.record_decision(finding=first, reviewer=alice, verdict="confirmed")
    review.record_decision(finding=second, reviewer=bob, verdict="dismissed", reason="Other")
    review.record_decision(finding=second, reviewer=alice, verdict="confirmed")
    return list(AuditEvent.objects.order_by("id"))


def test_each_event_links_to_the_one_before(decided: list[AuditEvent]) -> None:
    assert decided[0].previous_hash == audit.GENESIS
    assert [e.previous_hash for e in decided[1:]] == [e.hash for e in decided[:-1]]
    assert audit.verify(decided[0].project).ok


def test_events_cannot_be_changed_or_deleted_through_the_model(decided: list[AuditEvent]) -> None:
    event = decided[0]
    event.verb = "finding.dismissed"
    with pytest.raises(ValueError, match="append-only"):
        event.save()
    with pytest.raises(ValueError, match="append-only"):
        event.delete()


def test_verify_audit_reports_an_intact_chain(decided: list[AuditEvent]) -> None:
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert "Acme support: 3 events, chain intact" in out.getvalue()


def test_on_postgresql_the_database_refuses_changes_to_the_log(decided: list[AuditEvent]) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the refusal is a PostgreSQL trigger; .ci/run runs this on PostgreSQL")
    from django.db import DatabaseError, transaction

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=decided[0].pk).update(verb="finding.dismissed")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=decided[0].pk)._raw_delete(AuditEvent.objects.db)


def test_verify_audit_finds_an_edited_event(decided: list[AuditEvent]) -> None:
    # An edit made behind the model's back, straight in the table.
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=decided[1].pk).update(after={"status": "confirmed"})
    out = StringIO()
    with pytest.raises(CommandError, match="broken"):
        call_command("verify_audit", stdout=out)
    assert f"chain broken at event {decided[1].pk}" in out.getvalue()


def test_verify_audit_finds_a_deleted_event(decided: list[AuditEvent]) -> None:
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=decided[1].pk)._raw_delete(AuditEvent.objects.db)
    report = audit.verify(decided[0].project)
    assert report.broken_at == decided[2].pk
    assert "link" in report.reason


def test_the_admin_cannot_change_or_delete_audit_events(client: Any, decided: list[AuditEvent]) -> None:
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="password")
    client.force_login(root)
    url = f"/admin/checks/auditevent/{decided[0].pk}/change/"
    assert client.get(url).status_code == 200  # readable
    client.post(url, {"verb": "finding.dismissed"})
    client.post(f"/admin/checks/auditevent/{decided[0].pk}/delete/", {"post": "yes"})
    assert AuditEvent.objects.get(pk=decided[0].pk).verb == decided[0].verb
    assert audit.verify(decided[0].project).ok
