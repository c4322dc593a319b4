"""Checking: runs of the suite over stored conversations, and the findings they leave.

A run is scheduled when a conversation is stored or changed, claimed by one worker, and its
report written as findings (upserted by fingerprint, so decisions survive a re-run). The
judge's questions run apart, on a queue of their own. The Celery tasks that run this are at
the end of the module.
"""

from __future__ import annotations

import functools
import logging
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from . import models_daily, search, suite, webhooks
from .models import (
    CheckRun,
    Conversation,
    Finding,
    JudgeUsage,
    Project,
    RunKind,
    RunStatus,
    Turn,
)
from .suite import conversation as native
from .suite import entailment, judge

log = logging.getLogger(__name__)


def schedule_run(conversation: Conversation, enqueue: bool = True) -> CheckRun:
    run = CheckRun.objects.create(project=conversation.project, conversation=conversation)
    if enqueue:
        transaction.on_commit(lambda: enqueue_runs([run.pk]))
    return run


def settle_runs(conversations: list[Conversation], *, created: bool = False) -> list[CheckRun]:
    """The runs that check conversations still arriving over OTLP once their traces have
    settled: RECEIPTS_OTLP_SETTLE_SECONDS after this export, not before, one per
    conversation in their order. A conversation's run scheduled and not yet claimed is
    pushed back rather than joined by another, so a trace exported in many pieces is checked
    once, after the last; one claimed already (checking what was stored before) is left to
    finish, and a new run follows it. Conversations ``created`` just now have no run to push
    back: none is looked for. A few statements for any number of conversations; the caller
    sends the runs (``enqueue_runs`` with the settle time as ``countdown``)."""
    not_before = timezone.now() + timedelta(seconds=settings.RECEIPTS_OTLP_SETTLE_SECONDS)
    waiting: dict[int, CheckRun] = {}
    if not created:
        pending = CheckRun.objects.filter(
            conversation__in=conversations, kind=RunKind.CHECKS, status=RunStatus.PENDING
        ).order_by("-id")
        for run in pending:
            waiting.setdefault(run.conversation_id, run)
    if waiting:
        ids = [run.pk for run in waiting.values()]
        # Conditional: a run a worker claims meanwhile is not touched, and gets a successor.
        pushed = CheckRun.objects.filter(pk__in=ids, status=RunStatus.PENDING).update(not_before=not_before)
        if pushed < len(ids):
            kept = set(
                CheckRun.objects.filter(pk__in=ids, not_before=not_before).values_list("pk", flat=True)
            )
            waiting = {key: run for key, run in waiting.items() if run.pk in kept}
        for run in waiting.values():
            run.not_before = not_before
    new = [
        CheckRun(project=c.project, conversation=c, not_before=not_before)
        for c in conversations
        if c.pk not in waiting
    ]
    if connection.features.can_return_rows_from_bulk_insert:
        CheckRun.objects.bulk_create(new)
    else:  # the ids are needed: the caller sends them
        for run in new:
            run.save(force_insert=True)
    made = iter(new)
    return [waiting[c.pk] if c.pk in waiting else next(made) for c in conversations]


JUDGE = "entailment"  # the checker that asks a judge model, on a queue of its own


JUDGE_QUEUE = "judge"


def enqueue_runs(run_ids: Iterable[int], *, queue: str | None = None, countdown: float = 0) -> None:
    """Sends run ids to the workers in batches, to run ``countdown`` seconds from now (a run
    settling: see ``settle_runs``); a lost message is caught by the sweeper."""
    ids = list(run_ids)
    size = settings.RECEIPTS_CHECK_BATCH
    later = {"countdown": countdown} if countdown > 0 else {}
    for start in range(0, len(ids), size):
        try:
            check_runs_task.apply_async(args=[ids[start : start + size]], queue=queue, **later)
        except Exception:  # the broker may be down; the run stays pending for the sweeper
            log.exception("could not enqueue check runs %s", ids[start : start + size])


def claim_run(run_id: int) -> CheckRun | None:
    """Takes a run for this worker, unless another has it (a conditional update, not a lock)
    or it is still settling (``not_before``: a later message, or the sweeper, brings it back)."""
    claimed = claim_runs([run_id])
    return claimed[0] if claimed else None


