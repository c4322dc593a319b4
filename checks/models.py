"""What Receipts stores: projects and their members, conversations as received and as turns,
the check runs over them, their findings, and what reviewers did about each.

Every row carries its project and creation time, and indexes lead with (project, created_at),
so the data can later be partitioned by project and time without reshaping queries.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse
from django.utils import timezone


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Admin"


class ProjectQuerySet(models.QuerySet["Project"]):
    def for_user(self, user: Any) -> ProjectQuerySet:
        """Only the projects the user belongs to: every page starts its queries here."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__user=user)


class Project(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    options = models.JSONField(default=dict, blank=True, help_text="Checker options (CONTRACT.md §3).")
    # Two independent, blind reviews per finding before it counts as decided.
    double_review = models.BooleanField(default=False)
    # The project's own key for the judge its options name (entailment.judge_url), sent to
    # that judge alone. Write-only: set and cleared through administration.set_judge_key,
    # never shown back; not editable, so no form (the Django admin's included) renders it.
    judge_api_key = models.CharField(max_length=500, blank=True, default="", editable=False)
    created_at = models.DateTimeField(default=timezone.now)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("queue", args=[self.slug])


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "user"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"

    @property
    def can_review(self) -> bool:
        return self.role in (Role.REVIEWER, Role.ADMIN)


class Invitation(models.Model):
    """A way into a project for someone with no account yet: a link an admin hands over.

    Only a hash of its token is kept (the link is shown once); it is used once, and it runs
    out after ``DAYS`` days or when an admin revokes it."""

    DAYS = 7

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.REVIEWER)
    note = models.CharField(max_length=200, blank=True)  # whom it is for, in the admin's words
    hashed = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"invitation to {self.project} as {self.role}"

    @property
    def usable(self) -> bool:
        return self.accepted_at is None and self.revoked_at is None and self.expires_at > timezone.now()


class ApiKeyQuerySet(models.QuerySet["ApiKey"]):
    def usable(self) -> ApiKeyQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


class Scope(models.TextChoices):
    INGEST = "ingest", "Send conversations"
    READ = "read", "Read conversations and findings"
    CHECK = "check", "Check a conversation inline"


def all_scopes() -> list[str]:
    return list(Scope.values)


class ApiKey(models.Model):
    """A project's key for the API. Only a hash is kept; the key itself is shown once."""

    PREFIX_LENGTH = 12

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=PREFIX_LENGTH, unique=True)
    hashed = models.CharField(max_length=64)
    scopes = models.JSONField(default=all_scopes, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.project})"

    @staticmethod
    def hash(key: str) -> str:
        # Keys are long random strings, so a fast hash is enough: there is nothing to brute-force.
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def issue(
        cls,
        *,
        project: Project,
        name: str = "",
        scopes: list[str] | None = None,
        expires_at: Any = None,
    ) -> tuple[ApiKey, str]:
        """Creates a key and returns it with its secret, which is not stored anywhere."""
        secret = "rcpt_" + secrets.token_urlsafe(32)
        key = cls.objects.create(
            project=project,
            name=name,
            prefix=secret[: cls.PREFIX_LENGTH],
            hashed=cls.hash(secret),
            scopes=scopes if scopes is not None else all_scopes(),
            expires_at=expires_at,
        )
        return key, secret

    @property
    def is_usable(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())


class IdempotencyRecord(models.Model):
    """The first answer to a POST that carried an Idempotency-Key, replayed to any repeat."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    key = models.CharField(max_length=255)
    endpoint = models.CharField(max_length=100)
    request_hash = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    body = models.JSONField()
    headers = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "endpoint", "key"], name="one_answer_per_idempotency_key"
            )
        ]
        indexes = [models.Index(fields=["project", "created_at"], name="idempotency_project_time")]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.key}"


class Conversation(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="conversations")
    external_id = models.CharField(max_length=255)
    title = models.CharField(max_length=500, blank=True)
    agent_name = models.CharField(max_length=200, blank=True)
    agent_model = models.CharField(max_length=200, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    system = models.TextField(blank=True)
    receipts_complete = models.BooleanField(default=True)
    # The canonical native form the suite reads; payloads as received are kept in Payload.
    document = models.JSONField()
    content_hash = models.CharField(max_length=64)
    # A digest of the document's messages in order (ingest.pieces.messages_digest): a model
    # call whose input begins with exactly these messages continues this conversation, and
    # is found by it without reading any document (joining.py). Empty for conversations
    # stored before it was kept: they are never continued that way.
    messages_hash = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="one_external_id_per_project")
        ]
        indexes = [
            models.Index(fields=["project", "created_at"], name="conversation_project_time"),
            # The queue's agent and model lists walk these (facets.py).
            models.Index(fields=["project", "agent_name"], name="conversation_project_agent"),
            models.Index(fields=["project", "agent_model"], name="conversation_project_model"),
            models.Index(fields=["project", "messages_hash"], name="conversation_project_messages"),
        ]

    def __str__(self) -> str:
        return self.title or self.external_id

    def get_absolute_url(self) -> str:
        return reverse("conversation", args=[self.project.slug, self.pk])


class ConversationAlias(models.Model):
    """Another external id a conversation answers to: the trace of a model call (or a tool
    run) that was joined to it. A later export of that trace goes straight to it."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="aliases")
    external_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="one_alias_per_project")
        ]
        indexes = [models.Index(fields=["project", "created_at"], name="alias_project_time")]

    def __str__(self) -> str:
        return f"{self.external_id} → {self.conversation_id}"


