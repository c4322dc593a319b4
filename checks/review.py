"""The reviewer's workflows: decisions (blind double review included, and the third
reviewer's decision that settles a dispute), bulk actions and their undo, assignment, holds,
corrections with four eyes, comments, saved views, and the agreement and precision that
decisions measure.

Each is keyword-only and runs in one transaction; every change is written to the audit
log. Refusals raise ``ReviewError`` with a sentence a reviewer can act on; the pages show
it as it is.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from . import audit, blind_review, filters, models_daily, webhooks
from .blind_review import DECISION_UNDONE
from .filters import FindingFilter
from .models import (
    AuditEvent,
    Comment,
    Correction,
    CorrectionState,
    Decision,
    Finding,
    FindingStatus,
    Project,
    Role,
    SavedView,
    Severity,
    Verdict,
)

HOLD_SECONDS = 300  # a finding open on a reviewer's screen stays theirs this long


NEEDS_CORRECTION = "correction"  # the third choice of the decide form: confirm and correct


MAX_TEXT = 10_000


class ReviewError(ValueError):
    """An action the rules refuse; the message says why and what would be accepted."""

    status_code = 400


class FindingHeld(ReviewError):
    status_code = 409


class NotAllowed(ReviewError):
    status_code = 403


class Hidden(ReviewError):
    """What blind double review hides from the one asking, refused as if it did not exist."""

    status_code = 404


# One refusal whether or not another reviewer's correction waits, so it tells of none.
BLIND_PROPOSAL = (
    "Under blind double review a correction is proposed as you decide: choose Needs correction, "
    "then edit it once you have decided."
)


def holder(finding: Finding, *, now: datetime | None = None) -> Any:
    """Who holds the finding now, or None when nobody does (or the hold ran out)."""
    now = now or timezone.now()
    if finding.held_by_id and finding.held_until and finding.held_until > now:
        return finding.held_by
    return None


def _check_hold(finding: Finding, user: Any) -> None:
    other = holder(finding)
    if other is not None and other.pk != user.pk:
        until = timezone.localtime(finding.held_until).strftime("%H:%M")
        raise FindingHeld(f"{other.username} has this finding open until {until}; it is theirs to decide.")


@transaction.atomic
def hold(*, findings: Iterable[Finding], user: Any, seconds: int = HOLD_SECONDS) -> list[int]:
    """Holds each open finding nobody else holds for ``user``; returns the ids now held.

    A hold is a short-lived lock, not a decision, so it is not written to the audit log."""
    now = timezone.now()
    until = now + timedelta(seconds=seconds)
    ids = [f.pk for f in findings if f.status == FindingStatus.OPEN]
    locked = Finding.objects.select_for_update().filter(pk__in=ids)
    mine = [
        f.pk for f in locked if f.held_by_id in (None, user.pk) or f.held_until is None or f.held_until <= now
    ]
    Finding.objects.filter(pk__in=mine).update(held_by=user, held_until=until)
    return mine


def release(*, findings: Iterable[Finding], user: Any) -> int:
    """Lets go of the holds ``user`` has on ``findings`` (their page was left); how many.

    Not written to the audit log, as a hold is not."""
    ids = [f.pk for f in findings]
    return Finding.objects.filter(pk__in=ids, held_by=user).update(held_by=None, held_until=None)


def _latest_votes(finding: Finding) -> dict[int, str]:
    """Each reviewer's latest verdict on a finding (the newest decision of each counts)."""
    votes: dict[int, str] = {}
    for reviewer_id, verdict in (
        Decision.objects.filter(finding=finding)
        .order_by("created_at", "id")
        .values_list("reviewer_id", "verdict")
    ):
        votes[reviewer_id] = verdict
    return votes


def disputants(votes: dict[int, str]) -> list[int]:
    """The reviewers of a disputed finding: its latest votes split evenly between confirm and
    dismiss (the rule of ``filters.disputed_findings``). A reviewer who is not among them
    settles it; those who disagreed may not, or the dispute would never reach a third."""
    tally = Counter(votes.values())
    if len(tally) > 1 and len(set(tally.values())) == 1:
        return list(votes)
    return []


