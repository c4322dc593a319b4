"""The registry's one checker interface: run_suite merges every checker's report the same way."""

from __future__ import annotations

import pytest
from suite_helpers import build_conversation, build_turn

from checks.suite import registry, run_suite
from checks.suite.conversation import parse
from checks.suite.options import Options, parse_options
from checks.suite.types import CheckerReport, Conversation, Finding, RunContext


class Recorder:
    """A checker reporting a bit of everything, and keeping the context it was given."""

    name = "recorder"

    def __init__(self) -> None:
        self.contexts: list[RunContext] = []

    def check(self, conversation: Conversation, options: Options, context: RunContext) -> CheckerReport:
        self.contexts.append(context)
        last = conversation.turns[-1].index
        finding = Finding(turn=last, checker=self.name, code="noted", severity="info", explanation="Noted.")
        return CheckerReport(
            [finding],
            provenance=[{"turn": last, "value": "x"}],
            turns={last: {"recorded": True}, 99: {"recorded": True}},
            judge={"model": "m", "tokens": 0, "questions": 0, "exchanges": []},
        )


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    checker = Recorder()
    monkeypatch.setattr(registry, "CHECKERS", [*registry.CHECKERS, checker])
    monkeypatch.setattr("checks.suite.CHECKERS", registry.CHECKERS)
    return checker


def test_every_checker_reports_through_the_one_method() -> None:
    parsed, options = parse(build_conversation(build_turn("Done."))), parse_options(None)
    for checker in registry.CHECKERS:
        assert isinstance(checker.check(parsed, options, RunContext()), CheckerReport), checker.name


def test_a_new_checker_needs_only_its_line_in_the_registry(recorder: Recorder) -> None:
    neighbours = [{"external_id": "other", "turn": 0, "answer": "Hello.", "for_turn": 0}]
    result = run_suite(
        build_conversation(build_turn("Done.")), only={"recorder"}, neighbours=neighbours, tokens_left_today=7
    )
    assert recorder.contexts == [RunContext(neighbours=neighbours, tokens_left_today=7)]
    assert [(f["checker"], f["code"]) for f in result["findings"]] == [("recorder", "noted")]
    assert result["provenance"] == [{"turn": 0, "value": "x"}]
    # Its per-turn fields join the turn's entry; a turn the conversation lacks is ignored.
    assert result["turns"] == [
        {"turn": 0, "candidates": 0, "unread": 0, "index_truncated": False, "recorded": True}
    ]
    assert result["judge"] == {"model": "m", "tokens": 0, "questions": 0, "exchanges": []}


def test_no_judge_key_when_no_checker_asked_one() -> None:
    result = run_suite(build_conversation(build_turn("Done.")), only={"evidence"})
    assert "judge" not in result
