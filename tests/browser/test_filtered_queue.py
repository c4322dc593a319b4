"""A filtered queue, worked in a real browser: an auditor on a queue filtered to one agent
goes through its turns by keyboard alone (], [, confirm, back to the queue) and never lands
on a turn outside the filter; a bulk action says how many findings it will change, asks
once, and can be undone. Screenshots go to test-results/."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from playwright.sync_api import expect

from checks import checking, ingestion
from checks.models import AuditEvent, CheckRun, Decision, Finding, FindingStatus, RunStatus, Turn
from tests.browser.desk import settle, sign_in
from tests.conftest import load_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"
NIGHT = "night-shift"


def _sencha(project: Any, n: int, agent: str) -> Turn:
    payload = load_example("01")
    payload["external_id"] = f"sencha-{n}"
    payload["title"] = f"Sencha {n} ({agent})"
    payload["agent"] = {"name": agent, "model": "example-9b"}
    result = ingestion.ingest_conversation(project=project, payload=payload, body=json.dumps(payload))
    checking.check_runs(run_ids=[result.run.pk])
    assert CheckRun.objects.get(pk=result.run.pk).status == RunStatus.DONE
    return Turn.objects.get(conversation=result.conversation)


@pytest.fixture
def shifts(project: Any) -> dict[str, list[Turn]]:
    """Seven flagged turns by two agents in turn, the night shift's newest last."""
    turns: dict[str, list[Turn]] = {"day-shift": [], NIGHT: []}
    for n in range(7):
        agent = "day-shift" if n % 2 == 0 else NIGHT
        turns[agent].append(_sencha(project, n, agent))
    return turns


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def _turn_here(page: Any) -> Turn:
    """The turn the page shows, checked to be within the night shift's filter."""
    url = urlsplit(page.url)
    assert parse_qs(url.query).get("agent") == [NIGHT], page.url
    turn = Turn.objects.select_related("conversation").get(pk=int(url.path.rstrip("/").split("/")[-1]))
    assert turn.conversation.agent_name == NIGHT, f"{page.url} is a turn of {turn.conversation.agent_name}"
    return turn


def _press_and_land(page: Any, key: str) -> Turn:
    with page.expect_navigation():
        page.keyboard.press(key)
    settle(page)
    return _turn_here(page)


def test_an_auditor_works_a_filtered_queue_by_keyboard_and_never_leaves_it(
    page: Any, live_server: Any, bob: Any, shifts: dict[str, list[Turn]]
) -> None:
    nights = [t.pk for t in reversed(shifts[NIGHT])]  # the queue's order: newest first
    sign_in(page, live_server, bob, by_keyboard=True)
    page.goto(f"{live_server.url}/p/acme/?agent={NIGHT}")
    expect(page.locator("#results tr[data-row]")).to_have_count(len(nights))
    _shot(page, "filtered-queue.png")

    # j, Enter: the first row's turn, within the filter; ] to the end of the filtered queue.
    page.keyboard.press("j")
    seen = [_press_and_land(page, "Enter").pk]
    expect(page.locator("[data-queue-filter]")).to_contain_text(NIGHT)
    while page.locator("a[rel=next]").count():
        seen.append(_press_and_land(page, "]").pk)
    assert seen == nights
    _shot(page, "filtered-turn-last.png")

    # [ back to the middle turn; c confirms its finding there.
    middle = _press_and_land(page, "[")
    assert middle.pk == nights[1]
    flag = Finding.objects.get(turn=middle, severity="flag")
    page.keyboard.press("j")
    with page.expect_response(re.compile(rf"/findings/{flag.pk}/decide$")):
        page.keyboard.press("c")
    expect(page.locator(f"#finding-{flag.pk} .status")).to_have_text("Confirmed")
    _shot(page, "filtered-turn-decided.png")

    # u: back to the night shift's queue where the reviewer was; the decided turn has left
    # the open findings, and the list goes on from the row after it.
    with page.expect_navigation():
        page.keyboard.press("u")
    assert parse_qs(urlsplit(page.url).query).get("agent") == [NIGHT]
    rows = page.locator("#results tr[data-row]")
    expect(rows).to_have_count(1)
    page.keyboard.press("j")
    expect(page.locator(f"#row-{nights[2]}.current")).to_be_focused()
    expect(page.locator(".resumed")).to_contain_text("Back to the newest")
    _shot(page, "filtered-queue-back.png")

    # Enter opens it; [ passes over the decided turn to the newest, ] comes back.
    assert _press_and_land(page, "Enter").pk == nights[2]
    assert _press_and_land(page, "[").pk == nights[0]
    assert _press_and_land(page, "]").pk == nights[2]

    # From a turn still in the filter, u comes back to its own row, focused.
    with page.expect_navigation():
        page.keyboard.press("u")
    expect(page.locator(f"#row-{nights[2]}.current")).to_be_focused()
    assert _press_and_land(page, "Enter").pk == nights[2]
    expect(page.locator("a[rel=next]")).to_have_count(0)  # the end of the filter: ] goes nowhere
    page.keyboard.press("]")
    _turn_here(page)

    assert Decision.objects.get().finding == flag and flag.turn.conversation.agent_name == NIGHT
    assert page.errors == []


def test_a_bulk_action_shows_its_count_asks_once_and_can_be_undone(
    page: Any, live_server: Any, bob: Any, shifts: dict[str, list[Turn]]
) -> None:
    nights = Finding.objects.filter(severity="flag", conversation__agent_name=NIGHT)
    others = Finding.objects.exclude(pk__in=nights)
    assert nights.count() == 3
    sign_in(page, live_server, bob, by_keyboard=True)
    page.goto(f"{live_server.url}/p/acme/?agent={NIGHT}")
    page.locator("#bulk input[name=scope][value=all]").check()
    with page.expect_navigation():
        page.locator("#bulk button[value=confirmed]").click()

    # The confirm step: the count, the filters, one button (focused) to go on.
    expect(page.locator("[data-bulk-count]")).to_contain_text(
        "Confirm 3 findings of everything these filters match"
    )
    expect(page.locator(".bulkconfirm")).to_contain_text(f"agent: {NIGHT}")
    expect(page.locator("[data-bulk-go]")).to_be_focused()
    assert not Decision.objects.exists()
    _shot(page, "bulk-confirm.png")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    # One banner: what was done, beside its Undo button.
    expect(page.locator(".flash.undo")).to_contain_text("3 findings confirmed")
    expect(page.locator(".flash")).to_have_count(1)
    assert set(nights.values_list("status", flat=True)) == {FindingStatus.CONFIRMED}
    assert set(others.values_list("status", flat=True)) == {FindingStatus.OPEN}
    undo = page.locator("[data-undo]")
    expect(undo).to_be_visible()
    _shot(page, "bulk-done-undo-offered.png")

    with page.expect_navigation():
        undo.click()
    expect(page.locator(".flash[role=status]")).to_contain_text("Undone: 3 findings back as they were")
    expect(page.locator("[data-undo]")).to_have_count(0)
    expect(page.locator("#results tr[data-row]")).to_have_count(3)
    assert set(nights.values_list("status", flat=True)) == {FindingStatus.OPEN}
    assert not Decision.objects.exists()
    assert AuditEvent.objects.filter(verb="finding.decision_undone").count() == 3
    _shot(page, "bulk-undone.png")
    assert page.errors == []