class ExportState(models.TextChoices):
    WAITING = "waiting", "Waiting"
    STORED = "stored", "Stored"
    REFUSED = "refused", "Refused"


class ExportSignal(models.TextChoices):
    TRACES = "traces", "Traces (/v1/traces)"
    LOGS = "logs", "Logs (/v1/logs)"


class RawExport(models.Model):
    """An OTLP export exactly as received; it may carry many conversations, so their
    payloads point here instead of each keeping a copy.

    The endpoint answers once the body is kept here (``waiting``); a worker takes it under a
    lease (``lease_until``, ``lease_token``: a worker killed mid-batch lets the lease run
    out, and another takes it again), stores its conversations and marks it ``stored`` in the
    same transaction, or ``refused`` with the reason when it turns out invalid. ``rejected``,
    ``reason`` and ``counts`` say what became of it: what GET /api/v1/otlp-exports/<id> shows.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    signal = models.CharField(max_length=10, choices=ExportSignal.choices, default=ExportSignal.TRACES)
    body = models.BinaryField()
    content_type = models.CharField(max_length=100)
    content_encoding = models.CharField(max_length=20, blank=True)
    size = models.PositiveIntegerField(default=0)  # the body's bytes, as received
    records = models.PositiveIntegerField(default=0)  # spans or log records, as counted on receipt
    state = models.CharField(max_length=10, choices=ExportState.choices, default=ExportState.WAITING)
    lease_until = models.DateTimeField(null=True, blank=True)
    lease_token = models.CharField(max_length=32, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    rejected = models.PositiveIntegerField(default=0)  # records refused, once read
    reason = models.TextField(blank=True)
    counts = models.JSONField(default=dict, blank=True)  # conversations by what became of them
    created_at = models.DateTimeField(default=timezone.now)  # when it was received
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "created_at"], name="export_project_time"),
            # What the workers take and the backlog bound counts: the waiting ones only.
            models.Index(fields=["created_at"], name="export_waiting_time", condition=Q(state="waiting")),
        ]

    def __str__(self) -> str:
        return f"export {self.pk} ({self.content_type}, {self.state})"


class Payload(models.Model):
    """A request body exactly as it was received (the first one, then each that appended)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="payloads")
    body = models.TextField(blank=True)  # empty when the body is an export (below)
    export = models.ForeignKey(RawExport, on_delete=models.CASCADE, null=True, blank=True)
    format = models.CharField(max_length=20, default="native")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "created_at"], name="payload_project_time")]

    def __str__(self) -> str:
        return f"payload {self.pk} of {self.conversation_id}"


class TurnQuerySet(models.QuerySet["Turn"]):
    def flagged(self) -> TurnQuerySet:
        """Turns with at least one open finding a reviewer must look at."""
        return self.filter(Exists(Finding.objects.open().flags().filter(turn=OuterRef("pk"))))


class Turn(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    answer = models.TextField(blank=True)
    answer_seq = models.IntegerField(null=True, blank=True)
    tools_offered = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    objects = TurnQuerySet.as_manager()

    class Meta:
        ordering = ["conversation", "index"]
        constraints = [models.UniqueConstraint(fields=["conversation", "index"], name="one_turn_per_index")]
        indexes = [models.Index(fields=["project", "created_at"], name="turn_project_time")]

    def __str__(self) -> str:
        return f"{self.conversation} · turn {self.index}"

    def get_absolute_url(self) -> str:
        return reverse("turn", args=[self.project.slug, self.pk])


class Message(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="messages")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=10)
    content = models.JSONField(null=True, blank=True)  # as sent: string, null or parts
    text = models.TextField(blank=True)  # the content flattened; offsets count here
    tool_call_id = models.CharField(max_length=200, blank=True)
    is_error = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["turn", "seq"]
        indexes = [models.Index(fields=["project", "created_at"], name="message_project_time")]

    def __str__(self) -> str:
        return f"{self.role} message {self.seq} of turn {self.turn_id}"


