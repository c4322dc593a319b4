"""The judge model on its own queue: entailment and contradictions, its budget, its page.

The judge is a real chat completions server on loopback (tests/suite/test_judge.py), which
answers by rule: an answer calling a service healthy over a result saying it is down is not
entailed, and two answers that disagree on it contradict.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils import timezone

from checks.models import CheckRun, Finding, JudgeUsage, RunKind, Turn
from tests.suite.test_judge import JudgeServer

pytestmark = pytest.mark.django_db


def status_conversation(
    external_id: str, answer: str, status: str = "down", model: str = "agent-9b"
) -> dict[str, Any]:
    result = json.dumps({"service": "billing", "status": status, "since": "09:12"})
    return {
        "external_id": external_id,
        "agent": {"name": "ops-bot", "model": model},
        "turns": [
            {
                "messages": [
                    {"role": "user", "content": "Is billing up?"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": "c1",
                                "type": "function",
                                "function": {"name": "service_status", "arguments": '{"service": "billing"}'},
                            }
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "content": result},
                    {"role": "assistant", "content": answer},
                ]
            }
        ],
    }


def _use_judge(project: Any, server: JudgeServer, **more: Any) -> None:
    project.options = {"entailment": {"judge_url": server.url, "model": "judge-7b", "timeout_s": 1, **more}}
    project.save()


def test_an_answer_its_result_contradicts_is_flagged_on_the_judge_run(
    ingest: Any, project: Any, judge_server: JudgeServer, client: Any, alice: Any
) -> None:
    _use_judge(project, judge_server)
    conversation = ingest(status_conversation("s1", "Billing is healthy and running normally."))
    kinds = dict(CheckRun.objects.filter(conversation=conversation).values_list("kind", "status"))
    assert kinds == {RunKind.CHECKS: "done", RunKind.JUDGE: "done"}
    finding = Finding.objects.get(conversation=conversation, code="not_entailed")
    assert finding.severity == "flag" and finding.details["model"] == "judge-7b"
    assert "down" in finding.details["reason"]
    usage = JudgeUsage.objects.get(project=project, day=timezone.localdate())
    assert usage.tokens > 0 and usage.questions == 1

    client.force_login(alice)
    html = client.get(Turn.objects.get(conversation=conversation).get_absolute_url()).content.decode()
    assert "Judge model" in html and "judge-7b" in html
    assert "Question asked" in html and "The results say the service is down" in html  # the raw answer


def test_a_supported_answer_is_left_alone(ingest: Any, project: Any, judge_server: JudgeServer) -> None:
    _use_judge(project, judge_server)
    conversation = ingest(status_conversation("s2", "Billing has been down since 09:12."))
    assert not Finding.objects.filter(conversation=conversation, checker="entailment").exists()


def test_two_answers_at_odds_are_a_contradiction_on_both_turns(
    ingest: Any, project: Any, judge_server: JudgeServer
) -> None:
    _use_judge(project, judge_server)
    first = ingest(status_conversation("a", "The billing service is healthy.", status="healthy"))
    second = ingest(status_conversation("b", "The billing service is down.", status="down"))
    here = Finding.objects.get(conversation=second, code="contradiction")
    there = Finding.objects.get(conversation=first, code="contradiction")
    assert here.details["other"] == {"external_id": "a", "turn": 0}
    assert there.details["other"] == {"external_id": "b", "turn": 0} and there.mirrored
    pairs = [r for r in judge_server.requests if "## Answer A" in r["body"]["messages"][-1]["content"]]
    assert len(pairs) == 1  # each pair asked once

    # The first conversation's own runs do not withdraw the half filed on it.
    from checks import checking

    rerun = CheckRun.objects.create(project=project, conversation=first, kind=RunKind.JUDGE)
    checking.check_runs(run_ids=[rerun.pk])
    there.refresh_from_db()
    assert there.withdrawn_at is None


def test_the_daily_budget_stops_the_questions(ingest: Any, project: Any, judge_server: JudgeServer) -> None:
    _use_judge(project, judge_server, daily_token_budget=100)
    JudgeUsage.objects.create(project=project, day=timezone.localdate(), tokens=100)
    conversation = ingest(status_conversation("s3", "Billing is healthy."))
    assert judge_server.requests == []
    unavailable = Finding.objects.get(conversation=conversation, code="judge_unavailable")
    assert unavailable.severity == "info" and "budget" in unavailable.explanation


def test_the_agents_own_model_is_never_its_judge(
    ingest: Any, project: Any, judge_server: JudgeServer, client: Any, alice: Any
) -> None:
    _use_judge(project, judge_server)
    conversation = ingest(status_conversation("s4", "Billing is healthy.", model="Judge-7B"))
    assert judge_server.requests == []
    unavailable = Finding.objects.get(conversation=conversation, code="judge_unavailable")
    client.force_login(alice)
    # Said once, where the judge is set up; the turn carries no card of it.
    html = client.get("/p/acme/settings").content.decode().replace("&#x27;", "'")
    assert unavailable.explanation.removeprefix("Not judged: ") in html
    html = client.get(Turn.objects.get(conversation=conversation).get_absolute_url()).content.decode()
    assert f'id="finding-{unavailable.pk}"' not in html


def test_without_a_judge_the_other_findings_are_unchanged(
    ingest: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    conversation = ingest("06")
    assert not CheckRun.objects.filter(kind=RunKind.JUDGE).exists()  # nothing to queue
    codes = set(Finding.objects.filter(conversation=conversation).values_list("checker", "code"))
    assert codes == {("tool_receipts", "false_absence"), ("entailment", "judge_unavailable")}


def test_the_inline_check_never_asks_the_judge(
    post_conversation: Any, project: Any, judge_server: JudgeServer
) -> None:
    """/api/v1/check answers from the web process: the judge's questions wait for a worker,
    which alone holds the project's judge key and checks its URL against the allow-list."""
    _use_judge(project, judge_server)
    response = post_conversation(status_conversation("inline", "Billing is healthy."), path="/api/v1/check")
    assert response.status_code == 200
    assert judge_server.requests == []
    assert not [f for f in response.json()["findings"] if f["checker"] == "entailment"]
