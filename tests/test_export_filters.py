"""Export what you see: the exports form and the queue's "Export these" link take every
filter the queue does (the API's findings too: test_api_reports.py, with the helpers here).

Each test runs once per name the finding filter reads (``filters.PARAMS``), so a filter added
to FindingFilter is covered here without an edit: its value is tried from a few likely ones
until the filter accepts one. For each name, what the export holds must be exactly what the
filter selects, and the filter must select less than everything, so a field that was left out
(and the export that came back whole) cannot pass.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.utils import timezone

from checks import review
from checks.filters import EVERYTHING, PARAMS, FindingFilter, InvalidFilter
from checks.models import Finding
from checks.views import filter_form
from checks.views.queue import read_filters
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

# Values a filter unknown to this test may take, tried in order.
LIKELY_VALUES = ("yes", "true", "1", "on")


class FormFields(HTMLParser):
    """What a browser submits for one form of a page (the one whose action ends with
    ``action``), leaving out its buttons: text, date and hidden inputs, checked boxes, and
    each select's chosen option (else its first)."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action, self.inside = action, False
        self.fields: list[tuple[str, str]] = []
        self.names: list[str] = []  # of every field, in order, whatever its value
        self._select: str | None = None
        self._options: list[tuple[str, bool]] = []
        self._option: dict[str, Any] | None = None  # the option being read: value, selected, text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.inside = a.get("action", "").endswith(self.action)
        elif not self.inside:
            return
        elif tag == "option" and self._select is not None:
            self._option = {"value": a.get("value"), "selected": "selected" in a, "text": ""}
        elif tag == "select" and a.get("name"):
            self.names.append(a["name"])
            self._select, self._options = a["name"], []
        elif tag == "input" and a.get("name") and a.get("type", "text") not in ("submit", "button", "reset"):
            self.names.append(a["name"])
            if a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self.fields.append((a["name"], a.get("value", "")))

    def handle_data(self, data: str) -> None:
        if self._option is not None:
            self._option["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "option" and self._option is not None:
            value = self._option["value"]
            self._options.append(
                (value if value is not None else self._option["text"].strip(), self._option["selected"])
            )
            self._option = None
        elif tag == "select" and self._select is not None:
            chosen = [v for v, selected in self._options if selected] or [v for v, _ in self._options[:1]]
            self.fields.append((self._select, chosen[0] if chosen else ""))
            self._select = None
        elif tag == "form":
            self.inside = False


def form_fields(html: str, action: str) -> FormFields:
    parser = FormFields(action)
    parser.feed(html)
    return parser


def _ids(body: str) -> set[int]:
    return {json.loads(line)["id"] for line in body.splitlines() if line}


def _streamed(response: Any) -> str:
    assert response.status_code == 200, response.content[:500] if not response.streaming else response
    assert response.streaming  # written as it is read, never built whole
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def desk(ingest: Any, alice: Any, bob: Any, vic: Any, project: Any) -> dict[str, Any]:
    return make_desk(ingest, alice, bob, project)


def make_desk(ingest: Any, alice: Any, bob: Any, project: Any) -> dict[str, Any]:
    """Three conversations of two agents and models (one unnamed), checked; one finding
    confirmed, one disputed by two reviewers, one assigned to bob, one raised ten days ago."""
    named = load_example("05")
    named["agent"] = {"name": "support-bot", "model": "m-large"}
    other = load_example("01")
    other["agent"] = {"name": "sales-bot", "model": "m-small"}
    first, second, third = ingest(named), ingest(other), ingest("09")
    count = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=count, reviewer=bob, verdict="confirmed")
    action = Finding.objects.get(code="unverified_action")
    review.record_decision(finding=action, reviewer=bob, verdict="confirmed")
    review.record_decision(finding=action, reviewer=alice, verdict="dismissed")
    *_, assigned, old = Finding.objects.filter(conversation=third).order_by("pk")
    review.assign(finding=assigned, assignee=bob, actor=alice)
    Finding.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=10))
    # A word of the first conversation's answers that the others' answers lack.
    words = {
        c.pk: set(re.findall(r"[a-z]{5,}", " ".join(c.turns.values_list("answer", flat=True)).lower()))
        for c in (first, second, third)
    }
    word = sorted(words[first.pk] - words[second.pk] - words[third.pk])[0]
    today = timezone.localdate()
    samples = {
        "status": "confirmed",
        "severity": "info",
        "checker": "action_claims",
        "code": "count_misstatement",
        "agent": "support-bot",
        "model": "m-small",
        "assignee": "bob",
        "since": (today - timedelta(days=3)).isoformat(),
        "until": (today - timedelta(days=5)).isoformat(),
        "q": word,
        "conversation": str(second.pk),
    }
    return {"project": project, "samples": samples, "alice": alice}


