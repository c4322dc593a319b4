"""The audit log is append-only and hash-chained, and `verify_audit` proves it."""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from checks import audit, review
from checks.models import AuditEvent, ChainScheme, Finding, SiteEvent
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


# --- a keyed chain, and its head kept outside the database -------------------------------


def _unkeyed(event: AuditEvent, previous: str) -> str:
    """The hash anyone with the table can compute: SHA-256 of the event's content."""
    body = {
        "project": event.project_id,
        "actor": event.actor_name,
        "verb": event.verb,
        "object": f"{event.object_type}:{event.object_id}",
        "before": event.before,
        "after": event.after,
        "at": event.created_at.isoformat(),
        "previous": previous,
    }
    encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


def _rewrite(events: list[AuditEvent], index: int, after: dict[str, Any], **also: Any) -> None:
    """Rewrites one event and every later one, each with a correctly recomputed unkeyed hash,
    as someone with write access to the database could."""
    previous = events[index - 1].hash if index else audit.GENESIS
    with tampering_with_the_audit_log():
        for n, event in enumerate(events[index:]):
            if n == 0:
                event.after = after
            new_hash = _unkeyed(event, previous)
            AuditEvent.objects.filter(pk=event.pk).update(
                after=event.after, previous_hash=previous, hash=new_hash, **also
            )
            previous = new_hash


@pytest.fixture
def headed(ingest: Any, alice: Any, bob: Any, django_capture_on_commit_callbacks: Any) -> list[AuditEvent]:
    """Three decisions written as the site writes them: committed, so each moves the head."""
    ingest("07")
    first, second = Finding.objects.order_by("id")
    with django_capture_on_commit_callbacks(execute=True):
        review.record_decision(finding=first, reviewer=alice, verdict="confirmed")
    with django_capture_on_commit_callbacks(execute=True):
        review.record_decision(finding=second, reviewer=bob, verdict="dismissed", reason="Other")
    with django_capture_on_commit_callbacks(execute=True):
        review.record_decision(finding=second, reviewer=alice, verdict="confirmed")
    return list(AuditEvent.objects.order_by("id"))


def test_a_chain_rewritten_with_recomputed_unkeyed_hashes_does_not_verify(decided: list[AuditEvent]) -> None:
    _rewrite(decided, 1, {"status": "confirmed", "by": "someone else"})
    report = audit.verify(decided[0].project)
    assert not report.ok and report.broken_at == decided[1].pk
    assert "does not match its hash" in report.reason
    with pytest.raises(CommandError, match="broken"):
        call_command("audit", "verify", stdout=StringIO())


def test_a_chain_rewritten_down_to_the_unkeyed_scheme_does_not_verify(headed: list[AuditEvent]) -> None:
    # Every event made unkeyed again, hashes recomputed: each link holds, but the last event
    # is no longer the head recorded outside the database.
    _rewrite(headed, 0, headed[0].after or {}, scheme=ChainScheme.SHA256)
    report = audit.verify(headed[0].project)
    assert not report.ok and report.broken_at == headed[-1].pk
    assert "recorded as the head" in report.reason


def test_an_unkeyed_event_after_keyed_ones_does_not_verify(decided: list[AuditEvent]) -> None:
    _rewrite(decided, 2, decided[2].after or {}, scheme=ChainScheme.SHA256)
    report = audit.verify(decided[0].project)
    assert report.broken_at == decided[2].pk and "unkeyed" in report.reason


def test_deleting_the_newest_event_fails_verify(headed: list[AuditEvent]) -> None:
    project = headed[0].project
    assert audit.verify(project).head == audit.HEAD_MATCHES
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=headed[-1].pk)._raw_delete(AuditEvent.objects.db)
    report = audit.verify(project)
    assert not report.ok and "the newest events were deleted" in report.reason
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit", "verify", "--project", "acme", stdout=out)
    assert f"chain broken at event {headed[-1].pk}: the newest events were deleted" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("verify_audit", stdout=StringIO())


