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


def _conversation() -> dict[str, Any]:
    for line in CORPUS.read_text().splitlines():
        payload = json.loads(line)
        if payload["external_id"] == EXTERNAL_ID:
            return payload
    raise LookupError(EXTERNAL_ID)


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

    # Decide and go on, in one action: the page leaves for the next flag's turn or the queue.
    here = page.url
    card.get_by_role("button", name="Confirm and next").click()
    page.wait_for_url(lambda url: url != here)
    assert Decision.objects.filter(finding=finding, verdict="confirmed").exists()