def _names(user_ids: Iterable[int]) -> list[str]:
    return sorted(get_user_model().objects.filter(pk__in=list(user_ids)).values_list("username", flat=True))


def _settled_status(project: Project, votes: dict[int, str], verdict: str) -> str:
    """The finding's status after a vote. With double review it stays open until two
    reviewers have voted and agree; a disagreement waits for a third, who settles it."""
    if not project.double_review:
        return verdict
    if len(votes) < 2:
        return FindingStatus.OPEN
    tally = Counter(votes.values())
    top, n = tally.most_common(1)[0]
    if len(tally) == 1 or n > len(votes) - n:
        return top
    return FindingStatus.OPEN


class Disputed(ReviewError):
    status_code = 409


@transaction.atomic
def record_decision(
    *,
    finding: Finding,
    reviewer: Any,
    verdict: str,
    reason: str = "",
    respect_hold: bool = True,
    batch: str = "",
) -> Decision:
    """A reviewer confirms or dismisses a finding; the change goes to the audit log.

    ``verdict`` may also be ``correction``: the finding is confirmed and the suite's proposed
    correction becomes a draft the reviewer edits and a second reviewer approves. On a
    disputed finding only a third reviewer decides, and their decision settles it (the audit
    event names whom it settled). ``batch`` names the bulk action the decision is part of,
    which ``undo_batch`` finds it by."""
    needs_correction = verdict == NEEDS_CORRECTION
    if needs_correction:
        verdict = Verdict.CONFIRMED
    if verdict not in Verdict.values:
        raise ReviewError(f"verdict must be one of {', '.join([*Verdict.values, NEEDS_CORRECTION])}")
    locked = Finding.objects.select_for_update(of=("self",)).select_related("project").get(pk=finding.pk)
    # Under double review each reviewer decides on their own, so a hold does not bar others.
    if respect_hold and not locked.project.double_review:
        _check_hold(locked, reviewer)
    votes = _latest_votes(locked)
    split = disputants(votes)
    if reviewer.pk in split:
        others = ", ".join(n for n in _names(split) if n != reviewer.username)
        raise Disputed(
            f"You and {others} disagree on this finding: a third reviewer's decision settles it "
            "(the agreement page lists the disputed findings)."
        )
    before = {"status": locked.status}
    decision = Decision.objects.create(
        project_id=locked.project_id,
        finding=locked,
        reviewer=reviewer,
        verdict=verdict,
        reason=reason[:1000] or ("needs correction" if needs_correction else ""),
    )
    votes[reviewer.pk] = verdict
    locked.status = _settled_status(locked.project, votes, verdict)
    locked.updated_at = timezone.now()
    if locked.held_by_id == reviewer.pk:  # decided: no longer theirs to hold
        locked.held_by, locked.held_until = None, None
    locked.save(update_fields=["status", "updated_at", "held_by", "held_until"])
    models_daily.mark_findings(Finding.objects.filter(pk=locked.pk))  # the overview counts its day again
    after: dict[str, Any] = {"status": locked.status, "reason": decision.reason, "decision": decision.pk}
    if locked.project.double_review:
        after["blind"] = True
    if split:
        after["settles"] = _names(split)
    if batch:
        after["batch"] = batch
    audit.record(
        project=locked.project,
        actor=reviewer,
        verb=f"finding.{verdict}",
        target=locked,
        before=before,
        after=after,
    )
    if (
        needs_correction
        and not Correction.objects.filter(finding=locked, state=CorrectionState.PROPOSED).exists()
    ):
        propose_correction(finding=locked, author=reviewer, text=revision_for(locked))
    finding.status = locked.status
    return decision


ASSIGNMENT_UNDONE = "finding.assignment_undone"


@dataclass(frozen=True)
class Disagreement:
    finding: Finding
    votes: dict[str, str]  # reviewer's name -> their latest verdict