class ToolCall(models.Model):
    """One call of a turn: what the model asked for, what came back, and the runtime's receipt."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="tool_calls")
    call_id = models.CharField(max_length=200, blank=True)
    tool = models.CharField(max_length=200)
    arguments = models.TextField(blank=True)  # raw, possibly invalid JSON
    request_seq = models.IntegerField(null=True, blank=True)
    result = models.TextField(blank=True)
    result_seq = models.IntegerField(null=True, blank=True)
    has_result = models.BooleanField(default=False)
    # The receipt as the suite judged it: sent by the runtime, or derived from the transcript.
    receipt = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["turn", "id"]
        indexes = [
            models.Index(fields=["project", "created_at"], name="toolcall_project_time"),
            models.Index(fields=["turn", "call_id"], name="toolcall_turn_call"),
            # A tool run exported on its own finds the conversation whose call it answers.
            models.Index(fields=["project", "call_id"], name="toolcall_project_call"),
        ]

    def __str__(self) -> str:
        return f"{self.tool} ({self.call_id})"


class Refusal(models.Model):
    """Something an API key sent that gave no conversation, and why: what an integrator
    reads when their traces are missing. The payload's shape is kept (its content type,
    keys, span and attribute names), never its content. A project keeps the newest
    RECEIPTS_REFUSALS_KEPT (refusals.py prunes the rest)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="refusals")
    api_key = models.ForeignKey(ApiKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    endpoint = models.CharField(max_length=100)
    status_code = models.PositiveSmallIntegerField()  # 200 for an OTLP partial success
    rejected = models.PositiveIntegerField(default=1)  # spans, items or conversations refused
    reason = models.TextField()
    shape = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="refusal_project_time")]

    def __str__(self) -> str:
        return f"{self.endpoint} refused ({self.status_code})"


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class RunKind(models.TextChoices):
    CHECKS = "checks", "Deterministic checks"
    JUDGE = "judge", "Judge model"


class CheckRun(models.Model):
    """One pass of the suite over a conversation: the deterministic checkers, or the judge
    model's questions (slow and budgeted, so on a queue of their own)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    kind = models.CharField(max_length=10, choices=RunKind.choices, default=RunKind.CHECKS)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING)
    suite_version = models.CharField(max_length=20, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    # What the suite reported beside findings: provenance and per-turn reading figures.
    summary = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Not claimed before this time: an OTLP conversation is checked once its trace has
    # settled (RECEIPTS_OTLP_SETTLE_SECONDS), and each later export of it pushes this back.
    not_before = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "created_at"], name="run_project_time"),
            models.Index(fields=["status", "created_at"], name="run_status_time"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (RunStatus.DONE, RunStatus.FAILED)


class JudgeUsage(models.Model):
    """Tokens a project's judge model spent in a day, as the endpoint reported them."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    day = models.DateField()
    tokens = models.PositiveBigIntegerField(default=0)
    questions = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "day"], name="one_usage_row_per_day")]

    def __str__(self) -> str:
        return f"{self.project} {self.day}: {self.tokens} tokens"


class Severity(models.TextChoices):
    FLAG = "flag", "Flag"
    INFO = "info", "Info"


class FindingStatus(models.TextChoices):
    OPEN = "open", "Open"
    CONFIRMED = "confirmed", "Confirmed"
    DISMISSED = "dismissed", "Dismissed"


class FindingQuerySet(models.QuerySet["Finding"]):
    def current(self) -> FindingQuerySet:
        """Findings the latest run still reports."""
        return self.filter(withdrawn_at__isnull=True)

    def open(self) -> FindingQuerySet:
        return self.current().filter(status=FindingStatus.OPEN)

    def flags(self) -> FindingQuerySet:
        return self.filter(severity=Severity.FLAG)