def test_a_deletion_is_not_covered_up_by_the_next_event(
    headed: list[AuditEvent], alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=headed[-1].pk)._raw_delete(AuditEvent.objects.db)
    finding = Finding.objects.order_by("id").first()
    assert finding is not None
    with django_capture_on_commit_callbacks(execute=True):
        review.add_comment(finding=finding, author=alice, text="After the deletion.")
    assert audit.read_head(headed[0].project_id) == audit.Head(headed[-1].pk, headed[-1].hash)
    assert not audit.verify(headed[0].project).ok


def test_the_head_is_written_whole_after_each_commit(headed: list[AuditEvent]) -> None:
    path = audit.head_path(headed[0].project_id)
    written = json.loads(path.read_text())
    assert (written["event"], written["hash"]) == (headed[-1].pk, headed[-1].hash)
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]


def test_a_head_not_recorded_passes_and_is_said(decided: list[AuditEvent]) -> None:
    # decided's events were never committed (no on-commit callbacks ran): no head file.
    report = audit.verify(decided[0].project)
    assert report.ok and report.head == audit.HEAD_NOT_RECORDED
    out = StringIO()
    call_command("audit", "verify", "--project", "acme", stdout=out)
    assert "acme: 3 events, chain intact; HEAD NOT RECORDED" in out.getvalue()


def test_events_written_past_the_recorded_head_fail_verify(headed: list[AuditEvent], alice: Any) -> None:
    finding = Finding.objects.order_by("id").first()
    assert finding is not None
    review.add_comment(finding=finding, author=alice, text="Its head was never written.")
    report = audit.verify(headed[0].project)
    assert not report.ok and "runs past its recorded head" in report.reason
    assert report.broken_at == AuditEvent.objects.order_by("id").last().pk  # type: ignore[union-attr]


def test_events_from_before_the_key_still_verify_and_a_rewrite_of_them_does_not(
    project: Any, alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    previous = audit.GENESIS
    for n in range(2):  # as the unkeyed chain wrote them
        event = AuditEvent(
            project=project,
            actor_name="alice",
            verb="comment.added",
            object_type="comment",
            object_id=str(n),
            after={"text": f"old {n}"},
            previous_hash=previous,
            scheme=ChainScheme.SHA256,
        )
        event.hash = _unkeyed(event, previous)
        event.save()
        previous = event.hash
    with django_capture_on_commit_callbacks(execute=True):
        audit.record(project=project, actor=alice, verb="project.options_changed", target=project)
    report = audit.verify(project)
    assert report.ok and report.events == 3 and report.head == audit.HEAD_MATCHES
    old = list(AuditEvent.objects.order_by("id"))
    with tampering_with_the_audit_log():
        AuditEvent.objects.filter(pk=old[0].pk).update(after={"text": "rewritten"})
    assert audit.verify(project).broken_at == old[0].pk


def test_a_rotated_key_still_verifies_what_it_keyed(decided: list[AuditEvent], settings: Any) -> None:
    settings.RECEIPTS_AUDIT_KEY = "the-new-audit-key"
    assert not audit.verify(decided[0].project).ok  # written under the key derived from SECRET_KEY
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.RECEIPTS_AUDIT_KEY = ""
    settings.SECRET_KEY = "a-rotated-secret-key-" + "x" * 40
    assert audit.verify(decided[0].project).ok


def test_the_site_chain_is_verified_with_the_projects(
    alice: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        audit.record(project=None, actor=alice, verb="user.signed_in", target=alice)
    event = SiteEvent.objects.get()
    assert event.actor_name == "alice"
    assert audit.verify(None).ok and audit.verify(None).head == audit.HEAD_MATCHES
    out = StringIO()
    call_command("audit", "verify", stdout=out)
    assert "site: 1 events, chain intact, head matches" in out.getvalue()
    with tampering_with_the_audit_log():
        SiteEvent.objects.all()._raw_delete(SiteEvent.objects.db)
    out = StringIO()
    with pytest.raises(CommandError):
        call_command("audit", "verify", stdout=out)
    said = out.getvalue()
    assert f"site: chain broken at event {event.pk}: the newest events were deleted: the log is empty" in said