def disagreements(project: Project, limit: int = 100) -> list[Disagreement]:
    """Disputed findings, oldest first: their reviewers split evenly between confirm and
    dismiss, and each waits for a third reviewer to settle it."""
    split = list(filters.disputed_findings(project).values_list("finding", flat=True)[:limit])
    votes: dict[int, dict[str, str]] = {}
    for finding_id, reviewer, verdict in (
        Decision.objects.filter(finding_id__in=split)
        .order_by("created_at", "id")
        .values_list("finding_id", "reviewer__username", "verdict")
    ):
        votes.setdefault(finding_id, {})[reviewer] = verdict
    findings = Finding.objects.filter(pk__in=split).select_related("turn", "conversation").order_by("pk")
    return [Disagreement(finding, votes[finding.pk]) for finding in findings]


@dataclass(frozen=True)
class BulkResult:
    done: int
    skipped: int  # held by someone else, already in the asked state, or disputed by the reviewer
    batch: str = ""  # what undo_batch takes back, when anything was done


def new_batch() -> str:
    """A bulk action's name in the audit log: each event it writes carries it."""
    return uuid.uuid4().hex


@transaction.atomic
def bulk_decide(*, findings: QuerySet[Finding], reviewer: Any, verdict: str, reason: str = "") -> BulkResult:
    """One decision per finding, each audited on its own; findings others hold, and those the
    reviewer disagrees on with another (a third reviewer settles them), are skipped."""
    if verdict not in Verdict.values:
        raise ReviewError(f"verdict must be one of {', '.join(Verdict.values)}")
    batch = new_batch()
    done = skipped = 0
    for finding in findings.order_by("id"):
        if finding.status == verdict or (holder(finding) not in (None, reviewer)):
            skipped += 1
            continue
        try:
            record_decision(finding=finding, reviewer=reviewer, verdict=verdict, reason=reason, batch=batch)
        except Disputed:
            skipped += 1
            continue
        done += 1
    return BulkResult(done, skipped, batch if done else "")


@dataclass(frozen=True)
class UndoResult:
    restored: int
    refused: list[str]  # one sentence per finding left as it is, saying why


@transaction.atomic
def undo_batch(*, project: Project, batch: str, actor: Any, seconds: int) -> UndoResult:
    """Takes back a bulk action of ``actor`` made in the last ``seconds``: each finding gets
    back the status (or assignee) it had, the bulk decision is withdrawn from its votes, and
    each undo is an audit event of its own. A finding decided (or assigned) again since is
    left as it is and named in ``refused``."""
    since = timezone.now() - timedelta(seconds=seconds)
    # The project's events of the last few minutes, from its (project, created_at) index.
    events = list(
        AuditEvent.objects.filter(project=project, created_at__gte=since, after__batch=batch).order_by("id")
    )
    if not batch or not events:
        raise ReviewError(
            f"Nothing to undo: a bulk action can be undone once, for {seconds // 60} minutes after it."
        )
    if any(e.actor_id != actor.pk for e in events):
        raise NotAllowed(f"Only {events[0].actor_name}, who made this bulk change, can undo it.")
    # Assignments made since, to tell one reassigned meanwhile: the project's few minutes of
    # events again, not a list of ids (a large batch would pass the database's bind limit).
    later: dict[str, list[AuditEvent]] = {}
    for e in AuditEvent.objects.filter(
        project=project,
        created_at__gte=events[0].created_at,
        id__gt=events[0].id,
        object_type="finding",
        verb__in=["finding.assigned", ASSIGNMENT_UNDONE],
    ):
        later.setdefault(e.object_id, []).append(e)
    findings = Finding.objects.select_for_update(of=("self",)).in_bulk([int(e.object_id) for e in events])
    restored, refused = 0, []
    for event in events:
        finding = findings.get(int(event.object_id))
        after_it = [e for e in later.get(event.object_id, []) if e.pk > event.pk]
        if finding is None:
            refused.append(f"Finding {event.object_id} no longer exists.")
            continue
        if event.verb == "finding.assigned":
            why = _undo_assignment(project, finding, event, after_it, actor, batch)
        else:
            why = _undo_decision(project, finding, event, actor, batch)
        if why:
            refused.append(f"{finding.code} on turn {finding.turn_id}: {why}")
        else:
            restored += 1
    return UndoResult(restored, refused)


