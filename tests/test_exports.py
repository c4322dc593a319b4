"""Exports of findings (CSV, JSONL, OTel evaluation events) and of approved corrections."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.utils import timezone

from checks import review
from checks.models import Correction, ExportJob, Finding
from checks.reporting import exports

pytestmark = pytest.mark.django_db

URL = "/p/acme/exports/file"


def _body(response: Any) -> str:
    assert response.status_code == 200, response.content[:500]
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def reviewed(ingest: Any, alice: Any, bob: Any) -> dict[str, Any]:
    """Three examples checked; one flag confirmed with a hostile reason and an approved
    correction, one dismissed."""
    ingest("05")
    ingest("01")
    ingest("09")
    count = Finding.objects.get(code="count_misstatement")
    action = Finding.objects.get(code="unverified_action")
    review.record_decision(finding=count, reviewer=bob, verdict="confirmed", reason='=HYPERLINK("x")')
    review.record_decision(finding=action, reviewer=bob, verdict="dismissed", reason="+1 plain")
    correction = Correction.objects.create(
        project=count.project,
        finding=count,
        text="The search returned 3 open tickets about the VPN.",
        author=bob,
        approver=alice,
        state="approved",
        decided_at=timezone.now(),
    )
    return {"count": count, "action": action, "correction": correction}


def test_the_csv_reads_back_with_the_csv_module_and_neutralizes_formulas(
    client: Any, vic: Any, reviewed: dict[str, Any]
) -> None:
    client.force_login(vic)  # a viewer may export
    response = client.get(URL, {"kind": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(_body(response))))
    assert {int(r["finding_id"]) for r in rows} == set(Finding.objects.current().values_list("pk", flat=True))
    count = next(r for r in rows if r["code"] == "count_misstatement")
    assert count["decision"] == "confirmed" and count["decided_by"] == "bob"
    assert count["decision_reason"] == '\'=HYPERLINK("x")'  # shown as text, never run
    assert count["approved_correction"] == "The search returned 3 open tickets about the VPN."
    assert count["correction_approver"] == "alice"
    assert "search call-1" in count["evidence"]
    dismissed = next(r for r in rows if r["code"] == "unverified_action")
    assert dismissed["decision_reason"] == "'+1 plain"
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(exports.FORMULA_STARTS), cell


def test_every_formula_start_is_neutralized() -> None:
    ascii_starts = ["=", "+", "-", "@", "\t", "\r", "\n"]
    hidden_starts = [" =", "\n=", "  +", "\u3000=", "＝", "＋", "－", "＠", " ＝"]  # blanks first, full width
    for start in ascii_starts + hidden_starts:
        assert exports.neutralize(f"{start}cmd|' /C calc'!A0") == f"'{start}cmd|' /C calc'!A0", start
    assert exports.neutralize("plain = text") == "plain = text"
    assert exports.neutralize(" plain") == " plain"
    assert exports.neutralize(None) == ""


def test_a_formula_after_any_run_of_invisible_characters_is_neutralized() -> None:
    """Spaces other than the ASCII one (U+2003 em space, U+00A0), zero-width and other format
    characters (U+200B, U+FEFF, U+200E, U+2060), line and paragraph separators, and controls
    show as nothing before a formula sign: a run of any of them, in any order, is skipped."""
    invisible = ["\u2003", "\u200b", "\ufeff", "\u200e", "\u2060", "\u2028", "\u2029", "\u00a0", "\u202f",
                 "\u3000", "\x0b", "\x0c", "\x1f", "\x85", "\t", "\r", "\n", " "]  # fmt: skip
    runs = [*invisible, "\u2003\u200b", "\u200b \u2003\t", "".join(invisible), "\u200b" * 50]
    for run in runs:
        for sign in ["=", "+", "-", "@", "＝", "﹢"]:
            cell = f'{run}{sign}HYPERLINK("http://x.example")'
            assert exports.neutralize(cell) == "'" + cell, (run, sign)
    for plain in ["\u2003plain", "\u200bplain = 1", "\u200b", "\u2003"]:
        assert exports.neutralize(plain) == plain


def test_the_jsonl_reparses_to_the_same_findings(client: Any, vic: Any, reviewed: dict[str, Any]) -> None:
    client.force_login(vic)
    lines = _body(client.get(URL, {"kind": "jsonl"})).splitlines()
    records = [json.loads(line) for line in lines]
    stored = {f.pk: f for f in Finding.objects.current()}
    assert {r["id"] for r in records} == set(stored) and len(records) == len(stored)
    for record in records:
        finding = stored[record["id"]]
        assert (record["checker"], record["code"], record["severity"], record["status"]) == (
            finding.checker,
            finding.code,
            finding.severity,
            finding.status,
        )
        assert record["explanation"] == finding.explanation
        assert record["details"] == finding.details
        assert record["provenance"]["fingerprint"] == finding.fingerprint
        assert record["provenance"]["suite_version"] == "1.0.0"
        assert record["url"].startswith("http://testserver/p/acme/turns/")
    count = next(r for r in records if r["code"] == "count_misstatement")
    assert count["decisions"][0]["reason"] == '=HYPERLINK("x")'  # JSON keeps the text as it was
    assert count["corrections"][0]["state"] == "approved"
    assert count["evidence"][0]["tool"] == "search" and count["evidence"][0]["excerpt"].startswith("[")


def test_filters_select_what_is_exported(client: Any, vic: Any, reviewed: dict[str, Any]) -> None:
    client.force_login(vic)

    def ids(**query: str) -> set[int]:
        return {
            json.loads(line)["id"] for line in _body(client.get(URL, {"kind": "jsonl", **query})).splitlines()
        }

    assert ids(status="confirmed") == {reviewed["count"].pk}
    assert ids(checker="action_claims") == {reviewed["action"].pk}
    assert ids(code="unsupported_value") == set(
        Finding.objects.filter(code="unsupported_value").values_list("pk", flat=True)
    )
    assert all(Finding.objects.get(pk=pk).severity == "info" for pk in ids(severity="info"))
    today = timezone.localdate().isoformat()
    assert ids(since=today, until=today) == set(Finding.objects.current().values_list("pk", flat=True))
    assert ids(until="2000-01-01") == set()
    response = client.get(URL, {"kind": "csv", "since": "yesterday"})
    assert response.status_code == 400 and b"since" in response.content


def test_outsiders_get_404(client: Any, olga: Any, reviewed: dict[str, Any]) -> None:
    client.force_login(olga)
    assert client.get(URL, {"kind": "csv"}).status_code == 404
    assert client.get("/p/acme/exports").status_code == 404


def test_otel_export_is_evaluation_events_tied_to_the_conversation(
    client: Any, vic: Any, reviewed: dict[str, Any]
) -> None:
    client.force_login(vic)
    document = json.loads(_body(client.get(URL, {"kind": "otel"})))
    (resource,) = document["resourceLogs"]
    (scope,) = resource["scopeLogs"]
    events = scope["logRecords"]
    assert len(events) == Finding.objects.current().count()
    count = reviewed["count"]
    event = next(
        e
        for e in events
        if {"key": "receipts.finding.id", "value": {"intValue": str(count.pk)}} in e["attributes"]
    )
    attributes = {a["key"]: next(iter(a["value"].values())) for a in event["attributes"]}
    assert event["eventName"] == "gen_ai.evaluation.result"
    assert attributes["gen_ai.evaluation.name"] == "receipts.tool_receipts"
    assert attributes["gen_ai.evaluation.score.value"] == 0.0
    assert attributes["gen_ai.evaluation.score.label"] == "count_misstatement"
    assert attributes["gen_ai.evaluation.explanation"] == count.explanation
    assert attributes["gen_ai.conversation.id"] == "ex-count"
    assert attributes["receipts.turn.index"] == "0"
    assert attributes["receipts.finding.status"] == "confirmed"
    assert int(event["timeUnixNano"]) > 0


def test_the_corrections_dataset_holds_approved_corrections_in_both_shapes(
    client: Any, vic: Any, alice: Any, bob: Any, reviewed: dict[str, Any]
) -> None:
    action = reviewed["action"]
    Correction.objects.create(project=action.project, finding=action, text="not yet", author=bob)  # proposed
    client.force_login(vic)
    (chat,) = [json.loads(line) for line in _body(client.get(URL, {"kind": "corrections-chat"})).splitlines()]
    roles = [m["role"] for m in chat["messages"]]
    assert roles[0] in ("system", "user") and roles[-1] == "assistant"
    assert chat["messages"][-1]["content"] == "The search returned 3 open tickets about the VPN."
    assert any(m["role"] == "user" and "VPN" in m["content"] for m in chat["messages"])
    call = next(m for m in chat["messages"] if m.get("tool_calls"))
    assert call["tool_calls"][0]["function"]["name"] == "search"
    assert next(m for m in chat["messages"] if m["role"] == "tool")["tool_call_id"] == "call-1"
    assert chat["tools"][0]["function"]["name"] == "search"

    (plain,) = [
        json.loads(line) for line in _body(client.get(URL, {"kind": "corrections-plain"})).splitlines()
    ]
    assert plain["answer"] == "The search returned 12 open tickets about the VPN."
    assert plain["correction"] == "The search returned 3 open tickets about the VPN."
    assert plain["evidence"][0]["tool"] == "search"
    assert (plain["author"], plain["approver"]) == ("bob", "alice")
    assert plain["finding"]["code"] == "count_misstatement"


def test_the_corrections_dataset_leaves_out_a_correction_under_blind_review(
    client: Any, project: Any, vic: Any, alice: Any, bob: Any, ingest: Any
) -> None:
    """A bulk decision undone after its author approved a correction leaves the finding open
    with bob's verdict alone: the approved correction says bob confirmed, so no export shows it
    to whom has not decided it."""
    project.double_review = True
    project.save()
    ingest("05")
    count = Finding.objects.get(code="count_misstatement")
    review.record_decision(finding=count, reviewer=bob, verdict="correction")
    done = review.bulk_decide(
        findings=Finding.objects.filter(pk=count.pk), reviewer=alice, verdict="confirmed"
    )
    review.approve_correction(correction=Correction.objects.get(), approver=alice)
    review.undo_batch(project=project, batch=done.batch, actor=alice, seconds=300)
    assert Finding.objects.get(pk=count.pk).status == "open"
    client.force_login(vic)
    for kind in ("corrections-chat", "corrections-plain"):
        assert _body(client.get(URL, {"kind": kind})) == "", kind
    client.force_login(bob)
    assert _body(client.get(URL, {"kind": "corrections-plain"})).count("\n") == 1


def test_an_export_job_is_its_starters_alone(
    client: Any,
    alice: Any,
    bob: Any,
    vic: Any,
    reviewed: dict[str, Any],
    settings: Any,
    tmp_path: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """A job's file holds what its starter may see (under blind review, their own verdicts), so
    nobody else lists it, follows its progress or downloads it: not an admin, not a viewer."""
    settings.RECEIPTS_EXPORT_INLINE_MAX = 1
    settings.VAR_DIR = tmp_path
    client.force_login(bob)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/p/acme/exports/jobs", {"kind": "jsonl"})
    job = ExportJob.objects.get()
    assert client.get(f"/p/acme/exports/jobs/{job.pk}/file").status_code == 200
    assert [j.pk for j in client.get("/p/acme/exports").context["jobs"]] == [job.pk]
    for other in (alice, vic):
        client.force_login(other)
        assert client.get(f"/p/acme/exports/jobs/{job.pk}/file").status_code == 404
        assert client.get(f"/p/acme/exports/jobs/{job.pk}").status_code == 404
        page = client.get("/p/acme/exports")
        assert list(page.context["jobs"]) == [] and job.filename not in page.content.decode()


def test_a_large_export_runs_in_the_background_with_progress_and_a_download(
    client: Any,
    vic: Any,
    reviewed: dict[str, Any],
    settings: Any,
    tmp_path: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.RECEIPTS_EXPORT_INLINE_MAX = 1
    settings.VAR_DIR = tmp_path
    client.force_login(vic)
    response = client.get(URL, {"kind": "csv", "status": ""})
    assert response.status_code == 302 and "large=1" in response["Location"]
    page = client.get(response["Location"])
    assert b"in the background" in page.content

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/p/acme/exports/jobs", {"kind": "csv"})
    job = ExportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/p/acme/exports/jobs/{job.pk}"
    assert (job.status, job.progress, job.total) == ("done", Finding.objects.current().count(), job.total)
    assert job.requested_by == vic and job.path.startswith("exports/")

    polled = client.get(response["Location"], headers={"HX-Request": "true"})
    assert polled.status_code == 286  # finished: htmx stops polling
    assert b'value="100"' in polled.content and b"Download" in polled.content

    download = client.get(f"/p/acme/exports/jobs/{job.pk}/file")
    body = b"".join(download.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert len(rows) == Finding.objects.current().count()
    assert download["Content-Disposition"].startswith("attachment")


def test_a_running_job_keeps_polling(client: Any, vic: Any, project: Any) -> None:
    job = ExportJob.objects.create(
        project=project, requested_by=vic, kind="csv", status="running", progress=5, total=20
    )
    client.force_login(vic)
    polled = client.get(f"/p/acme/exports/jobs/{job.pk}", headers={"HX-Request": "true"})
    assert polled.status_code == 200 and b'value="25"' in polled.content and b"every 1s" in polled.content
    assert client.get(f"/p/acme/exports/jobs/{job.pk}/file").status_code == 404


def test_another_projects_job_is_not_found(client: Any, olga: Any, project: Any) -> None:
    job = ExportJob.objects.create(project=project, kind="csv", status="done")
    client.force_login(olga)
    assert client.get(f"/p/acme/exports/jobs/{job.pk}").status_code == 404
    assert client.get(f"/p/elsewhere/exports/jobs/{job.pk}").status_code == 404
