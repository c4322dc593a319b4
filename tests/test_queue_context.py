"""The turn page remembers the queue it was opened from: previous, next and the way back
keep the queue's filters (or a saved view's), in the queue's own order, until the reviewer
follows a link without them."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from checks.models import Finding, FindingStatus, SavedView, Turn
from tests.conftest import load_example

pytestmark = pytest.mark.django_db


def _sencha(n: int, agent: str) -> dict[str, Any]:
    payload = load_example("01")
    payload["external_id"] = f"sencha-{n}"
    payload["agent"] = {"name": agent, "model": "example-9b"}
    return payload


@pytest.fixture
def mixed(ingest: Any) -> dict[str, list[Turn]]:
    """Seven flagged turns, newest last, by two agents in turn: day, night, day, …"""
    agents: dict[str, list[Turn]] = {"day-shift": [], "night-shift": []}
    for n in range(7):
        agent = "day-shift" if n % 2 == 0 else "night-shift"
        conversation = ingest(_sencha(n, agent))
        agents[agent].append(Turn.objects.get(conversation=conversation))
    return agents


def _links(html: str) -> dict[str, str]:
    """The turn page's navigation links by rel (up, prev, next)."""
    start = html.index('<nav class="neighbours"')
    nav = html[start : html.index("</nav>", start)]
    return {rel: unescape(href) for href, rel in _rel_links(nav)}


def _rel_links(nav: str) -> list[tuple[str, str]]:
    out = []
    for tag in re.findall(r"<a [^>]*>", nav):
        rel = re.search(r'rel="(\w+)"', tag)
        href = re.search(r'href="([^"]*)"', tag)
        if rel and href:
            out.append((href.group(1), rel.group(1)))
    return out


def _queue_rows(client: Any, url: str) -> list[int]:
    return [row["turn"].pk for row in client.get(url).context["rows"]]


def _turn_id(url: str) -> int:
    return int(re.search(r"/turns/(\d+)/", url).group(1))  # type: ignore[union-attr]