def _undo_decision(project: Project, finding: Finding, event: AuditEvent, actor: Any, batch: str) -> str:
    """Withdraws the bulk decision ``event`` recorded; returns why not, or "" once done."""
    decision_id = (event.after or {}).get("decision")
    decision = Decision.objects.filter(pk=decision_id, finding=finding).first() if decision_id else None
    if decision is None:
        return "already undone."
    newer = (
        Decision.objects.filter(finding=finding, id__gt=decision.pk)
        .select_related("reviewer")
        .order_by("-id")
        .first()
    )
    if newer is not None:
        when = timezone.localtime(newer.created_at).strftime("%H:%M")
        return f"{newer.reviewer.username} decided it again at {when}; left as they decided."
    status = (event.before or {}).get("status", FindingStatus.OPEN)
    current = finding.status
    decision.delete()
    finding.status = status
    finding.updated_at = timezone.now()
    finding.save(update_fields=["status", "updated_at"])
    models_daily.mark_findings(Finding.objects.filter(pk=finding.pk))  # the overview counts its day again
    audit.record(
        project=project,
        actor=actor,
        verb=DECISION_UNDONE,
        target=finding,
        before={"status": current, "verdict": decision.verdict, "decision": decision.pk},
        after={"status": status, "reason": "bulk action undone", "batch": batch, "undoes": event.pk},
    )
    return ""


def _undo_assignment(
    project: Project, finding: Finding, event: AuditEvent, after_it: list[AuditEvent], actor: Any, batch: str
) -> str:
    """Gives the finding back to whom ``event`` took it from; returns why not, or ""."""
    for e in after_it:
        if e.verb == ASSIGNMENT_UNDONE and (e.after or {}).get("undoes") == event.pk:
            return "already undone."
        if e.verb in ("finding.assigned", ASSIGNMENT_UNDONE):
            when = timezone.localtime(e.created_at).strftime("%H:%M")
            return f"{e.actor_name} assigned it again at {when}; left as they assigned it."
    name = (event.before or {}).get("assignee")
    previous = None
    if name:
        previous = next((u for u in reviewers_of(project) if u.username == name), None)
        if previous is None:
            return f"{name} is no longer a reviewer of this project; assign it by hand."
    current = finding.assignee.username if finding.assignee_id and finding.assignee else None
    finding.assignee = previous
    finding.updated_at = timezone.now()
    finding.save(update_fields=["assignee", "updated_at"])
    audit.record(
        project=project,
        actor=actor,
        verb=ASSIGNMENT_UNDONE,
        target=finding,
        before={"assignee": current},
        after={"assignee": name, "batch": batch, "undoes": event.pk},
    )
    return ""


def reviewers_of(project: Project) -> list[Any]:
    """The project's members who may review, by username."""
    user_model = get_user_model()
    return list(
        user_model.objects.filter(
            memberships__project=project, memberships__role__in=[Role.REVIEWER, Role.ADMIN]
        ).order_by("username")
    )


@transaction.atomic
def assign(*, finding: Finding, assignee: Any, actor: Any, batch: str = "") -> Finding:
    """Gives a finding to a reviewer of its project (or to nobody, with ``assignee=None``);
    ``batch`` names the bulk action it is part of."""
    locked = (
        Finding.objects.select_for_update(of=("self",))
        .select_related("project", "assignee")
        .get(pk=finding.pk)
    )
    if assignee is not None and assignee not in reviewers_of(locked.project):
        raise ReviewError(f"{assignee.username} is not a reviewer of this project.")
    before = {"assignee": locked.assignee.username if locked.assignee else None}
    after: dict[str, Any] = {"assignee": assignee.username if assignee else None}
    if before == after:
        return locked
    locked.assignee = assignee
    locked.updated_at = timezone.now()
    locked.save(update_fields=["assignee", "updated_at"])
    if batch:
        after["batch"] = batch
    audit.record(
        project=locked.project,
        actor=actor,
        verb="finding.assigned",
        target=locked,
        before=before,
        after=after,
    )
    finding.assignee = assignee
    return locked


