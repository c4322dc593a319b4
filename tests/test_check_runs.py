"""Check runs: claimed once, idempotent by fingerprint, failures recorded, lost runs swept up."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from checks import checking, review, tasks
from checks.models import CheckRun, Finding, FindingStatus, RunStatus

pytestmark = pytest.mark.django_db


def _rerun(conversation: Any) -> CheckRun:
    run = CheckRun.objects.create(project=conversation.project, conversation=conversation)
    checking.check_runs(run_ids=[run.pk])
    run.refresh_from_db()
    return run


def test_it_checks_every_example_as_expected(ingest: Any) -> None:
    """Examples 01 to 08, checked through the service, give the findings EXPECTED.json lists."""
    import json

    from tests.conftest import EXAMPLES

    expected = json.loads((EXAMPLES / "EXPECTED.json").read_text())
    names = [n for n in sorted(expected) if n[:2] <= "08"]
    assert len(names) == 8, names  # the test means all eight, not whichever are listed
    for name in names:
        conversation = ingest(name)
        got = {
            (f.turn.index, f.checker, f.code, f.severity)
            for f in Finding.objects.filter(conversation=conversation)
            if f.severity == "flag" or any(e["code"] == f.code for e in expected[name])
        }
        assert got == {(e["turn"], e["checker"], e["code"], e["severity"]) for e in expected[name]}, name


def test_a_rerun_updates_findings_in_place_and_keeps_decisions(ingest: Any, alice: Any) -> None:
    conversation = ingest("07")
    before = {f.fingerprint: f.pk for f in Finding.objects.all()}
    finding = Finding.objects.get(code="unverified_action")
    review.record_decision(finding=finding, reviewer=alice, verdict="confirmed")

    run = _rerun(conversation)
    assert run.status == RunStatus.DONE
    assert {f.fingerprint: f.pk for f in Finding.objects.all()} == before
    assert Finding.objects.get(pk=finding.pk).status == FindingStatus.CONFIRMED
    assert Finding.objects.get(pk=finding.pk).run_id == run.pk
    assert finding.decisions.count() == 1


def test_a_finding_no_longer_reported_is_withdrawn_not_deleted(ingest: Any) -> None:
    conversation = ingest("01")
    finding = Finding.objects.get()
    # Make the stored answer honest: the next run no longer reports the claim.
    document = conversation.document
    document["turns"][0]["messages"][1]["content"] = "I can't save that in this turn."
    conversation.document = document
    conversation.save()
    _rerun(conversation)
    finding.refresh_from_db()
    assert finding.withdrawn_at is not None
    assert Finding.objects.current().count() == 0


def test_a_run_is_claimed_only_once(ingest: Any) -> None:
    conversation = ingest("02")
    run = CheckRun.objects.create(project=conversation.project, conversation=conversation)
    assert checking.claim_run(run.pk) is not None
    assert checking.claim_run(run.pk) is None  # a redelivered message finds it taken
    run.refresh_from_db()
    assert (run.status, run.attempts) == (RunStatus.RUNNING, 1)


def test_a_claim_left_by_a_dead_worker_is_taken_again_after_the_timeout(ingest: Any, settings: Any) -> None:
    conversation = ingest("02")
    run = CheckRun.objects.create(
        project=conversation.project,
        conversation=conversation,
        status=RunStatus.RUNNING,
        claimed_at=timezone.now() - timedelta(seconds=settings.RECEIPTS_RUN_STALE_SECONDS + 5),
    )
    assert run.pk in checking.stale_runs()
    assert [r.pk for r in checking.check_runs(run_ids=[run.pk])] == [run.pk]
    run.refresh_from_db()
    assert run.status == RunStatus.DONE


def test_the_sweeper_enqueues_runs_whose_message_was_lost(ingest: Any, settings: Any) -> None:
    conversation = ingest("01")
    Finding.objects.all().delete()
    old = timezone.now() - timedelta(seconds=settings.RECEIPTS_RUN_STALE_SECONDS + 5)
    lost = CheckRun.objects.create(project=conversation.project, conversation=conversation, created_at=old)
    fresh = CheckRun.objects.create(project=conversation.project, conversation=conversation)
    assert tasks.sweep_pending_runs() == 1  # eager: the swept run is checked right away
    lost.refresh_from_db()
    fresh.refresh_from_db()
    assert lost.status == RunStatus.DONE
    assert fresh.status == RunStatus.PENDING  # just created: its own message is still on its way
    assert Finding.objects.count() == 1


def test_a_suite_failure_is_recorded_on_the_run(ingest: Any, monkeypatch: Any) -> None:
    conversation = ingest("02")

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("checker blew up")

    monkeypatch.setattr(checking.suite, "run_suite", explode)
    run = _rerun(conversation)
    assert run.status == RunStatus.FAILED
    assert "checker blew up" in run.error


def test_a_check_past_its_time_limit_is_stopped_and_shown_failed_with_why(
    ingest: Any, monkeypatch: Any, settings: Any, client: Any, alice: Any
) -> None:
    """One slow conversation ends as a recorded failure instead of holding the worker: the run
    says the check took longer than RECEIPTS_CHECK_SECONDS, and its page shows it."""
    from checks.suite.tool_receipts import ToolReceipts

    conversation = ingest("02")
    settings.RECEIPTS_CHECK_SECONDS = 0.05
    fuse = time.monotonic() + 10  # without a limit the checker would end here, and the run pass

    def slow(*args: Any, **kwargs: Any) -> Any:
        while time.monotonic() < fuse:
            time.sleep(0.01)
        raise AssertionError("the check was not stopped")

    monkeypatch.setattr(ToolReceipts, "check", slow)
    run = _rerun(conversation)
    assert run.status == RunStatus.FAILED
    assert "took longer than 0.05 s (RECEIPTS_CHECK_SECONDS)" in run.error

    client.force_login(alice)
    page = client.get(f"/p/acme/conversations/{conversation.pk}/").content.decode()
    assert "Check failed: The check took longer than 0.05 s (RECEIPTS_CHECK_SECONDS)" in page


def test_invalid_project_options_fail_the_run_with_the_option_named(ingest: Any, project: Any) -> None:
    conversation = ingest("02")
    project.options = {"evidence": {"min_digits": 0}}
    project.save()
    run = _rerun(conversation)
    assert run.status == RunStatus.FAILED
    assert "min_digits" in run.error


def test_one_task_checks_a_batch(ingest: Any) -> None:
    conversations = [ingest(name) for name in ("01", "04", "05")]
    runs = [CheckRun.objects.create(project=c.project, conversation=c) for c in conversations]
    Finding.objects.all().delete()
    assert tasks.check_runs_task([r.pk for r in runs]) == 3
    assert Finding.objects.flags().count() == 3


def test_findings_in_the_same_place_are_kept_apart(ingest: Any) -> None:
    """Two typed negative claims of one turn, refused for the same reason, are two findings."""
    payload = {
        "external_id": "two-claims",
        "turns": [
            {
                "messages": [
                    {"role": "user", "content": "Any logins?"},
                    {"role": "assistant", "content": "None were recorded."},
                ],
                "negative_claims": [
                    {"kind": "none", "restsOn": ["r7"]},
                    {"kind": "none", "restsOn": ["r8"]},
                ],
            }
        ],
    }
    conversation = ingest(payload)
    negative = Finding.objects.filter(conversation=conversation, checker="negative_claims")
    assert list(negative.values_list("code", flat=True)) == ["citation_unresolved", "citation_unresolved"]
    _rerun(conversation)
    assert Finding.objects.filter(conversation=conversation, checker="negative_claims").count() == 2
