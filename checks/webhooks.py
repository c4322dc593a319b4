"""Signed messages to the URLs a project registers, with retries and a delivery log.

Each message is a JSON object POSTed with ``X-Receipts-Signature: sha256=<hex>``, the
HMAC-SHA256 of the exact body under the webhook's secret, so the receiver can tell it came
from here and was not changed. ``notify`` records one delivery per webhook that wants the
event and enqueues it once the transaction commits; a failed attempt is retried with
exponential backoff by the task at the end of this module.

A webhook's URL is a project's choice, so each attempt goes through ``suite.outbound``: the
name is resolved, an address that is not public (and not in RECEIPTS_OUTBOUND_ALLOW) is
refused, the connection is made to the checked address, no proxy is used and no redirect
followed (a 3xx is a failed attempt).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import urllib.error
import urllib.request
from datetime import timedelta
from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from . import audit
from .models import Finding, Project, Webhook, WebhookDelivery
from .suite import outbound

EVENTS = {
    "turn.flagged": "A turn is flagged (a check run reports a new flag on it)",
    "correction.approved": "A correction is approved",
}
SIGNATURE_HEADER = "X-Receipts-Signature"
MAX_ATTEMPTS = 6
TIMEOUT_SECONDS = 10
EXCERPT_LIMIT = 500


def outbound_allow() -> outbound.Allow:
    """The operator's exceptions for requests to URLs a project chose (RECEIPTS_OUTBOUND_ALLOW):
    for webhooks here, for a project's judge in checking and when either is saved."""
    return outbound.Allow.parse(settings.RECEIPTS_OUTBOUND_ALLOW)


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, signature: str) -> bool:
    """What a receiver does: recompute the signature and compare in constant time."""
    return hmac.compare_digest(sign(secret, body), signature)


def backoff(attempt: int) -> int:
    """Seconds before the next attempt after ``attempt`` failed ones: 30 s, 1 min, 2 min, …"""
    return min(30 * 2 ** max(attempt - 1, 0), 6 * 3600)


def body_of(delivery: WebhookDelivery) -> bytes:
    return json.dumps(delivery.payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def notify(*, project: Project, event: str, payload: dict[str, Any]) -> list[WebhookDelivery]:
    """Records a delivery of ``event`` for each active webhook of the project that wants it,
    and sends them after the surrounding transaction commits (never for a rolled-back one)."""
    if event not in EVENTS:
        raise ValueError(f"event must be one of {', '.join(EVENTS)}")
    deliveries = []
    for webhook in Webhook.objects.filter(project=project, active=True).order_by("pk"):
        if event not in (webhook.events or []):
            continue
        delivery = WebhookDelivery.objects.create(
            project=project, webhook=webhook, event=event, payload={}, next_attempt_at=timezone.now()
        )
        delivery.payload = {
            "id": f"dlv_{delivery.pk}",
            "event": event,
            "project": project.slug,
            "created_at": delivery.created_at.isoformat(),
            "data": payload,
        }
        delivery.save(update_fields=["payload"])
        deliveries.append(delivery)
    if deliveries:
        ids = [d.pk for d in deliveries]
        transaction.on_commit(lambda: enqueue(ids))
    return deliveries


def enqueue(delivery_ids: list[int]) -> None:
    for pk in delivery_ids:
        deliver_webhook_task.delay(pk)


def attempt(delivery_id: int) -> WebhookDelivery | None:
    """One attempt at a delivery; the outcome is written to its log row. None when there is
    nothing to do (delivered already, or the webhook was removed or turned off)."""
    delivery = WebhookDelivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.delivered_at is not None or not delivery.webhook.active:
        return None
    body = body_of(delivery)
    request = urllib.request.Request(
        delivery.webhook.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "Receipts-Webhooks/1",
            SIGNATURE_HEADER: sign(delivery.webhook.secret, body),
            "X-Receipts-Event": delivery.event,
            "X-Receipts-Delivery": str(delivery.payload.get("id", delivery.pk)),
        },
    )
    status, excerpt, error, refused = None, "", "", False
    try:
        with outbound.opener(outbound_allow()).open(request, timeout=TIMEOUT_SECONDS) as response:
            status = response.status
            excerpt = response.read(EXCERPT_LIMIT).decode("utf-8", "replace")
    except outbound.Refused as exc:
        # Nothing was sent; the next attempt would be refused the same way.
        error, refused = f"Not sent: {exc.reason}", True
    except urllib.error.HTTPError as exc:
        status = exc.code
        excerpt = exc.read(EXCERPT_LIMIT).decode("utf-8", "replace")
        error = f"HTTP {exc.code} {exc.reason}"
        if 300 <= exc.code < 400:
            error += " (redirects are not followed: give the URL that answers)"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        error = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
    now = timezone.now()
    delivery.attempts += 1
    delivery.status_code = status
    delivery.response_excerpt = excerpt
    delivery.error = error[:1000]
    if status is not None and 200 <= status < 300:
        delivery.delivered_at, delivery.next_attempt_at, delivery.error = now, None, ""
    elif delivery.attempts < MAX_ATTEMPTS and not refused:
        delivery.next_attempt_at = now + timedelta(seconds=backoff(delivery.attempts))
    else:
        delivery.next_attempt_at = None
    delivery.save(
        update_fields=[
            "attempts",
            "status_code",
            "response_excerpt",
            "error",
            "delivered_at",
            "next_attempt_at",
        ]
    )
    return delivery