@transaction.atomic
def bulk_assign(*, findings: QuerySet[Finding], assignee: Any, actor: Any) -> BulkResult:
    batch = new_batch()
    done = skipped = 0
    for finding in findings.order_by("id"):
        if finding.assignee_id == (assignee.pk if assignee else None):
            skipped += 1
            continue
        assign(finding=finding, assignee=assignee, actor=actor, batch=batch)
        done += 1
    return BulkResult(done, skipped, batch if done else "")


@transaction.atomic
def assign_round_robin(
    *,
    project: Project,
    findings: QuerySet[Finding],
    actor: Any,
    reviewers: list[Any] | None = None,
    batch: str = "",
) -> dict[str, int]:
    """Deals the findings out in turn to the project's reviewers (or those given), oldest
    first, starting after whoever has the fewest open findings; returns how many each got."""
    people = reviewers if reviewers is not None else reviewers_of(project)
    if not people:
        raise ReviewError("This project has no reviewers to assign to; add some on the Members page.")
    load = Counter(
        Finding.objects.open()
        .filter(project=project, assignee__in=people)
        .values_list("assignee_id", flat=True)
    )
    people = sorted(people, key=lambda u: (load[u.pk], u.username))
    given: Counter[str] = Counter()
    for i, finding in enumerate(findings.order_by("created_at", "id")):
        person = people[i % len(people)]
        assign(finding=finding, assignee=person, actor=actor, batch=batch)
        given[person.username] += 1
    return dict(given)


def _clean(text: str) -> str:
    text = text.replace("\r\n", "\n").strip()
    if not text:
        raise ReviewError("A correction needs text: write the message that should go out instead.")
    if len(text) > MAX_TEXT:
        raise ReviewError(f"A correction is at most {MAX_TEXT} characters.")
    return text


@transaction.atomic
def propose_correction(*, finding: Finding, author: Any, text: str) -> Correction:
    """Starts the correction of a finding from the given text, or the suite's proposal."""
    locked = Finding.objects.select_for_update(of=("self",)).select_related("project").get(pk=finding.pk)
    _check_hold(locked, author)
    # A proposal says its author confirmed, which blind review keeps from the other reviewer.
    if blind_review.hidden_from(locked, author):
        raise ReviewError(BLIND_PROPOSAL)
    if Correction.objects.filter(finding=locked, state=CorrectionState.PROPOSED).exists():
        raise ReviewError("This finding already has a correction waiting for approval; edit that one.")
    correction = Correction.objects.create(
        project=locked.project, finding=locked, text=_clean(text or revision_for(locked)), author=author
    )
    audit.record(
        project=locked.project,
        actor=author,
        verb="correction.proposed",
        target=correction,
        before={"text": locked.correction},
        after={"text": correction.text, "finding": locked.pk, "state": correction.state},
    )
    return correction


@transaction.atomic
def edit_correction(*, correction: Correction, editor: Any, text: str) -> Correction:
    """Changes a waiting correction's text. Only its author edits it: the reviewer who
    approves must not have written any of it."""
    locked = (
        Correction.objects.select_for_update(of=("self",)).select_related("project").get(pk=correction.pk)
    )
    if locked.author_id != editor.pk and blind_review.hidden_from(locked.finding, editor, locked.project):
        raise ReviewError(BLIND_PROPOSAL)  # naming its author would tell of it
    if locked.state != CorrectionState.PROPOSED:
        raise ReviewError(f"This correction was {locked.state} and can no longer change; propose a new one.")
    if locked.author_id != editor.pk:
        raise NotAllowed(
            f"{locked.author.username} wrote this correction; approve or reject it, or ask them to edit it."
        )
    text = _clean(text)
    if text == locked.text:
        return locked
    before = {"text": locked.text}
    locked.text = text
    locked.save(update_fields=["text"])
    audit.record(
        project=locked.project,
        actor=editor,
        verb="correction.edited",
        target=locked,
        before=before,
        after={"text": text, "finding": locked.finding_id},
    )
    return locked


