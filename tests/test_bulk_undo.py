"""Bulk actions ask once, saying how many findings they will change, and can be undone for a
while: each undo is audited, restores each finding's status or assignee exactly, and leaves
alone (and names) a finding decided again since."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest

from checks import audit, review
from checks.models import AuditEvent, Decision, Finding, FindingStatus, Turn
from checks.views import queue
from tests.conftest import _member

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(ingest: Any) -> dict[str, Any]:
    return {name: ingest(name) for name in ("01", "05", "07", "09")}


def _state() -> dict[int, tuple[str, Any]]:
    return {f.pk: (f.status, f.assignee_id) for f in Finding.objects.all()}


def _confirm_form(html: str) -> dict[str, Any]:
    """The fields of the confirm page's form, as a browser would send them on its button."""
    start = html.index('class="bulkgo"')
    form = html[start : html.index("</form>", start)]
    data: dict[str, Any] = {}
    for name, value in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', form):
        if name != "csrfmiddlewaretoken":
            data.setdefault(name, []).append(unescape(value))
    button = re.search(r'<button type="submit" name="action" value="(\w+)"', form)
    data["action"] = button.group(1)  # type: ignore[union-attr]
    return data


def test_the_queue_asks_first_and_says_how_many_findings_will_change(
    client: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    already = Finding.objects.filter(severity="flag", checker="action_claims").first()
    review.record_decision(finding=already, reviewer=bob, verdict="confirmed")  # type: ignore[arg-type]
    before = _state()
    client.force_login(bob)
    query = "status=all&checker=action_claims"
    response = client.post(
        "/p/acme/bulk", {"preview": "1", "action": "confirmed", "scope": "all", "query": query}
    )
    assert response.status_code == 200
    matching = Finding.objects.filter(checker="action_claims", severity="flag")
    assert response.context["changes"] == matching.count() - 1  # the one confirmed already stays
    assert _state() == before and Decision.objects.count() == 1  # asking changes nothing
    html = response.content.decode()
    changing = matching.count() - 1
    findings = f"finding{'s' if changing != 1 else ''}"
    assert f"Confirm <strong>{changing}</strong> {findings}" in html
    assert "checker: <strong>action_claims</strong>" in html

    response = client.post("/p/acme/bulk", _confirm_form(html))
    assert response.status_code == 302
    assert set(matching.values_list("status", flat=True)) == {FindingStatus.CONFIRMED}
    assert Decision.objects.count() == matching.count()
    page = client.get(response["Location"]).content.decode()
    assert f"{changing} {findings} confirmed; 1 skipped" in page and "data-undo" in page


def test_the_count_of_a_selection_leaves_out_what_another_reviewer_holds(
    client: Any, alice: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    turn = Turn.objects.get(conversation=flagged["07"])  # two findings on one turn
    review.hold(findings=Finding.objects.filter(turn=turn)[:1], user=alice)
    client.force_login(bob)
    response = client.post(
        "/p/acme/bulk", {"preview": "1", "action": "confirmed", "turn": [turn.pk], "query": ""}
    )
    assert response.context["changes"] == Finding.objects.filter(turn=turn).count() - 1
    assert "on the 1 selected turn" in response.content.decode()


def test_past_the_cap_the_page_says_the_count_is_made_when_it_runs(
    client: Any, bob: Any, flagged: dict[str, Any], monkeypatch: Any
) -> None:
    monkeypatch.setattr(queue, "COUNT_CAP", 2)
    client.force_login(bob)
    response = client.post(
        "/p/acme/bulk",
        {"preview": "1", "action": "assign", "assignee": "bob", "scope": "all", "query": "severity=all"},
    )
    html = response.content.decode()
    assert response.context["over_cap"] and "<strong>2+</strong>" in html
    assert "the exact number is counted as the action runs" in html
    assert not AuditEvent.objects.exists()


def test_undo_restores_each_findings_status_and_is_audited(
    client: Any, alice: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    dismissed = Finding.objects.filter(severity="flag").order_by("id").first()
    review.record_decision(finding=dismissed, reviewer=alice, verdict="dismissed", reason="Other")  # type: ignore[arg-type]
    before = _state()
    decisions_before = set(Decision.objects.values_list("pk", flat=True))
    client.force_login(bob)
    client.post("/p/acme/bulk", {"action": "confirmed", "scope": "all", "query": "status=all"})
    assert {s for s, _ in _state().values()} == {FindingStatus.CONFIRMED} | (
        {FindingStatus.OPEN} if Finding.objects.filter(severity="info").exists() else set()
    )
    page = client.get("/p/acme/")
    (offer,) = page.context["undo_offers"]
    # One banner: what was done stands beside its Undo button, not twice.
    html = page.content.decode()
    assert html.count(offer["said"]) == 1 and 'class="flash" role="status"' not in html

    response = client.post("/p/acme/bulk", {"action": "undo", "batch": offer["batch"], "query": ""})
    assert response.status_code == 302
    assert _state() == before  # the dismissed one dismissed again, the open ones open
    assert set(Decision.objects.values_list("pk", flat=True)) == decisions_before
    undone = AuditEvent.objects.filter(verb="finding.decision_undone")
    flags = set(Finding.objects.filter(severity="flag").values_list("pk", flat=True))
    assert undone.count() == len([f for f in flags if before[f][0] != FindingStatus.CONFIRMED])
    event = undone.get(object_id=str(dismissed.pk))  # type: ignore[union-attr]
    assert (event.before["status"], event.after["status"], event.actor_name) == (
        "confirmed",
        "dismissed",
        "bob",
    )
    assert audit.verify(project=dismissed.project).ok  # type: ignore[union-attr]
    assert not client.get("/p/acme/").context["undo_offers"]

    # Once only.
    response = client.post(
        "/p/acme/bulk", {"action": "undo", "batch": offer["batch"], "query": ""}, follow=True
    )
    assert "already undone" in response.content.decode()
    assert _state() == before


def test_undo_leaves_a_finding_decided_again_since_and_names_it(
    client: Any, alice: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    client.force_login(bob)
    client.post("/p/acme/bulk", {"action": "confirmed", "scope": "all", "query": "checker=action_claims"})
    batch = client.get("/p/acme/").context["undo_offers"][0]["batch"]
    again = Finding.objects.filter(checker="action_claims").order_by("id").first()
    review.record_decision(finding=again, reviewer=alice, verdict="dismissed", reason="Other")  # type: ignore[arg-type]

    response = client.post("/p/acme/bulk", {"action": "undo", "batch": batch, "query": ""}, follow=True)
    html = unescape(response.content.decode())
    assert "alice decided it again at" in html and "left as they decided" in html
    assert Finding.objects.get(pk=again.pk).status == FindingStatus.DISMISSED  # type: ignore[union-attr]
    others = Finding.objects.filter(checker="action_claims").exclude(pk=again.pk)  # type: ignore[union-attr]
    assert set(others.values_list("status", flat=True)) == {FindingStatus.OPEN}
    assert not AuditEvent.objects.filter(verb="finding.decision_undone", object_id=str(again.pk)).exists()  # type: ignore[union-attr]


def test_undo_gives_each_finding_back_to_whom_it_had(
    client: Any, alice: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    carol = _member(alice.memberships.first().project, "carol", "reviewer")
    first = Finding.objects.filter(severity="flag").order_by("id").first()
    review.assign(finding=first, assignee=carol, actor=alice)  # type: ignore[arg-type]
    before = _state()
    client.force_login(alice)
    for data in (
        {"action": "assign", "assignee": "bob", "scope": "all", "query": ""},
        {"action": "round_robin", "scope": "all", "query": ""},
    ):
        client.post("/p/acme/bulk", data)
        assert _state() != before
        batch = client.get("/p/acme/").context["undo_offers"][0]["batch"]
        client.post("/p/acme/bulk", {"action": "undo", "batch": batch, "query": ""})
        assert _state() == before
    assert AuditEvent.objects.filter(verb="finding.assignment_undone").exists()


def test_an_undo_is_offered_for_a_while_and_to_its_author_alone(
    client: Any, alice: Any, bob: Any, flagged: dict[str, Any], settings: Any
) -> None:
    client.force_login(bob)
    client.post("/p/acme/bulk", {"action": "confirmed", "scope": "all", "query": ""})
    batch = client.get("/p/acme/").context["undo_offers"][0]["batch"]
    after_bulk = _state()

    client.force_login(alice)
    response = client.post("/p/acme/bulk", {"action": "undo", "batch": batch, "query": ""})
    assert response.status_code == 403 and b"Only bob" in response.content
    assert _state() == after_bulk

    client.force_login(bob)
    settings.RECEIPTS_BULK_UNDO_SECONDS = 0  # the while is over
    response = client.post("/p/acme/bulk", {"action": "undo", "batch": batch, "query": ""}, follow=True)
    assert "Nothing to undo" in response.content.decode()
    assert _state() == after_bulk


def test_a_bulk_decision_undone_under_double_review_takes_back_the_vote(
    client: Any, project: Any, alice: Any, bob: Any, flagged: dict[str, Any]
) -> None:
    project.double_review = True
    project.save()
    finding = Finding.objects.filter(severity="flag").order_by("id").first()
    review.record_decision(finding=finding, reviewer=alice, verdict="confirmed")  # type: ignore[arg-type]
    client.force_login(bob)
    turn = finding.turn_id  # type: ignore[union-attr]
    client.post("/p/acme/bulk", {"action": "confirmed", "turn": [turn], "query": ""})
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.CONFIRMED  # type: ignore[union-attr]
    batch = client.get("/p/acme/").context["undo_offers"][0]["batch"]
    client.post("/p/acme/bulk", {"action": "undo", "batch": batch, "query": ""})
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.OPEN  # type: ignore[union-attr]
    assert list(Decision.objects.filter(finding=finding).values_list("reviewer__username", flat=True)) == [
        "alice"
    ]


def test_bad_bulk_requests_are_refused_with_what_to_do(
    client: Any, bob: Any, vic: Any, flagged: dict[str, Any]
) -> None:
    client.force_login(bob)
    before = _state()
    response = client.post("/p/acme/bulk", {"action": "undo", "batch": "", "query": ""}, follow=True)
    assert "Nothing to undo" in response.content.decode()
    response = client.post("/p/acme/bulk", {"action": "erase", "scope": "all", "query": ""})
    assert response.status_code == 400 and b"action must be" in response.content
    response = client.post(
        "/p/acme/bulk", {"preview": "1", "action": "dismissed", "scope": "all"}, follow=True
    )
    assert "Give a reason to dismiss." in response.content.decode()
    client.force_login(vic)
    for data in ({"preview": "1", "action": "confirmed", "scope": "all"}, {"action": "undo", "batch": "x"}):
        assert client.post("/p/acme/bulk", data).status_code == 403
    assert _state() == before and not AuditEvent.objects.exists()
