"""Values at the edges of what a field can hold get a 4xx naming the field, never a 500.

Dates at the ends of the calendar (a day's bounds are computed one day past them), ids too
large for a 64-bit column, and digits that are not ASCII ("²" passes ``str.isdigit``) once
reached the database or the calendar arithmetic and failed there.
"""

from __future__ import annotations

from typing import Any

import pytest

from checks.filters import FindingFilter, InvalidFilter

pytestmark = pytest.mark.django_db

ODD = ["9999-12-31", "0001-01-01", "99999999999999999999999", "²", "-1"]


@pytest.mark.parametrize("value", ODD)
def test_no_page_or_api_read_fails_on_an_odd_value(client: Any, alice: Any, ingest: Any, value: str) -> None:
    conversation = ingest("01")
    client.force_login(alice)
    reads = [
        *(f"/p/acme/?{name}={value}" for name in ("since", "until", "from", "to", "conversation", "after")),
        f"/p/acme/overview?since={value}",
        f"/p/acme/overview?until={value}",
        f"/p/acme/exports?until={value}",
        f"/p/acme/exports/file?kind=csv&since={value}",
        f"/p/acme/exports/file?kind=csv&conversation={value}",
        f"/p/acme/report.pdf?until={value}",
        f"/api/v1/conversations/{conversation.pk}/findings?since={value}",
        f"/p/acme/history/finding/{value}",
        f"/p/acme/history/correction/{value}",
    ]
    writes = [
        ("/p/acme/bulk", {"since": value, "verdict": "confirmed", "turn": value}),
        ("/p/acme/views", {"name": "odd", "query": f"since={value}&conversation={value}"}),
        ("/p/acme/exports/jobs", {"kind": "csv", "since": value}),
        ("/p/acme/exports/jobs", {"kind": "pdf", "until": value}),
        ("/p/acme/keys", {"name": "k", "scopes": ["read"], "expires": value}),
    ]
    failed = [(url, client.get(url).status_code) for url in reads]
    failed += [(url, client.post(url, data).status_code) for url, data in writes]
    assert [(url, status) for url, status in failed if status >= 500] == []
    # The saved view holding the odd value opens too.
    assert client.get("/p/acme/?since=" + value).status_code < 500


@pytest.mark.parametrize(
    ("query", "field", "says"),
    [
        ({"until": "9999-12-31"}, "until", "use a date from 1900-01-01 to 9998-12-31."),
        ({"from": "0001-01-01"}, "from", "use a date from 1900-01-01 to 9998-12-31."),
    ],
)
def test_the_filter_refuses_what_no_column_can_hold(query: dict[str, str], field: str, says: str) -> None:
    with pytest.raises(InvalidFilter) as refused:
        FindingFilter.parse(query)
    assert refused.value.field == field and str(refused.value).startswith(f"{field}: {says}")


def test_the_exports_say_which_field_is_wrong(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.get("/p/acme/exports/file?kind=csv&until=9999-12-31")
    assert response.status_code == 400
    assert "until" in response.content.decode() and "9998-12-31" in response.content.decode()