@transaction.atomic
def save_correction(*, finding: Finding, user: Any, text: str) -> Correction:
    """Proposes a correction, or edits the one the user is waiting on. Under blind double
    review a reviewer who has not decided the finding does neither (``BLIND_PROPOSAL``)."""
    waiting = Correction.objects.filter(finding=finding, state=CorrectionState.PROPOSED).first()
    if waiting is None:
        return propose_correction(finding=finding, author=user, text=text)
    return edit_correction(correction=waiting, editor=user, text=text)


def _decide_correction(correction: Correction, approver: Any, state: str, note: str) -> Correction:
    locked = (
        Correction.objects.select_for_update(of=("self",)).select_related("project").get(pk=correction.pk)
    )
    if not blind_review.may_see_correction(locked, approver, locked.project):
        raise Hidden("No such correction.")  # approving one unseen would be deciding blind
    if locked.state != CorrectionState.PROPOSED:
        raise ReviewError(f"This correction was already {locked.state}.")
    if locked.author_id == approver.pk:
        raise NotAllowed("You wrote this correction, so a second reviewer must approve or reject it.")
    if state == CorrectionState.REJECTED and not note.strip():
        raise ReviewError("Say why the correction is rejected, so its author can fix it.")
    locked.state = state
    locked.approver = approver
    locked.note = note.strip()[:2000]
    locked.decided_at = timezone.now()
    locked.save(update_fields=["state", "approver", "note", "decided_at"])
    audit.record(
        project=locked.project,
        actor=approver,
        verb=f"correction.{state}",
        target=locked,
        before={"state": CorrectionState.PROPOSED},
        after={
            "state": state,
            "note": locked.note,
            "author": locked.author.username,
            "finding": locked.finding_id,
        },
    )
    if state == CorrectionState.APPROVED:
        # Sent once this transaction commits, to the project's webhooks that ask for it.
        webhooks.notify(
            project=locked.project,
            event="correction.approved",
            payload=webhooks.correction_approved_payload(locked),
        )
    return locked


@transaction.atomic
def approve_correction(*, correction: Correction, approver: Any, note: str = "") -> Correction:
    return _decide_correction(correction, approver, CorrectionState.APPROVED, note)


@transaction.atomic
def reject_correction(*, correction: Correction, approver: Any, note: str) -> Correction:
    return _decide_correction(correction, approver, CorrectionState.REJECTED, note)


@dataclass(frozen=True)
class DiffPiece:
    op: str  # equal, insert, delete
    text: str


_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")
# A sentence with what follows it up to the next one: it ends at ., ! or ? before a space, or
# at a line break (a list item, a heading).
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s)|(?=\n)|$)\s*", re.S)
# Unchanged sentences around a change are shown this far; longer runs are counted instead.
_CONTEXT = 1


def sentences_of(text: str) -> list[str]:
    """``text`` cut into sentences, each with the space after it: joined, they are ``text``."""
    return [s for s in _SENTENCE.findall(text) if s]


def revision_for(finding: Finding) -> str:
    """The suite's correction as a revision of the answer: its text (the contract's, as the
    suite wrote it) set right after the sentence that holds the flagged claim, so the
    reviewer edits that sentence in place. A finding with no claim in the answer (an
    argument of a call) proposes its text alone."""
    note = (finding.correction or "").strip()
    answer = finding.turn.answer if finding.turn_id else ""
    if not note or finding.claim_start is None or not answer:
        return note
    at = 0
    for sentence in sentences_of(answer):
        at += len(sentence)
        if at > finding.claim_start:
            break
    head = answer[:at].rstrip()
    return f"{head} [{note}]{answer[len(head) :]}" if at < len(answer) else f"{head} [{note}]"


