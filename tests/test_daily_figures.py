"""The overview's figures kept per day equal the figures counted from the findings themselves:
over a project whose turns arrived on several days, from several agents and models, with
findings in every status; and still after a re-check withdraws findings, after a decision,
after a bulk action and its undo, and after the command that rebuilds them."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from datetime import date, datetime, time, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from checks import checking, ingestion, review, tasks
from checks.models import (
    CheckRun,
    Conversation,
    Correction,
    DailyFigure,
    Decision,
    DirtyDay,
    Finding,
    FindingStatus,
    RunStatus,
    Turn,
)
from checks.models_daily import day_of
from checks.reporting import charts, daily, figures
from tests.conftest import load_example

pytestmark = pytest.mark.django_db

# (example, days ago, agent, model): flags on four days, from three agents (one unnamed).
SPREAD = [
    ("01", 0, "billing", "m-large"),
    ("04", 0, "support", "m-small"),
    ("05", 1, "support", "m-small"),
    ("07", 1, "billing", "m-large"),
    ("09", 2, "", "m-small"),
    ("13", 3, "support", "m-large"),
    ("14", 3, "billing", "m-small"),
    ("06", 5, "support", "m-large"),
    ("12", 40, "billing", "m-small"),  # outside the default 30 days
]


def _moment_of(day: date) -> datetime:
    """A moment on ``day`` (local), no later than now: noon, or now for today before noon. A
    fixed offset from now (an hour back) falls on the day before when the tests run just after
    midnight."""
    noon = timezone.make_aware(datetime.combine(day, time(12)))
    return min(noon, timezone.now())


def _store(project: Any, example: str, days_ago: int, agent: str, model: str) -> Conversation:
    """Stores a conversation whose turns arrived ``days_ago`` days back, then checks it as a
    worker would: the findings are written by the real path, which marks their days."""
    payload = {**load_example(example), "agent": {"name": agent, "model": model}}
    payload["external_id"] = f"{payload['external_id']}-{days_ago}"
    result = ingestion.ingest_conversation(project=project, payload=payload, body=json.dumps(payload))
    arrived = _moment_of(timezone.localdate() - timedelta(days=days_ago))
    Turn.objects.filter(conversation=result.conversation).update(created_at=arrived)
    checking.check_runs(run_ids=[result.run.pk])
    assert CheckRun.objects.get(pk=result.run.pk).status == RunStatus.DONE
    return result.conversation


@pytest.fixture
def spread(project: Any, bob: Any, alice: Any) -> Any:
    for example, days_ago, agent, model in SPREAD:
        _store(project, example, days_ago, agent, model)
    flags = list(Finding.objects.filter(severity="flag").order_by("id"))
    assert len(flags) >= 8
    # Flags decided two ways and left open, some by two reviewers (the first decision counts
    # for the wait).
    review.record_decision(finding=flags[0], reviewer=bob, verdict="confirmed")
    review.record_decision(finding=flags[1], reviewer=bob, verdict="dismissed")
    review.record_decision(finding=flags[2], reviewer=alice, verdict="confirmed")
    review.record_decision(finding=flags[-1], reviewer=bob, verdict="dismissed")
    # A correction bob proposed and alice approved, on a flag of today.
    review.record_decision(finding=flags[3], reviewer=bob, verdict="correction")
    review.approve_correction(correction=Correction.objects.get(finding=flags[3]), approver=alice)
    return project


# --- the oracle: the overview's figures counted from the rows, in Python ----------------------


def _agent(name: str) -> str:
    return name or figures.UNNAMED


def direct(project: Any, period: figures.Period) -> dict[str, Any]:
    """Every figure the overview shows, counted one row at a time from turns and findings."""
    days = set(period.days)
    turns = [
        t
        for t in Turn.objects.filter(project=project).select_related("conversation")
        if day_of(t.created_at) in days
    ]
    flags = [
        f
        for f in Finding.objects.filter(
            project=project, severity="flag", withdrawn_at__isnull=True
        ).select_related("turn", "conversation")
        if day_of(f.turn.created_at) in days
    ]
    flagged_turns = {f.turn_id for f in flags}
    status: dict[str, int] = defaultdict(int)
    by_checker: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in flags:
        status[f.status] += 1
        by_checker[f.checker][f.status] += 1
    confirmed, dismissed = status["confirmed"], status["dismissed"]
    per: dict[str, dict[str, list[int]]] = {
        "agent": defaultdict(lambda: [0, 0]),
        "model": defaultdict(lambda: [0, 0]),
    }
    series: dict[str, dict[str, dict[date, list[int]]]] = {
        d: defaultdict(lambda: defaultdict(lambda: [0, 0])) for d in ("agent", "model", "checker", "code")
    }
    turns_by_day: dict[date, int] = defaultdict(int)
    for t in turns:
        day = day_of(t.created_at)
        turns_by_day[day] += 1
        for dimension, name in (("agent", t.conversation.agent_name), ("model", t.conversation.agent_model)):
            per[dimension][name][0] += 1
            per[dimension][name][1] += t.pk in flagged_turns
            series[dimension][_agent(name)][day][0] += t.pk in flagged_turns
            series[dimension][_agent(name)][day][1] += 1
    for dimension in ("checker", "code"):
        turns_of: dict[str, set[int]] = defaultdict(set)
        for f in flags:
            turns_of[getattr(f, dimension)].add(f.turn_id)
        for name, ids in turns_of.items():
            for day, n in turns_by_day.items():
                flagged = sum(1 for t in turns if t.pk in ids and day_of(t.created_at) == day)
                series[dimension][name][day] = [flagged, n]
    waits: dict[str, list[float]] = defaultdict(list)
    oldest: dict[str, Any] = {}
    for f in flags:
        decisions = sorted(d.created_at for d in Decision.objects.filter(finding=f))
        name = _agent(f.conversation.agent_name)
        if decisions:
            waits[name].append((decisions[0] - f.created_at).total_seconds() / 3600)
        elif f.status == FindingStatus.OPEN:
            oldest[name] = min(oldest.get(name, f.created_at), f.created_at)
    return {
        "summary": {
            "conversations": len({t.conversation_id for t in turns}),
            "turns": len(turns),
            "flagged_turns": len(flagged_turns & {t.pk for t in turns}),
            "flags": len(flags),
            "open": status["open"],
            "confirmed": confirmed,
            "dismissed": dismissed,
            "precision": confirmed / (confirmed + dismissed) if confirmed + dismissed else None,
            "approved_corrections": Correction.objects.filter(
                finding__in=[f.pk for f in flags], state="approved"
            ).count(),
        },
        "by_checker": {c: (s["open"], s["confirmed"], s["dismissed"]) for c, s in by_checker.items()},
        "by_agent": {_agent(n): (v[0], v[1]) for n, v in per["agent"].items()},
        "by_model": {_agent(n): (v[0], v[1]) for n, v in per["model"].items()},
        "speed": {
            name: (
                len(waits.get(name, [])),
                statistics.median(waits[name]) if waits.get(name) else None,
                oldest.get(name),
            )
            for name in set(waits) | set(oldest)
        },
        "series": {
            d: {n: {day: tuple(v) for day, v in s.items()} for n, s in by.items()} for d, by in series.items()
        },
    }


def assert_overview_is_right(project: Any, period: figures.Period | None = None) -> None:
    period = period or figures.period_from({})
    data = figures.overview(project, period)
    expected = direct(project, period)
    shown = {key: data.figures[key] for key in expected["summary"]}
    assert shown == expected["summary"]
    assert {r["checker"]: (r["open"], r["confirmed"], r["dismissed"]) for r in data.by_checker} == expected[
        "by_checker"
    ]
    assert {r["name"]: (r["turns"], r["flagged"]) for r in data.by_agent} == expected["by_agent"]
    assert {r["name"]: (r["turns"], r["flagged"]) for r in data.by_model} == expected["by_model"]
    now = timezone.now()
    speed = {r["name"]: r for r in data.review_speed}
    assert set(speed) == set(expected["speed"])
    for name, (decided, median, oldest) in expected["speed"].items():
        assert speed[name]["decided"] == decided
        assert (
            speed[name]["median_hours"] == pytest.approx(median)
            if median is not None
            else speed[name]["median_hours"] is None
        )
        if oldest is None:
            assert speed[name]["oldest_open_hours"] is None
        else:  # counted from "now" a moment apart
            assert speed[name]["oldest_open_hours"] == pytest.approx(
                (now - oldest).total_seconds() / 3600, abs=0.01
            )
    for dimension in ("checker", "code", "agent", "model"):
        chart = data.charts[f"{dimension}_over_time"]
        ranked = expected["series"][dimension]
        if dimension in ("agent", "model"):
            totals = {n: sum(of for _, of in by_day.values()) for n, by_day in ranked.items()}
        else:
            totals = {n: sum(f for f, _ in by_day.values()) for n, by_day in ranked.items()}
        keep = sorted(totals, key=lambda k: (-totals[k], k))[: figures.TOP_SERIES]
        oracle = charts.line_chart(chart.title, chart.ident, period.days, {n: ranked[n] for n in keep})
        assert (chart.table_head, chart.table_rows) == (oracle.table_head, oracle.table_rows), dimension


# --- the tests ----------------------------------------------------------------------------


def test_the_figures_kept_per_day_equal_those_counted_from_the_findings(spread: Any) -> None:
    assert DirtyDay.objects.filter(project=spread).count() == 6  # every day a finding was written on
    assert_overview_is_right(spread)
    # The overview counted the days of its period, once; the day 40 days back waits for a
    # period that holds it.
    forty = timezone.localdate() - timedelta(days=40)
    assert list(DirtyDay.objects.values_list("day", flat=True)) == [forty]
    assert figures.overview(spread, figures.period_from({})).figures["approved_corrections"] == 1
    rows = DailyFigure.objects.filter(project=spread).count()
    assert_overview_is_right(spread)
    assert DailyFigure.objects.filter(project=spread).count() == rows  # nothing counted twice
    today = timezone.localdate()
    assert_overview_is_right(spread, figures.Period(today, today))  # one day
    assert_overview_is_right(spread, figures.Period(today - timedelta(days=365), today))  # a year, by month
    three = today - timedelta(days=3)
    assert_overview_is_right(spread, figures.Period(three, three))


def test_a_day_is_counted_again_only_once_marked(spread: Any) -> None:
    assert_overview_is_right(spread)
    # Written around the app (as a restore would): the overview keeps its figures until the
    # day is marked, then counts it again.
    finding = Finding.objects.filter(severity="flag", status="open").first()
    assert finding is not None
    before = figures.overview(spread, figures.period_from({})).figures["open"]
    Finding.objects.filter(pk=finding.pk).update(status=FindingStatus.CONFIRMED)
    assert figures.overview(spread, figures.period_from({})).figures["open"] == before
    DirtyDay.objects.create(project=spread, day=day_of(finding.turn.created_at))
    assert figures.overview(spread, figures.period_from({})).figures["open"] == before - 1
    assert_overview_is_right(spread)


def test_a_recheck_that_withdraws_findings_is_counted(spread: Any) -> None:
    assert_overview_is_right(spread)
    # The count answer now says 3, as its result had: a re-check withdraws the misstatement.
    conversation = Conversation.objects.get(external_id="ex-count-1")
    document = json.dumps(conversation.document).replace("12", "3")
    Conversation.objects.filter(pk=conversation.pk).update(document=json.loads(document))
    withdrawn_before = Finding.objects.filter(withdrawn_at__isnull=False).count()
    checking.recheck_project(project=spread)
    checking.check_runs(
        run_ids=list(CheckRun.objects.filter(status=RunStatus.PENDING).values_list("pk", flat=True))
    )
    assert Finding.objects.filter(withdrawn_at__isnull=False).count() > withdrawn_before
    assert_overview_is_right(spread)


def test_a_decision_a_bulk_action_and_its_undo_are_counted(spread: Any, bob: Any) -> None:
    assert_overview_is_right(spread)
    finding = Finding.objects.filter(severity="flag", status="open").order_by("-id").first()
    review.record_decision(finding=finding, reviewer=bob, verdict="dismissed")  # type: ignore[arg-type]
    assert_overview_is_right(spread)
    open_flags = Finding.objects.filter(severity="flag", status="open", withdrawn_at__isnull=True)
    result = review.bulk_decide(findings=open_flags, reviewer=bob, verdict="confirmed")
    assert result.done >= 3
    data = figures.overview(spread, figures.period_from({}))
    assert data.figures["open"] == 0
    assert_overview_is_right(spread)
    undone = review.undo_batch(project=spread, batch=result.batch, actor=bob, seconds=600)
    assert undone.restored == result.done
    assert figures.overview(spread, figures.period_from({})).figures["open"] > 0
    assert_overview_is_right(spread)


def test_the_command_rebuilds_every_day_from_the_findings(spread: Any) -> None:
    assert_overview_is_right(spread)
    DailyFigure.objects.filter(project=spread).update(turns=999, flagged=0, findings=7)
    call_command("rebuild_daily_figures", "--project", spread.slug)
    assert not DirtyDay.objects.exists()
    days = {day_of(t.created_at) for t in Turn.objects.filter(project=spread)}
    assert set(DailyFigure.objects.filter(project=spread).values_list("day", flat=True)) == days
    assert_overview_is_right(spread)
    today = timezone.localdate()
    assert_overview_is_right(spread, figures.Period(today - timedelta(days=45), today))


def test_the_command_names_a_project_that_does_not_exist(db: Any) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no-such"):
        call_command("rebuild_daily_figures", "--project", "no-such")


def test_a_refresh_counts_each_marked_day_once(spread: Any) -> None:
    assert_overview_is_right(spread)
    assert daily.refresh(spread) == 1  # the day 40 days back, outside the overview's period
    assert daily.refresh(spread) == 0
    assert_overview_is_right(
        spread, figures.Period(timezone.localdate() - timedelta(days=60), timezone.localdate())
    )


def test_the_scheduled_task_counts_every_projects_marked_days(
    spread: Any, other_project: Any, settings: Any
) -> None:
    schedule = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "checks.tasks.refresh_daily_figures" in schedule
    _store(other_project, "01", 0, "billing", "m-large")
    marked = set(DirtyDay.objects.values_list("project_id", "day"))
    assert {project for project, _ in marked} == {spread.pk, other_project.pk}

    assert tasks.refresh_marked_days.delay().get() == len(marked)  # as the worker runs it

    assert not DirtyDay.objects.exists()
    assert marked <= set(DailyFigure.objects.values_list("project_id", "day"))
    assert_overview_is_right(spread)  # with nothing left for the overview to count
