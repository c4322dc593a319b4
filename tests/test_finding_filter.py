"""One finding filter behind the queue, its bulk actions, the exports and the API: the same
names everywhere, the dates' older names (``from``, ``to``) still read, and the same findings
selected wherever a filter is given."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from checks import review
from checks.filters import FindingFilter, InvalidFilter
from checks.models import Decision, ExportJob, Finding, FindingStatus, SavedView
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

EXPORT = "/p/acme/exports/file"


@pytest.fixture
def checked(ingest: Any, alice: Any, bob: Any) -> dict[str, Any]:
    """Four examples; one by another agent and model, raised ten days ago; one flag assigned
    to bob and one confirmed."""
    conversations = {name: ingest(name) for name in ("01", "07", "09")}
    other = load_example("05")
    other["agent"] = {"name": "night-shift", "model": "other-2b"}
    conversations["05"] = ingest(other)
    Finding.objects.filter(conversation=conversations["05"]).update(
        created_at=timezone.now() - timedelta(days=10)
    )
    review.assign(
        finding=Finding.objects.get(conversation=conversations["01"], severity="flag"),
        assignee=bob,
        actor=alice,
    )
    review.record_decision(
        finding=Finding.objects.filter(conversation=conversations["07"], severity="flag").first(),
        reviewer=bob,
        verdict="confirmed",
    )
    return conversations


def _queue_ids(client: Any, query: str) -> set[int]:
    response = client.get(f"/p/acme/?{query}")
    assert response.status_code == 200
    found = set()
    for row in response.context["rows"]:
        for item in row["findings"]:
            finding = item[0] if isinstance(item, tuple) else item  # a finding, or (finding, holder)
            found.add(finding.pk)
    return found


def _export_ids(client: Any, query: str) -> set[int]:
    response = client.get(f"{EXPORT}?kind=jsonl&{query}")
    assert response.status_code == 200, response.content[:300]
    return {json.loads(line)["id"] for line in b"".join(response.streaming_content).decode().splitlines()}


def _dates() -> list[tuple[str, str]]:
    today = timezone.localdate()
    before = today - timedelta(days=10)
    return [(str(today), str(today)), (str(before), str(before)), (str(before), ""), ("", str(before))]


def _query(since: str, until: str, names: tuple[str, str]) -> str:
    return "&".join(f"{name}={value}" for name, value in zip(names, (since, until), strict=True) if value)


def test_from_and_to_select_in_the_queue_what_since_and_until_select(
    client: Any, alice: Any, checked: dict[str, Any]
) -> None:
    client.force_login(alice)
    for since, until in _dates():
        old = _query(since, until, ("from", "to"))
        new = _query(since, until, ("since", "until"))
        assert _queue_ids(client, old) == _queue_ids(client, new), old
    before = str(timezone.localdate() - timedelta(days=10))
    assert _queue_ids(client, f"from={before}&to={before}") == set(
        Finding.objects.open().flags().filter(conversation=checked["05"]).values_list("pk", flat=True)
    )
    # The queue writes the one set of names back into its links and the query it saves.
    response = client.get(f"/p/acme/?from={before}&to={before}&checker=tool_receipts")
    assert response.context["query"] == f"checker=tool_receipts&since={before}&until={before}"


def test_a_saved_view_written_with_from_and_to_still_selects_the_same_findings(
    client: Any, alice: Any, checked: dict[str, Any]
) -> None:
    before = str(timezone.localdate() - timedelta(days=10))
    view = SavedView.objects.create(
        project=checked["05"].project, user=alice, name="Old", query=f"status=all&from={before}&to={before}"
    )
    client.force_login(alice)
    html = client.get("/p/acme/").content.decode()
    assert f'href="?{view.query.replace("&", "&amp;")}">Old</a>' in html
    opened = _queue_ids(client, view.query)
    assert opened and opened == _queue_ids(client, f"status=all&since={before}&until={before}")
    assert opened == set(
        Finding.objects.current().flags().filter(conversation=checked["05"]).values_list("pk", flat=True)
    )
    # Saved again, the view keeps the one set of names.
    client.post("/p/acme/views", {"name": "Again", "query": view.query})
    assert SavedView.objects.get(name="Again").query == f"status=all&since={before}&until={before}"


def test_a_bulk_action_on_an_old_query_decides_what_the_new_one_selects(
    client: Any, bob: Any, checked: dict[str, Any]
) -> None:
    before = str(timezone.localdate() - timedelta(days=10))
    selected = set(
        Finding.objects.open().flags().filter(conversation=checked["05"]).values_list("pk", flat=True)
    )
    client.force_login(bob)
    data = {"action": "confirmed", "scope": "all", "query": f"from={before}&to={before}"}
    assert client.post("/p/acme/bulk", data).status_code == 302
    assert (
        set(Decision.objects.values_list("finding_id", flat=True))
        - {f.pk for f in Finding.objects.filter(conversation=checked["07"])}
        == selected
    )


@pytest.mark.parametrize(
    "query",
    [
        "agent=night-shift",
        "agent=example-agent&model=example-9b",
        "model=other-2b",
        "assignee=bob",
        "assignee=mine",
        "assignee=none",
        "q=sencha",
        "q=nothing-says-this",
        "checker=tool_receipts&code=count_misstatement",
        "status=confirmed",
        "severity=info",
        "status=open&severity=flag&agent=example-agent&q=sencha",
        "from=2000-01-01&to=2100-01-01&assignee=none",
    ],
)
def test_the_exports_and_the_queue_accept_the_same_filters(
    client: Any, bob: Any, checked: dict[str, Any], query: str
) -> None:
    client.force_login(bob)
    # Both pages default differently when a status or severity is left out (the queue shows
    # open flags), so the comparison says them.
    full = query
    for name in ("status", "severity"):
        if f"{name}=" not in full:
            full += f"&{name}=all"
    assert _queue_ids(client, full) == _export_ids(client, full)
    assert _export_ids(client, full) == set(
        FindingFilter.parse(dict(p.split("=") for p in full.split("&")))
        .findings(checked["01"].project, user=bob)
        .values_list("pk", flat=True)
    )


def test_the_exports_read_from_and_to_and_name_the_field_they_cannot_read(
    client: Any, vic: Any, checked: dict[str, Any]
) -> None:
    client.force_login(vic)
    for since, until in _dates():
        old = _query(since, until, ("from", "to"))
        assert _export_ids(client, old) == _export_ids(client, _query(since, until, ("since", "until"))), old
    response = client.get(EXPORT, {"kind": "csv", "from": "yesterday"})
    assert response.status_code == 400
    assert response.content.decode() == "from: use a date as YYYY-MM-DD, such as 2026-11-30."
    response = client.get(EXPORT, {"kind": "csv", "assignee": "mine", "severity": "loud"})
    assert response.status_code == 400
    assert response.content.decode() == "severity: use one of flag, info, or leave it empty for all."
    page = client.get("/p/acme/exports", {"status": "shut"})
    assert (
        page.status_code == 400 and "status: use one of open, confirmed, dismissed" in page.context["error"]
    )


def test_the_exports_page_offers_every_filter_and_keeps_them_for_a_large_export(
    client: Any, bob: Any, checked: dict[str, Any], settings: Any
) -> None:
    settings.RECEIPTS_EXPORT_INLINE_MAX = 0
    client.force_login(bob)
    response = client.get(
        EXPORT, {"kind": "csv", "agent": "example-agent", "q": "sencha", "from": "2000-01-01"}
    )
    assert response.status_code == 302
    assert "agent=example-agent" in response["Location"] and "since=2000-01-01" in response["Location"]
    html = client.get(response["Location"]).content.decode()
    for name in ("agent", "model", "assignee", "q", "since", "until"):
        assert f'name="{name}"' in html, name
    assert '<input type="hidden" name="agent" value="example-agent">' in html
    assert '<input type="hidden" name="q" value="sencha">' in html
    assert '<input type="hidden" name="since" value="2000-01-01">' in html


def test_a_background_export_selects_mine_as_who_asked_for_it(
    client: Any,
    bob: Any,
    checked: dict[str, Any],
    settings: Any,
    tmp_path: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.VAR_DIR = tmp_path
    client.force_login(bob)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/p/acme/exports/jobs", {"kind": "jsonl", "assignee": "mine", "from": "2000-01-01"}
        )
    assert response.status_code == 302
    job = ExportJob.objects.get()
    assert job.filters["assignee"] == "mine" and job.filters["since"] == "2000-01-01"
    body = client.get(f"/p/acme/exports/jobs/{job.pk}/file")
    records = [json.loads(line) for line in b"".join(body.streaming_content).decode().splitlines()]
    assert {r["id"] for r in records} == set(
        Finding.objects.filter(assignee=bob).values_list("pk", flat=True)
    )
    assert records


def test_the_api_selects_a_conversations_findings_with_the_same_filters(
    client: Any, api_key: str, checked: dict[str, Any]
) -> None:
    conversation = checked["07"]
    url = f"/api/v1/conversations/{conversation.pk}/findings"
    headers = {"Authorization": f"Bearer {api_key}"}

    def ids(**query: str) -> set[int]:
        response = client.get(url, query, headers=headers)
        assert response.status_code == 200, response.content
        return {f["id"] for f in response.json()["findings"]}

    everything = set(Finding.objects.current().filter(conversation=conversation).values_list("pk", flat=True))
    assert ids() == everything
    assert ids(status="confirmed") == set(
        Finding.objects.filter(conversation=conversation, status=FindingStatus.CONFIRMED).values_list(
            "pk", flat=True
        )
    )
    assert ids(severity="info") == set(
        Finding.objects.current()
        .filter(conversation=conversation, severity="info")
        .values_list("pk", flat=True)
    )
    today = str(timezone.localdate())
    assert ids(**{"from": today, "to": today}) == ids(since=today, until=today) == everything
    assert ids(**{"from": "2000-01-01", "to": "2000-01-01"}) == set()
    assert ids(assignee="mine") == set()  # a key is no one
    refused = client.get(url, {"until": "31/12/2026"}, headers=headers)
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {"path": "until", "message": "until: use a date as YYYY-MM-DD, such as 2026-11-30."}
    ]


def test_the_filter_reads_strictly_or_falls_back_to_its_defaults() -> None:
    queue = FindingFilter(status="open", severity="flag")
    given = {"status": "shut", "severity": "all", "from": "2026-02-30", "to": "2026-03-01", "q": " vpn "}
    lenient = FindingFilter.parse(given, defaults=queue, strict=False)
    assert (lenient.status, lenient.severity, lenient.since, lenient.until, lenient.q) == (
        "open",
        "all",
        "",
        "2026-03-01",
        "vpn",
    )
    assert lenient.query(queue) == "severity=all&until=2026-03-01&q=vpn"
    with pytest.raises(InvalidFilter, match=r"^status: use one of open, confirmed, dismissed") as raised:
        FindingFilter.parse(given)
    assert raised.value.field == "status"
    with pytest.raises(InvalidFilter, match=r"^from: use a date as YYYY-MM-DD"):
        FindingFilter.parse({"from": "2026-02-30"})
    # A conversation is named by its external id, or by its number.
    assert FindingFilter.parse({"conversation": "١٢"}).conversation == "١٢"
    # The names given win over their older aliases; "any" says "all"; a stored filter reads back.
    both = FindingFilter.parse({"since": "2026-01-02", "from": "2025-01-01", "status": "any"})
    assert (both.since, both.status) == ("2026-01-02", "all")
    assert FindingFilter.parse(both.as_dict()) == both


def test_the_overview_and_the_report_read_the_same_dates(
    client: Any, vic: Any, checked: dict[str, Any]
) -> None:
    from checks.reporting import figures

    today = str(timezone.localdate())
    assert figures.period_from({"from": today, "to": today}) == figures.period_from(
        {"since": today, "until": today}
    )
    with pytest.raises(figures.InvalidPeriod, match=r"^to: use a date as YYYY-MM-DD"):
        figures.period_from({"to": "tomorrow"})
    client.force_login(vic)
    response = client.get("/p/acme/overview", {"from": "soon"})
    assert response.status_code == 400 and response.context["error"].startswith("from: ")
    # The figures count turns: a finding raised ten days ago on a turn of today counts today,
    # where the queue and the exports select it on the day it was raised.
    overview = client.get("/p/acme/overview", {"from": today, "to": today}).context["data"]
    assert overview.figures["flags"] == Finding.objects.current().flags().count()
    assert _export_ids(client, f"severity=flag&since={today}") == set(
        Finding.objects.current().flags().exclude(conversation=checked["05"]).values_list("pk", flat=True)
    )


def test_a_value_holding_nul_is_named_or_dropped_before_any_query(client: Any, alice: Any) -> None:
    """PostgreSQL can neither compare with U+0000 nor keep it in an audit event: the strict
    reading names the field, and the queue, which reads leniently, shows what it would
    without that filter rather than fail."""
    with pytest.raises(InvalidFilter, match=r"^agent: remove the U\+0000 character") as raised:
        FindingFilter.parse({"agent": "help\x00desk"})
    assert raised.value.field == "agent"
    assert FindingFilter.parse({"q": "a\x00b", "status": "open"}, strict=False).q == ""
    client.force_login(alice)
    assert client.get("/p/acme/", {"q": "vpn\x00"}).status_code == 200


def test_the_conversation_filter_takes_the_external_id_the_queue_shows_or_the_number(
    client: Any, alice: Any, ingest: Any
) -> None:
    first, second = ingest("01"), ingest("09")
    client.force_login(alice)
    for named in (first.external_id, str(first.pk)):
        rows = client.get("/p/acme/", {"conversation": named, "status": "all"}).context["rows"]
        assert {row["turn"].conversation_id for row in rows} == {first.pk}, named
    assert client.get("/p/acme/", {"conversation": "no-such-id"}).context["rows"] == []
    assert second.pk != first.pk
