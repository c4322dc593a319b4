"""The overview's charts in a real browser, over one day and over a year: each chart is as wide
as its card, a single day is drawn as columns with their values (not lone dots), and a year's
labels under the axis never run into one another. Screenshots go to test-results/."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone
from playwright.sync_api import expect

from checks import checking, ingestion
from checks.models import CheckRun, RunStatus, Turn
from tests.browser.desk import sign_in
from tests.conftest import load_example

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(settings.BASE_DIR) / "test-results"

# (example, days ago, agent): flags today and spread over the year before.
CONVERSATIONS = [
    ("05", 0, "billing"),
    ("07", 0, "support"),
    ("04", 0, "support"),
    ("14", 0, "billing"),
    ("09", 20, "billing"),
    ("13", 75, "support"),
    ("06", 160, "billing"),
    ("12", 300, "support"),
]


def _store(project: Any, example: str, days_ago: int, agent: str) -> None:
    payload = {**load_example(example), "agent": {"name": agent, "model": "m-1"}}
    payload["external_id"] = f"{payload['external_id']}-{days_ago}"
    result = ingestion.ingest_conversation(project=project, payload=payload, body=json.dumps(payload))
    Turn.objects.filter(conversation=result.conversation).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    checking.check_runs(run_ids=[result.run.pk])
    assert CheckRun.objects.get(pk=result.run.pk).status == RunStatus.DONE


# Per chart: the width of its SVG and of its card's content box (the card less its padding).
WIDTHS = """() => [...document.querySelectorAll('figure.chart')].filter(f => f.querySelector('svg.chart-svg'))
  .map(f => {
    const style = getComputedStyle(f);
    const inner = f.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return [f.id, f.querySelector('svg.chart-svg').getBoundingClientRect().width, inner];
  })"""

# The boxes of the labels under a chart's x axis, left to right.
X_LABELS = """id => [...document.querySelectorAll('#' + id + ' svg.chart-svg text[text-anchor=middle]')]
  .filter(t => !t.getAttribute('font-weight'))
  .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.right, t.textContent]; })
  .sort((a, b) => a[0] - b[0])"""


def _charts_fill_their_cards(page: Any) -> None:
    widths = page.evaluate(WIDTHS)
    assert len(widths) >= 8
    for ident, svg, inner in widths:
        assert svg >= inner - 1, f"{ident}: the chart is {svg:.0f} px wide in a card of {inner:.0f} px"


def test_charts_fill_their_cards_from_one_day_to_a_year(
    page: Any, live_server: Any, project: Any, vic: Any
) -> None:
    for example, days_ago, agent in CONVERSATIONS:
        _store(project, example, days_ago, agent)
    # The turns were moved back in time around the app (their check ran as they were
    # stored, on today's turns): the figures are counted anew from the findings, as after a
    # restore.
    call_command("rebuild_daily_figures")
    SHOTS.mkdir(exist_ok=True)
    sign_in(page, live_server, vic)
    today = timezone.localdate()

    # One day: each series a column with its rate written above it.
    page.goto(f"{live_server.url}/p/acme/overview?since={today}&until={today}")
    chart = page.locator("#chart-rate-checker")
    expect(chart.locator("figcaption")).to_contain_text("per day")
    columns = chart.locator("rect.chart-column")
    assert columns.count() >= 2
    assert chart.locator("circle").count() == 0  # no lone dots
    labels = chart.locator("svg text[font-weight='600']").all_text_contents()
    assert len(labels) == columns.count() and all(label.endswith("%") for label in labels)
    assert columns.first.bounding_box()["height"] > 10  # type: ignore[index]
    _charts_fill_their_cards(page)
    # The numbers stay beside the picture.
    chart.get_by_text("The numbers").click()
    expect(chart.locator("table.numbers-table tbody tr")).to_have_count(1)
    page.screenshot(path=str(SHOTS / "overview-one-day.png"), full_page=True)

    # A year: a point a month, its labels apart.
    page.goto(f"{live_server.url}/p/acme/overview?since={today - timedelta(days=364)}&until={today}")
    chart = page.locator("#chart-rate-agent")
    expect(chart.locator("figcaption")).to_contain_text("per month")
    assert chart.locator("polyline").count() == 2
    for name in ("billing", "support"):  # each agent a line over the months it had turns
        dots = chart.locator("circle").filter(has_text=name)
        assert dots.count() >= 3, name
    boxes = page.evaluate(X_LABELS, "chart-rate-agent")
    assert 6 <= len(boxes) <= 8
    for (_, right, label), (left, _, following) in zip(boxes, boxes[1:], strict=False):
        assert right < left, f"the labels {label!r} and {following!r} overlap"
    _charts_fill_their_cards(page)
    page.screenshot(path=str(SHOTS / "overview-one-year.png"), full_page=True)
    assert page.errors == []


def test_on_a_phone_a_chart_s_axis_text_stays_readable_and_the_page_fits(
    browser: Any, live_server: Any, project: Any, alice: Any
) -> None:
    _store(project, "09", 0, "support-bot")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        sign_in(page, live_server, alice)
        page.goto(f"{live_server.url}/p/acme/overview")
        svg_text = page.locator("figure.chart svg.chart-svg text").first
        box = svg_text.bounding_box()
        assert box is not None and box["height"] >= 8, f"axis text drawn {box} high on a phone"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "phone-overview-charts.png"), full_page=True)
    finally:
        context.close()