class Finding(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="findings")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="findings")
    run = models.ForeignKey(CheckRun, on_delete=models.SET_NULL, null=True, related_name="findings")
    checker = models.CharField(max_length=50)
    code = models.CharField(max_length=50)
    severity = models.CharField(max_length=10, choices=Severity.choices)
    value = models.CharField(max_length=500, blank=True)
    claim_text = models.TextField(blank=True)
    claim_start = models.IntegerField(null=True, blank=True)
    claim_end = models.IntegerField(null=True, blank=True)
    evidence = models.JSONField(default=list, blank=True)
    explanation = models.TextField()
    correction = models.TextField(blank=True)
    details = models.JSONField(default=dict, blank=True)  # the suite's finding as reported
    # (turn, checker, code, value or span): a re-run updates the same row, never adds one.
    fingerprint = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=10, choices=FindingStatus.choices, default=FindingStatus.OPEN)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_findings",
    )
    # A finding open on a reviewer's screen is held by them until held_until, so two people
    # do not decide it at once.
    held_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    held_until = models.DateTimeField(null=True, blank=True)
    # Filed here by the judge run of another conversation (the other half of a contradiction),
    # so this conversation's own runs neither report nor withdraw it.
    mirrored = models.BooleanField(default=False)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    objects = FindingQuerySet.as_manager()

    class Meta:
        ordering = ["turn", "claim_start", "id"]
        indexes = [
            models.Index(fields=["project", "created_at"], name="finding_project_time"),
            # Current findings, with every column the queue's filters read of a finding: its
            # counts per status and its filters are answered from this index alone, without
            # reading the findings' (wide) rows.
            models.Index(
                fields=[
                    "project",
                    "status",
                    "severity",
                    "checker",
                    "code",
                    "created_at",
                    "conversation",
                    "turn",
                ],
                condition=Q(withdrawn_at__isnull=True),
                name="finding_current_status",
            ),
            models.Index(fields=["project", "code"], name="finding_project_code"),  # facets.py
            # The few open findings someone has been given: each reviewer's load, "mine".
            models.Index(
                fields=["project", "assignee"],
                condition=Q(status="open", withdrawn_at__isnull=True, assignee__isnull=False),
                name="finding_open_assigned",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.checker}/{self.code} on {self.turn}"

    def summary(self) -> dict[str, Any]:
        """The finding in a few fields, as messages and datasets that point at it carry it."""
        return {
            "id": self.pk,
            "checker": self.checker,
            "code": self.code,
            "claim": self.claim_text,
            "explanation": self.explanation,
        }

    @staticmethod
    def make_fingerprint(conversation_id: int, finding: dict[str, Any], occurrence: int = 0) -> str:
        """Where a finding stands: its turn, checker and code, and its value, or else its span,
        call and argument path, or the position of the typed claim it judges. ``occurrence``
        tells apart findings that would otherwise stand in the same place."""
        key = Finding.fingerprint_key(conversation_id, finding, occurrence)
        return hashlib.sha256(key.encode()).hexdigest()

    @staticmethod
    def fingerprint_key(conversation_id: int, finding: dict[str, Any], occurrence: int = 0) -> str:
        """The ASCII text a fingerprint hashes; it starts with ``[conversation_id``, so a copy
        of a conversation can be fingerprinted in SQL (bench/generate.py)."""
        claim = finding.get("claim") or {}
        where = finding.get("value") or f"{claim.get('start')}:{claim.get('end')}"
        if finding.get("call_id"):
            where += f"@{finding['call_id']}:{finding.get('path', '')}"
        if finding.get("index") is not None:
            where += f"#{finding['index']}"
        parts = [conversation_id, finding["turn"], finding["checker"], finding["code"], where]
        if occurrence:
            parts.append(occurrence)
        return json.dumps(parts)


class Verdict(models.TextChoices):
    CONFIRMED = "confirmed", "Confirmed"
    DISMISSED = "dismissed", "Dismissed"


class Decision(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="decisions")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    verdict = models.CharField(max_length=10, choices=Verdict.choices)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["project", "created_at"], name="decision_project_time"),
            # What each reviewer decided, today and in all, counted from the index alone.
            models.Index(fields=["project", "reviewer", "created_at"], name="decision_project_reviewer"),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} by {self.reviewer_id}"


