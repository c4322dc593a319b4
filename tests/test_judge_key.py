"""Judge keys: the site's key goes to the site's judge alone, and a project's own key is a
write-only secret of the project, sent to its judge, audited without its value, never shown.

The judges are real chat completions servers on loopback (tests/suite/test_judge.py) that
record the Authorization header of each request.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.core.management import call_command

from checks import administration
from checks.models import AuditEvent, CheckRun, Project, RunKind
from checks.suite import judge as judge_module
from tests.suite.test_judge import JudgeServer, running_judge
from tests.test_judge_runs import status_conversation

pytestmark = pytest.mark.django_db

SETTINGS = "/p/acme/settings"
SITE_KEY = "sk-site-0b7d41e9"
PROJECT_KEY = "sk-project-5c2a77f3"


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[JudgeServer]:
    """A judge a project points to, while the site has a judge (and a key) of its own."""
    monkeypatch.setattr(judge_module, "BACKOFF_S", 0.01)
    monkeypatch.setenv("RECEIPTS_JUDGE_URL", "http://judge.internal/v1")
    monkeypatch.setenv("RECEIPTS_JUDGE_MODEL", "site-judge")
    monkeypatch.setenv("RECEIPTS_JUDGE_API_KEY", SITE_KEY)
    with running_judge() as server:
        yield server


def _authorizations(server: JudgeServer) -> list[str | None]:
    return [r["headers"].get("Authorization") for r in server.requests]


def test_the_site_key_never_goes_to_a_judge_url_a_project_set(
    project: Project, alice: Any, ingest: Any, judge_server: JudgeServer
) -> None:
    stealing = {
        "entailment": {"judge_url": judge_server.url, "model": "m", "api_key_env": "RECEIPTS_JUDGE_API_KEY"}
    }
    # Refused when saved, with where a project's key goes instead...
    with pytest.raises(administration.InvalidOptions, match=r"api_key_env.*settings page"):
        administration.update_project_options(project=project, user=alice, options=stealing)
    # ...and options stored some other way send nothing with it.
    project.options = stealing
    project.save()
    ingest(status_conversation("a", "Billing is healthy."))
    assert all(SITE_KEY not in json.dumps(r["headers"]) for r in judge_server.requests)
    # Without a key of the project's own, its judge is asked with none at all.
    project.options = {"entailment": {"judge_url": judge_server.url, "model": "m", "timeout_s": 1}}
    project.save()
    ingest(status_conversation("b", "Billing is healthy."))
    assert _authorizations(judge_server) == [None]


def test_a_projects_own_key_goes_to_its_judge(
    client: Any, project: Project, alice: Any, ingest: Any, judge_server: JudgeServer
) -> None:
    administration.update_project_options(
        project=project,
        user=alice,
        options={"entailment": {"judge_url": judge_server.url, "model": "m", "timeout_s": 1}},
    )
    client.force_login(alice)
    response = client.post(SETTINGS, {"form": "judge_key", "judge_key": f"  {PROJECT_KEY}\n"})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.judge_api_key == PROJECT_KEY
    conversation = ingest(status_conversation("s1", "Billing is healthy."))
    assert _authorizations(judge_server) == [f"Bearer {PROJECT_KEY}"]
    run = CheckRun.objects.get(conversation=conversation, kind=RunKind.JUDGE)
    assert PROJECT_KEY not in json.dumps(run.summary) + run.error


def test_the_key_is_never_shown_back_and_audited_without_its_value(
    client: Any, project: Project, alice: Any, vic: Any, settings: Any
) -> None:
    client.force_login(alice)
    assert "No key is set" in client.get(SETTINGS).content.decode()
    client.post(SETTINGS, {"form": "judge_key", "judge_key": PROJECT_KEY})
    page = client.get(SETTINGS).content.decode()
    assert "A key is set" in page and PROJECT_KEY not in page
    client.post(SETTINGS, {"form": "judge_key", "judge_key": PROJECT_KEY + "-2"})
    client.post(SETTINGS, {"form": "judge_key", "clear": "1"})
    project.refresh_from_db()
    assert project.judge_api_key == ""
    events = list(AuditEvent.objects.order_by("id"))
    assert [(e.verb, e.before, e.after) for e in events] == [
        ("project.judge_key_set", {"judge_key_set": False}, {"judge_key_set": True}),
        ("project.judge_key_set", {"judge_key_set": True}, {"judge_key_set": True}),
        ("project.judge_key_cleared", {"judge_key_set": True}, {"judge_key_set": False}),
    ]
    history = client.get(f"/p/acme/history/project/{project.pk}").content.decode()
    assert "judge_key" in history and PROJECT_KEY not in history
    # Nowhere else either: not the Django admin's project form, not a dump of the log.
    administration.set_judge_key(project=project, actor=alice, key=PROJECT_KEY)
    alice.is_staff = alice.is_superuser = True
    alice.save()
    admin_page = client.get(f"/admin/checks/project/{project.pk}/change/").content.decode()
    assert admin_page and PROJECT_KEY not in admin_page
    dumped = json.dumps([[e.before, e.after, e.verb] for e in AuditEvent.objects.all()])
    assert PROJECT_KEY not in dumped
    assert PROJECT_KEY not in repr(Project.objects.get(pk=project.pk))


def test_only_an_admin_sets_the_key_and_a_key_fit_for_a_header(
    client: Any, project: Project, alice: Any, bob: Any, vic: Any
) -> None:
    for member in (bob, vic):
        client.force_login(member)
        assert client.post(SETTINGS, {"form": "judge_key", "judge_key": PROJECT_KEY}).status_code == 403
    client.force_login(alice)
    for bad in ("two words", "line\r\nX-Injected: 1", "k" * 501):
        with pytest.raises(administration.AdminError, match="judge key"):
            administration.set_judge_key(project=project, actor=alice, key=bad)
    client.post(SETTINGS, {"form": "judge_key", "judge_key": ""})  # nothing typed: nothing changes
    project.refresh_from_db()
    assert project.judge_api_key == "" and not AuditEvent.objects.exists()


def test_the_migration_takes_api_key_env_out_of_stored_options(project: Project) -> None:
    """Stored options naming a key variable would fail every run once that is refused."""
    project.options = {
        "evidence": {"min_digits": 5},
        "entailment": {"judge_url": "http://x.example/v1", "model": "m", "api_key_env": "RECEIPTS_JUDGE_K"},
    }
    project.save()
    migration = importlib.import_module("checks.migrations.0010_project_judge_secret")
    migration.drop_api_key_env(apps, None)
    project.refresh_from_db()
    assert project.options == {
        "evidence": {"min_digits": 5},
        "entailment": {"judge_url": "http://x.example/v1", "model": "m"},
    }


def test_the_key_is_in_no_form_and_its_migration_is_in_step() -> None:
    assert not Project._meta.get_field("judge_api_key").editable
    call_command("makemigrations", "checks", "--check", "--dry-run", verbosity=0)


# --- a key is entered for one judge ---------------------------------------------------------


def _options(url: str) -> dict[str, Any]:
    return {"entailment": {"judge_url": url, "model": "m", "timeout_s": 1}}


def test_pointing_the_judge_url_elsewhere_on_the_settings_page_clears_the_key(
    client: Any, project: Project, alice: Any, ingest: Any, judge_server: JudgeServer
) -> None:
    """An admin could otherwise read the key another entered by pointing judge_url at a
    listener of their own: the key goes with the URL it was entered for."""
    administration.update_project_options(
        project=project, user=alice, options=_options("http://judge.example/v1")
    )
    administration.set_judge_key(project=project, actor=alice, key=PROJECT_KEY)
    client.force_login(alice)
    response = client.post(SETTINGS, {"options": json.dumps(_options(judge_server.url))}, follow=True)
    page = response.content.decode()
    assert "judge URL changed, so the project&#x27;s judge key was cleared" in page
    assert "No key is set for this project" in page
    project.refresh_from_db()
    assert project.judge_api_key == ""
    cleared = AuditEvent.objects.filter(project=project).order_by("id").last()
    assert (cleared.verb, cleared.before, cleared.after) == (
        "project.judge_key_cleared",
        {"judge_key_set": True, "judge_url": "http://judge.example/v1"},
        {"judge_key_set": False, "judge_url": judge_server.url, "because": "the judge URL changed"},
    )
    ingest(status_conversation("moved", "Billing is healthy."))
    assert _authorizations(judge_server) == [None]  # the listener never sees the key


@pytest.mark.parametrize(
    ("after", "cleared"),
    [
        ({"entailment": {"judge_url": "http://judge.example/v1/", "model": "other"}}, False),
        ({"entailment": {"judge_url": "http://judge.example/v1"}, "evidence": {"min_digits": 5}}, False),
        ({"entailment": {"judge_url": "http://judge.example:8080/v1"}}, True),
        ({"entailment": {"judge_url": "http://JUDGE.example/v1"}}, True),
        ({}, True),  # the key would go nowhere: it is not kept for a URL set later
    ],
)
def test_only_a_change_of_where_the_judge_is_clears_the_key(
    project: Project, alice: Any, after: dict[str, Any], cleared: bool
) -> None:
    administration.update_project_options(
        project=project, user=alice, options=_options("http://judge.example/v1")
    )
    administration.set_judge_key(project=project, actor=alice, key=PROJECT_KEY)
    saved = administration.update_project_options(project=project, user=alice, options=after)
    project.refresh_from_db()
    assert (saved.judge_key_cleared, project.judge_api_key == "") == (cleared, cleared)


def test_a_key_set_before_any_judge_url_does_not_go_to_the_first_one_set(
    project: Project, alice: Any
) -> None:
    administration.set_judge_key(project=project, actor=alice, key=PROJECT_KEY)
    assert administration.update_project_options(
        project=project, user=alice, options=_options("http://judge.example/v1")
    ).judge_key_cleared
    project.refresh_from_db()
    assert project.judge_api_key == ""


def test_pointing_the_judge_url_elsewhere_in_the_django_admin_clears_the_key(
    client: Any, project: Project, alice: Any
) -> None:
    administration.update_project_options(
        project=project, user=alice, options=_options("http://judge.example/v1")
    )
    administration.set_judge_key(project=project, actor=alice, key=PROJECT_KEY)
    alice.is_staff = alice.is_superuser = True
    alice.save()
    client.force_login(alice)
    url = f"/admin/checks/project/{project.pk}/change/"
    form = {
        "name": project.name,
        "slug": project.slug,
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    # Another option changed, the judge where it was: the key stays.
    kept = {**_options("http://judge.example/v1"), "evidence": {"min_digits": 5}}
    assert client.post(url, {**form, "options": json.dumps(kept)}).status_code == 302
    project.refresh_from_db()
    assert project.judge_api_key == PROJECT_KEY
    response = client.post(
        url, {**form, "options": json.dumps(_options("http://listener.example/v1"))}, follow=True
    )
    assert "judge URL changed, so the project&#x27;s judge key was cleared" in response.content.decode()
    project.refresh_from_db()
    assert project.judge_api_key == "" and project.options == _options("http://listener.example/v1")
    verbs = list(AuditEvent.objects.filter(project=project).order_by("id").values_list("verb", flat=True))
    assert verbs[-2:] == ["project.changed", "project.judge_key_cleared"]
