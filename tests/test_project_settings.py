"""A project's checker options: edited by its admins, validated by the suite, audited."""

from __future__ import annotations

import json
from typing import Any

import pytest

from checks.models import AuditEvent, CheckRun, Project

pytestmark = pytest.mark.django_db

URL = "/p/acme/settings"


def test_an_admin_saves_options_and_the_change_is_audited(client: Any, alice: Any, project: Project) -> None:
    client.force_login(alice)
    options = {"evidence": {"min_digits": 5, "posture": "guard"}}
    response = client.post(URL, {"options": json.dumps(options)})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.options == options
    event = AuditEvent.objects.get()
    assert (event.verb, event.before, event.after) == (
        "project.options_changed",
        {"options": {}},
        {"options": options},
    )


def test_a_bad_option_is_refused_with_its_name_and_nothing_changes(
    client: Any, alice: Any, project: Project
) -> None:
    client.force_login(alice)
    response = client.post(URL, {"options": json.dumps({"evidence": {"min_digits": 0}})})
    assert response.status_code == 400
    assert "min_digits" in response.context["error"]
    response = client.post(URL, {"options": json.dumps({"evidenze": {}})})
    assert response.status_code == 400 and "evidenze" in response.context["error"]
    response = client.post(URL, {"options": "{not json"})
    assert response.status_code == 400 and "not valid JSON" in response.context["error"]
    project.refresh_from_db()
    assert project.options == {} and not AuditEvent.objects.exists()


def test_saving_can_check_every_conversation_again(
    client: Any, alice: Any, project: Project, ingest: Any, django_capture_on_commit_callbacks: Any
) -> None:
    ingest("01")
    ingest("02")
    client.force_login(alice)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(URL, {"options": "{}", "recheck": "1"})
    assert CheckRun.objects.filter(status="done").count() == 4


def test_new_options_change_what_the_next_run_finds(project: Project, ingest: Any, alice: Any) -> None:
    """The stored options reach the suite: an option the suite rejects fails the run by name."""
    from checks import checking

    conversation = ingest("01")
    Project.objects.filter(pk=project.pk).update(options={"evidence": {"posture": "nonsense"}})
    run = CheckRun.objects.create(project=project, conversation=conversation)
    checking.check_runs(run_ids=[run.pk])
    run.refresh_from_db()
    assert run.status == "failed" and "posture" in run.error


def test_reviewers_and_viewers_cannot_change_options(client: Any, bob: Any, vic: Any) -> None:
    for user in (bob, vic):
        client.force_login(user)
        assert client.get(URL).status_code == 403
        assert client.post(URL, {"options": "{}"}).status_code == 403


def test_an_outsider_gets_404(client: Any, olga: Any, project: Project) -> None:
    client.force_login(olga)
    assert client.get(URL).status_code == 404