def diff(original: str, revised: str) -> list[DiffPiece]:
    """The differences from ``original`` to ``revised`` by sentence, and by word within a
    changed sentence, as pieces a template shows with <del> and <ins> while escaping every
    piece. Long runs of unchanged sentences are one ``skip`` piece that counts them."""
    a, b = sentences_of(original), sentences_of(revised)
    out: list[DiffPiece] = []
    opcodes = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    for n, (op, i1, i2, j1, j2) in enumerate(opcodes):
        if op == "equal":
            same = a[i1:i2]
            keep_before = _CONTEXT if n > 0 else 0
            keep_after = _CONTEXT if n < len(opcodes) - 1 else 0
            if len(same) > keep_before + keep_after + 1:
                hidden = len(same) - keep_before - keep_after
                out.append(DiffPiece("equal", "".join(same[:keep_before])))
                out.append(DiffPiece("skip", f"… {hidden} unchanged sentence{'s' if hidden > 1 else ''} …\n"))
                out.append(DiffPiece("equal", "".join(same[len(same) - keep_after :])))
            else:
                out.append(DiffPiece("equal", "".join(same)))
        elif op == "replace":
            out.extend(_word_diff("".join(a[i1:i2]), "".join(b[j1:j2])))
        else:
            if i2 > i1:
                out.append(DiffPiece("delete", "".join(a[i1:i2])))
            if j2 > j1:
                out.append(DiffPiece("insert", "".join(b[j1:j2])))
    return [piece for piece in out if piece.text]


