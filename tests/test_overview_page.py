"""The project overview: figures, charts drawn as inline SVG, each with its numbers."""

from __future__ import annotations

from typing import Any

import pytest

from checks import review
from checks.models import Finding
from checks.reporting import figures
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

URL = "/p/acme/overview"


@pytest.fixture
def checked(ingest: Any, bob: Any) -> None:
    for example in ("01", "04", "05", "07", "09", "14"):
        ingest(example)
    review.record_decision(
        finding=Finding.objects.get(code="count_misstatement"), reviewer=bob, verdict="confirmed"
    )
    review.record_decision(
        finding=Finding.objects.get(code="failed_action_claimed"), reviewer=bob, verdict="dismissed"
    )


def test_a_viewer_sees_the_figures_and_charts(client: Any, vic: Any, checked: None) -> None:
    client.force_login(vic)
    response = client.get(URL)
    assert response.status_code == 200
    data = response.context["data"]
    figures = data.figures
    assert figures["conversations"] == 6 and figures["turns"] == 6
    assert figures["flagged_turns"] == 5 and figures["flag_rate_text"] == "83.3%"
    assert (figures["confirmed"], figures["dismissed"]) == (1, 1)
    page = response.content.decode()
    assert page.count('<svg class="chart-svg"') >= 8
    assert "style=" not in page  # the CSP forbids inline styles
    assert "The numbers" in page


def test_precision_is_confirmed_over_decided_per_checker(checked: None, project: Any) -> None:
    data = figures.overview(project, figures.period_from({}))
    by_checker = {row["checker"]: row for row in data.by_checker}
    assert by_checker["tool_receipts"]["precision"] == 1.0
    assert by_checker["action_claims"]["precision"] == 0.0
    assert by_checker["evidence"]["precision"] is None
    assert by_checker["action_claims"]["open"] == 2 and by_checker["action_claims"]["dismissed"] == 1
    rows = data.charts["precision"].table_rows
    assert ["tool_receipts", "1", "0", "100.0%"] in rows


def test_flag_rates_per_checker_and_agent_over_time(checked: None, project: Any) -> None:
    data = figures.overview(project, figures.period_from({}))
    chart = data.charts["checker_over_time"]
    assert {s.name for s in chart.series} >= {"action_claims", "tool_receipts", "evidence"}
    (today,) = chart.table_rows  # all turns arrived today
    column = chart.table_head.index("action_claims")
    assert today[column] == "3/6 (50.0%)"
    agents = {row["name"]: row for row in data.by_agent}
    assert sum(row["turns"] for row in agents.values()) == 6
    # Each series is drawn: its polyline goes through its dots, and today's 50% for
    # action_claims sits on the chart's own 50% line.
    for series in chart.series:
        assert series.dots and series.points == " ".join(f"{x},{y}" for x, y, _ in series.dots)
    height = {label: y for y, label in chart.y_lines}
    action = next(s for s in chart.series if s.name == "action_claims")
    assert action.points == f"{action.dots[0][0]},{height['50%']}"
    assert action.dots[0][2].endswith(": 3 of 6 (50.0%)")


def test_a_bad_period_is_refused(client: Any, vic: Any) -> None:
    client.force_login(vic)
    response = client.get(URL, {"since": "soon"})
    assert response.status_code == 400 and "since" in response.context["error"]
    assert client.get(URL, {"since": "2026-02-01", "until": "2026-01-01"}).status_code == 400


def test_untrusted_names_are_escaped_in_the_charts(client: Any, vic: Any, ingest: Any) -> None:
    payload = load_example("01")
    payload["agent"] = {"name": "<script>alert(1)</script>", "model": 'm"><svg onload=x>'}
    ingest(payload)
    client.force_login(vic)
    page = client.get(URL).content.decode()
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<svg onload" not in page


def test_outsiders_get_404(client: Any, olga: Any) -> None:
    client.force_login(olga)
    assert client.get(URL).status_code == 404