def should_retry(delivery: WebhookDelivery | None) -> bool:
    return delivery is not None and delivery.delivered_at is None and delivery.next_attempt_at is not None


@transaction.atomic
def redeliver(delivery: WebhookDelivery, *, actor: Any) -> WebhookDelivery:
    """Sends a logged message again, as a new delivery with the same body; audited, since it
    sends the project's data out once more."""
    copy = WebhookDelivery.objects.create(
        project_id=delivery.project_id,
        webhook_id=delivery.webhook_id,
        event=delivery.event,
        payload=delivery.payload,
        next_attempt_at=timezone.now(),
    )
    audit.record(
        project=delivery.project,
        actor=actor,
        verb="webhook.redelivered",
        target=copy,
        after={"of": delivery.pk, "webhook": delivery.webhook_id, "event": delivery.event},
    )
    transaction.on_commit(lambda: enqueue([copy.pk]))
    return copy


# --- what the events carry ----------------------------------------------------------------


def turn_flagged_payload(turn: Any, findings: list[Any], base_url: str = "") -> dict[str, Any]:
    """The message for a flagged turn: where it is and what was flagged on it."""
    convo = turn.conversation
    return {
        "conversation": {
            "id": convo.pk,
            "external_id": convo.external_id,
            "agent": convo.agent_name,
            "model": convo.agent_model,
        },
        "turn": {"id": turn.pk, "index": turn.index, "url": base_url + turn.get_absolute_url()},
        "findings": [
            {
                "id": f.pk,
                "checker": f.checker,
                "code": f.code,
                "severity": f.severity,
                "claim": f.claim_text,
                "explanation": f.explanation,
            }
            for f in findings
        ],
    }


def correction_approved_payload(correction: Any, base_url: str = "") -> dict[str, Any]:
    finding = correction.finding
    return {
        "correction": {
            "id": correction.pk,
            "text": correction.text,
            "author": correction.author.get_username(),
            "approver": correction.approver.get_username() if correction.approver else None,
            "approved_at": correction.decided_at.isoformat() if correction.decided_at else None,
        },
        "finding": finding.summary(),
        "conversation": {"id": finding.conversation_id, "external_id": finding.conversation.external_id},
        "turn": {
            "id": finding.turn_id,
            "index": finding.turn.index,
            "url": base_url + finding.turn.get_absolute_url(),
        },
    }


def notify_flagged_turns(*, project: Project, finding_ids: list[int]) -> list[WebhookDelivery]:
    """``turn.flagged`` for each turn among these new findings that carries a flag."""

    if not finding_ids or not Webhook.objects.filter(project=project, active=True).exists():
        return []
    by_turn: dict[int, list[Any]] = {}
    findings = Finding.objects.filter(pk__in=finding_ids, severity="flag").select_related(
        "turn__conversation"
    )
    for finding in findings.order_by("turn_id", "claim_start", "pk"):
        by_turn.setdefault(finding.turn_id, []).append(finding)
    deliveries = []
    for flagged in by_turn.values():
        deliveries += notify(
            project=project, event="turn.flagged", payload=turn_flagged_payload(flagged[0].turn, flagged)
        )
    return deliveries


# The task runs one delivery attempt; the name is the one messages already in a queue carry.
@shared_task(name="checks.tasks.deliver_webhook", bind=True, max_retries=MAX_ATTEMPTS - 1)
def deliver_webhook_task(self: Any, delivery_id: int) -> bool:
    """One attempt at a webhook delivery; a failure is tried again later, with backoff."""
    delivery = attempt(delivery_id)
    if delivery is not None and should_retry(delivery):
        raise self.retry(countdown=backoff(delivery.attempts))
    return delivery is not None and delivery.delivered_at is not None
