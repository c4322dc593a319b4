"""The turn page: the claim marked at its span, the evidence or its absence, and decisions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.models import AuditEvent, Decision, Finding, FindingStatus, Turn

pytestmark = pytest.mark.django_db


def _turn_url(conversation: Any, index: int = 0) -> str:
    return Turn.objects.get(conversation=conversation, index=index).get_absolute_url()


def test_it_marks_the_flagged_claim_at_its_span(client: Any, alice: Any, ingest: Any) -> None:
    conversation = ingest("01")
    client.force_login(alice)
    html = client.get(_turn_url(conversation)).content.decode()
    finding = Finding.objects.get()
    # The answer is shown rendered (markdown, sanitized), the claim marked where it stands.
    assert f'data-target="finding-{finding.pk}">I\'ve saved</mark>' in html
    # An action claim is not a value: no result is expected to hold it (test_finding_cards).
    assert "No tool result in this conversation holds this claim." not in html
    assert "Note from Receipts" in html  # the proposed correction


def test_it_shows_the_evidence_the_finding_points_to(client: Any, alice: Any, ingest: Any) -> None:
    conversation = ingest("06")
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    html = response.content.decode()
    [card] = [c for c in response.context["cards"] if c["finding"].checker == "tool_receipts"]
    assert card["finding"].code == "false_absence"
    assert card["evidence"][0]["call"].tool == "find_logins"
    assert "mkeller" in html  # the result that contradicts the claim


def test_model_output_is_escaped(client: Any, alice: Any, ingest: Any) -> None:
    """A hostile answer and tool result are shown as text, never as markup."""
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    payload = {
        "external_id": "hostile",
        "title": hostile,
        "turns": [
            {
                "tools_offered": [],
                "messages": [
                    {"role": "user", "content": hostile},
                    {"role": "assistant", "content": f"I've saved {hostile}"},
                ],
            }
        ],
    }
    conversation = ingest(payload)
    client.force_login(alice)
    for url in (_turn_url(conversation), conversation.get_absolute_url(), "/p/acme/"):
        html = client.get(url).content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html, url
        assert "&lt;script&gt;alert" in html, url


def test_a_reviewer_confirms_a_finding_and_the_audit_log_shows_it(client: Any, bob: Any, ingest: Any) -> None:
    conversation = ingest("01")
    finding = Finding.objects.get()
    client.force_login(bob)
    response = client.post(
        f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200
    assert response["HX-Trigger"] == "decided"
    assert "Confirmed by bob" in response.content.decode()
    finding.refresh_from_db()
    assert finding.status == FindingStatus.CONFIRMED
    event = AuditEvent.objects.get()
    assert (event.actor, event.verb, event.before, event.after["status"]) == (
        bob,
        "finding.confirmed",
        {"status": "open"},
        "confirmed",
    )
    html = client.get(_turn_url(conversation)).content.decode()
    assert "finding.confirmed" in html


def test_a_dismissal_keeps_its_reason(client: Any, bob: Any, ingest: Any) -> None:
    ingest("01")
    finding = Finding.objects.get()
    client.force_login(bob)
    response = client.post(
        f"/p/acme/findings/{finding.pk}/decide",
        {"verdict": "dismissed", "reason": "Other", "reason_text": "The user asked for a draft"},
    )
    assert response.status_code == 302
    decision = Decision.objects.get()
    assert (decision.verdict, decision.reason) == ("dismissed", "The user asked for a draft")
    assert AuditEvent.objects.get().after["reason"] == "The user asked for a draft"


def test_a_viewer_sees_but_cannot_decide(client: Any, vic: Any, ingest: Any) -> None:
    conversation = ingest("01")
    finding = Finding.objects.get()
    client.force_login(vic)
    html = client.get(_turn_url(conversation)).content.decode()
    assert "I&#x27;ve saved" in html and 'name="verdict"' not in html
    response = client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"})
    assert response.status_code == 403
    assert Finding.objects.get().status == FindingStatus.OPEN and not AuditEvent.objects.exists()


def test_an_outsider_gets_404_on_the_turn_and_the_decision(client: Any, olga: Any, ingest: Any) -> None:
    conversation = ingest("01")
    finding = Finding.objects.get()
    client.force_login(olga)
    assert client.get(_turn_url(conversation)).status_code == 404
    assert client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"}).status_code == 404
    assert client.get(conversation.get_absolute_url()).status_code == 404


def test_an_unknown_verdict_is_refused(client: Any, bob: Any, ingest: Any) -> None:
    ingest("01")
    finding = Finding.objects.get()
    client.force_login(bob)
    assert client.post(f"/p/acme/findings/{finding.pk}/decide", {"verdict": "maybe"}).status_code == 400
    assert not AuditEvent.objects.exists()


def test_it_links_the_previous_and_next_flagged_turns(client: Any, alice: Any, ingest: Any) -> None:
    first, _, last = ingest("01"), ingest("02"), ingest("05")
    client.force_login(alice)
    neighbours = client.get(_turn_url(first)).context["neighbours"]
    assert neighbours["previous"].conversation == last and neighbours["next"] is None


def test_the_run_status_polls_until_finished(client: Any, alice: Any, ingest: Any) -> None:
    conversation = ingest("01")
    client.force_login(alice)
    response = client.get(
        f"/p/acme/conversations/{conversation.pk}/run?was=pending", headers={"HX-Request": "true"}
    )
    assert response.status_code == 286  # htmx stops polling
    assert "Checked by suite 1.0.0" in response.content.decode()


def test_a_negative_claim_shows_its_verdict_reads_and_refusal(client: Any, alice: Any, ingest: Any) -> None:
    """The typed claim, the read it cites beside the write that superseded it, and the refusal."""
    conversation = ingest("12")
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    html = response.content.decode()
    [card] = [c for c in response.context["cards"] if c["finding"].checker == "negative_claims"]
    assert card["finding"].code == "superseded_by_write"
    assert [e["role"] for e in card["evidence"]] == ["cited read", "later write"]
    assert "Typed claim 0" in html and "about <code>mkeller</code>" in html
    assert "I don&#x27;t know" in html  # the refusal is the proposed correction
    assert "would be held back and <strong>the fallback answer</strong> sent instead" in html


def test_a_grounded_value_is_marked_at_both_ends(client: Any, alice: Any, ingest: Any) -> None:
    """mem-0412 in the answer is marked grounded, and the result that carries it shows the span."""
    conversation = ingest("03")
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    html = response.content.decode()
    [grounded] = response.context["grounded"]
    assert grounded["item"]["value"] == "mem-0412"
    [source] = grounded["sources"]
    assert (source["call"].tool, source["evidence"]["path"]) == ("memory_remember", "id")
    assert 'class="claim claim-grounded"' in html and 'data-target="grounded-0">mem-0412</mark>' in html
    assert (
        '<mark class="claim claim-evidence" tabindex="0" title="Characters 20–28 of the result">mem-0412'
        in html
    )


def test_a_value_a_successful_query_backs_shows_the_query(client: Any, alice: Any, ingest: Any) -> None:
    """A date the agent searched for, restated in the answer, is grounded in the search's
    arguments: the page shows those arguments with the date marked, not a span of the result."""
    call = {
        "id": "q1",
        "type": "function",
        "function": {"name": "search_slots", "arguments": '{"day": "2031-03-14"}'},
    }
    payload = {
        "external_id": "query-backed",
        "messages": [
            {"role": "user", "content": "Any free rooms on Pi day?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "q1", "content": json.dumps({"rooms": ["north", "east"]})},
            {"role": "assistant", "content": "On 2031-03-14 the north and east rooms are free."},
        ],
    }
    conversation = ingest(payload)
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    [grounded] = response.context["grounded"]
    [source] = grounded["sources"]
    assert source["evidence"]["of"] == "arguments" and source["evidence"]["path"] == "day"
    html = response.content.decode()
    assert "the arguments of the call to <code>search_slots</code>" in html
    assert 'title="Characters 9–19 of the arguments">2031-03-14</mark>' in html
    assert not source["ref"]  # no span of the result is marked for it


def test_evidence_under_a_reused_call_id_shows_the_call_it_points_into(
    client: Any, alice: Any, ingest: Any
) -> None:
    """call_X searched, then (answered) call_X updated: a finding about the search shows the
    search and its result, not the later call of the same id."""

    def exchange(tool: str, arguments: str, result: str) -> list[dict[str, Any]]:
        call = {"id": "call_X", "type": "function", "function": {"name": tool, "arguments": arguments}}
        return [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_X", "content": result},
        ]

    search = '[{"reservation_id": "ZFA04Y"}, {"reservation_id": "QW12RT"}]'
    payload = {
        "external_id": "reused-id",
        "turns": [
            {
                "messages": [
                    {"role": "user", "content": "Move ZFA04Y to HAT170."},
                    *exchange("search_reservations", '{"user": "mia"}', search),
                    *exchange("update_reservation_flights", '{"flights": ["HAT170"]}', '{"ok": true}'),
                    {"role": "assistant", "content": "I found 5 reservations and moved ZFA04Y."},
                ],
                "claims": [{"kind": "count", "tool": "search_reservations", "count": 5}],
            }
        ],
    }
    conversation = ingest(payload)
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    [card] = [c for c in response.context["cards"] if c["finding"].code == "count_misstatement"]
    [evidence] = card["evidence"]
    assert (evidence["call"].tool, evidence["call"].result) == ("search_reservations", search)
    html = response.content.decode()
    assert "QW12RT" in html
    # Each tool message of the transcript names the call it answers.
    assert html.index("result of <code>search_reservations</code>") < html.index(
        "result of <code>update_reservation_flights</code>"
    )


def _one_read(external_id: str, question: str, tool: str, result: Any, answer: str) -> dict[str, Any]:
    """A conversation of one turn: a question, one call and its result, then the answer."""
    call = {"id": "c1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
    return {
        "external_id": external_id,
        "messages": [
            {"role": "user", "content": question},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps(result)},
            {"role": "assistant", "content": answer},
        ],
    }


def test_a_computed_figure_shows_its_derivation_operands_and_evidence(
    client: Any, alice: Any, ingest: Any
) -> None:
    """A total the answer sums from the fares it lists is computed_value: the card names the
    derivation, the answer's spans it used and the results that ground them."""
    answer = "- Flight 1: $152\n- Flight 2: $103\n- Total: $255"
    fares = [{"price": 152}, {"price": 103}, {"price": 99}]
    conversation = ingest(
        _one_read("computed-total", "What would the two flights cost?", "search", fares, answer)
    )
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    [card] = [c for c in response.context["cards"] if c["finding"].code == "computed_value"]
    assert card["derivation"]["kind"] == "sum"
    assert [o["text"] for o in card["derivation"]["operands"]] == ["152 (stated)", "103 (stated)"]
    assert [e["item"]["path"] for e in card["evidence"]] == ["[0].price", "[1].price"]
    html = response.content.decode()
    assert "Derivation <code>sum</code>: 152 + 103" in html
    assert "in this answer, characters 13–16" in html


def test_a_value_of_another_record_shows_both_records(client: Any, alice: Any, ingest: Any) -> None:
    """The card shows the record the answer named and the one whose field holds the value."""
    tickets = {
        "tickets": [
            {"id": "T-100000", "opened": "2026-11-01"},
            {"id": "T-100042", "opened": "2026-11-15"},
        ]
    }
    answer = "T-100042 was opened on 2026-11-01."
    conversation = ingest(
        _one_read("other-record", "When was my ticket opened?", "list_tickets", tickets, answer)
    )
    client.force_login(alice)
    response = client.get(_turn_url(conversation))
    [card] = [c for c in response.context["cards"] if c["finding"].code == "value_of_other_record"]
    assert [(e["role"], e["item"]["path"]) for e in card["evidence"]] == [
        ("record named: t-100042", "tickets[1].opened"),
        ("record holding the value: t-100000", "tickets[0].opened"),
    ]
    html = response.content.decode()
    assert "record holding the value: t-100000" in html