def test_next_walks_the_filtered_queue_in_its_own_order_and_never_leaves_it(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    client.force_login(bob)
    rows = _queue_rows(client, "/p/acme/?agent=night-shift")
    assert rows == [t.pk for t in reversed(mixed["night-shift"])]

    # From the queue's first row, follow "next" to the end, then "previous" back.
    html = client.get("/p/acme/?agent=night-shift").content.decode()
    first = unescape(re.search(r'class="turnlink" href="([^"]+)"', html).group(1))  # type: ignore[union-attr]
    assert parse_qs(urlsplit(first).query) == {"agent": ["night-shift"]}
    walked, url = [], first
    while url:
        walked.append(_turn_id(url))
        url = _links(client.get(url).content.decode()).get("next", "")
        assert not url or parse_qs(urlsplit(url).query) == {"agent": ["night-shift"]}
    assert walked == rows
    back, url = [], f"/p/acme/turns/{rows[-1]}/?agent=night-shift"
    while url:
        back.append(_turn_id(url))
        url = _links(client.get(url).content.decode()).get("prev", "")
    assert back == list(reversed(rows))


def test_without_filters_the_neighbours_are_the_default_queues(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    client.force_login(bob)
    everything = _queue_rows(client, "/p/acme/")
    middle = everything[3]
    near = client.get(f"/p/acme/turns/{middle}/").context["neighbours"]
    assert (near["previous"].pk, near["next"].pk) == (everything[2], everything[4])


def test_the_way_back_returns_to_the_filtered_queue_at_the_turn(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    client.force_login(bob)
    rows = _queue_rows(client, "/p/acme/?agent=day-shift")
    up = _links(client.get(f"/p/acme/turns/{rows[2]}/?agent=day-shift").content.decode())["up"]
    path, _, fragment = up.partition("#")
    assert fragment == f"row-{rows[2]}"
    assert parse_qs(urlsplit(path).query)["agent"] == ["day-shift"]
    response = client.get(path)
    assert [row["turn"].pk for row in response.context["rows"]] == rows[2:]
    assert "Back to the newest" in response.content.decode()
    # The first turn of the queue goes back to its top: no cursor.
    up = _links(client.get(f"/p/acme/turns/{rows[0]}/?agent=day-shift").content.decode())["up"]
    assert up == f"/p/acme/?agent=day-shift#row-{rows[0]}"


def test_a_decided_turn_still_leads_on_to_the_next_in_the_filter(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    """Confirming a turn's finding takes it out of the open queue; its place in the order
    still gives the next turn, and the way back starts with that turn."""
    client.force_login(bob)
    rows = _queue_rows(client, "/p/acme/?agent=night-shift")
    current = Finding.objects.get(turn_id=rows[1], severity="flag")
    client.post(f"/p/acme/findings/{current.pk}/decide", {"verdict": "confirmed"})
    assert Finding.objects.get(pk=current.pk).status == FindingStatus.CONFIRMED
    links = _links(client.get(f"/p/acme/turns/{rows[1]}/?agent=night-shift").content.decode())
    assert (_turn_id(links["prev"]), _turn_id(links["next"])) == (rows[0], rows[2])
    back = client.get(links["up"].partition("#")[0])
    assert [row["turn"].pk for row in back.context["rows"]] == rows[2:]


def test_a_saved_views_filters_ride_along_too(client: Any, bob: Any, mixed: dict[str, list[Turn]]) -> None:
    client.force_login(bob)
    client.post("/p/acme/views", {"name": "Nights, all", "query": "status=all&agent=night-shift"})
    view = SavedView.objects.get()
    rows = _queue_rows(client, f"/p/acme/?{view.query}")
    html = client.get(f"/p/acme/turns/{rows[0]}/?{view.query}").content.decode()
    links = _links(html)
    assert parse_qs(urlsplit(links["next"]).query) == {"status": ["all"], "agent": ["night-shift"]}
    assert _turn_id(links["next"]) == rows[1] and "prev" not in links
    assert "agent: <strong>night-shift</strong>" in html and "Leave the filter" in html


def test_the_filters_are_read_as_the_queue_reads_them(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    """A value the queue cannot read falls back to its default there and here alike, and the
    links carry the filters as the queue writes them, never the raw query string."""
    client.force_login(bob)
    turn = mixed["day-shift"][1]
    response = client.get(f"/p/acme/turns/{turn.pk}/?agent=day-shift&status=bogus&after=x&evil=<b>")
    assert response.status_code == 200
    links = _links(response.content.decode())
    for rel in ("prev", "next"):
        assert urlsplit(links[rel]).query == "agent=day-shift"
    assert "evil" not in links["up"] and "<b>" not in response.content.decode().split("<nav")[1][:2000]


def test_a_decision_sent_without_htmx_comes_back_within_the_filter(
    client: Any, bob: Any, mixed: dict[str, list[Turn]]
) -> None:
    client.force_login(bob)
    turn = mixed["day-shift"][1]
    finding = Finding.objects.get(turn=turn, severity="flag")
    page = f"http://testserver/p/acme/turns/{turn.pk}/?agent=day-shift&status=all"
    response = client.post(
        f"/p/acme/findings/{finding.pk}/decide", {"verdict": "confirmed"}, headers={"Referer": page}
    )
    assert response["Location"] == f"/p/acme/turns/{turn.pk}/?status=all&agent=day-shift#finding-{finding.pk}"
    # A page of another turn, or of another site, lends no filters.
    other = Finding.objects.get(turn=mixed["day-shift"][2], severity="flag")
    for referer in (page, f"https://elsewhere.example/p/acme/turns/{other.turn_id}/?agent=day-shift"):
        response = client.post(
            f"/p/acme/findings/{other.pk}/decide",
            {"verdict": "dismissed", "reason": "Other"},
            headers={"Referer": referer},
        )
        assert response["Location"] == f"/p/acme/turns/{other.turn_id}/#finding-{other.pk}"


def test_the_turn_page_costs_the_same_however_long_the_queue(
    client: Any, bob: Any, ingest: Any, mixed: dict[str, list[Turn]]
) -> None:
    """Previous and next are one keyset step each way: the page's queries do not grow with
    the turns the filter matches."""
    client.force_login(bob)
    turn = mixed["night-shift"][1]
    url = f"/p/acme/turns/{turn.pk}/?agent=night-shift"
    client.get(url)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    for n in range(7, 15):
        ingest(_sencha(n, "night-shift"))
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many.captured_queries) == len(few.captured_queries)
