"""Project administration: checker options and the judge key, members and roles, double
review, API keys and webhooks.

Each workflow is keyword-only, runs in one transaction and writes the change to the audit
log, whether a page, the API or a command asked for it. Refusals raise ``AdminError`` (or
``InvalidOptions`` for checker options) with a sentence that names the field and the fix.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from . import audit, suite, webhooks
from .ingest import json_input
from .models import ApiKey, Finding, FindingStatus, Invitation, Membership, Project, Role, Scope, Webhook
from .suite import judge, outbound


class AdminError(ValueError):
    """A change to a project that is refused; the message says why and what to do instead."""


class InvalidOptions(ValueError):
    """Checker options the suite refuses; the message names the option and the fix."""


def options_from_text(text: str) -> Any:
    """The JSON an admin typed as a project's options (empty for none), or InvalidOptions
    saying what keeps it from being read."""
    try:
        return json_input.loads(text.strip() or "{}", max_depth=settings.RECEIPTS_JSON_MAX_DEPTH)
    except json.JSONDecodeError as exc:
        raise InvalidOptions(
            f"options: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    except json_input.JsonRefused as exc:  # a number too long, nesting too deep
        raise InvalidOptions(f"options: not JSON this server reads ({exc.message})") from exc


def validate_options(options: Any) -> None:
    """InvalidOptions naming the option and the fix, unless the suite takes these checker
    options and the judge URL they name (if any) is one this site may call. Wherever options
    are saved asks this: the settings page and the Django admin."""
    if not isinstance(options, dict):
        raise InvalidOptions('options: must be a JSON object, such as {"evidence": {"min_digits": 4}}')
    try:
        parsed = suite.parse_options(options)
    except suite.OptionsError as exc:
        raise InvalidOptions(str(exc)) from exc
    url = judge.project_url(parsed.entailment)
    if url is not None:
        # Checked again before each request; here so the admin hears of it at once. A name
        # that does not resolve yet is let through, for that later check.
        try:
            outbound.check_url(url, webhooks.outbound_allow(), unresolved_ok=True)
        except outbound.Refused as exc:
            raise InvalidOptions(f"entailment.judge_url: {exc.reason}") from exc


@dataclass(frozen=True)
class OptionsSaved:
    project: Project
    judge_key_cleared: bool  # the judge URL changed, so the key entered for the old one is gone


@transaction.atomic
def update_project_options(*, project: Project, user: Any, options: Any) -> OptionsSaved:
    """Validates and stores a project's checker options; the change is audited. A change of
    the judge URL clears the project's judge key (``forget_judge_key_if_moved``)."""
    validate_options(options)
    locked = Project.objects.select_for_update().get(pk=project.pk)
    before = locked.options
    locked.options = project.options = options
    locked.save(update_fields=["options"])
    audit.record(
        project=locked,
        actor=user,
        verb="project.options_changed",
        target=locked,
        before={"options": before},
        after={"options": options},
    )
    cleared = _forget_judge_key(locked, actor=user, before=before)
    project.judge_api_key = locked.judge_api_key
    return OptionsSaved(project, cleared)


def judge_destination(options: Any) -> str | None:
    """Where these options send the judge's questions with the project's key: the judge URL
    they name, unless it is the site's own. Options the suite refuses (stored before they
    were checked) are read as they stand."""
    try:
        return judge.project_url(
            suite.parse_options(options if isinstance(options, dict) else None).entailment
        )
    except suite.OptionsError:
        section = options.get("entailment")
        url = section.get("judge_url") if isinstance(section, dict) else None
        return url if isinstance(url, str) and url else None


@transaction.atomic
def forget_judge_key_if_moved(*, project: Project, actor: Any, before: Any) -> bool:
    """Clears the project's judge key when its options, as stored now, send the judge's
    questions somewhere other than ``before`` did; True when a key was cleared.

    A key is entered for one judge. Were it kept, anyone who may change the URL could have
    it sent to a listener of their own and read it there, which the key's being write-only
    is meant to prevent: it must be entered again for the new judge, as a webhook's secret
    is bound to its URL. Audited as ``project.judge_key_cleared``, saying why."""
    locked = Project.objects.select_for_update().get(pk=project.pk)
    cleared = _forget_judge_key(locked, actor=actor, before=before)
    project.judge_api_key = locked.judge_api_key
    return cleared


def _forget_judge_key(locked: Project, *, actor: Any, before: Any) -> bool:
    """``forget_judge_key_if_moved`` on a row the caller holds locked."""
    old, new = judge_destination(before), judge_destination(locked.options)
    if not locked.judge_api_key or _same_url(old, new):
        return False
    locked.judge_api_key = ""
    locked.save(update_fields=["judge_api_key"])
    audit.record(
        project=locked,
        actor=actor,
        verb="project.judge_key_cleared",
        target=locked,
        before={"judge_key_set": True, "judge_url": old},
        after={"judge_key_set": False, "judge_url": new, "because": "the judge URL changed"},
    )
    return True