def claim_runs(run_ids: list[int]) -> list[CheckRun]:
    """``claim_run`` for a batch, in two statements: one conditional update takes those no
    other worker has and that have settled, and one read returns them (in the order of
    ``run_ids``). The claim's time, the same for the whole update, tells this worker's
    claims from another's."""
    if not run_ids:
        return []
    now = timezone.now()
    stale = now - timedelta(seconds=settings.RECEIPTS_RUN_STALE_SECONDS)
    settled = Q(not_before__isnull=True) | Q(not_before__lte=now)
    claimable = Q(status=RunStatus.PENDING) & settled | Q(status=RunStatus.RUNNING, claimed_at__lt=stale)
    taken = (
        CheckRun.objects.filter(pk__in=run_ids)
        .filter(claimable)
        .update(status=RunStatus.RUNNING, claimed_at=now, attempts=F("attempts") + 1)
    )
    if not taken:
        return []
    runs = CheckRun.objects.select_related("conversation", "project").filter(
        pk__in=run_ids, status=RunStatus.RUNNING, claimed_at=now
    )
    order = {run_id: position for position, run_id in enumerate(run_ids)}
    return sorted(runs, key=lambda run: order[run.pk])


def check_runs(*, run_ids: Iterable[int]) -> list[CheckRun]:
    """Runs the suite for each run this worker can claim; returns the runs it finished.

    The batch is claimed at once, checked, and its findings written in one transaction
    (``write_findings_of``), so a batch costs a few statements and one commit rather than
    a dozen of each per conversation."""
    ids = list(dict.fromkeys(run_ids))
    finished: list[CheckRun] = []
    checked: list[tuple[CheckRun, dict[str, Any], set[str]]] = []
    options_of: dict[int, suite.Options] = {}
    for run in claim_runs(ids):
        try:
            if run.project_id not in options_of:
                options_of[run.project_id] = suite.parse_options(run.project.options or None)
            options = options_of[run.project_id]
            if run.kind == RunKind.JUDGE:
                report, scope = _ask_judge(run, options), {JUDGE}
            else:
                with time_limit(settings.RECEIPTS_CHECK_SECONDS):
                    report, scope = _run_checkers(run, options)
        except (CheckTimedOut, SoftTimeLimitExceeded, suite.DeadlinePassed):
            log.warning("check run %s took too long", run.pk)
            finished.append(_failed(run, _too_long(settings.RECEIPTS_CHECK_SECONDS)))
            continue
        except Exception as exc:  # a suite failure is recorded on the run, not lost in a log
            log.exception("check run %s failed", run.pk)
            finished.append(_failed(run, f"{type(exc).__name__}: {exc}"))
            continue
        if run.kind == RunKind.JUDGE:
            # The outcome and what follows from it commit together: a worker dying in between
            # leaves the run claimed, for the sweeper.
            with transaction.atomic():
                write_findings(run=run, report=report, scope=scope)
                _after_judging(run, report)
            finished.append(run)
        else:
            checked.append((run, report, scope))
    # Two runs of one conversation are written in turn, each in a round of its own.
    while checked:
        seen: set[int] = set()
        this_round: list[tuple[CheckRun, dict[str, Any], set[str]]] = []
        later: list[tuple[CheckRun, dict[str, Any], set[str]]] = []
        for item in checked:
            (later if item[0].conversation_id in seen else this_round).append(item)
            seen.add(item[0].conversation_id)
        # The outcomes and the judge runs that follow them commit together: a worker dying in
        # between leaves the runs claimed, for the sweeper, never done without their judge run.
        with transaction.atomic():
            write_findings_of(this_round)
            for run, _, scope in this_round:
                if JUDGE not in scope:
                    judge_run = CheckRun.objects.create(
                        project=run.project, conversation=run.conversation, kind=RunKind.JUDGE
                    )
                    transaction.on_commit(functools.partial(enqueue_runs, [judge_run.pk], queue=JUDGE_QUEUE))
        finished += [run for run, _, _ in this_round]
        checked = later
    order = {run_id: position for position, run_id in enumerate(ids)}
    return sorted(finished, key=lambda run: order[run.pk])


