"""The queue's combined filters, saved views, counts, bulk actions, assignment and holds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from checks import review
from checks.models import AuditEvent, Decision, Finding, FindingStatus, SavedView, Turn

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(ingest: Any) -> dict[str, Any]:
    return {name: ingest(name) for name in ("01", "05", "07", "09")}


def _ids(response: Any) -> list[str]:
    return [r["turn"].conversation.external_id for r in response.context["rows"]]


def test_filters_combine_and_stay_in_the_url(client: Any, alice: Any, bob: Any, flagged: Any) -> None:
    client.force_login(alice)
    assert _ids(client.get("/p/acme/?checker=action_claims&code=unverified_action")) == [
        "ex-fabricated",
        "ex-sencha",
    ]
    response = client.get("/p/acme/?checker=action_claims&q=sencha")
    assert _ids(response) == ["ex-sencha"]
    assert response.context["query"] == "checker=action_claims&q=sencha"
    assert _ids(client.get("/p/acme/?checker=evidence&code=unsupported_value")) == [flagged["09"].external_id]
    assert _ids(client.get("/p/acme/?agent=nobody-by-that-name")) == []
    today = timezone.localdate()
    assert len(_ids(client.get(f"/p/acme/?from={today}&to={today}"))) == 4
    assert _ids(client.get(f"/p/acme/?from={today + timedelta(days=1)}")) == []
    assert len(_ids(client.get("/p/acme/?from=not-a-date"))) == 4  # a bad date is ignored


def test_dates_select_findings_by_when_they_were_raised(client: Any, alice: Any, flagged: Any) -> None:
    today = timezone.localdate()
    Finding.objects.filter(conversation=flagged["05"]).update(created_at=timezone.now() - timedelta(days=10))
    client.force_login(alice)
    assert flagged["05"].external_id not in _ids(client.get(f"/p/acme/?from={today}"))
    since = today - timedelta(days=10)
    assert flagged["05"].external_id in _ids(client.get(f"/p/acme/?from={since}&to={since}"))
    assert len(_ids(client.get(f"/p/acme/?from={since}&to={since}"))) == 1


def test_assignee_filters_mine_nobody_and_by_name(client: Any, alice: Any, bob: Any, flagged: Any) -> None:
    sencha = Finding.objects.get(conversation=flagged["01"], severity="flag")
    review.assign(finding=sencha, assignee=bob, actor=alice)
    client.force_login(bob)
    assert _ids(client.get("/p/acme/?assignee=mine")) == ["ex-sencha"]
    assert "ex-sencha" not in _ids(client.get("/p/acme/?assignee=none"))
    client.force_login(alice)
    assert _ids(client.get("/p/acme/?assignee=bob")) == ["ex-sencha"]
    assert _ids(client.get("/p/acme/?assignee=mine")) == []


def test_counts_per_status_follow_the_other_filters(client: Any, alice: Any, flagged: Any) -> None:
    review.record_decision(
        finding=Finding.objects.get(code="count_misstatement"), reviewer=alice, verdict="dismissed"
    )
    client.force_login(alice)
    counts = client.get("/p/acme/?checker=tool_receipts").context["counts"]
    assert counts == {"open": 1, "confirmed": 0, "dismissed": 1}
    html = client.get("/p/acme/?checker=tool_receipts", headers={"HX-Request": "true"}).content.decode()
    assert "1 dismissed" in html  # the counts are part of the fragment htmx swaps


def test_counts_stop_at_the_cap_and_say_so(
    client: Any, alice: Any, flagged: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checks.views import queue

    review.record_decision(
        finding=Finding.objects.get(code="count_misstatement"), reviewer=alice, verdict="dismissed"
    )
    monkeypatch.setattr(queue, "COUNT_CAP", 2)
    client.force_login(alice)
    response = client.get("/p/acme/")
    assert response.context["counts"] == {"open": 3, "confirmed": 0, "dismissed": 1}  # 3: the cap + 1
    labels = {link["status"]: link["n"] for link in response.context["status_links"]}
    # "all" is over the cap as "open" is, and says so as "open" does (not "3+", a sum of caps).
    assert labels == {"open": "2+", "confirmed": "0", "dismissed": "1", "all": "2+"}


def test_a_saved_view_keeps_the_filters(client: Any, bob: Any, flagged: Any) -> None:
    client.force_login(bob)
    response = client.post(
        "/p/acme/views", {"name": "Receipts only", "query": "checker=tool_receipts&junk=1"}
    )
    assert response.status_code == 302
    view = SavedView.objects.get()
    assert (view.user, view.query) == (bob, "checker=tool_receipts")
    html = client.get("/p/acme/").content.decode()
    assert 'href="?checker=tool_receipts">Receipts only</a>' in html
    assert AuditEvent.objects.get().verb == "view.saved"
    client.post(f"/p/acme/views/{view.pk}/delete")
    assert not SavedView.objects.exists()


def test_bulk_confirm_on_a_selection_decides_each_finding(client: Any, bob: Any, flagged: Any) -> None:
    turn = Turn.objects.get(conversation=flagged["07"])  # two findings on one turn
    client.force_login(bob)
    response = client.post("/p/acme/bulk", {"action": "confirmed", "turn": [turn.pk], "query": ""})
    assert response.status_code == 302
    assert set(Finding.objects.filter(turn=turn).values_list("status", flat=True)) == {"confirmed"}
    assert Decision.objects.count() == 2
    assert AuditEvent.objects.filter(verb="finding.confirmed").count() == 2
    assert Finding.objects.filter(status="open", severity="flag").count() == 3


def test_bulk_dismiss_on_everything_a_filter_matches_needs_a_reason(
    client: Any, bob: Any, flagged: Any
) -> None:
    client.force_login(bob)
    data = {"action": "dismissed", "scope": "all", "query": "checker=action_claims"}
    client.post("/p/acme/bulk", data)
    assert not Decision.objects.exists()
    client.post("/p/acme/bulk", {**data, "reason": "Not a claim (a plan, offer or question)"})
    dismissed = Finding.objects.filter(status=FindingStatus.DISMISSED)
    assert set(dismissed.values_list("checker", flat=True)) == {"action_claims"}
    assert dismissed.count() == 2
    assert set(Decision.objects.values_list("reason", flat=True)) == {
        "Not a claim (a plan, offer or question)"
    }


def test_bulk_assign_and_round_robin(client: Any, alice: Any, bob: Any, flagged: Any) -> None:
    client.force_login(alice)
    client.post(
        "/p/acme/bulk",
        {"action": "assign", "assignee": "bob", "scope": "all", "query": "code=unverified_action"},
    )
    assert set(
        Finding.objects.filter(code="unverified_action").values_list("assignee__username", flat=True)
    ) == {"bob"}
    client.post("/p/acme/bulk", {"action": "round_robin", "scope": "all", "query": "assignee=none"})
    counts = {
        name: Finding.objects.filter(assignee__username=name, severity="flag").count()
        for name in ("alice", "bob")
    }
    # alice had none, so the three unassigned go alice, bob, alice: 2 and 2+1.
    assert counts == {"alice": 2, "bob": 3}
    assert AuditEvent.objects.filter(verb="finding.assigned").count() == 5


def test_a_viewer_cannot_act_in_bulk_and_an_outsider_sees_nothing(
    client: Any, vic: Any, olga: Any, flagged: Any
) -> None:
    data = {"action": "confirmed", "scope": "all", "query": ""}
    client.force_login(vic)
    assert client.post("/p/acme/bulk", data).status_code == 403
    client.force_login(olga)
    assert client.post("/p/acme/bulk", data).status_code == 404
    assert client.post("/p/acme/views", {"name": "x", "query": ""}).status_code == 404
    assert not AuditEvent.objects.exists()


def test_assigning_by_hand_is_audited(client: Any, alice: Any, bob: Any, vic: Any, flagged: Any) -> None:
    finding = Finding.objects.get(conversation=flagged["01"], severity="flag")
    client.force_login(alice)
    url = f"/p/acme/findings/{finding.pk}/assign"
    assert client.post(url, {"assignee": "vic"}).status_code == 400  # a viewer does not review
    assert client.post(url, {"assignee": "bob"}, headers={"HX-Request": "true"}).status_code == 200
    event = AuditEvent.objects.get()
    assert (event.verb, event.before, event.after) == (
        "finding.assigned",
        {"assignee": None},
        {"assignee": "bob"},
    )


def test_an_open_turn_holds_its_findings_for_the_reviewer(
    client: Any, alice: Any, bob: Any, flagged: Any
) -> None:
    finding = Finding.objects.get(conversation=flagged["01"], severity="flag")
    client.force_login(bob)
    page = client.get(finding.turn.get_absolute_url()).content.decode()
    finding.refresh_from_db()
    assert finding.held_by is None, "a GET must change nothing"
    # The page asks for the hold once loaded, and again every minute while it stays open.
    assert f'hx-post="/p/acme/turns/{finding.turn_id}/hold" hx-trigger="load, every 60s"' in page
    client.post(f"/p/acme/turns/{finding.turn_id}/hold")
    finding.refresh_from_db()
    assert finding.held_by == bob and finding.held_until > timezone.now()

    client.force_login(alice)
    html = client.get(finding.turn.get_absolute_url()).content.decode()
    assert "Open on bob's screen" in html
    assert "held by bob" in client.get("/p/acme/").content.decode()
    refused = client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"})
    assert refused.status_code == 409 and "bob has this finding open" in refused.content.decode()

    # The hold runs out; then alice may decide.
    Finding.objects.filter(pk=finding.pk).update(held_until=timezone.now() - timedelta(seconds=1))
    assert client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"}).status_code == 302
    assert Finding.objects.get(pk=finding.pk).status == "confirmed"


def test_the_page_renews_its_hold(client: Any, bob: Any, flagged: Any) -> None:
    finding = Finding.objects.get(conversation=flagged["01"], severity="flag")
    client.force_login(bob)
    response = client.post(f"/p/acme/turns/{finding.turn_id}/hold")
    assert response.status_code == 204 and response["X-Held"] == str(finding.pk)


def test_progress_per_reviewer(client: Any, alice: Any, bob: Any, flagged: Any) -> None:
    finding = Finding.objects.get(conversation=flagged["01"], severity="flag")
    review.assign(
        finding=Finding.objects.get(conversation=flagged["05"], severity="flag"), assignee=bob, actor=alice
    )
    review.record_decision(finding=finding, reviewer=bob, verdict="confirmed")
    client.force_login(alice)
    rows = {p["user"].username: p for p in client.get("/p/acme/progress").context["progress"]}
    assert (rows["bob"]["assigned_open"], rows["bob"]["decided"], rows["bob"]["decided_today"]) == (1, 1, 1)
    assert rows["alice"]["decided"] == 0
    # The queue folds it and asks for the table once it is opened; htmx gets the table alone.
    assert 'hx-get="/p/acme/progress" hx-trigger="toggle once"' in client.get("/p/acme/").content.decode()
    fragment = client.get("/p/acme/progress", headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<table class="grid">')
    assert '<a href="/p/acme/?assignee=bob">bob</a>' in fragment


def test_viewers_see_no_progress_panel(client: Any, vic: Any, flagged: Any) -> None:
    client.force_login(vic)
    assert "/p/acme/progress" not in client.get("/p/acme/").content.decode()
    assert client.get("/p/acme/progress").status_code == 403


def _said(external_id: str, answer: str, agent: str = "example-agent", model: str = "example-9b") -> Any:
    """A one-turn conversation whose answer claims a save no tool made: always flagged."""
    return {
        "external_id": external_id,
        "agent": {"name": agent, "model": model},
        "turns": [
            {
                "tools_offered": [],
                "messages": [
                    {"role": "user", "content": "Please keep a note of this."},
                    {"role": "assistant", "content": f"I've saved it. {answer}"},
                ],
            }
        ],
    }


def test_text_filter_matches_the_start_of_each_word_in_any_case(client: Any, alice: Any, ingest: Any) -> None:
    ingest(_said("refunds", "Refunds for ORD-1234 are on their way."))
    ingest(_said("shipping", "Shipping for ORD-5678 starts Monday."))
    client.force_login(alice)
    assert _ids(client.get("/p/acme/?q=refund")) == ["refunds"]
    assert _ids(client.get("/p/acme/?q=REFUNDS")) == ["refunds"]
    assert _ids(client.get("/p/acme/?q=ord-12")) == ["refunds"]  # the start of an identifier
    assert sorted(_ids(client.get("/p/acme/?q=ORD"))) == ["refunds", "shipping"]
    assert _ids(client.get("/p/acme/?q=refund+monday")) == []  # every word must match
    assert _ids(client.get("/p/acme/?q=1234+way")) == ["refunds"]
    assert _ids(client.get("/p/acme/?q=und")) == []  # words are matched from their start


def test_text_filter_takes_query_syntax_as_plain_text(client: Any, alice: Any, ingest: Any) -> None:
    ingest(_said("refunds", "Refunds for ORD-1234 are on their way."))
    client.force_login(alice)
    for hostile in ['"', "refund*", "refund OR shipping", "a & b | !(c)", "NEAR(x y)", "'; --", "*", "ref:*"]:
        response = client.get("/p/acme/", {"q": hostile})
        assert response.status_code == 200, hostile
    assert _ids(client.get("/p/acme/", {"q": '"refund*"'})) == ["refunds"]
    assert _ids(client.get("/p/acme/", {"q": "refund OR shipping"})) == []  # OR is a word here
    assert _ids(client.get("/p/acme/", {"q": "— …"})) == []  # no word to look for: nothing


def test_text_filter_stays_within_the_project(
    client: Any, alice: Any, ingest: Any, other_project: Any
) -> None:
    ingest(_said("ours", "Refunds for ORD-1234."))
    ingest(_said("theirs", "Refunds for ORD-9999."), into=other_project)
    client.force_login(alice)
    assert _ids(client.get("/p/acme/?q=refunds")) == ["ours"]


def test_filter_lists_hold_each_value_of_the_project_once(
    client: Any, alice: Any, ingest: Any, other_project: Any
) -> None:
    ingest(_said("a", "One.", agent="zeta-agent", model="m-2"))
    ingest(_said("b", "Two.", agent="alpha-agent", model="m-1"))
    ingest(_said("c", "Three.", agent="zeta-agent", model=""))
    ingest(_said("d", "Four.", agent="elsewhere", model="m-9"), into=other_project)
    ingest("05")  # a count misstatement: another code
    client.force_login(alice)
    context = client.get("/p/acme/").context
    codes = set(Finding.objects.filter(project__slug="acme").values_list("code", flat=True))
    assert len(codes) >= 2
    assert context["filter_codes"] == sorted(codes)
    assert context["filter_agents"] == ["alpha-agent", "example-agent", "zeta-agent"]
    assert context["filter_models"] == ["example-9b", "m-1", "m-2"]  # the empty model is left out
