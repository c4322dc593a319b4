"""The site at phone width (390 px), in a real browser: no page is wider than the screen, the
header's links fold behind a menu button that opens them, the breadcrumb keeps to one line,
and the queue's rows are cards. Screenshots go to test-results/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import expect

from checks.models import Finding
from tests.browser.conftest import TIMEOUT_MS
from tests.browser.desk import ingest_and_check, sign_in
from tests.conftest import load_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"
PHONE = {"width": 390, "height": 844}
# A title long enough to wrap a breadcrumb a word a line, as real conversation titles do.
LONG_TITLE = "Quarterly reconciliation of the customer's refunded orders across three warehouses"


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, is_mobile=True, has_touch=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(error))
    try:
        yield page
    finally:
        context.close()


def _overflow(page: Any) -> int:
    """How many pixels the page is wider than the screen (0 when it fits)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_every_page_fits_a_phone_and_the_menu_opens(
    phone: Any, live_server: Any, project: Any, alice: Any
) -> None:
    flagged = ingest_and_check(project, {**load_example("09"), "title": LONG_TITLE})
    ingest_and_check(project, load_example("12"))
    ingest_and_check(project, load_example("10"))
    finding = Finding.objects.filter(conversation=flagged, severity="flag").first()
    assert finding is not None
    page = phone
    sign_in(page, live_server, alice)

    # The queue: its rows are cards, nothing sticks out.
    page.goto(f"{live_server.url}/p/acme/")
    expect(page.locator("tr[data-row]").first).to_be_visible()
    assert page.locator("table.queue thead").is_hidden()
    assert page.locator("tr[data-row]").first.evaluate("row => getComputedStyle(row).display") == "block"
    assert _overflow(page) <= 0, "the queue is wider than the screen"
    _shot(page, "phone-queue.png")

    # The menu: the links are folded until the button opens them.
    button = page.get_by_role("button", name="Menu")
    expect(button).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "false")
    conversations = page.locator(".projectnav").get_by_role("link", name="Conversations")
    expect(conversations).to_be_hidden()
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")
    expect(conversations).to_be_visible()
    expect(page.locator(".sitenav").get_by_role("link", name="Sign out")).to_have_count(0)  # a button
    expect(page.locator(".sitenav").get_by_role("button", name="Sign out")).to_be_visible()
    assert _overflow(page) <= 0, "the open menu is wider than the screen"
    _shot(page, "phone-menu.png")
    with page.expect_navigation():
        conversations.click()
    expect(page.locator("h1")).to_have_text("Conversations")
    assert _overflow(page) <= 0, "the conversations page is wider than the screen"

    # The turn page, with a long title in its breadcrumb: one line, cut, not wrapped.
    page.goto(f"{live_server.url}{finding.turn.get_absolute_url()}")
    expect(page.locator(f"#finding-{finding.pk}")).to_be_visible()
    crumbs = page.locator(".topbar .crumbs").bounding_box()
    brand = page.locator(".topbar .brand").bounding_box()
    assert crumbs is not None and brand is not None
    assert crumbs["height"] < 1.6 * brand["height"], "the breadcrumb wraps"
    assert _overflow(page) <= 0, "the turn page is wider than the screen"
    _shot(page, "phone-turn.png")

    for path in ("/p/acme/overview", "/p/acme/audit", "/p/acme/members", "/p/acme/settings"):
        page.goto(f"{live_server.url}{path}")
        assert _overflow(page) <= 0, f"{path} is wider than the screen"
    _shot(page, "phone-settings.png")
    page.goto(f"{live_server.url}/p/acme/overview")
    _shot(page, "phone-overview.png")
    assert page.errors == []


def test_at_desktop_width_the_links_show_without_a_menu(
    page: Any, live_server: Any, project: Any, alice: Any
) -> None:
    sign_in(page, live_server, alice)
    page.goto(f"{live_server.url}/p/acme/")
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()
    expect(page.locator(".projectnav").get_by_role("link", name="Audit log")).to_be_visible()
    assert _overflow(page) <= 0
    _shot(page, "desktop-header.png")
