"""A project's checker options: edited by its admins, validated by the suite, audited."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model

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


# --- the same options in the Django admin -------------------------------------------------------


def _admin_form(project: Project, options: str) -> dict[str, str]:
    return {
        "name": project.name,
        "slug": project.slug,
        "options": options,
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"entailment": {"judge_url": "http://127.0.0.1:9/v1", "model": "m"}}, "entailment.judge_url"),
        (
            {"entailment": {"judge_url": "http://x.example/v1", "api_key_env": "RECEIPTS_JUDGE_API_KEY"}},
            "api_key_env",
        ),
        ({"evidenze": {}}, "evidenze"),
        ({"evidence": {"min_digits": 0}}, "min_digits"),
        ([1, 2], "must be a JSON object"),
        ("{not json", "not valid JSON"),
        ("[" * 5000 + "]" * 5000, "nested too deeply"),
        ('{"evidence": {"min_digits": ' + "9" * 5000 + "}}", "digits"),
    ],
)
def test_the_admin_refuses_options_the_settings_page_refuses(
    client: Any, project: Project, settings: Any, options: Any, named: str
) -> None:
    """The admin saved options unchecked: a judge on loopback, a key read from the site's
    environment, a misspelt section; now it asks the settings page's own checks."""
    settings.RECEIPTS_OUTBOUND_ALLOW = []  # no exception for loopback, as in production
    root = get_user_model().objects.create_superuser("root", password="password")
    client.force_login(root)
    before = AuditEvent.objects.count()
    text = options if isinstance(options, str) else json.dumps(options)
    response = client.post(f"/admin/checks/project/{project.pk}/change/", _admin_form(project, text))
    assert response.status_code == 400
    errors = response.context["adminform"].form.errors["options"]
    assert any(named in e for e in errors), errors
    project.refresh_from_db()
    assert project.options == {} and AuditEvent.objects.count() == before


def test_the_admin_saves_options_the_settings_page_takes(client: Any, project: Project) -> None:
    root = get_user_model().objects.create_superuser("root", password="password")
    client.force_login(root)
    options = {"evidence": {"min_digits": 5, "posture": "guard"}}
    url = f"/admin/checks/project/{project.pk}/change/"
    assert client.post(url, _admin_form(project, json.dumps(options))).status_code == 302
    project.refresh_from_db()
    assert project.options == options
    assert client.post(url, _admin_form(project, "")).status_code == 302  # empty: no options
    project.refresh_from_db()
    assert project.options == {}
    # A project added there is checked the same way.
    add = "/admin/checks/project/add/"
    assert client.get(add).status_code == 200
    refused = client.post(add, {**_admin_form(project, '{"evidenze": {}}'), "name": "New", "slug": "new"})
    assert refused.status_code == 400 and not Project.objects.filter(slug="new").exists()
    assert client.post(add, {**_admin_form(project, ""), "name": "New", "slug": "new"}).status_code == 302
    assert Project.objects.get(slug="new").options == {}