def sample(desk: dict[str, Any], name: str) -> str:
    """A value for the filter ``name`` that selects less than everything."""
    if name in desk["samples"]:
        return str(desk["samples"][name])
    for value in LIKELY_VALUES:
        try:
            if FindingFilter.parse({name: value}) != EVERYTHING:
                return value
        except InvalidFilter:
            continue
    pytest.fail(f"the filter {name!r} takes none of {LIKELY_VALUES}: give this test a value for it in desk()")


def selected(desk: dict[str, Any], filters: FindingFilter) -> set[int]:
    """What the filter selects, as alice (who signs in for these tests) reads it."""
    return set(filters.findings(desk["project"], user=desk["alice"]).values_list("pk", flat=True))


def narrowing(desk: dict[str, Any], name: str) -> tuple[str, set[int]]:
    """A value of ``name`` and the findings it selects, which are fewer than all."""
    value = sample(desk, name)
    expected = selected(desk, FindingFilter.parse({name: value}))
    assert expected != selected(desk, EVERYTHING), f"{name}={value} selects everything: no test of it"
    return value, expected


def submit_exports_form(client: Any, page: Any) -> set[int]:
    """Submits the exports page's form as a browser would, for JSON Lines; the ids exported."""
    assert page.status_code == 200, page.content[:500]
    form = form_fields(page.content.decode(), "/p/acme/exports/file")
    assert set(PARAMS) <= set(form.names), f"fields missing: {set(PARAMS) - set(form.names)}"
    return _ids(_streamed(client.get("/p/acme/exports/file", [*form.fields, ("kind", "jsonl")])))


@pytest.mark.parametrize("name", PARAMS)
def test_the_exports_form_takes_every_queue_filter(client: Any, desk: dict[str, Any], name: str) -> None:
    """Opened with one filter in its address, the exports form shows it and exports exactly
    the findings it selects."""
    client.force_login(desk["alice"])
    value, expected = narrowing(desk, name)
    assert submit_exports_form(client, client.get("/p/acme/exports", {name: value})) == expected


@pytest.mark.parametrize("name", PARAMS)
def test_export_these_carries_the_queues_filters(client: Any, desk: dict[str, Any], name: str) -> None:
    """The queue's "Export these" opens the exports form on what the queue shows (its default
    open flags included), and the export holds those findings."""
    client.force_login(desk["alice"])
    value = sample(desk, name)
    queue = client.get("/p/acme/", {name: value})
    assert queue.status_code == 200
    (href,) = re.findall(r'<a href="([^"]*)"[^>]*>Export these</a>', queue.content.decode())
    link = urlsplit(href.replace("&amp;", "&"))
    assert link.path == "/p/acme/exports"
    shown = read_filters({name: value})
    assert FindingFilter.parse(dict(parse_qsl(link.query))) == shown
    assert submit_exports_form(client, client.get(href.replace("&amp;", "&"))) == selected(desk, shown)


def test_a_value_the_filter_cannot_read_is_named_and_the_rest_kept(client: Any, desk: dict[str, Any]) -> None:
    client.force_login(desk["alice"])
    page = client.get("/p/acme/exports", {"agent": "support-bot", "since": "last week"})
    assert page.status_code == 400
    assert "since: use a date as YYYY-MM-DD" in page.content.decode()
    assert ("agent", "support-bot") in form_fields(page.content.decode(), "/p/acme/exports/file").fields


def test_a_filter_value_the_project_lacks_stays_chosen(client: Any, desk: dict[str, Any]) -> None:
    """A list would otherwise fall back to "any" and the export would hold everything."""
    client.force_login(desk["alice"])
    page = client.get("/p/acme/exports", {"agent": "retired-bot", "assignee": "someone-gone"})
    fields = dict(form_fields(page.content.decode(), "/p/acme/exports/file").fields)
    assert fields["agent"] == "retired-bot" and fields["assignee"] == "someone-gone"


def test_a_value_holding_u0000_is_refused_by_name(client: Any, desk: dict[str, Any]) -> None:
    """PostgreSQL can compare no text with U+0000 in it: a 400, never a 500."""
    client.force_login(desk["alice"])
    for path in ("/p/acme/exports", "/p/acme/exports/file"):
        response = client.get(path, {"model": "m\x00", "kind": "jsonl"})
        assert response.status_code == 400 and "model: remove the U+0000" in response.content.decode()


def test_a_filter_without_a_widget_of_its_own_still_gets_a_field(
    client: Any, desk: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a filter added to FindingFilter would be, before anyone draws a widget for it: a
    name WIDGETS leaves out is drawn as a plain text field, and what it holds is submitted."""
    name = PARAMS[-1]
    monkeypatch.setattr(filter_form, "WIDGETS", tuple(n for n in filter_form.WIDGETS if n != name))
    client.force_login(desk["alice"])
    value, expected = narrowing(desk, name)
    page = client.get("/p/acme/exports", {name: value})
    assert f'name="{name}" value="{value}"' in page.content.decode()  # the plain text field
    assert submit_exports_form(client, page) == expected
