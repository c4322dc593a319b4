"""The page a reviewer decides on, in a real browser, on a real turn of the airline corpus
(tests/data/corpora/airline-dev): at 1440x900 the answer and the first finding card lie
within the first screen and the finding's decision controls are visible without scrolling;
the system prompt is folded to one line until opened. Screenshots go to test-results/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from checks.models import Decision, Finding
from tests.browser.desk import ingest_and_check, settle, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"
CORPUS = Path(settings.BASE_DIR) / "tests" / "data" / "corpora" / "airline-dev" / "conversations.jsonl"
DESKTOP = {"width": 1440, "height": 900}
# A conversation whose flagged turn comes after a long policy prompt and a large result.
EXTERNAL_ID = "tau-airline-10-3-160"


def _conversation(external_id: str = EXTERNAL_ID) -> dict[str, Any]:
    for line in CORPUS.read_text().splitlines():
        payload = json.loads(line)
        if payload["external_id"] == external_id:
            return payload
    raise LookupError(external_id)


def _top(locator: Any) -> float:
    box = locator.bounding_box()
    assert box is not None, "not rendered"
    return box["y"]


def _within_screen(locator: Any, height: int) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


def test_the_answer_the_first_finding_and_its_decision_fill_the_first_screen(
    page: Any, live_server: Any, project: Any, alice: Any
) -> None:
    conversation = ingest_and_check(project, _conversation())
    finding = (
        Finding.objects.filter(conversation=conversation, severity="flag").order_by("turn__index").first()
    )
    assert finding is not None, "the corpus turn is no longer flagged"
    assert len(conversation.system or "") > 2000, "the policy prompt is what once pushed the answer down"
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, alice)
    page.goto(f"{live_server.url}/p/acme/turns/{finding.turn_id}/")
    settle(page)

    answer = page.locator(".msg.answer")
    card = page.locator("article.finding.severity-flag").first
    expect(answer).to_be_visible()
    expect(card).to_be_visible()
    assert _top(answer) < DESKTOP["height"], "the answer starts below the first screen"
    assert _top(card) < DESKTOP["height"], "the first finding starts below the first screen"
    assert _within_screen(card.get_by_role("button", name="Confirm", exact=True), DESKTOP["height"])
    assert _within_screen(card.get_by_role("button", name="Confirm and next"), DESKTOP["height"])
    assert _within_screen(card.get_by_role("button", name="Dismiss"), DESKTOP["height"])

    # Call ids are case-sensitive: shown as written, not in the role line's capitals.
    result = page.locator("details.msg.role-tool").first
    call_id = result.locator(".role code").first
    assert (
        call_id.inner_text() == call_id.text_content()
        and call_id.inner_text() != call_id.inner_text().upper()
    )

    prompt = page.locator("details.sysprompt")
    expect(prompt).to_have_count(1)
    assert prompt.evaluate("d => d.open") is False
    summary = prompt.locator("summary")
    assert summary.bounding_box()["height"] < 40, "the folded prompt takes more than one line"
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "turn-1440.png"))
    summary.click()
    expect(prompt.locator(".text")).to_be_visible()

    # Each page of the desk at this width, for a person to look at.
    turn_url = page.url
    for path in ("/p/acme/", "/p/acme/overview", "/p/acme/exports", "/p/acme/settings"):
        page.goto(f"{live_server.url}{path}")
        settle(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= DESKTOP["width"], path
        page.screenshot(path=str(SHOTS / f"desktop-{path.strip('/').replace('/', '-')}.png"))
    page.goto(turn_url)
    settle(page)

    # Decide and go on, in one action: the page leaves for the next flag's turn or the queue.
    here = page.url
    card.get_by_role("button", name="Confirm and next").click()
    page.wait_for_url(lambda url: url != here)
    assert Decision.objects.filter(finding=finding, verdict="confirmed").exists()


PHONE = {"width": 390, "height": 844}


def test_at_phone_width_every_page_of_the_desk_fits_with_everything_opened(
    browser: Any, live_server: Any, project: Any, alice: Any
) -> None:
    """At 390x844 no page of the desk is wider than the screen, the turn page with every
    fold opened (the prompt, each long result, each card's evidence) included; the decision
    buttons are at least 44 px tall to tap."""
    conversation = ingest_and_check(project, _conversation())
    # A second flagged conversation: the queue still holds a row once this one's flag is confirmed.
    ingest_and_check(project, _conversation("tau-airline-10-0-10"))
    finding = (
        Finding.objects.filter(conversation=conversation, severity="flag").order_by("turn__index").first()
    )
    assert finding is not None
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        sign_in(page, live_server, alice)
        page.goto(f"{live_server.url}/p/acme/turns/{finding.turn_id}/")
        settle(page)
        page.evaluate("for (const d of document.querySelectorAll('details')) d.open = true")
        page.wait_for_timeout(300)  # the parts of a long result load through htmx
        settle(page)
        page.evaluate("for (const d of document.querySelectorAll('details')) d.open = true")
        width = page.evaluate("document.documentElement.scrollWidth")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "turn-390-opened.png"), full_page=True)
        wide = page.evaluate(
            """() => Array.from(document.querySelectorAll('body *'))
                .filter(e => e.getBoundingClientRect().right > 391)
                .filter(e => !Array.from(e.children).some(c => c.getBoundingClientRect().right > 391))
                .slice(0, 5)
                .map(e => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`)"""
        )
        assert width <= PHONE["width"], f"the turn page, opened, is {width} px wide: {wide}"
        # The decision bar stays at the screen's foot wherever the reader is, and confirms
        # the current finding.
        bar = page.locator("[data-decisionbar]")
        expect(bar).to_be_visible()
        page.evaluate("window.scrollTo(0, 0)")
        expect(bar.get_by_role("button", name="Confirm", exact=True)).to_be_in_viewport()
        page.evaluate("window.scrollTo(0, document.body.scrollHeight / 2)")
        expect(bar.get_by_role("button", name="Confirm", exact=True)).to_be_in_viewport()
        card = page.locator("article.finding.severity-flag").first
        for name in ("Confirm", "Confirm and next", "Dismiss"):
            box = card.get_by_role("button", name=name, exact=True).bounding_box()
            assert box is not None and box["height"] >= 44, f"{name} is {box} on a phone"
        card.locator("header .codetitle").click()  # the card becomes the current finding
        expect(bar.locator("[data-bar-label]")).to_have_text(card.locator("header .codetitle").inner_text())
        bar.get_by_role("button", name="Confirm", exact=True).click()
        expect(card.locator(".status")).to_have_text("Confirmed")

        # The queue's filters fold into a drawer, so its first row is on the first screen.
        page.goto(f"{live_server.url}/p/acme/")
        drawer = page.locator("details[data-drawer]")
        expect(page.locator("tr[data-row]").first).to_be_in_viewport()
        assert drawer.evaluate("d => d.open") is False
        drawer.locator("summary").click()
        expect(page.locator("#filters select[name=status]")).to_be_visible()
        for path in ("/p/acme/", "/p/acme/overview", "/p/acme/exports", "/p/acme/settings"):
            page.goto(f"{live_server.url}{path}")
            settle(page)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{path} is {width} px wide"
            page.screenshot(path=str(SHOTS / f"phone-{path.strip('/').replace('/', '-') or 'queue'}.png"))
    finally:
        context.close()


def test_the_reviewer_who_settles_a_split_sees_both_verdicts_and_reasons(
    page: Any, live_server: Any, project: Any, alice: Any, bob: Any
) -> None:
    from checks import review
    from tests.conftest import _member

    carol = _member(project, "carol", "reviewer")
    project.double_review = True
    project.save()
    conversation = ingest_and_check(project, _conversation())
    finding = (
        Finding.objects.filter(conversation=conversation, severity="flag").order_by("turn__index").first()
    )
    assert finding is not None
    review.record_decision(
        finding=finding, reviewer=alice, verdict="confirmed", reason="The record says JFK to SFO"
    )
    review.record_decision(finding=finding, reviewer=bob, verdict="dismissed", reason="The user supplied it")
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, carol)
    page.goto(f"{live_server.url}/p/acme/turns/{finding.turn_id}/")
    settle(page)
    card = page.locator(f"#finding-{finding.pk}")
    expect(card.locator("[data-disputed-badge]")).to_be_visible()
    sides = card.locator(".dispute .side")
    expect(sides).to_have_count(2)
    expect(sides.nth(0)).to_contain_text("Confirmed by alice")
    expect(sides.nth(0)).to_contain_text("The record says JFK to SFO")
    expect(sides.nth(1)).to_contain_text("Dismissed by bob")
    expect(sides.nth(1)).to_contain_text("The user supplied it")
    expect(card.get_by_role("button", name="Confirm", exact=True)).to_be_visible()
    page.screenshot(path=str(SHOTS / "turn-1440-dispute.png"))


def test_leaving_the_page_lets_go_of_its_holds(page: Any, live_server: Any, project: Any, alice: Any) -> None:
    """The page holds its open findings while it is open; leaving it releases them at once."""
    conversation = ingest_and_check(project, _conversation())
    finding = (
        Finding.objects.filter(conversation=conversation, severity="flag").order_by("turn__index").first()
    )
    assert finding is not None
    sign_in(page, live_server, alice)
    page.goto(f"{live_server.url}/p/acme/turns/{finding.turn_id}/")
    settle(page)
    finding.refresh_from_db()
    assert finding.held_by == alice
    page.goto(f"{live_server.url}/p/acme/")
    settle(page)
    for _ in range(50):
        finding.refresh_from_db()
        if finding.held_by is None:
            break
        page.wait_for_timeout(100)
    assert finding.held_by is None and finding.held_until is None


def test_after_ticking_a_filter_box_the_keys_still_move_through_the_queue(
    page: Any, live_server: Any, project: Any, alice: Any
) -> None:
    ingest_and_check(project, _conversation())
    page.set_viewport_size(DESKTOP)
    sign_in(page, live_server, alice)
    page.goto(f"{live_server.url}/p/acme/")
    box = page.get_by_label("Disputed")
    rows = page.locator("tr[data-row]")
    count = rows.count()
    assert count > 0
    box.check()
    expect(rows).to_have_count(0)  # nothing disputed yet
    box.uncheck()  # the box keeps the focus, as a mouse leaves it
    expect(rows).to_have_count(count)
    expect(box).to_be_focused()
    page.keyboard.press("j")
    expect(page.locator("tr[data-row].current")).to_have_count(1)


def test_a_value_from_a_nested_list_shows_that_node_s_path_on_the_page_as_in_the_api(
    page: Any, live_server: Any, project: Any, alice: Any, api_key: str
) -> None:
    """A passenger's birth date, read after the legs of the same reservation, is shown under
    passengers[0].dob, not under the legs' list, on the turn page and through the API."""
    payload = next(
        json.loads(line) for line in CORPUS.read_text().splitlines() if '"tau-airline-10-0-10"' in line
    )
    conversation = ingest_and_check(project, payload)
    api = page.request.get(
        f"{live_server.url}/api/v1/conversations/{conversation.pk}/findings",
        headers={"Authorization": f"Bearer {api_key}"},
    )
    assert api.ok, api.text()
    grounded = [p for p in api.json()["provenance"] if p["value"] == "1977-02-03"]
    assert grounded and grounded[0]["evidence"][0]["path"] == "passengers[0].dob"
    turn = conversation.turns.get(index=grounded[0]["turn"])
    sign_in(page, live_server, alice)
    page.goto(f"{live_server.url}/p/acme/turns/{turn.pk}/")
    item = page.locator("ul.grounded li", has_text="1977-02-03").first
    expect(item).to_contain_text("path passengers[0].dob")
    expect(item).not_to_contain_text("path flights")
