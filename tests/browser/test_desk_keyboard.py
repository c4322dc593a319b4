"""The reviewer's desk by keyboard alone, in a real browser: filter the queue, open a turn,
see a grounded value's evidence and a flagged value no result holds, confirm one finding,
dismiss another with a reason, correct a third; a second reviewer approves the correction,
which its author could not. Screenshots of the queue and the turn page go to test-results/.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from checks.models import AuditEvent, Correction, Decision, Finding, Turn
from tests.browser.desk import ingest_and_check, sign_in
from tests.conftest import load_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"


def _focused(page: Any) -> str:
    return page.evaluate(
        "(() => { const e = document.activeElement; return e ? (e.id || e.tagName) : ''; })()"
    )


def _open_current_row(page: Any) -> None:
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_a_reviewer_works_the_examples_by_keyboard_and_a_second_approves(
    page: Any, browser: Any, live_server: Any, project: Any, alice: Any, bob: Any
) -> None:
    saved = ingest_and_check(project, load_example("03"))  # nothing flagged; mem-0412 grounded
    sencha = ingest_and_check(project, load_example("01"))  # an action no tool ran
    count = ingest_and_check(project, load_example("05"))  # a misstated count
    invented = ingest_and_check(project, load_example("09"))  # fc1/3 grounded, 0xef0101 held by no result
    unsupported = Finding.objects.get(conversation=invented, code="unsupported_value")
    miscount = Finding.objects.get(conversation=count, severity="flag")
    unsaved = Finding.objects.get(conversation=sencha, severity="flag")

    sign_in(page, live_server, bob, by_keyboard=True)

    # A grounded value: its span in the tool result is marked, with the JSON path.
    page.goto(f"{live_server.url}{Turn.objects.get(conversation=saved).get_absolute_url()}")
    expect(page.locator(".msg.answer mark.claim-grounded", has_text="mem-0412")).to_have_count(1)
    grounded = page.locator("ul.grounded li", has_text="mem-0412")
    expect(grounded.locator("mark.claim-evidence")).to_have_text("mem-0412")
    expect(grounded).to_contain_text("path id")

    # The queue, filtered by keyboard: / searches the answers.
    page.goto(f"{live_server.url}/p/acme/")
    expect(page.locator("#results tbody tr[data-row]")).to_have_count(3)
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.name") == "q"
    page.keyboard.type("FCID")
    with page.expect_response(re.compile(r"/p/acme/\?.*q=FCID")):
        page.keyboard.press("Enter")
    expect(page.locator("#results tbody tr[data-row]")).to_have_count(1)
    page.wait_for_url(re.compile(r"q=FCID"))
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    expect(page.locator("tr[data-row].current")).to_contain_text(invented.title)
    _shot(page, "desk-queue.png")
    _open_current_row(page)

    # The turn: fc1/3 grounded and marked in its result; 0xef0101 held by no result.
    expect(page.locator(".msg.answer mark.claim-grounded", has_text="fc1/3")).to_have_count(1)
    expect(page.locator("ul.grounded li", has_text="fc1/3").locator("mark.claim-evidence")).to_have_text(
        "fc1/3"
    )
    card = page.locator(f"#finding-{unsupported.pk}")
    expect(card.locator(".noevidence")).to_have_text("No tool result in this conversation holds this claim.")
    _shot(page, "desk-turn.png")

    # j moves to the first finding; c confirms it.
    page.keyboard.press("j")
    assert _focused(page) == f"finding-{unsupported.pk}"
    with page.expect_response(re.compile(rf"/findings/{unsupported.pk}/decide$")):
        page.keyboard.press("c")
    expect(card.locator(".status")).to_have_text("Confirmed")
    expect(page.locator(f"#finding-{unsupported.pk}.current")).to_have_count(1)  # focus stays visible

    # Back to the queue (u), filtered as it was when the turn was opened; then all of it: the
    # confirmed turn is gone from the open findings.
    with page.expect_navigation():
        page.keyboard.press("u")
    page.goto(f"{live_server.url}/p/acme/")
    expect(page.locator("#results tbody tr[data-row]")).to_have_count(2)
    page.keyboard.press("j")
    expect(page.locator("tr[data-row].current")).to_contain_text(count.title)
    _open_current_row(page)

    # d dismisses: it asks for a reason, chosen with the arrow keys, then Enter.
    page.keyboard.press("j")
    page.keyboard.press("d")
    assert page.evaluate("document.activeElement.name") == "reason"
    page.keyboard.press("ArrowDown")
    with page.expect_response(re.compile(rf"/findings/{miscount.pk}/decide$")):
        page.keyboard.press("Enter")
    card = page.locator(f"#finding-{miscount.pk}")
    expect(card.locator(".status")).to_have_text("Dismissed")
    expect(card.locator(".decisions")).to_contain_text("Dismissed by bob")

    # The last open turn: n (needs correction) confirms it and starts the suite's correction;
    # e edits it, with the diff against the answer; Ctrl+Enter saves.
    with page.expect_navigation():
        page.keyboard.press("u")
    page.keyboard.press("j")
    expect(page.locator("tr[data-row].current")).to_contain_text(sencha.title)
    _open_current_row(page)
    page.keyboard.press("j")
    with page.expect_response(re.compile(rf"/findings/{unsaved.pk}/decide$")):
        page.keyboard.press("n")
    card = page.locator(f"#finding-{unsaved.pk}")
    expect(card.locator(".status")).to_have_text("Confirmed")
    expect(card.locator(".cstate")).to_have_text("Proposed")
    page.keyboard.press("e")
    assert page.evaluate("document.activeElement.name") == "text"
    page.keyboard.press("ControlOrMeta+a")
    corrected = "I could not save your favourite tea: no tool ran. Shall I try again?"
    page.keyboard.type(corrected)
    with page.expect_response(re.compile(rf"/findings/{unsaved.pk}/correction$")):
        page.keyboard.press("Control+Enter")
    expect(card.locator("pre.corrtext")).to_have_text(corrected)
    expect(card.locator(".diffview ins").first).to_be_attached()
    expect(card.locator(".diffview del").first).to_be_attached()

    # Its author cannot approve it: a says why, and nothing changes.
    page.keyboard.press("Escape")
    page.keyboard.press("a")
    expect(card.locator(".refusal")).to_contain_text("a second reviewer must approve it")
    correction = Correction.objects.get(finding=unsaved)
    assert (correction.state, correction.author, correction.text) == ("proposed", bob, corrected)
    _shot(page, "desk-turn-correction.png")

    # A second reviewer approves it, by keyboard too.
    other = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        second = other.new_page()
        sign_in(second, live_server, alice, by_keyboard=True)
        second.goto(f"{live_server.url}{unsaved.turn.get_absolute_url()}")
        second.keyboard.press("j")
        with second.expect_response(re.compile(r"/corrections/\d+/approve$")):
            second.keyboard.press("a")
        expect(second.locator(f"#finding-{unsaved.pk} .cstate")).to_have_text("Approved")
        expect(second.locator("#audit")).to_contain_text("correction.approved")
    finally:
        other.close()

    correction.refresh_from_db()
    assert (correction.state, correction.approver) == ("approved", alice)
    assert {d.verdict for d in Decision.objects.filter(reviewer=bob)} == {"confirmed", "dismissed"}
    assert Decision.objects.get(finding=miscount).reason == "The value is in a tool result"
    verbs = set(AuditEvent.objects.values_list("verb", flat=True))
    assert {"finding.confirmed", "finding.dismissed", "correction.proposed", "correction.edited"} <= verbs
    assert "correction.approved" in verbs
    assert [e for e in page.errors] == []


def test_the_keys_panel_opens_with_a_question_mark(
    page: Any, live_server: Any, project: Any, bob: Any
) -> None:
    ingest_and_check(project, load_example("01"))
    sign_in(page, live_server, bob, by_keyboard=True)
    page.goto(f"{live_server.url}/p/acme/")
    page.keyboard.press("?")
    expect(page.locator("dialog#keys")).to_be_visible()
    expect(page.locator("dialog#keys")).to_contain_text("confirm the current finding")
    page.keyboard.press("Escape")
    expect(page.locator("dialog#keys")).to_be_hidden()
