"""Requests to URLs a project admin chose (webhooks, the project's judge) stay off the
server's own network: every spelling of a loopback, private, link-local or metadata address
is refused when saved and again when sent, no redirect is followed, and only admins read
what a receiver answered.

The tests' receivers listen on 127.0.0.1, which tests/conftest.py allows; each test here
that shows a refusal sets the allow-list back to the default, empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.checks import run_checks

from checks import administration, webhooks
from checks.models import Finding, Webhook, WebhookDelivery
from tests.receiver import Receiver
from tests.suite.test_judge import JudgeServer
from tests.test_judge_runs import status_conversation

pytestmark = pytest.mark.django_db

URL = "/p/acme/webhooks"
# Each a way to name an address the server must not reach for a project.
FORMS = ["127.1", "0x7f000001", "[::ffff:127.0.0.1]", "169.254.169.254", "10.0.0.1", "[::1]", "localhost"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


@pytest.fixture
def nothing_allowed(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default: no exception to the rule, loopback included."""
    settings.RECEIPTS_OUTBOUND_ALLOW = []
    monkeypatch.delenv("RECEIPTS_OUTBOUND_ALLOW", raising=False)


@pytest.fixture(autouse=True)
def _retries_run_in_process() -> Iterator[None]:
    from grounding_site.celery import app

    before = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = before


