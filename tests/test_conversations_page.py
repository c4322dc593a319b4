"""The conversations page: every conversation of the project, flagged or not, searchable by
external id and answer words, filtered by agent, model, day received and open flags, paged
by keyset; a conversation with no finding is reachable from it."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from checks.models import Conversation
from checks.views import conversations as page
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

URL = "/p/acme/conversations/"


def payload(
    example: str, external_id: str, *, agent: str = "example-agent", model: str = "example-9b"
) -> Any:
    data = load_example(example)
    data["external_id"] = external_id
    data["agent"] = {"name": agent, "model": model}
    return data


def listed(response: Any) -> list[str]:
    """The external ids the page lists, in order."""
    assert response.status_code == 200, response.content[:500]
    return re.findall(r"<td data-label=\"External id\"><code>([^<]+)</code>", response.content.decode())


@pytest.fixture
def three(ingest: Any) -> dict[str, Conversation]:
    """A flagged conversation (sencha), a quiet one (the honest refusal) and one of another
    agent and model (a grounded answer), received in that order."""
    return {
        "sencha": ingest(payload("01", "conv-sencha")),
        "quiet": ingest(payload("02", "conv-quiet")),
        "other": ingest(payload("14", "ORD-7781", agent="billing-bot", model="large-2")),
    }


def test_it_lists_every_conversation_newest_first_and_links_each(client: Any, bob: Any, three: Any) -> None:
    client.force_login(bob)
    response = client.get(URL)
    assert listed(response) == ["ORD-7781", "conv-quiet", "conv-sencha"]
    html = response.content.decode()
    # The quiet conversation has no finding at all, and its page is one click away.
    quiet = three["quiet"]
    assert not quiet.findings.exists()
    assert f'href="/p/acme/conversations/{quiet.pk}/"' in html
    assert client.get(f"/p/acme/conversations/{quiet.pk}/").status_code == 200


def test_it_filters_by_open_flags(client: Any, bob: Any, three: Any) -> None:
    client.force_login(bob)
    assert listed(client.get(URL, {"flags": "yes"})) == ["conv-sencha"]
    assert listed(client.get(URL, {"flags": "no"})) == ["ORD-7781", "conv-quiet"]
    html = client.get(URL, {"flags": "yes"}).content.decode()
    # The count of open flags leads to the queue, filtered to that conversation.
    assert f'href="/p/acme/?conversation={three["sencha"].pk}"' in html


def test_it_filters_by_agent_and_model(client: Any, bob: Any, three: Any) -> None:
    client.force_login(bob)
    assert listed(client.get(URL, {"agent": "billing-bot"})) == ["ORD-7781"]
    assert listed(client.get(URL, {"model": "example-9b"})) == ["conv-quiet", "conv-sencha"]
    assert listed(client.get(URL, {"agent": "billing-bot", "model": "example-9b"})) == []


def test_it_searches_external_ids_by_prefix_and_answers_by_words(client: Any, bob: Any, three: Any) -> None:
    client.force_login(bob)
    assert listed(client.get(URL, {"q": "ORD-77"})) == ["ORD-7781"]
    assert listed(client.get(URL, {"q": "conv-"})) == ["conv-quiet", "conv-sencha"]
    # "sencha" is a word of the sencha conversation's answer, not of its id.
    assert listed(client.get(URL, {"q": "Sench"})) == ["conv-sencha"]
    assert listed(client.get(URL, {"q": "nothing-like-this"})) == []


def test_it_filters_by_the_day_received(client: Any, bob: Any, three: Any) -> None:
    old = timezone.now() - timedelta(days=10)
    Conversation.objects.filter(pk=three["sencha"].pk).update(created_at=old)
    client.force_login(bob)
    day = old.date().isoformat()
    assert listed(client.get(URL, {"since": day, "until": day})) == ["conv-sencha"]
    assert listed(client.get(URL, {"since": (old + timedelta(days=1)).date().isoformat()})) == [
        "ORD-7781",
        "conv-quiet",
    ]


def test_a_filter_it_cannot_read_is_a_400_naming_the_field(client: Any, bob: Any, three: Any) -> None:
    client.force_login(bob)
    response = client.get(URL, {"since": "last week"})
    assert response.status_code == 400
    assert "since: use a date as YYYY-MM-DD" in response.content.decode()
    response = client.get(URL, {"flags": "maybe"})
    assert response.status_code == 400
    assert "flags: use yes, no" in response.content.decode()


def test_it_pages_by_keyset_without_repeating_or_losing_a_row(
    client: Any, bob: Any, ingest: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "PAGE_SIZE", 2)
    for n in range(5):
        ingest(payload("02", f"conv-{n}"))
    # Two received at the same instant: the id breaks the tie.
    same = timezone.now()
    Conversation.objects.filter(external_id__in=["conv-1", "conv-2"]).update(created_at=same)
    client.force_login(bob)
    seen: list[str] = []
    query: dict[str, str] = {}
    for _ in range(5):
        response = client.get(URL, query)
        seen += listed(response)
        after = re.search(r"after=([0-9T_]+)", response.content.decode())
        if not after:
            break
        query = {"after": after.group(1)}
    assert sorted(seen) == [f"conv-{n}" for n in range(5)]
    assert len(seen) == len(set(seen))


def test_load_more_answers_htmx_with_the_rows_alone(
    client: Any, bob: Any, ingest: Any, monkeypatch: Any
) -> None:
    monkeypatch.setattr(page, "PAGE_SIZE", 1)
    ingest(payload("02", "conv-a"))
    ingest(payload("02", "conv-b"))
    client.force_login(bob)
    after = re.search(r"after=([0-9T_]+)", client.get(URL).content.decode())
    assert after
    response = client.get(URL, {"after": after.group(1)}, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html and "conv-a" in html and "conv-b" not in html


def test_model_output_in_a_title_is_escaped(client: Any, bob: Any, ingest: Any) -> None:
    data = payload("02", "conv-hostile")
    data["title"] = '<img src=x onerror="alert(1)">'
    ingest(data)
    client.force_login(bob)
    html = client.get(URL).content.decode()
    assert '<img src=x onerror="alert(1)">' not in html and "&lt;img src=x" in html


def test_an_outsider_gets_404(client: Any, olga: Any, three: Any) -> None:
    client.force_login(olga)
    assert client.get(URL).status_code == 404


def test_a_search_matching_many_finds_the_same_as_one_matching_few(
    client: Any, bob: Any, three: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past MATCHES_LOOKED_UP the ids are no longer looked up first, and the answer is the same."""
    client.force_login(bob)
    few = listed(client.get(URL, {"q": "conv-"}))
    monkeypatch.setattr(page, "MATCHES_LOOKED_UP", 1)
    assert listed(client.get(URL, {"q": "conv-"})) == few == ["conv-quiet", "conv-sencha"]
    assert listed(client.get(URL, {"q": "Sench"})) == ["conv-sencha"]


def test_a_page_makes_as_many_queries_with_many_rows_as_with_few(
    client: Any, bob: Any, ingest: Any, django_assert_max_num_queries: Any
) -> None:
    ingest(payload("01", "conv-first"))
    client.force_login(bob)
    with django_assert_max_num_queries(12) as few:
        client.get(URL, {"q": "conv"})
    for n in range(6):
        ingest(payload("01" if n % 2 else "02", f"conv-more-{n}"))
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert len(listed(client.get(URL, {"q": "conv"}))) == 7


def test_a_nul_character_in_a_filter_is_dropped_not_a_500(client: Any, bob: Any, three: Any) -> None:
    """PostgreSQL refuses any query carrying NUL; no external id or name holds one."""
    client.force_login(bob)
    assert listed(client.get(URL, {"q": "conv-\x00", "model": "example-9b\x00"})) == [
        "conv-quiet",
        "conv-sencha",
    ]
