"""The triage queue: flagged turns of one project, newest first, filtered with htmx."""

from __future__ import annotations

from typing import Any

import pytest

from checks import review
from checks.models import Finding

pytestmark = pytest.mark.django_db


@pytest.fixture
def flagged(ingest: Any) -> dict[str, Any]:
    return {name: ingest(name) for name in ("01", "02", "05", "07", "08")}


def test_it_needs_a_login(client: Any, project: Any) -> None:
    response = client.get("/p/acme/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_it_lists_turns_with_open_flags_newest_first(client: Any, alice: Any, flagged: Any) -> None:
    client.force_login(alice)
    response = client.get("/p/acme/")
    assert response.status_code == 200
    rows = [row["turn"].conversation.external_id for row in response.context["rows"]]
    # 02 (honest) and 08 (only an info finding) are not in the queue.
    assert rows == ["ex-fabricated", "ex-count", "ex-sencha"]
    assert response.context["counts"]["open"] == 4


def test_it_filters_by_checker_code_and_status(client: Any, alice: Any, flagged: Any) -> None:
    client.force_login(alice)
    by_checker = client.get("/p/acme/?checker=tool_receipts").context["rows"]
    assert [r["turn"].conversation.external_id for r in by_checker] == ["ex-fabricated", "ex-count"]
    by_code = client.get("/p/acme/?code=unverified_action").context["rows"]
    assert [r["turn"].conversation.external_id for r in by_code] == ["ex-fabricated", "ex-sencha"]

    review.record_decision(
        finding=Finding.objects.get(code="count_misstatement"), reviewer=alice, verdict="dismissed"
    )
    assert "ex-count" not in [
        r["turn"].conversation.external_id for r in client.get("/p/acme/").context["rows"]
    ]
    dismissed = client.get("/p/acme/?status=dismissed").context["rows"]
    assert [r["turn"].conversation.external_id for r in dismissed] == ["ex-count"]


def test_an_htmx_request_gets_only_the_results_fragment(client: Any, alice: Any, flagged: Any) -> None:
    client.force_login(alice)
    response = client.get("/p/acme/?checker=action_claims", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert 'id="results"' in html
    assert "<html" not in html and 'class="filters"' not in html
    assert "ex-sencha" in html or "Favourite tea" in html


def test_it_pages_with_a_cursor(client: Any, alice: Any, ingest: Any, monkeypatch: Any) -> None:
    from checks.views import queue

    monkeypatch.setattr(queue, "PAGE_SIZE", 2)
    for n in range(5):
        payload = {
            "external_id": f"c{n}",
            "turns": [
                {
                    "tools_offered": [],
                    "messages": [
                        {"role": "user", "content": "x"},
                        {"role": "assistant", "content": "I've saved it."},
                    ],
                }
            ],
        }
        ingest(payload)
    client.force_login(alice)
    seen = []
    url = "/p/acme/"
    while url:
        response = client.get(url)
        seen += [r["turn"].conversation.external_id for r in response.context["rows"]]
        cursor = response.context["next_cursor"]
        url = f"/p/acme/?after={cursor}" if cursor else ""
    assert seen == ["c4", "c3", "c2", "c1", "c0"]


def test_a_viewer_sees_the_queue(client: Any, vic: Any, flagged: Any) -> None:
    client.force_login(vic)
    assert client.get("/p/acme/").status_code == 200


def test_an_outsider_gets_404(client: Any, olga: Any, flagged: Any) -> None:
    client.force_login(olga)
    assert client.get("/p/acme/").status_code == 404


def test_the_home_page_lists_only_the_users_projects(
    client: Any, alice: Any, olga: Any, flagged: Any
) -> None:
    client.force_login(olga)
    html = client.get("/").content.decode()
    assert "Elsewhere" in html and "Acme support" not in html
    client.force_login(alice)
    response = client.get("/")
    [(project, label)] = response.context["projects"]
    assert (project.open_flags, label) == (4, "4")
    assert '<td class="num">4</td>' in response.content.decode()


def test_the_home_page_counts_open_flags_up_to_the_cap(
    client: Any, alice: Any, flagged: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from checks.views import queue

    monkeypatch.setattr(queue, "COUNT_CAP", 3)
    client.force_login(alice)
    response = client.get("/")
    [(project, label)] = response.context["projects"]
    assert (project.open_flags, label) == (4, "3+")  # stopped at the cap + 1
    assert '<td class="num">3+</td>' in response.content.decode()