def _word_diff(original: str, revised: str) -> list[DiffPiece]:
    """Word-level differences from ``original`` to ``revised``."""
    a, b = _TOKENS.findall(original), _TOKENS.findall(revised)
    out: list[DiffPiece] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(DiffPiece("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(DiffPiece("delete", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(DiffPiece("insert", "".join(b[j1:j2])))
    return out


@transaction.atomic
def add_comment(*, finding: Finding, author: Any, text: str) -> Comment:
    text = text.strip()
    if not text:
        raise ReviewError("A comment needs text.")
    if len(text) > MAX_TEXT:
        raise ReviewError(f"A comment is at most {MAX_TEXT} characters.")
    comment = Comment.objects.create(project_id=finding.project_id, finding=finding, author=author, text=text)
    audit.record(
        project=finding.project,
        actor=author,
        verb="comment.added",
        target=comment,
        after={"text": text, "finding": finding.pk},
    )
    return comment


@transaction.atomic
def save_view(*, project: Project, user: Any, name: str, query: str) -> SavedView:
    name = name.strip()[:100]
    if not name:
        raise ReviewError("Name the view, such as 'my open unsupported values'.")
    view, created = SavedView.objects.update_or_create(
        project=project, user=user, name=name, defaults={"query": query[:2000]}
    )
    audit.record(
        project=project,
        actor=user,
        verb="view.saved" if created else "view.updated",
        target=view,
        after={"name": name, "query": view.query},
    )
    return view


@transaction.atomic
def delete_view(*, view: SavedView, user: Any) -> None:
    audit.record(
        project=view.project, actor=user, verb="view.deleted", target=view, before={"name": view.name}
    )
    view.delete()


@dataclass(frozen=True)
class Disagreed:
    """A finding whose first two reviewers disagreed, as kappa counts it, and where it stands.

    Two reviewers have decided it, so it is past blind review (``blind_review``): its
    verdicts are every member's to read, the third reviewer's who settles it first of all."""

    finding: Finding
    first: tuple[str, str]  # (reviewer's name, latest verdict)
    second: tuple[str, str]
    disputed: bool  # still split evenly: waits for a third reviewer
    settled_by: list[tuple[str, str]]  # the reviewers after the first two, and their verdicts


@dataclass(frozen=True)
class Agreement:
    pairs: int  # findings decided by two reviewers
    agreed: int
    kappa: float | None  # None when there is nothing (or no variation) to measure
    disagreed: list[Disagreed] = field(default_factory=list)  # the newest DISAGREED_SHOWN
    disagreed_total: int = 0


DISAGREED_SHOWN = 100


def cohens_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two raters over the same items: (observed − chance) / (1 − chance)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[label] * second[label] for label in set(first) | set(second)) / (n * n)
    if chance == 1:
        return 1.0 if observed == 1 else None
    return (observed - chance) / (1 - chance)


def agreement(project: Project) -> Agreement:
    """Kappa between the first two reviewers of each finding two reviewers decided, each
    counted by their latest verdict."""
    votes: dict[int, dict[int, str]] = {}
    order: dict[int, list[int]] = {}
    last: dict[int, int] = {}  # each finding's newest decision, to list the newest first
    for decision_id, finding_id, reviewer_id, verdict in (
        Decision.objects.filter(project=project)
        .order_by("created_at", "id")
        .values_list("id", "finding_id", "reviewer_id", "verdict")
    ):
        votes.setdefault(finding_id, {})[reviewer_id] = verdict
        last[finding_id] = decision_id
        seen = order.setdefault(finding_id, [])
        if reviewer_id not in seen:
            seen.append(reviewer_id)
    two = [f for f in votes if len(order[f]) >= 2]
    pairs = [(votes[f][order[f][0]], votes[f][order[f][1]]) for f in two]
    split = sorted((f for f in two if votes[f][order[f][0]] != votes[f][order[f][1]]), key=lambda f: -last[f])
    findings = Finding.objects.select_related("project", "turn", "conversation").in_bulk(
        split[:DISAGREED_SHOWN]
    )
    names = dict(
        get_user_model()
        .objects.filter(pk__in={r for f in findings for r in order[f]})
        .values_list("pk", "username")
    )
    disagreed = [
        Disagreed(
            finding=findings[f],
            first=(names[order[f][0]], votes[f][order[f][0]]),
            second=(names[order[f][1]], votes[f][order[f][1]]),
            disputed=bool(disputants(votes[f])),
            settled_by=[(names[r], votes[f][r]) for r in order[f][2:]],
        )
        for f in split[:DISAGREED_SHOWN]
        if f in findings
    ]
    return Agreement(len(pairs), sum(a == b for a, b in pairs), cohens_kappa(pairs), disagreed, len(split))


def precision_of(confirmed: int, dismissed: int) -> float | None:
    """Reviewer-measured precision: the share of the decided flags that reviewers confirmed,
    confirmed ÷ (confirmed + dismissed); None while none is decided."""
    decided = confirmed + dismissed
    return confirmed / decided if decided else None


@dataclass(frozen=True)
class Precision:
    checker: str
    code: str  # empty when counted per checker
    confirmed: int
    dismissed: int
    open: int

    @property
    def decided(self) -> int:
        return self.confirmed + self.dismissed

    @property
    def total(self) -> int:
        return self.decided + self.open

    @property
    def precision(self) -> float | None:
        return precision_of(self.confirmed, self.dismissed)


def precision_counts(flags: QuerySet[Finding], *, by: str = "code") -> list[Precision]:
    """The flags counted per status for each checker (and code, with ``by="code"``), in one
    grouped query, unordered."""
    fields = ["checker", "code"] if by == "code" else ["checker"]
    rows: dict[tuple[str, str], Counter[str]] = {}
    # No ordering: a finding's default order would join its turn and split the groups.
    for *key, status, n in flags.values_list(*fields, "status").annotate(n=Count("id")).order_by():
        rows.setdefault((key[0], key[1] if by == "code" else ""), Counter())[status] += n
    return [
        Precision(
            checker, code, c[FindingStatus.CONFIRMED], c[FindingStatus.DISMISSED], c[FindingStatus.OPEN]
        )
        for (checker, code), c in rows.items()
    ]


def precision(project: Project, *, by: str = "code") -> list[Precision]:
    """How often reviewers confirmed what each checker (or checker and code) flagged, least
    precise first."""
    flags = FindingFilter(severity=Severity.FLAG.value).findings(project)
    out = precision_counts(flags, by=by)
    return sorted(out, key=lambda p: (p.precision if p.precision is not None else 2, p.checker, p.code))