def _same_url(a: str | None, b: str | None) -> bool:
    # A trailing slash names the same judge; anything else, even a host's case, counts as a
    # change: clearing a key that could have stayed costs retyping it, not its leak.
    return (a or "").rstrip("/") == (b or "").rstrip("/") and (a is None) == (b is None)


JUDGE_KEY_LIMIT = 500


@transaction.atomic
def set_judge_key(*, project: Project, actor: Any, key: str | None) -> Project:
    """Sets (or, with an empty key, clears) the project's own judge key; the change is audited.

    The key is write-only: nothing shows it back, and the audit event records only whether a
    key was set before and after, never its value. It is sent only to the judge the project's
    options name (entailment.judge_url), never to the site's judge."""
    key = (key or "").strip()
    if len(key) > JUDGE_KEY_LIMIT or any(not ("!" <= ch <= "~") for ch in key):
        # It goes into an HTTP header: no spaces, line breaks or other control characters.
        raise AdminError(
            f"judge key: give the key as it was issued, at most {JUDGE_KEY_LIMIT} characters with "
            "no spaces or line breaks."
        )
    locked = Project.objects.select_for_update().get(pk=project.pk)
    had = bool(locked.judge_api_key)
    if not key and not had:
        return locked
    locked.judge_api_key = key
    locked.save(update_fields=["judge_api_key"])
    project.judge_api_key = key
    audit.record(
        project=locked,
        actor=actor,
        verb="project.judge_key_set" if key else "project.judge_key_cleared",
        target=locked,
        before={"judge_key_set": had},
        after={"judge_key_set": bool(key)},
    )
    return locked


def _admins_left(project: Project, *, without: Membership) -> int:
    admins = Membership.objects.select_for_update().filter(project=project, role=Role.ADMIN)
    return admins.exclude(pk=without.pk).count()


@transaction.atomic
def add_member(*, project: Project, actor: Any, username: str, role: str) -> Membership:
    if role not in Role.values:
        raise AdminError(f"role must be one of {', '.join(Role.values)}")
    user = get_user_model().objects.filter(username=username.strip()).first()
    if user is None:
        raise AdminError(f"No user is called {username.strip()!r}; they must have an account first.")
    if Membership.objects.filter(project=project, user=user).exists():
        raise AdminError(f"{user.username} is already a member; change their role instead.")
    membership = Membership.objects.create(project=project, user=user, role=role)
    audit.record(
        project=project,
        actor=actor,
        verb="member.added",
        target=membership,
        after={"user": user.username, "role": role},
    )
    return membership


def invite(*, project: Project, actor: Any, role: str, note: str = "") -> tuple[Invitation, str]:
    """An invitation into the project for someone with no account, and its token (shown once:
    only its hash is kept)."""
    if role not in Role.values:
        raise AdminError(f"role must be one of {', '.join(Role.values)}")
    token = secrets.token_urlsafe(24)
    invitation = Invitation.objects.create(
        project=project,
        role=role,
        note=note.strip()[:200],
        hashed=ApiKey.hash(token),
        created_by=actor,
        expires_at=timezone.now() + timedelta(days=Invitation.DAYS),
    )
    audit.record(
        project=project,
        actor=actor,
        verb="member.invited",
        target=invitation,
        after={"role": role, "note": invitation.note, "expires_at": invitation.expires_at.isoformat()},
    )
    return invitation, token


def invitation_for(token: str) -> Invitation | None:
    """The usable invitation a token opens; None for one unknown, used, revoked or run out."""
    invitation = Invitation.objects.select_related("project").filter(hashed=ApiKey.hash(token)).first()
    return invitation if invitation is not None and invitation.usable else None


@transaction.atomic
def accept_invitation(*, invitation: Invitation, user: Any) -> Membership:
    """Makes ``user`` a member with the invitation's role, and uses the invitation up."""
    locked = Invitation.objects.select_for_update().select_related("project").get(pk=invitation.pk)
    if not locked.usable:
        raise AdminError("This invitation has been used, revoked or has run out; ask for a new one.")
    if Membership.objects.filter(project=locked.project, user=user).exists():
        raise AdminError(f"You are already a member of {locked.project.name}.")
    membership = Membership.objects.create(project=locked.project, user=user, role=locked.role)
    locked.accepted_at, locked.accepted_by = timezone.now(), user
    locked.save(update_fields=["accepted_at", "accepted_by"])
    audit.record(
        project=locked.project,
        actor=user,
        verb="member.joined",
        target=membership,
        after={"user": user.username, "role": locked.role, "invitation": locked.pk},
    )
    return membership


def revoke_invitation(*, invitation: Invitation, actor: Any) -> None:
    if invitation.revoked_at is None and invitation.accepted_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit.record(
            project=invitation.project, actor=actor, verb="member.invitation_revoked", target=invitation
        )


