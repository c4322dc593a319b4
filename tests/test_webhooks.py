"""Webhooks: signed deliveries to a real receiver on loopback, retries, the page and its log."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from checks import checking, webhooks
from checks.models import AuditEvent, Finding, Webhook, WebhookDelivery

pytestmark = pytest.mark.django_db

URL = "/p/acme/webhooks"


class Receiver:
    """An HTTP server on 127.0.0.1 that records each request and answers with the next
    status of its script (the last one repeats)."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = statuses
        self.requests: list[dict[str, Any]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.statuses[min(len(receiver.requests) - 1, len(receiver.statuses) - 1)]
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(f"answer {len(receiver.requests)}".encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture(autouse=True)
def _retries_run_in_process() -> Iterator[None]:
    """Eager tasks re-raise Retry when they propagate errors; without that, Celery runs each
    retry at once in-process, as a worker would run it after the countdown."""
    from grounding_site.celery import app

    before = app.conf.task_eager_propagates
    app.conf.task_eager_propagates = False
    yield
    app.conf.task_eager_propagates = before


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver([200]) as r:
        yield r


def _expected_signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_a_receiver_gets_a_correctly_signed_message(
    project: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    hook = Webhook.objects.create(project=project, url=receiver.url, secret="s3cret", events=["turn.flagged"])
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.notify(project=project, event="turn.flagged", payload={"turn": {"id": 7}})
    (request,) = receiver.requests
    body = request["body"]
    assert request["headers"]["X-Receipts-Signature"] == _expected_signature("s3cret", body)
    assert webhooks.verify(hook.secret, body, request["headers"]["X-Receipts-Signature"])
    assert request["headers"]["X-Receipts-Event"] == "turn.flagged"
    assert request["headers"]["Content-Type"] == "application/json"
    message = json.loads(body)
    assert message["event"] == "turn.flagged" and message["data"] == {"turn": {"id": 7}}
    assert message["project"] == "acme" and message["id"] == f"dlv_{delivery.pk}"
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code) == (1, 200)
    assert delivery.delivered_at is not None and delivery.response_excerpt == "answer 1"


def test_a_failed_delivery_is_retried_and_logged(
    project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with Receiver([500, 200]) as receiver:
        hook = Webhook.objects.create(
            project=project, url=receiver.url, secret="k", events=["correction.approved"]
        )
        with django_capture_on_commit_callbacks(execute=True):
            (delivery,) = webhooks.notify(project=project, event="correction.approved", payload={"n": 1})
    assert len(receiver.requests) == 2
    first, second = receiver.requests
    assert first["body"] == second["body"]  # the same message, signed the same way
    for request in receiver.requests:
        assert request["headers"]["X-Receipts-Signature"] == _expected_signature(hook.secret, request["body"])
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code, delivery.error) == (2, 200, "")
    assert delivery.delivered_at is not None and delivery.next_attempt_at is None


def test_a_delivery_gives_up_after_the_last_attempt(
    project: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with Receiver([503]) as receiver:
        Webhook.objects.create(project=project, url=receiver.url, secret="k", events=["turn.flagged"])
        with django_capture_on_commit_callbacks(execute=True):
            (delivery,) = webhooks.notify(project=project, event="turn.flagged", payload={})
    assert len(receiver.requests) == webhooks.MAX_ATTEMPTS
    delivery.refresh_from_db()
    assert delivery.attempts == webhooks.MAX_ATTEMPTS and delivery.status_code == 503
    assert delivery.delivered_at is None and delivery.next_attempt_at is None
    assert "503" in delivery.error


def test_backoff_grows() -> None:
    assert [webhooks.backoff(n) for n in range(1, 6)] == [30, 60, 120, 240, 480]


def test_only_active_webhooks_that_want_the_event_get_it(
    project: Any, other_project: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    # Each webhook on its own path of the one receiver, so a request says whose it was.
    wanted = Webhook.objects.create(
        project=project, url=f"{receiver.url}/wanted", secret="k", events=["turn.flagged"]
    )
    Webhook.objects.create(
        project=project, url=f"{receiver.url}/other-event", secret="k", events=["correction.approved"]
    )
    Webhook.objects.create(
        project=project, url=f"{receiver.url}/inactive", secret="k", events=["turn.flagged"], active=False
    )
    Webhook.objects.create(
        project=other_project, url=f"{receiver.url}/other-project", secret="k", events=["turn.flagged"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.notify(project=project, event="turn.flagged", payload={"n": 1})
    assert delivery.webhook == wanted
    (request,) = receiver.requests
    assert request["path"] == "/hook/wanted"
    assert request["headers"]["X-Receipts-Event"] == "turn.flagged"
    assert request["headers"]["X-Receipts-Signature"] == _expected_signature("k", request["body"])
    assert json.loads(request["body"])["data"] == {"n": 1}
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code) == (1, 200) and delivery.delivered_at is not None
    assert WebhookDelivery.objects.count() == 1

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert webhooks.notify(project=other_project, event="correction.approved", payload={}) == []
    assert callbacks == []
    with pytest.raises(ValueError):
        webhooks.notify(project=project, event="turn.unknown", payload={})


def test_flagged_turns_carry_their_flags(
    project: Any, ingest: Any, receiver: Receiver, django_capture_on_commit_callbacks: Any
) -> None:
    ingest("07")  # two flags on one turn
    Webhook.objects.create(project=project, url=receiver.url, secret="k", events=["turn.flagged"])
    ids = list(Finding.objects.values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        (delivery,) = webhooks.notify_flagged_turns(project=project, finding_ids=ids)
    (request,) = receiver.requests
    delivery.refresh_from_db()
    assert (delivery.attempts, delivery.status_code) == (1, 200) and delivery.delivered_at is not None
    data = json.loads(request["body"])["data"]
    assert data["conversation"]["external_id"] == delivery.payload["data"]["conversation"]["external_id"]
    assert {f["code"] for f in data["findings"]} == {"unverified_action", "fabricated_tool_reference"}
    assert data["turn"]["url"].startswith("/p/acme/turns/")


def test_an_admin_registers_a_webhook_whose_secret_is_shown_once(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(URL, {"url": "https://hooks.example.com/r", "events": ["turn.flagged"]})
    secret = response.context["secret"]
    hook = Webhook.objects.get()
    assert secret.startswith("whsec_") and hook.secret == secret and secret in response.content.decode()
    assert hook.events == ["turn.flagged"] and hook.active
    assert secret not in client.get(URL).content.decode()
    assert AuditEvent.objects.get().verb == "webhook.created"
    client.post(f"{URL}/{hook.pk}/toggle")
    hook.refresh_from_db()
    assert not hook.active


def test_bad_webhooks_are_refused(client: Any, alice: Any) -> None:
    client.force_login(alice)
    response = client.post(URL, {"url": "file:///etc/passwd", "events": ["turn.flagged"]})
    assert response.status_code == 400 and "url" in response.context["error"]
    response = client.post(URL, {"url": "https://ok.example.com/", "events": ["nope"]})
    assert response.status_code == 400 and "events" in response.context["error"]
    assert not Webhook.objects.exists()


def test_members_read_the_log_admins_change_outsiders_see_nothing(
    client: Any, project: Any, vic: Any, bob: Any, olga: Any
) -> None:
    hook = Webhook.objects.create(
        project=project, url="https://x.example.com/<b>", secret="whsec_never_shown", events=["turn.flagged"]
    )
    WebhookDelivery.objects.create(
        project=project,
        webhook=hook,
        event="turn.flagged",
        payload={"id": "dlv_1"},
        error="<script>x</script>",
    )
    client.force_login(vic)
    page = client.get(URL).content.decode()
    assert (
        "whsec_never_shown" not in page
        and "&lt;script&gt;x&lt;/script&gt;" in page
        and "<script>x" not in page
    )
    assert client.post(URL, {"url": "https://a.example.com", "events": ["turn.flagged"]}).status_code == 403
    client.force_login(bob)
    assert client.post(f"{URL}/{hook.pk}/toggle").status_code == 403
    client.force_login(olga)
    assert client.get(URL).status_code == 404


def test_a_check_that_flags_a_turn_sends_turn_flagged_once(
    project: Any, ingest: Any, receiver: Receiver
) -> None:
    """The check run itself notifies; a re-run that finds the same flags sends nothing new."""
    from checks.models import CheckRun

    Webhook.objects.create(project=project, url=receiver.url, secret="k", events=["turn.flagged"])
    conversation = ingest("01")
    [request] = receiver.requests
    assert json.loads(request["body"])["data"]["conversation"]["external_id"] == "ex-sencha"
    ingest("02")  # an honest answer flags nothing
    assert len(receiver.requests) == 1
    rerun = CheckRun.objects.create(project=project, conversation=conversation)
    checking.check_runs(run_ids=[rerun.pk])
    assert len(receiver.requests) == 1
