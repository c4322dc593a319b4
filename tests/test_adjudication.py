"""Adjudication: the agreement page lists the findings two reviewers disagreed on, the queue
filters the disputed ones, and a third reviewer's decision, never one of the two, settles
each (audited)."""

from __future__ import annotations

from typing import Any

import pytest

from checks import review
from checks.filters import FindingFilter, InvalidFilter
from checks.models import AuditEvent, Decision, Finding, FindingStatus
from tests.conftest import _member

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(project: Any) -> Any:
    return _member(project, "carol", "reviewer")


@pytest.fixture
def flags(ingest: Any) -> list[Finding]:
    for name in ("01", "05", "07", "09"):
        ingest(name)
    return list(Finding.objects.filter(severity="flag").order_by("id"))


def _disputed(project: Any) -> set[int]:
    return set(FindingFilter(disputed="yes").findings(project).values_list("pk", flat=True))


@pytest.mark.parametrize("double_review", [True, False])
def test_disputed_selects_the_findings_split_evenly_until_a_third_settles(
    project: Any, alice: Any, bob: Any, carol: Any, flags: list[Finding], double_review: bool
) -> None:
    project.double_review = double_review
    project.save()
    split, agreed, single, changed_mind = flags[:4]
    for finding, a, b in ((split, "confirmed", "dismissed"), (agreed, "confirmed", "confirmed")):
        review.record_decision(finding=finding, reviewer=alice, verdict=a, reason="r")
        review.record_decision(finding=finding, reviewer=bob, verdict=b, reason="r")
    review.record_decision(finding=single, reviewer=alice, verdict="dismissed", reason="r")
    # Each reviewer counts by their latest verdict: alice's first one is no vote of hers now.
    review.record_decision(finding=changed_mind, reviewer=alice, verdict="dismissed", reason="r")
    review.record_decision(finding=changed_mind, reviewer=alice, verdict="confirmed", reason="r")
    review.record_decision(finding=changed_mind, reviewer=bob, verdict="confirmed", reason="r")
    assert _disputed(project) == {split.pk}
    assert [d.finding.pk for d in review.disagreements(project)] == [split.pk]

    review.record_decision(finding=split, reviewer=carol, verdict="dismissed", reason="r")
    assert _disputed(project) == set()
    assert Finding.objects.get(pk=split.pk).status == FindingStatus.DISMISSED
    assert review.disagreements(project) == []


def test_disputed_reads_yes_or_names_the_field(client: Any, alice: Any, flags: list[Finding]) -> None:
    assert FindingFilter.parse({"disputed": "yes"}).disputed == "yes"
    with pytest.raises(InvalidFilter) as refused:
        FindingFilter.parse({"disputed": "maybe"})
    assert refused.value.field == "disputed" and "use yes" in refused.value.fix
    assert FindingFilter.parse({"disputed": "maybe"}, strict=False).disputed == ""
    assert FindingFilter(disputed="yes", status="open").query() == "status=open&disputed=yes"
    client.force_login(alice)
    response = client.get("/p/acme/exports/file?kind=jsonl&disputed=maybe")
    assert response.status_code == 400 and b"disputed" in response.content


def test_the_queue_lists_the_disputed_turns(client: Any, alice: Any, bob: Any, flags: list[Finding]) -> None:
    review.record_decision(finding=flags[1], reviewer=alice, verdict="confirmed")
    review.record_decision(finding=flags[1], reviewer=bob, verdict="dismissed", reason="Other")
    client.force_login(bob)
    response = client.get("/p/acme/?status=all&disputed=yes")
    assert [row["turn"].pk for row in response.context["rows"]] == [flags[1].turn_id]
    assert 'name="disputed" value="yes" checked' in response.content.decode()
    assert not client.get("/p/acme/?disputed=yes").context["rows"]  # not open: single review


def test_only_a_third_reviewer_settles_and_the_decision_says_so(
    client: Any, project: Any, alice: Any, bob: Any, carol: Any, flags: list[Finding]
) -> None:
    project.double_review = True
    project.save()
    finding = flags[0]
    review.record_decision(finding=finding, reviewer=alice, verdict="confirmed")
    review.record_decision(finding=finding, reviewer=bob, verdict="dismissed", reason="Other")
    decisions = Decision.objects.count()

    client.force_login(bob)
    response = client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"})
    assert response.status_code == 409
    assert b"You and alice disagree on this finding" in response.content
    assert Decision.objects.count() == decisions
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.OPEN

    # A disputant's bulk action passes over it.
    client.post("/p/acme/bulk", {"action": "confirmed", "turn": [finding.turn_id], "query": ""})
    assert Decision.objects.filter(finding=finding).count() == 2

    client.force_login(carol)
    response = client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"})
    assert response.status_code == 302
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.CONFIRMED
    event = AuditEvent.objects.filter(verb="finding.confirmed", actor__username="carol").get()
    assert event.after["settles"] == ["alice", "bob"] and event.after["status"] == "confirmed"


