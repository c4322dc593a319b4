"""Blind double review: what one reader may see of a finding's reviews.

With double review on, two reviewers decide each finding on their own. An open finding that
fewer than two reviewers have decided is under blind review: nothing shows a reader another
reviewer's verdict, reason or proposed correction on it (a proposal says its author
confirmed) until the reader has decided it too. Once two have decided it, they agreed and it
is settled, or they disagreed and it is disputed; either way it has left blind review, and
every reader, the third reviewer who settles a dispute first of all, sees every verdict,
reason and correction on it.

A reader who never decides sees no reviewer's verdict, reason or correction on a finding
under blind review: a viewer, and an API key, which is no reviewer (it reads as nobody,
``None`` or an anonymous user).

Every door asks this module: the turn page and its audit log, a finding's history, the
project's audit log, every export (from the page, in a background job as whoever started
it, through the API), and the correction actions, whose refusals would otherwise tell of a
hidden correction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from .models import Correction, Decision, Finding, FindingStatus, Project, Verdict

DECISION_VERBS = [f"finding.{verdict}" for verdict in Verdict.values]
# An undone decision's event names the verdict it took back, so blind review hides it too.
DECISION_UNDONE = "finding.decision_undone"


def _reader_id(reader: Any) -> int | None:
    """The reader's user id; None for nobody (an API key, a job whose starter is gone)."""
    return getattr(reader, "pk", None)


def under_blind_review(finding: Finding, project: Project | None = None) -> bool:
    """Whether the finding's reviews are still blind: double review is on, it is open, and
    fewer than two reviewers have decided it.

    Reads the finding's decisions, so callers showing many prefetch them; ``project`` saves
    a query when the caller has it."""
    if not (project or finding.project).double_review or finding.status != FindingStatus.OPEN:
        return False
    return len({d.reviewer_id for d in finding.decisions.all()}) < 2


def hidden_from(finding: Finding, reader: Any, project: Project | None = None) -> bool:
    """Whether other reviewers' reviews of the finding are hidden from ``reader``: while it
    is under blind review and the reader has not decided it."""
    if not under_blind_review(finding, project):
        return False
    reader_id = _reader_id(reader)
    return reader_id is None or all(d.reviewer_id != reader_id for d in finding.decisions.all())


def _theirs(correction: Correction, reader_id: int | None) -> bool:
    """A correction the reader wrote or approved tells them nothing they do not know."""
    return reader_id is not None and reader_id in (correction.author_id, correction.approver_id)


def may_see_correction(correction: Correction, reader: Any, project: Project | None = None) -> bool:
    """Whether ``reader`` may see the correction (the finding's decisions should be
    prefetched when asking of many)."""
    return _theirs(correction, _reader_id(reader)) or not hidden_from(correction.finding, reader, project)


@dataclass(frozen=True)
class Seen:
    """What one reader may see of a finding's reviews."""

    decisions: list[Decision]
    corrections: list[Correction]  # in the order the finding's corrections were fetched
    hidden: int  # other reviewers whose decisions are held back
    blind: bool  # whether others' reviews are hidden from the reader


def seen_by(finding: Finding, reader: Any, project: Project | None = None) -> Seen:
    """The finding's decisions and corrections that ``reader`` may see.

    Reads the finding's decisions and corrections, so callers showing many prefetch them."""
    decisions = list(finding.decisions.all())
    corrections = list(finding.corrections.all())
    if not hidden_from(finding, reader, project):
        return Seen(decisions, corrections, 0, False)
    reader_id = _reader_id(reader)
    # Hidden means the reader has not decided it: every decision is another's.
    return Seen(
        decisions=[],
        corrections=[c for c in corrections if _theirs(c, reader_id)],
        hidden=len({d.reviewer_id for d in decisions}),
        blind=True,
    )


def hidden_events(project: Project, findings: Iterable[Finding], reader: Any) -> Q:
    """The audit events that would show ``reader`` what is hidden from them: other
    reviewers' verdicts on those findings, and the events of corrections they may not see.
    Exclude these from any log a reader reads.

    The findings' decisions and corrections should be prefetched."""
    hidden = [f for f in findings if hidden_from(f, reader, project)]
    if not hidden:
        return Q(pk__in=[])
    reader_id = _reader_id(reader)
    verdicts = Q(
        object_type="finding",
        object_id__in=[str(f.pk) for f in hidden],
        verb__in=[*DECISION_VERBS, DECISION_UNDONE],
    )
    proposals = Q(
        object_type="correction",
        object_id__in=[str(c.pk) for f in hidden for c in f.corrections.all() if not _theirs(c, reader_id)],
    )
    if reader_id is None:
        return verdicts | proposals
    return (verdicts | proposals) & ~Q(actor_id=reader_id)