class CorrectionState(models.TextChoices):
    PROPOSED = "proposed", "Proposed"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class Correction(models.Model):
    """A reviewer's edit of the suite's proposed correction, approved by a second reviewer."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="corrections")
    text = models.TextField()
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    approver = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    state = models.CharField(max_length=10, choices=CorrectionState.choices, default=CorrectionState.PROPOSED)
    note = models.TextField(blank=True)  # why it was rejected, or a word from the approver
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "created_at"], name="correction_project_time")]
        constraints = [
            models.CheckConstraint(
                condition=Q(approver__isnull=True) | ~Q(approver=models.F("author")),
                name="correction_not_approved_by_author",
            )
        ]

    def __str__(self) -> str:
        return f"correction {self.pk} ({self.state})"


class Comment(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project", "created_at"], name="comment_project_time")]

    def __str__(self) -> str:
        return f"comment {self.pk} on finding {self.finding_id}"


class SavedView(models.Model):
    """A named set of queue filters, kept as the query string the queue reads."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="saved_views")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=100)
    query = models.CharField(max_length=2000)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "user", "name"], name="one_saved_view_name_per_user")
        ]

    def __str__(self) -> str:
        return self.name


class ExportStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class ExportJob(models.Model):
    """An export made in the background (a large CSV or JSONL, a PDF report, a dataset)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="exports")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    kind = models.CharField(max_length=20)
    filters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=ExportStatus.choices, default=ExportStatus.PENDING)
    progress = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    path = models.CharField(max_length=500, blank=True)  # the finished file, under var/exports
    filename = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="export_job_project_time")]

    def __str__(self) -> str:
        return f"{self.kind} export {self.pk} ({self.status})"


class Webhook(models.Model):
    """A URL that receives a signed JSON message when a turn is flagged or a correction approved."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=100)
    events = models.JSONField(default=list, blank=True)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "created_at"], name="webhook_project_time")]

    def __str__(self) -> str:
        return self.url


class WebhookDelivery(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=50)
    payload = models.JSONField()
    attempts = models.PositiveIntegerField(default=0)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = models.TextField(blank=True)
    error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="delivery_project_time")]

    def __str__(self) -> str:
        return f"{self.event} to {self.webhook_id} ({self.status_code})"


class ChainScheme(models.IntegerChoices):
    """How an event's hash is made. Events keep the scheme they were written with, so those
    from before the chain was keyed still verify by their own rule."""

    # A plain hash of the event: whoever can write the table can recompute it.
    SHA256 = 1, "SHA-256 (unkeyed)"
    # An HMAC under the audit key, which is kept out of the database (audit.keys()).
    HMAC_SHA256 = 2, "HMAC-SHA256 under the audit key"


class ChainedEvent(models.Model):
    """An entry of an append-only log in which each event hashes the one before it."""

    actor_name = models.CharField(max_length=150, blank=True)
    verb = models.CharField(max_length=50)
    object_type = models.CharField(max_length=50)
    object_id = models.CharField(max_length=50)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    previous_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)
    scheme = models.PositiveSmallIntegerField(choices=ChainScheme.choices, default=ChainScheme.HMAC_SHA256)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.actor_name} {self.verb} {self.object_type}:{self.object_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("Audit events are append-only: an existing event cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("Audit events are append-only: an event cannot be deleted.")

    def compute_hash(self, key: bytes | None = None) -> str:
        """The event's hash by its own scheme; a keyed event needs the key it was written with."""
        body: dict[str, Any] = {
            "project": getattr(self, "project_id", None),
            "actor": self.actor_name,
            "verb": self.verb,
            "object": f"{self.object_type}:{self.object_id}",
            "before": self.before,
            "after": self.after,
            "at": self.created_at.isoformat(),
            "previous": self.previous_hash,
        }
        if self.scheme == ChainScheme.SHA256:
            encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
            return hashlib.sha256(encoded.encode()).hexdigest()
        if self.scheme != ChainScheme.HMAC_SHA256:
            raise ValueError(f"unknown hash scheme {self.scheme!r}")
        if not key:
            raise ValueError("a keyed audit event needs the audit key to be hashed")
        body["scheme"] = self.scheme
        encoded = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
        return hmac.new(key, encoded.encode(), hashlib.sha256).hexdigest()


class AuditEvent(ChainedEvent):
    """One action on a project. Append-only, and each event hashes the one before it in the
    project's chain."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="audit_events")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["project", "created_at"], name="audit_project_time")]


class SiteEvent(ChainedEvent):
    """An action that belongs to no project: signing in and out, and changes to accounts and
    projects in the Django admin. One chain for the whole site, beside each project's.

    It has no foreign key to the user, only the name: a user who once signed in can still be
    deleted (an account is the subject of these events, not an actor on a project's data)."""

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["created_at"], name="site_event_time")]


from .models_daily import DailyFigure, DirtyDay  # noqa: E402, F401  (the overview's figures per day)