def _failed(run: CheckRun, error: str) -> CheckRun:
    """Records the run as failed, with why: the conversation page shows it."""
    CheckRun.objects.filter(pk=run.pk).update(
        status=RunStatus.FAILED, error=error[:2000], finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


class CheckTimedOut(BaseException):
    """A check that ran past its time limit (``time_limit``). Not an Exception, so that no
    ``except Exception`` on the way (a checker keeping the rest of the suite going) stops it."""


def _too_long(seconds: float) -> str:
    return (
        f"The check took longer than {seconds:g} s (RECEIPTS_CHECK_SECONDS) and was stopped; the "
        "conversation is not checked. Check it again, or raise the limit."
    )


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raises CheckTimedOut where the code in the block is once ``seconds`` have passed
    (0: never). A timer signal does it, which only the main thread of a process can take:
    a worker runs its tasks there. Anywhere else (a web server's thread) nothing is limited;
    there the size limits on a conversation bound what a check can cost."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CheckTimedOut(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run_checkers(run: CheckRun, options: suite.Options) -> tuple[dict[str, Any], set[str]]:
    """The deterministic checkers. The judge's questions are left to a run on the judge queue
    when a judge is configured; without one, the entailment checker only says so, at once."""
    every = set(suite.checker_names())
    # The stored document is canonical already: build from it instead of validating it again.
    conversation = native.from_canonical(run.conversation.document)
    # The checkers observe the limit too, where no timer signal reaches (a thread's check).
    seconds = settings.RECEIPTS_CHECK_SECONDS
    if not judge_configured(options):
        return suite.run_suite(conversation, options, seconds=seconds), every
    return suite.run_suite(conversation, options, skip={JUDGE}, seconds=seconds), every - {JUDGE}


def judge_configured(options: suite.Options) -> bool:
    try:
        return judge.resolve(options.entailment, allow=webhooks.outbound_allow()) is not None
    except ValueError:
        return True  # named, but RECEIPTS_OUTBOUND_ALLOW is unreadable: the judge run says so


def _ask_judge(run: CheckRun, options: suite.Options) -> dict[str, Any]:
    """The judge's questions, with neighbours from the project's search, today's budget and
    the project's own judge key."""
    parsed = native.from_canonical(run.conversation.document)
    neighbours = [
        {**other, "for_turn": index}
        for index in entailment.sampled_turns(parsed, options.entailment.sample)
        for other in search.similar_answers(run.conversation, parsed.turns[index].answer)
    ]
    usage = JudgeUsage.objects.filter(project=run.project, day=timezone.localdate()).first()
    left = max(0, options.entailment.daily_token_budget - (usage.tokens if usage else 0))
    return suite.run_suite(
        parsed,
        options,
        only={JUDGE},
        neighbours=neighbours,
        tokens_left_today=left,
        # The project's own key goes to the judge its options name, never the site's key;
        # and that judge's address is checked against the operator's allow-list.
        judge_key=run.project.judge_api_key or None,
        outbound_allow=webhooks.outbound_allow(),
    )


@transaction.atomic
def _after_judging(run: CheckRun, report: dict[str, Any]) -> None:
    """Counts the tokens against the day's budget and files each contradiction's other half."""
    spent = report.get("judge") or {}
    if spent.get("tokens") or spent.get("questions"):
        usage, _ = JudgeUsage.objects.get_or_create(project=run.project, day=timezone.localdate())
        JudgeUsage.objects.filter(pk=usage.pk).update(
            tokens=F("tokens") + int(spent.get("tokens") or 0),
            questions=F("questions") + int(spent.get("questions") or 0),
        )
    for item in report["findings"]:
        if item["code"] == "contradiction":
            _mirror_contradiction(run, item)


def _mirror_contradiction(run: CheckRun, item: dict[str, Any]) -> None:
    other = item.get("other") or {}
    if not isinstance(other.get("turn"), int):
        return
    turn = Turn.objects.filter(
        project=run.project, conversation__external_id=other.get("external_id"), index=other["turn"]
    ).first()
    if turn is None:
        return
    mirror = {
        **item,
        "turn": turn.index,
        "claim": None,
        "evidence": [],
        "value": f"{run.conversation.external_id}#{item['turn']}",
        "other": {"external_id": run.conversation.external_id, "turn": item["turn"]},
    }
    now = timezone.now()
    finding, created = Finding.objects.get_or_create(
        fingerprint=Finding.make_fingerprint(turn.conversation_id, mirror),
        defaults={
            "project": run.project,
            "conversation_id": turn.conversation_id,
            "turn": turn,
            "mirrored": True,
        },
    )
    _fill_finding(finding, mirror, run, now)
    finding.save()
    models_daily.mark_turns(run.project_id, [turn])  # the overview counts its day again


def write_findings(*, run: CheckRun, report: dict[str, Any], scope: set[str] | None = None) -> None:
    """Upserts the run's findings by fingerprint and withdraws those no longer reported.

    ``scope`` names the checkers this run speaks for (all when None): only their findings
    can be withdrawn by it, so the deterministic run and the judge's leave each other's be."""
    write_findings_of([(run, report, scope)])


# No savepoint: its callers already hold a transaction, and a failure here undoes all of it.
@transaction.atomic(savepoint=False)
def write_findings_of(checked: Sequence[tuple[CheckRun, dict[str, Any], set[str] | None]]) -> None:
    """``write_findings`` for a batch of runs of distinct conversations, in one statement of
    each kind for the whole batch: the conversations locked, their turns and the findings
    already filed read, the new ones inserted, the changed updated, those no longer reported
    withdrawn, the days marked and the runs marked done."""
    if not checked:
        return
    conversation_ids = sorted({run.conversation_id for run, _, _ in checked})
    # Locked (in one order, so two workers never wait on each other) so that two runs of a
    # conversation write in turn; the documents are not needed here.
    list(Conversation.objects.select_for_update().filter(pk__in=conversation_ids).order_by("pk").only("id"))
    turns_of: dict[int, dict[int, Turn]] = {pk: {} for pk in conversation_ids}
    for turn in Turn.objects.filter(conversation_id__in=conversation_ids).only(
        "id", "project_id", "conversation_id", "index", "created_at"
    ):
        turns_of[turn.conversation_id][turn.index] = turn
    now = timezone.now()
    reported_of: list[dict[str, dict[str, Any]]] = []
    for run, report, _ in checked:
        turns = turns_of[run.conversation_id]
        reported: dict[str, dict[str, Any]] = {}
        for item in report["findings"]:
            if item["turn"] not in turns:
                continue
            # The suite's order is deterministic, so a twin in one place gets the same number each run.
            occurrence = 0
            while (
                fingerprint := Finding.make_fingerprint(run.conversation_id, item, occurrence)
            ) in reported:
                occurrence += 1
            reported[fingerprint] = item
        reported_of.append(reported)
    every = [fingerprint for reported in reported_of for fingerprint in reported]
    existing = {f.fingerprint: f for f in Finding.objects.filter(fingerprint__in=every)}
    new: list[Finding] = []
    changed: list[Finding] = []
    for (run, _, _), reported in zip(checked, reported_of, strict=True):
        turns = turns_of[run.conversation_id]
        for fingerprint, item in reported.items():
            finding = _finding_for(existing.get(fingerprint), fingerprint, item, run, turns, now)
            (changed if finding.pk else new).append(finding)
    Finding.objects.bulk_create(new)
    projects = {run.project_id: run.project for run, _, _ in checked}
    for project_id, project in projects.items():
        webhooks.notify_flagged_turns(
            project=project, finding_ids=[f.pk for f in new if f.project_id == project_id]
        )
    if changed:
        Finding.objects.bulk_update(changed, FINDING_FIELDS)
    by_scope: dict[frozenset[str] | None, list[int]] = {}
    for run, _, scope in checked:
        by_scope.setdefault(None if scope is None else frozenset(scope), []).append(run.conversation_id)
    for speaks_for, conversations in by_scope.items():
        gone = Finding.objects.filter(
            conversation_id__in=conversations, withdrawn_at__isnull=True, mirrored=False
        )
        if speaks_for is not None:
            gone = gone.filter(checker__in=speaks_for)
        gone.exclude(fingerprint__in=every).update(withdrawn_at=now, updated_at=now)
    for project_id in projects:
        models_daily.mark_turns(  # the overview counts their days again
            project_id,
            [
                turn
                for pk in conversation_ids
                for turn in turns_of[pk].values()
                if turn.project_id == project_id
            ],
        )
    # Done: what all share in one update per suite version, the summaries (each its own) in one more.
    by_version: dict[str, list[int]] = {}
    for run, report, _ in checked:
        run.status = RunStatus.DONE
        run.suite_version = report["suite_version"]
        run.summary = {key: report[key] for key in ("provenance", "turns", "judge") if key in report}
        run.error = ""
        run.finished_at = now
        by_version.setdefault(run.suite_version, []).append(run.pk)
    for version, pks in by_version.items():
        CheckRun.objects.filter(pk__in=pks).update(
            status=RunStatus.DONE, suite_version=version, error="", finished_at=now
        )
    CheckRun.objects.bulk_update([run for run, _, _ in checked], ["summary"])


def _finding_for(
    found: Finding | None,
    fingerprint: str,
    item: dict[str, Any],
    run: CheckRun,
    turns: dict[int, Any],
    now: Any,
) -> Finding:
    """The stored finding of ``fingerprint`` (or a new one) filled from the reported ``item``."""
    finding = found or Finding(
        project_id=run.project_id,
        conversation_id=run.conversation_id,
        turn=turns[item["turn"]],
        fingerprint=fingerprint,
        created_at=now,
    )
    _fill_finding(finding, item, run, now)
    return finding


FINDING_FIELDS = [
    "run",
    "checker",
    "code",
    "severity",
    "value",
    "claim_text",
    "claim_start",
    "claim_end",
    "evidence",
    "explanation",
    "correction",
    "details",
    "withdrawn_at",
    "updated_at",
]


def _fill_finding(finding: Finding, item: dict[str, Any], run: CheckRun, now: Any) -> None:
    claim = item.get("claim") or {}
    finding.run = run
    finding.checker = item["checker"]
    finding.code = item["code"]
    finding.severity = item["severity"]
    finding.value = (item.get("value") or "")[:500]
    finding.claim_text = claim.get("text") or ""
    finding.claim_start = claim.get("start")
    finding.claim_end = claim.get("end")
    finding.evidence = item.get("evidence") or []
    finding.explanation = item.get("explanation") or ""
    finding.correction = item.get("correction") or ""
    finding.details = item
    finding.withdrawn_at = None  # reported again: it stands, with its decisions
    finding.updated_at = now


def stale_runs(kind: str = RunKind.CHECKS) -> list[int]:
    """Runs whose message may have been lost: pending, or claimed and never finished, too long."""
    stale = timezone.now() - timedelta(seconds=settings.RECEIPTS_RUN_STALE_SECONDS)
    # A settling run is stale once it has been due that long.
    due = Q(not_before__isnull=True) | Q(not_before__lt=stale)
    return list(
        CheckRun.objects.filter(kind=kind)
        .filter(
            Q(status=RunStatus.PENDING, created_at__lt=stale) & due
            | Q(status=RunStatus.RUNNING, claimed_at__lt=stale)
        )
        .order_by("created_at")
        .values_list("pk", flat=True)[:1000]
    )


@transaction.atomic
def recheck_project(*, project: Project) -> int:
    """Schedules a fresh run for every conversation of the project, in bulk; returns how many."""
    conversation_ids = list(Conversation.objects.filter(project=project).values_list("pk", flat=True))
    runs = CheckRun.objects.bulk_create(
        [CheckRun(project=project, conversation_id=pk) for pk in conversation_ids], batch_size=1000
    )
    run_ids = [run.pk for run in runs]
    transaction.on_commit(lambda: enqueue_runs(run_ids))
    return len(run_ids)


# --- the Celery tasks that run these workflows ------------------------------------------------
# Thin: they take ids and call the workflow above. Tasks are acknowledged late and rejected
# back to the queue if the worker dies (settings), and the workflows are idempotent, so a
# redelivered message repeats no work it finished. The names are the ones messages already
# in a queue carry.


@shared_task(name="checks.tasks.check_runs")
def check_runs_task(run_ids: list[int]) -> int:
    """Checks a batch of conversations; returns how many runs this worker finished."""
    return len(check_runs(run_ids=run_ids))


@shared_task(name="checks.tasks.sweep_pending_runs")
def sweep_pending_runs() -> int:
    """Re-enqueues runs whose message was lost (a broker restart, a crash before enqueue)."""
    checks = stale_runs(RunKind.CHECKS)
    enqueue_runs(checks)
    judged = stale_runs(RunKind.JUDGE)
    enqueue_runs(judged, queue=JUDGE_QUEUE)
    return len(checks) + len(judged)