def test_the_default_allows_nothing_beyond_public_addresses(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RECEIPTS_OUTBOUND_ALLOW"}
    env["RECEIPTS_VAR_DIR"] = str(tmp_path)
    code = "import grounding_site.settings as s; print(repr(s.RECEIPTS_OUTBOUND_ALLOW))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


# --- webhooks -------------------------------------------------------------------------------


@pytest.mark.parametrize("host", FORMS)
def test_a_webhook_url_that_is_not_public_is_refused_when_saved(
    client: Any, alice: Any, nothing_allowed: None, receiver: Receiver, host: str
) -> None:
    client.force_login(alice)
    url = f"http://{host}:{receiver.port}/hook"
    response = client.post(URL, {"url": url, "events": ["turn.flagged"]})
    assert response.status_code == 400
    error = response.context["error"]
    assert error.startswith("url: ") and "RECEIPTS_OUTBOUND_ALLOW" in error
    assert not Webhook.objects.exists()


@pytest.mark.parametrize("host", FORMS)
def test_a_webhook_url_that_is_not_public_is_refused_when_sent(
    project: Any,
    nothing_allowed: None,
    receiver: Receiver,
    django_capture_on_commit_callbacks: Any,
    host: str,
) -> None:
    """Saved before (or its name resolving elsewhere since): the delivery is refused before
    any connection, and not tried again."""
    Webhook.objects.create(
        project=project, url=f"http://{host}:{receiver.port}/hook", secret="k", events=["turn.flagged"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.notify(project=project, event="turn.flagged", payload={})
    delivery.refresh_from_db()
    assert receiver.requests == []
    assert delivery.error.startswith("Not sent: ") and "RECEIPTS_OUTBOUND_ALLOW" in delivery.error
    assert (delivery.attempts, delivery.status_code, delivery.delivered_at) == (1, None, None)
    assert delivery.next_attempt_at is None


def test_a_webhook_on_an_allowed_network_is_saved_and_sent(
    client: Any, alice: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(alice)
    assert client.post(URL, {"url": receiver.url, "events": ["turn.flagged"]}).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.notify(project=Webhook.objects.get().project, event="turn.flagged", payload={})
    delivery.refresh_from_db()
    assert receiver.requests == ["POST /hook"] and delivery.delivered_at is not None


def test_a_redirect_to_a_private_address_is_not_followed(
    project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """127.0.0.1 is allowed here, 127.0.0.2 is not: the webhook's answer, a 302 to the
    latter, is recorded as a failed attempt and nothing reaches the address it names."""
    with Receiver(host="127.0.0.2") as inside:
        inside_url = f"http://127.0.0.2:{inside.port}/internal"
        with Receiver(location=inside_url) as redirecting:
            Webhook.objects.create(project=project, url=redirecting.url, secret="k", events=["turn.flagged"])
            with django_capture_on_commit_callbacks(execute=True):
                (delivery,) = webhooks.notify(project=project, event="turn.flagged", payload={})
        assert inside.requests == []
        assert redirecting.requests == ["POST /hook"] * webhooks.MAX_ATTEMPTS
    delivery.refresh_from_db()
    assert delivery.status_code == 302 and delivery.delivered_at is None
    assert "redirects are not followed" in delivery.error


def test_only_admins_read_what_a_receiver_answered(
    client: Any, project: Any, alice: Any, bob: Any, vic: Any
) -> None:
    hook = Webhook.objects.create(project=project, url="https://x.example.com/", secret="k", events=[])
    WebhookDelivery.objects.create(
        project=project,
        webhook=hook,
        event="turn.flagged",
        payload={"id": "dlv_1"},
        attempts=1,
        status_code=500,
        error="HTTP 500 Internal Server Error",
        response_excerpt="redis_version:7.2.4 internal-answer-7731",
    )
    for reader in (vic, bob):
        client.force_login(reader)
        page = client.get(URL).content.decode()
        assert "HTTP 500" in page and "internal-answer-7731" not in page
    client.force_login(alice)
    assert "internal-answer-7731" in client.get(URL).content.decode()


# --- a project's judge ----------------------------------------------------------------------


@pytest.mark.parametrize("host", FORMS)
def test_a_judge_url_that_is_not_public_is_refused_when_saved(
    project: Any, alice: Any, nothing_allowed: None, judge_server: JudgeServer, host: str
) -> None:
    port = judge_server.httpd.server_address[1]
    options = {"entailment": {"judge_url": f"http://{host}:{port}/v1", "model": "judge-7b"}}
    with pytest.raises(administration.InvalidOptions, match=r"^entailment\.judge_url: .*OUTBOUND_ALLOW"):
        administration.update_project_options(project=project, user=alice, options=options)
    project.refresh_from_db()
    assert project.options == {}


@pytest.mark.parametrize("host", FORMS)
def test_a_judge_url_that_is_not_public_is_refused_when_asked(
    project: Any, ingest: Any, nothing_allowed: None, judge_server: JudgeServer, host: str
) -> None:
    port = judge_server.httpd.server_address[1]
    project.options = {
        "entailment": {"judge_url": f"http://{host}:{port}/v1", "model": "judge-7b", "timeout_s": 1}
    }
    project.save()
    conversation = ingest(status_conversation("s1", "Billing is healthy."))
    assert judge_server.requests == []
    finding = Finding.objects.get(conversation=conversation, code="judge_unavailable")
    assert "is refused" in finding.explanation and "RECEIPTS_OUTBOUND_ALLOW" in finding.explanation


def test_a_judge_on_an_allowed_network_is_saved_and_asked(
    project: Any, alice: Any, ingest: Any, judge_server: JudgeServer
) -> None:
    options = {"entailment": {"judge_url": judge_server.url, "model": "judge-7b", "timeout_s": 1}}
    administration.update_project_options(project=project, user=alice, options=options)
    conversation = ingest(status_conversation("s1", "Billing is healthy."))
    assert len(judge_server.requests) == 1
    assert Finding.objects.filter(conversation=conversation, code="not_entailed").exists()


def test_the_sites_judge_url_is_the_operators_and_not_checked(
    project: Any, ingest: Any, nothing_allowed: None, judge_server: JudgeServer, monkeypatch: Any
) -> None:
    monkeypatch.setenv("RECEIPTS_JUDGE_URL", judge_server.url)
    monkeypatch.setenv("RECEIPTS_JUDGE_MODEL", "judge-7b")
    ingest(status_conversation("s1", "Billing is healthy."))
    assert len(judge_server.requests) == 1


def test_a_mistyped_allow_list_entry_is_said_at_start_up(settings: Any) -> None:
    settings.RECEIPTS_OUTBOUND_ALLOW = ["127.0.0.1/32", "not a host!"]
    errors = [e for e in run_checks(include_deployment_checks=False) if e.id == "receipts.E001"]
    assert len(errors) == 1 and "'not a host!' is neither a network" in errors[0].msg
    settings.RECEIPTS_OUTBOUND_ALLOW = ["127.0.0.1/32"]
    assert not [e for e in run_checks() if e.id == "receipts.E001"]