def test_the_agreement_page_lists_each_disagreement_and_how_it_stands(
    client: Any, project: Any, alice: Any, bob: Any, carol: Any, flags: list[Finding]
) -> None:
    project.double_review = True
    project.save()
    waiting, settled, agreed = flags[:3]
    for finding in (waiting, settled):
        review.record_decision(finding=finding, reviewer=alice, verdict="confirmed", reason="r")
        review.record_decision(finding=finding, reviewer=bob, verdict="dismissed", reason="r")
    review.record_decision(finding=agreed, reviewer=alice, verdict="confirmed", reason="r")
    review.record_decision(finding=agreed, reviewer=bob, verdict="confirmed", reason="r")
    review.record_decision(finding=settled, reviewer=carol, verdict="dismissed", reason="r")

    client.force_login(carol)
    response = client.get("/p/acme/agreement")
    listed = {d.finding.pk: d for d in response.context["agreement"].disagreed}
    assert set(listed) == {waiting.pk, settled.pk}
    assert listed[waiting.pk].disputed and not listed[settled.pk].disputed
    assert listed[settled.pk].settled_by == [("carol", "dismissed")]
    html = response.content.decode()
    row = html[html.index(f'data-disagreed="{waiting.pk}"') :]
    row = row[: row.index("</tr>")]
    # carol has not decided the waiting one, but a dispute is past blind review: she, who
    # may settle it, sees how the two decided.
    assert "alice: confirmed · bob: dismissed" in row
    assert "waits for a third reviewer" in row
    settled_row = html[html.index(f'data-disagreed="{settled.pk}"') :]
    settled_row = settled_row[: settled_row.index("</tr>")]
    assert (
        "alice: confirmed · bob: dismissed" in settled_row and "settled by carol (dismissed)" in settled_row
    )
    assert "disputed=yes" in html

    client.force_login(alice)  # she decided the waiting one: its verdicts are hers to see
    html = client.get("/p/acme/agreement").content.decode()
    row = html[html.index(f'data-disagreed="{waiting.pk}"') :]
    assert "alice: confirmed · bob: dismissed" in row[: row.index("</tr>")]


def test_the_turn_page_says_whose_decision_settles_a_dispute(
    client: Any, alice: Any, bob: Any, carol: Any, flags: list[Finding]
) -> None:
    finding = flags[0]
    review.record_decision(finding=finding, reviewer=alice, verdict="confirmed")
    review.record_decision(finding=finding, reviewer=bob, verdict="dismissed", reason="Other")
    url = finding.turn.get_absolute_url()
    client.force_login(bob)
    html = client.get(url).content.decode()
    assert f'data-disputed="{finding.pk}"' in html and "alice and bob split on it" in html
    assert "You are one of them, so a third reviewer" in html
    client.force_login(carol)
    assert "Your decision settles it." in client.get(url).content.decode()
    review.record_decision(finding=finding, reviewer=carol, verdict="dismissed", reason="Other")
    assert "data-disputed" not in client.get(url).content.decode()


def test_whoever_settles_a_split_sees_both_sides_and_the_two_who_split_are_not_offered_confirm(
    client: Any, project: Any, alice: Any, bob: Any, carol: Any, flags: list[Finding]
) -> None:
    """Both verdicts, both reasons and the correction one side proposed stand side by side for
    the third reviewer; the split shows as "disputed" on the card and in the queue; the two
    who split read that a third settles it, with no Confirm to press."""
    project.double_review = True
    project.save()
    split = flags[0]
    review.record_decision(
        finding=split, reviewer=alice, verdict="confirmed", reason="Nothing was saved at all"
    )
    review.record_decision(finding=split, reviewer=bob, verdict="dismissed", reason="The user supplied it")
    url = split.turn.get_absolute_url()

    client.force_login(carol)
    page = client.get(url).content.decode()
    panel = page[page.index('<div class="dispute"') :][:2000]
    assert "Confirmed by alice" in panel and "“Nothing was saved at all”" in panel
    assert "Dismissed by bob" in panel and "“The user supplied it”" in panel
    assert "data-disputed-badge" in page
    assert f'hx-post="/p/acme/findings/{split.pk}/decide"' in page
    assert 'class="badge badge-disputed"' in client.get("/p/acme/?status=all").content.decode()

    for disputant in (alice, bob):
        client.force_login(disputant)
        page = client.get(url).content.decode()
        assert "data-disputant" in page
        assert f'hx-post="/p/acme/findings/{split.pk}/decide"' not in page


def test_a_vote_that_leaves_a_finding_open_reads_as_a_vote_in_the_audit_log(
    client: Any, project: Any, alice: Any, flags: list[Finding]
) -> None:
    project.double_review = True
    project.save()
    review.record_decision(finding=flags[0], reviewer=alice, verdict="confirmed", reason="r")
    client.force_login(alice)
    audit = client.get(flags[0].turn.get_absolute_url()).content.decode().split('id="audit"')[1]
    assert "open → open" not in audit
    assert "a vote, the finding stays open" in audit
