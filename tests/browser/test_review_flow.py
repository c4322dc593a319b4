"""A reviewer's path through the pages in a real browser: sign in, triage, decide in place.

The server is pytest-django's live server; checks run in-process before the browser starts.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from checks.models import AuditEvent, Decision, Finding, FindingStatus, Turn
from tests.browser.desk import ingest_and_check, sign_in
from tests.conftest import load_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE_IMG = '<img src=x onerror="window.__pwned=1">'
HOSTILE_SCRIPT = "<script>window.__pwned=1</script>"


def _mark_document(page: Any) -> None:
    """Tags the loaded document; the tag survives htmx swaps but not a full page load."""
    page.evaluate("window.__sameDocument = true")


def _csp_violations(page: Any) -> list[str]:
    """What the browser blocked under the Content-Security-Policy: markup from model output
    that was not escaped would show up here even though the policy stopped it."""
    return [m.text for m in page.console_messages if "Content Security Policy" in m.text]


def _same_document(page: Any) -> bool:
    return page.evaluate("window.__sameDocument === true")


def _our_errors(page: Any, live_server: Any) -> list[str]:
    """Uncaught errors raised by scripts served from this site."""
    return [
        f"{error.name}: {error.message}\n{error.stack}"
        for error in page.errors
        if live_server.url in (error.stack or "") or "/static/" in (error.stack or "")
    ]


@pytest.mark.parametrize(
    ("button", "verdict", "reason", "shown"),
    [
        ("Dismiss", "dismissed", "The user supplied it", "Dismissed by bob"),
        ("Confirm", "confirmed", "", "Confirmed by bob"),
    ],
)
def test_a_reviewer_triages_and_decides_in_place(
    page: Any, live_server: Any, project: Any, bob: Any, button: str, verdict: str, reason: str, shown: str
) -> None:
    conversation = ingest_and_check(project, load_example("01"))
    finding = Finding.objects.get(conversation=conversation)
    assert finding.severity == "flag" and finding.status == FindingStatus.OPEN

    sign_in(page, live_server, bob)
    page.goto(f"{live_server.url}/p/acme/")
    assert page.locator("h1").inner_text() == "Triage"
    row = page.locator("#results tr", has_text=conversation.title)
    with page.expect_navigation():
        row.get_by_role("link", name="turn 0").click()
    turn = Turn.objects.get(conversation=conversation, index=0)
    assert page.url == f"{live_server.url}{turn.get_absolute_url()}"

    claim = page.locator(".msg.answer mark.claim-flagged", has_text="I've saved")
    assert claim.count() == 1
    card = page.locator(f"#finding-{finding.pk}")
    # The marked claim leads to its finding (receipts.js): a click makes the card pulse.
    claim.click()
    expect(card).to_have_class(re.compile(r"\bpulse\b"))
    assert card.locator(".status").inner_text() == "Open"
    assert "No reviewer action on this turn yet." in page.locator("#audit").inner_text()
    _mark_document(page)

    if reason:
        card.get_by_label("Reason to dismiss").select_option(reason)
    with page.expect_response(re.compile(rf"/findings/{finding.pk}/decide$")) as decided:
        card.get_by_role("button", name=button, exact=True).click()
    assert decided.value.status == 200
    assert decided.value.request.headers.get("hx-request") == "true"

    # htmx swapped the card and refreshed the audit log; the page itself never reloaded.
    card.locator(".decisions li", has_text=shown).wait_for()
    assert card.locator(".status").inner_text() == verdict.capitalize()
    entry = page.locator("#audit li", has_text=f"finding.{verdict}")
    entry.wait_for()
    assert "bob" in entry.inner_text() and "open → " + verdict in entry.inner_text()
    if reason:
        assert reason in entry.inner_text()
    assert _same_document(page)
    assert page.locator(f"#finding-{finding.pk}").count() == 1

    finding.refresh_from_db()
    assert finding.status == verdict
    decision = Decision.objects.get(finding=finding)
    assert (decision.reviewer, decision.verdict, decision.reason) == (bob, verdict, reason)
    assert AuditEvent.objects.get(object_id=str(finding.pk)).verb == f"finding.{verdict}"
    assert _our_errors(page, live_server) == []


def test_hostile_model_output_renders_as_text(page: Any, live_server: Any, project: Any, bob: Any) -> None:
    hostile = f"{HOSTILE_IMG} {HOSTILE_SCRIPT}"
    payload = {
        "external_id": "hostile",
        "title": f"Hostile {HOSTILE_SCRIPT}",
        "turns": [
            {
                "tools_offered": ["lookup"],
                "messages": [
                    {"role": "user", "content": f"Look up {hostile}"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "call-1",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": json.dumps({"q": hostile})},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "call-1", "content": f"result: {hostile}"},
                    {"role": "assistant", "content": f"Here is the record: {hostile}"},
                ],
            },
            {
                # Flagged (a save no tool made), so the hostile answer also reaches the queue.
                "tools_offered": ["lookup"],
                "messages": [
                    {"role": "user", "content": "Remember that I like sencha."},
                    {"role": "assistant", "content": f"I've saved your favorite tea as sencha. {hostile}"},
                ],
            },
        ],
    }
    conversation = ingest_and_check(project, payload)
    lookup = Turn.objects.get(conversation=conversation, index=0)
    flagged = Turn.objects.get(conversation=conversation, index=1)
    assert Finding.objects.filter(turn=flagged, severity="flag").exists()

    sign_in(page, live_server, bob)
    pages = (
        lookup.get_absolute_url(),
        flagged.get_absolute_url(),
        conversation.get_absolute_url(),
        "/p/acme/",
    )
    for url in pages:
        response = page.goto(f"{live_server.url}{url}")
        assert response.status == 200, url
        csp = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp and "default-src 'self'" in csp, (url, csp)
        page.wait_for_load_state("load")
        assert page.evaluate("typeof window.__pwned") == "undefined", url
        assert page.locator("main img").count() == 0, url
        assert page.locator("main script").count() == 0, url
        assert HOSTILE_SCRIPT in page.locator("main").inner_text(), url

    page.goto(f"{live_server.url}{lookup.get_absolute_url()}")
    page.locator("details.msg.role-tool > summary").click()  # the result, folded to one line
    tool = page.locator(".msg.role-tool [data-result]").inner_text()  # a folded result tree
    assert HOSTILE_IMG in tool and HOSTILE_SCRIPT in tool
    answer = page.locator(".msg.answer .text").inner_text()
    assert HOSTILE_IMG in answer and HOSTILE_SCRIPT in answer

    page.goto(f"{live_server.url}{flagged.get_absolute_url()}")
    answer = page.locator(".msg.answer .text")
    assert HOSTILE_IMG in answer.inner_text() and HOSTILE_SCRIPT in answer.inner_text()
    assert answer.locator("mark.claim-flagged", has_text="I've saved").count() == 1
    page.locator("details.earlier summary").click()
    earlier = page.locator("details.earlier").inner_text()
    assert f"result: {HOSTILE_IMG}" in earlier and HOSTILE_SCRIPT in earlier
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert _csp_violations(page) == []
    assert _our_errors(page, live_server) == []


def test_the_queue_filters_by_checker_in_place(page: Any, live_server: Any, project: Any, bob: Any) -> None:
    sencha = ingest_and_check(project, load_example("01"))  # action_claims
    count = ingest_and_check(project, load_example("05"))  # tool_receipts

    sign_in(page, live_server, bob)
    page.goto(f"{live_server.url}/p/acme/")
    results = page.locator("#results").first
    assert sencha.title in results.inner_text() and count.title in results.inner_text()
    _mark_document(page)

    with page.expect_response(re.compile(r"/p/acme/\?.*checker=tool_receipts")) as filtered:
        page.get_by_label("Checker").select_option("tool_receipts")
    assert filtered.value.request.headers.get("hx-request") == "true"
    page.wait_for_url(re.compile(r"/p/acme/\?.*checker=tool_receipts"))
    page.locator("#results tr", has_text=sencha.title).wait_for(state="detached")

    shown = page.locator("#results").first.inner_text()
    assert count.title in shown and sencha.title not in shown
    assert page.locator("#results tbody tr").count() == 1
    assert _same_document(page)
    assert page.locator("h1").inner_text() == "Triage"  # the page around the results is kept
    assert page.get_by_label("Checker").input_value() == "tool_receipts"

    # The pushed URL is a real address: loading it shows the same filtered queue.
    page.reload()
    assert not _same_document(page)
    shown = page.locator("#results").first.inner_text()
    assert count.title in shown and sencha.title not in shown
    assert page.get_by_label("Checker").input_value() == "tool_receipts"
    assert _our_errors(page, live_server) == []


def test_the_reviewers_progress_loads_when_its_panel_opens(
    page: Any, live_server: Any, project: Any, bob: Any
) -> None:
    ingest_and_check(project, load_example("01"))
    sign_in(page, live_server, bob)
    page.goto(f"{live_server.url}/p/acme/")
    panel = page.locator("details.progress")
    with page.expect_response(re.compile(r"/p/acme/progress$")) as loaded:
        panel.locator("summary").click()
    assert loaded.value.request.headers.get("hx-request") == "true"
    table = panel.locator("table.grid")
    expect(table.locator("tbody tr", has_text="bob")).to_have_count(1)
    expect(table.locator("thead th").first).to_have_text("Reviewer")
    assert _our_errors(page, live_server) == []


def test_filtering_keeps_a_single_results_container(
    page: Any, live_server: Any, project: Any, bob: Any
) -> None:
    ingest_and_check(project, load_example("01"))
    ingest_and_check(project, load_example("05"))
    sign_in(page, live_server, bob)
    page.goto(f"{live_server.url}/p/acme/")
    assert page.locator("#results").count() == 1
    with page.expect_response(re.compile(r"checker=tool_receipts")):
        page.get_by_label("Checker").select_option("tool_receipts")
    page.wait_for_url(re.compile(r"checker=tool_receipts"))
    page.locator("#results tbody tr").first.wait_for()
    assert page.locator("#results").count() == 1