@transaction.atomic
def change_role(*, membership: Membership, actor: Any, role: str) -> Membership:
    if role not in Role.values:
        raise AdminError(f"role must be one of {', '.join(Role.values)}")
    locked = (
        Membership.objects.select_for_update(of=("self",))
        .select_related("project", "user")
        .get(pk=membership.pk)
    )
    if locked.role == role:
        return locked
    if locked.role == Role.ADMIN and _admins_left(locked.project, without=locked) == 0:
        raise AdminError("A project keeps at least one admin: make someone else admin first.")
    before = {"user": locked.user.username, "role": locked.role}
    locked.role = role
    locked.save(update_fields=["role"])
    audit.record(
        project=locked.project,
        actor=actor,
        verb="member.role_changed",
        target=locked,
        before=before,
        after={"user": locked.user.username, "role": role},
    )
    return locked


@transaction.atomic
def remove_member(*, membership: Membership, actor: Any) -> None:
    locked = (
        Membership.objects.select_for_update(of=("self",))
        .select_related("project", "user")
        .get(pk=membership.pk)
    )
    if locked.role == Role.ADMIN and _admins_left(locked.project, without=locked) == 0:
        raise AdminError("The last admin cannot be removed: make someone else admin first.")
    audit.record(
        project=locked.project,
        actor=actor,
        verb="member.removed",
        target=locked,
        before={"user": locked.user.username, "role": locked.role},
    )
    # Their open findings go back to the pool.
    Finding.objects.filter(project=locked.project, assignee=locked.user, status=FindingStatus.OPEN).update(
        assignee=None
    )
    locked.delete()


@transaction.atomic
def set_double_review(*, project: Project, actor: Any, enabled: bool) -> Project:
    if project.double_review == enabled:
        return project
    before = {"double_review": project.double_review}
    project.double_review = enabled
    project.save(update_fields=["double_review"])
    audit.record(
        project=project,
        actor=actor,
        verb="project.double_review_changed",
        target=project,
        before=before,
        after={"double_review": enabled},
    )
    return project


MAX_KEY_DAYS = 3650


@transaction.atomic
def create_api_key(
    *, project: Project, actor: Any, name: str, scopes: list[str], expires_in_days: str = ""
) -> tuple[ApiKey, str]:
    """A new key and its secret, which is shown once: only its hash is kept."""
    scopes = [s for s in scopes if s in Scope.values]
    if not scopes:
        raise AdminError(f"scopes: choose at least one of {', '.join(Scope.values)}.")
    days = expires_in_days
    if days and not (days.isascii() and days.isdigit() and 1 <= int(days) <= MAX_KEY_DAYS):
        raise AdminError("expires: choose one of the listed periods.")
    expires_at = timezone.now() + timedelta(days=int(expires_in_days)) if expires_in_days else None
    name = name.strip()[:100]
    key, secret = ApiKey.issue(project=project, name=name, scopes=scopes, expires_at=expires_at)
    audit.record(
        project=project,
        actor=actor,
        verb="apikey.created",
        target=key,
        after={"prefix": key.prefix, "name": name, "scopes": scopes},
    )
    return key, secret


@transaction.atomic
def revoke_api_key(*, key: ApiKey, actor: Any) -> ApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit.record(
            project=key.project,
            actor=actor,
            verb="apikey.revoked",
            target=key,
            before={"revoked_at": None},
            after={"revoked_at": key.revoked_at.isoformat()},
        )
    return key


@transaction.atomic
def create_webhook(*, project: Project, actor: Any, url: str, events: list[str]) -> tuple[Webhook, str]:
    """A new webhook and its signing secret, which is shown once."""
    url = url.strip()
    events = [e for e in events if e in webhooks.EVENTS]
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and len(url) <= 500
    except ValueError:
        usable = False
    if not usable:
        raise AdminError("url: give an http:// or https:// address of at most 500 characters.")
    if not events:
        raise AdminError(f"events: choose at least one of {', '.join(webhooks.EVENTS)}.")
    try:
        # Checked again before each delivery; a name that does not resolve yet is let through.
        outbound.check_url(url, webhooks.outbound_allow(), unresolved_ok=True)
    except outbound.Refused as exc:
        raise AdminError(f"url: {exc.reason}.") from exc
    secret = webhooks.new_secret()
    hook = Webhook.objects.create(project=project, url=url, secret=secret, events=events)
    audit.record(
        project=project,
        actor=actor,
        verb="webhook.created",
        target=hook,
        after={"url": url, "events": events},
    )
    return hook, secret


@transaction.atomic
def toggle_webhook(*, webhook: Webhook, actor: Any) -> Webhook:
    """Turns a webhook off, or on again; its deliveries are kept either way."""
    webhook.active = not webhook.active
    webhook.save(update_fields=["active"])
    audit.record(
        project=webhook.project,
        actor=actor,
        verb="webhook.enabled" if webhook.active else "webhook.disabled",
        target=webhook,
        before={"active": not webhook.active},
        after={"active": webhook.active},
    )
    return webhook
