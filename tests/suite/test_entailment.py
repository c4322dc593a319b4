"""The entailment checker through run_suite, with a real chat completions server as its judge."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from suite_helpers import REPO, build_conversation, build_turn, examples_dir
from test_judge import JudgeServer, running_judge

from checks.suite import OptionsError, run_suite
from checks.suite import judge as judge_module
from checks.suite.conversation import parse
from checks.suite.entailment import neighbours_among, sampled_turns
from checks.suite.outbound import Allow

DOWN = {"service": "billing", "status": "down", "since": "09:12"}


@pytest.fixture
def judge_server() -> Iterator[JudgeServer]:
    with running_judge() as server:
        yield server


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_module, "BACKOFF_S", 0.01)


@pytest.fixture(autouse=True)
def no_site_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL", "RECEIPTS_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def options(server: JudgeServer, **entailment: Any) -> dict[str, Any]:
    return {"entailment": {"judge_url": server.url, "model": "judge-7b", "timeout_s": 1, **entailment}}


def status_turn(answer: str, result: dict[str, Any] | None = None) -> dict[str, Any]:
    call = {"tool": "service_status", "args": {"service": "billing"}, "result": result or DOWN}
    return build_turn(answer, calls=[call], user="Is billing up?")


def mine(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] == "entailment"]


def others(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["checker"] != "entailment"]


# --- entailment ---------------------------------------------------------------------------


def test_an_answer_its_tool_result_contradicts_is_not_entailed(judge_server: JudgeServer) -> None:
    data = build_conversation(status_turn("Billing is healthy and serving requests."))
    result = run_suite(data, options(judge_server))
    (finding,) = mine(result)
    assert (finding["turn"], finding["code"], finding["severity"]) == (0, "not_entailed", "flag")
    assert finding["model"] == "judge-7b"
    assert finding["reason"] == "The results say the service is down, but the answer calls it healthy."
    (question,) = judge_server.questions()
    assert finding["question"] == question
    assert finding["raw"].startswith("no\n")
    assert finding["tokens"] > 0
    assert finding["evidence"] == [
        {"call_id": "call-1", "path": "", "start": 0, "end": len(json.dumps(DOWN))}
    ]
    assert len(finding["value"]) == 16
    assert "judge-7b" in finding["explanation"]
    # The question shows the user's words, the whole result and the answer, and says how much it shows.
    assert "Is billing up?" in question and json.dumps(DOWN) in question
    assert "(in full)" in question and "Billing is healthy" in question


def test_an_answer_its_result_supports_is_left_alone(judge_server: JudgeServer) -> None:
    data = build_conversation(status_turn("Billing is down since 09:12."))
    result = run_suite(data, options(judge_server))
    assert mine(result) == []
    (exchange,) = result["judge"]["exchanges"]
    assert (exchange["turn"], exchange["kind"], exchange["verdict"]) == (0, "entailment", "yes")


def test_the_judge_output_counts_questions_and_tokens(judge_server: JudgeServer) -> None:
    judge_server.usage = {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}
    data = build_conversation(status_turn("Billing is down."), status_turn("Billing is healthy."))
    result = run_suite(data, options(judge_server))
    judge = result["judge"]
    assert list(judge) == ["model", "tokens", "questions", "exchanges"]
    assert (judge["model"], judge["tokens"], judge["questions"]) == ("judge-7b", 200, 2)
    assert [(e["turn"], e["kind"], e["tokens"]) for e in judge["exchanges"]] == [
        (1, "entailment", 100),
        (0, "entailment", 100),
    ]
    assert judge["exchanges"][0]["question"] == judge_server.questions()[0]
    assert judge["exchanges"][0]["raw"] == mine(result)[0]["raw"]


def test_a_rerun_with_the_same_answers_gives_the_same_findings(judge_server: JudgeServer) -> None:
    data = build_conversation(status_turn("Billing is healthy."))
    assert run_suite(data, options(judge_server)) == run_suite(data, options(judge_server))


def test_a_long_result_is_clipped_and_the_question_says_so(judge_server: JudgeServer) -> None:
    rows = [{"host": f"billing-{i:03d}", "status": "down"} for i in range(400)]
    data = build_conversation(
        build_turn("All billing hosts are healthy.", calls=[{"tool": "hosts", "result": rows}])
    )
    finding = mine(run_suite(data, options(judge_server)))[0]
    (question,) = judge_server.questions()
    assert f"the first 6000 of {len(json.dumps(rows))} characters" in question
    assert finding["evidence"][0]["end"] == 6000


def test_turns_without_tool_results_are_not_asked(judge_server: JudgeServer) -> None:
    data = build_conversation(build_turn("Hello! How can I help?"), status_turn("Billing is down."))
    result = run_suite(data, options(judge_server))
    assert [e["turn"] for e in result["judge"]["exchanges"]] == [1]


def test_sample_takes_the_newest_turns(judge_server: JudgeServer) -> None:
    data = build_conversation(*(status_turn(f"Billing is down (check {i}).") for i in range(4)))
    result = run_suite(data, options(judge_server, sample=2))
    assert [e["turn"] for e in result["judge"]["exchanges"]] == [3, 2]
    assert mine(result) == []  # not sampled is not a shortfall: nothing unjudged to report


# --- no judge, the judge's own model, a judge that fails -----------------------------------


def test_without_a_judge_one_info_finding_says_how_to_turn_it_on() -> None:
    data = build_conversation(status_turn("Billing is healthy."), status_turn("Billing is down."))
    result = run_suite(data)
    (finding,) = mine(result)
    assert (finding["turn"], finding["code"], finding["severity"]) == (1, "judge_unavailable", "info")
    assert finding["cause"] == "no_judge"
    for words in ("RECEIPTS_JUDGE_URL", "RECEIPTS_JUDGE_MODEL", "entailment options", "did not run"):
        assert words in finding["explanation"]
    assert "judge" not in result


def test_the_site_wide_judge_is_used_and_a_project_model_overrides_it(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECEIPTS_JUDGE_URL", judge_server.url)
    monkeypatch.setenv("RECEIPTS_JUDGE_MODEL", "site-judge")
    monkeypatch.setenv("RECEIPTS_JUDGE_API_KEY", "sk-site")
    data = build_conversation(status_turn("Billing is healthy."))
    assert mine(run_suite(data))[0]["code"] == "not_entailed"
    run_suite(data, {"entailment": {"model": "project-judge"}})
    site, project = judge_server.requests
    assert (site["body"]["model"], site["headers"]["Authorization"]) == ("site-judge", "Bearer sk-site")
    assert project["body"]["model"] == "project-judge"


def test_the_projects_own_key_is_sent_to_the_judge_its_options_name(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECEIPTS_JUDGE_URL", "http://judge.internal/v1")
    monkeypatch.setenv("RECEIPTS_JUDGE_API_KEY", "sk-site")
    data = build_conversation(status_turn("Billing is down."))
    run_suite(data, options(judge_server), judge_key="sk-team")
    run_suite(data, options(judge_server))
    with_key, without = judge_server.requests
    assert with_key["headers"]["Authorization"] == "Bearer sk-team"
    assert "Authorization" not in without["headers"]  # never the site's key


def test_a_judge_url_at_a_loopback_address_is_refused_unless_allowed(
    judge_server: JudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECEIPTS_OUTBOUND_ALLOW", raising=False)
    data = build_conversation(status_turn("Billing is healthy."))
    result = run_suite(data, options(judge_server), judge_key="sk-team")
    (finding,) = mine(result)
    assert finding["code"] == "judge_unavailable"
    assert "127.0.0.1 is a loopback address" in finding["explanation"]
    assert judge_server.requests == []
    allowed = run_suite(data, options(judge_server), outbound_allow=Allow.parse("127.0.0.1/32"))
    assert mine(allowed)[0]["code"] == "not_entailed"


def test_the_agents_own_model_is_not_its_judge(judge_server: JudgeServer) -> None:
    data = build_conversation(status_turn("Billing is healthy."))
    data["agent"] = {"name": "ops-bot", "model": "Judge-7B"}
    result = run_suite(data, options(judge_server))
    (finding,) = mine(result)
    assert (finding["code"], finding["cause"]) == ("judge_unavailable", "same_model")
    assert "model that wrote these answers" in finding["explanation"]
    assert judge_server.requests == []
    assert result["judge"] == {"model": "judge-7b", "tokens": 0, "questions": 0, "exchanges": []}


def test_garbage_is_no_verdict_and_never_an_accusation(judge_server: JudgeServer) -> None:
    judge_server.rule = lambda question: "I think the answer is probably fine overall."
    data = build_conversation(status_turn("Billing is healthy."))
    result = run_suite(data, options(judge_server))
    (finding,) = mine(result)
    assert (finding["code"], finding["severity"]) == ("judge_unavailable", "info")
    assert "neither yes nor no" in finding["reason"] and "I think the answer" in finding["reason"]
    assert finding["unjudged"] == [{"turn": 0, "kind": "entailment", "reason": finding["reason"]}]
    assert result["judge"]["exchanges"][0]["verdict"] is None


def test_a_failing_judge_stops_the_run_and_the_other_checkers_still_report(judge_server: JudgeServer) -> None:
    judge_server.failures = [500] * 10
    data = build_conversation(
        build_turn("I've saved your note."),
        status_turn("Billing is healthy."),
        status_turn("Billing is down."),
    )
    result = run_suite(data, options(judge_server))
    assert len(judge_server.requests) == 3  # the first question and its two retries, then no more
    (finding,) = mine(result)
    assert (finding["turn"], finding["code"], finding["cause"]) == (2, "judge_unavailable", "not_judged")
    assert "HTTP 500" in finding["reason"]
    assert [(u["turn"], u["kind"]) for u in finding["unjudged"]] == [(2, "entailment"), (1, "entailment")]
    assert others(result) == others(run_suite(data, skip={"entailment"}))
    assert "unverified_action" in [f["code"] for f in others(result)]


def test_a_judge_that_times_out_is_unavailable(judge_server: JudgeServer) -> None:
    judge_server.delay_s = 2.5
    data = build_conversation(status_turn("Billing is healthy."))
    (finding,) = mine(run_suite(data, options(judge_server, timeout_s=1)))
    assert finding["code"] == "judge_unavailable"
    assert "did not answer within 1 s" in finding["reason"]


# --- budgets ------------------------------------------------------------------------------


def test_the_run_budget_stops_the_questions(judge_server: JudgeServer) -> None:
    judge_server.usage = {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}
    data = build_conversation(*(status_turn("Billing is healthy.") for _ in range(3)))
    result = run_suite(data, options(judge_server, token_budget=150))
    assert len(judge_server.requests) == 2
    assert [f["code"] for f in mine(result)] == ["not_entailed", "not_entailed", "judge_unavailable"]
    unavailable = mine(result)[-1]
    assert unavailable["turn"] == 2
    assert unavailable["unjudged"][0]["turn"] == 0
    assert "entailment.token_budget 150" in unavailable["reason"]
    assert result["judge"]["tokens"] == 200


def test_the_daily_budget_left_is_respected(judge_server: JudgeServer) -> None:
    judge_server.usage = {"prompt_tokens": 90, "completion_tokens": 10, "total_tokens": 100}
    data = build_conversation(*(status_turn("Billing is down.") for _ in range(3)))
    spent = run_suite(data, options(judge_server), tokens_left_today=0)
    assert judge_server.requests == []
    (finding,) = mine(spent)
    assert "daily token budget" in finding["reason"]
    assert len(finding["unjudged"]) == 3
    some = run_suite(data, options(judge_server), tokens_left_today=100)
    assert len(judge_server.requests) == 1
    assert [u["turn"] for u in mine(some)[0]["unjudged"]] == [1, 0]


# --- contradictions -----------------------------------------------------------------------


def neighbour(external_id: str, turn: int, answer: str, for_turn: int = 0) -> dict[str, Any]:
    return {"external_id": external_id, "turn": turn, "answer": answer, "for_turn": for_turn}


def test_a_neighbour_that_says_the_opposite_is_a_contradiction(judge_server: JudgeServer) -> None:
    data = build_conversation(build_turn("Billing has been healthy all week."))
    near = [
        neighbour("conv-2", 3, "Billing was down on Tuesday."),
        neighbour("conv-3", 0, "Billing runs on three hosts."),
    ]
    result = run_suite(data, options(judge_server), neighbours=near)
    (finding,) = mine(result)
    assert (finding["turn"], finding["code"], finding["severity"]) == (0, "contradiction", "flag")
    assert finding["value"] == "conv-2#3"
    assert finding["other"] == {"external_id": "conv-2", "turn": 3}
    assert finding["claim_at_odds"] == "One answer says the service is healthy, the other that it is down."
    assert finding["model"] == "judge-7b" and finding["raw"].startswith("yes")
    assert "Billing has been healthy" in finding["question"] and "down on Tuesday" in finding["question"]
    kinds = [(e["kind"], e["other"]) for e in result["judge"]["exchanges"]]
    assert kinds == [
        ("contradiction", {"external_id": "conv-2", "turn": 3}),
        ("contradiction", {"external_id": "conv-3", "turn": 0}),
    ]


def test_each_pair_is_asked_once(judge_server: JudgeServer) -> None:
    data = build_conversation(build_turn("Billing is healthy."), build_turn("Billing is healthy."))
    down = "Billing is down."
    near = [
        neighbour("conv-2", 0, down, for_turn=1),
        neighbour("conv-2", 0, down, for_turn=1),  # listed twice
        neighbour("conv-3", 5, down, for_turn=1),  # the same text from elsewhere
        neighbour("conv-2", 0, down, for_turn=0),  # the same pair again from the other turn
        neighbour("conv-4", 1, "Billing is healthy.", for_turn=0),  # the answer itself
    ]
    result = run_suite(data, options(judge_server), neighbours=near)
    assert len(judge_server.requests) == 1
    assert [(f["turn"], f["value"]) for f in mine(result)] == [(1, "conv-2#0")]


def test_malformed_neighbours_are_ignored_and_never_raise(judge_server: JudgeServer) -> None:
    data = build_conversation(build_turn("Billing is healthy."))
    near: list[Any] = [1, "x", {"external_id": "c", "turn": 0}, neighbour("c", 0, "down", for_turn=7), None]
    result = run_suite(data, options(judge_server), neighbours=near)
    assert judge_server.requests == [] and mine(result) == []


def test_the_command_line_judges_with_neighbours_from_its_own_file(
    judge_server: JudgeServer, tmp_path: Path
) -> None:
    first = build_conversation(status_turn("The billing service is healthy right now."), external_id="a")
    second = build_conversation(
        build_turn("The billing service is down right now, since 09:12."), external_id="b"
    )
    unrelated = build_conversation(build_turn("Your favourite tea is sencha."), external_id="c")
    (tmp_path / "batch.json").write_text(json.dumps([first, second, unrelated]))
    (tmp_path / "options.json").write_text(json.dumps(options(judge_server)))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "checks.suite",
            str(tmp_path / "batch.json"),
            "--config",
            str(tmp_path / "options.json"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        # A judge_url of the options is checked on the command line too: loopback is allowed.
        env={"PATH": "/usr/bin:/bin", "RECEIPTS_OUTBOUND_ALLOW": "127.0.0.1/32"},
    )
    assert done.returncode == 0, done.stderr
    a, b, c = (json.loads(line) for line in done.stdout.splitlines())
    assert sorted(f["code"] for f in mine(a)) == ["contradiction", "not_entailed"]
    assert [f["value"] for f in mine(a) if f["code"] == "contradiction"] == ["b#0"]
    # Each conversation is its own run and reports its own side of the pair.
    assert [(f["code"], f["value"]) for f in mine(b)] == [("contradiction", "a#0")]
    assert mine(c) == [] and c["judge"]["questions"] == 0
    assert len(judge_server.requests) == 3


# --- the rest of the suite ----------------------------------------------------------------


def test_with_or_without_a_judge_the_other_checkers_report_the_same_on_every_example(
    judge_server: JudgeServer,
) -> None:
    for path in sorted(examples_dir().glob("[0-9]*.json")):
        data = json.loads(path.read_text())
        alone = run_suite(data, skip={"entailment"})
        without = run_suite(data)
        judged = run_suite(data, options(judge_server))
        assert others(without) == others(alone) == others(judged), path.name
        assert {f["code"] for f in mine(without)} <= {"judge_unavailable"}, path.name
        assert all(f["severity"] == "info" for f in mine(without)), path.name
        assert without["provenance"] == alone["provenance"] and without["turns"] == alone["turns"]
        assert "judge" not in without and "judge" in judged


def test_only_and_skip_choose_the_checkers() -> None:
    data = build_conversation(build_turn("I've saved your note."), status_turn("Billing is down."))
    assert {f["checker"] for f in run_suite(data, only={"entailment"})["findings"]} == {"entailment"}
    assert mine(run_suite(data, skip={"entailment"})) == []
    assert run_suite(data, only={"action_claims"}, skip={"action_claims"})["findings"] == []
    with pytest.raises(OptionsError, match="only: names no checker"):
        run_suite(data, only={"entailment", "spelling"})


def test_sampled_turns_and_term_neighbours_are_plain_functions() -> None:
    mine_ = parse(build_conversation(build_turn("Billing is healthy."), build_turn(""), external_id="x"))
    assert sampled_turns(mine_, 5) == [0]
    pool = [
        parse(build_conversation(build_turn("Billing is down on host 7."), external_id="y")),
        parse(build_conversation(build_turn("Tea is sencha."), external_id="z")),
    ]
    assert neighbours_among(parse(build_conversation(build_turn("Billing host 7 is healthy."))), pool, 5) == [
        {"external_id": "y", "turn": 0, "answer": "Billing is down on host 7.", "for_turn": 0}
    ]
