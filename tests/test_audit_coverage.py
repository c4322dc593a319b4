"""What used to bypass the audit log now writes to it: the Django admin, `manage.py apikey`,
exports and report downloads, webhook redeliveries, and signing in and out."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils import timezone

from checks import audit
from checks.models import ApiKey, AuditEvent, ExportJob, Membership, SiteEvent, Webhook, WebhookDelivery
from checks.reporting import jobs, pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(client: Any, db: Any) -> Any:
    user = get_user_model().objects.create_superuser("root", password="password")
    client.force_login(user)
    return user


def _verbs(project: Any = None) -> list[str]:
    return list(audit.events_of(project).order_by("id").values_list("verb", flat=True))


# --- the Django admin ---------------------------------------------------------------------


def test_the_admin_cannot_unrevoke_a_key_and_its_other_changes_are_audited(
    client: Any, project: Any, root: Any
) -> None:
    key, _ = ApiKey.issue(project=project, name="agent")
    key.revoked_at = timezone.now()
    key.save()
    response = client.post(
        f"/admin/checks/apikey/{key.pk}/change/",
        {"name": "renamed", "expires_at_0": "", "expires_at_1": "", "revoked_at": ""},
    )
    assert response.status_code == 302, response.content[:2000]
    key.refresh_from_db()
    assert key.revoked_at is not None and key.name == "renamed"  # revocation is read-only there
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.actor_name) == ("apikey.changed", "root")
    assert (event.before, event.after) == ({"name": "agent"}, {"name": "renamed"})
    assert audit.verify(project).ok


def test_a_member_added_in_the_admin_is_audited(client: Any, project: Any, root: Any) -> None:
    zoe = get_user_model().objects.create_user("zoe", password="password")
    response = client.post(
        f"/admin/checks/project/{project.pk}/change/",
        {
            "name": project.name,
            "slug": project.slug,
            "options": "{}",
            "memberships-TOTAL_FORMS": "1",
            "memberships-INITIAL_FORMS": "0",
            "memberships-MIN_NUM_FORMS": "0",
            "memberships-MAX_NUM_FORMS": "1000",
            "memberships-0-user": str(zoe.pk),
            "memberships-0-role": "reviewer",
        },
    )
    assert response.status_code == 302, response.content[:2000]
    membership = Membership.objects.get(project=project, user=zoe)
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.object_id, event.actor_name) == ("member.added", str(membership.pk), "root")
    assert event.after == {"user": "zoe", "role": "reviewer"}


def test_making_someone_a_superuser_in_the_admin_is_audited_on_the_site_chain(client: Any, root: Any) -> None:
    zoe = get_user_model().objects.create_user("zoe", password="password")
    page = client.get(f"/admin/auth/user/{zoe.pk}/change/")
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None and name != "password"}
    data.update(
        {
            "is_superuser": "on",
            "is_active": "on",
            "date_joined_0": zoe.date_joined.strftime("%Y-%m-%d"),
            "date_joined_1": zoe.date_joined.strftime("%H:%M:%S"),
            "groups": [],
            "user_permissions": [],
        }
    )
    data.pop("last_login", None)
    data.pop("date_joined", None)
    response = client.post(f"/admin/auth/user/{zoe.pk}/change/", data)
    assert response.status_code == 302, response.content[:2000]
    event = SiteEvent.objects.get(verb="user.changed")
    assert event.object_id == str(zoe.pk) and event.actor_name == "root"
    assert event.before is not None and event.before["is_superuser"] is False
    assert event.after is not None and event.after["is_superuser"] is True
    assert audit.verify(None).ok


def test_a_password_set_in_the_admin_is_audited_without_the_password(client: Any, root: Any) -> None:
    zoe = get_user_model().objects.create_user("zoe", password="password")
    new = "violet-harbour-kettle-91"
    response = client.post(
        f"/admin/auth/user/{zoe.pk}/password/",
        {"password1": new, "password2": new, "usable_password": "true", "set_usable_password": "true"},
    )
    assert response.status_code == 302, response.content[:2000]
    event = SiteEvent.objects.get(verb="user.password_changed")
    assert event.object_id == str(zoe.pk) and event.after == {"usable": True}
    assert new not in str(event.before) + str(event.after)


# --- manage.py apikey ---------------------------------------------------------------------


def test_apikey_create_and_revoke_are_audited() -> None:
    out = StringIO()
    call_command(
        "apikey", "create", "--project", "Night shift", "--name", "bot", stdout=out, stderr=StringIO()
    )
    key = ApiKey.objects.get()
    call_command("apikey", "revoke", out.getvalue().strip(), stdout=StringIO())
    assert _verbs(key.project) == ["apikey.created", "apikey.revoked"]
    assert _verbs() == ["project.created"]
    event = AuditEvent.objects.get(verb="apikey.created")
    assert event.actor_name.startswith("manage.py apikey (") and event.after["prefix"] == key.prefix
    assert audit.verify(key.project).ok


# --- exports, reports, redeliveries -------------------------------------------------------


def test_an_export_download_is_audited(client: Any, vic: Any, project: Any) -> None:
    client.force_login(vic)
    response = client.get("/p/acme/exports/file", {"kind": "csv", "status": "open"})
    assert response.status_code == 200
    b"".join(response.streaming_content)
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.actor_name, event.after["kind"]) == ("export.downloaded", "vic", "csv")
    assert "status=open" in event.after["query"]


def test_a_background_exports_download_is_audited(
    client: Any, vic: Any, project: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    job = ExportJob.objects.create(
        project=project, requested_by=vic, kind="csv", status="done", filename="acme.csv"
    )
    made = tmp_path / "acme.csv"
    made.write_text("finding_id\n")
    monkeypatch.setattr(jobs, "job_file", lambda j: made if j.pk == job.pk else None)
    client.force_login(vic)
    response = client.get(f"/p/acme/exports/jobs/{job.pk}/file")
    assert response.status_code == 200
    # Read to the end, as a browser would: the test client closes the response then without
    # signalling request_finished, which would close the test's database connection.
    assert b"".join(response.streaming_content) == b"finding_id\n"
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.object_type, event.object_id) == ("export.downloaded", "exportjob", str(job.pk))


def test_a_report_download_is_audited(client: Any, vic: Any, project: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(pdf, "render_pdf", lambda *a, **k: b"%PDF-1.7 stand-in")
    client.force_login(vic)
    assert client.get("/p/acme/report.pdf").status_code == 200
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.actor_name, event.object_type) == ("report.downloaded", "vic", "project")
    assert set(event.after) == {"since", "until"}


def test_a_webhook_redelivery_is_audited(client: Any, alice: Any, project: Any) -> None:
    hook = Webhook.objects.create(
        project=project, url="https://x.example.com/", secret="s", events=["turn.flagged"]
    )
    sent = WebhookDelivery.objects.create(
        project=project, webhook=hook, event="turn.flagged", payload={"id": "d"}
    )
    client.force_login(alice)
    assert client.post(f"/p/acme/webhooks/deliveries/{sent.pk}/redeliver").status_code == 302
    again = WebhookDelivery.objects.exclude(pk=sent.pk).get()
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.actor_name, event.object_id) == ("webhook.redelivered", "alice", str(again.pk))
    assert event.after == {"of": sent.pk, "webhook": hook.pk, "event": "turn.flagged"}


# --- signing in and out -------------------------------------------------------------------


def test_signing_in_failing_to_and_signing_out_are_audited_on_the_site_chain(client: Any, alice: Any) -> None:
    address = {"REMOTE_ADDR": "192.0.2.10"}
    assert client.post("/login/", {"username": "alice", "password": "wrong"}, **address).status_code == 200
    assert client.post("/login/", {"username": "alice", "password": "password"}, **address).status_code == 302
    assert client.post("/logout/", **address).status_code == 302
    assert _verbs() == ["user.sign_in_failed", "user.signed_in", "user.signed_out"]
    failed, signed_in, signed_out = SiteEvent.objects.order_by("id")
    assert failed.after == {"username": "alice", "address": "192.0.2.10", "path": "/login/"}
    assert (signed_in.actor_name, signed_in.object_id) == ("alice", str(alice.pk))
    assert signed_out.actor_name == "alice"
    assert "password" not in str(failed.after.values())
    assert audit.verify(None).ok
    assert not AuditEvent.objects.exists()  # no project's log is touched


def test_a_sign_in_to_the_admin_is_audited(client: Any, db: Any) -> None:
    get_user_model().objects.create_superuser("root", password="password")
    assert client.post("/admin/login/", {"username": "root", "password": "password"}).status_code == 302
    made, event = SiteEvent.objects.order_by("id")  # made a superuser, by this test's process
    assert made.verb == "user.created"
    assert (event.verb, event.after["path"]) == ("user.signed_in", "/admin/login/")


# --- management commands --------------------------------------------------------------------


def _site_and_project_events(project: Any) -> tuple[int, int]:
    return SiteEvent.objects.count(), AuditEvent.objects.filter(project=project).count()


def test_load_demo_making_someone_admin_of_an_existing_project_is_audited_once(
    project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    zoe = get_user_model().objects.create_user("zoe", password="password")
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--project", project.name, "--username", "zoe", stdout=StringIO())
    membership = Membership.objects.get(project=project, user=zoe)
    event = AuditEvent.objects.get(project=project)
    assert (event.verb, event.object_id, event.after) == (
        "member.added",
        str(membership.pk),
        {"user": "zoe", "role": "admin"},
    )
    assert event.actor_name.startswith("manage.py load_demo (")
    assert not SiteEvent.objects.exists()  # neither the project nor the account was made

    # `make run` runs it every time: nothing changed, nothing written.
    before = _site_and_project_events(project)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", "--project", project.name, "--username", "zoe", stdout=StringIO())
    assert _site_and_project_events(project) == before
    assert audit.verify(project).ok and audit.verify(None).ok


def test_load_demo_audits_the_project_and_account_it_makes_and_nothing_the_second_time(
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    demo = Membership.objects.select_related("project", "user").get()
    assert (demo.project.name, demo.user.username, demo.role) == ("demo", "reviewer", "admin")
    assert _verbs() == ["project.created", "user.created"]
    assert _verbs(demo.project) == ["member.added"]
    assert "receipts-demo" not in json.dumps(list(SiteEvent.objects.values("after")))
    before = _site_and_project_events(demo.project)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    assert _site_and_project_events(demo.project) == before


def test_load_demo_leaves_an_existing_members_role_and_the_log_alone(project: Any, vic: Any) -> None:
    call_command("load_demo", "--project", project.name, "--username", vic.username, stdout=StringIO())
    assert Membership.objects.get(project=project, user=vic).role == "viewer"
    assert not AuditEvent.objects.filter(project=project).exists()


def test_createsuperuser_is_audited_on_the_site_chain(monkeypatch: Any, db: Any) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "violet-harbour-kettle-91")
    monkeypatch.setattr("sys.argv", ["manage.py", "createsuperuser", "--noinput"])
    call_command(
        "createsuperuser", "--noinput", "--username", "root", "--email", "r@example.com", stdout=StringIO()
    )
    event = SiteEvent.objects.get()
    root = get_user_model().objects.get(username="root")
    assert (event.verb, event.object_id) == ("user.created", str(root.pk))
    assert event.actor_name.startswith("manage.py createsuperuser (")
    assert event.after == {"username": "root", "is_superuser": True, "is_staff": True}
    assert audit.verify(None).ok


def test_a_superuser_made_or_unmade_in_a_shell_or_a_fixture_is_audited(
    monkeypatch: Any, db: Any, tmp_path: Path
) -> None:
    zoe = get_user_model().objects.create_user("zoe", password="password")
    ada = get_user_model().objects.create_user("ada", password="password")
    monkeypatch.setattr("sys.argv", ["manage.py", "shell"])
    call_command("shell", "-c", "from django.contrib.auth.models import User; "
                 "u = User.objects.get(username='zoe'); u.is_superuser = True; u.save()")  # fmt: skip
    made = SiteEvent.objects.get()
    assert (made.verb, made.object_id, made.actor_name.split(" (")[0]) == (
        "user.changed",
        str(zoe.pk),
        "manage.py shell",
    )
    assert (made.before, made.after) == (
        {"username": "zoe", "is_superuser": False},
        {"username": "zoe", "is_superuser": True},
    )
    zoe.refresh_from_db()
    zoe.is_superuser = False
    zoe.save()
    assert SiteEvent.objects.order_by("-id").first().after == {"username": "zoe", "is_superuser": False}

    fixture = tmp_path / "users.json"
    fields = {"username": "ada", "password": ada.password, "is_superuser": True, "is_staff": True}
    fixture.write_text(json.dumps([{"model": "auth.user", "pk": ada.pk, "fields": fields}]))
    monkeypatch.setattr("sys.argv", ["manage.py", "loaddata", str(fixture)])
    call_command("loaddata", str(fixture), stdout=StringIO())
    loaded = SiteEvent.objects.order_by("-id").first()
    assert (loaded.verb, loaded.object_id, loaded.after["is_superuser"]) == (
        "user.changed",
        str(ada.pk),
        True,
    )
    assert loaded.actor_name.startswith("manage.py loaddata (")
    assert SiteEvent.objects.count() == 3
    assert audit.verify(None).ok


def test_signing_in_and_saving_a_user_unchanged_write_no_superuser_event(client: Any, db: Any) -> None:
    root = get_user_model().objects.create_superuser("root", password="password")
    before = SiteEvent.objects.count()  # its making, by this test's process
    root.first_name = "Ro"
    root.save()
    assert client.post("/login/", {"username": "root", "password": "password"}).status_code == 302
    assert list(SiteEvent.objects.order_by("id").values_list("verb", flat=True)[before:]) == [
        "user.signed_in"
    ]


def test_a_project_the_ingest_command_makes_is_audited(tmp_path: Path, db: Any) -> None:
    conversation = {"external_id": "c1", "turns": [{"messages": [{"role": "user", "content": "hi"}]}]}
    (tmp_path / "c1.json").write_text(json.dumps(conversation))
    call_command("ingest", "--project", "Fresh", str(tmp_path), stdout=StringIO(), stderr=StringIO())
    event = SiteEvent.objects.get()
    assert (event.verb, event.after) == ("project.created", {"name": "Fresh", "slug": "fresh"})
    assert event.actor_name.startswith("manage.py ingest (")
